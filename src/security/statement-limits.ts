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

/** The user's limit on statements at once: their roles', else the default (statements.maxPerUser); admins have none. */
export function concurrencyOf(user: UserDef, limits: StatementLimits, maxPerUser: number): { max: number; setting: string } | null {
  if (limits.maxConcurrentStatements !== null)
    return { max: limits.maxConcurrentStatements, setting: 'maxConcurrentStatements of their roles' };
  if (user.roles.includes(ADMIN_ROLE)) return null;
  return { max: maxPerUser, setting: 'statements.maxPerUser' };
}

const tooManyStatements = (user: string, max: number, setting = 'maxConcurrentStatements of their roles') =>
  new ApiError(
    429,
    'Too many statements',
    `User "${user}" already runs ${max} statement${max === 1 ? '' : 's'} at once, the most they may (${setting}).`,
    'Wait for a running statement to finish, then send this one again.',
    { 'Retry-After': '1' },
  );

/** Counts each user's running statements; `acquire` refuses (429) beyond `max`. */
export interface StatementGate {
  /** Takes a place for a statement that ends by `deadline` at the latest; returns its release. */
  acquire(user: string, max: number, deadline: number, setting?: string): Promise<() => void>;
}

export class MemoryGate implements StatementGate {
  private readonly running = new Map<string, number>();

  async acquire(user: string, max: number, _deadline: number, setting?: string): Promise<() => void> {
    const count = this.running.get(user) ?? 0;
    if (count >= max) throw tooManyStatements(user, max, setting);
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

  async acquire(user: string, max: number, deadline: number, setting?: string): Promise<() => void> {
    const key = `${this.prefix}running:${user}`;
    const place = randomBytes(8).toString('hex');
    // A little past the statement's own deadline: its cancellation takes a moment.
    const until = deadline + 5000;
    const taken = await withRedis('the count of running statements', () => this.redis.eval(ACQUIRE, 1, key, this.now(), until, max, place));
    if (taken !== 1) throw tooManyStatements(user, max, setting);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Unreachable Redis: the place is freed at its deadline.
      void this.redis.zrem(key, place).catch(() => undefined);
    };
  }
}

export interface AdmissionLimits {
  /** Statements running at once, all users together. */
  maxRunning: number;
  /** Statements waiting at most; more are refused. */
  maxQueued: number;
  /** Longest wait (ms). */
  maxQueueMs: number;
}

const serverBusy = (description: string) =>
  new ApiError(503, 'Server busy', description, 'Send the statement again in a moment.', { 'Retry-After': '1' });

interface Waiter {
  user: string;
  admit(): void;
}

/**
 * The instance's places for running statements, shared by all users: at most `maxRunning` run at
 * once, and one user holds at most half of them (admins too), so that a user who sends many
 * statements at once can never take every place: the others' statements keep theirs. A
 * statement without a place waits in a queue (first come, first served among those whose user
 * is under their share), at most `maxQueued` of them and at most `maxQueueMs`; beyond either it
 * is refused with a 503 and Retry-After.
 */
export class Admission {
  private running = 0;
  private readonly byUser = new Map<string, number>();
  private readonly queue: Waiter[] = [];

  constructor(private readonly limits: AdmissionLimits) {}

  /** The most places one user may hold. */
  get share(): number {
    return Math.max(1, Math.floor(this.limits.maxRunning / 2));
  }

  /** Running and waiting statements (metrics, tests). */
  get counts(): { running: number; queued: number } {
    return { running: this.running, queued: this.queue.length };
  }

  private fits(user: string): boolean {
    return this.running < this.limits.maxRunning && (this.byUser.get(user) ?? 0) < this.share;
  }

  private take(user: string): () => void {
    this.running++;
    this.byUser.set(user, (this.byUser.get(user) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const left = (this.byUser.get(user) ?? 1) - 1;
      if (left > 0) this.byUser.set(user, left);
      else this.byUser.delete(user);
      this.dispatch();
    };
  }

  private dispatch(): void {
    for (let i = 0; i < this.queue.length && this.running < this.limits.maxRunning;) {
      const waiter = this.queue[i]!;
      if (this.fits(waiter.user)) {
        this.queue.splice(i, 1);
        waiter.admit();
      } else i++;
    }
  }

  /** A place for one statement of `user`, waiting until `deadline` at the latest; returns its release. */
  acquire(user: string, deadline: number, signal?: AbortSignal): Promise<() => void> {
    // Every waiter in the queue is there because it does not fit: one that fits goes first.
    if (this.fits(user)) return Promise.resolve(this.take(user));
    if (this.queue.length >= this.limits.maxQueued) {
      return Promise.reject(
        serverBusy(
          `${this.running} statements run and ${this.queue.length} wait, the most this instance takes (statements.maxRunning, statements.maxQueued).`,
        ),
      );
    }
    const waitMs = Math.max(0, Math.min(this.limits.maxQueueMs, deadline - Date.now()));
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
      };
      const aborted = () => {
        leave();
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        leave();
        reject(
          serverBusy(
            `The statement waited ${waitMs} ms for one of the ${this.limits.maxRunning} places of running statements (statements.maxQueueMs).`,
          ),
        );
      }, waitMs);
      const waiter: Waiter = {
        user,
        admit: () => {
          leave();
          resolve(this.take(user));
        },
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.queue.push(waiter);
    });
  }
}
