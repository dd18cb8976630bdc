/**
 * Distinct values imported with each source's tables (ColumnDef.distinct), the statistics the
 * choice of a join's plan uses (plan/cost.ts): PostgreSQL's pg_stats, MariaDB's index
 * cardinality, SQLite's sqlite_stat1; none where the source keeps none.
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
import type { SourceDef } from '../../src/catalog/types.js';
import { estimateJoin } from '../../src/engine/plan/cost.js';
import type { Services } from '../../src/services.js';
import { dropTagged, servicesWithSources } from './fixtures.js';

const tag = `vdbt_${randomBytes(4).toString('hex')}`;
let services: Services;
let dataDir: string;

before(async () => {
  const client = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' });
  await client.connect();
  await client.query(`CREATE SCHEMA ${tag}`);
  await client.query(
    `CREATE TABLE ${tag}.t AS SELECT i AS id, i % 7 AS seven, md5(i::text) AS unique_text FROM generate_series(1, 5000) i`,
  );
  await client.query(`CREATE TABLE ${tag}.never_analyzed (id int)`);
  await client.query(`ANALYZE ${tag}.t`);
  await client.end();
  const my = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' });
  await my.query(`CREATE DATABASE ${tag}`);
  await my.query(`CREATE TABLE ${tag}.t (id int PRIMARY KEY, seven int, free int, KEY by_seven (seven, free))`);
  await my.query(`INSERT INTO ${tag}.t SELECT seq, seq % 7, seq FROM ${tag}.seq_1_to_2000`);
  await my.query(`ANALYZE TABLE ${tag}.t`);
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
  services = await servicesWithSources(tag, dataDir);
  await services.registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: file } });
});

after(async () => {
  await services?.close();
  await dropTagged(tag, dataDir);
});

const distinct = (source: string, table: string) =>
  Object.fromEntries(
    (services.registry.findSource(source) as SourceDef).tables.find((t) => t.name === table)!.columns.map((c) => [c.name, c.distinct]),
  );

test('PostgreSQL: n_distinct from pg_stats (a negative one as a share of the rows); none before ANALYZE', () => {
  const t = distinct('pg', 't');
  assert.equal(t.seven, 7);
  assert.ok(Math.abs(Number(t.id) - 5000) <= 50, `id: ${t.id}`);
  assert.ok(Math.abs(Number(t.unique_text) - 5000) <= 50, `unique_text: ${t.unique_text}`);
  assert.equal(distinct('pg', 'never_analyzed').id, undefined);
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
