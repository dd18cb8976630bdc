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
}

export class PoolGate {
  private inUse = 0;
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
   * A turn: resolves with its end (call it once the connection went back to the driver's pool,
   * or was destroyed). Rejects with the busy 503 after `waitMs`, or with `signal`'s reason.
   */
  enter(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.inUse < this.size && this.waiting.length === 0) {
      this.inUse++;
      return Promise.resolve(this.leaver());
    }
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
      };
      const waiter: Waiter = {
        grant: () => {
          settle();
          resolve(this.leaver());
        },
      };
      const onAbort = () => {
        settle();
        reject(signal.reason as Error);
      };
      const timer = setTimeout(() => {
        settle();
        this.refusals++;
        reject(sourceBusy(this.source, this.size, this.waitMs));
      }, this.waitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Runs `work` in a turn of its own. */
  async within<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const leave = await this.enter(signal);
    try {
      return await work();
    } finally {
      leave();
    }
  }

  /** The end of one turn (once only): handed straight to the first waiter, if any. */
  private leaver(): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.waiting[0];
      if (next) next.grant();
      else this.inUse--;
    };
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
