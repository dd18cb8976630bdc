/**
 * PostgreSQL as the oracle: every expression and statement of the corpus (postgres-corpus.ts) is
 * answered by PostgreSQL itself and by vdb's engine (over constants, so nothing is pushed down),
 * and the answers must be the same. What the engine cannot answer as PostgreSQL does is refused
 * (allow-list.ts) or translated (engine-dialect.ts); the few known differences are listed here and
 * in docs/sql.md ("Known differences"), so that a new one fails the test.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tokenRequester, type Requester } from '../http/util.js';
import { EXPRESSIONS, FAILING, STATEMENTS } from './postgres-corpus.js';

let server: TestServer;
let req: Requester;
let postgres: pg.Client;

before(async () => {
  server = await startTestServer();
  req = await tokenRequester(server);
  postgres = await pgClient();
  await postgres.query("SET TimeZone = 'UTC'");
});
after(async () => {
  await postgres?.end();
  await server?.close();
});

/** Refused by vdb with a 400 naming what is not supported (docs/sql.md lists them). */
const KNOWN_REFUSED = [
  // Values the engine cannot hold: NUMERIC NaN, char(n) padding, PostgreSQL's integer wrap-around.
  "'NaN'::numeric",
  "char_length('abc'::char(5))",
  "'ab'::char(5) || 'c'",
  "SELECT 'abc'::char(5) = 'abc'",
  "SELECT length('abc'::char(5)), octet_length('abc'::varchar)",
  '(-2147483648)::int % -1',
  '1 << 31',
  // Float aggregates over infinity: PostgreSQL answers NaN, the engine fails.
  "var_pop(x) ;; FROM (VALUES ('inf'::float8), (1)) v(x)",
  "SELECT var_pop(x) FROM (VALUES ('inf'::float8), (1)) v(x)",
  // Input forms other than ISO 8601 and PostgreSQL's interval syntax with fields.
  "interval '1' year",
  "interval '+02:00'",
  "date '01/02/03'",
  "date 'January 8, 1999'",
  "timestamptz '2020-01-01 00:00+02'",
  "date_trunc('century', date '2001-01-01')",
  "date_trunc('millennium', date '2001-01-01')",
  // Functions not (yet) translated: refused by the allow-list or the engine.
  'width_bucket(5.35, 0.024, 10.06, 5)',
  'div(9, 4)',
  'sind(30)',
  "regexp_matches('foobarbequebaz', 'ba.')",
  "to_char(12.5, '999D9')",
  "to_char(date '2024-03-05', 'YYY')",
  "to_char(date '2024-03-05', 'DDth')",
  "format('%I', 'x')",
  "format('%10s', 'x')",
  'pg_typeof(1)',
  "initcap('hello world')",
  "SELECT initcap('hello wORLD')",
  'make_interval(days => 10)',
  "justify_days(interval '35 days')",
  'cardinality(array[1,2])',
  "row_to_json(row(1, 'a'))",
  "array_to_string(ARRAY[1, NULL, 3], ',', '*')",
  "interval '1 hour' / 2",
  // Arrays: more than one dimension, and arrays cast to text.
  'array_length(array[[1,2],[3,4]], 2)',
  '(ARRAY[1,2])::text',
];

/** Answered otherwise than PostgreSQL does; each is documented in docs/sql.md ("Known differences"). */
const KNOWN_DIFFERENT = [
  // Unicode case mapping: the engine maps ß to ẞ.
  "upper('ß')",
  // numeric division: the engine divides to double precision (16-17 digits), PostgreSQL to 20.
  '(1::numeric / 3)',
  // Over dates, PostgreSQL answers timestamp with time zone, the engine timestamp (the same instant in UTC).
  "date_trunc('decade', date '2019-05-01')",
  "SELECT * FROM generate_series(date '2024-01-01', date '2024-01-03', interval '1 day') d",
  // json ->> of an object: PostgreSQL keeps the input's spacing, the engine writes it compact.
  `SELECT '{"a": {"b": "c"}}'::json ->> 'a'`,
];

const NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
/** 1.5000 and 1.5: numeric's scale shows no other value. */
const withoutTrailingZeros = (text: string) => (text.includes('.') && !/e/i.test(text) ? text.replace(/0+$/, '').replace(/\.$/, '') : text);
const significantDigits = (text: string) => text.replace(/e.*$/i, '').replace(/[-.]/g, '').replace(/^0+/, '').length;

/**
 * The same value: equal texts, the same number written with another scale, or floating-point
 * results (17 significant digits at most) within a few units of the last place, where the
 * engine sums in another order than PostgreSQL.
 */
