import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ColumnDef, SourceDef, TableDef } from '../../catalog/types.js';
import { confineFolder } from '../files/paths.js';
import { NO_PUSHDOWN, SourceUnreachableError } from '../types.js';
import type { Capabilities, ImportedTable, RawType, RowConnector, ScanRequest, StatementColumn } from '../types.js';
import { orderAndLimit } from '../scan-sql.js';
import { SQLITE_DIALECT } from './dialect.js';
import { engineTypeOfSqlite, rawTypeOf } from './types.js';

const BATCH_ROWS = 2048;

/** SQLite identifiers are quoted like PostgreSQL's: double quotes, doubled inside. */

interface TableInfoRow {
  cid: number;
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

/**
 * A SQLite database file, read with better-sqlite3. The file is opened read-only unless the
 * source is writable, and must exist: a missing file is an unreachable source, not a new one.
 */
export class SqliteConnector implements RowConnector {
  readonly kind = 'sqlite' as const;
  readonly delivery = 'rows' as const;
  readonly dialect = SQLITE_DIALECT;
  /** Quotes an identifier for this source (its dialect's rule). */
  private readonly quote = (name: string) => this.dialect.quoteIdentifier(name);
  readonly capabilities: Capabilities = { ...NO_PUSHDOWN, projection: true, filters: true, limit: true, orderBy: true, joins: true };
  private db: Database.Database | null = null;

  constructor(
    readonly source: SourceDef,
    /** Folders SQLite files may live in (the configured file roots). */
    private readonly roots: readonly string[],
  ) {}

  private get path(): string {
    const file = this.source.connection.path;
    if (!file) throw new Error(`SQLite source "${this.source.name}" has no path`);
    return file;
  }

  private open(): Database.Database {
    if (this.db?.open) return this.db;
    if (!fs.existsSync(this.path)) throw new SourceUnreachableError(`SQLite file not found: ${this.path}`);
    // Like every file source, a SQLite file must lie inside the configured file roots.
    try {
      confineFolder(path.dirname(fs.realpathSync(this.path)), this.roots);
    } catch (err) {
      throw new SourceUnreachableError(err instanceof Error ? err.message : String(err));
    }
    this.db = new Database(this.path, { readonly: this.source.readOnly, fileMustExist: true });
    return this.db;
  }

  async healthCheck(): Promise<void> {
    this.open().prepare('SELECT 1').get();
  }

