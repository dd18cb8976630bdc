/**
 * The hosted variant (spec 5): /{linkToken}/rest/api/... plus HTTP Basic with the database
 * username and password; the REST switch and the static link in /rest/api/preferences.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, assertUnauthorizedPage, basicOf, okJson, pageHeaders } from './util.js';

interface Preferences {
  rest: boolean;
  link: string;
  databaseUsername: string;
}

let server: TestServer;
before(async () => {
  server = await startTestServer();
  await server.services.users.addPasswordUser('dora', 'dora-password-1');
});
after(async () => server.close());

const adminBasic = basicOf('admin', ADMIN_PASSWORD);

async function getPreferences(authorization = adminBasic): Promise<Preferences> {
  const body = await okJson<Preferences>(await server.request('/rest/api/preferences', { headers: { authorization } }), 'GET preferences');
  assert.deepEqual(Object.keys(body).sort(), ['databaseUsername', 'link', 'rest']);
  return body;
}

async function putPreferences(body: unknown, authorization = adminBasic): Promise<Preferences> {
  const answer = await okJson<Preferences>(
    await server.request('/rest/api/preferences', { method: 'PUT', body, headers: { authorization } }),
    `PUT preferences ${JSON.stringify(body)}`,
  );
  assert.deepEqual(Object.keys(answer).sort(), ['databaseUsername', 'link', 'rest']);
  return answer;
}

/** A request to an absolute URL (a link), JSON content type, with the given Authorization. */
function fetchLink(url: string, authorization: string | null, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== null) headers.authorization = authorization;
  return fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

const tokenOfLink = (link: string) => new URL(link).pathname.split('/')[1] ?? '';

