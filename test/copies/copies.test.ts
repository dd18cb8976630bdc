/**
 * Local copies (docs/copies.md) over the real PostgreSQL, MariaDB and SQLite of the federation
 * fixture: every statement of the federation corpus answers the same from copies as live, refresh
 * modes bring in what changed at the source, a failed refresh keeps the last good copy, copies
 * obey permissions as their tables do, and staleness bounds send statements back to the sources.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import type { UserDef } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import type { CopyReading } from '../../src/sources/copies.js';
import { CROSS_SOURCE, PER_SOURCE, SOURCES } from '../federation/corpus.js';
import { addFixtureSources, createFixture, engineRows, PG, restrictedReader, type Fixture } from '../federation/fixtures.js';

let services: Services;
let fixture: Fixture;
let dataDir: string;
let admin: UserDef;
let postgres: pg.Client;

const LIVE: CopyReading = { live: true, maxStaleness: null };

const rows = (sql: string, user = admin, reading?: CopyReading) => engineRows(services.engine, user, sql, reading);

const call = (sql: string, user = admin) => rows(sql, user);
const copyRow = async (name: string) =>
  JSON.parse(
    (await rows(`SELECT State, RowCount, Version, Failures, LastError FROM SYS.Copies WHERE Name = '${name}'`)).json,
  )[0] as unknown[];

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-copies-'));
  const fileRoot = path.join(dataDir, 'files');
  fs.mkdirSync(fileRoot);
  fixture = await createFixture(fileRoot);
  services = await createServices(loadConfig({}, { dataDir, adminPassword: 'copies-test-pw', demo: false }), pino({ level: 'silent' }));
  await addFixtureSources(services, fixture, { lite: true });
  admin = services.users.find('admin')!;
  postgres = new pg.Client(PG);
  await postgres.connect();
});

after(async () => {
  await postgres?.end();
  await services?.close();
  await fixture?.cleanup();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('every statement of the federation corpus answers the same from copies as live', () => {
  // Every table of every source the corpus reads.
  const tables = () => SOURCES.flatMap((s) => services.registry.findSource(s)!.tables.map((t) => `${s}.${t.name}`));
  before(async () => {
    for (const table of tables()) {
      await call(`CALL SYSADMIN.accelerateTable('${table}')`);
      await call(`CALL SYSADMIN.refreshCopy('${table}')`);
    }
  });
  const statements = [...PER_SOURCE.flatMap((t) => SOURCES.map((s) => t.replaceAll('{s}', s))), ...CROSS_SOURCE];
  for (const sql of statements) {
    test(sql, async () => {
      const live = await rows(sql, admin, LIVE).catch((err: Error) => ({ refused: err.message }));
      const copied = await rows(sql).catch((err: Error) => ({ refused: err.message }));
      if ('refused' in live || 'refused' in copied) {
        assert.deepEqual(copied, live, 'a statement refused live is refused from copies, and the other way round');
        return;
      }
      assert.equal(copied.json, live.json);
      assert.deepEqual(copied.types, live.types);
      // Every table the statement reads has a copy: no source is asked.
      assert.deepEqual(copied.sources, []);
    });
  }
  after(async () => {
    for (const table of tables()) await call(`CALL SYSADMIN.dropCopy('${table}')`);
  });
});

test('a full refresh is built aside and swapped: the copy shows the source as it was read, EXPLAIN names it', async () => {
  await postgres.query(`CREATE TABLE ${fixture.pgSchema}.events (id int PRIMARY KEY, kind text, at timestamp)`);
  await postgres.query(
    `INSERT INTO ${fixture.pgSchema}.events SELECT g, 'k' || (g % 3), timestamp '2025-01-01' + g * interval '1 hour' FROM generate_series(1, 100) g`,
  );
  await services.registry.refreshSource('pg');
  await call(`CALL SYSADMIN.accelerateTable('pg.events', 'full')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.events')`);
  await postgres.query(`DELETE FROM ${fixture.pgSchema}.events WHERE id > 90`);
  assert.equal((await rows('SELECT count(*) FROM pg.events')).json, '[[100]]', 'the copy, until its next refresh');
  assert.equal((await rows('SELECT count(*) FROM pg.events', admin, LIVE)).json, '[[90]]');
  const plan = (await rows('EXPLAIN SELECT kind, count(*) FROM pg.events GROUP BY kind')).json;
  assert.match(plan, /local copy/);
  assert.match(plan, /copy pg\.events, version \d+, read from pg at /);
  await call(`CALL SYSADMIN.refreshCopy('pg.events')`);
  assert.equal((await rows('SELECT count(*) FROM pg.events')).json, '[[90]]');
  const [state, count] = await copyRow('pg.events');
  assert.deepEqual([state, count], ['ready', 90]);
  await call(`CALL SYSADMIN.dropCopy('pg.events')`);
  assert.equal(JSON.parse((await rows(`SELECT count(*) FROM SYS.Copies WHERE Name = 'pg.events'`)).json)[0][0], 0);
  const files = fs.readdirSync(services.registry.copies.folder);
  assert.ok(
    files.every((f) => !fs.readdirSync(path.join(services.registry.copies.folder, f)).length),
    'no file of a dropped copy is left',
  );
});

test('append mode reads only the rows past the watermark; upsert mode replaces changed rows by key', async () => {
  const t = fixture.pgSchema;
  await postgres.query(`CREATE TABLE ${t}.ticks (id int PRIMARY KEY, v numeric(10,2), changed timestamptz)`);
  await postgres.query(
    `INSERT INTO ${t}.ticks SELECT g, g / 4.0, timestamptz '2025-01-01 00:00:00+00' + g * interval '1 s' FROM generate_series(1, 50) g`,
  );
  await services.registry.refreshSource('pg');
  await call(`CALL SYSADMIN.accelerateTable('pg.ticks', 'append', null, null, 'id')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.ticks')`);
  await postgres.query(`INSERT INTO ${t}.ticks SELECT g, g / 4.0, now() FROM generate_series(51, 60) g`);
  await call(`CALL SYSADMIN.refreshCopy('pg.ticks')`);
  const last = JSON.parse(
    (await rows(`SELECT Kind, RowCount FROM SYSLOG.CopyRefreshes WHERE CopyName = 'pg.ticks' ORDER BY StartTime DESC LIMIT 1`)).json,
  )[0];
  assert.deepEqual(last, ['incremental', 10], 'ten rows read from the source');
  assert.equal(
    (await rows('SELECT count(*), sum(v) FROM pg.ticks')).json,
    (await rows('SELECT count(*), sum(v) FROM pg.ticks', admin, LIVE)).json,
  );
  await call(`CALL SYSADMIN.dropCopy('pg.ticks')`);

  await call(`CALL SYSADMIN.accelerateTable('pg.ticks', 'upsert', null, null, 'changed')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.ticks')`);
  await postgres.query(`UPDATE ${t}.ticks SET v = -1, changed = now() + interval '1 minute' WHERE id IN (3, 7)`);
  await postgres.query(`INSERT INTO ${t}.ticks VALUES (61, 99, now() + interval '1 minute')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.ticks')`);
  const sql = 'SELECT id, v FROM pg.ticks WHERE v < 0 OR id > 60 ORDER BY id';
  assert.equal((await rows(sql)).json, '[[3,-1.00],[7,-1.00],[61,99.00]]');
  assert.equal((await rows('SELECT count(*) FROM pg.ticks')).json, '[[61]]', 'changed rows replace their old versions');
  // A deletion reaches an incremental copy with a full refresh.
  await postgres.query(`DELETE FROM ${t}.ticks WHERE id = 61`);
  await call(`CALL SYSADMIN.refreshCopy('pg.ticks', true)`);
  assert.equal((await rows('SELECT count(*) FROM pg.ticks')).json, '[[60]]');
  await call(`CALL SYSADMIN.dropCopy('pg.ticks')`);
});

test('a failed refresh keeps the last good copy and reports its error; the next good one clears it', async () => {
  const t = fixture.pgSchema;
  await call(`CALL SYSADMIN.accelerateTable('pg.tags')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.tags')`);
  const before = (await rows('SELECT * FROM pg.tags ORDER BY id')).json;
  await postgres.query(`ALTER TABLE ${t}.tags RENAME TO tags_away`);
  try {
    await assert.rejects(call(`CALL SYSADMIN.refreshCopy('pg.tags')`), (err: Error & { status?: number }) => {
      assert.ok(err.status !== undefined && err.status >= 400, `an API error, got ${err.message}`);
      return true;
    });
    const [state, , , failures, error] = await copyRow('pg.tags');
    assert.equal(state, 'failing (last good copy kept)');
    assert.equal(failures, 1);
    assert.match(String(error), /tags/);
    assert.equal((await rows('SELECT * FROM pg.tags ORDER BY id')).json, before, 'statements still read the last good copy');
  } finally {
    await postgres.query(`ALTER TABLE ${t}.tags_away RENAME TO tags`);
  }
  await call(`CALL SYSADMIN.refreshCopy('pg.tags')`);
  const [state, , , failures, error] = await copyRow('pg.tags');
  assert.deepEqual([state, failures, error], ['ready', 0, null]);
  await call(`CALL SYSADMIN.dropCopy('pg.tags')`);
});

test('a copy older than its bound, or than the request allows, is not read: the source is', async () => {
  await call(`CALL SYSADMIN.accelerateTable('my.tags', 'full', null, '1 s')`);
  await call(`CALL SYSADMIN.refreshCopy('my.tags')`);
  assert.deepEqual((await rows('SELECT count(*) FROM my.tags')).sources, []);
  assert.deepEqual((await rows('SELECT count(*) FROM my.tags', admin, LIVE)).sources, ['my'], 'maxStaleness 0 reads live');
  await new Promise((resolve) => setTimeout(resolve, 1200));
  assert.deepEqual((await rows('SELECT count(*) FROM my.tags')).sources, ['my'], 'past its bound');
  assert.deepEqual(
    (await rows('SELECT count(*) FROM my.tags', admin, { live: false, maxStaleness: 3600 })).sources,
    [],
    "a request's own bound",
  );
  await call(`CALL SYSADMIN.dropCopy('my.tags')`);
});

test('a scheduled copy refreshes by itself; a paused one does not', async () => {
  await call(`CALL SYSADMIN.accelerateTable('lite.tags', 'full', '1 s')`);
  const deadline = Date.now() + 8000;
  let version = 0;
  while (Date.now() < deadline && version < 3) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    version = Number((await copyRow('lite.tags'))[2] ?? 0);
  }
  assert.ok(version >= 3, `refreshed by the schedule (version ${version})`);
  await call(`CALL SYSADMIN.pauseCopy('lite.tags')`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const paused = Number((await copyRow('lite.tags'))[2]);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(Number((await copyRow('lite.tags'))[2]), paused);
  assert.equal((await copyRow('lite.tags'))[0], 'paused');
  await call(`CALL SYSADMIN.dropCopy('lite.tags')`);
});

test('copies obey permissions as their tables do: row conditions, masks, grants, and SYS.Copies', async () => {
  await call(`CALL SYSADMIN.accelerateTable('pg.customers')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.customers')`);
  const rita = await restrictedReader(services, admin, 'copyperm', [
    `'pg.customers', 'R', 'country = ''DE'''`,
    `'pg.customers.name', 'R', null, 'upper(name)'`,
    `'my.orders', ''`,
  ]);
  const sql = 'SELECT id, name FROM pg.customers ORDER BY id';
  const live = await rows(sql, rita, LIVE);
  const copied = await rows(sql, rita);
  assert.equal(copied.json, live.json);
  assert.deepEqual(copied.sources, [], 'read from the copy');
  const all = JSON.parse((await rows('SELECT count(*) FROM pg.customers', admin)).json)[0][0] as number;
  assert.ok(JSON.parse(copied.json).length < all, 'only the rows the condition lets through');
  assert.ok(
    (JSON.parse(copied.json) as Array<[number, string]>).every(([, name]) => name === name.toUpperCase()),
    'masked',
  );
  const visible = JSON.parse((await rows('SELECT Name FROM SYS.Copies ORDER BY 1', rita)).json);
  assert.deepEqual(visible, [['pg.customers']]);
  await call(`CALL SYSADMIN.accelerateTable('my.orders')`);
  await call(`CALL SYSADMIN.refreshCopy('my.orders')`);
  await assert.rejects(rows('SELECT * FROM my.orders', rita), (err: Error & { status?: number }) => err.status === 403);
  assert.deepEqual(JSON.parse((await rows('SELECT Name FROM SYS.Copies ORDER BY 1', rita)).json), [['pg.customers']]);
  await assert.rejects(call(`CALL SYSADMIN.refreshCopy('pg.customers')`, rita), (err: Error & { status?: number }) => err.status === 403);
  await call(`CALL SYSADMIN.dropCopy('pg.customers')`);
  await call(`CALL SYSADMIN.dropCopy('my.orders')`);
});

test('defining a copy: clear errors for what cannot be copied', async () => {
  const refused = async (sql: string, status: number, pattern: RegExp) =>
    assert.rejects(call(sql), (err: Error & { status?: number; description?: string }) => {
      assert.equal(err.status, status, err.message);
      const { hint } = err as { hint?: string };
      assert.match(`${err.message} ${err.description ?? ''} ${hint ?? ''}`, pattern);
      return true;
    });
  await refused(`CALL SYSADMIN.accelerateTable('pg.nothing')`, 404, /does not exist/);
  await refused(`CALL SYSADMIN.accelerateTable('orders')`, 400, /schema\.table/);
  await refused(`CALL SYSADMIN.accelerateTable('SYS.Tables')`, 400, /not a table of a database source/);
  await refused(`CALL SYSADMIN.accelerateTable('pg.orders', 'sometimes')`, 400, /not a refresh mode/);
  await refused(`CALL SYSADMIN.accelerateTable('pg.orders', 'append')`, 400, /change column/);
  await refused(`CALL SYSADMIN.accelerateTable('pg.labels', 'upsert', null, null, 'id')`, 400, /no primary key/);
  await refused(`CALL SYSADMIN.accelerateTable('pg.orders', 'full', 'soon')`, 400, /not a duration/);
  await refused(`CALL SYSADMIN.refreshCopy('pg.orders')`, 404, /No copy/);
  await call(`CALL SYSADMIN.accelerateTable('pg.orders')`);
  await refused(`CALL SYSADMIN.accelerateTable('pg.orders')`, 409, /kept already/);
  await call(`CALL SYSADMIN.dropCopy('pg.orders')`);
});

test('the metrics count refreshes and show each copy’s staleness, rows and failures', async () => {
  await call(`CALL SYSADMIN.accelerateTable('my.customers')`);
  await call(`CALL SYSADMIN.refreshCopy('my.customers')`);
  const text = await services.metrics.registry.metrics();
  assert.match(text, /vdb_copy_refreshes_total\{copy="my.customers",kind="full",status="ok"\} [1-9]/);
  assert.match(text, /vdb_copy_staleness_seconds\{copy="my.customers"\} \d/);
  assert.match(text, /vdb_copy_rows\{copy="my.customers"\} 8\b/);
  assert.match(text, /vdb_copy_failures\{copy="my.customers"\} 0\b/);
  assert.match(text, /vdb_copy_refresh_duration_seconds_count\{copy="my.customers"\} [1-9]/);
  await call(`CALL SYSADMIN.dropCopy('my.customers')`);
});
