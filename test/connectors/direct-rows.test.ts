/**
 * Whole statements to MariaDB and SQLite answered without the engine (source-execution.ts,
 * direct-json.ts) against the engine path (directRows: false), over tables holding every type
 * the route returns with edge values, clean and not: the same status, body (byte for byte),
 * SQL-Warnings and SQL-Column-Types, in both row shapes, with headers, windows and pagination.
 * The MariaDB database (vdbt_<random>) and the SQLite file are this run's own, dropped at the end.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type mysql from 'mysql2/promise';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { loginToken } from '../http/util.js';
import { mysqlConnection, uniqueTag } from './db.js';

const tag = uniqueTag();
let admin: mysql.Connection;
let direct: TestServer;
let engine: TestServer;
const tokens = new Map<TestServer, string>();

before(async () => {
  admin = await mysqlConnection();
  await admin.query(
    `CREATE DATABASE ${tag} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
    USE ${tag};
    CREATE TABLE t (
      id int PRIMARY KEY, ti tinyint, si smallint unsigned, iu int unsigned, bu bigint unsigned, bs bigint,
      d2 decimal(12,2), d0 decimal(18,0), d30 decimal(30,10), f float, d double, dt date, dtm datetime(6),
      dts datetime, tm time, vc varchar(40), tx text, vb varbinary(16), j json, e enum('red','green'),
      b boolean, yr year, bt bit(64)) ENGINE=InnoDB;
    INSERT INTO t VALUES
      (1, -128, 65535, 4294967295, 18446744073709551615, -9223372036854775808, 1234567890.12, 999999999999999999,
       12345678901234567890.0123456789, 1.5, 0.1, '2024-02-29', '2024-02-29 13:45:30.123456', '2024-02-29 13:45:30',
       '13:45:30', 'héllo 日本 😀 "q" \\\\ /', 'tab\\there\\nnew\\r\\0x\\Z', 0xDEADBEEF00, '{"a": [1, 2.5, "x"], "b": null}', 'green',
       true, 2024, b'1010'),
      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL),
      (3, 127, 0, 0, 0, 9223372036854775807, -0.01, -5, -0.0000000001, -0.25, -1e300, '1000-01-01', '9999-12-31 23:59:59.999999',
       '0001-01-01 00:00:00', '-838:59:59', '', '', X'', '[]', 'red', false, 1901, b'1111111111111111111111111111111111111111111111111111111111111111'),
      (4, 0, 7, 1, 1, 1, 0, 0, 0, 0, 1e15, '2000-01-01', '2000-01-01 00:00:00.000100', '2000-01-01 00:00:00', '00:00:00',
       'abc  ', 'ABC', NULL, NULL, NULL, NULL, NULL, NULL),
      (5, 1, 1, 1, 1, 1, 0.5, 1, 1, 1e-7, 1e-7, '2024-01-01', '2024-01-01 00:00:00.5', '2024-01-01 00:00:00', '01:00:00',
       'x', 'y', 0x00, '{"k":1}', 'red', 2, 2000, b'1');
    CREATE TABLE copy_direct (id bigint, i bigint, r double, tx text, d2 decimal(10,2), dt date, ts datetime(6)) ENGINE=InnoDB;
    CREATE TABLE copy_engine LIKE copy_direct;
    CREATE TABLE grp (id int PRIMARY KEY, k int, v bigint, m decimal(8,3)) ENGINE=InnoDB;
    INSERT INTO grp SELECT seq, seq % 7, seq * 1000003, seq / 8 FROM seq_1_to_3000;
    ANALYZE TABLE t, grp;`,
  );
  direct = await startTestServer();
  engine = await startTestServer({ directRows: false });
  const file = (server: TestServer) => path.join(server.dataDir, 'files', 'direct.sqlite');
  const db = new Database(file(direct));
  db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, tx TEXT, bl BLOB, n NUMERIC, d2 DECIMAL(10,2),
      dt DATE, ts DATETIME, b BOOLEAN, u);
    CREATE TABLE grp (id INTEGER PRIMARY KEY, k INTEGER, v INTEGER, name TEXT);`);
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  insert.run(
    1,
    9223372036854775807n,
    1.5,
    'héllo "q" \\ \u0001\u001f\u007f\u2028 😀',
    Buffer.from([0, 255]),
    12.5,
    '12.34',
    '2024-02-29',
    '2024-02-29 13:45:30.123',
    1,
    'x',
  );
  insert.run(2, null, null, null, null, null, null, null, null, null, null);
  insert.run(3, -9223372036854775808n, -0.0, '', Buffer.alloc(0), 7, 3, '0001-01-01', '2024-02-29T13:45:30', 0, 42);
  insert.run(4, 5, 1e300, 'text', 'text in a blob', 1.5, 0.1, '2024-01-01', '2024-01-01 00:00:00.000000', 2, 1.25);
  // Values the engine does not take as the column's type: NULL and a warning there, the engine path here.
  insert.run(5, 'abc', 'not a number', 42, 7, 'x', '1.005', 'garbage', '2024-02-30 00:00:00', 'yes', Buffer.from('b'));
  insert.run(6, 1.5, 3, 'six', null, 2, 12345678901, '2024-13-01', '2024-02-29 13:45:30+02:00', 1.5, null);
  const group = db.prepare('INSERT INTO grp VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 1; i <= 3000; i++) group.run(i, i % 7, i * 1000003, `name ${i}`);
  })();
  db.close();
  fs.copyFileSync(file(direct), file(engine));
  const sources = async (server: TestServer) => {
    await server.services.registry.addSource({
      name: 'my',
      kind: 'mysql',
      connection: { host: '127.0.0.1', port: '3306', db: tag, 'user-name': 'root' },
    });
    await server.services.registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: file(server) } });
    tokens.set(server, await loginToken(server));
  };
  await sources(direct);
  await sources(engine);
});

after(async () => {
  await direct?.close();
  await engine?.close();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${tag}`);
  } finally {
    await admin.end();
  }
});

interface Answer {
  status: number;
  body: string;
  warnings: string | null;
  types: string | null;
  page: Array<string | null>;
}

async function answer(server: TestServer, sql: string, params = '', link?: string): Promise<Answer> {
  return (await answerAndLink(server, sql, params, link)).answer;
}

/** The answer, and the link to the next page of a paginated result. */
async function answerAndLink(
  server: TestServer,
  sql: string,
  params = '',
  link?: string,
): Promise<{ answer: Answer; next: string | null }> {
  const response = await fetch(link ?? `${server.url}/rest/api/query${params}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-auth-token': tokens.get(server)! },
    body: JSON.stringify({ sql }),
  });
  const answer = {
    status: response.status,
    body: await response.text(),
    warnings: response.headers.get('SQL-Warnings'),
    types: response.headers.get('SQL-Column-Types'),
    page: ['limit', 'offset', 'nextPage', 'prevPage'].map(
      (h) =>
        response.headers
          .get(h)
          ?.replace(/^.*\?/, '')
          .replace(/requestId=\w+/, 'requestId=') ?? null,
    ),
  };
  return { answer, next: response.headers.get('nextPage') };
}

/** Asks both servers; the answers must be the same. Returns how many of them the direct path wrote. */
async function same(sql: string, params = ''): Promise<number> {
  const before = direct.services.engine.direct;
  const [a, b] = [await answer(direct, sql, params), await answer(engine, sql, params)];
  assert.deepEqual(a, b, `${sql} ${params}`);
  assert.equal(engine.services.engine.direct, 0, 'the engine path writes nothing directly');
  return direct.services.engine.direct - before;
}

const SHAPES = ['', '?array=false', '?headers=true', '?limit=2&offset=1', '?offset=3', '?limit=0'];

const MY_COLUMNS = [
  'ti',
  'si',
  'iu',
  'bu',
  'bs',
  'd2',
  'd0',
  'd30',
  'f',
  'd',
  'dt',
  'dtm',
  'dts',
  'tm',
  'vc',
  'tx',
  'vb',
  'j',
  'e',
  'b',
  'yr',
  'bt',
];
const LITE_COLUMNS = ['i', 'r', 'tx', 'bl', 'n', 'd2', 'dt', 'ts', 'b', 'u'];

for (const [source, columns, ids] of [
  ['my', MY_COLUMNS, [1, 2, 3, 4, 5]],
  ['lite', LITE_COLUMNS, [1, 2, 3, 4, 5, 6]],
] as const) {
  test(`${source}: every column alone, whole and by primary key, as the engine path answers`, async () => {
    let written = 0;
    for (const column of columns) {
      for (const shape of SHAPES) written += await same(`SELECT id, ${column} FROM ${source}.t ORDER BY id`, shape);
      for (const id of ids) written += await same(`SELECT ${column}, id FROM ${source}.t WHERE id = ${id}`);
    }
    assert.ok(written > columns.length * 4, `the direct path answered ${written}`);
  });

  test(`${source}: whole rows, aggregates, groups, windows and a result beyond the direct path's rows`, async () => {
    let written = 0;
    for (const shape of SHAPES) {
      written += await same(`SELECT * FROM ${source}.t ORDER BY id`, shape);
      for (const id of ids) written += await same(`SELECT * FROM ${source}.t WHERE id = ${id}`, shape);
    }
    for (const sql of [
      `SELECT count(*), sum(v), min(v), max(v), min(k) FROM ${source}.grp`,
      `SELECT k, count(*), sum(v) FROM ${source}.grp GROUP BY k ORDER BY k`,
      `SELECT id, k, v FROM ${source}.grp WHERE id <= 2048 ORDER BY id`,
      `SELECT id, k, v FROM ${source}.grp WHERE id <= 2049 ORDER BY id`,
      `SELECT * FROM ${source}.grp ORDER BY id`,
      `SELECT * FROM ${source}.grp WHERE id > 2990 ORDER BY id DESC LIMIT 5 OFFSET 2`,
      `SELECT g.id, t.id FROM ${source}.grp g JOIN ${source}.t t ON t.id = g.k ORDER BY g.id LIMIT 20`,
      `SELECT id FROM ${source}.t WHERE id = 999`,
    ]) {
      for (const shape of SHAPES) written += await same(sql, shape);
    }
    if (source === 'my') written += await same('SELECT sum(m), min(m), max(m) FROM my.grp');
    assert.ok(written > 0);
  });

  test(`${source}: pagination walks the same pages`, async () => {
    for (const sql of [`SELECT * FROM ${source}.t ORDER BY id`, `SELECT id, k FROM ${source}.grp WHERE id < 50 ORDER BY id`]) {
      let a = await answerAndLink(direct, sql, '?pagination=true&limit=2');
      let b = await answerAndLink(engine, sql, '?pagination=true&limit=2');
      let pages = 1;
      for (;;) {
        assert.deepEqual(a.answer, b.answer, `${sql}: page ${pages}`);
        if (!a.next || !b.next) break;
        [a, b] = [await answerAndLink(direct, sql, '', a.next), await answerAndLink(engine, sql, '', b.next)];
        pages++;
      }
      assert.ok(pages >= 3, `${pages} pages`);
    }
  });
}

