/**
 * Two vdb instances on one catalog database (catalog.url, issue 13): a source added, a token
 * revoked, a grant withdrawn on one is seen on the other within a second; concurrent changes on
 * both lose nothing; the audit and query logs reach the database; the database going away makes
 * both unready with 503s, and everything recovers when it returns.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import type { ApiError } from '../../src/errors.js';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, assertUnauthorizedPage, basicOf, okJson } from '../http/util.js';
import { createCatalogDatabase, seenWithin, type CatalogDatabase } from './pg-catalog.js';

const tag = uniqueTag();
const SOURCE = `${tag}_src`;
let db: CatalogDatabase;
let pgAdmin: pg.Client;
let a: TestServer;
let b: TestServer;
let sharedFiles: string;

before(async () => {
  db = await createCatalogDatabase();
  pgAdmin = await pgClient();
  await pgAdmin.query(
    `CREATE SCHEMA ${tag}; CREATE TABLE ${tag}.items (id int PRIMARY KEY, name text); INSERT INTO ${tag}.items VALUES (1, 'one'), (2, 'two')`,
  );
  // A folder both instances read at the same path (a shared mount in production).
  sharedFiles = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-shared-files-'));
  const shared = { demo: false, catalog: { url: db.url, schema: 'vdb' }, fileRoots: [sharedFiles] };
  a = await startTestServer(shared);
  b = await startTestServer(shared);
});

after(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
  await pgAdmin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await pgAdmin?.end();
  if (sharedFiles) fs.rmSync(sharedFiles, { recursive: true, force: true });
});

const sql = (server: TestServer, statement: string, authorization = basicOf('admin', ADMIN_PASSWORD)) =>
  server.request('/rest/api/query', { body: { sql: statement }, headers: { authorization } });

test('both instances share the admin user and the server secret: a token from one works on the other', async () => {
  const { token } = await okJson<{ token: string }>(
    await a.request('/api/login', { body: { username: 'admin', password: ADMIN_PASSWORD }, headers: { authorization: '' } }),
  );
  await okJson(await b.request('/rest/api/status', { headers: { authorization: '', 'x-auth-token': token } }), 'token of a on b');
  const tables = await db.query<{ version: number }>('SELECT max(version) AS version FROM vdb.migrations');
  assert.equal(tables[0]!.version, 1);
});

test('a source added on one instance is queried on the other within a second', async () => {
  const added = await a.request('/rest/api/source', {
    body: {
      name: SOURCE,
      template: 'postgresql',
      translator: 'postgresql',
      connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres,password=unused-secret',
      modelProps: `importer.schemaPattern=${tag}`,
      translatorProps: '',
      encryptedProperties: '',
    },
  });
  assert.equal(added.status, 201, await added.text());
  await seenWithin(1000, 'the source on b', async () => {
    assert.deepEqual(await okJson(await sql(b, `SELECT name FROM ${SOURCE}.items ORDER BY id`)), [['one'], ['two']]);
  });
});

test('a file source (read by the engine) added on one instance is queried on the other within a second', async () => {
  const folder = path.join(sharedFiles, 'csv');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'nums.csv'), 'n,label\n1,one\n2,two\n');
  const added = await a.request('/rest/api/source', {
    body: { name: `${tag}_files`, template: 'file', translator: 'file', connectionProps: `ParentDirectory=${folder}` },
  });
  assert.equal(added.status, 201, await added.text());
  await seenWithin(1000, 'the file source on b', async () => {
    assert.deepEqual(await okJson(await sql(b, `SELECT label FROM ${tag}_files.nums ORDER BY n`)), [['one'], ['two']]);
  });
});

test('a token revoked on one instance is refused on the other within a second', async () => {
  await a.services.users.addPasswordUser('tina', 'tina-password-1');
  const { token } = await okJson<{ token: string }>(
    await a.request('/api/login', { body: { username: 'tina', password: 'tina-password-1' }, headers: { authorization: '' } }),
  );
  const status = () => b.request('/rest/api/status', { headers: { authorization: '', 'x-auth-token': token } });
  await okJson(await status(), 'token before the revocation');
  await okJson(await sql(a, `CALL SYSADMIN.revokeTokens('tina')`), 'revoke on a');
  await seenWithin(1000, 'the revocation on b', async () => assertUnauthorizedPage(await status()));
});

test('a grant withdrawn on one instance is enforced on the other within a second', async () => {
  await b.services.users.addPasswordUser('gus', 'gus-password-1');
  await b.services.users.addRole('readers');
  await b.services.users.addUserRole('readers', 'gus');
  const grant = { role: 'readers', resource: SOURCE, condition: null, mask: null, maskOrder: null };
  const same = (x: string, y: string) => x.toLowerCase() === y.toLowerCase();
  await b.services.users.setPermissions({ ...grant, permissions: 'R' }, same);
  const asGus = () => sql(a, `SELECT count(*) FROM ${SOURCE}.items`, basicOf('gus', 'gus-password-1'));
  await seenWithin(1000, 'the grant on a', async () => assert.deepEqual(await okJson(await asGus()), [[2]]));
  await b.services.users.setPermissions({ ...grant, permissions: null }, same);
  await seenWithin(1000, 'the withdrawn grant on a', async () => {
    const response = await asGus();
    assert.notEqual(response.status, 200, 'still allowed');
    await assertApiError(response, 403, 'gus without the grant');
  });
});

test('changes made on both instances at once are all kept', async () => {
  const names = Array.from({ length: 8 }, (_, i) => `many${i}`);
  await Promise.all(names.map((name, i) => (i % 2 === 0 ? a : b).services.users.addRole(name)));
  for (const server of [a, b]) {
    await seenWithin(1000, 'every role on both', async () => {
      const roles = server.services.users.roles();
      for (const name of names) assert.ok(roles.includes(name), `${name} missing`);
    });
  }
  const stored = await db.query<{ key: string }>(`SELECT key FROM vdb.entries WHERE kind = 'roles' AND key LIKE 'many%'`);
  assert.equal(stored.length, names.length);
});

test('the audit log and the query log of both instances reach the catalog database', async () => {
  const marker = `${tag}_logged`;
  await okJson(await sql(a, `SELECT '${marker}' AS a_side`));
  await okJson(await sql(b, `SELECT '${marker}' AS b_side`));
  await seenWithin(5000, 'query log rows', async () => {
    const rows = await db.query<{ instance: string }>(`SELECT DISTINCT instance FROM vdb.query_log WHERE statement LIKE $1`, [
      `%${marker}%`,
    ]);
    assert.equal(rows.length, 2);
  });
  const audits = await db.query<{ action: string; user_name: string }>(
    `SELECT action, user_name FROM vdb.audit_log WHERE user_name = 'tina'`,
  );
  assert.ok(audits.length > 0, 'tina signed in: an audit entry');
});

test("SYSLOG.QueryLog and SYSLOG.AuditLog show every instance's entries, a statement just run included", async () => {
  const marker = `${tag}_syslog`;
  await okJson(await sql(a, `SELECT '${marker}' AS on_a`));
  const seenOn = async (server: TestServer) =>
    okJson<unknown[][]>(
      await sql(
        server,
        `SELECT "Statement" FROM SYSLOG.QueryLog WHERE "Statement" LIKE '%${marker}%' AND "Statement" NOT LIKE '%QueryLog%'`,
      ),
    );
  // On the instance that ran it at once (its queue is written before it reads); on the other
  // once a has written its queue (every 200 ms).
  assert.equal((await seenOn(a)).length, 1, 'a sees its own statement at once');
  await seenWithin(1000, 'b sees the statement run on a', async () => assert.equal((await seenOn(b)).length, 1));
  await okJson(await sql(b, `SELECT '${marker}' AS on_b`));
  await seenWithin(1000, 'a sees the statement run on b', async () => assert.equal((await seenOn(a)).length, 2));
  const both = await okJson<unknown[][]>(
    await sql(
      a,
      `SELECT "Statement" FROM SYSLOG.QueryLog WHERE "Statement" LIKE '%${marker}%' AND "Statement" NOT LIKE '%QueryLog%' ORDER BY "ID"`,
    ),
  );
  assert.deepEqual(
    both.map((r) => String(r[0]).replace(/.* AS /, '')),
    ['on_a', 'on_b'],
  );
  // The audit log too: tina's sign-in (made on one instance) is seen from both.
  for (const server of [a, b]) {
    const audits = await okJson<unknown[][]>(await sql(server, `SELECT count(*) FROM SYSLOG.AuditLog WHERE "UserName" = 'tina'`));
    assert.ok(Number(audits[0]![0]) > 0, 'tina signed in: an audit entry');
  }
});

test('the catalog database going away: unready, 503 with a JSON body, and a full recovery', async () => {
  // Changes under way when it goes: each is either committed (and kept) or refused with a 503.
  const roles = Array.from({ length: 30 }, (_, i) => `during${i}`);
  const writes = Promise.allSettled(roles.map((role) => a.services.users.addRole(role)));
  await db.block();
  try {
    for (const server of [a, b]) {
      await seenWithin(5000, 'unready', async () => {
        const body = await assertApiError(await server.request('/readyz', { headers: { authorization: '' } }), 503, 'readyz');
        assert.match(body.description, /catalog/);
      });
      const response = await sql(server, 'SELECT 1');
      assert.equal(response.headers.get('retry-after'), '1');
      const refused = await assertApiError(response, 503, 'a statement');
      assert.equal(refused.title, 'Catalog unavailable');
      assert.ok(refused.hint);
      await okJson(await server.request('/healthz', { headers: { authorization: '' } }), 'healthz');
    }
  } finally {
    await db.unblock();
  }
  for (const server of [a, b]) {
    await seenWithin(10_000, 'ready again', async () => {
      await okJson(await server.request('/readyz', { headers: { authorization: '' } }));
    });
  }
  const outcomes = await writes;
  const kept = roles.filter((_, i) => outcomes[i]!.status === 'fulfilled');
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') assert.equal((outcome.reason as ApiError).status, 503, String(outcome.reason));
  }
  for (const role of kept) assert.ok(b.services.users.roles().includes(role), `${role} was committed on a but is missing on b`);
  await a.services.users.addRole('after_outage');
  await seenWithin(1000, 'a change after the outage on b', async () => assert.ok(b.services.users.roles().includes('after_outage')));
  assert.deepEqual(await okJson(await sql(b, `SELECT count(*) FROM ${SOURCE}.items`)), [[2]]);
});

test('sources refreshed on one instance show their new tables on the other within a second', async () => {
  await pgAdmin.query(`CREATE TABLE ${tag}.extra (v text); INSERT INTO ${tag}.extra VALUES ('new')`);
  fs.writeFileSync(path.join(sharedFiles, 'csv', 'more.csv'), 'v\nmore\n');
  for (const source of [SOURCE, `${tag}_files`]) {
    await okJson(await sql(a, `CALL SYSADMIN.refreshDataSource('${source}')`), `refresh ${source} on a`);
  }
  await seenWithin(1000, 'the new tables on b', async () => {
    assert.deepEqual(await okJson(await sql(b, `SELECT v FROM ${SOURCE}.extra`)), [['new']]);
    assert.deepEqual(await okJson(await sql(b, `SELECT v FROM ${tag}_files.more`)), [['more']]);
  });
});

test('a source removed on one instance is gone on the other within a second', async () => {
  const removed = await b.request(`/rest/api/source/${SOURCE}`, { method: 'DELETE' });
  assert.ok(removed.status === 200 || removed.status === 204, await removed.text());
  await seenWithin(1000, 'the removal on a', async () => {
    await assertApiError(await sql(a, `SELECT name FROM ${SOURCE}.items`), 400, 'unknown schema');
  });
});

test('a catalog database that cannot be reached at start stops the start, saying so', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-no-catalog-'));
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  await assert.rejects(
    startTestServer({ dataDir, demo: false, catalog: { url: `${db.url}_missing` } }),
    /the catalog database \(catalog\.url\) cannot be used: .*does not exist/,
  );
});
