/**
 * Authentication of the on-premise paths (spec 5, issue 2 "The contract"): HTTP Basic, the login
 * endpoint and its signed token in x-auth-token, token forgery and expiry, and the rule that only
 * password users may use REST.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { UserDef } from '../../src/catalog/types.js';
import { randomToken } from '../../src/security/random.js';
import { deriveSigningKey, signToken, TOKEN_LIFETIME_MS } from '../../src/security/tokens.js';
import { UserService } from '../../src/security/users.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, assertUnauthorizedPage, basicOf, okJson, signingKeyOf } from './util.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
  await server.services.users.addPasswordUser('bob', 'bob-password-1');
  // bob reads the demo shop (nothing is readable without a grant).
  await server.services.users.addRole('shop_reader');
  await server.services.users.addUserRole('shop_reader', 'bob');
  await server.services.users.setPermissions(
    { role: 'shop_reader', resource: 'shop', permissions: 'R', condition: null, mask: null, maskOrder: null },
    (a, b) => a === b,
  );
  await server.services.users.addPasswordUser('carol', 'carol-password-1');
  const external: UserDef = {
    name: 'extern',
    kind: 'external',
    passwordHash: null,
    tokenSecret: randomToken(),
    databaseUsername: 'extern',
    rest: true,
    linkToken: randomToken(24),
    roles: [],
    createdAt: new Date().toISOString(),
  };
  await server.services.store.update((catalog) => {
    catalog.users.push(external);
  });
});
after(async () => server.close());

/** GET status with exactly these headers (no default Basic). */
const statusWith = (headers: Record<string, string>) => server.request('/rest/api/status', { headers: { authorization: '', ...headers } });

async function login(username: string, password: string): Promise<{ username: string; token: string }> {
  const response = await server.request('/api/login', { body: { username, password }, headers: { authorization: '' } });
  return okJson<{ username: string; token: string }>(response, `login ${username}`);
}

async function assertTokenWorks(token: string, what: string): Promise<void> {
  const response = await statusWith({ 'x-auth-token': token });
  assert.deepEqual(await okJson(response, what), { status: 'OK' }, what);
}

describe('HTTP Basic', () => {
  test('the right password is accepted on status, query and source', async () => {
    assert.deepEqual(await okJson(await statusWith({ authorization: basicOf('admin', ADMIN_PASSWORD) })), { status: 'OK' });
    const rows = await okJson(
      await server.request('/rest/api/query', {
        body: { sql: 'SELECT count(*) FROM shop.customers' },
        headers: { authorization: basicOf('bob', 'bob-password-1') },
      }),
    );
    assert.deepEqual(rows, [[200]]);
    const sources = await okJson<Array<{ Name: string }>>(
      await server.request('/rest/api/source', { headers: { authorization: basicOf('bob', 'bob-password-1') } }),
    );
    // Only what bob may read: shop, not files (the system schemas are not data sources).
    assert.deepEqual(sources, [{ Name: 'shop' }]);
  });

  test('a wrong password is the 401 page', async () => {
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('admin', 'wrong-password') }), 'wrong password');
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('admin', '') }), 'empty password');
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('admin', ADMIN_PASSWORD + 'x') }), 'longer password');
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('bob', ADMIN_PASSWORD) }), "another user's password");
  });

  test('an unknown user is the 401 page', async () => {
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('nobody', ADMIN_PASSWORD) }), 'unknown user');
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('', ADMIN_PASSWORD) }), 'empty user');
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('ADMIN', ADMIN_PASSWORD) }), 'user names are exact');
  });

  test('a malformed Authorization header is the 401 page', async () => {
    const malformed = [
      'Basic',
      'Basic ',
      'Basic !!!notbase64!!!',
      `Basic ${Buffer.from('admin-without-colon').toString('base64')}`,
      `Bearer ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`,
      `Digest username="admin"`,
      `${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`,
      'garbage',
    ];
    for (const header of malformed) await assertUnauthorizedPage(await statusWith({ authorization: header }), `Authorization: ${header}`);
  });

  test('no credentials at all is the 401 HTML page on every endpoint', async () => {
    const response = await statusWith({});
    assert.equal(response.status, 401);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const text = await response.text();
    assert.ok(text.includes('<title>Error</title>'), text);
    assert.ok(text.includes('Unauthorized: Authentication token was either missing or invalid.'), text);

    await assertUnauthorizedPage(await statusWith({}), 'status');
    await assertUnauthorizedPage(await server.request('/rest/api/status/', { headers: { authorization: '' } }), 'status/');
    await assertUnauthorizedPage(
      await server.request('/rest/api/query', { body: { sql: 'SELECT 1' }, headers: { authorization: '' } }),
      'query',
    );
    await assertUnauthorizedPage(await server.request('/rest/api/source', { headers: { authorization: '' } }), 'source');
    await assertUnauthorizedPage(await server.request('/rest/api/preferences', { headers: { authorization: '' } }), 'preferences');
  });

  test('a query without credentials is not executed: its errors are not revealed', async () => {
    // Authentication comes first: a bad statement still answers 401, not 400.
    await assertUnauthorizedPage(
      await server.request('/rest/api/query', { body: { sql: 'SELEC nonsense' }, headers: { authorization: '' } }),
      'bad SQL without credentials',
    );
    await assertUnauthorizedPage(
      await server.request('/rest/api/query', { body: '{not json', headers: { authorization: '' } }),
      'bad JSON without credentials',
    );
  });
});

