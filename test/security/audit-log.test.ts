/** SYSLOG.AuditLog records sign-ins, their failures and changes, never secrets. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

test('logins, failures, user, key and preference changes are in SYSLOG.AuditLog', async () => {
  const login = (password: string) =>
    server.request('/api/login', { body: { username: 'admin', password }, headers: { authorization: '' } });
  await (await login(ADMIN_PASSWORD)).text();
  await (await login('wrong-one')).text();
  await (await server.request('/rest/api/status', { headers: { authorization: server.basic('admin', 'wrong-two') } })).text();
  await (await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.addUser('audited', 'audited-secret-pw')" } })).text();
  const key = (await (await server.request('/rest/api/keys', { body: { name: 'k' } })).json()) as { id: string };
  await (await server.request('/rest/api/preferences', { method: 'PUT', body: { rest: true } })).text();
  const response = await server.request('/rest/api/query?array=false', {
    body: { sql: 'SELECT "UserName", "Action", "Target", "Outcome", "Address" FROM SYSLOG.AuditLog ORDER BY "ID"' },
  });
  const rows = (await response.json()) as Array<Record<string, string | null>>;
  const has = (action: string, outcome: string, target: string | null = null) =>
    rows.some((r) => r.Action === action && r.Outcome === outcome && (target === null || r.Target === target));
  assert.ok(has('login', 'ok'), JSON.stringify(rows));
  assert.equal(rows.filter((r) => r.Action === 'sign-in' && r.Outcome === 'failed').length, 2);
  assert.ok(has('SYSADMIN.addUser', 'ok', 'audited'));
  assert.ok(has('create API key', 'ok', key.id));
  assert.ok(has('switch REST on', 'ok'));
  assert.ok(rows.some((r) => r.Address === '127.0.0.1'));
  const all = JSON.stringify(rows);
  assert.doesNotMatch(all, /audited-secret-pw|wrong-one|wrong-two/);
});

test('the logs show a user their own entries; administrators see everything', async () => {
  await server.services.users.addPasswordUser('viewer', 'viewer-password');
  const as = (auth: string, sql: string) => server.request('/rest/api/query', { body: { sql }, headers: { authorization: auth } });
  const viewer = server.basic('viewer', 'viewer-password');
  await (await as(viewer, "SELECT 'viewer was here'")).text();
  await (await as(server.basic(), "SELECT 'admin was here'")).text();
  const own = (await (await as(viewer, 'SELECT DISTINCT "UserName" FROM SYSLOG.QueryLog')).json()) as string[][];
  assert.deepEqual(own, [['viewer']]);
  const audit = (await (await as(viewer, 'SELECT DISTINCT "UserName" FROM SYSLOG.AuditLog')).json()) as string[][];
  assert.ok(audit.every(([name]) => name === 'viewer'));
  const all = (await (await as(server.basic(), 'SELECT DISTINCT "UserName" FROM SYSLOG.QueryLog ORDER BY 1')).json()) as string[][];
  assert.deepEqual(all, [['admin'], ['viewer']]);
});
