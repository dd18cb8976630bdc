/**
 * Keys collected from a load's rows while they arrive (exec/early-keys.ts): only where the raw
 * text is what the load's cast writes back, in the column's order, and none where a value or the
 * count rules them out (the keys are then read from the finished load).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ColumnDef } from '../../src/catalog/types.js';
import { EarlyKeys, keyLookup } from '../../src/engine/exec/early-keys.js';
import type { ScanPlan } from '../../src/engine/plan/scans.js';

const column = (name: string, type: string): ColumnDef => ({ name, nameInSource: name, type, nullable: true, position: 1 });
const scan = (...columns: ColumnDef[]) => ({ columns }) as unknown as ScanPlan;
const PLAN = scan(column('id', 'BIGINT'), column('name', 'VARCHAR'), column('ref', 'INTEGER'));

test('integer keys in the order of their values, NULLs and repeats left out', async () => {
  const keys = EarlyKeys.for(PLAN, new Set(['id', 'ref']), 100)!;
  keys.batch([
    ['10', 'a', 3],
    ['-2', 'b', null],
    ['9', 'c', 3],
  ]);
  keys.batch([[123456789012345678n, 'd', -40]]);
  keys.batch([['-10', 'e', 0]]);
  keys.end();
  const ready = await keys.ready;
  assert.deepEqual(ready.get('id'), ['-10', '-2', '9', '10', '123456789012345678']);
  assert.deepEqual(ready.get('ref'), ['-40', '0', '3']);
});

test('a value the cast would write otherwise, or more keys than allowed: that column is read from the load', async () => {
  for (const odd of ['012', '+1', ' 1', '1.0', 1.5, '', 2 ** 60, '1234567890123456789']) {
    const keys = EarlyKeys.for(PLAN, new Set(['id', 'ref']), 100)!;
    keys.batch([
      ['1', 'a', 1],
      [odd, 'b', 2],
    ]);
    keys.end();
    const ready = await keys.ready;
    assert.equal(ready.get('id'), null, String(odd));
    assert.deepEqual(ready.get('ref'), ['1', '2']);
  }
  const many = EarlyKeys.for(PLAN, new Set(['id']), 2)!;
  many.batch([['1'], ['2'], ['3']]);
  many.end();
  assert.equal((await many.ready).get('id'), null);
});

test('a source that fails: no keys; text columns are not collected', async () => {
  const keys = EarlyKeys.for(PLAN, new Set(['id']), 100)!;
  keys.batch([['1']]);
  keys.fail();
  keys.end();
  assert.equal((await keys.ready).get('id'), null);
  assert.equal(EarlyKeys.for(PLAN, new Set(['name']), 100), null);
});

test('coded keys: each row numbered by its other columns, one byte per key from the least', async () => {
  const keys = EarlyKeys.for(PLAN, new Set(['id', 'ref']), 100, new Set(['id']))!;
  keys.batch([
    ['12', 'a', 1],
    ['10', 'b', 1],
    ['13', 'a', 1],
    [null, 'z', 9],
  ]);
  // Raw values of other classes or spellings are other rows (the load may tell them apart).
  keys.batch([
    ['15', 'a', '1'],
    ['16', null, 1],
  ]);
  keys.end();
  const ready = await keys.ready;
  assert.deepEqual(ready.get('id'), ['10', '12', '13', '15', '16']);
  const lookup = keys.lookups.get('id')!;
  assert.equal(lookup.low, 10n);
  assert.deepEqual([...lookup.codes], [2, 0, 1, 1, 0, 3, 4]);
  assert.equal(keys.lookups.has('ref'), false, 'only the coded column');
});

test('coded keys: a repeated key, more than 255 numbers, an unknown raw class or a wide span give no lookup', async () => {
  const lookupOf = async (rows: unknown[][]) => {
    const keys = EarlyKeys.for(PLAN, new Set(['id']), 100_000, new Set(['id']))!;
    keys.batch(rows);
    keys.end();
    assert.ok((await keys.ready).get('id'), 'the keys themselves are collected');
    return keys.lookups.get('id');
  };
  assert.equal(
    await lookupOf([
      ['1', 'a', 1],
      ['1', 'a', 1],
    ]),
    null,
  );
  assert.equal(await lookupOf(Array.from({ length: 256 }, (_, i) => [String(i), `n${i}`, 0])), null);
  assert.ok(await lookupOf(Array.from({ length: 255 }, (_, i) => [String(i), `n${i}`, 0])));
  assert.equal(await lookupOf([['1', new Date(0), 1]]), null);
  assert.equal(
    await lookupOf([
      ['1', 'a', 1],
      ['130', 'a', 1],
    ]),
    null,
    '130 slots for 2 keys',
  );
  assert.ok(
    await lookupOf([
      ['1', 'a', 1],
      ['64', 'a', 1],
      ['120', 'b', 2],
    ]),
  );
});

test('a lookup of keys beyond a double: offsets from the least as bigints', () => {
  const lookup = keyLookup(['100000000000000001', '100000000000000003'])!;
  assert.equal(lookup.low, 100000000000000001n);
  assert.deepEqual([...lookup.codes], [1, 0, 1]);
  assert.equal(keyLookup([]), null);
  assert.deepEqual([...keyLookup(['-2', '0'])!.codes], [1, 0, 1]);
});
