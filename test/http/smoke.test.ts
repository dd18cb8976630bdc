import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

test('a join of a SQLite table with a CSV file returns rows', async () => {
  const response = await server.request('/rest/api/query', {
    body: { sql: 'SELECT c.id, r.region FROM shop.customers c JOIN files.regions r ON r.country_code = c.country ORDER BY c.id LIMIT 2' },
  });
  assert.equal(response.status, 200);
  const rows = (await response.json()) as unknown[][];
  assert.equal(rows.length, 2);
  assert.equal(rows[0]?.length, 2);
});
