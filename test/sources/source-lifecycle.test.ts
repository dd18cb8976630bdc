/**
 * A source's life beyond adding it: the server starts whatever its sources' state (a PostgreSQL
 * source that does not answer, file sources outside the file roots or with their folder gone),
 * marks them unavailable (SYSADMIN.DataSources, /readyz), answers 503 on them, and takes them
 * back without a restart once they return; a metadata import that never ends is bounded;
 * SYSADMIN.alterDataSource changes a source's connection keeping its grants; and a data directory
 * serves one server process at a time.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOkJson, PG, pgClient, uniqueTag, waitUntil } from '../connectors/db.js';
import type { PostgresConnector } from '../../src/connectors/postgres/connector.js';
import { createCatalogDatabase } from '../catalog/pg-catalog.js';

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli.js');
const tag = uniqueTag();
const role = `${tag}_reader`;
let pgAdmin: pg.Client;
const tempDirs: string[] = [];

const tempDir = (what: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vdb-srclife-${what}-`));
  tempDirs.push(dir);
  return dir;
};

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE TABLE ${tag}.t (id int PRIMARY KEY, name text);
    INSERT INTO ${tag}.t VALUES (1, 'one'), (2, 'two'), (3, 'three');
    CREATE ROLE ${role} LOGIN PASSWORD 'first-password';
    GRANT USAGE ON SCHEMA ${tag} TO ${role};
    GRANT SELECT ON ${tag}.t TO ${role};
  `);
});

after(async () => {
  await pgAdmin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await pgAdmin?.query(`DROP ROLE IF EXISTS ${role}`);
  await pgAdmin?.end();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const query = (server: TestServer, sql: string, user?: [string, string]) =>
  server.request('/rest/api/query', { body: { sql }, headers: user ? { authorization: server.basic(...user) } : {} });

const rows = async (server: TestServer, sql: string, user?: [string, string]) =>
  expectOkJson<unknown[][]>(await query(server, sql, user), sql);

const statusOf = async (server: TestServer) =>
  Object.fromEntries(
    (await rows(server, `SELECT "Name", "Status", "StatusReason" FROM SYSADMIN."DataSources"`)).map(([name, status, reason]) => [
      name,
      { status, reason },
    ]),
  ) as Record<string, { status: string; reason: string | null }>;

const readyz = async (server: TestServer) => {
  const response = await fetch(`${server.url}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; unavailableSources?: string[] } };
};

test('the start goes on with sources down or outside the file roots; they answer 503 and come back without a restart', async () => {
  const proxy = await FaultProxy.start(PG.port);
  const dataDir = tempDir('data');
  const extraRoot = tempDir('root');
  const folder = path.join(extraRoot, 'sheets');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'regions.csv'), 'id,name\n1,north\n2,south\n');
  const defaultRoot = path.join(dataDir, 'files');
  let server = await startTestServer({ dataDir, fileRoots: [defaultRoot, extraRoot] });
  try {
    for (const body of [
      {
        name: 'pgl',
        template: 'postgresql',
        connectionProps: `host=127.0.0.1,port=${proxy.port},db=test,user-name=postgres`,
        modelProps: `importer.schemaPattern=${tag},connectTimeoutMs=1000`,
      },
      {
        name: 'pgd',
        template: 'postgresql',
        connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=postgres`,
        modelProps: `importer.schemaPattern=${tag}`,
      },
      { name: 'sheets', template: 'file', connectionProps: `ParentDirectory=${folder}` },
    ]) {
      const added = await server.request('/rest/api/source', { body });
      assert.equal(added.status, 201, await added.text());
    }
  } finally {
    await server.close();
  }

  // PostgreSQL behind the proxy stops answering; the demo sources fall outside the new roots; the folder goes.
  proxy.stall();
  fs.renameSync(folder, `${folder}.away`);
  server = await startTestServer({ dataDir, fileRoots: [extraRoot], sourceRetryMs: 200, sourceRetryMaxMs: 500 });
  try {
    const ready = await readyz(server);
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.equal(ready.body.status, 'ready');
    // The PostgreSQL source is found unavailable in the background, after its connect timeout.
    assert.ok(await waitUntil(async () => (await statusOf(server)).pgl?.status === 'unavailable', 10_000), 'pgl marked unavailable');
    const status = await statusOf(server);
    assert.equal(status.shop?.status, 'unavailable');
    assert.match(status.shop?.reason ?? '', /outside the allowed file roots/);
    assert.equal(status.files?.status, 'unavailable');
    assert.equal(status.sheets?.status, 'unavailable');
    assert.match(status.sheets?.reason ?? '', /folder not found/);
    assert.match(status.pgl?.reason ?? '', /connect timeout|timeout/i);
    assert.equal(status.pgd?.status, 'available');
    assert.equal(status.pgd?.reason, null);
    const stillReady = await readyz(server);
    assert.equal(stillReady.status, 200);
    assert.deepEqual([...(stillReady.body.unavailableSources ?? [])].sort(), ['files', 'pgl', 'sheets', 'shop']);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /^vdb_source_available\{source="pgl"\} 0$/m);
    assert.match(metrics, /^vdb_source_available\{source="pgd"\} 1$/m);

    // Statements on them: 503 naming the source and why; the others work.
    const shop = await expectError(await query(server, 'SELECT count(*) FROM shop.customers'), 503, 'shop');
    assert.match(shop.description, /"shop".*outside the allowed file roots/);
    const sheets = await expectError(await query(server, 'SELECT count(*) FROM sheets.regions'), 503, 'sheets');
    assert.match(sheets.description, /"sheets".*folder not found/);
    const pgl = await expectError(await query(server, 'SELECT count(*) FROM pgl.t'), 503, 'pgl');
    assert.match(pgl.description, /"pgl"/);
    assert.deepEqual(await rows(server, 'SELECT count(*) FROM pgd.t'), [[3]]);

    // Back: PostgreSQL answers again, the folder returns; both are taken back by the background checks alone.
    proxy.resume();
    fs.renameSync(`${folder}.away`, folder);
    assert.ok(
      await waitUntil(async () => {
        const now = await statusOf(server);
        return now.pgl?.status === 'available' && now.sheets?.status === 'available';
      }, 10_000),
      JSON.stringify(await statusOf(server)),
    );
    assert.deepEqual(await rows(server, 'SELECT count(*) FROM pgl.t'), [[3]]);
    assert.deepEqual(await rows(server, 'SELECT name FROM sheets.regions ORDER BY id'), [['north'], ['south']]);
    // Outside the roots stays so until the roots change (at a restart).
    assert.equal((await statusOf(server)).shop?.status, 'unavailable');
    assert.deepEqual([...((await readyz(server)).body.unavailableSources ?? [])].sort(), ['files', 'shop']);
  } finally {
    await server.close();
    await proxy.close();
  }
});

test('a first start whose demo lies outside the file roots goes on without the demo', async () => {
  const dataDir = tempDir('data');
  const server = await startTestServer({ dataDir, fileRoots: [tempDir('root')] });
  try {
    assert.equal((await readyz(server)).status, 200);
    assert.deepEqual(await statusOf(server), {});
  } finally {
    await server.close();
  }
});

test('a metadata import that never ends is bounded: adding fails with 503 and keeps nothing, refreshing marks the source unavailable', async () => {
  const proxy = await FaultProxy.start(PG.port);
  const server = await startTestServer({ demo: false, metadataTimeoutMs: 1500, sourceRetryMs: 200, sourceRetryMaxMs: 500 });
  try {
    const body = (name: string) => ({
      name,
      template: 'postgresql',
      connectionProps: `host=127.0.0.1,port=${proxy.port},db=test,user-name=postgres`,
      modelProps: `importer.schemaPattern=${tag},connectTimeoutMs=1000`,
    });
    // The connection answers (SELECT 1), the import's statement never does.
    proxy.stallOn('pg_class');
    const started = Date.now();
    const failed = await expectError(await server.request('/rest/api/source', { body: body('stalled') }), 503, 'stalled add');
    assert.ok(Date.now() - started < 20_000, `answered after ${Date.now() - started} ms`);
    assert.match(failed.description, /"stalled".*metadataTimeoutMs \(1500 ms\)/);
    assert.equal(server.services.registry.findSource('stalled'), undefined);
    assert.deepEqual(await rows(server, `SELECT count(*) FROM SYSADMIN."DataSources" WHERE "Name" = 'stalled'`), [[0]]);

    proxy.stallOn(null);
    const added = await server.request('/rest/api/source', { body: body('later') });
    assert.equal(added.status, 201, await added.text());
    proxy.stallOn('pg_class');
    const refresh = await expectError(await query(server, `CALL SYSADMIN.refreshDataSource('later')`), 503, 'stalled refresh');
    assert.match(refresh.description, /metadataTimeoutMs/);
    // As the refresh left it (the background check, 200 ms later, may find it back already).
    assert.equal(server.services.registry.statusOf('later').available, false);
    proxy.stallOn(null);
    proxy.cut();
    assert.ok(await waitUntil(async () => (await statusOf(server)).later?.status === 'available', 10_000), 'later back');
    assert.deepEqual(await rows(server, 'SELECT count(*) FROM later.t'), [[3]]);
  } finally {
    await server.close();
    await proxy.close();
  }
});

test('SYSADMIN.alterDataSource: a wrong setting leaves the source as it was; a new one keeps grants, conditions and views', async () => {
  const proxy = await FaultProxy.start(PG.port);
  const server = await startTestServer({ demo: false });
  const alice: [string, string] = [`${tag}_alice`, 'alice-password-1'];
  try {
    const added = await server.request('/rest/api/source', {
      body: {
        name: 'pga',
        template: 'postgresql',
        connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=${role}`,
        encryptedProperties: 'password=first-password',
        modelProps: `importer.schemaPattern=${tag},connectTimeoutMs=2000`,
      },
    });
    assert.equal(added.status, 201, await added.text());
    for (const sql of [
      `CALL SYSADMIN.addUser('${alice[0]}', '${alice[1]}')`,
      `CALL SYSADMIN.addRole('${tag}_r')`,
      `CALL SYSADMIN.addUserRole('${tag}_r', '${alice[0]}')`,
      `CALL SYSADMIN.setPermissions('${tag}_r', 'pga.t', 'R', 'id > 1')`,
      `CREATE VIEW ${tag}_views.names AS SELECT name FROM pga.t WHERE id < 3`,
    ])
      await rows(server, sql);
    const aliceSees = () => rows(server, 'SELECT id FROM pga.t ORDER BY id', alice);
    assert.deepEqual(await aliceSees(), [[2], [3]]);
    const catalogFile = path.join(server.dataDir, 'catalog.json');
    const stored = () =>
      (
        JSON.parse(fs.readFileSync(catalogFile, 'utf8')) as {
          sources: Array<{
            name: string;
            connection: Record<string, string>;
            secrets: Record<string, string>;
            tables: Array<{ oid: number }>;
          }>;
        }
      ).sources.find((s) => s.name === 'pga')!;
    const before = stored();

    // Wrong port, wrong database: refused, nothing changed, the source still serves.
    const wrongPort = await expectError(
      await query(server, `CALL SYSADMIN.alterDataSource('pga', 'host=127.0.0.1,port=1,db=test,user-name=${role}', 'password=x')`),
      503,
      'wrong port',
    );
    assert.match(wrongPort.description, /"pga"/);
    const wrongDb = await expectError(
      await query(server, `CALL SYSADMIN.alterDataSource('pga', 'host=127.0.0.1,port=${PG.port},db=${tag}_nodb,user-name=${role}')`),
      503,
      'wrong database',
    );
    assert.match(wrongDb.description, /"pga".*does not exist/);
    assert.deepEqual(stored(), before);
    assert.deepEqual(await aliceSees(), [[2], [3]]);

    // Only the password: stored sealed, applied to the new connections.
    assert.deepEqual(
      await rows(server, `CALL SYSADMIN.alterDataSource(name => 'pga', encryptedProperties => 'password=second-password')`),
      [['pga', 'postgresql', 1]],
    );
    const sealed = stored();
    assert.deepEqual(sealed.connection, before.connection);
    assert.match(sealed.secrets.password ?? '', /^v1:/);
    assert.notEqual(sealed.secrets.password, before.secrets.password);
    assert.ok(!fs.readFileSync(catalogFile, 'utf8').includes('second-password'), 'the password is not in the catalog in clear');
    const source = server.services.registry.findSource('pga')!;
    const connector = server.services.registry.connectorOf(source) as PostgresConnector;
    assert.equal((connector as unknown as { pool: { options: { password?: string } } }).pool.options.password, 'second-password');

    // Through the proxy now: the new host and port are used, grants, condition and view kept.
    const bytes = proxy.bytesDown;
    await rows(
      server,
      `CALL SYSADMIN.alterDataSource('pga', 'host=127.0.0.1,port=${proxy.port},db=test,user-name=${role}', 'password=third-password')`,
    );
    assert.deepEqual(await aliceSees(), [[2], [3]]);
    assert.ok(proxy.bytesDown > bytes, 'the statement went through the new port');
    assert.deepEqual(await rows(server, `SELECT name FROM ${tag}_views.names ORDER BY name`), [['one'], ['two']]);
    assert.deepEqual(
      stored().tables.map((t) => t.oid),
      before.tables.map((t) => t.oid),
    );
    const [[props]] = await rows(server, `SELECT "Connection" FROM SYSADMIN."DataSources" WHERE "Name" = 'pga'`);
    assert.match(String(props), new RegExp(`port=${proxy.port}`));
    assert.doesNotMatch(String(props), /password/);

    // Audited like other changes; the statements' secrets are not kept.
    const audits = await rows(
      server,
      `SELECT "Outcome" FROM SYSLOG."AuditLog" WHERE "Action" = 'SYSADMIN.alterDataSource' AND "Target" = 'pga' ORDER BY "ID"`,
    );
    assert.deepEqual(audits, [['failed'], ['failed'], ['ok'], ['ok']]);
    const logged = await rows(server, `SELECT "Statement" FROM SYSLOG."QueryLog" WHERE "Statement" LIKE '%alterDataSource%'`);
    assert.ok(logged.length > 0);
    for (const [text] of logged) assert.doesNotMatch(String(text), /password=/);

    // The same through REST: refused with a wrong port, then back to the direct port.
    const patch = (body: unknown, user?: [string, string]) =>
      server.request('/rest/api/source/pga', {
        method: 'PATCH',
        body,
        headers: user ? { authorization: server.basic(...user) } : {},
      });
    const viaProxy = stored();
    await expectError(await patch({ connectionProps: `host=127.0.0.1,port=1,db=test,user-name=${role}` }), 503, 'PATCH wrong port');
    assert.deepEqual(stored(), viaProxy);
    const changed = await expectOkJson<{ connectionProps: string; encryptedProperties: string }>(
      await patch({ connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=${role}`, encryptedProperties: 'password=fourth' }),
      'PATCH',
    );
    assert.match(changed.connectionProps, new RegExp(`port=${PG.port}`));
    assert.equal(changed.encryptedProperties, 'password');
    assert.deepEqual(await aliceSees(), [[2], [3]]);
    await expectError(await patch({ encryptedProperties: 'password=x' }, alice), 403, 'PATCH by alice');
    await expectError(await patch({ port: 5 }), 400, 'PATCH unknown field');
    await expectError(
      await server.request('/rest/api/source/nosuch', { method: 'PATCH', body: { encryptedProperties: 'password=x' } }),
      404,
      'PATCH unknown',
    );

    // Not for a user without ALTER on the schema; an unknown source is named.
    await expectError(await query(server, `CALL SYSADMIN.alterDataSource('pga', null, 'password=x')`, alice), 403, 'alice');
    await expectError(await query(server, `CALL SYSADMIN.alterDataSource('nosuch', null, 'password=x')`), [400, 404], 'unknown');
  } finally {
    await server.close();
    await proxy.close();
  }
});

test('an instance sharing the catalog follows a changed connection', async () => {
  const db = await createCatalogDatabase();
  const proxy = await FaultProxy.start(PG.port);
  const shared = { demo: false, catalog: { url: db.url, schema: 'vdb' } };
  const a = await startTestServer(shared);
  const b = await startTestServer(shared);
  try {
    const added = await a.request('/rest/api/source', {
      body: {
        name: 'pgs',
        template: 'postgresql',
        connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=postgres`,
        modelProps: `importer.schemaPattern=${tag}`,
      },
    });
    assert.equal(added.status, 201, await added.text());
    assert.ok(await waitUntil(async () => (await query(b, 'SELECT count(*) FROM pgs.t')).status === 200, 5000), 'b reads pgs');
    await rows(a, `CALL SYSADMIN.alterDataSource('pgs', 'host=127.0.0.1,port=${proxy.port},db=test,user-name=postgres')`);
    const bytes = proxy.bytesDown;
    assert.ok(
      await waitUntil(async () => {
        const [[connection]] = await rows(b, `SELECT "Connection" FROM SYSADMIN."DataSources" WHERE "Name" = 'pgs'`);
        return String(connection).includes(`port=${proxy.port}`);
      }, 5000),
      'b sees the new connection',
    );
    assert.deepEqual(await rows(b, 'SELECT count(*) FROM pgs.t'), [[3]]);
    assert.ok(proxy.bytesDown > bytes, "b's statement went through the new port");
  } finally {
    await a.close();
    await b.close();
    await proxy.close();
    await db.drop();
  }
});

/** Runs `vdb serve` on `dataDir` in a process of its own; resolves when it listens or ends. */
function serve(dataDir: string) {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', VDB_ADMIN_PASSWORD: ADMIN_PASSWORD, VDB_DEMO: 'false', VDB_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`vdb serve ended with ${code}: ${output}`)));
  });
  listening.catch(() => undefined);
  return { child, listening };
}

