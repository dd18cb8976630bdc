/**
 * vdb's own storage failing: the engine's spill budget spent, the data directory's disk full or
 * read-only. The answers name vdb (507 "vdb's storage is full", 503 "vdb's storage is
 * unavailable"), never the PostgreSQL source the rows came from; a refused catalog write leaves
 * the catalog as it was, across a restart; /readyz reports the data directory and recovers once
 * room is made. A real full disk is a small tmpfs (mounting needs root or CAP_SYS_ADMIN: without
 * it those tests are skipped, with the reason).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { parseCatalog } from '../../src/catalog/file-store.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOkJson, PG, pgClient, uniqueTag } from '../connectors/db.js';

const tag = uniqueTag();
/** Rows of `big`: about 50 MB in the engine, beyond its 32 MB of memory, so loading and sorting them spills. */
const BIG_ROWS = 700_000;
let pgAdmin: pg.Client;

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE VIEW ${tag}.big AS SELECT g AS id, md5(g::text) || md5((g + 1)::text) AS pad FROM generate_series(1, ${BIG_ROWS}) g;
    CREATE VIEW ${tag}.medium AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, 20000) g;
  `);
});

after(async () => {
  await pgAdmin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await pgAdmin?.end();
});

/** The engine loads whole tables (pushdown off) into 32 MB of memory: `big` must spill. */
const SPILLING = { demo: false, pushdown: false, engineMemoryLimit: '32MB' } as const;
/** A statement whose load of `big` spills. */
const SPILL_SQL = `SELECT count(*), max(pad) FROM pg.big`;

async function addPgSource(server: TestServer): Promise<void> {
  const added = await server.request('/rest/api/source', {
    body: {
      name: 'pg',
      template: 'postgresql',
      connectionProps: `host=${PG.host},port=${PG.port},db=${PG.database},user-name=${PG.user}`,
      modelProps: `importer.schemaPattern=${tag}`,
    },
  });
  assert.equal(added.status, 201, await added.text());
}

const query = (server: TestServer, sql: string, params = '') => server.request(`/rest/api/query${params}`, { body: { sql } });

/** The answer names vdb's storage, not the source. */
function namesVdb(body: { title: string; description: string }, title: RegExp, what: string): void {
  assert.match(body.title, title, `${what}: ${JSON.stringify(body)}`);
  assert.doesNotMatch(`${body.title} ${body.description}`, /Data source|"pg"/, `${what}: not blamed on the source`);
}

describe('the engine spill budget (engineSpillLimit)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ...SPILLING, engineSpillLimit: '1MB' });
    await addPgSource(server);
  });
  after(async () => {
    await server?.close();
  });

  test('a statement that spills past engineSpillLimit answers 507 naming vdb, not the source', async () => {
    const body = await expectError(await query(server, SPILL_SQL), 507, 'spill past the budget');
    namesVdb(body, /^vdb's storage is full$/, 'spill budget');
    assert.match(body.description, /engineSpillLimit/);
    assert.doesNotMatch(body.description, /Possible solutions/, 'no tuning advice of the engine');
    assert.ok(!body.description.includes(server.dataDir), 'no path of the data directory');
    // The server goes on: a small statement on the same source answers.
    const small = await expectOkJson<unknown[][]>(await query(server, `SELECT count(*) FROM pg.medium`), 'after');
    assert.deepEqual(small, [[20000]]);
  });
});

/** Mounts a tmpfs of `bytes` at `dir`: null, or why it cannot be done here. */
function mountTmpfs(dir: string, bytes: number): string | null {
  fs.mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return `a full disk is a small tmpfs, and mounting one is not permitted here (needs root or CAP_SYS_ADMIN): ${stderr || (err as Error).message}`;
  }
}

/**
 * Remounts `dir`'s tmpfs read-only or writable. A file still open for writing there (the engine
 * or the cursor store closing one of the statement before) makes a read-only remount "busy" for
 * a moment: tried again for up to 5 s.
 */
function remount(dir: string, mode: 'ro' | 'rw'): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' });
      return;
    } catch (err) {
      const busy = /busy/i.test((err as { stderr?: Buffer }).stderr?.toString() ?? '');
      if (!busy || attempt >= 50) throw err;
      Atomics.wait(pause, 0, 0, 100);
    }
  }
}

/** Fills the file system of `dir` to the last block; returns the file that holds the filling. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [1024 * 1024, 4096, 1]) {
      const block = Buffer.alloc(size, 1);
      try {
        for (;;) fs.writeSync(fd, block);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

const mountPoint = `/tmp/vdb-full-${tag}`;
/** Room for the catalog and the spill files of SPILL_SQL. */
const DISK_BYTES = 96 * 1024 * 1024;
const cannotMount = mountTmpfs(mountPoint, DISK_BYTES);

describe('a full or read-only data directory', { skip: cannotMount ?? false }, () => {
  const dataDir = path.join(mountPoint, 'data');
  let server: TestServer;
  let filler = '';
  const config = { ...SPILLING, dataDir, dataDirMinFreeBytes: 1024 * 1024, pagination: { memoryBytes: 4096 } };

  before(async () => {
    server = await startTestServer(config);
    await addPgSource(server);
  });
  after(async () => {
    await server?.close();
    try {
      execFileSync('umount', [mountPoint], { stdio: 'pipe' });
    } catch {
      // Still busy (a file of the engine being closed): detached now, freed when the last file closes.
      execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
    }
    fs.rmSync(mountPoint, { recursive: true, force: true });
  });

  const readyz = () => fetch(`${server.url}/readyz`);

  test('with room, /readyz checks the data directory and is ready', async () => {
    const ready = await expectOkJson<{ checks: Record<string, string> }>(await readyz(), 'readyz');
    assert.equal(ready.checks.dataDir, 'ok');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const free = Number(/^vdb_data_dir_free_bytes (\d+)/m.exec(metrics)?.[1]);
    assert.ok(free > 1024 * 1024 && free <= DISK_BYTES, `the free bytes of the tmpfs: ${free}`);
  });

  test('full: /readyz is 503 naming the data directory', async () => {
    filler = fill(mountPoint);
    const body = await expectError(await readyz(), 503, 'readyz on a full disk');
    assert.equal(body.title, 'Not ready');
    assert.match(body.description, /dataDir: data directory full \(\d+ bytes free/);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.ok(Number(/^vdb_data_dir_free_bytes (\d+)/m.exec(metrics)?.[1]) < 1024 * 1024, 'the gauge shows the disk full');
  });

  test('full: a statement that spills answers 507 naming vdb, not the source', async () => {
    const body = await expectError(await query(server, SPILL_SQL), 507, 'spill on a full disk');
    namesVdb(body, /^vdb's storage is full$/, 'spill');
    assert.match(body.description, /spill files.*No space left on device/);
  });

  test('full: building a cursor (pagination=true) answers 507 naming vdb, not the source', async () => {
    const body = await expectError(
      await query(server, `SELECT id, pad FROM pg.medium ORDER BY id`, '?pagination=true&limit=10'),
      507,
      'cursor on a full disk',
    );
    namesVdb(body, /^vdb's storage is full$/, 'cursor');
    assert.match(body.description, /paginated result/);
  });

  test('full: catalog writes answer 507 and leave the catalog as it was, across a restart', async () => {
    const before = fs.readFileSync(path.join(dataDir, 'catalog.json'), 'utf8');
    const user = await expectError(await query(server, `CALL SYSADMIN.addUser('ann_${tag}', 'Secret-pass-1')`), 507, 'addUser');
    namesVdb(user, /^vdb's storage is full$/, 'addUser');
    assert.match(user.description, /the catalog/);
    const source = await server.request('/rest/api/source', {
      body: {
        name: 'pg2',
        template: 'postgresql',
        connectionProps: `host=${PG.host},port=${PG.port},db=${PG.database},user-name=${PG.user}`,
      },
    });
    namesVdb(await expectError(source, 507, 'createDataSource'), /^vdb's storage is full$/, 'createDataSource');
    assert.equal(fs.readFileSync(path.join(dataDir, 'catalog.json'), 'utf8'), before, 'catalog.json untouched');
    assert.deepEqual(
      fs.readdirSync(dataDir).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file left behind',
    );
    // This instance still shows what the catalog holds, and so does a new one on the same data directory.
    const users = async (s: TestServer) =>
      (await expectOkJson<unknown[][]>(await query(s, 'SELECT Name FROM SYSADMIN.Users ORDER BY Name'), 'users')).flat();
    assert.deepEqual(await users(server), ['admin']);
    await server.close();
    server = await startTestServer(config);
    assert.deepEqual(await users(server), ['admin'], 'after the restart');
    const catalog = parseCatalog(fs.readFileSync(path.join(dataDir, 'catalog.json'), 'utf8'));
    assert.deepEqual(
      catalog.sources.map((s) => s.name),
      ['pg'],
      'the source added before the disk filled is kept, the refused one is not there',
    );
  });

  test('room made: /readyz is ready again and the same statements answer', async () => {
    fs.rmSync(filler);
    assert.equal((await readyz()).status, 200);
    const [[count]] = await expectOkJson<unknown[][]>(await query(server, SPILL_SQL), 'spill');
    assert.equal(count, BIG_ROWS);
    const page = await query(server, `SELECT id, pad FROM pg.medium ORDER BY id`, '?pagination=true&limit=10');
    assert.equal(page.status, 200, await page.text());
    const added = await query(server, `CALL SYSADMIN.addUser('ann_${tag}', 'Secret-pass-1')`);
    assert.equal(added.status, 200, await added.text());
  });

  test('read-only: /readyz is 503, writes answer 503 naming vdb; writable again, ready again', async () => {
    // A file open for writing (the engine's spill file) keeps a mount from turning read-only: a fresh instance has none.
    await server.close();
    server = await startTestServer(config);
    remount(mountPoint, 'ro');
    try {
      const ready = await expectError(await readyz(), 503, 'readyz read-only');
      assert.match(ready.description, /dataDir: data directory not writable \(EROFS/);
      const user = await expectError(await query(server, `CALL SYSADMIN.addUser('bob_${tag}', 'Secret-pass-1')`), 503, 'addUser');
      namesVdb(user, /^vdb's storage is unavailable$/, 'addUser read-only');
      assert.match(user.description, /the catalog.*EROFS/);
      const cursor = await expectError(
        await query(server, `SELECT id, pad FROM pg.medium ORDER BY id`, '?pagination=true&limit=10'),
        503,
        'cursor read-only',
      );
      namesVdb(cursor, /^vdb's storage is unavailable$/, 'cursor read-only');
      const spill = await expectError(await query(server, SPILL_SQL), 503, 'spill read-only');
      namesVdb(spill, /^vdb's storage is unavailable$/, 'spill read-only');
      // What writes nothing answers.
      assert.deepEqual(await expectOkJson(await query(server, 'SELECT count(*) FROM pg.medium'), 'read'), [[20000]]);
    } finally {
      remount(mountPoint, 'rw');
    }
    assert.equal((await readyz()).status, 200);
  });
});
