/**
 * A select list of constants (SELECT 1) is answered without the engine, and answers exactly as
 * the engine did: values, names, types, windows, pagination and the query log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let acquired = 0;

before(async () => {
  server = await startTestServer();
  const engine = server.services.runtime.current;
  const acquire = engine.acquire.bind(engine);
  engine.acquire = () => {
    acquired++;
    return acquire();
  };
});
after(async () => {
  await server?.close();
});

const answer = async (sql: string, query = '') => {
  const response = await server.request(`/rest/api/query${query}`, { body: { sql } });
  return { status: response.status, types: response.headers.get('sql-column-types'), body: await response.text() };
};

test("the answers are the engine's own: values, names, types, windows", async () => {
  const before = acquired;
  assert.deepEqual(await answer('SELECT 1'), { status: 200, types: '["INTEGER"]', body: '[[1]]' });
  assert.deepEqual(await answer("SELECT 'a' AS s, true, NULL, 0, -5, ''"), {
    status: 200,
    types: '["VARCHAR","BOOLEAN","INTEGER","INTEGER","INTEGER","VARCHAR"]',
    body: '[["a",true,null,0,-5,""]]',
  });
  assert.equal((await answer("SELECT 'a' AS s, true, NULL", '?array=false')).body, '[{"s":"a","?column?":true,"?column?":null}]');
  assert.equal((await answer('SELECT 1', '?headers=true')).body, '[["?column?"],[1]]');
  assert.equal((await answer('SELECT 1', '?limit=0')).body, '[]');
  assert.equal((await answer('SELECT 1', '?offset=1')).body, '[]');
  assert.equal(acquired - before, 0, 'no engine connection');
});

test('a paginated constant is a cursor like any other; anything more than constants goes to the engine', async () => {
  assert.equal((await answer("SELECT 'x''y', false", '?pagination=true&limit=5')).body, '[["x\'y",false]]');
  const before = acquired;
  assert.equal((await answer('SELECT 1 + 1')).body, '[[2]]');
  assert.equal((await answer('SELECT 1.5')).body, '[[1.5]]');
  assert.equal((await answer('SELECT 1 WHERE false')).body, '[]');
  assert.ok(acquired - before >= 3, 'computed by the engine');
});

test('constant statements are logged as statements', async () => {
  await answer("SELECT 'logged constant'");
  const log = await answer("SELECT Status, RowCount FROM SYSLOG.QueryLog WHERE Statement = 'SELECT ''logged constant'''");
  assert.equal(log.body, '[["ok",1]]');
});
