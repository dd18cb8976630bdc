/**
 * Copies of mode `changes` (docs/copies.md) over the real PostgreSQL's logical replication: a
 * refresh reads the table's changes from its replication slot and applies them by primary key,
 * so inserts, updates (of the key too), deletes and truncates reach the copy, which answers as
 * the live table does after each refresh; a failed refresh loses no change; slots end with
 * their copy or source.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import type { UserDef } from '../../src/catalog/types.js';
import type { RowConnector } from '../../src/connectors/types.js';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import type { CopyReading } from '../../src/sources/copies.js';
import { decodePgOutput, UNCHANGED } from '../../src/connectors/postgres/pgoutput.js';
import { engineRows, PG } from '../federation/fixtures.js';

let services: Services;
let dataDir: string;
let admin: UserDef;
let postgres: pg.Client;
const schema = `vdbcdc_${randomBytes(4).toString('hex')}`;
const plainRole = `${schema}_plain`;
const LIVE: CopyReading = { live: true, maxStaleness: null };

const rows = (sql: string, reading?: CopyReading) => engineRows(services.engine, admin, sql, reading);

const call = (sql: string) => rows(sql);
const pgq = (sql: string, values?: unknown[]) => postgres.query(sql, values);

/** The copy answers as the live table: the same rows, the same types, and no source asked. */
async function assertSameAsLive(table: string, what: string, sameTypes = true): Promise<void> {
  const sql = `SELECT * FROM pg.${table} ORDER BY id`;
  const copied = await rows(sql);
  const live = await rows(sql, LIVE);
  assert.deepEqual(copied.sources, [], `${what}: read from the copy`);
  assert.equal(copied.json, live.json, what);
  if (sameTypes) assert.deepEqual(copied.types, live.types, what);
  const counted = JSON.parse((await rows(`SELECT RowCount FROM SYS.Copies WHERE Name = 'pg.${table}'`)).json)[0][0];
  assert.equal(counted, JSON.parse(live.json).length, `${what}: SYS.Copies counts the rows`);
}

/** The kind and rows of the copy's last refresh. */
async function lastRefresh(name: string): Promise<[string, number, string]> {
  const sql = `SELECT Kind, RowCount, Status FROM SYSLOG.CopyRefreshes WHERE CopyName = '${name}' ORDER BY StartTime DESC LIMIT 1`;
  return JSON.parse((await rows(sql)).json)[0];
}

/** The replication slots and publications of a copy at the source. */
async function capturesOf(name: string): Promise<{ slots: string[]; publications: string[] }> {
  const prefix = `${services.registry.copies.find(name)!.capturePrefix!}_`;
  const slots = await pgq('SELECT slot_name FROM pg_replication_slots WHERE starts_with(slot_name, $1) ORDER BY 1', [prefix]);
  const pubs = await pgq('SELECT pubname FROM pg_publication WHERE starts_with(pubname, $1) ORDER BY 1', [prefix]);
  return { slots: slots.rows.map((r) => r.slot_name as string), publications: pubs.rows.map((r) => r.pubname as string) };
}

/** Waits for the first refresh a new copy starts by itself. */
async function firstVersion(name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [version, error] = JSON.parse((await rows(`SELECT Version, LastError FROM SYS.Copies WHERE Name = '${name}'`)).json)[0];
    if (version !== null || error !== null || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function accelerate(table: string): Promise<void> {
  await services.registry.refreshSource('pg');
  await call(`CALL SYSADMIN.accelerateTable('pg.${table}', 'changes')`);
  await firstVersion(`pg.${table}`);
}

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-cdc-'));
  postgres = new pg.Client(PG);
  await postgres.connect();
  await pgq(`CREATE SCHEMA ${schema}`);
  services = await createServices(loadConfig({}, { dataDir, adminPassword: 'cdc-test-pw', demo: false }), pino({ level: 'silent' }));
  await services.registry.addSource({
    name: 'pg',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
    model: { 'importer.schemaPattern': schema },
  });
  admin = services.users.find('admin')!;
});

