/**
 * Dependent-join keys sent to PostgreSQL as one array of the column's own type: the answers are
 * those of local evaluation for every key type the array form writes (integers of each width,
 * numeric, date), with keys that no value of the column can equal (out of range, fractions).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { UserDef } from '../../src/catalog/types.js';
import { Engine } from '../../src/engine/engine.js';
import type { Services } from '../../src/services.js';
import { dropTagged, engineRows, restrictedReader, servicesWithSources } from './fixtures.js';

const PG = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' };
const MY = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
const tag = `vdbt_${randomBytes(4).toString('hex')}`;
let services: Services;
let dataDir: string;
let pushed: Engine;
let local: Engine;
let admin: UserDef;

before(async () => {
  const client = new pg.Client(PG);
  await client.connect();
  await client.query(`CREATE SCHEMA ${tag}`);
  // 2,000 facts: bigger than the 150 keys, so the keys go to PostgreSQL.
  await client.query(`CREATE TABLE ${tag}.facts (id int, small smallint, big bigint, amount numeric(10,2), day date)`);
  await client.query(
    `INSERT INTO ${tag}.facts SELECT i, (i % 300) - 150, i * 1000000000::bigint, (i % 500) / 4.0, DATE '2025-01-01' + (i % 400) FROM generate_series(1, 2000) i`,
  );
  await client.query(`ANALYZE ${tag}.facts`);
  await client.end();
  const my = await mysql.createConnection(MY);
  await my.query(`CREATE DATABASE ${tag}`);
  await my.query(`CREATE TABLE ${tag}.keys (n int PRIMARY KEY, i bigint, d decimal(12,2), day date)`);
  // Integers beyond int4 and int2, fractions next to whole numbers written with a scale, dates.
  const rows = Array.from({ length: 150 }, (_, n) => [
    n,
    n % 10 === 0 ? 5_000_000_000 + n : n % 10 === 1 ? -40_000 - n : n * 7 - 200,
    n % 3 === 0 ? `${n}.50` : `${n * 3}.00`,
    `2025-${String((n % 12) + 1).padStart(2, '0')}-${String((n % 28) + 1).padStart(2, '0')}`,
  ]);
  await my.query(`INSERT INTO ${tag}.keys VALUES ?`, [rows]);
  await my.query(`ANALYZE TABLE ${tag}.keys`);
  await my.end();

  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-keys-'));
  services = await servicesWithSources(tag, dataDir);
  const { registry, runtime } = services;
  pushed = new Engine(registry, runtime, 'vdb', { pushdown: true, dependentJoin: { maxKeys: 1000, batchSize: 40 } });
  local = new Engine(registry, runtime, 'vdb', { pushdown: false, dependentJoin: { maxKeys: 1000, batchSize: 40 } });
  admin = services.users.find('admin')!;
});

after(async () => {
  await services?.close();
  await dropTagged(tag, dataDir);
});

const rows = (engine: Engine, sql: string) => engineRows(engine, admin, sql);

const CASES: Array<[string, string]> = [
  ['int4 column, bigint keys beyond its range', 'SELECT f.id, k.n FROM pg.facts f JOIN my.keys k ON k.i = f.id ORDER BY 1, 2'],
  ['int2 column, keys beyond its range', 'SELECT f.small, count(*) FROM pg.facts f JOIN my.keys k ON k.i = f.small GROUP BY 1 ORDER BY 1'],
  ['int8 column', 'SELECT f.id, k.n FROM pg.facts f JOIN my.keys k ON k.i = f.big ORDER BY 1, 2'],
  [
    'int4 column, decimal keys (fractions and whole numbers with a scale)',
    'SELECT f.id, k.d FROM pg.facts f JOIN my.keys k ON k.d = f.id ORDER BY 1, 2',
  ],
  ['numeric column', 'SELECT f.amount, count(*) FROM pg.facts f JOIN my.keys k ON k.d = f.amount GROUP BY 1 ORDER BY 1'],
  ['date column', 'SELECT f.day, count(*) FROM pg.facts f JOIN my.keys k ON k.day = f.day WHERE f.id > 100 GROUP BY 1 ORDER BY 1'],
];

for (const [what, sql] of CASES) {
  test(`keys as one PostgreSQL array: ${what}`, async () => {
    const a = await rows(pushed, sql);
    const b = await rows(local, sql);
    assert.notEqual(b.json, '[]', 'the join finds rows');
    assert.equal(a.json, b.json);
    const copy = a.sourceSql.find((q) => q.startsWith('COPY')) ?? '';
    assert.match(copy, /= ANY\('\{-?\d[^']*\}'\)/, copy);
    assert.doesNotMatch(copy, /more batch/, 'one statement');
  });
}

test('few keys are written as a list', async () => {
  const sql = 'SELECT f.id FROM pg.facts f JOIN my.keys k ON k.i = f.id WHERE k.n < 5 ORDER BY 1';
  const a = await rows(pushed, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  assert.match(a.sourceSql.find((q) => q.startsWith('COPY')) ?? '', /"id" IN \(/);
});

test('keys collected while the rows arrive: the same keys as the load; under a row condition, only the visible rows’ keys', async () => {
  const sql = 'SELECT f.id, k.n FROM pg.facts f JOIN my.keys k ON k.i = f.id WHERE k.n < 40 ORDER BY 1, 2';
  const admins = await rows(pushed, sql);
  assert.equal(admins.json, (await rows(local, sql)).json);
  const sentKeys = (copy: string) => (/= ANY\('\{([^']*)\}'\)|IN \(([^)]*)\)/.exec(copy) ?? []).slice(1).join('');
  // The keys of k.n < 40 (k.i in -40,039..-40,001, 5,000,000,000+, and n * 7 - 200), in order.
  const keys = sentKeys(admins.sourceSql.find((q) => q.startsWith('COPY')) ?? '');
  assert.match(keys, /^-40031, ?-40021, ?-40011, ?-40001, ?-186,.*, ?5000000030$/);
  const rita = await restrictedReader(services, admin, 'keys', ["'my.keys', 'R', 'n % 2 = 0'"]);
  const restricted = await engineRows(pushed, rita, sql);
  assert.equal(restricted.json, (await engineRows(local, rita, sql)).json);
  const visible = sentKeys(restricted.sourceSql.find((q) => q.startsWith('COPY')) ?? '');
  assert.notEqual(visible, '');
  // Odd n are hidden: -40,001 - 10m (n = 10m + 1) and 7n - 200 for odd n never reach PostgreSQL.
  for (const key of visible.split(/,\s*/)) {
    const k = Number(key);
    const n = k <= -40_000 ? -40_000 - k : k >= 5_000_000_000 ? k - 5_000_000_000 : (k + 200) / 7;
    assert.equal(n % 2, 0, `key ${key} of a hidden row`);
  }
});

test('keys of two columns of one table, one collected early and one not (a date): the same answer as local evaluation', async () => {
  // Fact 1500 is of 2025-10-28 (day 300 of its 400-day cycle): one key row matches it on both.
  const my = await mysql.createConnection(MY);
  await my.query(`INSERT INTO ${tag}.keys VALUES (1000, 1500, 375.00, '2025-10-28')`);
  await my.end();
  const sql = 'SELECT f.id, k.n FROM pg.facts f JOIN my.keys k ON k.i = f.id AND k.day = f.day ORDER BY 1, 2';
  for (let i = 0; i < 3; i++) {
    const a = await rows(pushed, sql);
    assert.equal(a.json, '[[1500,1000]]');
    assert.equal(a.json, (await rows(local, sql)).json);
  }
});
