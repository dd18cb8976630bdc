/**
 * The small side shipped to PostgreSQL as arrays (plan/ship.ts): the answers are those of local
 * evaluation, with the text traps of a case-insensitive, space-padding MariaDB collation, array
 * literal syntax in the values (quotes, backslashes, braces, commas, the word NULL) and NULLs;
 * and the plan is left for the federated one where it must be.
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
import type { UserDef } from '../../src/catalog/types.js';
import { Engine } from '../../src/engine/engine.js';
import type { Services } from '../../src/services.js';
import { dropTagged, engineRows, MY, PG, restrictedReader, servicesWithSources, sortedJson as sorted } from './fixtures.js';

const tag = `vdbt_${randomBytes(4).toString('hex')}`;
const NAMES = ['Alice', 'alice', 'ALICE', 'Bob ', 'bob', 'a"b', 'c\\d', '{x,y}', 'NULL', '', "O'Neil", 'Zoë', null];
let services: Services;
let dataDir: string;
let pushed: Engine;
let small: Engine;
let rowsOnly: Engine;
let local: Engine;
let admin: UserDef;

before(async () => {
  const client = new pg.Client(PG);
  await client.connect();
  await client.query(`CREATE SCHEMA ${tag}`);
  await client.query(`CREATE TABLE ${tag}.orders (id int, customer_id int, amount numeric(12,2), created date, label text)`);
  await client.query(
    `INSERT INTO ${tag}.orders SELECT i, i % 700, (i % 997) / 4.0, DATE '2025-01-01' + (i % 300), CASE WHEN i % 5 = 0 THEN NULL ELSE 'l' || (i % 13) END FROM generate_series(1, 20000) i`,
  );
  // Text keys with the traps of array syntax and of letter case, some matching a customer's name.
  await client.query(`ALTER TABLE ${tag}.orders ADD COLUMN who text`);
  await client.query(`UPDATE ${tag}.orders SET who = ($1::text[])[id % $2 + 1] WHERE id % 3 = 0`, [
    NAMES.filter((n) => n !== null),
    NAMES.length - 1,
  ]);
  // A bigint key, some of whose values are beyond int4 (the lookup array's subscripts).
  await client.query(`ALTER TABLE ${tag}.orders ADD COLUMN big bigint`);
  await client.query(`UPDATE ${tag}.orders SET big = CASE WHEN id % 9 = 0 THEN 5000000000 + id ELSE customer_id END`);
  await client.query(`ANALYZE ${tag}.orders`);
  await client.end();
  const my = await mysql.createConnection(MY);
  await my.query(`CREATE DATABASE ${tag} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
  await my.query(`CREATE TABLE ${tag}.customers (id int PRIMARY KEY, name varchar(20), score decimal(8,2), since date, tag varchar(5))`);
  const rows = Array.from({ length: 600 }, (_, i) => [
    i,
    NAMES[i % NAMES.length],
    i % 7 === 0 ? null : `${(i % 50) - 10}.${String(i % 100).padStart(2, '0')}`,
    i % 11 === 0 ? null : `2024-${String((i % 12) + 1).padStart(2, '0')}-15`,
    `l${i % 17}`,
  ]);
  await my.query(`INSERT INTO ${tag}.customers VALUES ?`, [rows]);
  // A value the engine's load changes (MariaDB's zero date becomes NULL, with a warning): the
  // arrays are then written from the engine's load, not straight from the rows.
  await my.query(`CREATE TABLE ${tag}.zeroed (id int PRIMARY KEY, since date)`);
  await my.query(`SET SESSION sql_mode = ''`);
  await my.query(`INSERT INTO ${tag}.zeroed VALUES (1, '2025-01-02'), (2, '0000-00-00'), (3, NULL), (4, '2025-03-01')`);
  // Keys for the lookup form's limits: repeated keys, sparse keys, bigint keys, a NULL key.
  await my.query(`CREATE TABLE ${tag}.visits (customer_id int, channel varchar(10))`);
  await my.query(`INSERT INTO ${tag}.visits VALUES (1, 'web'), (1, 'shop'), (2, 'web'), (3, NULL), (650, 'web')`);
  await my.query(`CREATE TABLE ${tag}.sparse (id int PRIMARY KEY, kind varchar(10))`);
  await my.query(`INSERT INTO ${tag}.sparse VALUES (1, 'a'), (350, 'b'), (699, 'a'), (2000000, 'c')`);
  await my.query(`CREATE TABLE ${tag}.bigkeys (id bigint PRIMARY KEY, kind varchar(10))`);
  await my.query(`INSERT INTO ${tag}.bigkeys VALUES ?`, [Array.from({ length: 600 }, (_, i) => [i, `k${i % 3}`])]);
  // Dense keys from -300 (the orders' customer ids are 0..699): the lookup's offset from a negative least key.
  await my.query(`CREATE TABLE ${tag}.negkeys (id int PRIMARY KEY, kind varchar(10))`);
  await my.query(`INSERT INTO ${tag}.negkeys VALUES ?`, [Array.from({ length: 600 }, (_, i) => [i - 300, `k${i % 5}`])]);
  await my.query(`CREATE TABLE ${tag}.nullkeys (id int NULL UNIQUE, kind varchar(10))`);
  await my.query(`INSERT INTO ${tag}.nullkeys VALUES ?`, [
    [[null, 'none'], ...Array.from({ length: 100 }, (_, i) => [i * 7, `k${i % 4}`])],
  ]);
  await my.query(`ANALYZE TABLE ${tag}.customers`);
  await my.end();

  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-ship-'));
  services = await servicesWithSources(tag, dataDir);
  // A CSV file of the engine's own: shipped whole along with the MariaDB table.
  const files = path.join(dataDir, 'files', 'csv');
  fs.mkdirSync(files, { recursive: true });
  fs.writeFileSync(
    path.join(files, 'tags.csv'),
    'tag,region\n' + Array.from({ length: 17 }, (_, i) => `l${i},"r ${i % 4}${i === 3 ? ' \\ ""q""' : ''}"`).join('\n') + '\nl1,dup\n',
  );
  await services.registry.addSource({ name: 'files', kind: 'file', connection: { ParentDirectory: files } });
  // A SQLite database (never analysed: no row counts): a third database shipped along.
  const lite = new Database(path.join(dataDir, 'files', 'regions.db'));
  lite.exec('CREATE TABLE regions (tag TEXT, region TEXT, weight INTEGER)');
  const insert = lite.prepare('INSERT INTO regions VALUES (?, ?, ?)');
  for (let i = 0; i < 17; i++) insert.run(`l${i}`, i === 3 ? 'r "3" \\ {x}' : `r ${i % 4}`, i % 5 === 0 ? null : i);
  insert.run('l1', 'dup', 7);
  insert.run('L2', 'upper', 1);
  insert.run(null, 'none', 2);
  // Dense integer keys of orders.big (0..699; the rest of its values beyond them): a second lookup.
  lite.exec('CREATE TABLE kinds (id INTEGER PRIMARY KEY, kind TEXT)');
  lite
    .prepare("INSERT INTO kinds SELECT value, 'k' || (value % 4) FROM json_each(?)")
    .run(JSON.stringify(Array.from({ length: 700 }, (_, i) => i)));
  lite.exec('CREATE TABLE many (tag TEXT)');
  lite.prepare('INSERT INTO many SELECT value FROM json_each(?)').run(JSON.stringify(Array.from({ length: 40 }, (_, i) => `l${i % 17}`)));
  lite.close();
  await services.registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: path.join(dataDir, 'files', 'regions.db') } });
  const { registry, runtime } = services;
  pushed = new Engine(registry, runtime, 'vdb', { pushdown: true, dependentJoin: { maxKeys: 100_000, batchSize: 50_000 } });
  small = new Engine(registry, runtime, 'vdb', {
    pushdown: true,
    dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 10 },
  });
  rowsOnly = new Engine(registry, runtime, 'vdb', {
    pushdown: true,
    dependentJoin: { maxKeys: 100_000, batchSize: 50_000, lookupArrays: false },
  });
  local = new Engine(registry, runtime, 'vdb', { pushdown: false, dependentJoin: { maxKeys: 100_000, batchSize: 50_000 } });
  admin = services.users.find('admin')!;
});

after(async () => {
  await services?.close();
  await dropTagged(tag, dataDir);
});

const rows = (engine: Engine, sql: string) => engineRows(engine, admin, sql);

const LATERAL = /LATERAL \(SELECT/;

const CASES = [
  'SELECT c.name, count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id GROUP BY c.name',
  "SELECT c.name, c.score, c.since, o.id FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.name = 'alice' AND o.id < 3000",
  "SELECT c.name, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.name IN ('Bob', 'NULL', '', 'a\"b', 'c\\d', '{x,y}') GROUP BY c.name",
  'SELECT c.tag, count(*), min(o.created), max(c.score) FROM pg.orders o JOIN my.customers c ON c.tag = o.label GROUP BY c.tag',
  'SELECT count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.since = o.created - 365 WHERE c.score > 5',
  'SELECT c.name IS NULL, count(*) FROM pg.orders o LEFT JOIN my.customers c ON c.id = o.customer_id GROUP BY 1',
  // Text keys (quotes, backslashes, braces, the word NULL, unicode, duplicates, NULL) as an array.
  'SELECT c.name, c.id, count(*) FROM pg.orders o JOIN my.customers c ON c.name = o.who GROUP BY c.name, c.id',
  // Decimal keys with NULLs and duplicates.
  'SELECT c.score, count(*) FROM pg.orders o JOIN my.customers c ON o.amount = c.score GROUP BY c.score',
  // The keys of a small side narrowed by its own conditions; duplicate keys (tags repeat).
  "SELECT o.label, count(*) FROM pg.orders o JOIN my.customers c ON c.tag = o.label WHERE c.id < 100 AND c.name <> 'bob' GROUP BY o.label",
];

for (const sql of CASES) {
  test(`shipped to PostgreSQL: ${sql}`, async () => {
    const a = await rows(pushed, sql);
    const b = await rows(local, sql);
    assert.notEqual(b.json, '[]');
    assert.equal(sorted(a.json), sorted(b.json));
    assert.match(a.sourceSql[0] ?? '', /unnest\('\{/, 'the small side went to PostgreSQL');
    assert.equal(a.sourceSql.length, 2, 'MariaDB once, PostgreSQL once');
  });
}

test('inner equi-joins read the PostgreSQL table through the shipped keys; outer joins do not', async () => {
  const inner = await rows(rowsOnly, CASES[0]!);
  assert.match(inner.sourceSql[0] ?? '', /customer_id = ANY \('\{/);
  const text = await rows(pushed, CASES[6]!);
  assert.match(text.sourceSql[0] ?? '', /who = ANY \('\{/);
  const outer = await rows(pushed, CASES[5]!);
  assert.doesNotMatch(outer.sourceSql[0] ?? '', /= ANY \(/);
});

test('an empty small side: empty arrays, empty keys, the same (empty) answer', async () => {
  const sql =
    "SELECT c.name, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.name = 'nobody' GROUP BY c.name";
  const a = await rows(pushed, sql);
  assert.equal(a.json, '[]');
  assert.equal(sorted(a.json), sorted((await rows(local, sql)).json));
  assert.match(a.sourceSql[0] ?? '', /unnest\('\{\}'::int4\[\]/);
  const outer = "SELECT count(*), count(c.id) FROM pg.orders o LEFT JOIN my.customers c ON c.id = o.customer_id AND c.name = 'nobody'";
  assert.equal((await rows(pushed, outer)).json, (await rows(local, outer)).json);
});

test('a value the load would change: the arrays come from the engine, with its warning and answer', async () => {
  const sql =
    'SELECT z.id, z.since, count(*) FROM pg.orders o JOIN my.zeroed z ON z.since = o.created OR z.since IS NULL GROUP BY z.id, z.since';
  const execution = await pushed.open(sql, admin, new AbortController().signal);
  try {
    const parts: string[] = [];
    for await (const part of execution.stream('array', {}, {})) parts.push(part);
    assert.equal(sorted(`[${parts.join(',')}]`), sorted((await rows(local, sql)).json));
    assert.match(execution.sourceQueries[0]?.sql ?? '', /unnest\('\{/);
    assert.ok(
      execution.warnings.some((w) => /since: 1 value\(s\) are not valid DATE/.test(w)),
      execution.warnings.join('; '),
    );
  } finally {
    execution.close();
  }
});

test('three sources: the CSV file is shipped whole too, with the same answer', async () => {
  const sql =
    'SELECT t.region, count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id JOIN files.tags t ON t.tag = c.tag GROUP BY t.region';
  const a = await rows(pushed, sql);
  const b = await rows(local, sql);
  assert.notEqual(b.json, '[]');
  assert.equal(sorted(a.json), sorted(b.json));
  assert.equal((a.sourceSql[0]!.match(/unnest\('\{/g) ?? []).length, 2, 'both small sides went to PostgreSQL');
  const plan = JSON.parse((await rows(pushed, `EXPLAIN ${sql}`)).json) as string[][];
  assert.deepEqual(
    plan.map((row) => [row[1], row[2]]),
    [
      ['my', 'source query'],
      ['files', 'engine scan'],
      ['pg', 'source statement'],
    ],
  );
});

test('three databases: the SQLite table goes along with the MariaDB table, read at the same time, with the same answers', async () => {
  for (const sql of [
    'SELECT r.region, count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id JOIN lite.regions r ON r.tag = c.tag GROUP BY r.region',
    // Keyed and rows forms; a left join to the third table; its own condition; text with array syntax.
    'SELECT r.region, c.name, count(*) FROM pg.orders o JOIN my.customers c ON c.tag = o.label LEFT JOIN lite.regions r ON r.tag = c.tag AND r.weight > 3 WHERE c.id < 200 GROUP BY r.region, c.name',
    "SELECT r.region, count(*) FROM pg.orders o JOIN lite.regions r ON r.tag = o.label JOIN my.customers c ON c.id = o.customer_id WHERE r.region <> 'dup' GROUP BY r.region",
  ]) {
    const a = await rows(pushed, sql);
    const b = await rows(local, sql);
    assert.notEqual(b.json, '[]', sql);
    assert.equal(sorted(a.json), sorted(b.json), sql);
    assert.equal(sorted(a.json), sorted((await rows(rowsOnly, sql)).json), sql);
    assert.equal(a.sourceSql.length, 3, 'PostgreSQL once, MariaDB once, SQLite once');
    assert.equal((a.sourceSql[0]!.match(/unnest\('\{/g) ?? []).length, 2, `both small sides went to PostgreSQL: ${sql}`);
  }
  const sql =
    'SELECT r.region, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id JOIN lite.regions r ON r.tag = c.tag GROUP BY r.region';
  const plan = JSON.parse((await rows(pushed, `EXPLAIN ${sql}`)).json) as string[][];
  assert.deepEqual(
    plan.map((row) => [row[0], row[1], row[2]]),
    [
      [1, 'my', 'source query'],
      [2, 'lite', 'source query'],
      [3, 'pg', 'source statement'],
    ],
  );
  assert.match(String(plan[1]![4]), /along with step 1/);
  assert.match(String(plan[2]![5]), /<the columns of step 1 as arrays>.*<the columns of step 2 as arrays>/s);
  // The SQLite table above the limit (40 rows, no statistics): federated, the same answer.
  const limited = new Engine(services.registry, services.runtime, 'vdb', {
    pushdown: true,
    dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 30 },
  });
  const many =
    'SELECT m.tag, count(*) FROM pg.orders o JOIN my.visits v ON v.customer_id = o.customer_id JOIN lite.many m ON m.tag = o.label GROUP BY m.tag';
  const a = await rows(limited, many);
  assert.equal(sorted(a.json), sorted((await rows(local, many)).json));
  assert.ok(a.sourceSql.every((q) => !q.includes('unnest(')));
  assert.match((await rows(pushed, many)).sourceSql[0] ?? '', /unnest\('\{/);
});

test('two tables of one source: each read on its own, at the same time, joined at PostgreSQL, with the same answers', async () => {
  for (const sql of [
    'SELECT v.channel, c.tag, count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id JOIN my.visits v ON v.customer_id = c.id GROUP BY v.channel, c.tag',
    "SELECT c.name, v.channel, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id LEFT JOIN my.visits v ON v.customer_id = c.id AND v.channel <> 'shop' WHERE c.id < 50 GROUP BY c.name, v.channel",
  ]) {
    const statement = await sameAsLocal(sql);
    assert.equal((statement.match(/unnest\('\{/g) ?? []).length, 2, sql);
    const a = await rows(pushed, sql);
    assert.deepEqual(
      a.sourceSql.map((q) => (q.startsWith('COPY') ? 'pg' : /`visits`/.test(q) ? 'visits' : /`customers`/.test(q) ? 'customers' : q)),
      ['pg', 'customers', 'visits'],
    );
  }
});

test('a star join: each dimension with dense keys goes as its own lookup array, with the same answers', async () => {
  const sql =
    'SELECT c.name, k.kind, count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id JOIN lite.kinds k ON k.id = o.big GROUP BY c.name, k.kind';
  const statement = await sameAsLocal(sql);
  assert.equal((statement.match(/LATERAL \(SELECT/g) ?? []).length, 2, statement.slice(0, 300));
  // lookupArrays false: neither goes as a lookup.
  assert.doesNotMatch((await rows(rowsOnly, sql)).sourceSql[0] ?? '', LATERAL);
  // The main table's keys repeat (rows, the orders read through its keys); the other's still go as a lookup.
  const mixed = await sameAsLocal(
    'SELECT v.channel, k.kind, count(*) FROM pg.orders o JOIN my.visits v ON v.customer_id = o.customer_id JOIN lite.kinds k ON k.id = o.big GROUP BY v.channel, k.kind',
  );
  assert.equal((mixed.match(/LATERAL \(SELECT/g) ?? []).length, 1);
  assert.match(mixed, /customer_id = ANY \('\{/);
  const plan = JSON.parse((await rows(pushed, `EXPLAIN ${sql}`)).json) as string[][];
  assert.match(String(plan[1]![4]), /along with step 1, read at the same time; .* where its keys .* lookup array indexed by o\.big/);
});

test('a row condition and a mask on the small side: not shipped, and the answer is the restricted one', async () => {
  const rita = await restrictedReader(services, admin, 'ship', [
    "'my.customers', 'R', 'id < 300'",
    "'my.customers.name', 'R', NULL, '''hidden'''",
  ]);
  const sql = 'SELECT c.name, count(*), max(c.id) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id GROUP BY c.name';
  const a = await engineRows(pushed, rita, sql);
  assert.equal(sorted(a.json), sorted((await engineRows(local, rita, sql)).json));
  assert.ok(a.sourceSql.every((q) => !q.includes('unnest(')));
  assert.deepEqual(
    (JSON.parse(a.json) as Array<[string, number, number]>).map((r) => r[0]),
    ['hidden'],
  );
  assert.ok((JSON.parse(a.json) as Array<[string, number, number]>)[0]![2] < 300);
});

test("a row condition alone on the small side: shipped with only the rows it lets through; on PostgreSQL's side: not shipped", async () => {
  const ruth = await restrictedReader(services, admin, 'shiprows', ["'my.customers', 'R', 'id < 300 AND name <> ''bob'''"]);
  for (const sql of [
    'SELECT c.name, count(*), max(c.id) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id GROUP BY c.name',
    "SELECT c.tag, count(*) FROM pg.orders o JOIN my.customers c ON c.tag = o.label WHERE c.name = 'alice' GROUP BY c.tag",
    // The lookup form from the engine's load, with the name compared by vdb.
    CASES[1]!,
  ]) {
    const a = await engineRows(pushed, ruth, sql);
    const b = await engineRows(local, ruth, sql);
    assert.notEqual(b.json, '[]', sql);
    assert.equal(sorted(a.json), sorted(b.json), sql);
    assert.match(a.sourceSql[0] ?? '', /unnest\('\{/, sql);
    assert.notEqual(sorted(a.json), sorted((await rows(pushed, sql)).json), `the condition narrows: ${sql}`);
  }
  // Dense keys: the lookup form, its elements read back from the engine's load.
  assert.match((await engineRows(pushed, ruth, CASES[0]!)).sourceSql[0] ?? '', LATERAL);
  const shown = JSON.parse(
    (
      await engineRows(
        pushed,
        ruth,
        'SELECT c.name, count(*), max(c.id) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id GROUP BY c.name',
      )
    ).json,
  ) as Array<[string, number, number]>;
  assert.ok(shown.every(([name, , id]) => id < 300 && name !== 'bob'));
  // The condition is the engine's to apply (it narrowed the rows): PostgreSQL does not see it,
  // where it would read it otherwise (`\b` is a word boundary to the engine, a backspace to PostgreSQL).
  const rex = await restrictedReader(services, admin, 'shipregex', ["'my.customers', 'R', 'name ~ ''e\\b'' OR id < 3'"]);
  const regex = await engineRows(pushed, rex, CASES[0]!);
  assert.equal(sorted(regex.json), sorted((await engineRows(local, rex, CASES[0]!)).json));
  assert.ok((JSON.parse(regex.json) as unknown[]).length >= 3, regex.json);
  assert.match(regex.sourceSql[0] ?? '', /unnest\('\{/);
  assert.doesNotMatch(regex.sourceSql[0] ?? '', / ~ /);
  // On the nullable side of an outer join the condition stays a subquery of the statement: not shipped.
  const outer = 'SELECT count(*), count(c.id) FROM pg.orders o LEFT JOIN my.customers c ON c.id = o.customer_id';
  const left = await engineRows(pushed, ruth, outer);
  assert.equal(left.json, (await engineRows(local, ruth, outer)).json);
  assert.ok(left.sourceSql.every((q) => !q.includes('unnest(')));
  const olga = await restrictedReader(services, admin, 'shipfacts', ["'pg.orders', 'R', 'id < 5000'"]);
  const sql = 'SELECT c.name, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id GROUP BY c.name';
  const a = await engineRows(pushed, olga, sql);
  assert.equal(sorted(a.json), sorted((await engineRows(local, olga, sql)).json));
  assert.ok(a.sourceSql.every((q) => !q.includes('unnest(')));
});

test('a statement PostgreSQL refuses (a quoted name in other letter case) runs federated, every time', async () => {
  const sql = 'SELECT c."NAME", count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id GROUP BY c."NAME"';
  for (let i = 0; i < 2; i++) {
    const a = await rows(pushed, sql);
    assert.equal(sorted(a.json), sorted((await rows(local, sql)).json));
    assert.ok(a.sourceSql.every((q) => !q.includes('unnest(')));
  }
});

test('a small side above maxShippedRows runs federated, with the same answer', async () => {
  const sql = CASES[0]!;
  const a = await rows(small, sql);
  assert.equal(sorted(a.json), sorted((await rows(local, sql)).json));
  assert.ok(a.sourceSql.every((q) => !q.includes('unnest(')));
});

test('maxShippedRows 0: never shipped; EXPLAIN shows the estimates of the federated plans and the choice', async () => {
  const never = new Engine(services.registry, services.runtime, 'vdb', {
    pushdown: true,
    dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 },
  });
  const sql = CASES[0]!;
  const a = await rows(never, sql);
  assert.equal(sorted(a.json), sorted((await rows(local, sql)).json));
  assert.ok(a.sourceSql.every((q) => !q.includes('unnest(')));
  const plan = JSON.parse((await rows(never, `EXPLAIN ${sql}`)).json) as string[][];
  const my = plan.find((row) => row[1] === 'my')!;
  const pgStep = plan.find((row) => row[1] === 'pg')!;
  assert.match(String(my[4]), /estimate 600 rows/);
  assert.doesNotMatch(String(my[4]), /keys of/, 'the smaller side loads first, without keys');
  // 600 keys against 20,000 rows in 700 groups: reading both at once beats waiting for the keys.
  assert.match(
    String(pgStep[4]),
    /read at the same time as my\.customers.*dependent [\d.]+ ms, parallel [\d.]+ ms: parallel\).*estimate 20000 rows/,
  );
  assert.ok(
    a.sourceSql.every((q) => !/customer_id" (IN|= ANY)/.test(q)),
    'no keys sent',
  );
});

test('EXPLAIN shows the choice and its estimates', async () => {
  const plan = await rows(pushed, `EXPLAIN ${CASES[0]}`);
  assert.match(plan.json, /shipped to PostgreSQL/);
  assert.match(plan.json, /600 rows .* 20000 rows/);
});

/** The answer of `sql` through the default engine, compared with local evaluation; its PostgreSQL statement. */
async function sameAsLocal(sql: string): Promise<string> {
  const a = await rows(pushed, sql);
  const b = await rows(local, sql);
  assert.notEqual(b.json, '[]');
  assert.equal(sorted(a.json), sorted(b.json));
  assert.equal(sorted(a.json), sorted((await rows(rowsOnly, sql)).json));
  return a.sourceSql[0] ?? '';
}

