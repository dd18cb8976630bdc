/**
 * Redis going away and coming back, with a redis-server of the test's own (the shared one is
 * never stopped): /readyz turns false, what needs Redis answers 503 with a JSON body, what does
 * not keeps working, and everything works again once Redis is back.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { whenReady } from '../../src/runtime/redis.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';

/** A loopback port nobody listens on now. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts redis-server on `port` (no persistence) and resolves once it answers. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const client = new Redis(`redis://127.0.0.1:${port}`, { retryStrategy: () => 50, lazyConnect: false });
  client.on('error', () => undefined);
  await whenReady(client, 10_000);
  assert.equal(await client.ping(), 'PONG');
  client.disconnect();
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Polls /readyz until it answers `status` (Redis reconnects on its own, at most a second apart). */
async function readyzBecomes(server: TestServer, status: number): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${server.url}/readyz`);
    if (response.status === status || attempt === 100) return response;
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function assertJson503(response: Response, what: string): Promise<void> {
  const text = await response.text();
  assert.equal(response.status, 503, `${what}: ${text}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title'], what);
  assert.match(String(body.description), /Redis/, what);
  assert.doesNotMatch(text, /at .*\.js:\d+/, `${what}: no stack trace`);
}

let port: number;
let redis: ChildProcess;
let server: TestServer;
before(async () => {
  port = await freePort();
  redis = await startRedis(port);
  server = await startTestServer({ cursors: { redisUrl: `redis://127.0.0.1:${port}`, keyPrefix: 'outage:' } });
});
after(async () => {
  await server.close();
  if (redis.exitCode === null) await stopRedis(redis);
});

const paginate = () => server.request('/rest/api/query?pagination=true&limit=5', { body: { sql: 'SELECT * FROM files.events LIMIT 20' } });

test('Redis away: /readyz false, Redis-backed requests 503 JSON, token queries still answered; back: all recovers', async () => {
  assert.equal((await readyzBecomes(server, 200)).status, 200);
  const login = await server.request('/api/login', {
    body: { username: 'admin', password: ADMIN_PASSWORD },
    headers: { authorization: '' },
  });
  assert.equal(login.status, 200);
  const { token } = (await login.json()) as { token: string };
  const first = await paginate();
  assert.equal(first.status, 200);
  await first.text();
  const requestId = first.headers.get('requestId')!;

  await stopRedis(redis);
  const unready = await readyzBecomes(server, 503);
  await assertJson503(unready, '/readyz');
  await assertJson503(await server.request(`/rest/api/query?requestId=${requestId}&offset=5&limit=5`, { method: 'POST' }), 'a page');
  await assertJson503(await paginate(), 'a new paginated query');
  // Sign-in failures are counted in Redis: a password sign-in cannot be checked without it.
  await assertJson503(
    await server.request('/api/login', { body: { username: 'admin', password: ADMIN_PASSWORD }, headers: { authorization: '' } }),
    'a login',
  );
  const plain = await server.request('/rest/api/query', {
    body: { sql: 'SELECT 1 AS one' },
    headers: { authorization: '', 'x-auth-token': token },
  });
  assert.equal(plain.status, 200, 'a plain query with a token needs no Redis');
  assert.equal(await plain.text(), '[[1]]');

  redis = await startRedis(port);
  const ready = await readyzBecomes(server, 200);
  assert.equal(ready.status, 200, await ready.text());
  const again = await paginate();
  assert.equal(again.status, 200, await again.clone().text());
  const page = await server.request(`/rest/api/query?requestId=${again.headers.get('requestId')}&offset=5&limit=5`, { method: 'POST' });
  assert.equal(page.status, 200);
  assert.equal((JSON.parse(await page.text()) as unknown[]).length, 5);
  // The cursor of before the outage lived in the Redis that was stopped: gone, said as such.
  const old = await server.request(`/rest/api/query?requestId=${requestId}&offset=5&limit=5`, { method: 'POST' });
  assert.equal(old.status, 404);
  await old.text();
});
