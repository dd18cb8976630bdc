/**
 * Statement limits per role (configuration `roleLimits`): the most rows a statement may return,
 * the longest it may run, and how many statements a user may run at once. A user may do what
 * any of their roles may, so a user's limit is the largest of their roles' and none at all
 * when one of their roles sets none; the admin role has none. Roles not listed take the entry
 * "*" when there is one. Concurrency is counted per user in this process, or in Redis across
 * instances (a crashed instance's statements stop counting at their deadline).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { UserDef } from '../catalog/types.js';
import { ApiError, badRequest } from '../errors.js';
import { withRedis } from '../runtime/redis.js';
import { ADMIN_ROLE } from './users.js';

export interface RoleLimits {
  maxRowsPerStatement?: number;
  statementTimeoutMs?: number;
  maxConcurrentStatements?: number;
}

/** A user's limits; null: none. */
export interface StatementLimits {
  maxRowsPerStatement: number | null;
  statementTimeoutMs: number | null;
  maxConcurrentStatements: number | null;
}

export const LIMIT_NAMES = ['maxRowsPerStatement', 'statementTimeoutMs', 'maxConcurrentStatements'] as const;

export function limitsOf(user: UserDef, roleLimits: Readonly<Record<string, RoleLimits>>): StatementLimits {
  const none: StatementLimits = { maxRowsPerStatement: null, statementTimeoutMs: null, maxConcurrentStatements: null };
  if (user.roles.includes(ADMIN_ROLE) || user.roles.length === 0) return none;
  const entries = user.roles.map((role) => roleLimits[role] ?? roleLimits['*'] ?? {});
  const limits = { ...none };
  for (const name of LIMIT_NAMES) {
    const values = entries.map((entry) => entry[name]);
    limits[name] = values.every((v) => v !== undefined) ? Math.max(...(values as number[])) : null;
  }
  return limits;
}

export const tooManyRows = (user: string, max: number) =>
  badRequest(
    `The statement returns more than ${max} rows, the most a statement of user "${user}" may return (maxRowsPerStatement of their roles).`,
    'Add conditions or a LIMIT, or read the result in parts with the limit and offset parameters.',
    'Too many rows',
  );

export const roleTimeout = (user: string, ms: number) =>
  new ApiError(
    504,
    'Query timeout',
    `The statement was cancelled after ${ms} ms, the longest a statement of user "${user}" may run (statementTimeoutMs of their roles).`,
    'Narrow the statement, or ask an administrator about the limits of your roles.',
  );

const tooManyStatements = (user: string, max: number) =>
  new ApiError(
    429,
    'Too many statements',
    `User "${user}" already runs ${max} statement${max === 1 ? '' : 's'} at once, the most their roles allow (maxConcurrentStatements).`,
    'Wait for a running statement to finish, then send this one again.',
    { 'Retry-After': '1' },
  );

/** Counts each user's running statements; `acquire` refuses (429) beyond `max`. */
export interface StatementGate {
  /** Takes a place for a statement that ends by `deadline` at the latest; returns its release. */
  acquire(user: string, max: number, deadline: number): Promise<() => void>;
}

export class MemoryGate implements StatementGate {
  private readonly running = new Map<string, number>();

  async acquire(user: string, max: number): Promise<() => void> {
    const count = this.running.get(user) ?? 0;
    if (count >= max) throw tooManyStatements(user, max);
    this.running.set(user, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(user) ?? 1) - 1;
      if (left > 0) this.running.set(user, left);
      else this.running.delete(user);
    };
  }
}

/**
 * Takes a place when fewer than ARGV[3] unexpired ones are taken.
 * KEYS: the user's places (sorted set: place -> deadline); ARGV: now, deadline, max, place.
 */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
local longest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
redis.call('PEXPIREAT', KEYS[1], longest)
return 1
`;

export class RedisGate implements StatementGate {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(user: string, max: number, deadline: number): Promise<() => void> {
    const key = `${this.prefix}running:${user}`;
    const place = randomBytes(8).toString('hex');
    // A little past the statement's own deadline: its cancellation takes a moment.
    const until = deadline + 5000;
    const taken = await withRedis('the count of running statements', () => this.redis.eval(ACQUIRE, 1, key, this.now(), until, max, place));
    if (taken !== 1) throw tooManyStatements(user, max);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Unreachable Redis: the place is freed at its deadline.
      void this.redis.zrem(key, place).catch(() => undefined);
    };
  }
}
