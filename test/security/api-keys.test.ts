/** API keys: created once-shown, listed without secrets, revoked, expiring, read-only. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const create = async (body: unknown, headers: Record<string, string> = {}) => {
  const response = await server.request('/rest/api/keys', { body, headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

test('a key is shown once, works as Bearer, is listed without its secret and can be revoked', async () => {
  const created = await create({ name: 'reporting app' });
  assert.equal(created.status, 201);
  const key = String(created.body.key);
  assert.match(key, /^vdb_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
  const status = await server.request('/rest/api/status', { headers: bearer(key) });
  assert.equal(status.status, 200);
  const rows = await server.request('/rest/api/query', { body: { sql: 'SELECT count(*) FROM shop.customers' }, headers: bearer(key) });
  assert.deepEqual(await rows.json(), [[200]]);
  const list = (await (await server.request('/rest/api/keys')).json()) as Array<Record<string, unknown>>;
  const listed = list.find((k) => k.id === created.body.id)!;
  assert.equal(listed.name, 'reporting app');
  assert.equal(listed.key, undefined);
  assert.equal(listed.hash, undefined);
  // The secret is all after the id (base64url, which may itself hold '_').
  const secret = key.slice('vdb_'.length + 16 + 1);
  assert.equal(secret.length, 43);
  assert.ok(!JSON.stringify(server.services.store.current).includes(secret), 'the secret is not stored');
  const revoked = await server.request(`/rest/api/keys/${String(created.body.id)}`, { method: 'DELETE' });
  assert.equal(revoked.status, 204);
  assert.equal((await server.request('/rest/api/status', { headers: bearer(key) })).status, 401);
  assert.equal((await server.request(`/rest/api/keys/${String(created.body.id)}`, { method: 'DELETE' })).status, 404);
});

test('forged, expired and unknown keys are refused with the 401 page', async () => {
  const { body } = await create({ name: 'short-lived', expiresAt: new Date(Date.now() + 1500).toISOString() });
  const key = String(body.key);
  const forged = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
  const page = await server.request('/rest/api/status', { headers: bearer(forged) });
  assert.equal(page.status, 401);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.equal((await server.request('/rest/api/status', { headers: bearer('vdb_0000000000000000_' + 'x'.repeat(43)) })).status, 401);
  assert.equal((await server.request('/rest/api/status', { headers: bearer(key) })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 1600));
  assert.equal((await server.request('/rest/api/status', { headers: bearer(key) })).status, 401, 'expired');
  assert.equal((await create({ name: 'past', expiresAt: '2001-01-01T00:00:00Z' })).status, 400);
  assert.equal((await create({ name: 'bad', readOnly: 'yes' })).status, 400);
});

test('a read-only key reads but does not write, call procedures or make keys', async () => {
  const { body } = await create({ name: 'reader', readOnly: true });
  const key = String(body.key);
  const read = await server.request('/rest/api/query', { body: { sql: 'SELECT 1' }, headers: bearer(key) });
  assert.deepEqual(await read.json(), [[1]]);
  for (const sql of ['DELETE FROM shop.orders WHERE id = 1', "CALL SYSADMIN.refreshDataSource('shop')"]) {
    const response = await server.request('/rest/api/query', { body: { sql }, headers: bearer(key) });
    assert.equal(response.status, 403, sql);
    await response.text();
  }
  assert.equal((await server.request('/rest/api/preferences', { method: 'PUT', body: { rest: true }, headers: bearer(key) })).status, 403);
  assert.equal((await create({ name: 'child' }, bearer(key))).status, 403);
  const writer = String((await create({ name: 'writer' })).body.key);
  assert.equal((await create({ name: 'child' }, bearer(writer))).status, 403, 'no key makes keys');
  // Nor revokes keys, nor takes over its owner's account.
  assert.equal((await server.request(`/rest/api/keys/${String(body.id)}`, { method: 'DELETE', headers: bearer(writer) })).status, 403);
  for (const sql of ["CALL SYSADMIN.changeUserPwd('admin', 'taken-over-pw')", "CALL SYSADMIN.revokeTokens('admin')"]) {
    const response = await server.request('/rest/api/query', { body: { sql }, headers: bearer(writer) });
    assert.equal(response.status, 403, sql);
    await response.text();
  }
  assert.equal((await create({ name: 'odd date', expiresAt: 'December 31, 2099' })).status, 400);
});

test('removing the user removes their keys', async () => {
  await server.services.users.addPasswordUser('keyholder', 'keyholder-pw');
  const { body } = await create({ name: 'k' }, { authorization: server.basic('keyholder', 'keyholder-pw') });
  const key = String(body.key);
  assert.equal((await server.request('/rest/api/status', { headers: bearer(key) })).status, 200);
  const removed = await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.removeUser('keyholder')" } });
  assert.equal(removed.status, 200);
  assert.equal((await server.request('/rest/api/status', { headers: bearer(key) })).status, 401);
  assert.ok(!(server.services.store.current.apiKeys ?? []).some((k) => k.owner === 'keyholder'));
});
