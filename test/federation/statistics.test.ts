/**
 * Distinct values and NULL shares imported with each source's tables (ColumnDef.distinct,
 * nullFraction), the statistics the choice of a join's plan uses (plan/cost.ts,
 * plan/selectivity.ts): PostgreSQL's pg_stats, MariaDB's index cardinality and
 * engine-independent statistics, SQLite's sqlite_stat1; none where the source keeps none (a
 * SQLite file never analyzed, CSV files). And a plan that changes when the statistics do, with
 * the same answer.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { SourceDef, UserDef } from '../../src/catalog/types.js';
import { Engine } from '../../src/engine/engine.js';
import { estimateJoin } from '../../src/engine/plan/cost.js';
import type { Services } from '../../src/services.js';
import { dropTagged, engineRows, servicesWithSources } from './fixtures.js';

const tag = `vdbt_${randomBytes(4).toString('hex')}`;
let services: Services;
let dataDir: string;
let admin: UserDef;

before(async () => {
  const client = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' });
  await client.connect();
  await client.query(`CREATE SCHEMA ${tag}`);
  await client.query(
    `CREATE TABLE ${tag}.t AS SELECT i AS id, i % 7 AS seven, md5(i::text) AS unique_text, NULLIF(i % 4, 0) AS sometimes FROM generate_series(1, 5000) i`,
  );
  // 20,000 facts over 5,000 dimension keys: big enough for the estimates to choose a plan.
  await client.query(
    `CREATE TABLE ${tag}.facts AS SELECT i AS id, i % 5000 AS dim_id, ((i % 97) / 4.0)::numeric(12,2) AS amount FROM generate_series(1, 20000) i`,
  );
  await client.query(`ANALYZE ${tag}.facts`);
  await client.query(`CREATE TABLE ${tag}.never_analyzed (id int)`);
  await client.query(`ANALYZE ${tag}.t`);
  await client.end();
  const my = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' });
  await my.query(`CREATE DATABASE ${tag}`);
  await my.query(`CREATE TABLE ${tag}.t (id int PRIMARY KEY, seven int, free int, KEY by_seven (seven, free))`);
  await my.query(`INSERT INTO ${tag}.t SELECT seq, seq % 7, seq FROM ${tag}.seq_1_to_2000`);
  await my.query(`ANALYZE TABLE ${tag}.t`);
  // Engine-independent statistics of unindexed columns: written by ANALYZE ... PERSISTENT only.
  await my.query(`CREATE TABLE ${tag}.u (id int PRIMARY KEY, grp int, maybe int)`);
  await my.query(`INSERT INTO ${tag}.u SELECT seq, seq % 5, IF(seq % 2 = 0, NULL, seq) FROM ${tag}.seq_1_to_2000`);
  await my.query(`ANALYZE TABLE ${tag}.u PERSISTENT FOR ALL`);
  // Dimensions: half of kind 'a', no index on kind, no statistics until the flip test analyzes them.
  await my.query(`CREATE TABLE ${tag}.dims (id int PRIMARY KEY, kind varchar(5))`);
  await my.query(`INSERT INTO ${tag}.dims SELECT seq, IF(seq % 2 = 0, 'a', 'b') FROM ${tag}.seq_0_to_4999`);
  await my.query(`ANALYZE TABLE ${tag}.dims`);
  await my.end();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-stats-'));
  // The SQLite file lives where file sources may be (the data directory's files/).
  fs.mkdirSync(path.join(dataDir, 'files'), { recursive: true });
  const file = path.join(dataDir, 'files', 'stats.db');
  const lite = new Database(file);
  lite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, ten INTEGER, free INTEGER); CREATE INDEX by_ten ON t (ten)');
  const insert = lite.prepare('INSERT INTO t VALUES (?, ?, ?)');
  for (let i = 1; i <= 1000; i++) insert.run(i, i % 10, i);
  lite.exec('ANALYZE');
  lite.close();
  // A file never analyzed: no sqlite_stat1, so no row estimate.
  const bare = new Database(path.join(dataDir, 'files', 'bare.db'));
  bare.exec('CREATE TABLE dims (id INTEGER PRIMARY KEY, kind TEXT)');
  const insertBare = bare.prepare('INSERT INTO dims VALUES (?, ?)');
  for (let i = 0; i < 300; i++) insertBare.run(i, i % 2 === 0 ? 'a' : 'b');
  bare.close();
  fs.mkdirSync(path.join(dataDir, 'files', 'csv'), { recursive: true });
  fs.writeFileSync(
    path.join(dataDir, 'files', 'csv', 'dims.csv'),
    'id,kind\n' + Array.from({ length: 300 }, (_, i) => `${i},${i % 2 === 0 ? 'a' : 'b'}`).join('\n') + '\n',
  );
  services = await servicesWithSources(tag, dataDir);
  await services.registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: file } });
  await services.registry.addSource({ name: 'bare', kind: 'sqlite', connection: { path: path.join(dataDir, 'files', 'bare.db') } });
  await services.registry.addSource({ name: 'files', kind: 'file', connection: { ParentDirectory: path.join(dataDir, 'files', 'csv') } });
  admin = services.users.find('admin')!;
});

after(async () => {
  await services?.close();
  await dropTagged(tag, dataDir);
});

const statistic = (key: 'distinct' | 'nullFraction') => (source: string, table: string) =>
  Object.fromEntries(
    (services.registry.findSource(source) as SourceDef).tables.find((t) => t.name === table)!.columns.map((c) => [c.name, c[key]]),
  );
const distinct = statistic('distinct');
const nulls = statistic('nullFraction');

test('PostgreSQL: n_distinct from pg_stats (a negative one as a share of the rows); none before ANALYZE', () => {
  const t = distinct('pg', 't');
  assert.equal(t.seven, 7);
  assert.ok(Math.abs(Number(t.id) - 5000) <= 50, `id: ${t.id}`);
  assert.ok(Math.abs(Number(t.unique_text) - 5000) <= 50, `unique_text: ${t.unique_text}`);
  assert.equal(distinct('pg', 'never_analyzed').id, undefined);
  // NULL shares from null_frac.
  assert.ok(Math.abs(Number(nulls('pg', 't').sometimes) - 0.25) < 0.02, `sometimes: ${nulls('pg', 't').sometimes}`);
  assert.equal(nulls('pg', 't').id, 0);
  assert.equal(nulls('pg', 'never_analyzed').id, undefined);
});

test('MariaDB: engine-independent statistics (ANALYZE ... PERSISTENT) give distinct values of unindexed columns and NULL shares', () => {
  const u = distinct('my', 'u');
  assert.ok(Number(u.grp) >= 4 && Number(u.grp) <= 6, `grp: ${u.grp}`);
  assert.ok(Math.abs(Number(nulls('my', 'u').maybe) - 0.5) < 0.05, `maybe: ${nulls('my', 'u').maybe}`);
  // Without them: nothing for an unindexed column.
  assert.equal(distinct('my', 'dims').kind, undefined);
  assert.equal(nulls('my', 'dims').kind, undefined);
});

test('MariaDB: the cardinality of the indexes a column leads; none for other columns', () => {
  const t = distinct('my', 't');
  assert.ok(Math.abs(Number(t.id) - 2000) <= 200, `id: ${t.id}`);
  assert.ok(Number(t.seven) >= 1 && Number(t.seven) <= 20, `seven: ${t.seven}`);
  assert.equal(t.free, undefined);
});

test('SQLite: from sqlite_stat1 for a column that leads an index', () => {
  const t = distinct('lite', 't');
  assert.equal(t.ten, 10);
  assert.equal(t.free, undefined);
});

test('the estimates rank the plans: a small side against a big table ships; a bigger one does not', () => {
  const small = estimateJoin({
    smallRows: 25_000,
    smallColumns: 3,
    smallKeyDistinct: 25_000,
    bigRows: 1_000_000,
    bigColumns: 3,
    bigKeyDistinct: 100_000,
  });
  assert.equal(small.choice, 'shipped');
  assert.ok(small.matching > 0.24 && small.matching < 0.26);
  const few = estimateJoin({
    smallRows: 10,
    smallColumns: 2,
    smallKeyDistinct: 10,
    bigRows: 1_000_000,
    bigColumns: 2,
    bigKeyDistinct: 1_000_000,
  });
  assert.ok(few.dependent < few.parallel, 'ten keys: the dependent join reads far less than the parallel plan');
});

const explainText = async (engine: Engine, sql: string) => (await engineRows(engine, admin, `EXPLAIN ${sql}`)).json;

test('a plan that flips when the statistics change: dependent without them, parallel once they show too many keys; the same answer', async () => {
  const limits = { maxKeys: 1000, batchSize: 500, maxShippedRows: 0 };
  const pushed = new Engine(services.registry, services.runtime, 'vdb', { pushdown: true, dependentJoin: limits });
  const roomy = new Engine(services.registry, services.runtime, 'vdb', { pushdown: true, dependentJoin: { ...limits, maxKeys: 3000 } });
  const local = new Engine(services.registry, services.runtime, 'vdb', { pushdown: false, dependentJoin: limits });
  const sql = "SELECT d.kind, count(*), sum(f.amount) FROM pg.facts f JOIN my.dims d ON d.id = f.dim_id WHERE d.kind = 'a' GROUP BY d.kind";
  const expected = (await engineRows(local, admin, sql)).json;
  const keysSent = (queries: string[]) => queries.some((q) => /"dim_id" (= ANY|IN)/.test(q));
  // No statistics of kind: 0.5 % of about 5,000 dimensions, 25 keys; the dependent join.
  assert.match(await explainText(pushed, sql), /keys of my\.dims\.id \(dependent join.*?estimates: 2\d rows and 2\d keys .*?: dependent\)/);
  // The estimate is wrong (2,500 keys): past maxKeys the run-time limit sends none, after waiting.
  const guarded = await engineRows(pushed, admin, sql);
  assert.equal(guarded.json, expected);
  assert.ok(!keysSent(guarded.sourceSql), 'no keys past maxKeys');
  const sent = await engineRows(roomy, admin, sql);
  assert.equal(sent.json, expected);
  assert.ok(keysSent(sent.sourceSql), 'within maxKeys the keys are sent');
  // Statistics: kind has 2 values, so about 2,500 keys, more than maxKeys: both sides at once.
  const my = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' });
  await my.query(`ANALYZE TABLE ${tag}.dims PERSISTENT FOR ALL`);
  await my.end();
  await services.registry.refreshSource('my');
  assert.equal(distinct('my', 'dims').kind, 2);
  assert.match(
    await explainText(pushed, sql),
    /read at the same time as my\.dims.*?estimates: 2[45]\d\d rows and 2[45]\d\d keys .*?: parallel( \(more keys than dependentJoin\.maxKeys\))?\)/,
  );
  const after = await engineRows(pushed, admin, sql);
  assert.equal(after.json, expected);
  assert.ok(!keysSent(after.sourceSql), 'no keys sent');
  // Within maxKeys, the estimates decide (one array of 2,500 keys against a scan of every group).
  assert.match(await explainText(roomy, sql), /estimates: 2[45]\d\d rows and 2[45]\d\d keys .*?: (dependent|parallel)\)/);
  assert.equal((await engineRows(roomy, admin, sql)).json, expected);
});

test('without statistics (a SQLite file never analyzed, a CSV file): no estimates, the plan of before, the same answer', async () => {
  const limits = { maxKeys: 1000, batchSize: 500, maxShippedRows: 0 };
  const pushed = new Engine(services.registry, services.runtime, 'vdb', { pushdown: true, dependentJoin: limits });
  const local = new Engine(services.registry, services.runtime, 'vdb', { pushdown: false, dependentJoin: limits });
  for (const dims of ['bare.dims', 'files.dims']) {
    const sql = `SELECT d.kind, count(*), sum(f.amount) FROM pg.facts f JOIN ${dims} d ON d.id = f.dim_id WHERE d.kind = 'a' GROUP BY d.kind`;
    const a = await engineRows(pushed, admin, sql);
    assert.equal(a.json, (await engineRows(local, admin, sql)).json, dims);
    const plan = await explainText(pushed, sql);
    assert.doesNotMatch(plan, /estimates:/, dims);
    if (dims.startsWith('bare')) assert.match(plan, /no estimate of rows/);
  }
});
