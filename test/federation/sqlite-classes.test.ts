/**
 * SQLite's dynamic typing: a column may hold values of another storage class than its declared
 * type (a REAL with float noise in a DECIMAL(10,2) column, a REAL 1001.5 or the text 'abc' in an
 * INTEGER column). The engine's load casts them to the column's type (rounding); conditions and
 * dependent-join keys pushed to SQLite must keep every row the engine would keep: the same rows
 * and warnings with pushdown on and off. Real SQLite files and MariaDB.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pino from 'pino';
import type { UserDef } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { Engine } from '../../src/engine/engine.js';
import { createServices, type Services } from '../../src/services.js';
import { MY } from './fixtures.js';

let services: Services;
let dataDir: string;
let pushed: Engine;
let local: Engine;
let admin: UserDef;
const tag = `vdbc_${randomBytes(4).toString('hex')}`;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-classes-'));
  const fileRoot = path.join(dataDir, 'files');
  fs.mkdirSync(fileRoot);
  const file = path.join(fileRoot, 'classes.sqlite');
  const db = new Database(file);
  db.exec(`CREATE TABLE sdec (id INTEGER PRIMARY KEY, amt DECIMAL(10,2), cid INTEGER);
    WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 59999)
    INSERT INTO sdec SELECT i, CASE WHEN i % 3 = 0 THEN (i % 600) * 0.1 + 0.2 ELSE round((i % 600) * 0.5, 2) END, i % 600 FROM s;
    CREATE TABLE sbig (id INTEGER PRIMARY KEY, cid INTEGER, val INTEGER);
    WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 60000)
    INSERT INTO sbig SELECT i, i % 20000, i % 100 FROM s;
    UPDATE sbig SET cid = cid + 0.5 WHERE id % 1000 = 1;
    CREATE INDEX sbig_cid ON sbig (cid);
    CREATE TABLE mixed (id INTEGER PRIMARY KEY, n INTEGER, r REAL, d DECIMAL(10,2), u);
    CREATE TABLE strict_t (id INTEGER PRIMARY KEY, n INTEGER, r REAL, t TEXT) STRICT;
    INSERT INTO strict_t VALUES (1, 5, 2.5, 'a'), (2, 6, 3, 'b'), (3, NULL, NULL, NULL);
    CREATE TABLE snow (id INTEGER PRIMARY KEY, uid INTEGER, amount DECIMAL(20,2));
    CREATE INDEX snow_uid ON snow (uid);
    INSERT INTO snow VALUES (1, 18014398509481987, 18014398509481987), (2, 1500000000000000001, 1),
      (3, 9223372036854775807, 2), (4, -18014398509481987, -18014398509481987), (5, 100, 100.5);`);
  const insert = db.prepare('INSERT INTO mixed VALUES (?, ?, ?, ?, ?)');
  const rows: unknown[][] = [
    [1, 5, 2.5, 2.3000000000000003, 5],
    [2, 'abc', 5, 7, '5'],
    [3, '0x10', 3, 0.5, 'x'],
    [4, null, null, null, null],
    [5, 1001.5, 9007199254740993n, 5, 2.5],
    [6, 16, 7.25, '2.345', '7'],
    [7, Buffer.from('5'), 2, 2.5, Buffer.from('7')],
  ];
  for (const row of rows) insert.run(...row);
  db.exec('ANALYZE');
  db.close();

  const my = await mysql.createConnection(MY);
  await my.query(`CREATE DATABASE ${tag}`);
  await my.query(`CREATE TABLE ${tag}.misc (id int PRIMARY KEY, d3 decimal(10,3))`);
  await my.query(`INSERT INTO ${tag}.misc SELECT seq, seq * 0.5 FROM ${tag}.seq_0_to_599`);
  await my.query(`CREATE TABLE ${tag}.customers (id int PRIMARY KEY, name varchar(20))`);
  await my.query(`INSERT INTO ${tag}.customers SELECT seq + 1000, concat('c', seq) FROM ${tag}.seq_0_to_599`);
  await my.query(`ANALYZE TABLE ${tag}.misc, ${tag}.customers`);
  await my.end();

  services = await createServices(loadConfig({}, { dataDir, adminPassword: 'classes-test-pw', demo: false }), pino({ level: 'silent' }));
  const { registry, runtime } = services;
  await registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: file } });
  await registry.addSource({ name: 'my', kind: 'mysql', connection: { host: '127.0.0.1', port: '3306', db: tag, 'user-name': 'root' } });
  pushed = new Engine(registry, runtime, 'vdb', { pushdown: true, dependentJoin: { maxKeys: 100_000, batchSize: 250 } });
  local = new Engine(registry, runtime, 'vdb', { pushdown: false, dependentJoin: { maxKeys: 100_000, batchSize: 250 } });
  admin = services.users.find('admin')!;
});

after(async () => {
  await services?.close();
  const my = await mysql.createConnection(MY);
  await my.query(`DROP DATABASE IF EXISTS ${tag}`);
  await my.end();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Answer {
  json: string;
  sourceSql: string[];
  warnings: string[];
}

async function run(engine: Engine, sql: string): Promise<Answer> {
  const execution = await engine.open(sql, admin, new AbortController().signal);
  try {
    const parts: string[] = [];
    for await (const part of execution.stream('array', {}, {})) parts.push(part);
    return { json: `[${parts.join(',')}]`, sourceSql: execution.sourceQueries.map((q) => q.sql), warnings: [...execution.warnings] };
  } finally {
    await execution.close();
  }
}

/** The same rows and warnings with pushdown on and off; returns the pushed run. */
async function same(sql: string, expected?: string): Promise<Answer> {
  const on = await run(pushed, sql);
  const off = await run(local, sql);
  assert.equal(on.json, off.json, `${sql}\npushed: ${on.sourceSql.join('\n')}`);
  if (expected !== undefined) assert.equal(on.json, expected);
  // The columns warned of, among those the statement reads (without pushdown every column is
  // loaded; with it only the rows the pushed conditions keep, so the counts may be smaller).
  const read = (warnings: string[]) =>
    warnings
      .map((w) => /\.(\w+): \d+ value\(s\) (did not fit \w+|are not valid)/.exec(w)?.slice(1).join(' ') ?? w)
      .filter((w) => new RegExp(`\\b${w.split(' ')[0]}\\b`).test(sql.replace(/lite\.\w+/g, '')));
  assert.deepEqual(read(on.warnings), read(off.warnings), sql);
  return on;
}

