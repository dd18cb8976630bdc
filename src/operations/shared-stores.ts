/**
 * The stores that several instances share when `cursors.redisUrl` is set (cursors, sign-in
 * failures, running statements), or their in-process versions when it is not.
 */
import type { Redis } from 'ioredis';
import { cursorQuota, cursorSpillDir, type Config } from '../config.js';
import type { CursorStore } from '../results/cursors.js';
import { LocalCursorStore } from '../results/local-cursors.js';
import { RedisCursorStore } from '../results/redis-cursors.js';
import { connectRedis, whenReady } from '../runtime/redis.js';
import { RedisThrottle } from '../security/redis-throttle.js';
import { MemoryGate, RedisGate, type StatementGate } from '../security/statement-limits.js';
import { MemoryThrottle, type SignInThrottle } from '../security/throttle.js';

export interface SharedStores {
  cursors: CursorStore;
  throttle: SignInThrottle;
  statements: StatementGate;
  close(): Promise<void>;
}

/** How long the start waits for Redis; after it the instance starts unready and keeps trying. */
const CONNECT_WAIT_MS = 5000;

export async function createSharedStores(config: Config, accessOf: (owner: string) => string): Promise<SharedStores> {
  const { redisUrl, keyPrefix, maxBytes, cacheBytes } = config.cursors;
  const idleMs = config.pagination.cursorIdleMs;
  const perUser = cursorQuota(config);
  if (redisUrl === null) {
    const cursors = new LocalCursorStore({
      idleMs,
      accessOf,
      perUser,
      maxCursors: config.pagination.maxCursors,
      memoryBytes: config.pagination.memoryBytes,
      diskBytes: config.pagination.diskBytes,
      spillDir: cursorSpillDir(config.dataDir),
    });
    return { cursors, throttle: new MemoryThrottle(config.throttle), statements: new MemoryGate(), close: () => cursors.close() };
  }
  const redis: Redis = connectRedis(redisUrl);
  await whenReady(redis, CONNECT_WAIT_MS);
  const cursors = new RedisCursorStore(redis, {
    idleMs,
    accessOf,
    perUser,
    maxBytes,
    cacheBytes,
    prefix: keyPrefix,
  });
  return {
    cursors,
    throttle: new RedisThrottle(redis, config.throttle, keyPrefix),
    statements: new RedisGate(redis, keyPrefix),
    async close() {
      await cursors.close();
      redis.disconnect();
    },
  };
}
