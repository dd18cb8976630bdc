/**
 * The audit log and the query log written to the catalog database, so that the record of every
 * instance is in one place. Entries are queued and written in batches off the request path; a
 * batch that cannot be written waits for the database (the queue is bounded: the oldest entries
 * go first, with a warning). Retention follows queryLog.maxEntries and queryLog.maxAgeMs.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { messageOf } from '../errors.js';
import type { AuditEntry } from './audit-log.js';
import { checkout, quoteIdent } from './postgres-schema.js';
import type { QueryLogEntry } from './query-log.js';

const FLUSH_MS = 200;

interface QueryRow {
  id: string;
  user_name: string;
  statement: string;
  start: Date;
  duration_ms: string;
  rows: string | null;
  status: string;
  error: string | null;
  source_queries: string | null;
  narrowed: boolean;
  sources: string[];
}

interface AuditRow {
  id: string;
  time: Date;
  user_name: string | null;
  action: string;
  target: string | null;
  outcome: string;
  address: string | null;
}
const MAX_QUEUED = 10_000;

export interface LogRetention {
  maxEntries: number;
  maxAgeMs: number;
}

export class PostgresLogWriter {
  private audits: AuditEntry[] = [];
  private queries: QueryLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;
  private readonly s: string;

  constructor(
    private readonly pool: pg.Pool,
    schema: string,
    private readonly instance: string,
    private readonly retention: LogRetention,
    private readonly log: Logger,
  ) {
    this.s = quoteIdent(schema);
  }

  audit(entry: AuditEntry): void {
    this.audits.push(entry);
    this.queued();
  }

  query(entry: QueryLogEntry): void {
    this.queries.push(entry);
    this.queued();
  }

  private queued(): void {
    const excess = this.audits.length + this.queries.length - MAX_QUEUED;
    if (excess > 0) {
      this.dropped += excess;
      this.queries.splice(0, Math.min(excess, this.queries.length));
      this.audits.splice(0, Math.max(0, this.audits.length + this.queries.length - MAX_QUEUED));
    }
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flushing = this.flushing.then(() => this.flush());
      }, FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes what is queued; on failure it stays queued for the next attempt. */
  private async flush(): Promise<void> {
    const audits = this.audits;
    const queries = this.queries;
    if (audits.length === 0 && queries.length === 0) return;
    this.audits = [];
    this.queries = [];
    try {
      await this.write(audits, queries);
      if (this.dropped > 0) {
        this.log.warn({ dropped: this.dropped }, 'log entries dropped while the catalog database could not be written');
        this.dropped = 0;
      }
    } catch (err) {
      this.log.warn({ err: messageOf(err) }, 'audit and query log entries not written to the catalog database yet');
      this.audits = [...audits, ...this.audits];
      this.queries = [...queries, ...this.queries];
      this.queued();
    }
  }

  private async write(audits: AuditEntry[], queries: QueryLogEntry[]): Promise<void> {
    const client = await checkout(this.pool);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      if (audits.length > 0) {
        await client.query(
          `INSERT INTO ${this.s}.audit_log (time, user_name, action, target, outcome, address, instance)
           SELECT e.time, e.user_name, e.action, e.target, e.outcome, e.address, $2
           FROM json_to_recordset($1::json) AS e(time timestamptz, user_name text, action text, target text, outcome text, address text)`,
          [
            JSON.stringify(
              audits.map((a) => ({
                time: a.time,
                user_name: a.user,
                action: a.action,
                target: a.target,
                outcome: a.outcome,
                address: a.address,
              })),
            ),
            this.instance,
          ],
        );
        await client.query(`DELETE FROM ${this.s}.audit_log WHERE id <= (SELECT max(id) FROM ${this.s}.audit_log) - $1`, [
          this.retention.maxEntries,
        ]);
      }
      if (queries.length > 0) {
        await client.query(
          `INSERT INTO ${this.s}.query_log (user_name, statement, start, duration_ms, rows, status, error, source_queries, narrowed, sources, instance)
           SELECT e.user_name, e.statement, e.start, e.duration_ms, e.rows, e.status, e.error, e.source_queries, e.narrowed,
                  ARRAY(SELECT json_array_elements_text(e.sources)), $2
           FROM json_to_recordset($1::json) AS e(user_name text, statement text, start timestamptz, duration_ms bigint, rows bigint,
                status text, error text, source_queries text, narrowed boolean, sources json)`,
          [
            JSON.stringify(
              queries.map((q) => ({
                user_name: q.user,
                statement: q.statement,
                start: q.start,
                duration_ms: q.durationMs,
                rows: q.rows,
                status: q.status,
                error: q.error,
                source_queries: q.sourceQueries,
                narrowed: q.narrowed === true,
                sources: q.sources ?? [],
              })),
            ),
            this.instance,
          ],
        );
        await client.query(
          `DELETE FROM ${this.s}.query_log WHERE start < now() - make_interval(secs => $1) OR id <= (SELECT max(id) FROM ${this.s}.query_log) - $2`,
          [this.retention.maxAgeMs / 1000, this.retention.maxEntries],
        );
      }
      await client.query('COMMIT');
    } catch (err) {
      broken = err as Error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.done(broken);
    }
  }

  /**
   * The latest entries of every instance, newest last as in the process's own logs, for
   * SYSLOG.QueryLog and SYSLOG.AuditLog. What this instance queued is written first, so a
   * statement just run is there.
   */
  async recent(limit: number): Promise<{ queries: QueryLogEntry[]; audits: AuditEntry[] }> {
    this.flushing = this.flushing.then(() => this.flush());
    await this.flushing;
    const client = await checkout(this.pool);
    let broken: Error | undefined;
    try {
      const queries = await client.query<QueryRow>(
        `SELECT id, user_name, statement, start, duration_ms, rows, status, error, source_queries, narrowed, sources
         FROM ${this.s}.query_log ORDER BY id DESC LIMIT $1`,
        [limit],
      );
      const audits = await client.query<AuditRow>(
        `SELECT id, time, user_name, action, target, outcome, address FROM ${this.s}.audit_log ORDER BY id DESC LIMIT $1`,
        [limit],
      );
      return {
        queries: queries.rows.reverse().map((row) => ({
          id: Number(row.id),
          user: row.user_name,
          statement: row.statement,
          start: row.start.toISOString(),
          durationMs: Number(row.duration_ms),
          rows: row.rows === null ? null : Number(row.rows),
          status: row.status as QueryLogEntry['status'],
          error: row.error,
          sourceQueries: row.source_queries,
          narrowed: row.narrowed,
          sources: row.sources,
        })),
        audits: audits.rows.reverse().map((row) => ({
          id: Number(row.id),
          time: row.time.toISOString(),
          user: row.user_name,
          action: row.action,
          target: row.target,
          outcome: row.outcome as AuditEntry['outcome'],
          address: row.address,
        })),
      };
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      client.done(broken);
    }
  }

  /** Writes what is still queued (at shutdown); gives up quietly when the database is away. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
    await this.flush().catch(() => undefined);
    if (this.timer) clearTimeout(this.timer);
  }
}
