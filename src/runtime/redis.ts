/**
 * The Redis connection shared by the cursor store, the sign-in throttle and the statement
 * limits. Commands fail at once while Redis is away (no offline queue) and the client keeps
 * reconnecting, so a request that needs Redis gets a 503 then and works again when it is back.
 */
import { Redis } from 'ioredis';
import { ApiError, messageOf } from '../errors.js';

/** How long one command may take before it counts as failed. */
const COMMAND_TIMEOUT_MS = 2000;

export function connectRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: COMMAND_TIMEOUT_MS,
    // Reconnect for ever, at most a second apart.
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
  // Failures reach the requests that need Redis; the client itself must not crash the process.
  redis.on('error', () => undefined);
  return redis;
}

export const redisUnavailable = (what: string, err: unknown) =>
  new ApiError(
    503,
    'Service unavailable',
    `The shared store (Redis) that holds ${what} cannot be reached: ${messageOf(err)}.`,
    'Try again in a moment; an administrator checks that Redis is running (GET /readyz says whether this instance can use it).',
  );

/** Runs Redis commands; a failure of Redis (not an ApiError of ours) becomes a 503. */
export async function withRedis<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw redisUnavailable(what, err);
  }
}

/** 'ok', or why Redis cannot be used now (GET /readyz). */
export async function redisCheck(redis: Redis): Promise<string> {
  if (redis.status !== 'ready') return `Redis ${redis.status}`;
  try {
    await redis.ping();
    return 'ok';
  } catch (err) {
    return `Redis: ${messageOf(err)}`;
  }
}

/** Resolves once the connection is ready, or after `ms` (then commands fail with 503 until it is). */
export async function whenReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
    function done() {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    }
  });
}
