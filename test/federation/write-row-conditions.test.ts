/**
 * UPDATE and DELETE under a row condition change exactly the rows the same user's SELECT (with
 * the same WHERE) shows, on PostgreSQL (the reference), MariaDB and SQLite, and answer their
 * number; INSERT checks its rows as SELECT would read them back; where no exact way exists the
 * write is refused. Every statement is checked against the source itself, read directly.
 *
 * The data carries each source's traps: MariaDB's case- and accent-insensitive collation that
 * ignores trailing spaces ('A', 'á', 'a ' equal 'a' there), SQLite's NOCASE column and values of
 * another storage class (text in an INTEGER column, which the engine reads as NULL; a REAL it
 * rounds), and NULLs.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { mysqlConnection, pgClient, uniqueTag } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, okJson, tokenRequester, type Requester } from '../http/util.js';

const TAG = uniqueTag();
const USER = { name: 'wanda', password: 'wanda-password-1' };
const ROLE = 'editor';

type Row = [id: number, grp: string | null, n: number | string | null];

/** The rows of every source: the same text traps everywhere. */
const ROWS: Row[] = [
  [1, 'a', 1],
  [2, 'A', 2],
  [3, 'a ', 3],
  [4, 'á', 4],
  [5, null, 5],
  [6, 'b', 6],
  [7, 'a', null],
  [8, 'ab', 8],
  [9, 'B', 9],
  [10, 'a', 10],
];

/** SQLite's own traps: text and a REAL in the INTEGER column n. */
const SQLITE_ROWS: Row[] = [...ROWS, [11, 'a', 'x'], [12, 'a', 2.5], [13, 'A', 'x'], [14, 'á', null]];

const SOURCES = ['pgx', 'myx', 'litex'] as const;
type SourceName = (typeof SOURCES)[number];

/** Row conditions of the role, and WHERE clauses of the user, whose every pair is tried. */
const CONDITIONS = ["grp = 'a'", "grp LIKE 'a%'", "grp IN ('a', 'b')", "grp < 'b'", "n IS NULL OR grp = 'a'"];
const WHERES = ['', 'WHERE n < 5', "WHERE grp = 'a'", 'WHERE n IS NULL', "WHERE n = 1 OR grp >= 'a'", "WHERE grp LIKE '_'"];

let server: TestServer;
let admin: Requester;
let user: Requester;
let sqliteFile: string;

