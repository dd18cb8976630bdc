/**
 * Faults in flight (issue 13): a client that hangs up cancels its statement at PostgreSQL and at
 * MariaDB; a source that fails after the first rows were sent leaves no response a client could
 * take for a complete result; many users' statements, pages and source changes at once see no
 * cross-talk (each gets exactly their own rows under their own row condition).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { mysqlConnection, pgClient, uniqueTag, waitUntil } from '../connectors/db.js';
import { tokenRequester, type Requester } from './util.js';

const tag = uniqueTag();
let server: TestServer;
let pgAdmin: pg.Client;
let myAdmin: mysql.Connection;

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE VIEW ${tag}.sleepy AS SELECT g AS id FROM generate_series(1, 3) g, pg_sleep(20) s;
    -- Rows stream out of COPY until row 60,000 divides by zero.
    CREATE VIEW ${tag}.boom AS SELECT g AS id, 100 / (60000 - g) AS v FROM generate_series(1, 100000) g;
  `);
  myAdmin = await mysqlConnection();
  await myAdmin.query(`CREATE DATABASE ${tag}`);
  await myAdmin.query(`CREATE VIEW ${tag}.sleepy AS SELECT SLEEP(20) AS slept, 1 AS id`);
  // Many statements of one user at once: beyond the default per-user limit, which is not what this file tests.
  server = await startTestServer({}, { VDB_STATEMENTS_PER_USER: '1000' });
  for (const body of [
    {
      name: 'pgf',
      template: 'postgresql',
      connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
      modelProps: `importer.schemaPattern=${tag}`,
    },
    { name: 'myf', template: 'mariadb', connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=root` },
  ]) {
    const added = await server.request('/rest/api/source', { body });
    assert.equal(added.status, 201, await added.text());
  }
});

after(async () => {
  await server?.close();
  await pgAdmin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await pgAdmin?.end();
  await myAdmin?.query(`DROP DATABASE IF EXISTS ${tag}`);
  await myAdmin?.end();
});

/** Sends a statement over a raw socket and returns the socket, to be destroyed without reading. */
function sendAndHold(sql: string): net.Socket {
  const { port } = new URL(server.url);
  const body = JSON.stringify({ sql });
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(
    `POST /rest/api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: ${server.basic()}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

const pgRunning = async (): Promise<number> => {
  const { rows } = await pgAdmin.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE $1`,
    [`%${tag}%sleepy%`],
  );
  return Number(rows[0]?.n);
};

const myRunning = async (): Promise<number> => {
  const [rows] = await myAdmin.query(
    `SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND = 'Query' AND INFO LIKE ?`,
    [`%sleepy%`],
  );
  return Number((rows as Array<{ n: number }>)[0]?.n);
};

test('a client that hangs up cancels its statement at PostgreSQL within a second', async () => {
  const socket = sendAndHold('SELECT * FROM pgf.sleepy');
  assert.ok(await waitUntil(async () => (await pgRunning()) === 1, 5000), 'the statement runs at PostgreSQL');
  socket.destroy();
  assert.ok(await waitUntil(async () => (await pgRunning()) === 0, 1000), 'and is gone from pg_stat_activity within a second');
});

test('a client that hangs up cancels its statement at MariaDB within a second', async () => {
  const socket = sendAndHold('SELECT * FROM myf.sleepy');
  assert.ok(await waitUntil(async () => (await myRunning()) === 1, 5000), 'the statement runs at MariaDB');
  socket.destroy();
  assert.ok(await waitUntil(async () => (await myRunning()) === 0, 1000), 'and is gone from the process list within a second');
});