describe('POST /api/login', () => {
  test('answers {username, token} with a token <username>:<expiry ms>:<signature> valid 30 days', async () => {
    const before = Date.now();
    const response = await server.request('/api/login', {
      body: { username: 'admin', password: ADMIN_PASSWORD },
      headers: { authorization: '' },
    });
    const body = await okJson<Record<string, unknown>>(response);
    const after = Date.now();
    assert.deepEqual(Object.keys(body).sort(), ['token', 'username']);
    assert.equal(body.username, 'admin');
    assert.equal(typeof body.token, 'string');
    const match = /^admin:(\d+):([A-Za-z0-9_-]+)$/.exec(body.token as string);
    assert.ok(match, `token shape: ${String(body.token)}`);
    const expiry = Number(match[1]);
    assert.ok(expiry >= before + TOKEN_LIFETIME_MS && expiry <= after + TOKEN_LIFETIME_MS, `expiry ${expiry} is 30 days ahead`);
    assert.equal(TOKEN_LIFETIME_MS, 30 * 24 * 3600 * 1000);
    assert.ok((match[2] ?? '').length >= 32, 'the signature is a real MAC, not a placeholder');
  });

  test('the token works in x-auth-token on status, query and source, without Basic', async () => {
    const { token } = await login('admin', ADMIN_PASSWORD);
    await assertTokenWorks(token, 'status');
    const trailing = await server.request('/rest/api/status/', { headers: { authorization: '', 'x-auth-token': token } });
    assert.deepEqual(await okJson(trailing), { status: 'OK' });
    const rows = await okJson(
      await server.request('/rest/api/query', {
        body: { sql: 'SELECT id, name FROM shop.customers WHERE id = 1' },
        headers: { authorization: '', 'x-auth-token': token },
      }),
    );
    assert.deepEqual(rows, [[1, 'Lukas Müller']]);
    const sources = await okJson<Array<{ Name: string }>>(
      await server.request('/rest/api/source', { headers: { authorization: '', 'x-auth-token': token } }),
    );
    assert.deepEqual(
      sources.slice(0, 2).map((s) => s.Name),
      ['shop', 'files'],
    );
  });

  test('each user gets their own token; a second login gives a token that works too', async () => {
    const bob = await login('bob', 'bob-password-1');
    assert.equal(bob.username, 'bob');
    assert.match(bob.token, /^bob:\d+:[A-Za-z0-9_-]+$/);
    await assertTokenWorks(bob.token, 'bob token');
    const again = await login('bob', 'bob-password-1');
    await assertTokenWorks(again.token, 'second bob token');
    await assertTokenWorks(bob.token, 'the first token stays valid');
  });

  test('a wrong password or unknown user is 401 with a JSON error body, the same for both', async () => {
    const wrong = await assertApiError(
      await server.request('/api/login', { body: { username: 'admin', password: 'wrong-password' }, headers: { authorization: '' } }),
      401,
      'wrong password',
    );
    const unknown = await assertApiError(
      await server.request('/api/login', { body: { username: 'nobody', password: 'wrong-password' }, headers: { authorization: '' } }),
      401,
      'unknown user',
    );
    assert.deepEqual(unknown, wrong, 'no hint whether the user exists');
    assert.doesNotMatch(wrong.description, /wrong-password/, 'the password is never echoed');
  });

  test('missing or non-string fields are 400', async () => {
    const bodies: unknown[] = [
      {},
      { username: 'admin' },
      { password: ADMIN_PASSWORD },
      { username: 'admin', password: 12345678 },
      { username: 7, password: ADMIN_PASSWORD },
      { username: null, password: ADMIN_PASSWORD },
      { username: ['admin'], password: ADMIN_PASSWORD },
      { username: '', password: ADMIN_PASSWORD },
      '[]',
      'null',
      '"admin"',
    ];
    for (const body of bodies) {
      await assertApiError(
        await server.request('/api/login', { body, headers: { authorization: '' } }),
        400,
        `login body ${JSON.stringify(body)}`,
      );
    }
    await assertApiError(
      await server.request('/api/login', { method: 'POST', headers: { authorization: '' } }),
      400,
      'login without a body',
    );
  });

  test('a body that is not JSON is 400 (bad JSON) or 415 (other content type)', async () => {
    await assertApiError(
      await server.request('/api/login', { body: '{"username": "admin",', headers: { authorization: '' } }),
      400,
      'bad JSON',
    );
    await assertApiError(
      await server.request('/api/login', {
        body: `username=admin&password=${ADMIN_PASSWORD}`,
        headers: { authorization: '', 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'form body',
    );
  });
});

describe('forged and stale tokens', () => {
  let token: string;
  let username: string;
  let expiry: string;
  let signature: string;
  before(async () => {
    ({ token } = await login('admin', ADMIN_PASSWORD));
    [username, expiry, signature] = token.split(':') as [string, string, string];
  });

  test('a changed username is 401, also when the other user exists', async () => {
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `bob:${expiry}:${signature}` }), 'username bob');
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `nobody:${expiry}:${signature}` }), 'unknown username');
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `Admin:${expiry}:${signature}` }), 'username case');
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `:${expiry}:${signature}` }), 'empty username');
  });

  test('a changed expiry is 401 (later, earlier, re-spelled)', async () => {
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `${username}:${Number(expiry) + 1}:${signature}` }), 'expiry + 1');
    await assertUnauthorizedPage(
      await statusWith({ 'x-auth-token': `${username}:${Number(expiry) + 365 * 24 * 3600 * 1000}:${signature}` }),
      'expiry + 1 year',
    );
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `${username}:${Number(expiry) - 1}:${signature}` }), 'expiry - 1');
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `${username}:0${expiry}:${signature}` }), 'leading zero');
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `${username}:${expiry}.0:${signature}` }), 'decimal expiry');
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `${username}::${signature}` }), 'no expiry');
  });

  test('a changed signature is 401', async () => {
    const flip = (ch: string) => (ch === 'A' ? 'B' : 'A');
    const first = `${flip(signature[0]!)}${signature.slice(1)}`;
    const last = `${signature.slice(0, -1)}${flip(signature[signature.length - 1]!)}`;
    for (const sig of [
      first,
      last,
      signature.toLowerCase() === signature ? signature.toUpperCase() : signature.toLowerCase(),
      `${signature}A`,
      '',
      'x',
    ]) {
      await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `${username}:${expiry}:${sig}` }), `signature ${sig}`);
    }
    // base64 instead of base64url spelling of the same bytes
    const standard = Buffer.from(signature, 'base64url').toString('base64');
    if (standard !== signature)
      await assertUnauthorizedPage(await statusWith({ 'x-auth-token': `${username}:${expiry}:${standard}` }), 'base64 spelling');
  });

  test('truncated tokens and garbage are 401', async () => {
    const candidates = [
      token.slice(0, -1),
      token.slice(0, token.lastIndexOf(':')),
      token.slice(0, token.lastIndexOf(':') + 1),
      username,
      `${token}:extra`,
      'garbage',
      ':::',
      'admin::',
      Buffer.from(token).toString('base64'),
      'x'.repeat(4096),
    ];
    for (const candidate of candidates) {
      await assertUnauthorizedPage(await statusWith({ 'x-auth-token': candidate }), `token ${JSON.stringify(candidate.slice(0, 60))}`);
    }
  });

  test('an invalid token is refused even when valid Basic credentials come with it', async () => {
    await assertUnauthorizedPage(
      await statusWith({ 'x-auth-token': `${username}:${expiry}:${signature}x`, authorization: basicOf('admin', ADMIN_PASSWORD) }),
      'bad token plus Basic',
    );
  });

  test('a token signed with the real key is accepted until it expires (control for the tests below)', async () => {
    const user = server.services.users.find('admin')!;
    const key = signingKeyOf(server);
    await assertTokenWorks(signToken('admin', Date.now() + 60_000, user.tokenSecret, key), 'self-signed token with the real key');
  });

  test('an expired token is 401', async () => {
    const user = server.services.users.find('admin')!;
    const key = signingKeyOf(server);
    await assertUnauthorizedPage(
      await statusWith({ 'x-auth-token': signToken('admin', Date.now() - 1000, user.tokenSecret, key) }),
      'expired 1 s ago',
    );
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': signToken('admin', 0, user.tokenSecret, key) }), 'expiry 0');
    // Issued 31 days ago by the server's own user service: 30 days valid, so expired a day ago.
    const past = new UserService(server.services.store, key, () => Date.now() - 31 * 24 * 3600 * 1000);
    const old = past.issueToken(user);
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': old }), 'issued 31 days ago');
    // Issued 29 days ago: still valid.
    const recent = new UserService(server.services.store, key, () => Date.now() - 29 * 24 * 3600 * 1000);
    await assertTokenWorks(recent.issueToken(user), 'issued 29 days ago');
  });

  test('a token expiring in a short while works now and is 401 once that moment passed', async () => {
    const user = server.services.users.find('admin')!;
    const soon = signToken('admin', Date.now() + 500, user.tokenSecret, signingKeyOf(server));
    await assertTokenWorks(soon, 'before expiry');
    await new Promise((resolve) => setTimeout(resolve, 600));
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': soon }), 'after expiry');
  });

  test('a token of another application version is 401 ("until the service application is updated")', async () => {
    const user = server.services.users.find('admin')!;
    for (const version of ['0.0.1', `${server.services.version}-next`, '99.0.0']) {
      const other = signToken('admin', Date.now() + 60_000, user.tokenSecret, signingKeyOf(server, version));
      await assertUnauthorizedPage(await statusWith({ 'x-auth-token': other }), `version ${version}`);
    }
  });

  test('a token signed with another server secret is 401', async () => {
    const user = server.services.users.find('admin')!;
    const foreign = signToken(
      'admin',
      Date.now() + 60_000,
      user.tokenSecret,
      deriveSigningKey(Buffer.alloc(32, 7), server.services.version),
    );
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': foreign }), 'foreign server secret');
  });

  test('after a password change the old token is 401, the old password too; a new login works', async () => {
    const { token: old } = await login('carol', 'carol-password-1');
    await assertTokenWorks(old, 'before the change');
    const { token: bobToken } = await login('bob', 'bob-password-1');
    await server.services.users.changePassword('carol', 'carol-password-2');
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': old }), 'old token after the change');
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('carol', 'carol-password-1') }), 'old password');
    assert.deepEqual(await okJson(await statusWith({ authorization: basicOf('carol', 'carol-password-2') })), { status: 'OK' });
    await assertApiError(
      await server.request('/api/login', { body: { username: 'carol', password: 'carol-password-1' }, headers: { authorization: '' } }),
      401,
      'login with the old password',
    );
    const { token: fresh } = await login('carol', 'carol-password-2');
    await assertTokenWorks(fresh, 'token after the change');
    await assertTokenWorks(bobToken, "another user's token is untouched");
  });
});

describe('users who sign in externally', () => {
  test('are refused at login with 401 telling to use a password user', async () => {
    const body = await assertApiError(
      await server.request('/api/login', { body: { username: 'extern', password: 'whatever-1' }, headers: { authorization: '' } }),
      401,
      'external login',
    );
    assert.match(body.description, /external/i);
    assert.match(`${body.description} ${body.hint ?? ''}`, /password/i, 'says to use a user with username and password');
  });

  test('are refused via Basic and via a validly signed token', async () => {
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('extern', 'whatever-1') }), 'external Basic');
    await assertUnauthorizedPage(await statusWith({ authorization: basicOf('extern', '') }), 'external Basic, empty password');
    const user = server.services.users.find('extern')!;
    const token = signToken('extern', Date.now() + 60_000, user.tokenSecret, signingKeyOf(server));
    await assertUnauthorizedPage(await statusWith({ 'x-auth-token': token }), 'external token');
  });

  test('are refused on their hosted link', async () => {
    const user = server.services.users.find('extern')!;
    await assertUnauthorizedPage(
      await server.request(`/${user.linkToken}/rest/api/status`, { headers: { authorization: basicOf('extern', 'whatever-1') } }),
      'external link',
    );
  });
});
