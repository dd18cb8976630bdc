/**
 * Per-user cursor quotas (critical: one user must not take the service from others). In every
 * cursor store, local and Redis: a user past their quota of cursors or bytes loses their own
 * least recently read cursors, never another user's; a result larger than the byte quota alone
 * is a 413; global pressure (pagination.maxCursors, the disk budget, cursors.maxBytes) takes
 * from the user who holds the most first. Stores are driven directly here, with results of a
 * real engine; test/http/cursor-quotas.test.ts does it over HTTP.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { cursorQuota, loadConfig } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import type { Cursor, CursorStore } from '../../src/results/cursors.js';
import { LocalCursorStore, type LocalCursorOptions } from '../../src/results/local-cursors.js';
import { RedisCursorStore, type RedisCursorOptions } from '../../src/results/redis-cursors.js';
import { whenReady } from '../../src/runtime/redis.js';
import { REDIS_URL, startTestServer, type TestServer } from '../helpers/server.js';

const RESOURCE = '/rest/api/query';

/** A result of about `kb` KiB: `kb` rows of 1,000 characters. */
const sized = (kb: number) => `SELECT i, repeat('x', 1000) AS pad FROM generate_series(1, ${kb}) t(i)`;

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

/** A new cursor of `owner` holding the rows of `sql`, made by `store`. */
async function make(store: CursorStore, owner: string, sql = 'SELECT 1 AS one'): Promise<Cursor> {
  const admin = server.services.users.find('admin')!;
  const execution = await server.services.engine.open(sql, admin, new AbortController().signal);
  try {
    return await store.create(execution, owner, RESOURCE);
  } finally {
    execution.close();
  }
}

/** Whether `owner`'s cursor `id` is still served (404: dropped). */
async function alive(store: CursorStore, id: string, owner: string): Promise<boolean> {
  try {
    await store.get(id, owner, RESOURCE);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return false;
    throw err;
  }
}

/** The size in bytes of a result as the stores count it. */
let tenKb = 0;

/** A clock that moves a millisecond per reading: every cursor is read at a time of its own. */
const ticking = () => {
  let now = 1_000_000;
  return () => ++now;
};

interface Harness {
  store(perUser: { cursors: number; bytes: number }, extra?: { maxCursors?: number; budget?: number }): CursorStore;
  /** Bytes `owner` holds, as the store counts them. */
  bytesOf(store: CursorStore, owner: string): Promise<number>;
}

