/**
 * How a request asks for fresher data than a copy's own bound (docs/copies.md#reading-copies):
 * REST's `maxStaleness` parameter and pgwire's `SET vdb.max_staleness`, over the demo's SQLite
 * `shop` source, as the README shows them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startWireServer, type WireServer } from '../pgwire/helpers.js';

let wire: WireServer;

const query = async (sql: string, params = '') => {
  const response = await wire.server.request(`/rest/api/query${params}`, { body: { sql } });
  return { status: response.status, body: (await response.json()) as unknown };
};
const readsCopy = async (params = '') =>
  JSON.stringify((await query('EXPLAIN SELECT count(*) FROM shop.orders', params)).body).includes('local copy');

before(async () => {
  wire = await startWireServer({ demo: true });
  const defined = await query("CALL SYSADMIN.accelerateTable('shop.orders', 'full', '10 min')");
  assert.equal(defined.status, 200, JSON.stringify(defined.body));
  const refreshed = await query("CALL SYSADMIN.refreshCopy('shop.orders')");
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  const [[name, mode, state, rows]] = refreshed.body as [[string, string, string, number]];
  assert.deepEqual([name, mode, state, rows], ['shop.orders', 'full', 'ready', 2000]);
});

after(async () => wire.close());

test('REST: a copy is read by default; maxStaleness=0 reads live, a bound older than the copy too', async () => {
  assert.ok(await readsCopy());
  assert.ok(!(await readsCopy('?maxStaleness=0')), 'maxStaleness=0: live');
  assert.ok(await readsCopy('?maxStaleness=3600'));
  await new Promise((resolve) => setTimeout(resolve, 1100));
  assert.ok(!(await readsCopy('?maxStaleness=1')), 'older than the request allows');
  assert.deepEqual((await query('SELECT count(*) FROM shop.orders', '?maxStaleness=0')).body, [[2000]]);
  assert.deepEqual((await query('SELECT count(*) FROM shop.orders')).body, [[2000]]);
  const bad = await query('SELECT 1', '?maxStaleness=-1');
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.body), /maxStaleness/);
});

test('pgwire: SET vdb.max_staleness asks the same for the session; a bad value is refused', async () => {
  const client = await wire.client();
  const plan = async () =>
    (await client.query('EXPLAIN SELECT count(*) FROM shop.orders')).rows.some((r: Record<string, unknown>) =>
      JSON.stringify(r).includes('local copy'),
    );
  assert.ok(await plan());
  await client.query('SET vdb.max_staleness = 0');
  assert.ok(!(await plan()), 'live');
  await client.query("SET vdb.max_staleness = '1h'");
  assert.ok(await plan());
  assert.equal((await client.query('SHOW vdb.max_staleness')).rows[0]?.['vdb.max_staleness'], '1h');
  await assert.rejects(client.query("SET vdb.max_staleness = 'soon'"), (err: Error & { code?: string }) => err.code === '0A000');
  await client.query('RESET vdb.max_staleness');
  assert.ok(await plan());
});

test('SYS.CopyRecommendations ranks the tables statements read live, for administrators only', async () => {
  for (let i = 0; i < 3; i++) assert.equal((await query('SELECT count(*) FROM shop.customers')).status, 200);
  assert.equal(
    (await query('SELECT count(*) FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id', '?maxStaleness=0')).status,
    200,
  );
  const { body } = await query(
    'SELECT "TableName", "SchemaName", "Statements", "HasCopy", "Suggestion", "Rank" FROM SYS.CopyRecommendations ORDER BY "Rank"',
  );
  const rows = body as Array<[string, string, number, boolean, string, number]>;
  const customers = rows.find((r) => r[0] === 'customers');
  assert.ok(customers, JSON.stringify(rows));
  assert.ok(customers[2] >= 4, 'every statement that read it live');
  assert.equal(customers[3], false);
  assert.match(customers[4], /accelerateTable\('shop\.customers'/);
  const orders = rows.find((r) => r[0] === 'orders');
  assert.ok(orders && orders[3] === true, 'read live once (maxStaleness=0), its copy kept');
  assert.deepEqual(
    rows.map((r) => r[5]),
    rows.map((_, i) => i + 1),
  );
  await query("CALL SYSADMIN.addUser('recoreader', 'reco-reader-pw-1')");
  await query("CALL SYSADMIN.setPermissions('recoreader', 'shop', 'R')").catch(() => undefined);
  const other = await wire.server.request('/rest/api/query', {
    body: { sql: 'SELECT count(*) FROM SYS.CopyRecommendations' },
    headers: { authorization: wire.server.basic('recoreader', 'reco-reader-pw-1') },
  });
  assert.deepEqual(await other.json(), [[0]], 'other users see none of it');
});