describe('preferences', () => {
  test('GET answers {rest, link, databaseUsername}: REST off at first, an absolute link ending in /rest', async () => {
    const prefs = await getPreferences();
    assert.equal(prefs.rest, false);
    assert.equal(prefs.databaseUsername, 'admin');
    const url = new URL(prefs.link);
    assert.equal(url.origin, new URL(server.url).origin, 'absolute, on this server');
    assert.match(url.pathname, /^\/[A-Za-z0-9_-]+\/rest$/);
    assert.ok(prefs.link.endsWith('/rest'));
    assert.equal(url.search, '');
    // >= 128 random bits: at least 22 base64url characters.
    assert.ok(tokenOfLink(prefs.link).length >= 22, `link token ${tokenOfLink(prefs.link)} is long enough`);
  });

  test('each user has their own link token and database username', async () => {
    const admin = await getPreferences();
    const dora = await getPreferences(basicOf('dora', 'dora-password-1'));
    assert.equal(dora.databaseUsername, 'dora');
    assert.equal(dora.rest, false);
    assert.notEqual(tokenOfLink(dora.link), tokenOfLink(admin.link));
  });

  test('PUT with a bad body is 400 and changes nothing', async () => {
    const before = await getPreferences();
    const bodies: unknown[] = [{}, { rest: 'true' }, { rest: 1 }, { rest: null }, '[]', '"rest"', 'null', { enabled: true }];
    for (const body of bodies) {
      await assertApiError(
        await server.request('/rest/api/preferences', { method: 'PUT', body, headers: { authorization: adminBasic } }),
        400,
        `PUT ${JSON.stringify(body)}`,
      );
    }
    await assertApiError(
      await server.request('/rest/api/preferences', { method: 'PUT', body: '{"rest": tru', headers: { authorization: adminBasic } }),
      400,
      'PUT bad JSON',
    );
    await assertApiError(
      await server.request('/rest/api/preferences', {
        method: 'PUT',
        body: 'rest=true',
        headers: { authorization: adminBasic, 'content-type': 'text/plain' },
      }),
      415,
      'PUT text/plain',
    );
    assert.deepEqual(await getPreferences(), before);
  });

  test('saved queries: per user, by name, replaced by a save of the same name, deleted, bounded', async () => {
    const dora = basicOf('dora', 'dora-password-1');
    const queries = (authorization: string) => server.request('/rest/api/preferences/queries', { headers: { authorization } });
    const save = (name: string, body: unknown, authorization = dora) =>
      server.request(`/rest/api/preferences/queries/${encodeURIComponent(name)}`, { method: 'PUT', body, headers: { authorization } });
    assert.deepEqual(await okJson(await queries(dora), 'GET queries'), []);
    const saved = await okJson<{ name: string; sql: string; savedAt: string }>(await save('totals / day', { sql: 'SELECT 1;\nSELECT 2' }));
    assert.equal(saved.name, 'totals / day');
    assert.equal(saved.sql, 'SELECT 1;\nSELECT 2');
    assert.ok(Date.now() - Date.parse(saved.savedAt) < 60_000);
    await okJson(await save('a first', { sql: 'SELECT 3' }));
    await okJson(await save('totals / day', { sql: 'SELECT 4' }));
    const list = await okJson<Array<{ name: string; sql: string }>>(await queries(dora));
    assert.deepEqual(
      list.map((q) => [q.name, q.sql]),
      [
        ['a first', 'SELECT 3'],
        ['totals / day', 'SELECT 4'],
      ],
    );
    // Another user sees none of them, and cannot delete them.
    assert.deepEqual(await okJson(await queries(adminBasic)), []);
    const other = await server.request('/rest/api/preferences/queries/a%20first', {
      method: 'DELETE',
      headers: { authorization: adminBasic },
    });
    assert.equal((await assertApiError(other, 404)).title, 'Saved query not found');
    for (const [name, body] of [
      ['x', {}],
      ['x', { sql: '  ' }],
      ['x', { sql: 5 }],
      [' ', { sql: 'SELECT 1' }],
      ['n'.repeat(201), { sql: 'SELECT 1' }],
      ['x', { sql: 'x'.repeat(100_001) }],
    ] as const) {
      await assertApiError(await save(name, body), 400, `PUT ${name.slice(0, 10)} ${JSON.stringify(body).slice(0, 30)}`);
    }
    const deleted = await server.request('/rest/api/preferences/queries/a%20first', { method: 'DELETE', headers: { authorization: dora } });
    assert.equal(deleted.status, 204);
    assert.deepEqual(
      (await okJson<Array<{ name: string }>>(await queries(dora))).map((q) => q.name),
      ['totals / day'],
    );
    await assertUnauthorizedPage(await queries(''), 'GET queries');
  });

  test('preferences need authentication', async () => {
    await assertUnauthorizedPage(await server.request('/rest/api/preferences', { headers: { authorization: '' } }), 'GET');
    await assertUnauthorizedPage(
      await server.request('/rest/api/preferences', { method: 'PUT', body: { rest: true }, headers: { authorization: '' } }),
      'PUT',
    );
    await assertUnauthorizedPage(
      await server.request('/rest/api/preferences', {
        method: 'PUT',
        body: { rest: true },
        headers: { authorization: basicOf('admin', 'wrong-pass') },
      }),
      'PUT wrong password',
    );
    assert.equal((await getPreferences()).rest, false, 'nothing switched on');
  });
});