test('dense unique integer keys go as a lookup array: same answers, no keyed filter', async () => {
  const forms = new Set<string>();
  for (const sql of [
    CASES[0]!,
    CASES[1]!,
    // Only the key shipped; the key itself selected (its type kept); FROM-list form; conditions on the small side.
    'SELECT count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id',
    'SELECT c.id, c.name, o.id FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE o.id < 60',
    "SELECT c.tag, count(*) FROM pg.orders o, my.customers c WHERE c.id = o.customer_id AND c.name <> 'bob' AND c.score > 0 GROUP BY c.tag",
    // A NULL key joins nothing; keys without orders (700 and more).
    'SELECT n.kind, count(*) FROM pg.orders o JOIN my.nullkeys n ON n.id = o.customer_id GROUP BY n.kind',
    // bigint on both sides, orders' values beyond int4 looked up as nothing.
    'SELECT b.kind, count(*), min(o.big) FROM pg.orders o JOIN my.bigkeys b ON b.id = o.big GROUP BY b.kind',
    // A negative least key.
    'SELECT n.kind, count(*), min(o.customer_id) FROM pg.orders o JOIN my.negkeys n ON n.id = o.customer_id GROUP BY n.kind',
  ]) {
    const statement = await sameAsLocal(sql);
    assert.match(statement, LATERAL, sql);
    assert.doesNotMatch(statement, /= ANY \(/, sql);
    forms.add(/get_byte\(/.test(statement) ? 'bytes' : /'\[-?\d+:\d+\]=\{/.test(statement) ? 'int4' : 'neither');
  }
  // Up to 255 distinct rows a byte per key; more (CASES[1]'s name, score and since) an int4 array.
  assert.deepEqual([...forms].sort(), ['bytes', 'int4']);
  const typed = await rows(pushed, 'SELECT c.id FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE o.id = 7');
  assert.equal(typed.json, '[[7]]');
});

test('repeated, sparse or unreachable keys keep the rows and the keyed filter, with the same answers', async () => {
  for (const sql of [
    // Customer 1 has two visits: both must join.
    'SELECT v.channel, count(*) FROM pg.orders o JOIN my.visits v ON v.customer_id = o.customer_id GROUP BY v.channel',
    // 2,000,000 - 1 slots for 4 rows.
    'SELECT s.kind, count(*) FROM pg.orders o JOIN my.sparse s ON s.id = o.customer_id GROUP BY s.kind',
    // 10 keys of the orders' 700 customer ids: PostgreSQL may read them through an index.
    'SELECT c.name, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.id < 10 GROUP BY c.name',
    // The small side first in FROM: a LATERAL subquery there could not name the orders.
    'SELECT c.tag, count(*) FROM my.customers c JOIN pg.orders o ON c.id = o.customer_id GROUP BY c.tag',
  ]) {
    const statement = await sameAsLocal(sql);
    assert.doesNotMatch(statement, LATERAL, sql);
    assert.match(statement, /unnest\('\{/, sql);
  }
});

test('in the lookup form, equalities on the shipped table are applied by vdb exactly (not sent), with the same answers', async () => {
  const ids = Array.from({ length: 100 }, (_, i) => i).join(', ');
  for (const [sql, taken] of [
    // MariaDB's comparison keeps 'Alice' and 'ALICE' too: vdb keeps 'alice' only, as PostgreSQL would.
    [CASES[1]!, /'alice'/],
    // 'Bob' is no one's name exactly ('Bob ' and 'bob' are); quotes, backslashes and braces in the values.
    [CASES[2]!, /'\{x,y\}'/],
    // The constant first.
    [
      "SELECT c.tag, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE 'alice' = c.name GROUP BY c.tag",
      /'alice'/,
    ],
    // Integers; a condition that stays (not an equality).
    [
      `SELECT c.tag, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.id IN (${ids}) AND c.score > 0 GROUP BY c.tag`,
      /id IN/,
    ],
  ] as const) {
    const statement = await sameAsLocal(sql);
    assert.match(statement, LATERAL, sql);
    assert.doesNotMatch(statement, taken, sql);
  }
  const kept = await sameAsLocal(
    `SELECT c.tag, count(*) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.id IN (${ids}) AND c.score > 0 GROUP BY c.tag`,
  );
  assert.match(kept, /score > 0/);
  // An outer join: the condition stays in the statement (dropping rows before the join would not mean the same).
  const outer = await sameAsLocal(
    "SELECT c.name, count(*) FROM pg.orders o LEFT JOIN my.customers c ON c.id = o.customer_id WHERE c.name = 'alice' OR c.name IS NULL GROUP BY c.name",
  );
  assert.match(outer, /'alice'/);
  const plan = await rows(pushed, `EXPLAIN ${CASES[1]}`);
  assert.match(plan.json, /the conditions on name then applied by vdb to its rows, not sent/);
});

test('EXPLAIN names the lookup form', async () => {
  const plan = await rows(pushed, `EXPLAIN ${CASES[0]}`);
  assert.match(plan.json, /lookup array indexed by o\.customer_id/);
});
