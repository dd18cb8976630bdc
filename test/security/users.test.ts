/** User administration through the SYSADMIN procedures, over HTTP as a client would. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

async function sql(statement: string, auth = server.basic()) {
  const response = await server.request('/rest/api/query', { body: { sql: statement }, headers: { authorization: auth } });
  return { status: response.status, body: (await response.json()) as unknown };
}

async function login(username: string, password: string) {
  const response = await server.request('/api/login', { body: { username, password }, headers: { authorization: '' } });
  return { status: response.status, body: (await response.json()) as { token?: string; description?: string } };
}

const withToken = (token: string) => server.request('/rest/api/status', { headers: { authorization: '', 'x-auth-token': token } });

test('an administrator adds a user, who can then sign in; names are unique', async () => {
  assert.deepEqual((await sql("CALL SYSADMIN.addUser('alice', 'alice-password')")).body, [['alice', 'added']]);
  assert.equal((await login('alice', 'alice-password')).status, 200);
  assert.equal((await sql("CALL SYSADMIN.addUser('alice', 'other-password')")).status, 400);
  assert.equal((await sql("CALL SYSADMIN.addUser('bad name', 'other-password')")).status, 400);
  assert.equal((await sql("CALL SYSADMIN.addUser('short', 'x')")).status, 400);
});

test('a user changes their own password; the old password and old tokens stop working', async () => {
  await sql("CALL SYSADMIN.addUser('bob', 'bob-password-1')");
  const token = (await login('bob', 'bob-password-1')).body.token!;
  assert.equal((await withToken(token)).status, 200);
  const changed = await sql("CALL SYSADMIN.changeUserPwd('bob', 'bob-password-2')", server.basic('bob', 'bob-password-1'));
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.equal((await withToken(token)).status, 401);
  assert.equal((await login('bob', 'bob-password-1')).status, 401);
  assert.equal((await login('bob', 'bob-password-2')).status, 200);
  // Not for somebody else, unless administrator.
  assert.equal((await sql("CALL SYSADMIN.changeUserPwd('admin', 'hijacked-pw')", server.basic('bob', 'bob-password-2'))).status, 403);
  assert.equal((await sql("CALL SYSADMIN.changeUserPwd('bob', 'bob-password-3')")).status, 200);
});

test('revokeTokens voids every token of the user', async () => {
  await sql("CALL SYSADMIN.addUser('carol', 'carol-password')");
  const token = (await login('carol', 'carol-password')).body.token!;
  // Used first: a token verified before (and remembered) is voided all the same.
  assert.equal((await withToken(token)).status, 200);
  assert.deepEqual((await sql("CALL SYSADMIN.revokeTokens('carol')")).body, [['carol', 'tokens revoked']]);
  assert.equal((await withToken(token)).status, 401);
  assert.equal((await withToken((await login('carol', 'carol-password')).body.token!)).status, 200);
});

test('removing a user voids their credentials, tokens, link and cursors', async () => {
  await sql("CALL SYSADMIN.addUser('dave', 'dave-password')");
  const auth = server.basic('dave', 'dave-password');
  const token = (await login('dave', 'dave-password')).body.token!;
  assert.equal((await withToken(token)).status, 200);
  const page = await server.request('/rest/api/query?pagination=true&limit=1', {
    body: { sql: 'SELECT 1 UNION ALL SELECT 2' },
    headers: { authorization: auth },
  });
  await page.text();
  const requestId = page.headers.get('requestid')!;
  assert.ok(requestId);
  const before = server.services.cursors.stats().count;
  assert.equal((await sql("CALL SYSADMIN.removeUser('dave')")).status, 200);
  assert.equal(server.services.cursors.stats().count, before - 1, 'the cursor is gone');
  assert.equal((await withToken(token)).status, 401);
  const basic = await server.request('/rest/api/status', { headers: { authorization: auth } });
  assert.equal(basic.status, 401);
  assert.equal((await sql("CALL SYSADMIN.removeUser('dave')")).status, 400);
  // A user of the same name added again does not inherit the old tokens.
  assert.equal((await sql("CALL SYSADMIN.addUser('dave', 'dave-password')")).status, 200);
  assert.equal((await withToken(token)).status, 401);
  assert.equal((await sql("CALL SYSADMIN.removeUser('admin')")).status, 400, 'nobody removes themselves');
});

test('external users are refused at every REST door, with a hint to use a password user', async () => {
  assert.equal((await sql("CALL SYSADMIN.addExternalUser('erin', 'oidc')")).status, 200);
  const refused = await login('erin', 'anything-at-all');
  assert.equal(refused.status, 401);
  assert.match(refused.body.description ?? '', /external identity provider/);
  assert.equal((await sql("CALL SYSADMIN.changeUserPwd('erin', 'a-password-1')")).status, 400);
});

test('SYSADMIN.Users lists users without any secret; only administrators manage users', async () => {
  const { body } = await sql('SELECT "Name", "Kind", "Provider", "Roles" FROM SYSADMIN.Users ORDER BY "Name"');
  const rows = body as unknown[][];
  assert.deepEqual(
    rows.find((r) => r[0] === 'admin'),
    ['admin', 'password', null, 'admin'],
  );
  assert.deepEqual(
    rows.find((r) => r[0] === 'erin'),
    ['erin', 'external', 'oidc', ''],
  );
  const all = JSON.stringify((await sql('SELECT * FROM SYSADMIN.Users')).body);
  assert.doesNotMatch(all, /scrypt|tokenSecret|linkToken/);
  for (const user of server.services.store.current.users) {
    assert.ok(!all.includes(user.tokenSecret) && !all.includes(user.linkToken));
  }
  await sql("CALL SYSADMIN.addUser('frank', 'frank-password')");
  assert.equal((await sql("CALL SYSADMIN.addUser('gina', 'gina-password')", server.basic('frank', 'frank-password'))).status, 403);
  assert.equal((await sql("CALL SYSADMIN.removeUser('alice')", server.basic('frank', 'frank-password'))).status, 403);
});

test('roles: added, given to users (admin makes another administrator), listed, taken, removed', async () => {
  assert.equal((await sql("CALL SYSADMIN.addRole('analyst')")).status, 200);
  assert.equal((await sql("CALL SYSADMIN.addRole('analyst')")).status, 400);
  await sql("CALL SYSADMIN.addUser('hank', 'hank-password')");
  assert.deepEqual((await sql("CALL SYSADMIN.addUserRole('analyst', 'hank')")).body, [['analyst', 'hank', 'granted']]);
  assert.equal((await sql("CALL SYSADMIN.addUserRole('nosuch', 'hank')")).status, 400);
  // The admin role makes an administrator: hank may now manage users.
  assert.equal((await sql("CALL SYSADMIN.addRole('x_role')", server.basic('hank', 'hank-password'))).status, 403);
  await sql("CALL SYSADMIN.addUserRole('admin', 'hank')");
  assert.equal((await sql("CALL SYSADMIN.addRole('x_role')", server.basic('hank', 'hank-password'))).status, 200);
  const roles = (await sql('SELECT "Name", "Users" FROM SYSADMIN.Roles ORDER BY "Name"')).body;
  assert.deepEqual(roles, [
    ['admin', 'admin,hank'],
    ['analyst', 'hank'],
    ['x_role', ''],
  ]);
  assert.equal((await sql("CALL SYSADMIN.removeUserRole('analyst', 'hank')")).status, 200);
  assert.equal((await sql("CALL SYSADMIN.removeRole('analyst')")).status, 200);
  assert.equal((await sql("CALL SYSADMIN.removeRole('admin')")).status, 400);
  // The last administrator keeps the role.
  await sql("CALL SYSADMIN.removeUserRole('admin', 'hank')");
  assert.equal((await sql("CALL SYSADMIN.removeUserRole('admin', 'admin')")).status, 400);
});