test('reals with float noise in a DECIMAL column: IN list and dependent-join keys', async () => {
  const a = await same('SELECT count(*) FROM lite.sdec s WHERE s.amt IN (0.5, 2.30, 7)', '[[400]]');
  assert.ok(
    a.sourceSql.some((q) => /"amt" BETWEEN 2.295 AND 2.305 OR/.test(q)),
    a.sourceSql.join('\n'),
  );
  await same('SELECT count(*) FROM lite.sdec s WHERE s.amt BETWEEN 2.30 AND 2.30');
  await same('SELECT count(*) FROM lite.sdec s WHERE s.amt > 29.9 AND s.amt <= 30.1');
  const b = await same('SELECT count(*) FROM lite.sdec s JOIN my.misc m ON m.d3 = s.amt WHERE m.id < 100', '[[9900]]');
  assert.ok(
    b.sourceSql.some((q) => /FROM "sdec" WHERE .*"amt" IN \(/.test(q)),
    b.sourceSql.join('\n'),
  );
});

test('a REAL in an INTEGER column: keys and conditions keep it, with the same warning', async () => {
  const a = await same('SELECT count(*), sum(s.val) FROM lite.sbig s JOIN my.customers c ON c.id = s.cid', '[[1800,89100]]');
  assert.ok(
    a.sourceSql.some((q) => /json_each/.test(q)),
    a.sourceSql.join('\n'),
  );
  const b = await same('SELECT count(*) FROM lite.sbig WHERE cid = 1002', '[[6]]');
  assert.equal(b.warnings.length, 1);
  assert.match(b.warnings[0]!, /cid: \d+ value\(s\) did not fit BIGINT/);
  await same('SELECT id, cid FROM lite.sbig WHERE cid IN (1002, 2002, 5) ORDER BY id');
  await same('SELECT count(*) FROM lite.sbig WHERE cid > 19999 OR cid < 1');
});

test('text, blobs, reals, big integers and NULLs in columns of another type', async () => {
  for (const condition of [
    'n = 5',
    'n = 16',
    'n = 1002',
    'n IN (5, 16, 1002)',
    'n > 3',
    'n < 1002',
    'n >= 1002',
    '1001 < n',
    'n BETWEEN 1001 AND 1002',
    'n = -1',
    'n = 16 OR d = 2.3',
    'n IS NOT NULL',
    'r = 5',
    'r = 9007199254740992',
    'r > 2.4',
    'r IN (2, 3)',
    'd = 2.30',
    'd IN (0.5, 2.35, 7)',
    'd BETWEEN 2.3 AND 2.5',
    'd > 2.30',
    'd <= 2.3',
    'd = -0.5',
    'd IN (0, 5.00)',
    "u = '5'",
    "u = '2.5'",
    "u = '7'",
    "u LIKE '5%'",
    "u IN ('5', 'x')",
  ]) {
    await same(`SELECT id FROM lite.mixed WHERE ${condition} ORDER BY id`);
  }
  // Dependent joins on each of these columns.
  for (const column of ['n', 'r', 'd'])
    await same(`SELECT x.id, c.id FROM lite.mixed x JOIN my.misc c ON c.d3 = x.${column} ORDER BY 1, 2`);
});

test('integers beyond 2^53 in an INTEGER or DECIMAL column: the widened bounds (reals there) do not lose them', async () => {
  for (const sql of [
    'SELECT id FROM lite.snow WHERE uid = 1500000000000000001',
    'SELECT id FROM lite.snow WHERE uid = 9223372036854775807',
    'SELECT id FROM lite.snow WHERE uid IN (18014398509481987, 100) ORDER BY id',
    'SELECT id FROM lite.snow WHERE uid <= -18014398509481987',
    'SELECT id FROM lite.snow WHERE uid >= 1500000000000000001 ORDER BY id',
    'SELECT id FROM lite.snow WHERE uid > 1500000000000000000 ORDER BY id',
    'SELECT id FROM lite.snow WHERE amount = 18014398509481987',
    'SELECT id FROM lite.snow WHERE amount <= -18014398509481987',
  ]) {
    const answer = await same(sql);
    assert.notEqual(answer.json, '[]', sql);
  }
});

test('where SQLite fixes the class, conditions and keys go as before', async () => {
  const point = await same('SELECT id, amt FROM lite.sdec WHERE id = 42', '[[42,4.40]]');
  assert.ok(
    point.sourceSql.some((q) => /WHERE .*"id" = 42$/.test(q)),
    point.sourceSql.join('\n'),
  );
  assert.ok(
    point.sourceSql.every((q) => !/typeof/.test(q)),
    point.sourceSql.join('\n'),
  );
  const keys = await same('SELECT count(*) FROM lite.sdec s JOIN my.customers c ON c.id = s.id WHERE c.id < 1050', '[[50]]');
  assert.ok(
    keys.sourceSql.every((q) => !/typeof/.test(q)),
    keys.sourceSql.join('\n'),
  );
  const strict = await same("SELECT id FROM lite.strict_t WHERE n = 5 OR r = 3 OR t IN ('a') ORDER BY id", '[[1],[2]]');
  assert.ok(
    strict.sourceSql.every((q) => !/typeof/.test(q)),
    strict.sourceSql.join('\n'),
  );
});
