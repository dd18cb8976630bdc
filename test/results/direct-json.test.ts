/**
 * The direct encoder (src/results/direct-json.ts) against the engine path it stands in for: each
 * value is loaded as the engine path loads it (loadBatches: raw class, then TRY_CAST) and
 * encoded by the engine (jsonRowsSql); the direct encoder must write the same text, or decline
 * where the engine rounds, warns or turns the value into NULL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { defineValueChecks } from '../../src/runtime/value-macros.js';
import type { RawType } from '../../src/connectors/types.js';
import { loadBatches } from '../../src/engine/exec/load.js';
import { DECLINE, directEncoders, postgresDouble } from '../../src/results/direct-json.js';
import { jsonRowsSql } from '../../src/results/json.js';
import { describe } from '../../src/runtime/duckdb.js';

interface Case {
  type: string;
  raw: RawType;
  values: unknown[];
}

const b = (s: string) => Buffer.from(s, 'utf8');

const CASES: Case[] = [
  { type: 'BOOLEAN', raw: 'BIGINT', values: [0n, 1n, -5n, 127n, '0', '1', '-1', 2, 1.5, 'x', '007'] },
  {
    type: 'SMALLINT',
    raw: 'VARCHAR',
    values: ['0', '-32768', '32767', '32768', '-32769', '007', '+5', ' 5', '1.5', '', 'x', 42n, 42, 1.5],
  },
  { type: 'INTEGER', raw: 'VARCHAR', values: ['2147483647', '-2147483648', '2147483648', '255', '-0'] },
  {
    type: 'BIGINT',
    raw: 'VARCHAR',
    values: ['9223372036854775807', '-9223372036854775808', '9223372036854775808', '18446744073709551615'],
  },
  { type: 'UBIGINT', raw: 'VARCHAR', values: ['18446744073709551615', '0', '-1', '18446744073709551616'] },
  { type: 'HUGEINT', raw: 'VARCHAR', values: ['170141183460469231731687303715884105727', '-5', '99999999999999999999999'] },
  { type: 'BIGINT', raw: 'BIGINT', values: [9223372036854775807n, -9223372036854775808n, 0n, 5, 1.5, '12', 'abc', 1e20, b('1')] },
  { type: 'HUGEINT', raw: 'BIGINT', values: [9223372036854775807n, -3n] },
  {
    type: 'DECIMAL(10,2)',
    raw: 'VARCHAR',
    values: [
      '1.5',
      '1.50',
      '-0.00',
      '0',
      '-0',
      '12345678.99',
      '123456789.99',
      '1.005',
      '.5',
      '5.',
      '007.10',
      'nan',
      'x',
      12.5,
      3n,
      1e21,
      -0.25,
      '1e3',
    ],
  },
  { type: 'DECIMAL(38,10)', raw: 'VARCHAR', values: ['1234567890123456789012345678.0123456789', '0.0000000001', '-1.1'] },
  { type: 'DECIMAL(18,0)', raw: 'VARCHAR', values: ['5', '-5', '999999999999999999', '1000000000000000000', '0.0'] },
  { type: 'DECIMAL(3,3)', raw: 'VARCHAR', values: ['0.123', '-0.5', '1.000', '0'] },
  {
    type: 'DOUBLE',
    raw: 'DOUBLE',
    values: [
      0,
      -0,
      1,
      -1.5,
      0.1,
      1e15,
      1e16,
      1e-4,
      1e-5,
      123456789.125,
      1e301,
      -1.2345678901234568e15,
      1e308 * 10,
      -Infinity,
      NaN,
      Number.MIN_VALUE,
      2n,
      '1.5',
    ],
  },
  {
    type: 'DOUBLE',
    raw: 'VARCHAR',
    values: [
      '1.5',
      '-0',
      '1e15',
      '1e+16',
      '1.7976931348623157e308',
      '1e400',
      '0.1',
      '100',
      '5.',
      '.5',
      'nan',
      'inf',
      '0x10',
      ' 1',
      3n,
      0.5,
    ],
  },
  {
    type: 'DATE',
    raw: 'VARCHAR',
    values: [
      '2024-02-29',
      '2023-02-29',
      '0000-00-00',
      '0001-01-01',
      '0999-12-31',
      '9999-12-31',
      '2024-13-01',
      '2024-1-1',
      '20240101',
      20240101n,
    ],
  },
  {
    type: 'TIMESTAMP',
    raw: 'VARCHAR',
    values: [
      '2024-02-29 13:45:30',
      '2024-02-29 13:45:30.000',
      '2024-02-29 13:45:30.120',
      '2024-02-29T13:45:30.123456',
      '2024-02-29 13:45:30.1234567',
      '0000-00-00 00:00:00',
      '2024-02-29 24:00:00',
      '2024-02-29 13:45:60',
      '0001-01-01 00:00:00',
      '2024-02-29',
      '2024-02-29 13:45:30Z',
      '2024-02-29 13:45:30+02:00',
    ],
  },
  { type: 'BLOB', raw: 'BLOB', values: [b(''), Buffer.from([0, 1, 255, 128]), b('héllo'), 'text', 42n, 1.5] },
  {
    type: 'VARCHAR',
    raw: 'VARCHAR',
    values: [
      '',
      'plain',
      'a"b\\c',
      '\u0000\u0001\u001f\u007f\b\f\n\r\t',
      '/é\u2028\u2029😀',
      '\\u001f',
      'lone \ud800 x',
      42n,
      1.5,
      1e21,
      -0,
      b('bytes'),
    ],
  },
];

async function* batchOf(values: unknown[]) {
  yield values.map((v) => [v]);
}

/** The engine path's JSON of each value (null: it warns, or the value is not one it writes). */
async function engineTexts(type: string, raw: RawType, values: unknown[]) {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  // The engine's own macros, as every generation defines them (jsonRowsSql checks each row's size).
  await defineValueChecks(connection, 64 * 1024 * 1024, 1024 * 1024 * 1024);
  try {
    const loaded = await loadBatches(connection, 'v', [{ type, raw }], batchOf(values), new AbortController().signal);
    const [column] = await describe(connection, 'SELECT * FROM v');
    const rows = await connection.runAndReadAll(`SELECT * FROM (${jsonRowsSql('(SELECT c0 FROM v) AS q(c0)', [column!], 'array')}) `);
    const nulls = await connection.runAndReadAll(
      'SELECT r.c0 IS NOT NULL AND v.c0 IS NULL FROM (SELECT row_number() OVER () AS n, c0 FROM v_raw) r JOIN (SELECT row_number() OVER () AS n, c0 FROM v) v USING (n) ORDER BY n',
    );
    return {
      column: column!,
      texts: rows.getRows().map((r) => String(r[0])),
      nulled: nulls.getRows().map((r) => r[0] === true),
      lossy: loaded.lossy[0]! > 0,
    };
  } catch {
    return null;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

for (const { type, raw, values } of CASES) {
  test(`direct JSON of ${type} from ${raw} is the engine's, or declined`, async () => {
    let written = 0;
    for (const value of values) {
      const engine = await engineTexts(type, raw, [value]);
      const columns = engine ? [engine.column] : await typeOf(type);
      const encoders = directEncoders(columns, [raw]);
      assert.ok(encoders, `${type} from ${raw} is written directly`);
      const text = encoders[0]!(value);
      if (text === DECLINE) continue;
      const label = `${type} from ${raw}: ${typeof value} ${String(value)}`;
      assert.ok(engine, `${label}: the engine's load fails, the direct path must decline`);
      assert.equal(engine.lossy, false, `${label}: the engine converts it lossy, the direct path must decline`);
      assert.equal(engine.nulled[0], false, `${label}: the engine makes it NULL, the direct path must decline`);
      assert.equal(`[${text}]`, engine.texts[0], label);
      written++;
    }
    assert.ok(written > 0, 'some values are written directly');
    // NULL is null whatever the type.
    assert.equal((directEncoders(await typeOf(type), [raw]) ?? [])[0]!(null), 'null');
  });
}

async function typeOf(type: string) {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  // The engine's own macros, as every generation defines them (jsonRowsSql checks each row's size).
  await defineValueChecks(connection, 64 * 1024 * 1024, 1024 * 1024 * 1024);
  try {
    return await describe(connection, `SELECT CAST(NULL AS ${type}) AS c0`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

test('types the direct path does not write are declined for the whole result', async () => {
  for (const type of ['FLOAT', 'INTERVAL', 'JSON', 'TIME', 'UUID']) {
    assert.equal(directEncoders(await typeOf(type), ['VARCHAR']), null, type);
  }
});

test("doubles are spelled as PostgreSQL's float8out writes them", () => {
  const expected: Array<[number, string]> = [
    [1e301, '1e+301'],
    [1e-7, '1e-07'],
    [123456789.125, '123456789.125'],
    [1e15, '1e+15'],
    [-1234567890123456.8, '-1.2345678901234568e+15'],
    [1.2345678901234568e17, '1.2345678901234568e+17'],
    [0.0001, '0.0001'],
    [1e-5, '1e-05'],
    [-0, '-0'],
    [100, '100'],
    [NaN, '"NaN"'],
    [-Infinity, '"-Infinity"'],
  ];
  for (const [value, text] of expected) assert.equal(postgresDouble(value), text, String(value));
});

test("random doubles of every magnitude: the direct spelling is the engine path's", async () => {
  // A fixed sequence (xorshift), so that a failure can be run again.
  let state = 0x2545f491;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const values: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const magnitude = Math.floor(next() * 640) - 320;
    const digits = 1 + Math.floor(next() * 17);
    const value = Number((next() * 10).toPrecision(digits)) * 10 ** magnitude * (next() < 0.5 ? -1 : 1);
    values.push(i % 3 === 0 ? Math.round(value) : value);
  }
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  // The engine's own macros, as every generation defines them (jsonRowsSql checks each row's size).
  await defineValueChecks(connection, 64 * 1024 * 1024, 1024 * 1024 * 1024);
  try {
    await loadBatches(connection, 'v', [{ type: 'DOUBLE', raw: 'DOUBLE' }], batchOf(values), new AbortController().signal);
    const [column] = await describe(connection, 'SELECT * FROM v');
    const rows = await connection.runAndReadAll(jsonRowsSql('(SELECT c0 FROM v) AS q(c0)', [column!], 'array'));
    const texts = rows.getRows().map((r) => String(r[0]));
    const encode = directEncoders([column!], ['DOUBLE'])![0]!;
    values.forEach((value, i) => assert.equal(`[${encode(value) as string}]`, texts[i], String(value)));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});
