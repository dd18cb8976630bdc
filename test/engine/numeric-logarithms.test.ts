/**
 * ln, exp, log, log10 and power of numeric answered as PostgreSQL answers them (runtime/numeric-logarithms.ts:
 * its result scales, its digits rounded half away from zero), compared with PostgreSQL itself over
 * constants, VALUES and the corpus table in each kind of source, and over a thousand pseudo-random
 * arguments; results of more than 38 digits and uses outside the select list are a 400.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { numericExp, numericLn, numericLog, numericPower } from '../../src/runtime/numeric-logarithms.js';
import { oracleSession, randomFrom, testSameAnswers } from './oracle-session.js';

const CONSTANTS: readonly string[] = [
  'SELECT ln(2.0) AS a, ln(10.0) AS b, ln(1.0) AS c, ln(0.5) AS d, ln(1.1) AS e, ln(0.9) AS f, ln(123456.789) AS g, ln(0.000001) AS h',
  'SELECT exp(1.0) AS a, exp(0.0) AS b, exp(-1.0) AS c, exp(2.5) AS d, exp(10.123) AS e, exp(-20.5) AS f, exp(50.0) AS g',
  'SELECT log(2, 8) AS a, log(10, 1000) AS b, log(2.0, 10) AS c, log(10, 0.001) AS d, log(1.5, 2.25) AS e, log(100.0) AS f, log10(2.000) AS g',
  'SELECT round(ln(3.0), 4) AS a, ln(2.0) * 2 AS b, exp(ln(5.0)) AS c, ln(2::numeric) AS d, log(2::numeric) AS e',
  // Of an integer or a float, PostgreSQL's double precision functions.
  'SELECT ln(2) AS a, exp(1) AS b, log(100) AS c, ln(2.0::float8) AS d, log10(1000) AS e',
  'SELECT x, ln(x) AS l, exp(x) AS e, log(x) AS g, log(2, x) AS b FROM (VALUES (0.5), (1.5), (2.0), (33.3), (NULL)) v(x)',
  // power and ^ with a numeric: numeric (x ^ y was the engine's double before: a silent difference).
  'SELECT 2 ^ 0.5 AS a, power(2, 0.5) AS b, 2.0 ^ 3 AS c, power(2.5, 2.0) AS d, power(-2.0, 3) AS e, power(9, 0.5::numeric) AS f, 1.5 ^ -2 AS g',
  'SELECT 2 ^ 3 AS a, 2 ^ 0.5::float8 AS b, power(0.0, 0.5) AS c, power(1.0, 123.456) AS d, 10 ^ 20.5 AS e, 0.5 ^ 30.25 AS f',
  'SELECT x, x ^ 0.5 AS r, power(x, 1.5) AS p, power(2, x) AS q FROM (VALUES (2.00), (0.25), (10.50), (NULL)) v(x)',
];

const TABLES: readonly string[] = [
  'SELECT id, ln(abs(n) + 1) AS l, exp(n / 10) AS e, log(abs(n) + 0.5) AS g FROM {t} ORDER BY id',
  'SELECT id, log(2, abs(i) + 1) AS a, ln(b + 100) AS c FROM {t} WHERE b IS NULL OR b > -10 ORDER BY id',
  'SELECT id, n ^ 2.5 AS a, power(abs(n) + 1, 0.5) AS b, 1.5 ^ i AS c, i ^ 2 AS d FROM {t} WHERE n IS NULL OR n >= 0 ORDER BY id',
];

const session = oracleSession();
testSameAnswers(session, CONSTANTS, TABLES);

test('a thousand pseudo-random arguments: the digits PostgreSQL computes', async () => {
  const random = randomFrom(27);
  const number = () => {
    const whole = Array.from({ length: random(7) }, () => random(10)).join('') || '0';
    const fraction = Array.from({ length: random(12) }, () => random(10)).join('');
    const forms = [
      `${whole}${fraction ? `.${fraction}` : ''}`,
      `0.${'0'.repeat(random(15))}${1 + random(9)}${random(10)}`,
      `1.${'0'.repeat(random(9))}${random(10)}`,
    ];
    return forms[random(3) === 0 ? random(3) : 0]!;
  };
  const differences: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const kind = random(3);
    const [a, b] = [number(), number()];
    const x = kind === 1 ? `${random(2) ? '-' : ''}${(Number(a) % 60).toFixed(random(8))}` : a;
    const sql =
      kind === 0
        ? 'SELECT ln($1::numeric)::text AS v'
        : kind === 1
          ? 'SELECT exp($1::numeric)::text AS v'
          : 'SELECT log($1::numeric, $2::numeric)::text AS v';
    const expected = await session
      .postgres()
      .query(sql, kind === 2 ? [a, b] : [x])
      .then(
        (r) => String(r.rows[0].v),
        (err: Error) => `error ${err.message}`,
      );
    let actual: string;
    try {
      actual = kind === 0 ? numericLn(x) : kind === 1 ? numericExp(x) : numericLog(a, b);
    } catch (err) {
      actual = `error ${(err as { description?: string }).description}`;
    }
    if (/more than 38 digits is not supported/.test(actual)) continue;
    if (actual !== expected) differences.push(`${sql} ${kind === 2 ? `${a}, ${b}` : x}: ${actual}, PostgreSQL ${expected}`);
  }
  assert.deepEqual(differences, []);
});

test('two thousand pseudo-random powers: the digits PostgreSQL computes', async () => {
  const random = randomFrom(31);
  const number = (width: number) =>
    `${random(4) === 0 ? '-' : ''}${Array.from({ length: random(width) }, () => random(10)).join('') || '0'}${random(2) ? `.${Array.from({ length: 1 + random(5) }, () => random(10)).join('')}` : ''}`;
  const differences: string[] = [];
  for (let i = 0; i < 2000; i++) {
    const [a, b] = [number(4), number(3)];
    const expected = await session
      .postgres()
      .query('SELECT power($1::numeric, $2::numeric)::text AS v', [a, b])
      .then(
        (r) => String(r.rows[0].v),
        (err: Error) => `error ${err.message}`,
      );
    let actual: string;
    try {
      actual = numericPower(a, b);
    } catch (err) {
      actual = `error ${(err as { description?: string }).description}`;
    }
    if (/more than 38 digits is not supported/.test(actual)) continue;
    if (actual !== expected) differences.push(`power(${a}, ${b}): ${actual}, PostgreSQL ${expected}`);
  }
  assert.deepEqual(differences, []);
});

test('what PostgreSQL fails fails; more than 38 digits and uses outside the select list are refused', async () => {
  for (const sql of [
    'SELECT ln(0.0)',
    'SELECT ln(-1.5)',
    'SELECT log(1.0, 5.0)',
    'SELECT log(0.0, 2.0)',
    'SELECT log(-10.0)',
    'SELECT power(-2.0, 0.5)',
    'SELECT 0.0 ^ -1.5',
  ]) {
    await assert.rejects(session.postgres().query(sql), sql);
    const answer = await session.vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.body}`);
  }
  for (const sql of [
    'SELECT exp(100.0)',
    'SELECT ln(x) FROM (VALUES (2.0)) v(x) WHERE ln(x) > 0',
    'SELECT sum(ln(x)) FROM (VALUES (2.0)) v(x)',
  ]) {
    await session.postgres().query(sql);
    const answer = await session.vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.body}`);
    assert.match(answer.body, /not supported/, sql);
  }
});
