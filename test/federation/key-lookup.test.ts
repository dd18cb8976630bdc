/**
 * Dependent-join keys as a lookup at MariaDB (plan/key-lookup.ts): the keys' filter, and the
 * partial aggregation grouped by the numbers of the smaller side's rows. The answers are those
 * of local evaluation, with keys outside the lookup (negative, beyond it, NULL), text that
 * MariaDB's collation would merge, bigint keys, and the cases that must keep the IN list or the
 * grouping by key (few or sparse keys, a repeated key, too many numbers, the key used elsewhere).
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
import { loadConfig } from '../../src/config.js';
import { dropTagged, engineRows, MY, PG, servicesWithSources, sortedJson as sorted } from './fixtures.js';

const tag = `vdbt_${randomBytes(4).toString('hex')}`;
let services: Services;
let dataDir: string;
let pushed: Engine;
let listed: Engine;
let local: Engine;
let admin: UserDef;

before(async () => {
  const client = new pg.Client(PG);
  await client.connect();
  await client.query(`CREATE SCHEMA ${tag}`);
  // 10,000 customers (ids 1..10000): countries whose text MariaDB's collation would merge, NULLs.
  await client.query(
    `CREATE TABLE ${tag}.customers AS SELECT i AS id, (ARRAY['DE', 'de', 'DE ', 'FR', NULL, 'Zoë'])[i % 6 + 1] AS country,
       CASE WHEN i % 4 = 0 THEN 'small' ELSE 'big' END AS segment, i % 400 AS grade FROM generate_series(1, 10000) i`,
  );
  // Repeated keys: each customer id twice.
  await client.query(`CREATE TABLE ${tag}.visits AS SELECT i % 1500 + 1 AS id, 'web' AS channel FROM generate_series(1, 3000) i`);
  // Every other customer id up to 3,000: a second table joined on the same key.
  await client.query(`CREATE TABLE ${tag}.vip AS SELECT i * 2 AS id FROM generate_series(1, 1500) i`);
  // Sparse keys: 2,000 ids 1,000 apart.
  await client.query(`CREATE TABLE ${tag}.sparse AS SELECT i * 1000 AS id, 'k' || i % 3 AS kind FROM generate_series(1, 2000) i`);
  // Bigint keys near 10^17 (beyond a double's integers), dense.
  await client.query(
    `CREATE TABLE ${tag}.bigkeys AS SELECT 100000000000000000 + i AS id, 'k' || i % 5 AS kind FROM generate_series(1, 1500) i`,
  );
  for (const table of ['customers', 'visits', 'vip', 'sparse', 'bigkeys']) await client.query(`ANALYZE ${tag}.${table}`);
  await client.end();
  const my = await mysql.createConnection(MY);
  await my.query(`CREATE DATABASE ${tag} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
  await my.query(
    `CREATE TABLE ${tag}.orders (id int PRIMARY KEY, customer_id int NULL, amount decimal(10,2) NOT NULL, created date NOT NULL, qty int NOT NULL, big bigint NULL)`,
  );
  // 300,000 orders (the dependent join is the cheaper plan), customer ids from -50 to 39,949
  // (outside the keys on both ends), every 97th NULL; bigint values near 10^17 and far from them.
  await my.query(`USE ${tag}`);
  await my.query(
    `INSERT INTO orders SELECT seq, CASE WHEN seq % 97 = 0 THEN NULL ELSE CAST(seq % 40000 AS SIGNED) - 50 END, (seq * 37 % 1000) / 4,
       DATE '2024-01-01' + INTERVAL (seq % 400) DAY, seq % 7,
       CASE WHEN seq % 5 = 0 THEN NULL WHEN seq % 11 = 0 THEN 100000000000000000 + seq % 1600 ELSE seq % 3000 END
     FROM seq_0_to_299999`,
  );
  await my.query(`ANALYZE TABLE ${tag}.orders`);
  await my.end();

  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-key-lookup-'));
  services = await servicesWithSources(tag, dataDir);
  const { registry, runtime } = services;
  // Nothing shipped: the big side is MariaDB's, the small one is read first (dependent join).
  pushed = new Engine(registry, runtime, 'vdb', { pushdown: true, dependentJoin: { maxKeys: 100_000, batchSize: 100_000 } });
  listed = new Engine(registry, runtime, 'vdb', {
    pushdown: true,
    dependentJoin: { maxKeys: 100_000, batchSize: 100_000, keyLookups: false },
  });
  local = new Engine(registry, runtime, 'vdb', { pushdown: false, dependentJoin: { maxKeys: 100_000, batchSize: 100_000 } });
  admin = services.users.find('admin')!;
});

after(async () => {
  await services?.close();
  await dropTagged(tag, dataDir);
});

const rows = (engine: Engine, sql: string) => engineRows(engine, admin, sql);

/** The SQL MariaDB received. */
async function sameAnswer(sql: string): Promise<string> {
  const a = await rows(pushed, sql);
  const b = await rows(local, sql);
  assert.notEqual(b.json, '[]');
  assert.equal(sorted(a.json), sorted(b.json));
  const mariadb = a.sourceSql.find((s) => s.includes('`orders`'));
  assert.ok(mariadb, a.sourceSql.join('\n'));
  return mariadb;
}

const LOOKUP = /ASCII\(SUBSTRING\(x'[0-9a-f]+', `\w+` - \(-?\d+\), 1\)\)/;
const GROUPED = /^SELECT min\(`customer_id`\), .* GROUP BY CASE WHEN/;