  async importMetadata(): Promise<ImportedTable[]> {
    const db = this.open();
    const objects = db
      .prepare(
        `SELECT name, type FROM sqlite_master
         WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
         ORDER BY name`,
      )
      .all() as Array<{ name: string; type: 'table' | 'view' }>;
    const estimates = this.rowEstimates(db);
    const distinct = this.distinctEstimates(db);
    return objects.map(({ name, type }) => {
      const info = db.prepare(`PRAGMA table_info(${this.quote(name)})`).all() as TableInfoRow[];
      const columns: ColumnDef[] = info.map((col) => ({
        name: col.name,
        nameInSource: col.name,
        type: engineTypeOfSqlite(col.type),
        sourceType: col.type,
        nullable: col.notnull === 0 && col.pk === 0,
        position: col.cid + 1,
        ...(distinct.has(`${name}\u0000${col.name}`) ? { distinct: distinct.get(`${name}\u0000${col.name}`) } : {}),
      }));
      const primaryKey = info
        .filter((col) => col.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((col) => col.name);
      return {
        name,
        nameInSource: name,
        sourceName: { table: name },
        kind: type === 'view' ? 'View' : 'Table',
        columns,
        primaryKey,
        cardinality: estimates.get(name) ?? null,
        description: null,
      };
    });
  }

  /** Row counts from sqlite_stat1 (written by ANALYZE); never count(*). */
  private rowEstimates(db: Database.Database): Map<string, number> {
    const estimates = new Map<string, number>();
    const hasStats = db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'`).get();
    if (!hasStats) return estimates;
    const rows = db.prepare('SELECT tbl, stat FROM sqlite_stat1').all() as Array<{ tbl: string; stat: string }>;
    for (const { tbl, stat } of rows) {
      const count = Number.parseInt(stat.split(' ')[0] ?? '', 10);
      if (Number.isFinite(count)) estimates.set(tbl, Math.max(estimates.get(tbl) ?? 0, count));
    }
    return estimates;
  }

  /**
   * Distinct values of columns that lead an index, from sqlite_stat1 (written by ANALYZE): its
   * `stat` is the row count, then the average rows per distinct value of the first column, ...
   */
  private distinctEstimates(db: Database.Database): Map<string, number> {
    const estimates = new Map<string, number>();
    const hasStats = db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'`).get();
    if (!hasStats) return estimates;
    const rows = db.prepare('SELECT tbl, idx, stat FROM sqlite_stat1 WHERE idx IS NOT NULL').all() as Array<{
      tbl: string;
      idx: string;
      stat: string;
    }>;
    for (const { tbl, idx, stat } of rows) {
      const [count, perValue] = stat.split(' ').map((n) => Number.parseInt(n, 10));
      const first = db.prepare(`PRAGMA index_info(${this.quote(idx)})`).all() as Array<{ seqno: number; name: string | null }>;
      const column = first.find((c) => c.seqno === 0)?.name;
      if (column && Number.isFinite(count) && perValue && Number.isFinite(perValue))
        estimates.set(`${tbl}\u0000${column}`, Math.max(1, Math.round(count! / perValue)));
    }
    return estimates;
  }

  rawType(column: ColumnDef): RawType {
    return rawTypeOf(column.type);
  }

  /**
   * SQLite types values per value, not per column: an INTEGER column may hold text, which the
   * engine cannot take as a number. Only columns of TEXT affinity compare as text there; an
   * untyped column may hold numbers, which SQLite does not compare with text.
   */
  castMayFail(column: ColumnDef): boolean {
    return !(column.type === 'VARCHAR' && /CHAR|CLOB|TEXT/i.test(column.sourceType ?? ''));
  }

  scanSql(request: ScanRequest): string {
    const list = request.columns.map((c) => this.quote(c.nameInSource)).join(', ') || 'NULL';
    const where = request.filter ? ` WHERE ${request.filter}` : '';
    return `SELECT ${list} FROM ${this.dialect.tableSql(request.table)}${where}${orderAndLimit(request, this.quote, 'COLLATE BINARY')}`;
  }

  async *scan(request: ScanRequest): AsyncIterable<unknown[][]> {
    yield* this.statementRows(this.scanSql(request), [], request.signal);
  }

  /** The rows of any SELECT in SQLite's dialect, as SQLite stores them, in batches. */
  async *statementRows(sql: string, _columns: readonly StatementColumn[], signal: AbortSignal): AsyncIterable<unknown[][]> {
    const db = this.open();
    // safeIntegers: 64-bit integers arrive as bigint, so no digit is lost on the way.
    const rows = db.prepare(sql).raw(true).safeIntegers(true).iterate() as IterableIterator<unknown[]>;
    try {
      let batch: unknown[][] = [];
      for (const row of rows) {
        batch.push(row);
        if (batch.length >= BATCH_ROWS) {
          if (signal.aborted) return;
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0 && !signal.aborted) yield batch;
    } finally {
      rows.return?.();
    }
  }

  async executeWrite(sql: string): Promise<number> {
    return this.open().prepare(sql).run().changes;
  }

  /** Inserts text values (SQLite converts them by column affinity) in one transaction. */
  async insertRows(
    table: TableDef,
    columns: readonly ColumnDef[],
    batches: AsyncIterable<Array<string | null>[]>,
    signal: AbortSignal,
  ): Promise<number> {
    const db = this.open();
    const insert = db.prepare(
      `INSERT INTO ${this.dialect.tableSql(table)} (${columns.map((c) => this.quote(c.nameInSource)).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    );
    const insertBatch = db.transaction((rows: Array<string | null>[]) => {
      for (const row of rows) insert.run(row);
    });
    // One transaction for the whole statement; each batch is a savepoint inside it.
    let count = 0;
    db.exec('BEGIN');
    try {
      for await (const batch of batches) {
        signal.throwIfAborted();
        insertBatch(batch);
        count += batch.length;
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
    return count;
  }

  async close(): Promise<void> {
    this.db?.close();
    this.db = null;
  }
}

export type { TableDef };
