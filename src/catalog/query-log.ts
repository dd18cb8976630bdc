/**
 * The query log: who ran what, when, for how long, with how many rows, and what each source
 * was asked. Kept in memory with bounded retention (entries and age) and shown as the system
 * table SYSLOG.QueryLog.
 */
import { redactSecrets } from '../security/redact.js';

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

export class QueryLog {
  private entries: QueryLogEntry[] = [];
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
        start: new Date(started).toISOString(),
        durationMs: this.now() - started,
        ...outcome,
      };
      this.entries.push(entry);
      this.trim();
      this.options.onRecord?.(entry);
    };
  }

  private trim(): void {
    const oldest = this.now() - this.options.maxAgeMs;
    const firstKept = this.entries.findIndex((e) => Date.parse(e.start) >= oldest);
    if (firstKept > 0) this.entries = this.entries.slice(firstKept);
    else if (firstKept < 0) this.entries = [];
    if (this.entries.length > this.options.maxEntries) this.entries = this.entries.slice(-this.options.maxEntries);
  }

  list(): readonly QueryLogEntry[] {
    this.trim();
    return this.entries;
  }
}