before(async () => {
  const pg = await pgClient();
  try {
    await pg.query(`CREATE SCHEMA ${TAG}`);
    await pg.query(`CREATE TABLE ${TAG}.w (id int PRIMARY KEY, grp text, n int, note text)`);
    await pg.query(`CREATE TABLE ${TAG}.nokey (id int, grp text, n int, note text)`);
  } finally {
    await pg.end();
  }
  const my = await mysqlConnection();
  try {
    await my.query(`CREATE DATABASE ${TAG} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
    await my.query(`CREATE TABLE ${TAG}.w (id int PRIMARY KEY, grp varchar(10), n int, note varchar(20))`);
    await my.query(`CREATE TABLE ${TAG}.nokey (id int, grp varchar(10), n int, note varchar(20))`);
    // A text key: it too compares by the collation there.
    await my.query(`CREATE TABLE ${TAG}.tk (k varchar(10) PRIMARY KEY, grp varchar(10), note varchar(20))`);
    // A date key: not one vdb matches exactly at the source.
    await my.query(`CREATE TABLE ${TAG}.dk (d date PRIMARY KEY, grp varchar(10), note varchar(20))`);
    await my.query(`INSERT INTO ${TAG}.dk VALUES ('2025-01-01', 'a', NULL), ('2025-01-02', 'A', NULL)`);
  } finally {
    await my.end();
  }
  server = await startTestServer();
  sqliteFile = path.join(server.dataDir, 'files', `${TAG}.sqlite`);
  const db = new Database(sqliteFile);
  db.exec(`CREATE TABLE w (id INTEGER PRIMARY KEY, grp TEXT COLLATE NOCASE, n INTEGER, note TEXT);
           CREATE TABLE nokey (id INTEGER, grp TEXT COLLATE NOCASE, n INTEGER, note TEXT);
           CREATE TABLE tk (k TEXT COLLATE NOCASE PRIMARY KEY, grp TEXT COLLATE NOCASE, note TEXT) WITHOUT ROWID;
           CREATE TABLE dk (d DATE PRIMARY KEY, grp TEXT COLLATE NOCASE, note TEXT);
           INSERT INTO dk VALUES ('2025-01-01', 'a', NULL), ('2025-01-02', 'A', NULL);`);
  db.close();
  admin = await tokenRequester(server);
  const add = async (body: unknown) => {
    const response = await admin('/rest/api/source', { body });
    assert.equal(response.status, 201, await response.text());
  };
  await add({
    name: 'pgx',
    template: 'postgresql',
    connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
    modelProps: `importer.schemaPattern=${TAG}`,
  });
  await add({ name: 'myx', template: 'mysql', connectionProps: `host=127.0.0.1,port=3306,db=${TAG},user-name=root` });
  await add({ name: 'litex', template: 'sqlite', connectionProps: `path=${sqliteFile}` });
  for (const call of [
    `CALL SYSADMIN.addUser('${USER.name}', '${USER.password}')`,
    `CALL SYSADMIN.addRole('${ROLE}')`,
    `CALL SYSADMIN.addUserRole('${ROLE}', '${USER.name}')`,
  ])
    await rows(admin, call);
  user = await tokenRequester(server, USER.name, USER.password);
});

after(async () => {
  await server?.close();
  const pg = await pgClient();
  await pg.query(`DROP SCHEMA IF EXISTS ${TAG} CASCADE`);
  await pg.end();
  const my = await mysqlConnection();
  await my.query(`DROP DATABASE IF EXISTS ${TAG}`);
  await my.end();
});

async function rows(request: Requester, statement: string): Promise<unknown[][]> {
  return okJson<unknown[][]>(await request('/rest/api/query', { body: { sql: statement } }), statement);
}

const q = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The role's grant on `source.table`, with `condition` for every letter. */
async function grant(source: SourceName, condition: string | null, table = 'w'): Promise<void> {
  await rows(admin, `CALL SYSADMIN.setPermissions('${ROLE}', '${source}.${table}', 'CRUD', ${condition === null ? 'NULL' : q(condition)})`);
}

/** The source's table `table` holds `data` again, note NULL (written directly). */
async function reset(source: SourceName, table = 'w', data: Row[] = source === 'litex' ? SQLITE_ROWS : ROWS): Promise<void> {
  if (source === 'pgx') {
    const pg = await pgClient();
    try {
      await pg.query(`DELETE FROM ${TAG}.${table}`);
      for (const row of data) await pg.query(`INSERT INTO ${TAG}.${table} (id, grp, n) VALUES ($1, $2, $3)`, row);
    } finally {
      await pg.end();
    }
  } else if (source === 'myx') {
    const my = await mysqlConnection(TAG);
    try {
      await my.query(`DELETE FROM ${table}`);
      for (const row of data) await my.query(`INSERT INTO ${table} (id, grp, n) VALUES (?, ?, ?)`, row);
    } finally {
      await my.end();
    }
  } else {
    const db = new Database(sqliteFile);
    try {
      db.exec(`DELETE FROM ${table}`);
      const insert = db.prepare(`INSERT INTO ${table} (id, grp, n) VALUES (?, ?, ?)`);
      for (const row of data) insert.run(...row);
    } finally {
      db.close();
    }
  }
}

/** `[id, note]` of every row of the source's table, read directly, by id. */
async function sourceRows(source: SourceName, table = 'w'): Promise<Array<[number, string | null]>> {
  const select = `SELECT id, note FROM ${table} ORDER BY id`;
  if (source === 'pgx') {
    const pg = await pgClient();
    try {
      return (await pg.query({ text: `SELECT id, note FROM ${TAG}.${table} ORDER BY id`, rowMode: 'array' })).rows as Array<
        [number, string | null]
      >;
    } finally {
      await pg.end();
    }
  }
  if (source === 'myx') {
    const my = await mysqlConnection(TAG);
    try {
      const [result] = await my.query({ sql: select, rowsAsArray: true });
      return result as Array<[number, string | null]>;
    } finally {
      await my.end();
    }
  }
  const db = new Database(sqliteFile, { readonly: true });
  try {
    return db.prepare(select).raw(true).all() as Array<[number, string | null]>;
  } finally {
    db.close();
  }
}

/** The ids the user's SELECT shows with `where`: the rows a write with that WHERE must reach. */
async function visibleIds(source: SourceName, where: string): Promise<number[]> {
  return (await rows(user, `SELECT id FROM ${source}.w ${where} ORDER BY id`)).map((r) => Number(r[0]));
}

/** The exact ids of `grp = 'a'` for each source, decided here, not by the engine. */
const EXACT_A: Record<SourceName, number[]> = { pgx: [1, 7, 10], myx: [1, 7, 10], litex: [1, 7, 10, 11, 12] };

for (const source of SOURCES) {
  describe(`${source}: writes under a row condition`, () => {
    test("the SELECT of grp = 'a' shows exactly the rows holding 'a' (the reference of the other tests)", async () => {
      await grant(source, "grp = 'a'");
      await reset(source);
      assert.deepEqual(await visibleIds(source, ''), EXACT_A[source]);
    });

    test("UPDATE and DELETE under grp = 'a' reach only the rows holding exactly 'a'", async () => {
      await grant(source, "grp = 'a'");
      await reset(source);
      assert.deepEqual(await rows(user, `UPDATE ${source}.w SET note = 'hit'`), [[EXACT_A[source].length]]);
      const after = await sourceRows(source);
      assert.deepEqual(
        after.filter(([, note]) => note === 'hit').map(([id]) => id),
        EXACT_A[source],
      );
      assert.deepEqual(await rows(user, `DELETE FROM ${source}.w`), [[EXACT_A[source].length]]);
      const all = (source === 'litex' ? SQLITE_ROWS : ROWS).map(([id]) => id);
      assert.deepEqual(
        (await sourceRows(source)).map(([id]) => id),
        all.filter((id) => !EXACT_A[source].includes(id)),
      );
    });

    for (const condition of CONDITIONS) {
      for (const where of WHERES) {
        test(`UPDATE and DELETE ${where || '(all rows)'} under ${condition} change the rows SELECT shows`, async () => {
          await grant(source, condition);
          await reset(source);
          const expected = await visibleIds(source, where);
          const update = `UPDATE ${source}.w SET note = 'hit' ${where}`;
          assert.deepEqual(await rows(user, update), [[expected.length]], update);
          assert.deepEqual(
            (await sourceRows(source)).filter(([, note]) => note === 'hit').map(([id]) => id),
            expected,
            update,
          );
          const before = (await sourceRows(source)).map(([id]) => id);
          const del = `DELETE FROM ${source}.w ${where}`;
          assert.deepEqual(await rows(user, del), [[expected.length]], del);
          assert.deepEqual(
            (await sourceRows(source)).map(([id]) => id),
            before.filter((id) => !expected.includes(id)),
            del,
          );
        });
      }
    }

    test('an UPDATE that changes nothing still answers the rows it reached', async () => {
      await grant(source, "grp = 'a'");
      await reset(source);
      assert.deepEqual(await rows(user, `UPDATE ${source}.w SET note = note WHERE id = 1`), [[1]]);
      assert.deepEqual(await rows(user, `UPDATE ${source}.w SET note = note WHERE id = 2`), [[0]]);
    });

    test("INSERT under grp = 'a' takes only rows the user reads back", async () => {
      await grant(source, "grp = 'a'");
      await reset(source, 'w', []);
      for (const [id, grp] of [
        [100, 'A'],
        [101, 'a '],
        [102, 'á'],
        [103, null],
      ] as const) {
        await assertApiError(
          await user('/rest/api/query', {
            body: { sql: `INSERT INTO ${source}.w (id, grp, n) VALUES (${id}, ${grp === null ? 'NULL' : q(grp)}, 1)` },
          }),
          403,
          `${source}: INSERT ${grp}`,
        );
      }
      assert.deepEqual(await sourceRows(source), []);
      assert.deepEqual(await rows(user, `INSERT INTO ${source}.w (id, grp, n) VALUES (104, 'a', 1)`), [[1]]);
      assert.deepEqual(await visibleIds(source, ''), [104]);
    });

    test('a table without a primary key is refused where the source cannot be trusted with the condition', async () => {
      await grant(source, "grp = 'a'", 'nokey');
      await reset(source, 'nokey');
      const response = await user('/rest/api/query', { body: { sql: `UPDATE ${source}.nokey SET note = 'hit'` } });
      if (source === 'pgx') {
        assert.deepEqual(await okJson(response), [[3]]);
        return;
      }
      const error = await assertApiError(response, 400, `${source}: UPDATE without a key`);
      assert.match(error.description, /primary key/);
      assert.ok(error.hint, 'a hint');
      await assertApiError(await user('/rest/api/query', { body: { sql: `DELETE FROM ${source}.nokey` } }), 400, `${source}: DELETE`);
      assert.ok((await sourceRows(source, 'nokey')).every(([, note]) => note === null));
      assert.equal((await sourceRows(source, 'nokey')).length, ROWS.length + (source === 'litex' ? 4 : 0));
    });
  });
}

describe('text keys', () => {
  for (const source of ['myx', 'litex'] as const) {
    test(`${source}: rows are written by their exact key, not by the collation's`, async () => {
      await grant(source, "grp = 'a'", 'tk');
      const db = source === 'litex' ? new Database(sqliteFile) : null;
      const my = source === 'myx' ? await mysqlConnection(TAG) : null;
      try {
        const data: Array<[string, string]> = [
          ['k ', 'a'],
          ['K2', 'b'],
          ['x', 'A'],
        ];
        if (db) {
          db.exec('DELETE FROM tk');
          for (const row of data) db.prepare('INSERT INTO tk (k, grp) VALUES (?, ?)').run(...row);
        } else {
          await my!.query('DELETE FROM tk');
          for (const row of data) await my!.query('INSERT INTO tk (k, grp) VALUES (?, ?)', row);
        }
      } finally {
        db?.close();
        await my?.end();
      }
      assert.deepEqual(await rows(user, `SELECT k FROM ${source}.tk ORDER BY k`), [['k ']]);
      assert.deepEqual(await rows(user, `UPDATE ${source}.tk SET note = 'hit'`), [[1]]);
      assert.deepEqual(await rows(user, `DELETE FROM ${source}.tk`), [[1]]);
      assert.deepEqual(await rows(admin, `SELECT k, grp FROM ${source}.tk ORDER BY k`), [
        ['K2', 'b'],
        ['x', 'A'],
      ]);
    });
  }
});

