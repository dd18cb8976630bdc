import Database from 'better-sqlite3';
import type { ColumnDef, SourceDef, TableDef } from '../../catalog/types.js';
import { confineDatabaseFile } from '../files/paths.js';
import { NO_PUSHDOWN, type ScanPushdown } from '../types.js';
import { SqlScanPushdown } from '../sql/scan-pushdown.js';
import type {
  Capabilities,
  ImportedTable,
  RawType,
  RowConnector,
  ScanRequest,
  SourceTransaction,
  SourceWriter,
  StatementColumn,
} from '../types.js';
import { orderAndLimit } from '../scan-sql.js';
import { SQLITE_DIALECT } from './dialect.js';
import { engineTypeOfSqlite, rawTypeOf, ROWID_ALIAS, STRICT_SUFFIX, storedClassCertain } from './types.js';

const BATCH_ROWS = 2048;

/** Prepared SELECTs kept per SQLite source. */
const MAX_PREPARED = 200;

/** A STRICT table: the keyword after its column list (with or without WITHOUT ROWID). */
const isStrict = (sql: string): boolean => /\bSTRICT\b/i.test(sql.slice(sql.lastIndexOf(')') + 1));

/** The declared types a STRICT table keeps its values in (ANY keeps any class). */
const STRICT_TYPES = /^(INT|INTEGER|REAL|TEXT)$/i;

/**
 * The column that is the table's rowid alias: the only primary key column, declared exactly
 * INTEGER, in a table with rowids. A descending key may not be one (SQLite's quirk): not taken.
 */
function rowidAlias(info: readonly TableInfoRow[], sql: string): string | null {
  const keys = info.filter((col) => col.pk > 0);
  if (keys.length !== 1 || keys[0]!.type.trim().toUpperCase() !== 'INTEGER') return null;
  if (/WITHOUT\s+ROWID/i.test(sql) || /\bDESC\b/i.test(sql)) return null;
  return keys[0]!.name;
}

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
  readonly writer: SourceWriter = this;
  readonly kind = 'sqlite' as const;
  readonly delivery = 'rows' as const;
  readonly dialect = SQLITE_DIALECT;
  /** Quotes an identifier for this source (its dialect's rule). */
  private readonly quote = (name: string) => this.dialect.quoteIdentifier(name);
  /** Answers the planners' offers from the capabilities and the dialect (connectors/sql/scan-pushdown.ts). */
  readonly pushdown: ScanPushdown = new SqlScanPushdown(this);
  readonly capabilities: Capabilities = { ...NO_PUSHDOWN, projection: true, filters: true, limit: true, orderBy: true, joins: true };
  private db: Database.Database | null = null;
  /** Prepared SELECTs by text, least recently used first: a statement asked again is not compiled again. */
  private readonly statements = new Map<string, Database.Statement>();
  /** The end of the last write queued (`queued`). */
  private writes: Promise<unknown> = Promise.resolve();

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
    // Like every file source, a SQLite file must lie inside the configured file roots (the roots
    // first: a path outside them gets one answer, whatever is there). The real path checked is the one opened.
    const real = confineDatabaseFile(this.path, this.roots, 'SQLite');
    this.db = new Database(real, { readonly: this.source.readOnly, fileMustExist: true });
    this.statements.clear();
    return this.db;
  }

  async healthCheck(): Promise<void> {
    this.open().prepare('SELECT 1').get();
  }

  async importMetadata(): Promise<ImportedTable[]> {
    const db = this.open();
    const objects = db
      .prepare(
        `SELECT name, type, sql FROM sqlite_master
         WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
         ORDER BY name`,
      )
      .all() as Array<{ name: string; type: 'table' | 'view'; sql: string | null }>;
    const estimates = this.rowEstimates(db);
    const distinct = this.distinctEstimates(db);
    return objects.map(({ name, type, sql }) => {
      const info = db.prepare(`PRAGMA table_info(${this.quote(name)})`).all() as TableInfoRow[];
      const rowid = type === 'table' ? rowidAlias(info, sql ?? '') : null;
      const strict = type === 'table' && isStrict(sql ?? '');
      const declared = (col: TableInfoRow) =>
        col.name === rowid ? ROWID_ALIAS : strict && STRICT_TYPES.test(col.type.trim()) ? `${col.type.trim()}${STRICT_SUFFIX}` : col.type;
      const columns: ColumnDef[] = info.map((col) => ({
        name: col.name,
        nameInSource: col.name,
        type: engineTypeOfSqlite(col.type),
        sourceType: declared(col),
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
   * engine cannot take as a number, or a REAL, which it rounds. Only where SQLite fixes the
   * storage class (types.ts: storedClassCertain) do the values arrive as the engine takes them.
   */
  castMayFail(column: ColumnDef): boolean {
    return !storedClassCertain(column);
  }

  scanSql(request: ScanRequest): string {
    // Partial aggregates are not among its capabilities: a request for them fails rather than answering plain rows.
    if (request.aggregates) throw new Error(`SQLite source "${this.source.name}" computes no partial aggregates`);
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
    const rows = this.prepared(db, sql).raw(true).safeIntegers(true).iterate() as IterableIterator<unknown[]>;
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

  /**
   * The prepared statement of `sql`, from the cache (bounded, least recently used dropped). One
   * still being read by another request is busy: then a fresh one, not cached.
   */
  private prepared(db: Database.Database, sql: string): Database.Statement {
    const cached = this.statements.get(sql);
    if (cached?.busy) return db.prepare(sql);
    if (cached) {
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    const statement = db.prepare(sql);
    if (this.statements.size >= MAX_PREPARED) this.statements.delete(this.statements.keys().next().value!);
    this.statements.set(sql, statement);
    return statement;
  }

  async executeWrite(sql: string): Promise<number> {
    return this.queued(async () => this.open().prepare(sql).run().changes);
  }

  /**
   * Runs `work` after every write of this connector queued before it: the writes of the one
   * connection never land inside another's transaction.
   */
  private queued<T>(work: () => Promise<T>): Promise<T> {
    const result = this.writes.then(work, work);
    this.writes = result.catch(() => undefined);
    return result;
  }

  /**
   * Runs `work` in one transaction: BEGIN IMMEDIATE takes the database's write lock (other
   * processes wait), and this connector's other writes wait their turn; reads go on, and the
   * engine's reads of this source (on the same connection) see the transaction's rows.
   */
  async inTransaction<T>(signal: AbortSignal, work: (transaction: SourceTransaction) => Promise<T>): Promise<T> {
    return this.queued(async () => {
      const db = this.open();
      signal.throwIfAborted();
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await work({
          excludesWriters: true,
          lockRows: async () => undefined,
          execute: async (sql) => db.prepare(sql).run().changes,
        });
        db.exec('COMMIT');
        return result;
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  /** Inserts text values (SQLite converts them by column affinity) in one transaction. */
  async insertRows(
    table: TableDef,
    columns: readonly ColumnDef[],
    batches: AsyncIterable<Array<string | null>[]>,
    signal: AbortSignal,
  ): Promise<number> {
    return this.queued(() => this.insertQueued(table, columns, batches, signal));
  }

  private async insertQueued(
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
    this.statements.clear();
    this.db?.close();
    this.db = null;
  }
}

export type { TableDef };
