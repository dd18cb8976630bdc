/**
 * The cursor stores: local (memory, then the spill folder, each with a byte budget) and Redis
 * (shared by instances). Pages read the same bytes from either store and from any instance.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { LocalCursorStore } from '../../src/results/local-cursors.js';
import type { RedisCursorStore } from '../../src/results/redis-cursors.js';
import { whenReady } from '../../src/runtime/redis.js';
import { REDIS_URL, startTestServer, type TestServer } from '../helpers/server.js';

/** Values that stress the JSON: quotes, commas and brackets in text, nesting, nulls, exact numbers, dates. */
const TYPES = `SELECT id, 'a"b,c]d{e}\\\\ é ☃' || id AS text, ARRAY[id, NULL, 3] AS list, '{"k": "v,]", "n": [1, {"m": null}]}'::json AS nested,
  NULL AS nothing, 0.1::float8 * id AS ratio, 12345678901234567890::numeric(38, 0) + id AS big, 1.50::numeric(5, 2) AS price,
  DATE '2024-02-29' + id::integer AS day, TIMESTAMP '2024-01-01 10:00:00' AS at, id % 2 = 0 AS even, 'x' AS "a""quoted,name"
  FROM generate_series(0, 499) t(id) ORDER BY id`;

const EVENTS = 'SELECT * FROM files.events ORDER BY id LIMIT 3000';

interface Page {
  status: number;
  body: string;
  requestId: string | null;
  nextPage: string | null;
}

async function pageOf(response: Response): Promise<Page> {
  return {
    status: response.status,
    body: await response.text(),
    requestId: response.headers.get('requestId'),
    nextPage: response.headers.get('nextPage'),
  };
}

const paginate = async (server: TestServer, sql: string, query: string) =>
  pageOf(await server.request(`/rest/api/query?pagination=true&${query}`, { body: { sql } }));

const follow = async (server: TestServer, requestId: string, query: string) =>
  pageOf(await server.request(`/rest/api/query?requestId=${requestId}&${query}`, { method: 'POST' }));

/** Every page of a result walked on `servers` in turn, as received bytes. */
async function walk(servers: TestServer[], sql: string, shape: string, limit: number): Promise<string[]> {
  const first = await paginate(servers[0]!, sql, `limit=${limit}&${shape}`);
  assert.equal(first.status, 200, first.body);
  const pages = [first.body];
  for (let offset = limit, i = 1; ; offset += limit, i++) {
    const page = await follow(servers[i % servers.length]!, first.requestId!, `limit=${limit}&offset=${offset}&${shape}`);
    assert.equal(page.status, 200, page.body);
    pages.push(page.body);
    if (page.body === '[]' || JSON.parse(page.body).length < limit) break;
  }
  return pages;
}

const keysOf = async (redis: Redis, prefix: string) => redis.keys(`${prefix}*`);

