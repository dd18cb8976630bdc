/** Invitations: an administrator invites, the invited person accepts once and signs in. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { InviteService } from '../../src/security/invites.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

const call = async (sql: string, authorization = server.basic()) => {
  const response = await server.request('/rest/api/query', { body: { sql }, headers: { authorization } });
  return { status: response.status, body: (await response.json()) as unknown[][] };
};
const accept = async (token: unknown, password: unknown) => {
  const response = await server.request('/api/invite/accept', { body: { token, password }, headers: { authorization: '' } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

test('an invitation becomes a password user once; the token is stored only hashed', async () => {
  const invited = await call("CALL SYSADMIN.inviteUser('ivan')");
  assert.equal(invited.status, 200);
  const [name, token, expiresAt] = invited.body[0] as [string, string, string];
  assert.equal(name, 'ivan');
  assert.ok(token.length >= 43, 'at least 256 bits');
  assert.ok(Date.parse(expiresAt) - Date.now() > 6 * 24 * 3600 * 1000, 'valid for 7 days');
  assert.ok(!JSON.stringify(server.services.store.current).includes(token));
  assert.deepEqual(await accept(token, 'ivan-password'), { status: 201, body: { username: 'ivan' } });
  const login = await server.request('/api/login', {
    body: { username: 'ivan', password: 'ivan-password' },
    headers: { authorization: '' },
  });
  assert.equal(login.status, 200);
  await login.text();
  // Accepted twice: refused, the password stays.
  const again = await accept(token, 'other-password');
  assert.equal(again.status, 400);
  assert.deepEqual(Object.keys(again.body).sort(), ['description', 'hint', 'title']);
});

test('unknown tokens, bad bodies, short passwords, existing names and non-admins are refused', async () => {
  assert.equal((await accept('no-such-token', 'a-password-1')).status, 400);
  assert.equal((await accept(42, 'a-password-1')).status, 400);
  const { body } = await call("CALL SYSADMIN.inviteUser('judy')");
  const token = (body[0] as string[])[1]!;
  assert.equal((await accept(token, 'x')).status, 400, 'password too short');
  assert.equal((await accept(token, 'judy-password')).status, 201, 'the token still works after a refused attempt');
  assert.equal((await call("CALL SYSADMIN.inviteUser('admin')")).status, 400);
  await server.services.users.addPasswordUser('plain', 'plain-password');
  assert.equal((await call("CALL SYSADMIN.inviteUser('kim')", server.basic('plain', 'plain-password'))).status, 403);
});

test('an expired invitation answers 410', async () => {
  let now = Date.now();
  const invites = new InviteService(server.services.store, server.services.users, 1000, () => now);
  const { token } = await invites.invite('late');
  now += 2000;
  await assert.rejects(invites.accept(token, 'late-password'), (err: { status: number }) => err.status === 410);
  assert.equal(server.services.users.find('late'), undefined);
});
