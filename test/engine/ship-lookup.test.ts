/**
 * The lookup form of shipped rows (exec/ship-lookup.ts): the array indexed by the key, the
 * distinct rows, and the cases that keep the plain form. The answers against PostgreSQL are in
 * test/federation/shipped-join.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { ParseResult } from '@pgsql/types';
import type { ColumnDef } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { lookupRelation, numbersText } from '../../src/engine/exec/ship-lookup.js';
import type { LookupPlan } from '../../src/engine/plan/ship-lookup.js';
import { POSTGRES_DIALECT } from '../../src/connectors/postgres/dialect.js';

const quote = (name: string) => POSTGRES_DIALECT.quoteIdentifier(name);

const column = (name: string, type: string) => ({ name, type }) as ColumnDef;
const COLUMNS = [column('id', 'INTEGER'), column('country', 'VARCHAR')];
const plan = (type = 'INTEGER', minKeys = 0): LookupPlan => ({
  ast: {} as ParseResult,
  alias: 'o',
  column: column('customer_id', type),
  keyIndex: 0,
  minKeys,
});

test('keys 3..6: a byte per key from 3 to 6, one number per distinct row, 0 for a missing key, NULL keys left out', () => {
  const sql = lookupRelation(
    plan(),
    COLUMNS,
    [
      ['3', '5', '6', null],
      ['DE', 'US', 'DE', 'FR'],
    ],
    { kind: 'mysql' },
    quote,
  );
  assert.equal(
    sql,
    `LATERAL (SELECT "o"."customer_id" AS "id", "__vdb_lookup"."country" FROM unnest('{1,2}'::int4[], '{"DE","US"}'::text[]) ` +
      `AS "__vdb_lookup"("__vdb_code", "country") WHERE "__vdb_lookup"."__vdb_code" = ` +
      `CASE WHEN "o"."customer_id" BETWEEN 3 AND 6 THEN get_byte((SELECT decode('01000201', 'hex')), "o"."customer_id" - (3)) END)`,
  );
});

test('a bigint key is looked up only within the bounds (no int4 cast error)', () => {
  const sql = lookupRelation(plan('BIGINT'), [column('id', 'BIGINT')], [['-2', '1']], { kind: '' }, quote)!;
  assert.match(
    sql,
    /CASE WHEN "o"."customer_id" BETWEEN -2 AND 1 THEN get_byte\(\(SELECT decode\('01000001', 'hex'\)\), \("o"."customer_id" - \(-2\)\)::int4\) END/,
  );
  assert.match(sql, /unnest\('\{1\}'::int4\[\]\) AS "__vdb_lookup"\("__vdb_code"\)/);
});

test('the plain form where a key repeats, is beyond int4, the keys are sparse, or there is none', () => {
  const none = (keys: Array<string | null>) => lookupRelation(plan(), COLUMNS, [keys, keys.map(() => 'x')], { kind: '' }, quote);
  assert.equal(none(['1', '2', '1']), null);
  assert.equal(none(['1', '2147483648']), null);
  assert.equal(none(['1', '5000']), null, '5,000 slots for 2 rows');
  assert.notEqual(none(['1', '1000']), null, 'up to 16 slots per row and 1,024 more');
  assert.equal(none([]), null);
  assert.equal(none([null]), null);
  // Fewer keys than 5 % of the PostgreSQL column's distinct values: an index may serve them better.
  const few = (minKeys: number) =>
    lookupRelation(
      plan('INTEGER', minKeys),
      COLUMNS,
      [
        ['1', '2'],
        ['x', 'y'],
      ],
      { kind: '' },
      quote,
    );
  assert.equal(few(3), null);
  assert.notEqual(few(2), null);
  // NULL keys join nothing and do not count.
  assert.equal(
    lookupRelation(
      plan('INTEGER', 2),
      COLUMNS,
      [
        ['1', null, null],
        ['x', 'y', 'z'],
      ],
      { kind: '' },
      quote,
    ),
    null,
  );
});

test('conditions applied by vdb: only the rows whose text is exactly a value go, a key repeated among dropped rows is no obstacle', () => {
  const sql = lookupRelation(
    { ...plan(), conditions: [{ columnIndex: 1, values: ['DE', 'a"b'] }] },
    COLUMNS,
    [
      ['3', '4', '5', '6', '6', '7'],
      ['DE', 'de', 'DE ', 'a"b', 'FR', null],
    ],
    { kind: 'mysql' },
    quote,
  );
  assert.match(sql ?? '', /unnest\('\{1,2\}'::int4\[\], '\{"DE","a\\"b"\}'::text\[\]\)/);
  assert.match(sql ?? '', /decode\('01000002', 'hex'\)/);
  const none = lookupRelation(
    { ...plan(), conditions: [{ columnIndex: 1, values: ['US'] }] },
    COLUMNS,
    [['3'], ['DE']],
    { kind: '' },
    quote,
  );
  assert.equal(none, null, 'no row kept: the plain form, which keeps the condition');
});

test("more than 255 distinct rows: the numbers as an int4 array with the keys' bounds, a bigint key cast within them", () => {
  const keys = Array.from({ length: 300 }, (_, i) => String(i + 10));
  const names = keys.map((k) => `name ${k}`);
  const sql = lookupRelation(plan(), COLUMNS, [keys, names], { kind: '' }, quote)!;
  assert.match(
    sql,
    new RegExp(`= \\(SELECT '\\[10:309\\]=\\{${keys.map((_, i) => i + 1).join(',')}\\}'::int4\\[\\]\\)\\["o"."customer_id"\\]\\)$`),
  );
  const big = lookupRelation(plan('BIGINT'), [column('id', 'BIGINT'), column('country', 'VARCHAR')], [keys, names], { kind: '' }, quote)!;
  assert.match(big, /\)\[CASE WHEN "o"."customer_id" BETWEEN 10 AND 309 THEN "o"."customer_id"::int4 END\]\)$/);
  const fewer = lookupRelation(plan(), COLUMNS, [keys.slice(0, 255), names.slice(0, 255)], { kind: '' }, quote)!;
  assert.match(fewer, /get_byte/, '255 numbers still fit a byte');
});

test('dependentJoin.lookupArrays: on by default, VDB_DEPENDENT_JOIN_LOOKUP_ARRAYS=false turns it off', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-lookup-config-'));
  try {
    assert.equal(loadConfig({}, { dataDir }).dependentJoin.lookupArrays, true);
    assert.equal(loadConfig({ VDB_DEPENDENT_JOIN_LOOKUP_ARRAYS: 'false' }, { dataDir }).dependentJoin.lookupArrays, false);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the lookup numbers as text: the same as their join, for every width and sign', () => {
  const numbers = Int32Array.from([0, 1, 9, 10, 255, -1, -10, 2147483647, -2147483648, 0]);
  assert.equal(numbersText(numbers), Array.from(numbers).join(','));
  assert.equal(numbersText(new Int32Array(0)), '');
});
