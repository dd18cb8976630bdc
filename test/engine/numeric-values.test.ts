/**
 * PostgreSQL's numeric with a scale per value (engine/exec/numeric-values.ts): the text of each
 * value, its type on every way a result leaves vdb (a stream, a paginated cursor, object rows),
 * and what stays refused (a column the statement sorts by, a value beyond 38 digits).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

const query = (sql: string, params = '') => server.request(`/rest/api/query${params}`, { body: { sql } });

test('each value keeps the scale PostgreSQL gives it, written as its text, typed NUMERIC', async () => {
  const response = await query('SELECT x, x / 3 AS q FROM (VALUES (1.50), (99.99), (0.00)) v(x)');
  assert.equal(response.status, 200);
  assert.equal(await response.text(), '[[1.50,0.50000000000000000000],[99.99,33.3300000000000000],[0.00,0.00000000000000000000]]');
  assert.deepEqual(JSON.parse(response.headers.get('SQL-Column-Types') ?? ''), ['DECIMAL(4,2)', 'NUMERIC']);
});

test('object rows and a paginated result write the same text', async () => {
  const objects = await query('SELECT avg(x) AS a FROM (VALUES (1), (2)) v(x)', '?array=false');
  assert.equal(await objects.text(), '[{"a":1.5000000000000000}]');
  const first = await query('SELECT x, x / 4.0 AS q FROM (VALUES (1), (2), (3)) v(x) ORDER BY x', '?pagination=true&limit=2');
  assert.equal(first.status, 200);
  assert.equal(await first.text(), '[[1,0.25000000000000000000],[2,0.50000000000000000000]]');
  assert.deepEqual(JSON.parse(first.headers.get('SQL-Column-Types') ?? ''), ['INTEGER', 'NUMERIC']);
  const second = await server.request(`/rest/api/query?requestId=${first.headers.get('requestId')}&limit=2&offset=2`, { method: 'POST' });
  assert.equal(await second.text(), '[[3,0.75000000000000000000]]');
});

test('a column the statement sorts by is refused as before (its order would be the text order)', async () => {
  const response = await query('SELECT x / 4.0 AS q FROM (VALUES (1), (2)) v(x) ORDER BY q');
  assert.equal(response.status, 400);
  assert.match(await response.text(), /not supported/);
});

test('a numeric whose scale per value is not known (DECIMAL(38,10), as a numeric column without scale arrives) stays refused', async () => {
  const response = await query('SELECT x / 3 FROM (VALUES (1.5::numeric(38,10))) v(x)');
  assert.equal(response.status, 400);
  assert.match(await response.text(), /not supported/);
});

test('a value beyond the 38 digits the engine holds is a 400 that says so, never a rounded answer', async () => {
  // PostgreSQL: 0.70710678118654752440 (a square root at scale 20 needs 40 digits here).
  const response = await query('SELECT stddev(x) FROM (VALUES (5), (6)) v(x)');
  assert.equal(response.status, 400);
  assert.match(await response.text(), /more than 38 digits is not supported/);
});

test('to_json and json_agg are written as PostgreSQL spaces and spells them', async () => {
  const response = await query("SELECT to_json(1.50) AS a, json_agg(x ORDER BY x) AS b FROM (VALUES ('b'), (NULL), ('a')) v(x)");
  assert.equal(await response.text(), '[[1.50,["a", "b", null]]]');
  assert.deepEqual(JSON.parse(response.headers.get('SQL-Column-Types') ?? ''), ['JSON', 'JSON']);
});
