/**
 * Sources that fail mid-statement: a connection cut under a stream, a source that stops
 * answering (stalled, partitioned), a session ended at the source (pg_terminate_backend, KILL).
 * vdb reaches the sources through a fault-injecting proxy (helpers/fault-proxy.ts). Every fault
 * gets an answer in time (502 for a lost connection, 504 at the statement's deadline, 503 for a
 * connect that does not complete), the process stays up and serves, and the source works again
 * once it is back.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { FaultProxy } from '../helpers/fault-proxy.js';
import { sourceFixture, type SourceFixture } from '../helpers/source-fixture.js';
import { expectError, expectOkJson, uniqueTag, waitUntil } from '../connectors/db.js';

const tag = uniqueTag();
let server: TestServer;
let pgAdmin: pg.Client;
let myAdmin: mysql.Connection;
let pgProxy: FaultProxy;
let myProxy: FaultProxy;
let fixture: SourceFixture;

/** Rows enough to be mid-stream for seconds (about 90 MB of COPY text, more as JSON). */
const ROWS = 2_000_000;

before(async () => {
  fixture = await sourceFixture(tag, ROWS);
  ({ pgAdmin, myAdmin, pgProxy, myProxy } = fixture);
  server = await startTestServer({ demo: false });
  for (const body of [
    {
      name: 'pgp',
      template: 'postgresql',
      connectionProps: `host=127.0.0.1,port=${pgProxy.port},db=test,user-name=postgres`,
      modelProps: `importer.schemaPattern=${tag},connectTimeoutMs=1000`,
    },
    {
      name: 'myp',
      template: 'mariadb',
      connectionProps: `host=127.0.0.1,port=${myProxy.port},db=${tag},user-name=root`,
      modelProps: 'connectTimeoutMs=1000',
    },
  ]) {
    const added = await server.request('/rest/api/source', { body });
    assert.equal(added.status, 201, await added.text());
  }
});

after(async () => {
  await fixture?.drop(async () => server?.close());
});

const sources = [
  { name: 'pgp', proxy: () => pgProxy },
  { name: 'myp', proxy: () => myProxy },
] as const;

/** A statement the engine runs itself: every row is loaded before any is sent, so a failure is a status. */
const loaded = (source: string) => `SELECT count(*), max(pad) FROM ${source}.big WHERE id + 0 * random() > 0`;
/** A statement the source runs whole: its rows are streamed as they come. */
const streamed = (source: string) => `SELECT id, pad FROM ${source}.big`;

const query = (sql: string, timeout?: number) =>
  server.request(`/rest/api/query${timeout === undefined ? '' : `?timeout=${timeout}`}`, { body: { sql } });

/** The server answers, and the source answers through it. */
async function stillServing(source: string): Promise<void> {
  assert.deepEqual(await expectOkJson(await query('SELECT 1 AS one'), 'the server serves'), [[1]]);
  const rows = await expectOkJson<number[][]>(await query(`SELECT count(*) AS n FROM ${source}.small`), `${source} serves`);
  assert.equal(Number(rows[0]![0]), 3);
}

/** Waits until `bytes` more bytes came from the source through the proxy. */
async function midStream(proxy: FaultProxy, bytes = 256 * 1024): Promise<void> {
  const from = proxy.bytesDown;
  assert.ok(await waitUntil(async () => proxy.bytesDown - from > bytes, 20_000, 20), 'rows flow from the source');
}

/**
 * Opens a streamed result and reads only its first chunk (a slow client): resolves with the
 * status, and a promise of how the body ends ('complete' or 'cut') once reading resumes.
 */
