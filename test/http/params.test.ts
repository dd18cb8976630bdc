/**
 * Statement parameters ({"sql": "... $1 ...", "params": [...]}): values of every JSON kind, on
 * the engine and whole at PostgreSQL, counts that disagree, placeholders where no value may
 * stand, and values that look like SQL staying values.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, okJson } from './util.js';

let server: TestServer;
let postgres: pg.Client;

before(async () => {
  server = await startTestServer();
  postgres = await pgClient();
  await postgres.query('DROP TABLE IF EXISTS params_items');
  await postgres.query('CREATE TABLE params_items (id bigint PRIMARY KEY, name text, price numeric(10,2), active boolean, since date)');
  await postgres.query(
    "INSERT INTO params_items VALUES (1, 'one', 1.50, true, '2024-01-02'), (9007199254740993, 'big', 2.00, false, NULL), (3, 'O''Reilly', NULL, NULL, '2024-03-04')",
  );
  const added = await server.request('/rest/api/source', {
    body: {
      name: 'pgp',
      template: 'postgresql',
      translator: 'postgresql',
      connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
    },
  });
  assert.equal(added.status, 201, await added.text());
});
after(async () => {
  await postgres?.query('DROP TABLE IF EXISTS params_items');
  await postgres?.end();
  await server?.close();
});

const query = (sql: string, params?: unknown) =>
  server.request('/rest/api/query', { body: params === undefined ? { sql } : { sql, params } });

test('values of every JSON kind, computed by the engine', async () => {
  const rows = await okJson(
    await query('SELECT $1::text, $2 + 1, $3::numeric(5,2), $4 AND true, $5::int IS NULL, $6::date + 1', [
      'a',
      41,
      1.25,
      true,
      null,
      '2024-02-28',
    ]),
  );
  assert.deepEqual(rows, [['a', 42, 1.25, true, true, '2024-02-29']]);
});

test('values at PostgreSQL: a key beyond 2^53 as a string, text with quotes, booleans, dates', async () => {
  assert.deepEqual(await okJson(await query('SELECT name FROM pgp.params_items WHERE id = $1', ['9007199254740993'])), [['big']]);
  assert.deepEqual(await okJson(await query('SELECT id FROM pgp.params_items WHERE name = $1', ["O'Reilly"])), [[3]]);
  assert.deepEqual(
    await okJson(await query('SELECT id FROM pgp.params_items WHERE active = $1 AND since < $2 ORDER BY id', [true, '2024-02-01'])),
    [[1]],
  );
  assert.deepEqual(await okJson(await query('SELECT count(*) FROM pgp.params_items WHERE price > $1', [1])), [[2]]);
});

test('the same statement with other values: no string building, each value stays a value', async () => {
  for (const [id, name] of [
    [1, 'one'],
    [3, "O'Reilly"],
  ] as const) {
    assert.deepEqual(await okJson(await query('SELECT name FROM pgp.params_items WHERE id = $1', [id])), [[name]]);
  }
  const injection = "1' OR '1'='1";
  assert.deepEqual(await okJson(await query('SELECT count(*) FROM pgp.params_items WHERE name = $1', [injection])), [[0]]);
  const dropping = '1; DROP TABLE params_items';
  assert.deepEqual(await okJson(await query('SELECT $1::text', [dropping])), [[dropping]]);
  assert.equal((await postgres.query('SELECT count(*)::int AS n FROM params_items')).rows[0].n, 3);
});

test('placeholders inside string literals and comments are text, not parameters', async () => {
  assert.deepEqual(await okJson(await query("SELECT '$1', $1::text /* $2 */", ['x'])), [['$1', 'x']]);
});

test('counts that disagree, and no params at all, are 400 naming the parameter', async () => {
  const missing = await assertApiError(await query('SELECT $1, $2', [1]), 400, 'one value for two');
  assert.match(missing.description, /\$2/);
  const extra = await assertApiError(await query('SELECT $1', [1, 2]), 400, 'two values for one');
  assert.match(extra.description, /"params" has 2 values/);
  const none = await assertApiError(await query('SELECT $1 + 1'), 400, 'no params');
  assert.match(none.description, /\$1/);
  assert.match(none.hint ?? '', /params/);
  const unused = await assertApiError(await query('SELECT 1', ['a']), 400, 'params without placeholders');
  assert.match(unused.description, /no parameter/);
});

test('a parameter where a name belongs is a syntax error, and values of other kinds are refused', async () => {
  await assertApiError(await query('SELECT * FROM $1', ['pgp.params_items']), 400, 'a table name');
  // The body is an object all the same: the answer names "params", not the body.
  for (const [params, what] of [
    [[{ a: 1 }], 'an object'],
    [[[1, 2]], 'an array'],
    ['x', 'params not a list'],
  ] as const) {
    const error = await assertApiError(await query('SELECT $1', params), 400, what);
    assert.equal(error.title, 'Bad request', what);
    assert.match(error.description, /^"params" must be a list/, what);
  }
});
