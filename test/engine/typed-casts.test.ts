/**
 * Casts to types the engine does not have, answered as PostgreSQL answers them: char(n) by its
 * use (shown padded, measured, joined and compared without the padding), name and money. Each
 * statement here is compared with PostgreSQL's answer (names, types, JSON text of each value)
 * over constants and over the corpus table in each kind of source; what vdb cannot answer so is
 * refused with a 400 saying so.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oracleSession, testSameAnswers } from './oracle-session.js';

const CONSTANTS: readonly string[] = [
  // char(n): shown padded to n (cut where longer), stripped where text is wanted.
  "SELECT 'abc'::char(5) AS a, 'abcdef'::char(3) AS b, ''::char(2) AS c, 'x'::char AS d, 'ab  '::bpchar AS e, NULL::char(3) AS f",
  "SELECT 'ab'::char(5) || 'c' AS a, 'x' || 'ab '::char(4) || 'y' AS b, length('ab'::char(5)) AS c, char_length('ab  '::char(3)) AS d",
  "SELECT octet_length('ab'::char(5)) AS a, upper('ab'::char(4)) AS b, lower('AB'::character(3)) AS c, 'ab'::char(4)::text AS d, 'ab'::char(4)::varchar AS e",
  "SELECT 'abc'::char(5) = 'abc' AS a, 'abc'::char(5) = 'abc'::char(3) AS b, 'ab'::char(3) < 'abc'::char(3) AS c, 'b'::char(2) <> 'b' AS d",
  'SELECT 12::char(4) AS a, 1.50::char(6) AS b, true::char(5) AS c, 2.5::float8::char(4) AS d',
  "SELECT x::char(4) AS c, length(x::char(4)) AS n, x::char(4) || '|' AS j FROM (VALUES ('a'), ('abcdef'), ('ab  '), (''), (NULL)) v(x)",
  "SELECT x FROM (VALUES ('a'), ('b  '), ('c')) v(x) WHERE x::char(3) = 'b' OR x::char(2) = 'c'::char(2)",
  // name: text of at most 63 bytes.
  "SELECT 'abc'::name AS a, repeat('x', 70)::name AS b, 'éééééééééééééééééééééééééééééééééééééééé'::name AS c, 'a'::name || 'b' AS d, pg_typeof('a'::name) AS e",
  "SELECT x::name AS n, length(x::name) AS l FROM (VALUES ('pg_class'), (repeat('y', 64)), (NULL)) v(x)",
  // money: lc_monetary C's format, rounded half away from zero.
  "SELECT '12.34'::money AS a, '-1234.565'::money AS b, '$1,000.5'::money AS c, '(3.25)'::money AS d, 5::money AS e, 1234567.891::money AS f, (-0.004)::money AS g",
  "SELECT 12.345::money::numeric AS a, '7'::money::text AS b, '1.5'::money < '2'::money AS c, 0::money AS d, 92233720368547758.07::money AS e",
  'SELECT x::money AS m, x::money::numeric AS n FROM (VALUES (1.005), (-2.500), (1234567.500), (NULL)) v(x)',
];

const TABLES: readonly string[] = [
  'SELECT id, t::char(4) AS c, v::char(8) AS w, length(t::char(3)) AS n FROM {t} ORDER BY id',
  'SELECT id, t::name AS t, n::money AS m, i::money AS i, b::money::numeric AS b FROM {t} ORDER BY id',
  "SELECT id, v::char(3) || '|' AS j, upper(t::char(6)) AS u FROM {t} ORDER BY id",
];

/** What vdb refuses (a 400 saying it is not supported). */
const REFUSED: readonly string[] = [
  // Compared with text (PostgreSQL strips only the char(n) side) or matched by LIKE (padded there).
  "SELECT x::char(3) = y FROM (VALUES ('a', 'a ')) v(x, y)",
  "SELECT 'a'::char(3) LIKE 'a'",
  "SELECT 'a'::char(3) = 'a '",
  "SELECT concat('ab'::char(4), 'c')",
  "SELECT x || 'c' FROM (SELECT 'ab'::char(4) AS x) s",
  "SELECT coalesce('1.5'::money, '2'::money)",
  "SELECT repeat('é', 40)::name",
  // Sorted by the shown column: PostgreSQL sorts money as numbers and char(n) without its padding.
  'SELECT x::money FROM (VALUES (9), (10)) v(x) ORDER BY 1',
  "SELECT x::char(3) AS c FROM (VALUES ('a'), ('a' || chr(9))) v(x) ORDER BY c",
  "SELECT greatest(x::money, '1'::money) FROM (VALUES (1), (2)) v(x)",
  "SELECT x::money FROM (VALUES ('1.5')) v(x)",
];

/** What PostgreSQL fails: vdb fails too (a 400). */
const FAILING: readonly string[] = [
  'SELECT 1.5::float8::money',
  "SELECT '1.5 USD'::money",
  'SELECT 92233720368547758.08::money',
  "SELECT '92233720368547758.08'::money",
];

const session = oracleSession();
testSameAnswers(session, CONSTANTS, TABLES);

test('what PostgreSQL fails, vdb fails with a 400', async () => {
  for (const sql of FAILING) {
    await assert.rejects(session.postgres().query(sql), sql);
    const answer = await session.vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.body}`);
  }
});

test('what vdb cannot answer as PostgreSQL does, it refuses with a 400 saying so', async () => {
  for (const sql of REFUSED) {
    await session.postgres().query(sql);
    const answer = await session.vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.body}`);
    assert.match(answer.body, /not supported/, sql);
  }
});
