/**
 * JSON rows written from COPY's text (src/connectors/postgres/copy-json.ts) against the JSON
 * PostgreSQL writes itself (json-rows.ts, `to_json`), byte for byte: every type class, every
 * control character, quotes and backslashes, NaN and the infinities, BC dates, NULLs, both
 * shapes, and the COPY data cut into chunks anywhere.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { copyJsonValuesSql, CopyToJson } from '../../src/connectors/postgres/copy-json.js';
import { jsonRowSql } from '../../src/connectors/postgres/json-rows.js';
import { engineTypeOfPostgres } from '../../src/connectors/postgres/types.js';
import type { StatementColumn } from '../../src/connectors/types.js';
import { pgClient, uniqueTag } from './db.js';

const tag = `${uniqueTag()}_copyjson`;
let client: pg.Client;
let columns: StatementColumn[];

/** Every character below 0x20, and the ones COPY or JSON escape. */
const AWKWARD = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i === 0 ? 0x20 : i)).join('') + `"\\'/\u007f é 日本 🎉 \\N N`;

before(async () => {
  client = await pgClient();
  await client.query(`SET DateStyle = ISO, MDY`);
  await client.query(`CREATE SCHEMA ${tag}`);
  await client.query(`
    CREATE TABLE ${tag}.t (id int, small smallint, big bigint, amount numeric(12,2), free numeric, ratio double precision, r real,
      flag boolean, day date, name text, code char(5), label varchar(20), at timestamp, atz timestamptz, span interval,
      bytes bytea, doc json, docb jsonb, tags text[], u uuid, addr inet)`);
  await client.query(
    `
    INSERT INTO ${tag}.t VALUES
      (1, 1, 9223372036854775807, 12.5, 1.50, 0.1, 1.5, true, '2024-02-29', 'plain', 'ab', 'x', '2024-01-01 10:00:00.5', '2024-01-01 10:00:00+02',
        '1 day 02:00:00', '\\x00ff', '{"a": [1, 2]}', '{"b": "c"}', ARRAY['a', 'b c', NULL], '6f9619ff-8b86-d011-b42d-00cf4fc964ff', '10.0.0.1/32'),
      (2, -32768, -9223372036854775808, -0.01, 'NaN', 'NaN', '-Infinity', false, '0044-03-15 BC', $1, 'x"y', E'tab\\there', '0044-03-15 10:00:00 BC',
        'infinity', '-1 mon', '', '"text"', 'null', '{}', NULL, '::1'),
      (3, NULL, NULL, NULL, 1e-20, 'Infinity', 1e30, NULL, 'infinity', '', NULL, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      (4, 0, 0, 0, -0.0, '-0', 3.4028235e38, true, '-infinity', NULL, '     ', NULL, 'infinity', '-infinity', '0', '\\x5c22', '[]', '[1, 2.50]', ARRAY['"q"', '\\b'], NULL, NULL),
      (5, 7, 7, 7, 123456789012345678901234567890.123456789, 1e300, -1e-30, false, '1999-12-31', E'line\\nbreak\\r\\n\\\\', 'é', '日本', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
  `,
    [AWKWARD],
  );
  const described = await client.query(`SELECT * FROM ${tag}.t LIMIT 0`);
  const types = await client.query<{ t: string }>(
    'SELECT format_type(t, m) AS t FROM unnest($1::oid[], $2::int[]) WITH ORDINALITY AS x(t, m, i) ORDER BY i',
    [described.fields.map((f) => f.dataTypeID), described.fields.map((f) => f.dataTypeModifier)],
  );
  columns = described.fields.map((f, i) => ({ name: f.name, sourceType: types.rows[i]!.t, type: engineTypeOfPostgres(types.rows[i]!.t) }));
});

after(async () => {
  await client?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await client?.end();
});

const aliases = () => columns.map((_, i) => `c${i}`).join(', ');

/** The rows as PostgreSQL writes their JSON itself, joined by commas. */
async function postgresJson(shape: 'array' | 'object'): Promise<string> {
  const result = await client.query<[string]>({
    text: `SELECT ${jsonRowSql(columns, shape)} FROM (SELECT * FROM ${tag}.t ORDER BY id) AS q(${aliases()})`,
    rowMode: 'array',
  });
  return result.rows.map((row) => row[0]).join(',');
}

/** COPY's text of the values copy-json.ts selects. */
async function copyText(): Promise<Buffer> {
  const stream = client.query(
    copyTo(`COPY (SELECT ${copyJsonValuesSql(columns)} FROM (SELECT * FROM ${tag}.t ORDER BY id) AS q(${aliases()})) TO STDOUT`),
  );
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The converter's rows from `data` cut into chunks of `size` bytes (0: whole). */
function converted(data: Buffer, shape: 'array' | 'object', size: number, maxRow = 1 << 20): { text: string; rows: number } {
  const converter = new CopyToJson(columns, shape, maxRow, () => new Error('too large'));
  const texts: string[] = [];
  let rows = 0;
  for (let at = 0; at < data.length; at += size || data.length) {
    const part = converter.convert(data.subarray(at, at + (size || data.length)));
    if (part.text) texts.push(part.text);
    rows += part.rows;
  }
  converter.end();
  return { text: texts.join(','), rows };
}

test('every type class reads as PostgreSQL writes its JSON, in both shapes', async () => {
  const data = await copyText();
  for (const shape of ['array', 'object'] as const) {
    const expected = await postgresJson(shape);
    const { text, rows } = converted(data, shape, 0);
    assert.equal(rows, 5);
    assert.equal(text, expected, shape);
    assert.deepEqual(JSON.parse(`[${text}]`), JSON.parse(`[${expected}]`));
  }
});

test('chunks cut anywhere give the same rows', async () => {
  const data = await copyText();
  const expected = await postgresJson('array');
  for (const size of [1, 2, 3, 7, 64, 333]) assert.equal(converted(data, 'array', size).text, expected, `chunks of ${size}`);
});

test('a row longer than the limit is refused, within the chunk and across chunks', async () => {
  const data = await copyText();
  assert.throws(() => converted(data, 'array', 0, 100), /too large/);
  assert.throws(() => converted(data, 'array', 16, 100), /too large/);
});

test('a statement without columns answers empty rows', () => {
  const converter = new CopyToJson([], 'array', 1000, () => new Error('too large'));
  assert.deepEqual(converter.convert(Buffer.from('\\N\n\\N\n')), { text: '[],[]', rows: 2 });
  assert.equal(copyJsonValuesSql([]), 'NULL');
});
