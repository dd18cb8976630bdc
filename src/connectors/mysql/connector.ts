import mysql from 'mysql2';
import type { FieldPacket, Pool, PoolConnection, RowDataPacket } from 'mysql2';
import type { ColumnDef, SourceDef, TableDef } from '../../catalog/types.js';
import { ApiError, badRequest } from '../../errors.js';
import { DEFAULT_POOL_WAIT_MS, PoolGate, type Pooling } from '../pool-gate.js';
import { NO_PUSHDOWN, SourceUnreachableError, type ScanPushdown } from '../types.js';
import { SqlScanPushdown } from '../sql/scan-pushdown.js';
import { CANCEL_GRACE_MS, ConnectionLostError, guardErrors, NEVER, untilAborted, withinMs } from '../abort.js';
import { leaseConnection, type Lease, type PooledDriver } from '../lease.js';
import type {
  Capabilities,
  ImportedTable,
  RawType,
  ProcedureConnector,
  RowConnector,
  ScanRequest,
  SourceTransaction,
  SourceWriter,
  StatementColumn,
} from '../types.js';
import { aggregateSelect, orderAndLimit } from '../scan-sql.js';
import { MYSQL_DIALECT } from './dialect.js';
import { engineTypeOfMysql, rawTypeOfMysql } from './types.js';
import { MysqlProcedures } from './procedures.js';

const BATCH_ROWS = 2048;

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ECONNRESET',
  'PROTOCOL_CONNECTION_LOST',
  'ER_ACCESS_DENIED_ERROR',
  'ER_BAD_DB_ERROR',
  'ER_CON_COUNT_ERROR',
]);

/** The session of a statement written in PostgreSQL's spelling: double quotes for names, || to concatenate, backslashes as they are. */
const POSTGRES_SPELLING = "SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, ',ANSI_QUOTES,PIPES_AS_CONCAT,NO_BACKSLASH_ESCAPES')";

function toSourceError(err: unknown): Error {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  return code && UNREACHABLE.has(code) ? new SourceUnreachableError(message) : err instanceof Error ? err : new Error(message);
}

/** The session ended under a statement: the server went away, killed the connection, or the socket failed. */
const LOST = new Set(['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ER_CONNECTION_KILLED', 'ER_SERVER_SHUTDOWN']);

/** A failure of a statement on a connection that was had: a lost connection says so (502), others as they are. */
function statementError(err: unknown, lost: Error | null): Error {
  const code = (err as { code?: string }).code ?? '';
  const fatal = (err as { fatal?: boolean }).fatal === true;
  if (lost || LOST.has(code) || fatal) return new ConnectionLostError(err instanceof Error ? err.message : String(err));
  return toSourceError(err);
}

/**
 * Closes a connection at once. The driver's own destroy() only half-closes its socket: a server
 * still writing rows to it (a paused reader) would sit in "Writing to net" for minutes.
 */
