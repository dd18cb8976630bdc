/**
 * The sign-in throttle shared by every instance (when `cursors.redisUrl` is set): the same
 * rule as the in-memory one (throttle.ts), with the failures of each key in a Redis sorted set
 * (a sliding window) and the lock as a key that expires by itself.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { withRedis } from '../runtime/redis.js';
import { throttled, type SignInThrottle, type ThrottleOptions } from './throttle.js';

const WHAT = 'sign-in throttling';

/**
 * Records one failure and locks the key when it reached the limit, atomically.
 * KEYS: failures, lock; ARGV: now, windowMs, maxFailures, lockMs, member.
 */
const FAIL = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], now, ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], now + tonumber(ARGV[4]), 'PX', ARGV[4])
  redis.call('DEL', KEYS[1])
end
return 0
`;

export class RedisThrottle implements SignInThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly options: ThrottleOptions,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  private failuresKey = (key: string) => `${this.prefix}signin:failures:${key}`;
  private lockKey = (key: string) => `${this.prefix}signin:lock:${key}`;

  async check(keys: readonly string[]): Promise<void> {
    const locks = await withRedis(WHAT, () => this.redis.mget(...keys.map(this.lockKey)));
    const now = this.now();
    const until = Math.max(0, ...locks.map((value) => Number(value ?? 0)));
    if (until > now) throw throttled(until, now);
  }

  async fail(keys: readonly string[]): Promise<void> {
    const { windowMs, maxFailures, lockMs } = this.options;
    const now = this.now();
    for (const key of keys) {
      const member = `${now}:${randomBytes(6).toString('hex')}`;
      await withRedis(WHAT, () =>
        this.redis.eval(FAIL, 2, this.failuresKey(key), this.lockKey(key), now, windowMs, maxFailures, lockMs, member),
      );
    }
  }

  async succeed(key: string): Promise<void> {
    await withRedis(WHAT, () => this.redis.del(this.failuresKey(key)));
  }
}
