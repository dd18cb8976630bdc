/**
 * Operations (docs/deploy.md): /healthz, /readyz and /metrics without authentication, request and
 * statement metrics by route pattern (never a link token), a metrics port of its own, and the
 * graceful shutdown: readiness off, new statements refused, running ones cancelled after the
 * grace period.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/server/app.js';
import { shutDown, startServer } from '../../src/server/start.js';
import { createServices } from '../../src/services.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError } from './util.js';
import { pgClient } from '../connectors/db.js';

/** A statement the engine needs seconds for. */
const LONG_STATEMENT = 'SELECT count(*) FROM generate_series(1, 3000000000) a(x) WHERE x % 7 = 3';

describe('health, readiness and metrics', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  test('/healthz and /readyz answer without credentials', async () => {
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), {
      status: 'ready',
      checks: { lifecycle: 'ok', dataDir: 'ok', catalog: 'ok', engine: 'ok', cursors: 'ok' },
      unavailableSources: [],
    });
  });

  test('/metrics counts requests by route pattern and statements by outcome; no link token becomes a label', async () => {
    const ok = await server.request('/rest/api/query', { body: { sql: 'SELECT count(*) FROM shop.customers' } });
    assert.equal(ok.status, 200, await ok.text());
    const bad = await server.request('/rest/api/query', { body: { sql: 'SELECT nosuch FROM shop.customers' } });
    assert.equal(bad.status, 400);
    const token = 'not-a-real-link-token-4f2a9c';
    await fetch(`${server.url}/${token}/rest/api/status`);

    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    assert.match(text, /vdb_http_requests_total\{method="POST",route="\/rest\/api\/query",status="200"\} [1-9]/);
    assert.match(text, /vdb_http_requests_total\{method="POST",route="\/rest\/api\/query",status="400"\} [1-9]/);
    // The histogram holds both requests, whatever they took (the +Inf bucket counts every one).
    assert.match(text, /vdb_http_request_duration_seconds_bucket\{le="\+Inf",method="POST",route="\/rest\/api\/query"\} [2-9]/);
    assert.match(text, /vdb_statements_total\{status="ok",route="[a-z-]+"\} [1-9]/);
    assert.match(text, /vdb_statements_total\{status="error",route="other"\} [1-9]/);
    assert.match(text, /vdb_result_bytes_total [1-9]/);
    assert.match(text, /vdb_source_queries_total\{source="shop"\} [1-9]/);
    assert.match(text, /vdb_cursors_open 0/);
    assert.match(text, /vdb_process_resident_memory_bytes \d+/);
    assert.match(text, /vdb_nodejs_heap_size_used_bytes \d+/);
    assert.ok(!text.includes(token), 'the hosted link token is not in the metrics');
    assert.match(text, /route="\/:linkToken\/rest\/api\/status"/);
  });

  test('/metrics: statements by route, result bytes, cache hits, and failures by source', async () => {
    const metric = async (pattern: RegExp) => Number(pattern.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1] ?? 0);
    const constant = /vdb_statements_total\{status="ok",route="constant"\} (\d+)/;
    const bytes = /vdb_result_bytes_total (\d+)/;
    const [constantBefore, bytesBefore] = [await metric(constant), await metric(bytes)];
    const one = await server.request('/rest/api/query', { body: { sql: 'SELECT 1' } });
    assert.equal(await one.text(), '[[1]]');
    assert.equal(await metric(constant), constantBefore + 1, 'SELECT 1 counted as answered without a source');
    assert.equal(await metric(bytes), bytesBefore + '[[1]]'.length, 'its five bytes counted');
    // A login token used twice: the second is answered from the verified-token cache.
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
    });
    const { token } = (await login.json()) as { token: string };
    const tokenHits = /vdb_cache_hits_total\{cache="login-tokens"\} (\d+)/;
    const hitsBefore = await metric(tokenHits);
    for (let i = 0; i < 2; i++)
      assert.equal((await fetch(`${server.url}/rest/api/status`, { headers: { 'x-auth-token': token } })).status, 200);
    assert.ok((await metric(tokenHits)) > hitsBefore, 'token cache hits counted');
    // A PostgreSQL source whose database is then dropped: the statement's failure is counted for it.
    const pgAdmin = await pgClient();
    const database = `vdbt_metrics_${process.pid}`;
    try {
      await pgAdmin.query(`CREATE DATABASE ${database}`);
      const added = await server.request('/rest/api/source', {
        body: { name: 'pgm', template: 'postgresql', connectionProps: `host=127.0.0.1,port=5432,db=${database},user-name=postgres` },
      });
      assert.equal(added.status, 201, await added.text());
      await pgAdmin.query(`DROP DATABASE ${database} WITH (FORCE)`);
      // Its tables are read again from a database that is gone: a source failure, named pgm.
      const refreshed = await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.refreshDataSource('pgm')" } });
      assert.ok(refreshed.status >= 500, await refreshed.text());
      assert.ok((await metric(/vdb_source_errors_total\{source="pgm"\} (\d+)/)) >= 1, 'the failure counted for pgm');
    } finally {
      await pgAdmin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await pgAdmin.end();
    }
  });

  test('a paginated result shows in the cursor gauges', async () => {
    const page = await server.request('/rest/api/query?pagination=true&limit=10', { body: { sql: 'SELECT id FROM shop.customers' } });
    assert.equal(page.status, 200, await page.text());
    const text = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(text, /vdb_cursors_open [1-9]/);
    assert.match(text, /vdb_cursor_rows [1-9]\d*/);
  });
});