function destroyConnection(connection: mysql.Connection): void {
  connection.destroy();
  (connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
}

/** A pooled connection had for one piece of work. */

const STRING_TYPES = new Set(['BLOB', 'TINY_BLOB', 'MEDIUM_BLOB', 'LONG_BLOB', 'VAR_STRING', 'STRING']);

/** Every value as text (or bytes for binary columns): no per-value conversion in the driver. */
const asText: mysql.TypeCast = (field, next) => {
  // The driver's own reading of strings: text for character sets, bytes for binary ones.
  if (STRING_TYPES.has(field.type)) return next();
  if (field.type === 'BIT') {
    // BIT(n) arrives as big-endian bytes; the engine gets its number.
    const bytes = field.buffer();
    return bytes === null ? null : bytes.reduce((n, byte) => (n << 8n) | BigInt(byte), 0n).toString();
  }
  if (field.type === 'GEOMETRY') return next();
  return field.string();
};

/** Batches waiting for the reader at most before the connection stops reading from the socket. */
const READY_BATCHES = 4;

/**
 * The rows of a query in batches of BATCH_ROWS, from the driver's row events (its object stream
 * costs twice the time per row with a type cast), the socket paused while the reader is behind.
 */
async function* rowBatches(connection: PoolConnection, options: mysql.QueryOptions, stopped: AbortSignal): AsyncGenerator<unknown[][]> {
  const ready: unknown[][][] = [];
  let batch: unknown[][] = [];
  let ended = false;
  let failure: unknown = null;
  let paused = false;
  let wake: (() => void) | null = null;
  // The driver reports a lost connection on the connection, not on its streaming query; a
  // cancelled statement ends here at once, whatever the server does.
  const stop = () => {
    failure ??= stopped.reason ?? new Error('stopped');
    wake?.();
  };
  if (stopped.aborted) throw stopped.reason;
  stopped.addEventListener('abort', stop, { once: true });
  const query = connection.query(options);
  query.on('result', (row) => {
    batch.push(row as unknown as unknown[]);
    if (batch.length < BATCH_ROWS) return;
    ready.push(batch);
    batch = [];
    if (ready.length >= READY_BATCHES && !paused) {
      paused = true;
      connection.pause();
    }
    wake?.();
  });
  query.on('error', (err) => {
    failure ??= err;
    wake?.();
  });
  query.on('end', () => {
    ended = true;
    wake?.();
  });
  try {
    for (;;) {
      if (failure) throw failure;
      const next = ready.shift() ?? (ended && batch.length > 0 ? batch.splice(0) : undefined);
      if (next) {
        if (paused && ready.length < READY_BATCHES / 2) {
          paused = false;
          connection.resume();
        }
        yield next;
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
  } finally {
    stopped.removeEventListener('abort', stop);
  }
}

/**
 * A MySQL or MariaDB database (one connector: same protocol, same SQL for what we send).
 * Tables of the connection's database are named as they are; other databases
 * (importer.schemaPattern) as `database.table`.
 */
export class MysqlConnector implements RowConnector {
  readonly writer: SourceWriter = this;
  /** Its stored procedures (procedures.ts). */
  readonly procedures: ProcedureConnector = new MysqlProcedures({
    acquire: (signal) => this.acquire(signal),
    query: (sql, values) => this.query<RowDataPacket[]>(sql, values),
    patterns: () => this.importPatterns(),
    database: () => this.database,
    model: () => this.source.model,
    quote: (name) => this.quote(name),
    statementError: (err, lease) => statementError(err, lease.lost),
  });
  readonly kind = 'mysql' as const;
  readonly delivery = 'rows' as const;
  readonly dialect = MYSQL_DIALECT;
  /** Quotes an identifier for this source (its dialect's rule). */
  private readonly quote = (name: string) => this.dialect.quoteIdentifier(name);
  /** Answers the planners' offers from the capabilities and the dialect (connectors/sql/scan-pushdown.ts). */
  readonly pushdown: ScanPushdown = new SqlScanPushdown(this);
  readonly capabilities: Capabilities = {
    ...NO_PUSHDOWN,
    projection: true,
    filters: true,
    aggregates: true,
    limit: true,
    orderBy: true,
    joins: true,
  };
  private readonly pool: Pool;
  /** The pool's turns: a statement that finds every connection in use waits, then is told the source is busy. */
  private readonly gate: PoolGate;
  private readonly pooling: Pooling;
  /** How long a connect may take. */
  private readonly connectTimeoutMs: number;
  /** Where the server is and who signs in: for the connections that kill statements. */
  private readonly endpoint: { host: string; port: number; user: string | undefined; password: string | undefined };

  constructor(
    readonly source: SourceDef,
    password: string | undefined,
    /** The configured default (connectTimeoutMs); the source's own connectTimeoutMs wins. */
    connectTimeoutMs = 10_000,
    pooling: Pooling = {},
  ) {
    const c = source.connection;
    this.connectTimeoutMs = Number(source.model.connectTimeoutMs ?? connectTimeoutMs);
    const max = Number(source.model.maxConnections ?? 10);
    this.endpoint = {
      host: c.host ?? '127.0.0.1',
      port: c.port ? Number(c.port) : 3306,
      user: c['user-name'] ?? c.user,
      password,
    };
    this.pool = mysql.createPool({
      ...this.endpoint,
      database: c.db ?? c.database,
      connectionLimit: max,
      connectTimeout: this.connectTimeoutMs,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
      // JSON documents as their text: parsing them in JS would round big numbers.
      jsonStrings: true,
      timezone: 'Z',
      charset: 'utf8mb4',
    });
    // TIMESTAMP values are shown in the session's time zone: UTC, as the engine shows them.
    this.pool.on('connection', (connection) => {
      guardErrors(connection);
      connection.query("SET time_zone = '+00:00'");
    });
    const waitMs = Number(source.model.poolWaitMs ?? pooling.waitMs ?? DEFAULT_POOL_WAIT_MS);
    const idle = (this.pool as unknown as { _freeConnections?: { length: number } })._freeConnections;
    this.gate = new PoolGate(source.name, max, waitMs, () => idle?.length ?? 0);
    this.pooling = pooling;
    pooling.gates?.add(this.gate);
  }

  private get database(): string {
    return this.source.connection.db ?? this.source.connection.database ?? '';
  }

  private async query<T extends RowDataPacket[]>(sql: string, values: unknown[] = []): Promise<T> {
    try {
      const [rows] = await this.gate.within(NEVER, () => this.pool.promise().query<T>(sql, values));
      return rows;
    } catch (err) {
      throw toSourceError(err);
    }
  }

  async healthCheck(): Promise<void> {
    // A server that accepts connections but never answers is not healthy: bounded as a connect is.
    const signal = AbortSignal.timeout(this.connectTimeoutMs);
    try {
      await this.withConnection(signal, (connection) => connection.promise().query('SELECT 1'));
    } catch (err) {
      // Busy (every connection in use) is not away.
      if (err instanceof ApiError) throw err;
      if (signal.aborted) throw new SourceUnreachableError(`no answer within the connect timeout (${this.connectTimeoutMs} ms)`);
      throw err instanceof ConnectionLostError ? new SourceUnreachableError(err.message) : err;
    }
  }

  async importMetadata(): Promise<ImportedTable[]> {
    const patterns = this.importPatterns();
    const where = patterns.map(() => 'c.TABLE_SCHEMA LIKE ?').join(' OR ');
    const rows = await this.query<RowDataPacket[]>(
      `SELECT c.TABLE_SCHEMA AS db, c.TABLE_NAME AS name, t.TABLE_TYPE AS kind, t.TABLE_ROWS AS estimate,
              t.TABLE_COMMENT AS description, c.COLUMN_NAME AS col, c.COLUMN_TYPE AS type,
              c.IS_NULLABLE AS nullable, c.ORDINAL_POSITION AS position, c.COLUMN_KEY AS col_key,
              c.COLUMN_COMMENT AS col_description
         FROM information_schema.COLUMNS c
         JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
        WHERE ${where}
        ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION`,
      patterns,
    );
    const jsonColumns = await this.jsonColumns(patterns);
    const keyRows = await this.query<RowDataPacket[]>(
      `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS name, COLUMN_NAME AS col FROM information_schema.KEY_COLUMN_USAGE
        WHERE CONSTRAINT_NAME = 'PRIMARY' AND (${patterns.map(() => 'TABLE_SCHEMA LIKE ?').join(' OR ')})
        ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
      patterns,
    );
    const statistics = await this.columnStatistics(patterns);
    const importedDatabases = new Set(rows.map((row) => String(row.db)));
    const booleans = !/^(false|0|no)$/i.test(this.source.model['importer.tinyint1AsBoolean'] ?? '');
    const tables = new Map<string, ImportedTable>();
    for (const row of rows) {
      const key = `${row.db}.${row.name}`;
      let table = tables.get(key);
      if (!table) {
        table = this.importedTable(row, importedDatabases.size);
        tables.set(key, table);
      }
      const type = jsonColumns.has(`${row.db}.${row.name}.${row.col}`) ? 'JSON' : engineTypeOfMysql(String(row.type), booleans);
      const column: ColumnDef = {
        name: String(row.col),
        nameInSource: String(row.col),
        type,
        // What a text column is declared as (char, text, enum...): which functions the source computes as the engine does.
        ...(type === 'VARCHAR' ? { sourceType: String(row.type).toLowerCase() } : {}),
        nullable: row.nullable === 'YES',
        position: Number(row.position),
        description: row.col_description ? String(row.col_description) : null,
        ...statistics(`${row.db}.${row.name}.${row.col}`, table.cardinality),
      };
      table.columns.push(column);
    }
    for (const key of keyRows) tables.get(`${key.db}.${key.name}`)?.primaryKey.push(String(key.col));
    return [...tables.values()];
  }

  /** The databases to import (`importer.schemaPattern`, else the connection's database), as LIKE patterns. */
  private importPatterns(): string[] {
    const patterns = (this.source.model['importer.schemaPattern'] ?? this.database)
      .split(/[;|]/)
      .map((s) => s.trim())
      .filter(Boolean);
    if (patterns.length === 0) {
      throw badRequest(
        `MySQL source "${this.source.name}" names no database.`,
        'Give db in connectionProps, or importer.schemaPattern in modelProps.',
      );
    }
    return patterns;
  }

  /** A table of the import, without its columns yet. */
  private importedTable(row: RowDataPacket, databases: number): ImportedTable {
    // Bare names when one database is imported; else the connection's bare, others qualified.
    const isDefault = row.db === this.database || databases === 1;
    return {
      name: isDefault ? String(row.name) : `${row.db}.${row.name}`,
      nameInSource: `${this.quote(String(row.db))}.${this.quote(String(row.name))}`,
      sourceName: { schema: String(row.db), table: String(row.name) },
      kind: String(row.kind).includes('VIEW') ? 'View' : 'Table',
      columns: [],
      primaryKey: [],
      // InnoDB's TABLE_ROWS is an estimate from its statistics; views have none.
      cardinality: row.estimate === null || String(row.kind).includes('VIEW') ? null : Number(row.estimate),
      description: row.description ? String(row.description) : null,
    };
  }

  /** `db.table.column` of the JSON columns: MariaDB declares JSON as LONGTEXT with a json_valid() check. */
  private async jsonColumns(patterns: string[]): Promise<Set<string>> {
    const jsonChecks = await this.query<RowDataPacket[]>(
      `SELECT CONSTRAINT_SCHEMA AS db, TABLE_NAME AS name, CHECK_CLAUSE AS clause FROM information_schema.CHECK_CONSTRAINTS
        WHERE ${patterns.map(() => 'CONSTRAINT_SCHEMA LIKE ?').join(' OR ')}`,
      patterns,
    ).catch(() => [] as RowDataPacket[]);
    return new Set(
      jsonChecks.flatMap((c) => {
        const m = /^json_valid\(`([^`]+)`\)$/i.exec(String(c.clause).trim());
        return m ? [`${c.db}.${c.name}.${m[1]}`] : [];
      }),
    );
  }

  /** The statistics of each column (`db.table.column`): distinct values and the share of NULLs, where the server keeps them. */
  private async columnStatistics(
    patterns: string[],
  ): Promise<(key: string, rows: number | null) => Pick<ColumnDef, 'distinct' | 'nullFraction'>> {
    // Distinct values of a column that leads an index (its cardinality, from the index statistics).
    const cardinalities = await this.query<RowDataPacket[]>(
      `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS name, COLUMN_NAME AS col, MAX(CARDINALITY) AS card FROM information_schema.STATISTICS
        WHERE SEQ_IN_INDEX = 1 AND CARDINALITY IS NOT NULL AND (${patterns.map(() => 'TABLE_SCHEMA LIKE ?').join(' OR ')})
        GROUP BY TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME`,
      patterns,
    ).catch(() => [] as RowDataPacket[]);
    const distinct = new Map(cardinalities.map((c) => [`${c.db}.${c.name}.${c.col}`, Number(c.card)]));
    // MariaDB's engine-independent statistics (ANALYZE TABLE ... PERSISTENT FOR ...), where kept and
    // readable: NULLs per column, and rows per distinct value for columns no index leads.
    const columnStats = await this.query<RowDataPacket[]>(
      `SELECT db_name AS db, table_name AS name, column_name AS col, nulls_ratio AS nulls, avg_frequency AS frequency FROM mysql.column_stats
        WHERE ${patterns.map(() => 'db_name LIKE ?').join(' OR ')}`,
      patterns,
    ).catch(() => [] as RowDataPacket[]);
    const nullFractions = new Map<string, number>();
    const frequencies = new Map<string, number>();
    for (const c of columnStats) {
      const key = `${c.db}.${c.name}.${c.col}`;
      if (c.nulls !== null && Number.isFinite(Number(c.nulls))) nullFractions.set(key, Number(c.nulls));
      if (c.frequency !== null && Number(c.frequency) > 0) frequencies.set(key, Number(c.frequency));
    }
    return (key, rows) => {
      const nulls = nullFractions.get(key);
      const frequency = frequencies.get(key);
      const fromFrequency =
        frequency !== undefined && rows !== null && rows > 0 ? Math.max(1, Math.round((rows * (1 - (nulls ?? 0))) / frequency)) : undefined;
      const count = distinct.get(key) ?? fromFrequency;
      return { ...(count !== undefined ? { distinct: count } : {}), ...(nulls !== undefined ? { nullFraction: nulls } : {}) };
    };
  }

  rawType(column: ColumnDef): RawType {
    return rawTypeOfMysql(column.type);
  }

  castMayFail(column: ColumnDef): boolean {
    // Zero dates ('0000-00-00') and out-of-range values are MySQL's; the engine refuses them.
    return /^(DATE|TIMESTAMP|INTERVAL|JSON)/.test(column.type);
  }

  scanSql(request: ScanRequest): string {
    const list = request.columns.map((c) => this.quote(c.nameInSource)).join(', ') || 'NULL';
    const where = request.filter ? ` WHERE ${request.filter}` : '';
    if (request.aggregates) return aggregateSelect(request, this.quote, where, this.dialect);
    return `SELECT ${list} FROM ${this.dialect.tableSql(request.table)}${where}${orderAndLimit(request, this.quote)}`;
  }

  async *scan(request: ScanRequest): AsyncIterable<unknown[][]> {
    yield* this.statementRows(this.scanSql(request), [], request.signal);
  }

  /** The rows of any SELECT in MySQL's dialect, as text (bytes for binary columns), in batches. */
  async *statementRows(sql: string, _columns: readonly StatementColumn[], signal: AbortSignal): AsyncIterable<unknown[][]> {
    const lease = await this.acquire(signal);
    let finished = false;
    try {
      yield* rowBatches(lease.connection, { sql, rowsAsArray: true, typeCast: asText }, lease.stopped);
      finished = true;
    } catch (err) {
      lease.broken = true;
      if (signal.aborted) throw signal.reason;
      throw statementError(err, lease.lost);
    } finally {
      // Stopped early: the statement is killed (MariaDB would go on computing it), the connection dropped.
      if (!finished && !lease.broken && !signal.aborted) {
        lease.broken = true;
        void withinMs(this.killQuery(lease.connection.threadId), CANCEL_GRACE_MS).catch(() => undefined);
      }
      lease.release();
    }
  }

  /** The pool as leases see it (lease.ts): cancels by KILL QUERY, destroys a broken connection. */
  private readonly driver: PooledDriver<PoolConnection> = {
    connect: () =>
      new Promise<PoolConnection>((resolve, reject) => this.pool.getConnection((err, conn) => (err ? reject(err) : resolve(conn)))),
    release: (connection, broken) => (broken ? destroyConnection(connection) : connection.release()),
    cancel: (connection) => this.killQuery(connection.threadId),
    destroy: (connection) => destroyConnection(connection),
    sourceError: toSourceError,
  };

  /**
   * A pooled connection whose statement is killed (KILL QUERY) when `signal` aborts, also when it
   * aborted before the connection was had; its work then fails at once (lease.stopped) and the
   * connection is destroyed. A connection that saw an error is not reused.
   */
  private acquire(signal: AbortSignal): Promise<Lease<PoolConnection>> {
    return leaseConnection(this.gate, this.driver, signal);
  }

  /** Runs `work` on a connection of its own, killing its statement when `signal` aborts. */
  private async withConnection<T>(signal: AbortSignal, work: (connection: PoolConnection) => Promise<T>, disposable = false): Promise<T> {
    const lease = await this.acquire(signal);
    lease.broken = disposable;
    try {
      return await untilAborted(work(lease.connection), lease.stopped);
    } catch (err) {
      lease.broken = true;
      if (signal.aborted) throw signal.reason;
      if (err instanceof ConnectionLostError) throw err;
      // The statement's own errors (a duplicate key, ...) are as they are; a lost connection says so.
      throw statementError(err, lease.lost);
    } finally {
      lease.release();
    }
  }

  /**
   * Runs a statement written in PostgreSQL's spelling: the session reads double quotes as
   * identifiers, || as concatenation and backslashes literally. The connection is not reused.
   */
  async executeWrite(sql: string, signal: AbortSignal): Promise<number> {
    return this.withConnection(
      signal,
      async (connection) => {
        const db = connection.promise();
        await db.query(POSTGRES_SPELLING);
        const [result] = await db.query(sql);
        return Number((result as { affectedRows?: number }).affectedRows ?? 0);
      },
      true,
    );
  }

  /**
   * Runs `work` in one transaction, on a connection of its own in executeWrite's session (not
   * reused). Rows are locked with SELECT ... FOR UPDATE; statements answer the rows they matched
   * (the driver's FOUND_ROWS), also those a SET left as they were.
   */
  async inTransaction<T>(signal: AbortSignal, work: (transaction: SourceTransaction) => Promise<T>): Promise<T> {
    return this.withConnection(
      signal,
      async (connection) => {
        const db = connection.promise();
        await db.query(POSTGRES_SPELLING);
        await db.beginTransaction();
        try {
          const result = await work({
            excludesWriters: false,
            lockRows: async (table, filter) => {
              await db.query(`SELECT 1 FROM ${this.dialect.tableSql(table)} WHERE ${filter} FOR UPDATE`);
            },
            execute: async (sql) => {
              const [result] = await db.query(sql);
              return Number((result as { affectedRows?: number }).affectedRows ?? 0);
            },
          });
          await db.commit();
          return result;
        } catch (err) {
          await db.rollback().catch(() => undefined);
          throw err;
        }
      },
      true,
    );
  }

  /** Multi-row INSERTs of text values (converted by MySQL), in one transaction. */
  async insertRows(
    table: TableDef,
    columns: readonly ColumnDef[],
    batches: AsyncIterable<Array<string | null>[]>,
    signal: AbortSignal,
  ): Promise<number> {
    const list = columns.map((c) => this.quote(c.nameInSource)).join(', ');
    return this.withConnection(signal, async (connection) => {
      const db = connection.promise();
      let count = 0;
      await db.beginTransaction();
      try {
        for await (const batch of batches) {
          for (let start = 0; start < batch.length; start += 1000) {
            const [result] = await db.query(`INSERT INTO ${this.dialect.tableSql(table)} (${list}) VALUES ?`, [
              batch.slice(start, start + 1000),
            ]);
            count += Number((result as { affectedRows?: number }).affectedRows ?? 0);
          }
        }
        await db.commit();
      } catch (err) {
        await db.rollback().catch(() => undefined);
        throw err;
      }
      return count;
    });
  }

  /** Stops a running statement (timeout, client gone): KILL QUERY from another connection. */
  private async killQuery(threadId: number | null): Promise<void> {
    if (threadId === null) return;
    // On a connection of its own: the pool's may all be busy with the statements being killed.
    const killer = mysql.createConnection({ ...this.endpoint, connectTimeout: Math.min(this.connectTimeoutMs, CANCEL_GRACE_MS) });
    guardErrors(killer);
    try {
      await withinMs(new Promise<void>((resolve) => killer.query(`KILL QUERY ${Number(threadId)}`, () => resolve())), CANCEL_GRACE_MS);
    } catch {
      // The server did not answer in time; the connection is destroyed all the same.
    } finally {
      destroyConnection(killer);
    }
  }

  /** Ends the pool: politely, then (a server that does not answer) by destroying what is left. */
  async close(): Promise<void> {
    this.pooling.gates?.remove(this.gate);
    const all = (this.pool as unknown as { _allConnections?: { toArray?(): mysql.Connection[] } })._allConnections;
    const connections = all?.toArray?.() ?? [];
    await withinMs(this.pool.promise().end(), CANCEL_GRACE_MS).catch(() => undefined);
    for (const connection of connections) destroyConnection(connection);
  }
}

export type { FieldPacket };