describe('keys vdb cannot match exactly', () => {
  for (const source of ['myx', 'litex'] as const) {
    test(`${source}: a date key is refused, and nothing is written`, async () => {
      await grant(source, "grp = 'a'", 'dk');
      for (const statement of [`UPDATE ${source}.dk SET note = 'hit'`, `DELETE FROM ${source}.dk`]) {
        const error = await assertApiError(await user('/rest/api/query', { body: { sql: statement } }), 400, statement);
        assert.match(error.description, /primary key/);
        assert.ok(error.hint);
      }
      assert.deepEqual(await rows(admin, `SELECT grp, note FROM ${source}.dk ORDER BY grp`), [
        ['A', null],
        ['a', null],
      ]);
    });
  }
});

describe('statement shapes under a row condition', () => {
  // [the SELECT that shows the rows, the UPDATE, the DELETE], `S` standing for the source.
  const SHAPES: Array<[string, string, string]> = [
    ['SELECT x.id FROM S.w AS x WHERE x.n < 5', "UPDATE S.w AS x SET note = 'hit' WHERE x.n < 5", 'DELETE FROM S.w AS x WHERE x.n < 5'],
    ['SELECT id FROM S.w WHERE S.w.n < 5', "UPDATE S.w SET note = 'hit' WHERE S.w.n < 5", 'DELETE FROM S.w WHERE S.w.n < 5'],
    [
      "SELECT id FROM S.w WHERE lower(grp) = 'a' AND n::text <> '3'",
      "UPDATE S.w SET note = 'hit' WHERE lower(grp) = 'a' AND n::text <> '3'",
      "DELETE FROM S.w WHERE lower(grp) = 'a' AND n::text <> '3'",
    ],
    [
      'SELECT id FROM S.w WHERE id IN (SELECT id FROM S.w WHERE n > 2)',
      "UPDATE S.w SET note = 'hit' WHERE id IN (SELECT id FROM S.w WHERE n > 2)",
      'DELETE FROM S.w WHERE id IN (SELECT id FROM S.w WHERE n > 2)',
    ],
    [
      'SELECT DISTINCT w.id FROM S.w, S.tk WHERE w.grp = tk.grp',
      "UPDATE S.w SET note = 'hit' WHERE grp = 'zzz'",
      'DELETE FROM S.w USING S.tk WHERE w.grp = tk.grp',
    ],
  ];
  for (const source of ['myx', 'litex'] as const) {
    test(`${source}: aliases, qualified names, functions, subqueries and USING reach the rows SELECT shows`, async () => {
      await grant(source, "grp LIKE 'a%' OR n IS NULL");
      await grant(source, null, 'tk');
      for (const [select, update, del] of SHAPES.map((shape) => shape.map((s) => s.replace(/\bS\./g, `${source}.`)))) {
        await reset(source);
        const expected = (await rows(user, `${select} ORDER BY 1`)).map((r) => Number(r[0]));
        if (!update.includes('zzz')) {
          assert.deepEqual(await rows(user, update), [[expected.length]], update);
          assert.deepEqual(
            (await sourceRows(source)).filter(([, note]) => note === 'hit').map(([id]) => id),
            expected,
            update,
          );
        }
        const before = (await sourceRows(source)).map(([id]) => id);
        assert.deepEqual(await rows(user, del), [[expected.length]], del);
        assert.deepEqual(
          (await sourceRows(source)).map(([id]) => id),
          before.filter((id) => !expected.includes(id)),
          del,
        );
      }
    });

    test(`${source}: a USING entry named like the target is refused (the condition would mean its columns)`, async () => {
      await grant(source, "grp = 'a'");
      await grant(source, null, 'tk');
      await reset(source);
      const statement = `DELETE FROM ${source}.w USING ${source}.tk AS w WHERE w.grp = 'a'`;
      const error = await assertApiError(await user('/rest/api/query', { body: { sql: statement } }), 400, statement);
      assert.match(error.description, /named like the target/);
      assert.equal((await sourceRows(source)).length, (source === 'litex' ? SQLITE_ROWS : ROWS).length);
    });
  }
});