function quotaTests(name: string, harness: () => Harness): void {
  describe(name, () => {
    before(async () => {
      const probe = harness().store({ cursors: 10, bytes: 1 << 30 });
      const cursor = await make(probe, 'probe', sized(10));
      tenKb = cursor.bytes;
      assert.ok(tenKb > 10_000 && tenKb < 11_000, `${tenKb}`);
      await probe.remove(cursor.id);
    });

    test("a user past their count quota loses their own oldest cursors, never another user's", async () => {
      const store = harness().store({ cursors: 3, bytes: 1 << 30 });
      const bob = await make(store, 'bob');
      const alice: Cursor[] = [];
      for (let i = 0; i < 12; i++) alice.push(await make(store, 'alice'));
      assert.ok(await alive(store, bob.id, 'bob'), "bob's cursor is kept");
      const kept = [];
      for (const cursor of alice) kept.push(await alive(store, cursor.id, 'alice'));
      assert.deepEqual(kept, [...Array<boolean>(9).fill(false), true, true, true], 'alice keeps her 3 newest');
      assert.equal(store.stats().count, 4);
    });

    test('reading a cursor makes it the newest of its owner', async () => {
      const store = harness().store({ cursors: 2, bytes: 1 << 30 });
      const [first, second] = [await make(store, 'alice'), await make(store, 'alice')];
      await store.get(first.id, 'alice', RESOURCE);
      await make(store, 'alice');
      assert.ok(await alive(store, first.id, 'alice'), 'read last: kept');
      assert.ok(!(await alive(store, second.id, 'alice')), 'least recently read: dropped');
    });

    test("a user past their byte quota loses their own oldest cursors, never another user's", async () => {
      const store = harness().store({ cursors: 100, bytes: Math.floor(tenKb * 3.5) });
      const bob = await make(store, 'bob', sized(10));
      const alice: Cursor[] = [];
      for (let i = 0; i < 6; i++) alice.push(await make(store, 'alice', sized(10)));
      assert.ok(await alive(store, bob.id, 'bob'), "bob's cursor is kept");
      const kept = [];
      for (const cursor of alice) kept.push(await alive(store, cursor.id, 'alice'));
      assert.deepEqual(kept, [false, false, false, true, true, true]);
      assert.equal(await harness().bytesOf(store, 'alice'), tenKb * 3);
      assert.equal(await harness().bytesOf(store, 'bob'), tenKb);
    });

    test("a result larger than the byte quota alone is a 413 that says why and what to do, and takes nobody's cursor", async () => {
      const store = harness().store({ cursors: 100, bytes: tenKb * 2 });
      const bob = await make(store, 'bob', sized(10));
      const mine = await make(store, 'alice', sized(10));
      await assert.rejects(
        () => make(store, 'alice', sized(30)),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.status, 413);
          assert.deepEqual(Object.keys(err.body).sort(), ['description', 'hint', 'title']);
          assert.equal(err.title, 'Result too large');
          assert.match(err.description, new RegExp(`${tenKb * 2} bytes one user's paginated results`));
          assert.match(err.hint!, /pagination\.maxBytesPerUser/);
          return true;
        },
      );
      assert.ok(await alive(store, bob.id, 'bob'));
      assert.ok(await alive(store, mine.id, 'alice'), 'her own older cursor stays: the refused result was never kept');
      assert.equal(await harness().bytesOf(store, 'alice'), tenKb, 'nothing of the refused result is counted');
      assert.equal(store.stats().count, 2);
    });

    test('past the store budget, the user holding the most loses their oldest first', async () => {
      // Room for 5 results of 10 KiB in all; each user may take 4 of them.
      const store = harness().store({ cursors: 100, bytes: tenKb * 4 }, { budget: tenKb * 5, maxCursors: 5 });
      const bob = await make(store, 'bob', sized(10));
      const carol = await make(store, 'carol', sized(10));
      const alice: Cursor[] = [];
      for (let i = 0; i < 8; i++) alice.push(await make(store, 'alice', sized(10)));
      assert.ok(await alive(store, bob.id, 'bob'), "bob's cursor (older than all of alice's) is kept");
      assert.ok(await alive(store, carol.id, 'carol'), "carol's cursor is kept");
      const kept = [];
      for (const cursor of alice) kept.push(await alive(store, cursor.id, 'alice'));
      assert.deepEqual(kept, [false, false, false, false, false, true, true, true]);
      // A newcomer with nothing pushes out the biggest holder's oldest, not bob's or carol's.
      await make(store, 'dave', sized(10));
      assert.ok(await alive(store, bob.id, 'bob'));
      assert.ok(await alive(store, carol.id, 'carol'));
      assert.ok(!(await alive(store, alice[5]!.id, 'alice')));
    });
  });
}

