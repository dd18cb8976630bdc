/**
 * `vdb migrate-catalog` (issue 13): a data directory's catalog and secrets copied into a catalog
 * database; an instance on that database has the same users, passwords, grants, sources (their
 * sealed secrets open) and accepts the tokens the data directory's instance signed. A second run
 * refuses to overwrite.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { startTestServer } from '../helpers/server.js';
import { basicOf, okJson } from '../http/util.js';
import { createCatalogDatabase, type CatalogDatabase } from './pg-catalog.js';

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli.js');
const tag = uniqueTag();
const PG_PASSWORD = `pw-${tag}`;
let db: CatalogDatabase;
let pgAdmin: pg.Client;
let dataDir: string;

before(async () => {
  db = await createCatalogDatabase();
  pgAdmin = await pgClient();
  await pgAdmin.query(`CREATE SCHEMA ${tag}; CREATE TABLE ${tag}.t (id int); INSERT INTO ${tag}.t VALUES (7)`);
  // A role whose password the source's sealed secret holds: the source only works if the key came along.
  await pgAdmin.query(
    `CREATE ROLE ${tag} LOGIN PASSWORD '${PG_PASSWORD}'; GRANT USAGE ON SCHEMA ${tag} TO ${tag}; GRANT SELECT ON ${tag}.t TO ${tag}`,
  );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-migrate-'));
});

after(async () => {
  await db?.drop();
  await pgAdmin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE; DROP ROLE IF EXISTS ${tag}`);
  await pgAdmin?.end();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const migrate = (env: Record<string, string>, ...args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'migrate-catalog', '--data-dir', dataDir, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

test('a data directory migrated: same users, grants, source secrets and tokens on the catalog database', async () => {
  const before = await startTestServer({ dataDir, demo: false });
  let token: string;
  try {
    const added = await before.request('/rest/api/source', {
      body: {
        name: 'moved',
        template: 'postgresql',
        translator: 'postgresql',
        connectionProps: `host=127.0.0.1,port=5432,db=test,user-name=${tag},password=${PG_PASSWORD}`,
        modelProps: `importer.schemaPattern=${tag}`,
        translatorProps: '',
        encryptedProperties: '',
      },
    });
    assert.equal(added.status, 201, await added.text());
    await before.services.users.addPasswordUser('mia', 'mia-password-1');
    await before.services.users.addRole('movers');
    await before.services.users.addUserRole('movers', 'mia');
    await before.services.users.setPermissions(
      { role: 'movers', resource: 'moved', permissions: 'R', condition: null, mask: null, maskOrder: null },
      (x, y) => x === y,
    );
    ({ token } = await okJson<{ token: string }>(
      await before.request('/api/login', { body: { username: 'mia', password: 'mia-password-1' }, headers: { authorization: '' } }),
    ));
  } finally {
    await before.close();
  }

  const run = await migrate({ VDB_CATALOG_URL: db.url });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /2 users, 1 sources/);

  const after = await startTestServer({ demo: false, catalog: { url: db.url } });
  try {
    const query = (authorization: Record<string, string>) =>
      after.request('/rest/api/query', { body: { sql: 'SELECT id FROM moved.t' }, headers: { authorization: '', ...authorization } });
    assert.deepEqual(await okJson(await query({ authorization: basicOf('mia', 'mia-password-1') })), [[7]], 'password and grant');
    assert.deepEqual(await okJson(await query({ 'x-auth-token': token })), [[7]], 'a token signed before the migration');
  } finally {
    await after.close();
  }
});

test('a second migration into a schema that holds a catalog is refused and changes nothing', async () => {
  const [before] = await db.query<{ version: string }>('SELECT version FROM vdb.state');
  const run = await migrate({}, '--catalog-url', db.url);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /already holds a catalog.*nothing was copied/);
  const [now] = await db.query<{ version: string }>('SELECT version FROM vdb.state');
  assert.equal(now!.version, before!.version);
});

test('without a catalog database or a catalog: a sentence saying what is missing', async () => {
  const noUrl = await migrate({});
  assert.equal(noUrl.status, 1);
  assert.match(noUrl.stderr, /needs the catalog database: give --catalog-url or set VDB_CATALOG_URL/);
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-migrate-empty-'));
  try {
    const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [CLI, 'migrate-catalog', '--data-dir', empty, '--catalog-url', db.url, '--catalog-schema', 'other'],
        (err, _o, stderr) => resolve({ status: err ? 1 : 0, stderr }),
      );
    });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /nothing to migrate/);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});
