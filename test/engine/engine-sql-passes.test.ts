/**
 * The engine's SQL written pass by pass (translate/engine-dialect.ts `engineSqlPasses`), as long
 * statements write it with a turn of the event loop between the passes: the same text as in one
 * go, also with probed types (translate/probed-types.ts) and with other statements written in
 * between.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { engineSql, engineSqlPasses } from '../../src/engine/translate/engine-dialect.js';
import { typedSql } from '../../src/engine/translate/probed-types.js';

let instance: DuckDBInstance;
let connection: DuckDBConnection;
before(async () => {
  await initParser();
  instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  connection = await instance.connect();
  await connection.run('CREATE TABLE t (i INTEGER, b BIGINT, d DATE, s VARCHAR)');
});
after(() => {
  connection?.closeSync();
  instance?.closeSync();
});

const STATEMENTS = [
  'SELECT 1',
  'SELECT sum(i), sum(b) FROM t',
  'SELECT d - d AS days, sum(i) FILTER (WHERE i > 0) FROM t GROUP BY d',
  "SELECT s FROM t WHERE s LIKE 'a%' AND i / 2 > 1 AND s ~ 'x'",
  'SELECT substr(s, 0, 3), repeat(s, 2) || s, round(b / 3.0, 2) FROM t WHERE COALESCE(i, 0) IN (1, 2, 3)',
  `SELECT 1 WHERE 1 IN (${Array.from({ length: 3000 }, (_, i) => i).join(',')})`,
  `SELECT 1 WHERE ${Array(500).fill('1=1').join(' AND ')}`,
];

/** A turn of the event loop, counted. */
function counter(): { turn: () => Promise<void>; turns: number } {
  const counted = { turns: 0, turn: () => new Promise<void>((resolve) => setImmediate(resolve)).then(() => void counted.turns++) };
  return counted;
}

test('the passes write the same text as engineSql, with a pause between each two', () => {
  for (const sql of STATEMENTS) {
    const passes = engineSqlPasses(parseStatement(sql));
    let pauses = 0;
    let pass = passes.next();
    for (; !pass.done; pass = passes.next()) pauses++;
    assert.equal(pass.value, engineSql(parseStatement(sql)), sql);
    assert.equal(pauses, 3, sql);
  }
});

test('typed SQL written in turns is the same as written at once, probes included', async () => {
  for (const sql of STATEMENTS) {
    const tree = parseStatement(sql);
    const atOnce = await typedSql(connection, () => engineSql(tree));
    const turns = counter();
    const inTurns = await typedSql(connection, () => engineSqlPasses(tree), { turn: turns.turn });
    assert.equal(inTurns, atOnce, sql);
    assert.ok(turns.turns >= 3, `${sql}: ${turns.turns} turns`);
  }
  // sum(int4) is bigint and sum(int8) numeric in PostgreSQL: learned by a probe, then written as casts.
  const typed = await typedSql(connection, () => engineSqlPasses(parseStatement('SELECT sum(i), sum(b) FROM t')), { turn: counter().turn });
  assert.match(typed, /::int8/i);
  assert.match(typed, /decimal\(38, 0\)/i);
});

test('statements written in turns at the same time each get their own text', async () => {
  const expected = await Promise.all(STATEMENTS.map((sql) => typedSql(connection, () => engineSql(parseStatement(sql)))));
  const together = await Promise.all(
    [...STATEMENTS, ...STATEMENTS].map((sql) => typedSql(connection, () => engineSqlPasses(parseStatement(sql)), { turn: counter().turn })),
  );
  assert.deepEqual(together, [...expected, ...expected]);
});