describe('per-user cursor quotas', () => {
  const dirs: string[] = [];
  const stores: CursorStore[] = [];
  after(async () => {
    for (const store of stores) await store.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  quotaTests('local store, in memory', () => ({
    store(perUser, extra = {}) {
      const spillDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-quota-'));
      dirs.push(spillDir);
      const options: LocalCursorOptions = {
        idleMs: 600_000,
        perUser,
        maxCursors: extra.maxCursors ?? 1000,
        memoryBytes: extra.budget ?? 1 << 30,
        diskBytes: 1 << 30,
        spillDir,
      };
      // Memory never drops cursors (it spills): the budget is the count there.
      const store = new LocalCursorStore(options, ticking());
      stores.push(store);
      return store;
    },
    bytesOf: async (store, owner) => (store as LocalCursorStore).usageOf(owner).bytes,
  }));

  quotaTests('local store, spilled to disk', () => ({
    store(perUser, extra = {}) {
      const spillDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-quota-'));
      dirs.push(spillDir);
      const store = new LocalCursorStore(
        { idleMs: 600_000, perUser, maxCursors: 1000, memoryBytes: 0, diskBytes: extra.budget ?? 1 << 30, spillDir },
        ticking(),
      );
      stores.push(store);
      return store;
    },
    bytesOf: async (store, owner) => (store as LocalCursorStore).usageOf(owner).bytes,
  }));

  describe('Redis', () => {
    let redis: Redis;
    const prefixes: string[] = [];
    before(async () => {
      redis = new Redis(REDIS_URL);
      await whenReady(redis, 5000);
    });
    after(async () => {
      for (const prefix of prefixes) {
        const left = await redis.keys(`${prefix}*`);
        if (left.length > 0) await redis.del(...left);
      }
      redis.disconnect();
    });
    const redisStore = (perUser: { cursors: number; bytes: number }, budget: number, prefix: string, now: () => number) => {
      const options: RedisCursorOptions = { idleMs: 600_000, perUser, maxBytes: budget, prefix, cacheBytes: 1 << 20 };
      const store = new RedisCursorStore(redis, options, now);
      stores.push(store);
      return store;
    };
    const bytesOf = async (prefix: string, owner: string) => Number(await redis.zscore(`${prefix}user-bytes`, owner));

    quotaTests('store', () => ({
      store(perUser, extra = {}) {
        const prefix = `vdb-test-${randomUUID()}:`;
        prefixes.push(prefix);
        return redisStore(perUser, extra.budget ?? 1 << 30, prefix, ticking());
      },
      bytesOf: (store, owner) => bytesOf((store as unknown as { options: RedisCursorOptions }).options.prefix, owner),
    }));

    test('the quota is shared by instances, and holds when they create cursors at the same time', async () => {
      const prefix = `vdb-test-${randomUUID()}:`;
      prefixes.push(prefix);
      const clock = ticking();
      const one = redisStore({ cursors: 3, bytes: 1 << 30 }, 1 << 30, prefix, clock);
      const two = redisStore({ cursors: 3, bytes: 1 << 30 }, 1 << 30, prefix, clock);
      const bob = await make(two, 'bob');
      const alice: Cursor[] = [];
      for (let i = 0; i < 6; i++) alice.push(await make(i % 2 === 0 ? one : two, 'alice'));
      assert.ok(await alive(one, bob.id, 'bob'));
      const kept = [];
      for (const cursor of alice) kept.push(await alive(two, cursor.id, 'alice'));
      assert.deepEqual(kept, [false, false, false, true, true, true], 'the quota counts both instances');
      await Promise.all(Array.from({ length: 10 }, (_, i) => make(i % 2 === 0 ? one : two, 'alice')));
      assert.equal(Number(await redis.zscore(`${prefix}user-cursors`, 'alice')), 3);
      assert.equal(await redis.zcard(`${prefix}cursors-of:alice`), 3);
      assert.equal(await redis.zcard(`${prefix}cursors`), 4, "alice's 3 and bob's");
      assert.ok(await alive(one, bob.id, 'bob'));
      // Dropping a user's cursors clears their counts.
      await one.dropOwner('alice');
      assert.equal(await redis.zscore(`${prefix}user-cursors`, 'alice'), null);
      assert.equal(await redis.zscore(`${prefix}user-bytes`, 'alice'), null);
      assert.equal(await redis.exists(`${prefix}cursors-of:alice`), 0);
      await one.remove(bob.id);
      assert.equal(Number(await redis.get(`${prefix}cursor-bytes`)), 0);
      assert.deepEqual(await redis.hgetall(`${prefix}cursor-owners`), {});
    });
  });
});

test('the quota settings: defaults, environment, a share of the budget of the store in use', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-quota-config-'));
  try {
    const local = loadConfig({}, { dataDir });
    assert.deepEqual(cursorQuota(local), { cursors: 100, bytes: (local.pagination.memoryBytes + local.pagination.diskBytes) / 4 });
    const shared = loadConfig({}, { dataDir, cursors: { redisUrl: REDIS_URL } });
    assert.deepEqual(cursorQuota(shared), { cursors: 100, bytes: shared.cursors.maxBytes / 4 });
    const set = loadConfig({ VDB_MAX_CURSORS_PER_USER: '7', VDB_CURSOR_BYTES_PER_USER: '12345' }, { dataDir });
    assert.deepEqual(cursorQuota(set), { cursors: 7, bytes: 12345 });
    assert.throws(() => loadConfig({ VDB_MAX_CURSORS_PER_USER: '0' }, { dataDir }), /pagination\.maxCursorsPerUser/);
    assert.throws(() => loadConfig({}, { dataDir, pagination: { maxBytesPerUser: 0 } }), /pagination\.maxBytesPerUser/);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