describe('the hosted link', () => {
  let link: string;
  before(async () => {
    link = (await getPreferences()).link;
  });

  test('with REST off the link is the 401 page, even with the right Basic', async () => {
    await assertUnauthorizedPage(await fetchLink(`${link}/api/status`, adminBasic), 'link with REST off');
    await assertUnauthorizedPage(await fetchLink(`${link}/api/query`, adminBasic, { body: { sql: 'SELECT 1' } }), 'query with REST off');
  });

  test('PUT {rest:true} switches it on: the same link answers status with Basic (database username + password)', async () => {
    const prefs = await putPreferences({ rest: true });
    assert.deepEqual(prefs, { rest: true, link, databaseUsername: 'admin' });
    assert.deepEqual(await getPreferences(), prefs);
    const response = await fetchLink(`${link}/api/status`, adminBasic);
    assert.equal(await response.clone().text(), '{"status":"OK"}');
    assert.deepEqual(await okJson(response), { status: 'OK' });
    assert.deepEqual(await okJson(await fetchLink(`${link}/api/status/`, adminBasic)), { status: 'OK' }, 'trailing slash');
  });

  test('a wrong password, wrong username or no Basic on the link is the 401 page', async () => {
    await putPreferences({ rest: true });
    await assertUnauthorizedPage(await fetchLink(`${link}/api/status`, basicOf('admin', 'wrong-password')), 'wrong password');
    await assertUnauthorizedPage(await fetchLink(`${link}/api/status`, basicOf('nobody', ADMIN_PASSWORD)), 'wrong username');
    await assertUnauthorizedPage(
      await fetchLink(`${link}/api/status`, basicOf('dora', 'dora-password-1')),
      "another user's valid credentials",
    );
    await assertUnauthorizedPage(await fetchLink(`${link}/api/status`, null), 'no Basic');
    await assertUnauthorizedPage(await fetchLink(`${link}/api/status`, 'Basic garbage'), 'malformed Basic');
  });

  test('the link needs Basic: a login token alone does not open it', async () => {
    await putPreferences({ rest: true });
    const { token } = await okJson<{ token: string }>(
      await server.request('/api/login', { body: { username: 'admin', password: ADMIN_PASSWORD }, headers: { authorization: '' } }),
    );
    const response = await fetch(`${link}/api/status`, { headers: { 'content-type': 'application/json', 'x-auth-token': token } });
    await assertUnauthorizedPage(response, 'x-auth-token on the link');
  });

  test('Basic uses the database username, not the login name, when they differ', async () => {
    const doraLink = (await putPreferences({ rest: true }, basicOf('dora', 'dora-password-1'))).link;
    await server.services.store.update((catalog) => {
      const dora = catalog.users.find((u) => u.name === 'dora')!;
      dora.databaseUsername = 'dora_db';
    });
    try {
      const prefs = await getPreferences(basicOf('dora', 'dora-password-1'));
      assert.equal(prefs.databaseUsername, 'dora_db');
      assert.equal(prefs.link, doraLink);
      assert.deepEqual(await okJson(await fetchLink(`${doraLink}/api/status`, basicOf('dora_db', 'dora-password-1'))), { status: 'OK' });
      await assertUnauthorizedPage(
        await fetchLink(`${doraLink}/api/status`, basicOf('dora', 'dora-password-1')),
        'login name instead of database username',
      );
      await assertUnauthorizedPage(
        await fetchLink(`${doraLink}/api/status`, basicOf('dora_db', 'wrong-password')),
        'database username, wrong password',
      );
      await assertUnauthorizedPage(
        await fetchLink(`${link}/api/status`, basicOf('dora_db', 'dora-password-1')),
        "dora's credentials on admin's link",
      );
    } finally {
      await server.services.store.update((catalog) => {
        catalog.users.find((u) => u.name === 'dora')!.databaseUsername = 'dora';
      });
    }
  });

  test('the link token is static: unchanged after switching off and on; off means 401', async () => {
    await putPreferences({ rest: true });
    const off = await putPreferences({ rest: false });
    assert.deepEqual(off, { rest: false, link, databaseUsername: 'admin' });
    await assertUnauthorizedPage(await fetchLink(`${link}/api/status`, adminBasic), 'switched off');
    const on = await putPreferences({ rest: true });
    assert.equal(on.link, link);
    assert.deepEqual(await okJson(await fetchLink(`${link}/api/status`, adminBasic)), { status: 'OK' });
    // Switching on twice changes nothing either.
    assert.equal((await putPreferences({ rest: true })).link, link);
  });

  test('the switch survives a restart of the service, with the same link token', async () => {
    await putPreferences({ rest: true });
    const again = await startTestServer({ dataDir: server.dataDir });
    try {
      const prefs = await okJson<Preferences>(await again.request('/rest/api/preferences'));
      assert.equal(prefs.rest, true);
      assert.equal(tokenOfLink(prefs.link), tokenOfLink(link));
      assert.deepEqual(
        await okJson(await fetch(`${again.url}/${tokenOfLink(link)}/rest/api/status`, { headers: { authorization: adminBasic } })),
        { status: 'OK' },
      );
    } finally {
      await again.close();
    }
  });

  test('an unknown link token is the 401 page', async () => {
    await putPreferences({ rest: true });
    const token = tokenOfLink(link);
    const base = new URL(server.url).origin;
    const unknown = [
      'A'.repeat(token.length),
      token.slice(0, -1),
      `${token}x`,
      token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase(),
      'rest',
    ];
    for (const candidate of unknown) {
      await assertUnauthorizedPage(await fetchLink(`${base}/${candidate}/rest/api/status`, adminBasic), `link token ${candidate}`);
    }
  });

  test('query and source work under the link path', async () => {
    await putPreferences({ rest: true });
    const rows = await okJson(
      await fetchLink(`${link}/api/query`, adminBasic, {
        body: { sql: 'SELECT id, name, country FROM shop.customers ORDER BY id LIMIT 2' },
      }),
    );
    assert.deepEqual(rows, [
      [1, 'Lukas Müller', 'DE'],
      [2, 'Chiara Ferrari', 'IT'],
    ]);
    const objects = await okJson(
      await fetchLink(`${link}/api/query?array=false`, adminBasic, {
        body: { sql: "SELECT region FROM files.regions WHERE country_code = 'JP'" },
      }),
    );
    assert.deepEqual(objects, [{ region: 'Asia' }]);
    const sources = await okJson(await fetchLink(`${link}/api/source`, adminBasic));
    assert.deepEqual(sources, [{ Name: 'shop' }, { Name: 'files' }]);
    await assertApiError(await fetchLink(`${link}/api/query`, adminBasic, { body: { sql: 'SELEC 1' } }), 400, 'bad SQL on the link');
    await assertUnauthorizedPage(await fetchLink(`${link}/api/query`, null, { body: { sql: 'SELECT 1' } }), 'query without Basic');
    await assertUnauthorizedPage(await fetchLink(`${link}/api/source`, null), 'source without Basic');
  });

  test('pagination under the link keeps the link path in its page links, forward and back', async () => {
    await putPreferences({ rest: true });
    const sql = 'SELECT id FROM shop.products ORDER BY id';
    const expected = (await okJson<number[][]>(await fetchLink(`${link}/api/query`, adminBasic, { body: { sql } }))).map((r) => r[0]);
    assert.equal(expected.length, 50);

    let response = await fetchLink(`${link}/api/query?pagination=true&limit=20`, adminBasic, { body: { sql } });
    const seen: number[] = [];
    const offsets: string[] = [];
    for (;;) {
      const rows = await okJson<number[][]>(response);
      const headers = pageHeaders(response);
      offsets.push(headers.offset ?? '');
      seen.push(...rows.map((r) => r[0]!));
      assert.ok(headers.prevPage?.startsWith(`${link}/api/query?`), `prevPage ${headers.prevPage} is under the link`);
      if (!headers.nextPage) break;
      assert.ok(headers.nextPage.startsWith(`${link}/api/query?`), `nextPage ${headers.nextPage} is under the link`);
      response = await fetchLink(headers.nextPage, adminBasic, { method: 'POST' });
    }
    assert.deepEqual(offsets, ['0', '20', '40']);
    assert.deepEqual(seen, expected);
    // Back from the last chunk.
    let prev = pageHeaders(response).prevPage;
    const back: string[] = [];
    while (prev) {
      const page = await fetchLink(prev, adminBasic, { method: 'POST' });
      const headers = pageHeaders(page);
      await okJson(page);
      back.push(headers.offset ?? '');
      if (headers.offset === '0') break;
      prev = headers.prevPage;
    }
    assert.deepEqual(back, ['20', '0']);

    const source = await fetchLink(`${link}/api/source?pagination=true&limit=1`, adminBasic);
    assert.deepEqual(await okJson(source), [{ Name: 'shop' }]);
    const next = pageHeaders(source).nextPage;
    assert.ok(next?.startsWith(`${link}/api/source?`), `source nextPage ${next} is under the link`);
    assert.deepEqual(await okJson(await fetchLink(next!, adminBasic)), [{ Name: 'files' }]);
    // A page link of the link path does not open without the link's Basic credentials.
    await assertUnauthorizedPage(await fetchLink(next!, null), 'page link without Basic');
  });

  test('preferences are reachable under the link too and show the same link', async () => {
    await putPreferences({ rest: true });
    const prefs = await okJson<Preferences>(await fetchLink(`${link}/api/preferences`, adminBasic));
    assert.equal(prefs.link, link);
    assert.equal(prefs.rest, true);
  });
});