describe('local cursors', () => {
  let server: TestServer;
  before(async () => {
    // A small memory budget: results go on to the spill folder. One user may take it all (the
    // per-user quotas are tested in test/results/cursor-quotas.test.ts).
    server = await startTestServer({ pagination: { memoryBytes: 64 * 1024, diskBytes: 1024 * 1024, maxBytesPerUser: 2 * 1024 * 1024 } });
  });
  after(async () => server.close());

  test('pages read the same as the whole result, from memory and from the spill folder', async () => {
    for (const shape of ['array=true', 'array=false']) {
      const whole = await pageOf(await server.request(`/rest/api/query?${shape}`, { body: { sql: TYPES } }));
      assert.equal(whole.status, 200, whole.body);
      const pages = await walk([server], TYPES, shape, 70);
      const rows = pages.flatMap((page) => (page === '[]' ? [] : [page.slice(1, -1)]));
      assert.equal(`[${rows.join(',')}]`, whole.body, `${shape}: the pages joined are the whole result, byte for byte`);
    }
  });

  test('beyond the memory budget results spill to the data directory, and over the disk budget the oldest go first', async () => {
    const store = server.services.cursors as LocalCursorStore;
    const spill = path.join(server.dataDir, 'cursors');
    const first = await paginate(server, EVENTS, 'limit=10');
    assert.equal(first.status, 200, first.body);
    assert.ok(store.usage().disk > 0, 'spilled');
    assert.ok(store.usage().memory <= 64 * 1024, 'the memory budget holds');
    assert.ok(fs.readdirSync(spill).length > 0, 'a spill file');
    const spilledPage = await follow(server, first.requestId!, 'limit=10&offset=2990');
    assert.deepEqual(
      JSON.parse(spilledPage.body).map((row: unknown[]) => row[0]),
      Array.from({ length: 10 }, (_, i) => 2991 + i),
      'rows read back from the spill file',
    );
    // More results than the disk budget holds: the least recently read go first.
    const later: string[] = [];
    for (let i = 0; i < 6; i++) later.push((await paginate(server, EVENTS, 'limit=10')).requestId!);
    assert.ok(store.usage().disk <= 1024 * 1024, 'the disk budget holds');
    const gone = await follow(server, first.requestId!, 'limit=10');
    assert.equal(gone.status, 404);
    const body = JSON.parse(gone.body) as { title: string; description: string; hint: string };
    assert.match(body.description, /expired/);
    assert.match(body.hint, /pagination=true/);
    assert.equal((await follow(server, later.at(-1)!, 'limit=10')).status, 200, 'the newest is kept');
  });

  test('a result larger than the disk budget is refused with 413, and leaves nothing behind', async () => {
    const big = await paginate(server, 'SELECT * FROM files.events', 'limit=10');
    assert.equal(big.status, 413, big.body);
    assert.deepEqual(Object.keys(JSON.parse(big.body)).sort(), ['description', 'hint', 'title']);
    assert.match(JSON.parse(big.body).hint, /pagination\.diskBytes/);
    // Older cursors may have made room before the result proved too large; the refused one left no file.
    assert.ok((server.services.cursors as LocalCursorStore).usage().disk <= 1024 * 1024);
    assert.ok(fs.readdirSync(path.join(server.dataDir, 'cursors')).length <= server.services.cursors.stats().count);
  });

  test('no file root may lie in the spill folder, which the engine must not read', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-roots-'));
    try {
      assert.throws(
        () => loadConfig({}, { dataDir, fileRoots: [path.join(dataDir, 'cursors', 'x')] }),
        /lies in the cursors' spill folder/,
      );
      assert.doesNotThrow(() => loadConfig({}, { dataDir, fileRoots: [path.join(dataDir, 'files')] }));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('idle cursors are swept, by the store clock', async () => {
    const spillDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-spill-'));
    let now = 1_000_000;
    const store = new LocalCursorStore(
      { idleMs: 60_000, perUser: { cursors: 10, bytes: 1 << 24 }, maxCursors: 10, memoryBytes: 0, diskBytes: 1 << 24, spillDir },
      () => now,
    );
    try {
      const admin = server.services.users.find('admin')!;
      const execution = await server.services.engine.open('SELECT * FROM files.events LIMIT 100', admin, new AbortController().signal);
      const cursor = await store.create(execution, 'admin', '/rest/api/query');
      execution.close();
      assert.equal(fs.readdirSync(spillDir).length, 1, 'memory budget 0: on disk');
      now += 59_000;
      await store.sweep();
      await store.get(cursor.id, 'admin', '/rest/api/query'); // read: idle again from now
      now += 59_000;
      await store.sweep();
      assert.equal(store.stats().count, 1, 'read less than the idle time ago: kept');
      now += 1_001;
      await store.sweep();
      assert.equal(store.stats().count, 0, 'idle: swept');
      assert.deepEqual(store.usage(), { memory: 0, disk: 0 });
      assert.equal(fs.readdirSync(spillDir).length, 0, 'its spill file is gone');
      await assert.rejects(() => store.get(cursor.id, 'admin', '/rest/api/query'), { status: 404 });
    } finally {
      await store.close();
      fs.rmSync(spillDir, { recursive: true, force: true });
    }
  });
});

describe('cursors in Redis', () => {
  const prefix = `vdb-test-${randomUUID()}:`;
  let one: TestServer;
  let two: TestServer;
  let local: TestServer;
  let redis: Redis;
  before(async () => {
    const cursors = { redisUrl: REDIS_URL, keyPrefix: prefix, maxBytes: 1024 * 1024 };
    // One user may take the whole budget (the per-user quotas are tested in test/results/cursor-quotas.test.ts).
    const pagination = { maxBytesPerUser: 1024 * 1024 };
    [one, two, local] = await Promise.all([
      startTestServer({ cursors, pagination }),
      startTestServer({ cursors, pagination }),
      startTestServer(),
    ]);
    redis = new Redis(REDIS_URL);
    await whenReady(redis, 5000);
  });
  after(async () => {
    await Promise.all([one.close(), two.close(), local.close()]);
    const left = await keysOf(redis, prefix);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
  });

  test('a result paginated on one instance is walked on both, byte for byte as the local store pages it', async () => {
    for (const shape of ['array=true', 'array=false', 'array=true&headers=true']) {
      const shared = await walk([one, two], TYPES, shape, 70);
      const alone = await walk([local], TYPES, shape, 70);
      assert.deepEqual(shared, alone, shape);
    }
  });

  test('over the byte budget the least recently read cursors go first; a gone one is a 404 that says how to start again', async () => {
    const first = await paginate(one, EVENTS, 'limit=10');
    assert.equal(first.status, 200, first.body);
    const ids = [first.requestId!];
    for (let i = 0; i < 4; i++) ids.push((await paginate(two, EVENTS, 'limit=10')).requestId!);
    const total = Number(await redis.get(`${prefix}cursor-bytes`));
    assert.ok(total > 0 && total <= 1024 * 1024, `the budget holds: ${total}`);
    const gone = await follow(two, first.requestId!, 'limit=10');
    assert.equal(gone.status, 404);
    const body = JSON.parse(gone.body) as { description: string; hint: string };
    assert.match(body.description, /expired/);
    assert.match(body.hint, /pagination=true/);
    assert.equal(
      await redis.exists(`${prefix}cursor:${first.requestId}`, `${prefix}cursor:${first.requestId}:rows`),
      0,
      'its keys are gone',
    );
    assert.equal((await follow(one, ids.at(-1)!, 'limit=10&offset=20')).status, 200, 'the newest is served by the other instance');
  });

  test('cursors expire in Redis after the idle time (the TTL), and every read renews it', async () => {
    const page = await paginate(one, EVENTS, 'limit=10');
    const ttl = await redis.pttl(`${prefix}cursor:${page.requestId}:rows`);
    const idle = one.services.config.pagination.cursorIdleMs;
    assert.ok(ttl > 0 && ttl <= idle, `rows TTL ${ttl}`);
    await redis.pexpire(`${prefix}cursor:${page.requestId}`, 100_000);
    await follow(two, page.requestId!, 'limit=10&offset=10');
    assert.ok((await redis.pttl(`${prefix}cursor:${page.requestId}`)) > 100_000, 'renewed to the idle time');
    // Expired by Redis: a 404, the same as unknown.
    await redis.del(`${prefix}cursor:${page.requestId}`);
    assert.equal((await follow(one, page.requestId!, 'limit=10')).status, 404);
  });

  test('chunks read once are cut again from memory; an expired cursor is never served from it', async () => {
    const first = await paginate(one, EVENTS, 'limit=10');
    assert.equal(first.status, 200, first.body);
    const store = two.services.cursors as RedisCursorStore;
    const before = store.chunks.hits;
    const a = await follow(two, first.requestId!, 'limit=10&offset=100');
    const b = await follow(two, first.requestId!, 'limit=10&offset=110');
    assert.equal(a.status, 200, a.body);
    assert.equal(b.status, 200, b.body);
    assert.ok(store.chunks.hits > before, 'the second page came from the chunk cache');
    // The same bytes as a page cut from Redis by the other instance.
    assert.equal((await follow(one, first.requestId!, 'limit=10&offset=110')).body, b.body);
    // Expired in Redis: 404 on the instance that holds its chunks too.
    await redis.del(`${prefix}cursor:${first.requestId}`);
    assert.equal((await follow(two, first.requestId!, 'limit=10&offset=110')).status, 404);
  });

  test('a too large result is refused with 413 and leaves no keys', async () => {
    const before = (await keysOf(redis, prefix)).length;
    const big = await paginate(one, 'SELECT * FROM files.events', 'limit=10');
    assert.equal(big.status, 413, big.body);
    assert.match(JSON.parse(big.body).hint, /cursors\.maxBytes/);
    assert.equal((await keysOf(redis, prefix)).length, before);
  });
});
