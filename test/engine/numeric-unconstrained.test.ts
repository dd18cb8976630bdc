/**
 * `numeric` without precision or scale over floats, text and expressions, and round, trunc and
 * sqrt of such values, answered as PostgreSQL answers them (its values, their scales, its types),
 * compared with PostgreSQL itself; what the engine cannot hold is a 400 naming it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { compareAnswers, postgresAnswer, postgresTypeNames, vdbAnswer } from './postgres-answers.js';

let server: TestServer;
let postgres: pg.Client;
let pgTypes: Map<number, string>;

before(async () => {
  server = await startTestServer();
  postgres = await pgClient();
  pgTypes = await postgresTypeNames(postgres);
});
after(async () => {
  await postgres?.end();
  await server?.close();
});

async function assertSame(sql: string): Promise<void> {
  const expected = await postgresAnswer(postgres, pgTypes, sql);
  const actual = await vdbAnswer(server, sql);
  assert.equal(actual.status, 200, `${sql}: ${actual.body}`);
  assert.equal(compareAnswers(expected, actual.answer!, false), null, sql);
}

async function assertRefused(sql: string, message: RegExp): Promise<void> {
  const actual = await vdbAnswer(server, sql);
  assert.equal(actual.status, 400, `${sql}: ${actual.body}`);
  assert.match(actual.body, message);
}

const FLOATS =
  'VALUES (1, 0.1::float8), (2, 1e20::float8), (3, -0.0::float8), (4, 123456789.123456789::float8), (5, 1e-20::float8), (6, NULL), (7, 2.5::float8), (8, -1::float8 / 3)';
const REALS = 'VALUES (1, 0.15::real), (2, 2.675::real), (3, 1.1::real), (4, -3.05::real), (5, 1e10::real), (6, 0.000123456789::real)';
const TEXTS = "VALUES (1, '1.500'), (2, ' -2e3 '), (3, '.5'), (4, '0001.10'), (5, '1.5e-3'), (6, NULL), (7, '+7.'), (8, '-0.000')";

test('a float8 as numeric is its text with 15 significant digits, each value with its own scale', async () => {
  await assertSame(`SELECT id, x::numeric AS n FROM (${FLOATS}) v(id, x) ORDER BY id`);
  await assertSame(
    `SELECT id, round(x::numeric, 2) AS r, trunc(x::numeric, 1) AS t, x::numeric * 2 AS d FROM (${FLOATS}) v(id, x) ORDER BY id`,
  );
  await assertSame(
    `SELECT id, x::numeric / 3 AS q, round(x::numeric) AS r0 FROM (${FLOATS}) v(id, x) WHERE id <> 2 AND id <> 5 ORDER BY id`,
  );
  await assertSame('SELECT 0.1::float8::numeric AS a, 1e20::float8::numeric AS b, 1e-20::float8::numeric AS c, 2.5::float8::numeric AS d');
});

test('a real as numeric is its text with 6 significant digits: round(real_column::numeric, 1)', async () => {
  await assertSame(`SELECT id, x::numeric AS n, round(x::numeric, 1) AS r, trunc(x::numeric, 2) AS t FROM (${REALS}) v(id, x) ORDER BY id`);
});

test('text as numeric keeps the scale written (1.500), exponents read as PostgreSQL reads them', async () => {
  await assertSame(
    `SELECT id, t::numeric AS n, t::numeric + 1 AS p, round(t::numeric, 2) AS r, t::numeric * t::numeric AS sq FROM (${TEXTS}) v(id, t) ORDER BY id`,
  );
  await assertSame("SELECT '1.500'::text::numeric AS a, ('1' || '.25')::numeric AS b");
});

test('sqrt of numeric at PostgreSQL scale', async () => {
  await assertSame(
    "SELECT id, sqrt(t::numeric) AS s FROM (VALUES (1, '2'), (2, '2.0'), (3, '12345.678'), (4, '0.0002'), (5, '100'), (6, '0'), (7, '1e10')) v(id, t) ORDER BY id",
  );
  await assertSame('SELECT sqrt(2::numeric) AS a, sqrt(2.0) AS b, sqrt(0.25) AS c, sqrt(x) AS f FROM (VALUES (2::float8)) v(x)');
});

test('power of numeric to a whole constant exponent at PostgreSQL scale: max(16, the base scale)', async () => {
  await assertSame(
    'SELECT power(1.5::numeric, 2) AS a, power(1.25::numeric, 3) AS b, power(0.1::numeric, 5) AS c, power(0.001::numeric, 7) AS d, power(1.12345678901234567::numeric, 2) AS e, power(2::numeric, -2) AS f, power(3::numeric, -1) AS g, power(-1.5::numeric, 3) AS h, power(1.5::numeric, 0) AS i, 1.5 ^ 2 AS j',
  );
  await assertSame(
    `SELECT id, power(x::numeric, 2) AS p, x::numeric ^ -1 AS q, power(id, 2) AS r, pow(x, 2) AS s FROM (VALUES (1, 0.1::float8), (2, 2.5::float8), (3, NULL)) v(id, x) ORDER BY id`,
  );
  await assertRefused('SELECT power(x::numeric, -1) FROM (VALUES (0::float8)) v(x)', /zero raised to a negative power is undefined/);
  // 1 / 1.23456789^3 at scale 16 needs more than 38 digits here; a non-whole exponent is answered too (numeric-logarithms.test.ts).
  await assertRefused('SELECT power(1.23456789, -3)', /more than 38 digits is not supported/);
  await assertSame('SELECT power(2.0, 0.5) AS p');
});

test('ceil and floor of such values have scale 0; round, sign and kin of integers stay double precision', async () => {
  await assertSame(
    `SELECT id, ceil(x::numeric) AS c, floor(x::numeric) AS f, ceiling(x::numeric) / 3 AS q FROM (VALUES (1, -0.5::float8), (2, 2.25::float8), (3, -2.25), (4, NULL)) v(id, x) ORDER BY id`,
  );
  // PostgreSQL has these for numeric and double precision only: of an integer, a double.
  await assertSame('SELECT id, sign(id) / 3.0 AS s FROM (VALUES (1), (2)) v(id) ORDER BY id');
  // round(i, n) exists for numeric only: numeric of scale n.
  await assertSame('SELECT id, round(id, 2) / 3 AS r, trunc(id * 15, -1) / 7.0 AS t FROM (VALUES (1), (2)) v(id) ORDER BY id');
  // The engine's round of an integer is an integer: refused, never answered as numeric.
  await assertRefused('SELECT round(id) / 3.0 AS r FROM (VALUES (1), (2)) v(id)', /not supported/);
});

test('text PostgreSQL does not read as numeric fails as in PostgreSQL; NaN, infinities and more than 38 digits are a 400', async () => {
  await assert.rejects(postgres.query("SELECT t::numeric FROM (VALUES ('abc')) v(t)"), /invalid input syntax for type numeric/);
  await assertRefused("SELECT t::numeric FROM (VALUES ('abc')) v(t)", /invalid input syntax for type numeric: \\"abc\\"/);
  await assertRefused("SELECT t::numeric FROM (VALUES ('NaN')) v(t)", /NaN or Infinity is not supported/);
  await assertRefused("SELECT x::numeric FROM (VALUES ('infinity'::float8)) v(x)", /NaN or Infinity is not supported/);
  await assertRefused('SELECT x::numeric FROM (VALUES (1e300::float8)) v(x)', /more than 38 digits is not supported/);
  await assertRefused("SELECT t::numeric FROM (VALUES ('1e-50')) v(t)", /more than 38 digits is not supported/);
  await assertRefused("SELECT sqrt(t::numeric) FROM (VALUES ('-1')) v(t)", /cannot take square root of a negative number/);
});

test('nested where the scale is not seen (compared, to_char) or as text, such values answer as PostgreSQL does', async () => {
  await assertSame('SELECT x FROM (VALUES (0.1::float8), (-2.5::float8), (NULL)) v(x) WHERE x::numeric > 0');
  await assertSame("SELECT t FROM (VALUES ('1.5'), ('0.25'), (' 2e3 ')) v(t) WHERE t::numeric > 1 ORDER BY t");
  await assertSame(`SELECT id, x::numeric::text AS t, length(x::numeric::text) AS l FROM (${FLOATS}) v(id, x) ORDER BY id`);
  await assertSame(
    "SELECT id, x::numeric = 2.675 AS e, to_char(x::numeric, 'FM990.0000') AS c FROM (VALUES (1, 2.675::float8), (2, -1::float8 / 3), (3, 1e15::float8), (4, NULL)) v(id, x) ORDER BY id",
  );
  // Compared, a value of more decimals than the engine holds exactly is refused.
  await assertRefused('SELECT x::numeric > 0 FROM (VALUES (1e-20::float8)) v(x)', /more than 18 decimals .* not supported/);
  await assertSame(`SELECT id, x::numeric::text || '|' AS t, x::numeric BETWEEN 0 AND 2 AS b FROM (${REALS}) v(id, x) ORDER BY id`);
  await assertSame(`SELECT id, t::numeric::varchar AS v, t::numeric <> 0 AS z FROM (${TEXTS}) v(id, t) ORDER BY id`);
});

test('where the scale per value cannot be kept (an aggregate, a sort, a function of its own), the statement is still a 400', async () => {
  await assertRefused('SELECT sum(x::numeric) FROM (VALUES (0.1::float8)) v(x)', /not supported/);
  await assertRefused('SELECT abs(x::numeric) + 1 AS a FROM (VALUES (0.1::float8)) v(x) ORDER BY 1', /not supported/);
  await assertRefused("SELECT coalesce(t::numeric, 0) FROM (VALUES ('1.5')) v(t) WHERE t::numeric > 1 GROUP BY 1", /not supported/);
  await assertRefused('SELECT x::numeric * 1e20 > 0 FROM (VALUES (0.1::float8)) v(x)', /not supported/);
});