describe('graceful shutdown', () => {
  test('readiness turns false, new statements get 503, a running one is cancelled after the grace period', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-shutdown-'));
    const config = loadConfig({}, { dataDir, adminPassword: ADMIN_PASSWORD, port: 0, logLevel: 'silent', shutdownGraceMs: 300 });
    const services = await createServices(config, pino({ level: 'silent' }));
    const app = buildApp(services, false);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const auth = {
      authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`,
      'content-type': 'application/json',
    };
    try {
      const running = fetch(`${url}/rest/api/query`, { method: 'POST', headers: auth, body: JSON.stringify({ sql: LONG_STATEMENT }) });
      // Wait until the statement runs.
      for (let i = 0; i < 100 && services.lifecycle.inFlight === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(services.lifecycle.inFlight, 1);

      const started = Date.now();
      const stopped = shutDown(services, [app]);
      assert.equal(services.lifecycle.stopping, true);
      const answer = await running;
      const body = await assertApiError(answer, 503, 'the running statement');
      assert.equal(body.title, 'Shutting down');
      await stopped;
      const took = Date.now() - started;
      assert.ok(took >= 250 && took < 5000, `stopped after the grace period, in ${took} ms`);
      await assert.rejects(fetch(`${url}/healthz`), 'no longer listening');
    } finally {
      if (!services.lifecycle.stopping) await shutDown(services, [app]);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('while stopping, /readyz is 503 with the checks and a statement is refused with 503', async () => {
    const server = await startTestServer();
    try {
      server.services.lifecycle.beginStopping();
      const ready = await fetch(`${server.url}/readyz`);
      const body = await assertApiError(ready, 503, 'readyz');
      assert.equal(body.title, 'Not ready');
      assert.match(body.description, /lifecycle: stopping/);
      const refused = await server.request('/rest/api/query', { body: { sql: 'SELECT 1' } });
      assert.equal((await assertApiError(refused, 503, 'new statement')).title, 'Shutting down');
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'the process still answers');
    } finally {
      await server.close();
    }
  });
});

test('metricsPort serves /metrics on a port of its own, and the main port no longer does', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-metrics-'));
  const running = await startServer({
    dataDir,
    port: 0,
    metricsPort: 0,
    host: '127.0.0.1',
    adminPassword: ADMIN_PASSWORD,
    logLevel: 'silent',
  });
  try {
    assert.ok(running.metricsUrl);
    const metrics = await fetch(`${running.metricsUrl}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /vdb_http_requests_total|vdb_process_/);
    assert.equal((await fetch(`${running.url}/metrics`)).status, 404);
    assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
  } finally {
    await running.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

let probe: pg.Client;
before(async () => {
  probe = await pgClient();
  await probe.query('DROP TABLE IF EXISTS pg_hang_probe');
  await probe.query('CREATE TABLE pg_hang_probe AS SELECT g FROM generate_series(1, 3000) g');
});
after(async () => {
  await probe?.query('DROP TABLE IF EXISTS pg_hang_probe');
  await probe?.end();
});

test('clients that hang up mid-request give their source connections back: the next statement is served', async () => {
  const server = await startTestServer();
  try {
    const added = await server.request('/rest/api/source', {
      body: {
        name: 'pgh',
        template: 'postgresql',
        translator: 'postgresql',
        connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
        modelProps: 'maxConnections=2',
      },
    });
    assert.equal(added.status, 201, await added.text());
    const { port } = new URL(server.url);
    // Whole at PostgreSQL; the clients leave at once, at every stage of their statements.
    const body = JSON.stringify({ sql: 'SELECT * FROM pgh.pg_hang_probe' });
    // Each client sends its statement and leaves without reading the answer.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const socket = net.connect(Number(port), '127.0.0.1');
        socket.on('error', () => undefined);
        return new Promise<void>((resolve) => {
          socket.write(
            `POST /rest/api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: ${server.basic()}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
            () => setTimeout(() => (socket.destroy(), resolve()), i % 8),
          );
        });
      }),
    );
    const answer = await server.request('/rest/api/query?timeout=20000', { body: { sql: 'SELECT count(*) FROM pgh.pg_hang_probe' } });
    assert.equal(answer.status, 200, await answer.clone().text());
    for (let i = 0; i < 100 && server.services.lifecycle.inFlight > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(server.services.lifecycle.inFlight, 0, 'every statement of a departed client ended');
  } finally {
    await server.close();
  }
});