const runServe = (dataDir: string) =>
  new Promise<{ status: number | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'serve', '--data-dir', dataDir, '--port', '0'],
      {
        env: { PATH: process.env.PATH ?? '', VDB_ADMIN_PASSWORD: ADMIN_PASSWORD, VDB_DEMO: 'false', VDB_LOG_LEVEL: 'silent' },
        timeout: 30_000,
      },
      (err, _stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });

test('a second server on a data directory in use refuses to start; a lock left by a killed server does not block', async () => {
  const dataDir = tempDir('locked');
  const server = await startTestServer({ dataDir, demo: false });
  try {
    const second = await runServe(dataDir);
    assert.equal(second.status, 1);
    assert.match(second.stderr, new RegExp(`data directory ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use`));
    assert.match(second.stderr, new RegExp(`pid ${process.pid}\\b`));
    // The first one serves on.
    assert.deepEqual(await rows(server, 'SELECT 1'), [[1]]);
  } finally {
    await server.close();
  }
  assert.ok(!fs.existsSync(path.join(dataDir, 'vdb.lock')), 'the lock goes when the server closes');

  // A server killed with SIGKILL leaves its lock behind: the next start takes it over.
  const killed = serve(dataDir);
  await killed.listening;
  assert.equal(fs.readFileSync(path.join(dataDir, 'vdb.lock'), 'utf8').trim(), String(killed.child.pid));
  const gone = new Promise((resolve) => killed.child.once('exit', resolve));
  killed.child.kill('SIGKILL');
  await gone;
  assert.ok(fs.existsSync(path.join(dataDir, 'vdb.lock')), 'SIGKILL left the lock');
  const again = await startTestServer({ dataDir, demo: false });
  try {
    assert.deepEqual(await rows(again, 'SELECT 1'), [[1]]);
    assert.equal(fs.readFileSync(path.join(dataDir, 'vdb.lock'), 'utf8').trim(), String(process.pid));
  } finally {
    await again.close();
  }
});