test('a point lookup of clean values is written directly, one of a zero date or a value the engine warns about is not', async () => {
  assert.equal(await same('SELECT id, vc, bu, d2, dtm FROM my.t WHERE id = 1'), 1);
  assert.equal(await same('SELECT id, i, tx FROM lite.t WHERE id = 1'), 1);
  assert.equal(await same('SELECT id, i FROM lite.t WHERE id = 5'), 0, 'text in an INTEGER column: the engine path');
  assert.equal(await same('SELECT id, bt FROM my.t WHERE id = 3'), 0, 'a BIT(64) beyond BIGINT: the engine path');
  assert.equal(await same('SELECT id, f FROM my.t WHERE id = 1'), 0, 'FLOAT: the engine path');
  const [withWarning] = [await answer(direct, 'SELECT id, i FROM lite.t WHERE id = 5')];
  assert.match(withWarning.warnings ?? '', /did not fit BIGINT/);
});

test('INSERT ... SELECT of rows read directly writes the values the engine path writes', async () => {
  const select = 'SELECT id, i, r, tx, d2, dt, ts FROM lite.t WHERE id IN (1, 2, 3, 4)';
  const before = direct.services.engine.direct;
  for (const [server, target] of [
    [direct, 'copy_direct'],
    [engine, 'copy_engine'],
  ] as const) {
    const response = await answer(server, `INSERT INTO my.${target} ${select}`);
    assert.equal(response.status, 200, response.body);
  }
  const [a] = await admin.query(`SELECT * FROM ${tag}.copy_direct ORDER BY id`);
  const [b] = await admin.query(`SELECT * FROM ${tag}.copy_engine ORDER BY id`);
  assert.equal(JSON.stringify(a), JSON.stringify(b));
  assert.equal((a as unknown[]).length, 4);
  assert.equal(direct.services.engine.direct - before, 1, 'the SELECT was read directly');
});

test('the query log records a direct statement as the engine path: its rows, status and source query', async () => {
  const sql = 'SELECT id, vc, d2 FROM my.t WHERE id IN (1, 3, 4) ORDER BY id';
  const logged = async (server: TestServer) => {
    const response = await answer(server, sql, '?limit=2');
    assert.equal(response.status, 200);
    const log = await answer(
      server,
      `SELECT "RowCount", "Status", "Error", "SourceQueries" FROM SYSLOG.QueryLog WHERE "Statement" = '${sql}' ORDER BY "ID" DESC LIMIT 1`,
    );
    return log.body;
  };
  const before = direct.services.engine.direct;
  const [a, b] = [await logged(direct), await logged(engine)];
  assert.equal(direct.services.engine.direct - before, 1);
  assert.equal(a, b);
  assert.match(a, /^\[\[2,"ok",null,"my: SELECT/);
});
