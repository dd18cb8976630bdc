/**
 * Two vdb instances behind Debian's nginx (deploy/nginx.conf), sharing their catalog in
 * PostgreSQL and their cursors in Redis (issue 13): sign-in through nginx, pages walked
 * alternating between the instances, a source added on one and queried on the other at once,
 * a token revoked on one and refused on the other, an instance killed mid-walk, and both
 * restarted without losing anything.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { noNginx, startInstance, startNginx, tempDir, type Instance, type Proxy } from './cluster.js';

const tag = uniqueTag();
const PASSWORD = 'cluster-admin-1';
const ROWS = 60;

let admin: pg.Client;
let dir: string;
let config: Record<string, unknown>;
let a: Instance;
let b: Instance;
let proxy: Proxy;
let token: string;

/** A request with the admin token to `base` (an instance or nginx). */
async function call(base: string, pathAndQuery: string, init: { method?: string; body?: unknown; token?: string } = {}): Promise<Response> {
  return fetch(`${base}${pathAndQuery}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', 'x-auth-token': init.token ?? token },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function rows(base: string, sql: string, as = token): Promise<unknown[][]> {
  const response = await call(base, '/rest/api/query', { body: { sql }, token: as });
  const text = await response.text();
  assert.equal(response.status, 200, `${base}: ${sql}: ${text}`);
  return JSON.parse(text) as unknown[][];
}

/** Retries `check` for up to a second: what one instance changed, the other sees by then. */
const withinASecond = (check: () => Promise<boolean>, what: string) => withinSeconds(1, check, what);

async function withinSeconds(seconds: number, check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `within ${seconds} s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The page link `link` (built for nginx's address), sent to `base` instead. */
const via = (base: string, link: string) => {
  const url = new URL(link);
  return `${base}${url.pathname}${url.search}`;
};

describe('two instances behind nginx', { skip: noNginx }, () => {
  before(async () => {
    admin = await pgClient();
    await admin.query(`CREATE DATABASE ${tag}_catalog`);
    await admin.query(
      `CREATE SCHEMA ${tag}; CREATE TABLE ${tag}.items AS SELECT g AS id, 'item ' || g AS name FROM generate_series(1, ${ROWS}) g`,
    );
    dir = tempDir();
    config = {
      trustProxy: true,
      catalog: { url: `postgres://postgres@127.0.0.1:5432/${tag}_catalog` },
      cursors: { redisUrl: 'redis://127.0.0.1:6379', keyPrefix: `${tag}:` },
      // The local copies in one folder both instances read (docs/copies.md).
      copiesFolder: `${dir}/copies`,
    };
    // The first start creates the catalog (and admin); the second finds it.
    a = await startInstance('a', dir, config, PASSWORD);
    b = await startInstance('b', dir, config, PASSWORD);
    proxy = await startNginx(dir, [a.port, b.port]);
    const login = await fetch(`${proxy.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    assert.equal(login.status, 200, await login.clone().text());
    token = ((await login.json()) as { token: string }).token;
  });

  after(async () => {
    await proxy?.stop();
    await a?.stop();
    await b?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    await admin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
    await admin?.query(`DROP DATABASE IF EXISTS ${tag}_catalog WITH (FORCE)`);
    await admin?.end();
  });

  test('the token from nginx works on both instances', async () => {
    for (const base of [proxy.url, a.url, b.url]) assert.equal((await call(base, '/rest/api/status')).status, 200, base);
  });

  test('a source added on one instance is queried on the other at once', async () => {
    const added = await call(a.url, '/rest/api/source', {
      body: {
        name: 'pgc',
        template: 'postgresql',
        connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
        modelProps: `importer.schemaPattern=${tag}`,
      },
    });
    assert.equal(added.status, 201, await added.text());
    await withinASecond(
      async () => (await call(b.url, '/rest/api/query', { body: { sql: 'SELECT count(*) FROM pgc.items' } })).status === 200,
      'b knows pgc',
    );
    assert.deepEqual(await rows(b.url, 'SELECT count(*) FROM pgc.items'), [[ROWS]]);
  });

  test('a local copy: one instance refreshes at a time, both read the current version', async () => {
    await rows(a.url, `CALL SYSADMIN.accelerateTable('pgc.items', 'full', '1 s')`);
    // Both instances run the schedule; the copy's lock lets one refresh at a time.
    const refreshes = async () =>
      (await rows(b.url, `SELECT StartTime, DurationMs, Status FROM SYSLOG.CopyRefreshes ORDER BY StartTime`)) as Array<
        [string, number, string]
      >;
    let history = await refreshes();
    for (const deadline = Date.now() + 15_000; history.length < 3 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      history = await refreshes();
    }
    assert.ok(history.length >= 3, `refreshed by the schedule: ${JSON.stringify(history)}`);
    for (let i = 1; i < history.length; i++) {
      const endOfPrevious = Date.parse(`${history[i - 1]![0]}Z`) + history[i - 1]![1];
      assert.ok(Date.parse(`${history[i]![0]}Z`) >= endOfPrevious - 5, `refreshes do not overlap: ${JSON.stringify(history)}`);
    }
    assert.ok(
      history.every(([, , status]) => status === 'ok'),
      JSON.stringify(history),
    );
    await rows(a.url, `CALL SYSADMIN.pauseCopy('pgc.items')`);
    await admin.query(`INSERT INTO ${tag}.items VALUES (${ROWS + 1}, 'late')`);
    await rows(a.url, `CALL SYSADMIN.refreshCopy('pgc.items')`);
    for (const base of [a.url, b.url]) {
      await withinASecond(
        async () => JSON.stringify(await rows(base, 'SELECT count(*) FROM pgc.items')) === `[[${ROWS + 1}]]`,
        `${base} reads the new version`,
      );
      assert.match(JSON.stringify(await rows(base, 'EXPLAIN SELECT count(*) FROM pgc.items')), /local copy/);
    }
    await admin.query(`DELETE FROM ${tag}.items WHERE id = ${ROWS + 1}`);
    await rows(b.url, `CALL SYSADMIN.dropCopy('pgc.items')`);
    await withinASecond(
      async () => JSON.stringify(await rows(a.url, 'SELECT count(*) FROM pgc.items')) === `[[${ROWS}]]`,
      'a reads live again',
    );
  });

  test('pages of one result walked alternating between the instances', async () => {
    const first = await call(proxy.url, '/rest/api/query?pagination=true&limit=7', {
      body: { sql: 'SELECT id FROM pgc.items ORDER BY id' },
    });
    assert.equal(first.status, 200, await first.clone().text());
    const seen: unknown[][] = [...((await first.json()) as unknown[][])];
    let next = first.headers.get('nextpage');
    assert.ok(next?.startsWith(proxy.url), `links name nginx's address: ${next}`);
    for (let i = 0; next; i++) {
      const page = await call(via(i % 2 === 0 ? a.url : b.url, next), '');
      assert.equal(page.status, 200, await page.clone().text());
      seen.push(...((await page.json()) as unknown[][]));
      next = page.headers.get('nextpage');
    }
    assert.deepEqual(
      seen.map((r) => r[0]),
      Array.from({ length: ROWS }, (_, i) => i + 1),
    );
  });

  test('a token revoked on one instance is refused on the other', async () => {
    await rows(a.url, "CALL SYSADMIN.addUser('carl', 'carl-pass-1')");
    const login = await fetch(`${b.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'carl', password: 'carl-pass-1' }),
    });
    const carl = ((await login.json()) as { token: string }).token;
    assert.equal((await call(b.url, '/rest/api/status', { token: carl })).status, 200);
    await rows(a.url, "CALL SYSADMIN.revokeTokens('carl')");
    await withinASecond(async () => (await call(b.url, '/rest/api/status', { token: carl })).status === 401, "b refuses carl's old token");
  });

  test('an instance killed mid-walk: the walk ends through nginx on the other', async () => {
    const first = await call(proxy.url, '/rest/api/query?pagination=true&limit=10', {
      body: { sql: 'SELECT id FROM pgc.items ORDER BY id' },
    });
    assert.equal(first.status, 200, await first.clone().text());
    const seen: unknown[][] = [...((await first.json()) as unknown[][])];
    let next = first.headers.get('nextpage');
    for (let i = 0; next; i++) {
      if (i === 1) await a.stop('SIGKILL');
      const page = await fetch(next, { headers: { 'x-auth-token': token } });
      assert.equal(page.status, 200, await page.clone().text());
      seen.push(...((await page.json()) as unknown[][]));
      next = page.headers.get('nextpage');
    }
    assert.equal(seen.length, ROWS);
  });

  test('both restarted: sources, users and the token are all still there', async () => {
    await a.stop();
    await b.stop();
    a = await startInstance('a', dir, config, PASSWORD);
    b = await startInstance('b', dir, config, PASSWORD);
    await proxy.stop();
    proxy = await startNginx(dir, [a.port, b.port]);
    for (const base of [a.url, b.url, proxy.url]) assert.deepEqual(await rows(base, 'SELECT count(*) FROM pgc.items'), [[ROWS]], base);
    const users = await rows(proxy.url, 'SELECT "Name" FROM SYSADMIN.Users ORDER BY "Name"');
    assert.deepEqual(
      users.map((r) => r[0]),
      ['admin', 'carl'],
    );
  });
});
