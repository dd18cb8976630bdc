/**
 * Whether each data source is available, as vdb last found it (at start, when it is added,
 * altered or refreshed, when a statement could not publish it, and by the background checks).
 * An unavailable source is checked again in the background, after `retryMs`, then doubling up to
 * `retryMaxMs`, until a check succeeds: a source that comes back needs no restart. The timers
 * never hold the process open and stop on close.
 */
import type { Logger } from 'pino';
import { messageOf } from '../errors.js';

export interface SourceStatus {
  available: boolean;
  /** Why the source is unavailable (null while it is available). */
  reason: string | null;
  /** When the status last changed (ISO time). */
  since: string;
}

interface Entry {
  status: SourceStatus;
  /** Checks failed in a row (the backoff grows with them). */
  failures: number;
  timer: NodeJS.Timeout | null;
}

export interface HealthOptions {
  /** First wait before an unavailable source is checked again (ms). */
  retryMs: number;
  /** Longest wait between two checks (ms). */
  retryMaxMs: number;
}

export class SourceHealth {
  private readonly entries = new Map<string, Entry>();
  /** The checks under way, one per source: statements and timers share them. */
  private readonly checking = new Map<string, Promise<boolean>>();
  private closed = false;
  /** Changes with every change of a status (the system tables are written again). */
  version = 0;

  constructor(
    /** Checks source `name`; rejects with the reason it is unavailable. */
    private readonly check: (name: string) => Promise<void>,
    private readonly options: HealthOptions,
    private readonly log: Logger,
  ) {}

  status(name: string): SourceStatus {
    return this.entries.get(name)?.status ?? { available: true, reason: null, since: new Date(0).toISOString() };
  }

  /** The sources found unavailable, with their reasons. */
  unavailable(): Array<{ name: string } & SourceStatus> {
    return [...this.entries].filter(([, e]) => !e.status.available).map(([name, e]) => ({ name, ...e.status }));
  }

  isAvailable(name: string): boolean {
    return this.entries.get(name)?.status.available ?? true;
  }

  markAvailable(name: string): void {
    const entry = this.entryOf(name);
    entry.failures = 0;
    this.stopTimer(entry);
    if (entry.status.available) return;
    this.log.info({ source: name }, 'data source available again');
    this.setStatus(entry, { available: true, reason: null, since: new Date().toISOString() });
  }

  /** Marks `name` unavailable for `reason` and schedules its next check. */
  markUnavailable(name: string, reason: string): void {
    if (this.closed) return;
    const entry = this.entryOf(name);
    if (entry.status.available || entry.status.reason !== reason) {
      this.log.warn({ source: name, reason }, 'data source not available; vdb tries it again in the background');
      this.setStatus(entry, { available: false, reason, since: entry.status.available ? new Date().toISOString() : entry.status.since });
    }
    entry.failures++;
    this.schedule(name, entry);
  }

  /**
   * Checks `name` now (joining a check under way); true when it is available. The outcome marks
   * the source available or unavailable.
   */
  checkNow(name: string): Promise<boolean> {
    const running = this.checking.get(name);
    if (running) return running;
    const entry = this.entryOf(name);
    // A source removed (or removed and added again) meanwhile: the outcome is not its.
    const current = () => this.entries.get(name) === entry && !this.closed;
    const done = this.check(name).then(
      () => {
        if (current()) this.markAvailable(name);
        return true;
      },
      (err: unknown) => {
        if (current()) this.markUnavailable(name, messageOf(err));
        return false;
      },
    );
    const tracked = done.finally(() => this.checking.delete(name));
    this.checking.set(name, tracked);
    return tracked;
  }

  /** A source that is gone (removed here or elsewhere): no more checks. */
  forget(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.stopTimer(entry);
    this.entries.delete(name);
    if (!entry.status.available) this.version++;
  }

  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) this.stopTimer(entry);
  }

  private entryOf(name: string): Entry {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { status: { available: true, reason: null, since: new Date().toISOString() }, failures: 0, timer: null };
      this.entries.set(name, entry);
    }
    return entry;
  }

  private setStatus(entry: Entry, status: SourceStatus): void {
    entry.status = status;
    this.version++;
  }

  private schedule(name: string, entry: Entry): void {
    this.stopTimer(entry);
    if (this.closed) return;
    const wait = Math.min(this.options.retryMaxMs, this.options.retryMs * 2 ** Math.min(entry.failures - 1, 30));
    entry.timer = setTimeout(() => {
      entry.timer = null;
      if (this.entries.get(name) === entry) void this.checkNow(name);
    }, wait);
    // A check to come never keeps the process alive.
    entry.timer.unref();
  }

  private stopTimer(entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
  }
}
