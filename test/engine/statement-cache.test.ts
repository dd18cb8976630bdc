/**
 * Statements learned once: the result columns of a whole statement at PostgreSQL are described
 * once per shape (constants' values aside), and a change to the catalog is seen by the next
 * request.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { BoundedCache, shapeOf } from '../../src/engine/exec/statement-cache.js';
import type { WholeStatementConnector } from '../../src/connectors/types.js';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let postgres: pg.Client;
let describes = 0;

before(async () => {
  await initParser();
  server = await startTestServer();
  postgres = await pgClient();
  await postgres.query('DROP TABLE IF EXISTS cache_items');
  await postgres.query("CREATE TABLE cache_items AS SELECT g AS id, 'item ' || g AS name FROM generate_series(1, 100) g");
  const added = await server.request('/rest/api/source', {
    body: {
      name: 'pgc',
      template: 'postgresql',
      translator: 'postgresql',
      connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
    },
  });
  assert.equal(added.status, 201, await added.text());
  // Counts the questions to PostgreSQL about a statement's columns.
  const connector = server.services.registry.connectorOf(server.services.registry.findSource('pgc')!) as WholeStatementConnector;
  const original = connector.describeStatement.bind(connector);
  connector.describeStatement = (sql: string) => {
    describes++;
    return original(sql);
  };
});
after(async () => {
  await postgres?.query('DROP TABLE IF EXISTS cache_items');
  await postgres?.end();
  await server?.close();
});

const rows = async (sql: string) => {
  const response = await server.request('/rest/api/query', { body: { sql } });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text) as unknown[][];
};

test('constants of another value share a shape; another kind of constant does not', () => {
  const shape = (sql: string) => shapeOf(parseStatement(sql));
  assert.equal(shape('SELECT * FROM t WHERE id = 1'), shape('SELECT  *  FROM t WHERE id = 42'));
  assert.notEqual(shape('SELECT * FROM t WHERE id = 1'), shape("SELECT * FROM t WHERE id = '1'"));
  assert.notEqual(shape('SELECT * FROM t WHERE id = 1'), shape('SELECT * FROM t WHERE id = 1.5'));
  assert.notEqual(shape('SELECT a FROM t'), shape('SELECT b FROM t'));
});

test('the bounded cache drops the least recently used entry', () => {
  const cache = new BoundedCache<number>(2);
  cache.set('a', 1);
  cache.set('b', 2);
  assert.equal(cache.get('a'), 1);
  cache.set('c', 3);
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.size, 2);
});

test('point lookups of one shape ask PostgreSQL for the columns once', async () => {
  const before = describes;
  for (const id of [1, 2, 3, 50, 99])
    assert.deepEqual(await rows(`SELECT id, name FROM pgc.cache_items WHERE id = ${id}`), [[id, `item ${id}`]]);
  assert.equal(describes - before, 1);
  assert.deepEqual(await rows("SELECT id FROM pgc.cache_items WHERE name = 'item 7'"), [[7]]);
  assert.equal(describes - before, 2, 'another shape is described');
});

test('a change to the catalog is seen by the next request: a refreshed source is described again', async () => {
  await rows('SELECT * FROM pgc.cache_items WHERE id = 1');
  await postgres.query('ALTER TABLE cache_items ADD COLUMN price int DEFAULT 5');
  const refreshed = await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.refreshDataSource('pgc')" } });
  assert.equal(refreshed.status, 200, await refreshed.text());
  const before = describes;
  const response = await server.request('/rest/api/query?array=false', { body: { sql: 'SELECT * FROM pgc.cache_items WHERE id = 2' } });
  assert.deepEqual(await response.json(), [{ id: 2, name: 'item 2', price: 5 }]);
  assert.equal(describes - before, 1);
});

test('cached statements never outlive a permission: a row condition and a revoked grant are seen by the next request', async () => {
  const admin = async (sql: string) => {
    const response = await server.request('/rest/api/query', { body: { sql } });
    assert.ok(response.status < 300, `${sql}: ${await response.text()}`);
  };
  await admin("CALL SYSADMIN.addRole('cachers')");
  await admin("CALL SYSADMIN.setPermissions('cachers', 'pgc.cache_items', 'R')");
  await admin("CALL SYSADMIN.addUser('carla', 'carla-password-1')");
  await admin("CALL SYSADMIN.addUserRole('cachers', 'carla')");
  const asCarla = (sql: string) =>
    server.request('/rest/api/query', { body: { sql }, headers: { authorization: server.basic('carla', 'carla-password-1') } });
  const count = async () => {
    const response = await asCarla('SELECT count(*) FROM pgc.cache_items WHERE id > 0');
    return { status: response.status, body: await response.text() };
  };
  assert.deepEqual(await count(), { status: 200, body: '[[100]]' });
  assert.deepEqual(await count(), { status: 200, body: '[[100]]' }, 'the same statement again, from the cache');

  await admin("CALL SYSADMIN.setPermissions('cachers', 'pgc.cache_items', 'R', 'id <= 10')");
  assert.deepEqual(await count(), { status: 200, body: '[[10]]' }, 'the new row condition applies at once');

  await admin("CALL SYSADMIN.setPermissions('cachers', 'pgc.cache_items', NULL)");
  assert.equal((await count()).status, 403, 'the revoked grant applies at once');
  // The administrator's own cached statement of the same text still answers for the administrator.
  assert.deepEqual(await rows('SELECT count(*) FROM pgc.cache_items WHERE id > 0'), [[100]]);
});

test("a paginated result is not served once its owner's grants change", async () => {
  const admin = async (sql: string) => {
    const response = await server.request('/rest/api/query', { body: { sql } });
    assert.ok(response.status < 300, `${sql}: ${await response.text()}`);
  };
  await admin("CALL SYSADMIN.addRole('pagers')");
  await admin("CALL SYSADMIN.setPermissions('pagers', 'pgc.cache_items', 'R')");
  await admin("CALL SYSADMIN.addUser('paula', 'paula-password-1')");
  await admin("CALL SYSADMIN.addUserRole('pagers', 'paula')");
  const auth = { authorization: server.basic('paula', 'paula-password-1') };
  const first = await server.request('/rest/api/query?pagination=true&limit=10', {
    body: { sql: 'SELECT id FROM pgc.cache_items ORDER BY id' },
    headers: auth,
  });
  assert.equal(first.status, 200, await first.clone().text());
  const requestId = first.headers.get('requestId')!;
  const page = (offset: number) =>
    server.request(`/rest/api/query?requestId=${requestId}&limit=10&offset=${offset}`, { method: 'POST', headers: auth });
  assert.equal((await page(10)).status, 200, 'paging while the grant holds');

  await admin("CALL SYSADMIN.setPermissions('pagers', 'pgc.cache_items', 'R', 'id <= 5')");
  const after = await page(20);
  assert.equal(after.status, 404);
  assert.match(((await after.json()) as { description: string }).description, /permissions that have changed/);
  assert.equal((await page(30)).status, 404, 'and it is gone for good');
});