function slowRead(sql: string): Promise<{ status: number; rest: () => Promise<'complete' | 'cut'> }> {
  const url = new URL(`${server.url}/rest/api/query`);
  const body = JSON.stringify({ sql });
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: server.basic(), 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.once('data', () => {
          response.pause();
          resolve({
            status: response.statusCode ?? 0,
            rest: () =>
              new Promise((done) => {
                response.on('data', () => undefined);
                response.once('end', () => done(response.complete ? 'complete' : 'cut'));
                response.once('aborted', () => done('cut'));
                response.once('error', () => done('cut'));
                response.resume();
              }),
          });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

for (const { name, proxy } of sources) {
  describe(`${name}: faults through the proxy`, () => {
    test('a connection cut while the rows load: a 502 naming the source, at once; the server serves on', async () => {
      proxy().slow(2 * 1024 * 1024);
      const started = Date.now();
      const answer = query(loaded(name));
      await midStream(proxy());
      const cutAt = Date.now();
      proxy().cut();
      proxy().resume();
      const response = await answer;
      const error = await expectError(response, 502, 'cut mid-load');
      assert.ok(Date.now() - cutAt < 1500, `answered ${Date.now() - cutAt} ms after the cut (${cutAt - started} ms in)`);
      assert.match(error.description, new RegExp(`"${name}"`));
      await stillServing(name);
    });

    // PostgreSQL writes the rows of a whole statement as JSON, streamed to the client as they come
    // (a large MariaDB result is loaded into the engine first: a cut there is the case above).
    test(
      'a connection cut while rows stream to a slow client: the body is cut at once; the server serves on',
      { skip: name !== 'pgp' },
      async () => {
        const reading = await slowRead(streamed(name));
        assert.equal(reading.status, 200);
        proxy().cut();
        const cutAt = Date.now();
        assert.equal(await reading.rest(), 'cut', 'never a complete body');
        assert.ok(Date.now() - cutAt < 3000, `ended ${Date.now() - cutAt} ms after the cut`);
        await stillServing(name);
      },
    );

    test('a connection cut while a paginated result (a cursor) is built: a 502, at once; the server serves on', async () => {
      proxy().slow(2 * 1024 * 1024);
      const answer = server.request('/rest/api/query?pagination=true&limit=10', { body: { sql: streamed(name) } });
      await midStream(proxy());
      const cutAt = Date.now();
      proxy().cut();
      proxy().resume();
      const error = await expectError(await answer, 502, 'cut mid-cursor');
      assert.ok(Date.now() - cutAt < 1500, `answered ${Date.now() - cutAt} ms after the cut`);
      assert.match(error.description, new RegExp(`"${name}"`));
      await stillServing(name);
    });

    test('a source stalled mid-load: 504 at the deadline; it works again once resumed', async () => {
      proxy().slow(2 * 1024 * 1024);
      const started = Date.now();
      const answer = query(loaded(name), 2000);
      await midStream(proxy());
      proxy().stall();
      const response = await answer;
      await expectError(response, 504, 'stalled mid-load');
      const took = Date.now() - started;
      assert.ok(took >= 1900 && took < 3000, `answered after ${took} ms`);
      proxy().resume();
      await stillServing(name);
    });

    test('a source stalled before the first row: 504 at the deadline', async () => {
      // A connection of the pool is ready (the statement before left it idle): the stall meets the statement.
      await stillServing(name);
      proxy().stall();
      try {
        const started = Date.now();
        const response = await query(streamed(name), 1500);
        const took = Date.now() - started;
        const error = await expectError(response, [503, 504], 'stalled before the first row');
        assert.ok(took < 2500, `answered after ${took} ms: ${error.description}`);
      } finally {
        proxy().resume();
      }
      await stillServing(name);
    });

    test('a new statement to a stalled source with no connection: 503 within the connect timeout', async () => {
      // No connection survives the cut: the next statement must connect, and the connect stalls.
      proxy().cut();
      proxy().stall();
      try {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const started = Date.now();
        const response = await query(`SELECT count(*) AS n FROM ${name}.small`, 10_000);
        const took = Date.now() - started;
        const error = await expectError(response, 503, 'connect to a stalled source');
        assert.match(error.description, new RegExp(`"${name}"`));
        assert.ok(took < 2500, `answered after ${took} ms (connect timeout 1000 ms)`);
      } finally {
        proxy().resume();
      }
      await stillServing(name);
    });
  });
}

test('PostgreSQL: a backend of vdb terminated mid-stream (pg_terminate_backend): 502, and the server serves on', async () => {
  pgProxy.slow(2 * 1024 * 1024);
  const answer = query(loaded('pgp'));
  await midStream(pgProxy);
  const { rows } = await pgAdmin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE application_name = 'vdb' AND query LIKE $1 AND pid <> pg_backend_pid()`,
    [`%${tag}%big%`],
  );
  assert.equal(rows.length, 1, 'one backend of vdb reads the view');
  await pgAdmin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
  const killedAt = Date.now();
  pgProxy.resume();
  const error = await expectError(await answer, 502, 'terminated backend');
  assert.ok(Date.now() - killedAt < 1500, `answered ${Date.now() - killedAt} ms after`);
  assert.match(error.description, /"pgp"/);
  await stillServing('pgp');
});

test('MariaDB: a connection of vdb killed mid-stream (KILL): 502, and the server serves on', async () => {
  myProxy.slow(2 * 1024 * 1024);
  const answer = query(loaded('myp'));
  await midStream(myProxy);
  const [rows] = await myAdmin.query(
    `SELECT ID AS id FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = ? AND INFO LIKE '%big%'`,
    [tag],
  );
  const ids = rows as Array<{ id: number }>;
  assert.equal(ids.length, 1, 'one connection of vdb reads the view');
  await myAdmin.query(`KILL ${Number(ids[0]!.id)}`);
  const killedAt = Date.now();
  myProxy.resume();
  const error = await expectError(await answer, 502, 'killed connection');
  assert.ok(Date.now() - killedAt < 1500, `answered ${Date.now() - killedAt} ms after`);
  assert.match(error.description, /"myp"/);
  await stillServing('myp');
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

test('MariaDB: statements dropped by their clients mid-stream leave no connection behind (none half-closed in "Writing to net")', async () => {
  const clients = Array.from({ length: 12 }, () => sendAndHold(loaded('myp')));
  // The sources are mid-stream for all of them, then the clients go away.
  await midStream(myProxy, 12 * 1024 * 1024);
  for (const client of clients) client.destroy();
  const lingering = async () => {
    const [rows] = await myAdmin.query(
      `SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = ? AND COMMAND <> 'Sleep'`,
      [tag],
    );
    return Number((rows as Array<{ n: number }>)[0]!.n);
  };
  assert.ok(await waitUntil(async () => (await lingering()) === 0, 3000), `${await lingering()} connection(s) still busy at MariaDB`);
  await stillServing('myp');
});