test('a source failing after the first rows were sent: the body is cut, never a complete JSON result', async () => {
  // Whole at PostgreSQL, rows stream as they come: the failure comes after the first rows.
  // Through the engine (the load completes before any row is sent): a clean error.
  for (const [sql, midStream] of [
    ['SELECT * FROM pgf.boom', true],
    ['SELECT id, v FROM pgf.boom WHERE random() >= 0', false],
  ] as const) {
    const response = await server.request('/rest/api/query', { body: { sql } });
    let text: string | null = null;
    try {
      text = await response.text();
    } catch {
      // The connection was cut mid-body: what a client must see.
      assert.equal(response.status, 200, `${sql}: rows had been sent`);
      assert.ok(midStream, `${sql}: cut mid-body`);
      continue;
    }
    assert.ok(!midStream, `${sql}: expected the body to be cut, got ${response.status}: ${text.slice(0, 200)}`);
    // Or the error came before any row: then it is a clean JSON error, not rows.
    assert.notEqual(response.status, 200, `${sql}: a 200 with a complete body: ${text.slice(0, 200)}`);
    const body = JSON.parse(text) as { title?: string };
    assert.ok(body.title, `${sql}: an error body`);
  }
});

test("many users' statements, pages and source changes at once: each sees only their own rows", async () => {
  const countries = ['DE', 'US', 'FR', 'JP'];
  const users: Array<{ country: string; request: Requester; expected: number }> = [];
  for (const country of countries) {
    const name = `u_${country.toLowerCase()}`;
    for (const sql of [
      `CALL SYSADMIN.addRole('r_${name}')`,
      `CALL SYSADMIN.addUser('${name}', '${name}-pass-1')`,
      `CALL SYSADMIN.addUserRole('r_${name}', '${name}')`,
      `CALL SYSADMIN.setPermissions('r_${name}', 'shop', 'R')`,
      `CALL SYSADMIN.setPermissions('r_${name}', 'shop.customers', 'R', 'country = ''${country}''')`,
    ]) {
      const answer = await server.request('/rest/api/query', { body: { sql } });
      assert.equal(answer.status, 200, await answer.text());
    }
    const counted = await server.request('/rest/api/query', {
      body: { sql: `SELECT count(*) FROM shop.customers WHERE country = '${country}'` },
    });
    const [[expected]] = (await counted.json()) as number[][];
    assert.ok(Number(expected) > 0, `the demo has customers in ${country}`);
    users.push({ country, request: await tokenRequester(server, name, `${name}-pass-1`), expected: Number(expected) });
  }

  /** A user's whole view of the table, read in one statement or page by page; checked row by row. */
  async function readAll(user: (typeof users)[number], paged: boolean): Promise<void> {
    const sql = 'SELECT id, country FROM shop.customers ORDER BY id';
    let rows: unknown[][] = [];
    if (!paged) {
      const answer = await user.request('/rest/api/query', { body: { sql } });
      assert.equal(answer.status, 200, await answer.clone().text());
      rows = (await answer.json()) as unknown[][];
    } else {
      let answer = await user.request('/rest/api/query?pagination=true&limit=7', { body: { sql } });
      for (;;) {
        assert.equal(answer.status, 200, await answer.clone().text());
        rows.push(...((await answer.json()) as unknown[][]));
        const next = answer.headers.get('nextpage');
        if (!next) break;
        const url = new URL(next);
        answer = await user.request(`${url.pathname}${url.search}`, { method: 'GET' });
      }
    }
    assert.equal(rows.length, user.expected, `${user.country}: all of their rows, no more`);
    for (const row of rows) assert.equal(row[1], user.country, `${user.country} saw a row of ${String(row[1])}`);
  }

  // Meanwhile an administrator adds and removes a source again and again.
  let changing = true;
  const changes = (async () => {
    for (let i = 0; changing; i++) {
      const name = `tmp_${i}`;
      const added = await server.request('/rest/api/source', {
        body: {
          name,
          template: 'postgresql',
          connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
          modelProps: `importer.schemaPattern=${tag}`,
        },
      });
      assert.equal(added.status, 201, await added.text());
      assert.equal((await server.request(`/rest/api/source/${name}`, { method: 'DELETE' })).status, 204);
    }
  })();
  try {
    await Promise.all(Array.from({ length: 48 }, (_, i) => readAll(users[i % users.length]!, i % 3 === 0)));
  } finally {
    changing = false;
    await changes;
  }
});
