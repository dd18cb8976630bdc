/**
 * Statement forms PostgreSQL answers that vdb's engine cannot answer the same way: each is
 * refused with a 400 naming what is not supported, never answered otherwise. PostgreSQL's own
 * answer is asked first, so that each form is one PostgreSQL answers. (Forms the engine answers
 * are in the oracle's corpus, postgres-corpus.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let postgres: pg.Client;

before(async () => {
  server = await startTestServer();
  postgres = await pgClient();
});
after(async () => {
  await postgres?.end();
  await server?.close();
});

const REFUSED: ReadonlyArray<readonly [string, RegExp]> = [
  ['SELECT FROM (VALUES (1), (2)) v(x)', /select list without columns/],
  ['SELECT UNION SELECT', /select list without columns/],
  // name and money are answered (typed-casts.test.ts, the oracle's corpus) but for money sorted or in other functions.
  ["SELECT coalesce(x::money, '0'::money) FROM (VALUES (1.00)) v(x)", /money in this place is not supported/],
  ['SELECT x::money * 2 FROM (VALUES (1.00), (2.00)) v(x) ORDER BY 1', /money in this place is not supported/],
  [
    'SELECT (SELECT max((SELECT i.x FROM (VALUES (1, 10), (2, 20)) i(k, x) WHERE i.k = o.k))) FROM (VALUES (1, 10), (2, 20)) o(k, x)',
    /aggregate max\(\) inside a subquery over an outer query's columns/,
  ],
];

test('forms PostgreSQL answers and the engine cannot: a 400 naming what is not supported', async () => {
  for (const [sql, why] of REFUSED) {
    await postgres.query(sql);
    const response = await server.request('/rest/api/query', { body: { sql } });
    const body = (await response.json()) as { title?: string; description?: string; hint?: string };
    assert.equal(response.status, 400, `${sql}: ${JSON.stringify(body)}`);
    assert.match(body.description ?? '', why, sql);
    assert.match(body.description ?? '', /not (supported|available)/, sql);
  }
});

test('an aggregate of an outer query evaluated per outer row before: now one row, or the refusal', async () => {
  const sql = 'SELECT (SELECT max(o.x)) AS m FROM (VALUES (1), (2)) o(x)';
  assert.equal((await postgres.query(sql)).rows.length, 1);
  const response = await server.request('/rest/api/query', { body: { sql } });
  assert.equal(response.status, 200);
  assert.equal(await response.text(), '[[2]]');
});
