/**
 * Rows as JSON (src/results/json.ts): floats spelled as PostgreSQL writes them (the expected
 * texts are PostgreSQL's json_build_array of the same values), json values with their own text,
 * in both row shapes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { defineValueChecks } from '../../src/runtime/value-macros.js';
import { jsonRowsSql } from '../../src/results/json.js';
import { describe } from '../../src/runtime/duckdb.js';

async function encode(select: string, shape: 'array' | 'object'): Promise<string[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  // The engine's own macros, as every generation defines them (jsonRowsSql checks each row's size).
  await defineValueChecks(connection, 64 * 1024 * 1024, 1024 * 1024 * 1024);
  try {
    const columns = await describe(connection, select);
    const relation = `(${select}) AS q(${columns.map((_, i) => `c${i}`).join(', ')})`;
    const reader = await connection.runAndReadAll(jsonRowsSql(relation, columns, shape));
    return reader.getRows().map((row) => String(row[0]));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

// [float8, float4] per value, as PostgreSQL 16 writes them.
const FLOATS: Array<[string, string, string]> = [
  ['1e301', '1e+301', 'null'],
  ['1e-7', '1e-07', '1e-07'],
  ['123456789.125', '123456789.125', '1.2345679e+08'],
  ['1e15', '1e+15', '1e+15'],
  ['-1234567890123456.8', '-1.2345678901234568e+15', '-1.234568e+15'],
  ['1e16', '1e+16', '1e+16'],
  ['123456789012345678', '1.2345678901234568e+17', '1.2345679e+17'],
  ['16777216', '16777216', '1.6777216e+07'],
  ['999999', '999999', '999999'],
  ['0.0001', '0.0001', '0.0001'],
  ['1e-5', '1e-05', '1e-05'],
  ["'-0'", '-0', '-0'],
  ['0', '0', '0'],
  ['-3', '-3', '-3'],
  ['0.1', '0.1', '0.1'],
  ["'NaN'", '"NaN"', '"NaN"'],
  ["'-Infinity'", '"-Infinity"', '"-Infinity"'],
  ['NULL', 'null', 'null'],
];

test('floats are written as PostgreSQL writes float8 and float4', async () => {
  const values = FLOATS.map(([v]) => `(${v}::DOUBLE)`).join(', ');
  const select = `SELECT x, CASE WHEN abs(x) < 1e38 OR NOT isfinite(x) THEN x END::FLOAT, 'a' FROM (VALUES ${values}) v(x)`;
  const rows = await encode(select, 'array');
  assert.deepEqual(
    rows,
    FLOATS.map(([, double, float]) => `[${double},${float},"a"]`),
  );
});

test('objects, json values and lists of floats', async () => {
  const select = `SELECT 1 AS "id", 1e15::DOUBLE AS "f", '{"x":  [1, 2]}'::JSON AS "j", [1e-7, NULL]::DOUBLE[] AS "l", 'x"y' AS "t"`;
  assert.deepEqual(await encode(select, 'object'), ['{"id":1,"f":1e+15,"j":{"x":  [1, 2]},"l":[1e-07,null],"t":"x\\"y"}']);
  assert.deepEqual(await encode(select, 'array'), ['[1,1e+15,{"x":  [1, 2]},[1e-07,null],"x\\"y"]']);
  assert.deepEqual(await encode(`SELECT NULL::JSON AS j, NULL::DOUBLE[] AS l`, 'array'), ['[null,null]']);
});
