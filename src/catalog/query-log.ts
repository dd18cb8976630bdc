/**
 * The query log: who ran what, when, for how long, with how many rows, and what each source
 * was asked. Kept in memory with bounded retention (entries and age) and shown as the system
 * table SYSLOG.QueryLog.
 */
import { redactSecrets } from './redact.js';

export interface QueryLogEntry {
  id: number;
  user: string;
  statement: string;
  start: string;
  durationMs: number;
  rows: number | null;
  status: 'ok' | 'error' | 'cancelled';
  error: string | null;
  sourceQueries: string | null;
  /**
   * The statement read data narrowed for its user: its source queries may carry values the user
   * may not see (keys of a dependent join), so SYSLOG.QueryLog shows them to administrators only.
   */
  narrowed?: boolean;
  /** The source tables the statement read live, `schema.table` (SYS.CopyRecommendations). */
  tables?: string[];
  /** The sources the statement asked (for the metrics). */
  sources?: string[];
  /** How a SELECT was answered (for the metrics). */
  route?: string;
  /** The source whose failure ended the statement (for the metrics). */
  failedSource?: string;
}

export interface QueryLogOptions {
  maxEntries: number;
  maxAgeMs: number;
  /** Told of every statement recorded (the metrics count them). */
  onRecord?: (entry: QueryLogEntry) => void;
}

/** The last time written as ISO text: statements that start in the same millisecond share it. */
let lastTime = { ms: NaN, iso: '' };

function isoTime(ms: number): string {
  if (lastTime.ms !== ms) lastTime = { ms, iso: new Date(ms).toISOString() };
  return lastTime.iso;
}

/** Entries past their age are dropped when they are this much older still, or when the log is listed. */
const TRIM_AGE_SLACK_MS = 1000;

export class QueryLog {
  private entries: QueryLogEntry[] = [];
  /** When each entry's statement started (ms), in the entries' order. */
  private starts: number[] = [];
  private nextId = 1;

  constructor(
    private readonly options: QueryLogOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts timing a statement; the returned function records its outcome once. */
  begin(user: string, statement: string): (outcome: Omit<QueryLogEntry, 'id' | 'user' | 'statement' | 'start' | 'durationMs'>) => void {
    const started = this.now();
    let recorded = false;
    return (outcome) => {
      if (recorded) return;
      recorded = true;
      const entry: QueryLogEntry = {
        id: this.nextId++,
        user,
        statement: redactSecrets(statement),
        start: isoTime(started),
        durationMs: this.now() - started,
        ...outcome,
      };
      this.entries.push(entry);
      this.starts.push(started);
      // Trimmed in batches (an eighth of the limit over it), not by copying the list per statement.
      if (this.entries.length > this.options.maxEntries + Math.max(1, this.options.maxEntries >> 3)) this.trim();
      else if (this.starts[0]! < this.now() - this.options.maxAgeMs - TRIM_AGE_SLACK_MS) this.trim();
      this.options.onRecord?.(entry);
    };
  }

  private trim(): void {
    const oldest = this.now() - this.options.maxAgeMs;
    const firstKept = this.starts.findIndex((start) => start >= oldest);
    const from = Math.max(firstKept < 0 ? this.entries.length : firstKept, this.entries.length - this.options.maxEntries);
    if (from > 0) {
      this.entries = this.entries.slice(from);
      this.starts = this.starts.slice(from);
    }
  }

  list(): readonly QueryLogEntry[] {
    this.trim();
    return this.entries;
  }
}