describe("a reader's writes are bound by the conditions of reading too", () => {
  const READER = 'reader';
  before(async () => {
    await rows(admin, `CALL SYSADMIN.addRole('${READER}')`);
    await rows(admin, `CALL SYSADMIN.addUserRole('${READER}', '${USER.name}')`);
  });
  after(async () => {
    await rows(admin, `CALL SYSADMIN.removeRole('${READER}')`);
  });

  for (const source of SOURCES) {
    test(`${source}: a user who may not read the table writes by the write's condition alone, as in PostgreSQL`, async () => {
      await rows(admin, `CALL SYSADMIN.setPermissions('${ROLE}', '${source}.w', 'UD', ${q("grp = 'a'")})`);
      await rows(admin, `CALL SYSADMIN.setPermissions('${READER}', '${source}.w', '', NULL)`);
      await reset(source);
      assert.deepEqual(await rows(user, `UPDATE ${source}.w SET note = 'blind'`), [[EXACT_A[source].length]]);
      assert.deepEqual(
        (await sourceRows(source)).filter(([, note]) => note === 'blind').map(([id]) => id),
        EXACT_A[source],
      );
      // Reading a column needs R on it.
      await assertApiError(await user('/rest/api/query', { body: { sql: `DELETE FROM ${source}.w WHERE n > 1` } }), 403, source);
    });

    test(`${source}: UPDATE and DELETE reach the rows the user may both write and read`, async () => {
      // The editor writes grp = 'a' without reading; the reader reads n < 5.
      await rows(admin, `CALL SYSADMIN.setPermissions('${ROLE}', '${source}.w', 'UD', ${q("grp = 'a'")})`);
      await rows(admin, `CALL SYSADMIN.setPermissions('${READER}', '${source}.w', 'R', 'n < 5')`);
      await reset(source);
      const readable = await visibleIds(source, "WHERE grp = 'a'");
      assert.ok(readable.length > 0 && readable.length < EXACT_A[source].length, `${source}: the two conditions overlap in part`);

      // A WHERE reads the rows: only those the user reads are reached (and counted).
      assert.deepEqual(await rows(user, `UPDATE ${source}.w SET note = 'hit' WHERE id > 0`), [[readable.length]]);
      assert.deepEqual(
        (await sourceRows(source)).filter(([, note]) => note === 'hit').map(([id]) => id),
        readable,
      );
      // A count over rows the user may not read would tell their values: 0, not 1.
      assert.deepEqual(await rows(user, `UPDATE ${source}.w SET note = 'probe' WHERE id = 10`), [[0]]);
      // Without a WHERE the count would still tell about rows the user may not read: the same rows.
      assert.deepEqual(await rows(user, `UPDATE ${source}.w SET note = 'all'`), [[readable.length]]);

      const before = (await sourceRows(source)).map(([id]) => id);
      assert.deepEqual(await rows(user, `DELETE FROM ${source}.w WHERE n IS NOT NULL OR n IS NULL`), [[readable.length]]);
      assert.deepEqual(
        (await sourceRows(source)).map(([id]) => id),
        before.filter((id) => !readable.includes(id)),
      );
    });
  }
});
