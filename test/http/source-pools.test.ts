/**
 * Source connection pools under load, against real PostgreSQL and MariaDB with two connections
 * each (maxConnections=2): clients that read slowly do not hold the sources' connections (their
 * results are read ahead, in memory then on disk), a full pool answers 503 "Data source busy"
 * with Retry-After after poolWaitMs (never "cannot be reached"), the pools show in the metrics,
 * and a source that is really away still answers "cannot be reached".
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { FaultProxy } from '../helpers/fault-proxy.js';
import { sourceFixture, type SourceFixture } from '../helpers/source-fixture.js';
import { expectError, expectOkJson, MY, PG, uniqueTag, waitUntil } from '../connectors/db.js';

const tag = uniqueTag();
let server: TestServer;
let pgAdmin: pg.Client;
let myAdmin: mysql.Connection;
let pgProxy: FaultProxy;
let myProxy: FaultProxy;
let fixture: SourceFixture;

/** Rows of the large results: about 15 MB of JSON, more than socket buffers hold. */
const ROWS = 250_000;
const POOL_WAIT_MS = 1000;

before(async () => {
  fixture = await sourceFixture(tag, ROWS, ['locked']);
  ({ pgAdmin, myAdmin, pgProxy, myProxy } = fixture);
  // A small memory share per result: the slow clients' results go to disk too.
  server = await startTestServer({ demo: false, resultSpool: { memoryBytes: 1024 * 1024 } }, { VDB_STATEMENTS_PER_USER: '1000' });
  const pool = `maxConnections=2,poolWaitMs=${POOL_WAIT_MS},connectTimeoutMs=1000`;
  for (const body of [
    {
      name: 'pg2',
      template: 'postgresql',
      connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=postgres`,
      modelProps: `importer.schemaPattern=${tag},${pool}`,
    },
    {
      name: 'my2',
      template: 'mariadb',
      connectionProps: `host=127.0.0.1,port=${MY.port},db=${tag},user-name=root`,
      modelProps: pool,
    },
    {
      name: 'pgcut',
      template: 'postgresql',
      connectionProps: `host=127.0.0.1,port=${pgProxy.port},db=test,user-name=postgres`,
      modelProps: `importer.schemaPattern=${tag},maxConnections=2,poolWaitMs=500,connectTimeoutMs=1000`,
    },
    {
      name: 'mycut',
      template: 'mariadb',
      connectionProps: `host=127.0.0.1,port=${myProxy.port},db=${tag},user-name=root`,
      modelProps: 'maxConnections=2,poolWaitMs=500,connectTimeoutMs=1000',
    },
  ]) {
    const added = await server.request('/rest/api/source', { body });
    assert.equal(added.status, 201, await added.text());
  }
});

after(async () => {
  await fixture?.drop(async () => server?.close());
});

const query = (sql: string, options: { pagination?: boolean } = {}) =>
  server.request(`/rest/api/query${options.pagination ? '?pagination=true&limit=10' : ''}`, { body: { sql } });

/** A value of the metrics for a source (undefined when the line is missing). */
async function metric(name: string, source: string): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{source="${source}"}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

interface SlowReading {
  status: number;
  /** Reads the rest: the whole body, and whether it ended complete. */
  rest(): Promise<{ complete: boolean; body: string }>;
  /** Goes away without reading on. */
  drop(): void;
}

/** A client that takes the first chunk of a streamed result, then reads nothing until told to. */
function slowRead(sql: string): Promise<SlowReading> {
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
        const chunks: Buffer[] = [];
        response.once('data', (first: Buffer) => {
          chunks.push(first);
          response.pause();
          resolve({
            status: response.statusCode ?? 0,
            rest: () =>
              new Promise((done) => {
                const end = (complete: boolean) => done({ complete, body: Buffer.concat(chunks).toString('utf8') });
                response.on('data', (chunk: Buffer) => chunks.push(chunk));
                response.once('end', () => end(response.complete));
                response.once('aborted', () => end(false));
                response.once('error', () => end(false));
                response.resume();
              }),
            drop: () => request.destroy(),
          });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Asserts that a slow client's body is the whole view, in order. */
function assertWholeResult(reading: { complete: boolean; body: string }, what: string): void {
  assert.ok(reading.complete, `${what}: the body ended complete`);
  const rows = JSON.parse(reading.body) as Array<[number | string, string]>;
  assert.equal(rows.length, ROWS, `${what}: every row`);
  assert.equal(Number(rows[0]![0]), 1);
  assert.equal(Number(rows[ROWS - 1]![0]), ROWS, `${what}: the last row last`);
  assert.equal(rows[ROWS - 1]![1], 'x'.repeat(40));
}

/** A statement that waits on the table lock the test holds: it holds a pool connection meanwhile. */
const blocked = (source: string) => `SELECT count(*) AS n FROM ${source}.locked`;

/** Holds the lock on `locked` at the source until the returned function is called. */
async function lockAt(source: 'pg2' | 'my2'): Promise<() => Promise<void>> {
  if (source === 'pg2') {
    await pgAdmin.query('BEGIN');
    await pgAdmin.query(`LOCK TABLE ${tag}.locked IN ACCESS EXCLUSIVE MODE`);
    return async () => void (await pgAdmin.query('COMMIT'));
  }
  await myAdmin.query(`LOCK TABLES ${tag}.locked WRITE`);
  return async () => void (await myAdmin.query('UNLOCK TABLES'));
}

for (const source of ['pg2', 'my2'] as const) {
  describe(`${source}: a pool of two connections`, () => {
    test('two clients that read slowly hold no source connection: a third statement answers at once, and they get their whole results', async () => {
      const slow = [await slowRead(`SELECT id, pad FROM ${source}.big`), await slowRead(`SELECT id, pad FROM ${source}.big`)];
      for (const reading of slow) assert.equal(reading.status, 200);
      // The sources' statements end while the clients do not read.
      assert.ok(
        await waitUntil(async () => (await metric('vdb_source_pool_in_use', source)) === 0, 10_000),
        `connections still in use: ${await metric('vdb_source_pool_in_use', source)}`,
      );
      const started = Date.now();
      const rows = await expectOkJson<number[][]>(await query(`SELECT count(*) AS n FROM ${source}.small`), 'a third statement');
      assert.equal(Number(rows[0]![0]), 3);
      assert.ok(Date.now() - started < POOL_WAIT_MS, `answered after ${Date.now() - started} ms`);
      for (const [i, reading] of slow.entries()) assertWholeResult(await reading.rest(), `slow client ${i + 1}`);
    });

    test('a full pool: the excess gets 503 Data source busy with Retry-After after poolWaitMs, not "cannot be reached"; the holders finish', async () => {
      const unlock = await lockAt(source);
      let holders: Array<Promise<Response>> = [];
      try {
        // Two statements (one a cursor build) hold both connections, waiting on the lock.
        holders = [query(blocked(source)), query(blocked(source), { pagination: true })];
        assert.ok(await waitUntil(async () => (await metric('vdb_source_pool_in_use', source)) === 2, 10_000), 'both connections in use');
        assert.equal(await metric('vdb_source_pool_size', source), 2);
        const busyBefore = (await metric('vdb_source_pool_busy_total', source)) ?? 0;
        const started = Date.now();
        // Four more, two of them cursor builds: each refused after the wait, none left waiting.
        const excess = await Promise.all([
          query(`SELECT count(*) AS n FROM ${source}.small`),
          query(`SELECT count(*) AS n FROM ${source}.small`),
          query(blocked(source), { pagination: true }),
          query(blocked(source), { pagination: true }),
        ]);
        const took = Date.now() - started;
        for (const response of excess) {
          assert.equal(response.headers.get('retry-after'), String(Math.ceil(POOL_WAIT_MS / 1000)));
          const error = await expectError(response, 503, 'the excess');
          assert.equal(error.title, 'Data source busy');
          assert.match(error.description, new RegExp(`"${source}" is busy: all 2 of its connections`));
          assert.doesNotMatch(error.description, /cannot be reached/);
          assert.match(error.hint ?? '', /maxConnections/);
        }
        assert.ok(took >= POOL_WAIT_MS - 100 && took < POOL_WAIT_MS + 2000, `refused after ${took} ms (poolWaitMs ${POOL_WAIT_MS})`);
        assert.equal(await metric('vdb_source_pool_busy_total', source), busyBefore + 4);
        assert.equal(await metric('vdb_source_pool_waiting', source), 0);
      } finally {
        await unlock();
      }
      for (const response of await Promise.all(holders)) assert.equal(response.status, 200, await response.text());
      // A cursor build holds its connection no longer than the build.
      assert.ok(
        await waitUntil(async () => (await metric('vdb_source_pool_in_use', source)) === 0, 5000),
        'connections back after the builds',
      );
      assert.ok(((await metric('vdb_source_pool_idle', source)) ?? 0) >= 1, 'idle connections in the pool');
    });
  });
}

test('pg2: a slow client that goes away stops its spool: the file is gone and the memory given back', async () => {
  // About 250 MB of rows made at the source: more than the memory share and than what the
  // kernel's socket buffers may take in (loopback receive windows grow up to tcp_rmem's 32 MB).
  const reading = await slowRead('SELECT id, repeat(pad, 25) AS pad FROM pg2.big');
  assert.equal(reading.status, 200);
  // Read ahead: part of it waits on disk.
  assert.ok(await waitUntil(async () => server.services.spools.stats().diskBytes > 0, 10_000), 'part of the result on disk');
  assert.ok(server.services.spools.stats().spilled >= 1);
  reading.drop();
  assert.ok(
    await waitUntil(async () => server.services.spools.stats().open === 0, 5000),
    `spools still open: ${JSON.stringify(server.services.spools.stats())}`,
  );
  assert.deepEqual(server.services.spools.stats().diskBytes, 0);
  assert.deepEqual(server.services.spools.stats().memoryBytes, 0);
  assert.ok(await waitUntil(async () => (await metric('vdb_source_pool_in_use', 'pg2')) === 0, 5000));
});

for (const [source, proxy] of [
  ['pgcut', () => pgProxy],
  ['mycut', () => myProxy],
] as const) {
  test(`${source}: a source cut off is "cannot be reached" for every statement, also those that waited for a turn (never busy)`, async () => {
    assert.deepEqual(await expectOkJson(await query(`SELECT count(*) AS n FROM ${source}.small`), 'before the cut'), [[3]]);
    // No connection survives the cut (the pools drop theirs), and new connects stall.
    proxy().cut();
    proxy().stall();
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 4 }, () => query(`SELECT count(*) AS n FROM ${source}.small`)));
      const took = Date.now() - started;
      for (const response of answers) {
        const error = await expectError(response, 503, 'a statement on a cut source');
        assert.equal(error.title, 'Data source unavailable');
        assert.match(error.description, new RegExp(`"${source}" cannot be reached`));
      }
      assert.ok(took < 3000, `answered after ${took} ms (connect timeout 1000 ms)`);
    } finally {
      proxy().resume();
    }
    assert.deepEqual(await expectOkJson(await query(`SELECT count(*) AS n FROM ${source}.small`), 'after the cut'), [[3]]);
  });
}
