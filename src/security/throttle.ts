/**
 * Throttling of failed sign-ins (HTTP Basic, login), per user name and per client address:
 * after `maxFailures` failures within `windowMs`, further attempts are refused for `lockMs`
 * (429 with Retry-After) without checking the password at all. A success clears the name.
 * Counted in this process here; across instances in Redis (redis-throttle.ts).
 */
import { ApiError } from '../errors.js';

/** The throttle's face: the sign-in paths see only this. */
export interface SignInThrottle {
  /** Throws 429 when any of `keys` is locked. */
  check(keys: readonly string[]): Promise<void>;
  /** Records a failure for each key; locks a key that reached the limit. */
  fail(keys: readonly string[]): Promise<void>;
  succeed(key: string): Promise<void>;
}

/** Keys for a sign-in attempt: the user name and the client address. */
export const signInKeys = (name: string, address: string): string[] => [`user:${name}`, `address:${address}`];

export const throttled = (untilMs: number, now: number) => {
  const seconds = Math.max(1, Math.ceil((untilMs - now) / 1000));
  return new ApiError(
    429,
    'Too many failed sign-ins',
    'Too many failed sign-ins for this user or from this address; try again later.',
    `Wait ${seconds} s.`,
    { 'Retry-After': String(seconds) },
  );
};

export interface ThrottleOptions {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

interface Entry {
  failures: number[];
  lockedUntil: number;
}

export class MemoryThrottle implements SignInThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly options: ThrottleOptions,
    private readonly now: () => number = Date.now,
  ) {}

  async check(keys: readonly string[]): Promise<void> {
    const now = this.now();
    const until = Math.max(0, ...keys.map((k) => this.entries.get(k)?.lockedUntil ?? 0));
    if (until > now) throw throttled(until, now);
  }

  async fail(keys: readonly string[]): Promise<void> {
    const now = this.now();
    for (const key of keys) {
      const entry = this.entries.get(key) ?? { failures: [], lockedUntil: 0 };
      entry.failures = [...entry.failures.filter((t) => now - t < this.options.windowMs), now];
      if (entry.failures.length >= this.options.maxFailures) {
        entry.lockedUntil = now + this.options.lockMs;
        entry.failures = [];
      }
      this.entries.set(key, entry);
    }
    if (this.entries.size > 100_000) this.prune(now);
  }

  async succeed(key: string): Promise<void> {
    this.entries.delete(key);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.lockedUntil <= now && entry.failures.every((t) => now - t >= this.options.windowMs)) this.entries.delete(key);
    }
  }
}