after(async () => {
  await services?.close();
  // Whatever a failed test left: no slot of this run may outlive it (it would keep the log).
  const left = await pgq(
    `SELECT slot_name FROM pg_replication_slots WHERE slot_name IN
    (SELECT pubname FROM pg_publication_tables WHERE schemaname = $1)`,
    [schema],
  );
  for (const { slot_name } of left.rows) await pgq('SELECT pg_drop_replication_slot($1)', [slot_name]);
  const pubs = await pgq('SELECT DISTINCT pubname FROM pg_publication_tables WHERE schemaname = $1', [schema]);
  for (const { pubname } of pubs.rows) await pgq(`DROP PUBLICATION "${pubname}"`);
  await pgq(`DROP SCHEMA ${schema} CASCADE`);
  await pgq(`DROP ROLE IF EXISTS ${plainRole}`);
  await postgres?.end();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('inserts, updates (of the key too), deletes and NULLs of every kind of value reach the copy, which answers as the live table', async () => {
  const t = `${schema}.items`;
  await pgq(
    `CREATE TABLE ${t} (id int PRIMARY KEY, n numeric(12,3), d date, ts timestamp, tz timestamptz, s text, b bytea, j jsonb, f float8, ok boolean)`,
  );
  await pgq(`INSERT INTO ${t} SELECT g, g * 1.125, date '2025-01-01' + g, timestamp '2025-01-01 10:00:00.5' + g * interval '1 hour',
    timestamptz '2025-01-01 00:00:00+02' + g * interval '1 minute', 'text ' || g, decode(lpad(to_hex(g), 4, '0'), 'hex'),
    jsonb_build_object('g', g, 'tags', jsonb_build_array('a', g)), g / 3.0, g % 2 = 0 FROM generate_series(1, 200) g`);
  await accelerate('items');
  assert.deepEqual(await lastRefresh('pg.items'), ['full', 200, 'ok']);
  const { slots, publications } = await capturesOf('pg.items');
  assert.equal(slots.length, 1, 'one replication slot');
  assert.deepEqual(publications, slots, 'and its publication, of the same name');
  await assertSameAsLive('items', 'after the full read');

  await pgq(`INSERT INTO ${t} VALUES (201, -0.001, '0044-03-15 BC', '2026-02-28 23:59:59.999999', '2026-06-01 12:00:00-07', 'tab\tnew\nline ''q'' é', '\\x00ff5c', '{"x": [1, null, "é"]}', 'Infinity', true),
    (202, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`);
  await pgq(`UPDATE ${t} SET n = 99999.999, s = '', j = 'null', b = ''::bytea WHERE id = 3`);
  await pgq(`UPDATE ${t} SET s = NULL, d = NULL, f = 'NaN' WHERE id BETWEEN 10 AND 12`);
  await pgq(`UPDATE ${t} SET id = 1000 WHERE id = 2`);
  await pgq(`DELETE FROM ${t} WHERE id IN (5, 6, 7)`);
  await pgq(`BEGIN; INSERT INTO ${t} (id, s) VALUES (300, 'gone'); DELETE FROM ${t} WHERE id = 300; COMMIT`);
  await call(`CALL SYSADMIN.refreshCopy('pg.items')`);
  const [kind, changed] = await lastRefresh('pg.items');
  assert.equal(kind, 'incremental');
  assert.equal(changed, 12, 'the keys changed: 201, 202, 3, 10-12, 2, 1000, 5-7, 300');
  await assertSameAsLive('items', 'after inserts, updates and deletes');

  // A key deleted then inserted again, a row of the delta changed again, a key moved back.
  await pgq(`INSERT INTO ${t} (id, s) VALUES (5, 'back')`);
  await pgq(`UPDATE ${t} SET s = 'again' WHERE id = 201`);
  await pgq(`UPDATE ${t} SET id = 2 WHERE id = 1000`);
  await pgq(`DELETE FROM ${t} WHERE id = 202`);
  await call(`CALL SYSADMIN.refreshCopy('pg.items')`);
  assert.equal((await lastRefresh('pg.items'))[0], 'incremental');
  await assertSameAsLive('items', 'after changes of changed rows');

  // Nothing changed: a new version read now, the same rows.
  await call(`CALL SYSADMIN.refreshCopy('pg.items')`);
  assert.deepEqual((await lastRefresh('pg.items')).slice(0, 2), ['incremental', 0]);
  await assertSameAsLive('items', 'after a refresh without changes');

  // Many changes: the delta is folded into a new base.
  await pgq(`UPDATE ${t} SET n = n + 1 WHERE id % 2 = 0`);
  await call(`CALL SYSADMIN.refreshCopy('pg.items')`);
  assert.equal((await lastRefresh('pg.items'))[0], 'compaction');
  await assertSameAsLive('items', 'after a compaction');
  await pgq(`DELETE FROM ${t} WHERE id > 150`);
  await call(`CALL SYSADMIN.refreshCopy('pg.items')`);
  await assertSameAsLive('items', 'after deletes over a compacted base');
  assert.equal((await capturesOf('pg.items')).slots.length, 1, 'still one slot');
  await call(`CALL SYSADMIN.dropCopy('pg.items')`);
});

test('changes committed while the full read runs replay without changing the answer', async () => {
  const t = `${schema}.racing`;
  await pgq(`CREATE TABLE ${t} (id int PRIMARY KEY, v text)`);
  await pgq(`INSERT INTO ${t} SELECT g, 'v' || g FROM generate_series(1, 200) g`);
  await services.registry.refreshSource('pg');
  // Right after the slot is made, before the table is read: real writes at the source.
  const capture = (services.registry.connectorOf(services.registry.findSource('pg')!) as RowConnector).changeCapture!;
  const start = capture.start.bind(capture);
  capture.start = async (name, table) => {
    await start(name, table);
    await pgq(`UPDATE ${t} SET v = 'raced' WHERE id <= 10`);
    await pgq(`DELETE FROM ${t} WHERE id BETWEEN 11 AND 15`);
    await pgq(`INSERT INTO ${t} VALUES (201, 'new')`);
  };
  try {
    await call(`CALL SYSADMIN.accelerateTable('pg.racing', 'changes')`);
    await firstVersion('pg.racing');
  } finally {
    capture.start = start;
  }
  await assertSameAsLive('racing', 'the full read saw the changes');
  await call(`CALL SYSADMIN.refreshCopy('pg.racing')`);
  assert.deepEqual(await lastRefresh('pg.racing'), ['incremental', 16, 'ok'], 'the same changes read from the slot');
  await assertSameAsLive('racing', 'replayed over the rows that hold them already');
  await call(`CALL SYSADMIN.dropCopy('pg.racing')`);
});

test('a refresh that fails keeps the last good copy and loses no change', async () => {
  const t = `${schema}.money`;
  await pgq(`CREATE TABLE ${t} (id int PRIMARY KEY, amount numeric(10,2), note text)`);
  await pgq(`INSERT INTO ${t} SELECT g, g, 'n' || g FROM generate_series(1, 20) g`);
  await accelerate('money');
  const before = (await rows(`SELECT * FROM pg.money ORDER BY id`)).json;
  const slots = (await capturesOf('pg.money')).slots;
  await pgq(`DELETE FROM ${t} WHERE id = 1`);
  await pgq(`UPDATE ${t} SET note = 'kept' WHERE id = 2`);
  // The engine's DECIMAL holds no NaN: the copy cannot take this change, nor a full read of the table.
  await pgq(`UPDATE ${t} SET amount = 'NaN' WHERE id = 3`);
  await assert.rejects(call(`CALL SYSADMIN.refreshCopy('pg.money')`), /NaN/);
  assert.equal((await rows(`SELECT * FROM pg.money ORDER BY id`)).json, before, 'the last good copy answers');
  assert.deepEqual((await capturesOf('pg.money')).slots, slots, 'the slot the copy reads stays, not passed; none other is left');
  await pgq(`UPDATE ${t} SET amount = 3.5 WHERE id = 3`);
  await call(`CALL SYSADMIN.refreshCopy('pg.money')`);
  assert.deepEqual(await lastRefresh('pg.money'), ['incremental', 3, 'ok'], 'every change since the good copy, once');
  await assertSameAsLive('money', 'no change lost');
  await call(`CALL SYSADMIN.dropCopy('pg.money')`);
});

test('a numeric without declared scale: values of the copy column’s scale apply row by row, others read whole', async () => {
  const t = `${schema}.scaled`;
  await pgq(`CREATE TABLE ${t} (id int PRIMARY KEY, x numeric)`);
  await pgq(`INSERT INTO ${t} SELECT g, g + 0.25 FROM generate_series(1, 40) g`);
  await accelerate('scaled');
  await pgq(`UPDATE ${t} SET x = 7.75 WHERE id = 1`);
  await call(`CALL SYSADMIN.refreshCopy('pg.scaled')`);
  assert.equal((await lastRefresh('pg.scaled'))[0], 'incremental');
  // A copy (of any mode) types such a column by its values' scale, a live read by the catalog's DECIMAL(38,10): values compared only.
  await assertSameAsLive('scaled', 'a value of the same scale', false);
  await pgq(`UPDATE ${t} SET x = x + 0.001`);
  await call(`CALL SYSADMIN.refreshCopy('pg.scaled')`);
  assert.equal((await lastRefresh('pg.scaled'))[0], 'full', 'the column now has another scale');
  await assertSameAsLive('scaled', 'values of another scale', false);
  await call(`CALL SYSADMIN.dropCopy('pg.scaled')`);
});

test('an update that leaves a large (TOASTed) value out keeps the copy’s value', async () => {
  const t = `${schema}.docs`;
  await pgq(`CREATE TABLE ${t} (id int PRIMARY KEY, note text, body text)`);
  const big = `(SELECT string_agg(md5(random()::text || g), '') FROM generate_series(1, 400) g)`;
  await pgq(`INSERT INTO ${t} SELECT g, 'n' || g, ${big} FROM generate_series(1, 20) g`);
  await accelerate('docs');
  await pgq(`UPDATE ${t} SET note = 'touched' WHERE id <= 2`);
  await pgq(`INSERT INTO ${t} VALUES (21, 'new', ${big})`);
  await pgq(`UPDATE ${t} SET note = 'new and touched' WHERE id = 21`);
  // The slot's updates do leave the large values out.
  const [slot] = (await capturesOf('pg.docs')).slots;
  const peeked = await pgq(
    `SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2)`,
    [slot, `"${slot}"`],
  );
  const leftOut = peeked.rows.map((r) => decodePgOutput(r.data as Buffer)).filter((m) => m.kind === 'update' && m.row.includes(UNCHANGED));
  assert.equal(leftOut.length, 3);
  await call(`CALL SYSADMIN.refreshCopy('pg.docs')`);
  assert.match((await lastRefresh('pg.docs'))[0], /^(incremental|compaction)$/, 'applied row by row');
  await assertSameAsLive('docs', 'large values kept');
  await call(`CALL SYSADMIN.dropCopy('pg.docs')`);
});

test('a truncate or a changed column at the source reads the table whole', async () => {
  const t = `${schema}.wide`;
  await pgq(`CREATE TABLE ${t} (id int PRIMARY KEY, v text)`);
  await pgq(`INSERT INTO ${t} SELECT g, 'v' || g FROM generate_series(1, 30) g`);
  await accelerate('wide');
  const first = (await capturesOf('pg.wide')).slots;
  await pgq(`TRUNCATE ${t}`);
  await pgq(`INSERT INTO ${t} VALUES (1, 'after')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.wide')`);
  assert.deepEqual(await lastRefresh('pg.wide'), ['full', 1, 'ok']);
  await assertSameAsLive('wide', 'after a truncate');
  const second = (await capturesOf('pg.wide')).slots;
  assert.equal(second.length, 1, 'a full read starts a new slot and ends the old one');
  assert.notDeepEqual(second, first);

  await pgq(`ALTER TABLE ${t} ADD COLUMN extra int DEFAULT 7`);
  await pgq(`UPDATE ${t} SET v = 'changed'`);
  await services.registry.refreshSource('pg');
  await call(`CALL SYSADMIN.refreshCopy('pg.wide')`);
  assert.equal((await lastRefresh('pg.wide'))[0], 'full');
  await assertSameAsLive('wide', 'after a new column');
  await pgq(`INSERT INTO ${t} VALUES (2, 'two', 8)`);
  await call(`CALL SYSADMIN.refreshCopy('pg.wide')`);
  // One row more than the base's one: its delta is folded in at once.
  assert.equal((await lastRefresh('pg.wide'))[0], 'compaction', 'applied row by row');
  await assertSameAsLive('wide', 'changes after the new column');
  // A slot dropped at the source: the next refresh reads whole and starts another.
  await pgq('SELECT pg_drop_replication_slot($1)', [(await capturesOf('pg.wide')).slots[0]]);
  await pgq(`DELETE FROM ${t} WHERE id = 1`);
  await call(`CALL SYSADMIN.refreshCopy('pg.wide')`);
  assert.equal((await lastRefresh('pg.wide'))[0], 'full');
  assert.equal((await capturesOf('pg.wide')).slots.length, 1);
  await assertSameAsLive('wide', 'after the slot was dropped at the source');
  await call(`CALL SYSADMIN.dropCopy('pg.wide')`);
});

test('accelerating in mode changes: clear errors where the source cannot give changes', async () => {
  const refused = async (sql: string, pattern: RegExp) =>
    assert.rejects(call(sql), (err: Error & { status?: number; description?: string; hint?: string }) => {
      assert.equal(err.status, 400, err.message);
      assert.match(`${err.message} ${err.description ?? ''} ${err.hint ?? ''}`, pattern);
      return true;
    });
  await pgq(`CREATE TABLE ${schema}.nokey (id int, v text)`);
  await pgq(`CREATE TABLE ${schema}.keyed (id int PRIMARY KEY, v text)`);
  await services.registry.refreshSource('pg');
  await refused(`CALL SYSADMIN.accelerateTable('pg.nokey', 'changes')`, /no primary key/);
  await pgq(`CREATE TABLE ${schema}.binkey (k bytea PRIMARY KEY)`);
  await services.registry.refreshSource('pg');
  await refused(`CALL SYSADMIN.accelerateTable('pg.binkey', 'changes')`, /bytea/);
  await refused(`CALL SYSADMIN.accelerateTable('pg.keyed', 'changes', null, null, 'v')`, /no change column/);
  await refused(`CALL SYSADMIN.accelerateTable('pg.keyed', 'changes', null, null, null, 'v')`, /primary key/);
  // A user without the REPLICATION privilege.
  await pgq(`CREATE ROLE ${plainRole} LOGIN`);
  await pgq(`GRANT USAGE ON SCHEMA ${schema} TO ${plainRole}; GRANT SELECT ON ${schema}.keyed TO ${plainRole}`);
  await services.registry.addSource({
    name: 'plain',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': plainRole },
    model: { 'importer.schemaPattern': schema },
  });
  await refused(`CALL SYSADMIN.accelerateTable('plain.keyed', 'changes')`, /REPLICATION.*ALTER ROLE/s);
  await services.registry.removeSource('plain');
  const defined = `SELECT count(*) FROM SYS.Copies WHERE Name IN ('pg.nokey', 'pg.binkey', 'pg.keyed', 'plain.keyed')`;
  assert.equal(JSON.parse((await rows(defined)).json)[0][0], 0, 'no copy defined');
});

test('dropping the copy, or removing its source, drops its slot and publication', async () => {
  const t = `${schema}.dropped`;
  await pgq(`CREATE TABLE ${t} (id int PRIMARY KEY, v text)`);
  await pgq(`INSERT INTO ${t} VALUES (1, 'a')`);
  await accelerate('dropped');
  const prefix = services.registry.copies.find('pg.dropped')!.capturePrefix!;
  assert.equal((await capturesOf('pg.dropped')).slots.length, 1);
  await call(`CALL SYSADMIN.dropCopy('pg.dropped')`);
  const count = async () =>
    Number(
      (
        await pgq(
          'SELECT (SELECT count(*) FROM pg_replication_slots WHERE starts_with(slot_name, $1)) + (SELECT count(*) FROM pg_publication WHERE starts_with(pubname, $1)) AS n',
          [prefix],
        )
      ).rows[0].n,
    );
  assert.equal(await count(), 0, 'no slot or publication of the dropped copy');

  await accelerate('dropped');
  const again = services.registry.copies.find('pg.dropped')!.capturePrefix!;
  assert.equal((await capturesOf('pg.dropped')).slots.length, 1);
  await services.registry.removeSource('pg');
  const left = await pgq('SELECT count(*) AS n FROM pg_replication_slots WHERE starts_with(slot_name, $1)', [again]);
  assert.equal(Number(left.rows[0].n), 0, 'no slot of the removed source');
});