test('the keys as a lookup filter the rows (a date condition keeps the rows ungrouped)', async () => {
  const sql = await sameAnswer(
    "SELECT c.country, count(*), sum(o.amount) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.segment = 'big' AND o.created >= DATE '2024-06-01' GROUP BY c.country",
  );
  assert.match(sql, LOOKUP);
  assert.doesNotMatch(sql, / IN \(/);
  assert.doesNotMatch(sql, /GROUP BY/);
});

test('grouped by the numbers of the smaller rows: one group per number, not per key', async () => {
  for (const query of [
    "SELECT c.country, count(*), sum(o.amount), min(o.qty), max(o.amount) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.segment = 'big' GROUP BY c.country",
    'SELECT c.country, c.segment, count(*) FROM my.orders o JOIN pg.customers c ON o.customer_id = c.id WHERE o.qty > 2 GROUP BY c.country, c.segment HAVING count(*) > 10',
    'SELECT sum(o.qty) FROM my.orders o, pg.customers c WHERE c.id = o.customer_id',
  ]) {
    const sql = await sameAnswer(query);
    assert.match(sql, GROUPED, query);
    assert.match(sql, LOOKUP);
  }
});

test('the key used beyond the join, a repeated key, or too many numbers: grouped by key', async () => {
  for (const [query, dependent] of [
    // c.id shown: each key is its own group (planned so).
    ["SELECT c.id % 7, count(*) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.segment = 'big' GROUP BY 1", false],
    // o.customer_id shown: the groups' least keys would show instead of each.
    [
      "SELECT o.customer_id % 5, c.country, count(*) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.segment = 'big' GROUP BY 1, 2",
      false,
    ],
    // A second equality on o.customer_id, with another column of the same table.
    [
      'SELECT c.country, count(*) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id AND o.customer_id = c.grade GROUP BY c.country',
      false,
    ],
    // o.customer_id joins a third table: the least key of a group would join it for all the others.
    [
      "SELECT c.country, count(*) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id JOIN pg.vip v ON v.id = o.customer_id WHERE c.segment = 'big' GROUP BY c.country",
      false,
    ],
    // Each visit id twice, the engine joins both rows: found while the keys arrive.
    ['SELECT v.channel, count(*), sum(o.amount) FROM my.orders o JOIN pg.visits v ON v.id = o.customer_id GROUP BY v.channel', true],
    // 400 grades, more numbers than a byte holds: found while the keys arrive.
    [
      "SELECT c.grade, count(*) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.segment = 'big' GROUP BY c.grade",
      true,
    ],
  ] as const) {
    const sql = await sameAnswer(query);
    assert.doesNotMatch(sql, /min\(`customer_id`\)/, query);
    assert.match(sql, /GROUP BY `customer_id`$/, query);
    if (dependent) assert.match(sql, LOOKUP, `${query}: the keys still go as a lookup`);
  }
});

test('few or sparse keys keep the IN list', async () => {
  const few = await sameAnswer(
    'SELECT c.country, count(*) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.id < 900 GROUP BY c.country',
  );
  assert.match(few, /`customer_id` IN \(/);
  assert.doesNotMatch(few, LOOKUP);
  const sparse = await sameAnswer('SELECT s.kind, count(*) FROM my.orders o JOIN pg.sparse s ON s.id = o.customer_id GROUP BY s.kind');
  assert.match(sparse, /`customer_id` IN \(/);
});

test('bigint keys near 10^17, beside values of the column far from them', async () => {
  const sql = await sameAnswer('SELECT b.kind, count(*), sum(o.qty) FROM my.orders o JOIN pg.bigkeys b ON b.id = o.big GROUP BY b.kind');
  assert.match(sql, /`big` BETWEEN 100000000000000001 AND 100000000000001500/);
  assert.match(sql, /min\(`big`\)/);
});

test('outer joins and a smaller side under a condition of its own keep their answers', async () => {
  for (const query of [
    'SELECT c.country, count(o.id) FROM pg.customers c LEFT JOIN my.orders o ON o.customer_id = c.id GROUP BY c.country',
    "SELECT count(*), sum(o.amount) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.country IS NULL OR c.country = 'Zoë'",
  ]) {
    const a = await rows(pushed, query);
    const b = await rows(local, query);
    assert.equal(sorted(a.json), sorted(b.json), query);
  }
});

test('dependentJoin.keyLookups false: the IN list and the grouping by key, the same answer', async () => {
  const query =
    "SELECT c.country, count(*), sum(o.amount) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id WHERE c.segment = 'big' GROUP BY c.country";
  const a = await rows(listed, query);
  assert.equal(sorted(a.json), sorted((await rows(local, query)).json));
  const sql = a.sourceSql.find((s) => s.includes('`orders`')) ?? '';
  assert.match(sql, /`customer_id` IN \(/);
  assert.match(sql, /GROUP BY `customer_id`$/);
  const explained = await rows(listed, `EXPLAIN ${query}`);
  assert.doesNotMatch(explained.json, /as a lookup/);
  assert.match((await rows(pushed, `EXPLAIN ${query}`)).json, /at least 1000 dense keys go as a lookup/);
});

test('dependentJoin.keyLookups: on by default, VDB_DEPENDENT_JOIN_KEY_LOOKUPS=false turns it off', () => {
  assert.equal(loadConfig({}, { dataDir }).dependentJoin.keyLookups, true);
  assert.equal(loadConfig({ VDB_DEPENDENT_JOIN_KEY_LOOKUPS: 'false' }, { dataDir }).dependentJoin.keyLookups, false);
  assert.throws(
    () => loadConfig({}, { dataDir, dependentJoin: { keyLookups: 'no' } } as never),
    /dependentJoin.keyLookups must be true or false/,
  );
});
