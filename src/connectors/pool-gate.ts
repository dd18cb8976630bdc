/**
 * The turns of a source's connection pool. At most `size` (the source's maxConnections) pieces
 * of work hold a connection at once; the next waits for one to come back, up to `waitMs`
 * (poolWaitMs), and is then refused as busy: a 503 "Data source busy" with Retry-After, never
 * "cannot be reached", which only a connect that fails or does not complete means. The drivers'
 * pools never queue behind it (theirs would wait for ever, or fail as if the source were away).
 */
import { sourceBusy } from '../errors.js';

/** How long a statement waits for a pooled connection when every one is in use (the source's poolWaitMs wins). */
export const DEFAULT_POOL_WAIT_MS = 5000;

/** The pool's settings a connector takes from the configuration. */
export interface Pooling {
  /** The configured default wait for a connection (poolWaitMs); the source's own poolWaitMs wins. */
  waitMs?: number;
  /** Where the pool is shown to the metrics while the connector is open. */
  gates?: PoolGates;
}

/** What the metrics show of one source's pool. */
export interface PoolStats {
  source: string;
  /** The most connections (maxConnections). */
  size: number;
  /** Connections held by work now (a connect under way included). */
  inUse: number;
  /** Open connections that wait in the pool for work. */
  idle: number;
  /** Work waiting for a connection. */
  waiting: number;
  /** Work refused as busy since the pool was made. */
  refusals: number;
}

/** The pools of one process, for the metrics: each connector's gate while it is open. */
export class PoolGates {
  private readonly gates = new Set<PoolGate>();

  add(gate: PoolGate): void {
    this.gates.add(gate);
  }

  remove(gate: PoolGate): void {
    this.gates.delete(gate);
  }

  /** One entry per source (the latest gate of a source that was just replaced). */
  stats(): PoolStats[] {
    const bySource = new Map<string, PoolStats>();
    for (const gate of this.gates) bySource.set(gate.source, gate.stats());
    return [...bySource.values()];
  }
}

interface Waiter {
  grant(): void;
  fail(err: Error): void;
  refuse(): void;
  /** Its wait is over while a turn was still connecting: refused once no connect is under way. */
  overdue: boolean;
}

/** One piece of work's hold on a connection of the pool. */
export interface Turn {
  /** The connection was had: the turn is a statement's now, no longer a connect under way. */
  connected(): void;
  /** The connection went back to the driver's pool (or was destroyed): the next waiter's turn. Once only. */
  leave(): void;
}

export class PoolGate {
  private inUse = 0;
  /** Turns whose connection is still being had (a connect under way). */
  private connecting = 0;
  private refusals = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly source: string,
    readonly size: number,
    readonly waitMs: number,
    /** Open connections waiting in the driver's pool. */
    private readonly idle: () => number,
  ) {}

  /**
   * A turn, at once or after others'. Rejects with the busy 503 when no turn came within
   * `waitMs` while every connection was held by a statement (a turn that is still connecting
   * is waited for: its connect tells whether the source is busy or away), or with `signal`'s reason.
   */
  enter(signal: AbortSignal): Promise<Turn> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.inUse < this.size && this.waiting.length === 0) {
      this.inUse++;
      return Promise.resolve(this.turn());
    }
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
      };
      const waiter: Waiter = {
        overdue: false,
        grant: () => {
          settle();
          resolve(this.turn());
        },
        fail: (err) => {
          settle();
          reject(err);
        },
        refuse: () => {
          settle();
          this.refusals++;
          reject(sourceBusy(this.source, this.size, this.waitMs));
        },
      };
      const onAbort = () => {
        settle();
        reject(signal.reason as Error);
      };
      const timer = setTimeout(() => {
        if (this.connecting > 0) waiter.overdue = true;
        else waiter.refuse();
      }, this.waitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /**
   * A connect failed for a reason that is the source's (refused, timed out, wrong password): the
   * work waiting for a turn fails the same way now, instead of each trying (and waiting) in turn.
   */
  failWaiting(err: Error): void {
    for (const waiter of [...this.waiting]) waiter.fail(err);
  }

  /** Runs `work` in a turn of its own. */
  async within<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const turn = await this.enter(signal);
    turn.connected();
    try {
      return await work();
    } finally {
      turn.leave();
    }
  }

  /** A new turn, connecting until it says otherwise. */
  private turn(): Turn {
    let state: 'connecting' | 'connected' | 'left' = 'connecting';
    this.connecting++;
    const connectDone = () => {
      if (state !== 'connecting') return;
      this.connecting--;
    };
    return {
      connected: () => {
        connectDone();
        if (state === 'connecting') state = 'connected';
        this.refuseOverdue();
      },
      leave: () => {
        if (state === 'left') return;
        connectDone();
        state = 'left';
        const next = this.waiting[0];
        if (next) next.grant();
        else this.inUse--;
        this.refuseOverdue();
      },
    };
  }

  /** Waiters past their wait are refused once every turn is a statement's (none connecting). */
  private refuseOverdue(): void {
    if (this.connecting > 0) return;
    for (const waiter of this.waiting.filter((w) => w.overdue)) waiter.refuse();
  }

  stats(): PoolStats {
    return {
      source: this.source,
      size: this.size,
      inUse: this.inUse,
      idle: this.idle(),
      waiting: this.waiting.length,
      refusals: this.refusals,
    };
  }
}
