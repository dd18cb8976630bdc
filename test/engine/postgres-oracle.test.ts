/**
 * Allowed functions and operators answer as PostgreSQL does: each expression is evaluated by
 * PostgreSQL itself and by vdb's engine (over constants, so nothing is pushed down), and the
 * values must be the same. What the engine cannot answer as PostgreSQL does is refused
 * (allow-list.ts) or translated (engine-dialect.ts); this is where such translations are proven.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tokenRequester, type Requester } from '../http/util.js';

let server: TestServer;
let req: Requester;
let postgres: pg.Client;

before(async () => {
  server = await startTestServer();
  req = await tokenRequester(server);
  postgres = await pgClient();
});
after(async () => {
  await postgres?.end();
  await server?.close();
});

/** Text, integers and booleans: values that read the same from both sides. */
const EXPRESSIONS = [
  "substr('hello', 2)",
  "substr('hello', 2, 3)",
  "substr('hello', -1, 3)",
  "substr('hello', 0)",
  "substr('hello', -5)",
  "substr('hello', 0, 1)",
  "substr('hello', 4, 10)",
  "substring('hello' from 2 for 2)",
  "substring('hello' from -2 for 4)",
  "substring('hello' from 3)",
  "trim('  a b  ')",
  "trim(both 'x' from 'xxaxx')",
  "trim(leading 'x' from 'xxaxx')",
  "trim(trailing 'x' from 'xxaxx')",
  "'abc' ~ 'b'",
  "'abc' ~ '^b'",
  "'ABC' ~* 'b'",
  "'abc' !~ 'b'",
  "'ABC' !~* 'b'",
  "E'a\\nb' ~ 'a.b'",
  "'a_b' LIKE 'a\\_b'",
  "'axb' LIKE 'a\\_b'",
  "'AbC' ILIKE 'abc'",
  "left('hello', -2)",
  "right('hello', -2)",
  "split_part('a,b,c', ',', 2)",
  "split_part('a,b,c', ',', -1)",
  "lpad('7', 3, '0')",
  "rpad('ab', 4, '-')",
  "position('l' in 'hello')",
  "strpos('hello', 'lo')",
  "replace('aaa', 'a', 'b')",
  "translate('abc', 'ab', 'xy')",
  "reverse('abc')",
  "repeat('ab', 3)",
  "concat('a', NULL, 'b')",
  "concat_ws('-', 'a', NULL, 'b')",
  "length('héllo')",
  "octet_length('héllo')",
  "upper('abc') || lower('ÄBC')",
  "chr(65) || ascii('A')::text",
  "md5('vdb')",
  "starts_with('vdb', 'vd')",
  '7 / 2',
  '-7 / 2',
  '7 % -3',
  '-7 % 3',
  'abs(-3) + sign(-2)',
  'gcd(12, 18) + lcm(4, 6)',
  '(2 ^ 10)::int',
  'round(2.5)::int',
  'trunc(-2.7)::int',
  'floor(-2.5)::int + ceil(-2.5)::int',
  '1 IS DISTINCT FROM NULL',
  'NULLIF(1, 1) IS NULL',
  'greatest(1, 3, 2) + least(4, 5)',
  "coalesce(NULL, 'x')",
  "CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END",
  "date_part('year', date '2024-02-29')::int",
  "extract(month from date '2024-02-29')::int",
  "date_trunc('month', date '2024-02-29')::date::text",
  "(date '2024-01-31' + 1)::text",
  'make_date(2024, 2, 29)::text',
  "array_to_string(ARRAY[1, 2, 3], ',')",
  'array_length(ARRAY[1, 2, 3], 1)',
  "array_position(ARRAY['a', 'b'], 'b')",
  "array_to_string(array_append(ARRAY[1], 2), ',')",
  "array_to_string(string_to_array('a,b', ','), '|')",
  "regexp_replace('foo bar', 'o+', '0')",
  "array_to_string(regexp_split_to_array('a1b2c', '[0-9]'), '|')",
];

/** PostgreSQL calls the engine refuses in this form (issue: PostgreSQL's SQL as PostgreSQL answers it). */
const KNOWN_REFUSED = ["octet_length('héllo')"];

test("allowed functions and operators give PostgreSQL's values, or a 400 — never another value", async () => {
  const differing: string[] = [];
  const refused: string[] = [];
  for (const expression of EXPRESSIONS) {
    const expected = (await postgres.query({ text: `SELECT (${expression})::text AS v`, rowMode: 'array' })).rows[0]?.[0] ?? null;
    const response = await req('/rest/api/query', { body: { sql: `SELECT (${expression})::text` } });
    if (response.status === 400) {
      refused.push(expression);
      continue;
    }
    const text = await response.text();
    assert.equal(response.status, 200, `${expression}: ${text}`);
    const actual = (JSON.parse(text) as unknown[][])[0]?.[0] ?? null;
    // PostgreSQL writes booleans cast to text as true/false, as the engine does.
    if (actual !== expected) differing.push(`${expression}: PostgreSQL ${JSON.stringify(expected)}, vdb ${JSON.stringify(actual)}`);
  }
  assert.deepEqual(differing, []);
  assert.deepEqual(refused, KNOWN_REFUSED);
});

test('a negative substring length fails as in PostgreSQL', async () => {
  await assert.rejects(postgres.query("SELECT substr('hello', 2, -1)"), /negative substring length not allowed/);
  const response = await req('/rest/api/query', { body: { sql: "SELECT substr('hello', 2, -1)" } });
  assert.equal(response.status, 400);
  assert.match(await response.text(), /negative substring length not allowed/);
});