function sameValue(expected: unknown, actual: unknown): boolean {
  if (expected === actual) return true;
  if (typeof expected === 'number' && typeof actual === 'number') return closeFloats(expected, actual);
  if (typeof expected !== 'string' || typeof actual !== 'string' || !NUMBER.test(expected) || !NUMBER.test(actual)) {
    if (Array.isArray(expected) && Array.isArray(actual))
      return expected.length === actual.length && expected.every((e, i) => sameValue(e, actual[i]));
    if (expected && actual && typeof expected === 'object' && typeof actual === 'object') {
      const keys = Object.keys(expected);
      return (
        JSON.stringify(keys) === JSON.stringify(Object.keys(actual)) &&
        keys.every((k) => sameValue((expected as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k]))
      );
    }
    return false;
  }
  if (withoutTrailingZeros(expected) === withoutTrailingZeros(actual)) return true;
  return significantDigits(expected) <= 17 && significantDigits(actual) <= 17 && closeFloats(Number(expected), Number(actual));
}

const closeFloats = (a: number, b: number) => a === b || Math.abs(a - b) <= 8 * Number.EPSILON * Math.max(Math.abs(a), Math.abs(b));

interface Outcome {
  refused: string[];
  differing: string[];
  failed: string[];
}

async function vdb(sql: string, query = ''): Promise<{ status: number; text: string }> {
  const response = await req(`/rest/api/query${query}`, { body: { sql } });
  return { status: response.status, text: await response.text() };
}

test(`${EXPRESSIONS.length} expressions give PostgreSQL's values, or a 400 — never another value`, async () => {
  const outcome: Outcome = { refused: [], differing: [], failed: [] };
  for (const entry of EXPRESSIONS) {
    const [expression, from = ''] = entry.split(' ;; ');
    const sql = `SELECT (${expression})::text AS v ${from}`;
    const expected = (await postgres.query({ text: sql, rowMode: 'array' })).rows.map((row: unknown[]) => row[0] ?? null);
    const answer = await vdb(sql);
    if (answer.status === 400) {
      outcome.refused.push(entry);
      continue;
    }
    if (answer.status !== 200) {
      outcome.failed.push(`${entry}: ${answer.status} ${answer.text.slice(0, 200)}`);
      continue;
    }
    const actual = (JSON.parse(answer.text) as unknown[][]).map((row) => row[0] ?? null);
    if (!sameValue(expected, actual)) outcome.differing.push(entry);
  }
  assert.deepEqual(
    {
      failed: outcome.failed,
      differing: outcome.differing.filter((e) => !KNOWN_DIFFERENT.includes(e)),
      refused: outcome.refused.filter((e) => !KNOWN_REFUSED.includes(e)),
    },
    { failed: [], differing: [], refused: [] },
  );
});

test(`${STATEMENTS.length} statements give PostgreSQL's rows and column names, or a 400`, async () => {
  const outcome: Outcome = { refused: [], differing: [], failed: [] };
  for (const sql of STATEMENTS) {
    const result = await postgres.query<{ j: unknown[] }>(
      `SELECT coalesce(json_agg(to_json(oracle_row)), '[]') AS j FROM (${sql}) oracle_row`,
    );
    const answer = await vdb(sql, '?array=false');
    if (answer.status === 400) {
      outcome.refused.push(sql);
      continue;
    }
    if (answer.status !== 200) {
      outcome.failed.push(`${sql}: ${answer.status} ${answer.text.slice(0, 200)}`);
      continue;
    }
    const rows = (list: unknown[]) =>
      /ORDER BY/i.test(sql) ? list : [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    if (!sameValue(rows(result.rows[0]!.j), rows(JSON.parse(answer.text) as unknown[]))) outcome.differing.push(sql);
  }
  assert.deepEqual(
    {
      failed: outcome.failed,
      differing: outcome.differing.filter((e) => !KNOWN_DIFFERENT.includes(e)),
      refused: outcome.refused.filter((e) => !KNOWN_REFUSED.includes(e)),
    },
    { failed: [], differing: [], refused: [] },
  );
});

test('what PostgreSQL refuses, vdb refuses too', async () => {
  for (const sql of FAILING) {
    await assert.rejects(postgres.query(sql), sql);
    const answer = await vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.text}`);
  }
});

test('a negative substring length fails as in PostgreSQL', async () => {
  await assert.rejects(postgres.query("SELECT substr('hello', 2, -1)"), /negative substring length not allowed/);
  const response = await req('/rest/api/query', { body: { sql: "SELECT substr('hello', 2, -1)" } });
  assert.equal(response.status, 400);
  assert.match(await response.text(), /negative substring length not allowed/);
});
