import { createHash } from 'node:crypto';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ColumnDef, SourceDef, TableDef } from '../../catalog/types.js';
import { NO_PUSHDOWN, SourceUnreachableError, type ScanPushdown } from '../types.js';
import { SqlScanPushdown } from '../sql/scan-pushdown.js';
import { abortable, CANCEL_GRACE_MS, ConnectionLostError, NEVER, untilAborted, withinMs } from '../abort.js';
import { leaseConnection, type Lease, type PooledDriver } from '../lease.js';
import type {
  Capabilities,
  ChangeCaptureConnector,
  ImportedTable,
  RawType,
  RowConnector,
  ProcedureConnector,
  ScanRequest,
  SourceWriter,
  StatementColumn,
  WholeStatementConnector,
} from '../types.js';
import { aggregateSelect, orderAndLimit } from '../scan-sql.js';
import { copyTextRows } from './copy-text.js';
import { copyJsonValuesSql, CopyToJson } from './copy-json.js';
import { csvValuesSql, CsvLineEnds } from './csv-rows.js';
import { jsonRowSql } from './json-rows.js';
import { ApiError, valueTooLarge } from '../../errors.js';
import { DEFAULT_POOL_WAIT_MS, PoolGate, type PoolGates, type Pooling } from '../pool-gate.js';
import { POSTGRES_DIALECT } from './dialect.js';
import { engineTypeOfPostgres, rawTypeOfPostgres, sourceTypeOfPostgres } from './types.js';
import { PostgresProcedures } from './procedures.js';
import { PostgresChangeCapture } from './change-capture.js';

const BATCH_ROWS = 2048;

/** Connection errors (as opposed to a failing statement): the source is unreachable. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', '57P03', '3D000', '28P01', '28000']);

/** The driver's and the pool's messages for a connection that did not complete within connectTimeoutMs. */
const CONNECT_TIMEOUT = /^(Connection terminated due to connection timeout|timeout expired|timeout exceeded when trying to connect)$/;

export function toSourceError(err: unknown): Error {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (CONNECT_TIMEOUT.test(message)) return new SourceUnreachableError(`no connection within the connect timeout (${message})`);
  return code && UNREACHABLE.has(code) ? new SourceUnreachableError(message) : err instanceof Error ? err : new Error(message);
}

/**
 * The session ended under a statement: the server went away (restart, failover, a terminated
 * backend: SQLSTATE 57P01-57P03, class 08) or the socket failed.
 */
const LOST = /^(57P0[123]|08...|ECONNRESET|EPIPE|ETIMEDOUT)$/;

/** A failure of a statement on a connection that was had: a lost connection says so (502), others as they are. */
function statementError(err: unknown, lost: Error | null): Error {
  const code = (err as { code?: string }).code ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (lost || LOST.test(code) || /^Connection terminated/.test(message)) return new ConnectionLostError(message);
  return toSourceError(err);
}

/** The socket of a client, destroyed at once (no goodbye to a server that may not answer). */
function destroySocket(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** A pooled client had for one piece of work. */

/** `c0, c1, ...` of each described statement's columns (the same list each time for a known statement). */
const aliasLists = new WeakMap<readonly StatementColumn[], string>();

function aliasList(columns: readonly StatementColumn[]): string {
  let list = aliasLists.get(columns);
  if (list === undefined) aliasLists.set(columns, (list = columns.map((_, i) => `c${i}`).join(', ')));
  return list;
}

/** Statements prepared on each connection, by text: a bounded number, then unnamed ones. */
const prepared = new WeakMap<pg.PoolClient, Set<string>>();
const MAX_PREPARED_PER_CONNECTION = 200;

/** Names of statement texts (a hash of the text), kept for the texts seen last: not hashed per request. */
const hashedNames = new Map<string, string>();
const MAX_NAMES = 1000;

function nameOf(text: string): string {
  let name = hashedNames.get(text);
  if (name === undefined) {
    name = `vdb_${createHash('sha256').update(text).digest('base64url').slice(0, 40)}`;
    if (hashedNames.size >= MAX_NAMES) hashedNames.delete(hashedNames.keys().next().value!);
    hashedNames.set(text, name);
  }
  return name;
}

/** The prepared statements' texts by their SELECT (the same string each time for a known statement): written once. */
const cappedTexts = new Map<string, { cap: number; text: string }>();

function cappedText(jsonSelect: string, cap: number): string {
  const known = cappedTexts.get(jsonSelect);
  if (known?.cap === cap) return known.text;
  const text = `SELECT * FROM (${jsonSelect}) AS r LIMIT ${cap + 1}`;
  if (cappedTexts.size >= MAX_NAMES) cappedTexts.delete(cappedTexts.keys().next().value!);
  cappedTexts.set(jsonSelect, { cap, text });
  return text;
}

/** The name of `text`'s prepared statement on `client`, or undefined (unnamed) once it holds enough. */
function preparedName(client: pg.PoolClient, text: string): string | undefined {
  const name = nameOf(text);
  let names = prepared.get(client);
  if (!names) prepared.set(client, (names = new Set()));
  if (names.has(name)) return name;
  if (names.size >= MAX_PREPARED_PER_CONNECTION) return undefined;
  names.add(name);
  return name;
}

/**
 * A PostgreSQL database. Rows are read with COPY (SELECT ...) TO STDOUT in text format and
 * handed over as text, so the driver converts nothing. Tables of `public` are named as they
 * are; other schemas (importer.schemaPattern) as `schema.table`.
 */
export class PostgresConnector implements RowConnector {
  readonly writer: SourceWriter = this;
  readonly wholeStatements: WholeStatementConnector = this;
  /** Its functions as procedures (procedures.ts). */
  readonly procedures: ProcedureConnector = new PostgresProcedures({
    acquire: (signal) => this.acquire(signal),
    query: async (sql, values) => {
      try {
        return await this.gate.within(NEVER, () => this.pool.query(sql, values));
      } catch (err) {
        throw toSourceError(err);
      }
    },
    schemas: () => this.schemas(),
    model: () => this.source.model,
    quote: (name) => this.quote(name),
    statementError: (err, lease) => statementError(err, lease.lost),
  });
  /** Its tables' changes from the write-ahead log, for copies of mode `changes` (change-capture.ts). */
  readonly changeCapture: ChangeCaptureConnector = new PostgresChangeCapture(async (sql, values) => {
    try {
      return await this.gate.within(NEVER, () => this.pool.query(sql, values));
    } catch (err) {
      throw toSourceError(err);
    }
  });
  readonly kind = 'postgresql' as const;
  readonly delivery = 'rows' as const;
  readonly dialect = POSTGRES_DIALECT;
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
  private readonly pool: pg.Pool;
  /** The pool's turns: a statement that finds every connection in use waits, then is told the source is busy. */
  private readonly gate: PoolGate;
  private readonly gates: PoolGates | undefined;
  /** How long a connect may take (and a health check, which is one). */
  private readonly connectTimeoutMs: number;
  private collation: Promise<boolean> | undefined;

  constructor(
    readonly source: SourceDef,
    password: string | undefined,
    /** The configured default (connectTimeoutMs); the source's own connectTimeoutMs wins. */
    connectTimeoutMs = 10_000,
    /** The longest row text accepted from a whole statement (configuration valueLimit). */
    private readonly valueLimit = 64 * 1024 * 1024,
    pooling: Pooling = {},
  ) {
    const c = source.connection;
    this.connectTimeoutMs = Number(source.model.connectTimeoutMs ?? connectTimeoutMs);
    const max = Number(source.model.maxConnections ?? 10);
    this.pool = new pg.Pool({
      host: c.host ?? '127.0.0.1',
      port: c.port ? Number(c.port) : 5432,
      database: c.db ?? c.database,
      user: c['user-name'] ?? c.user,
      password,
      max,
      connectionTimeoutMillis: this.connectTimeoutMs,
      idleTimeoutMillis: 30_000,
      application_name: 'vdb',
      // Timestamps with time zone are written in UTC, as the engine writes them; dates in ISO
      // form (csv-rows.ts reads their text) and read as vdb reads them (month before day).
      options: '-c TimeZone=UTC -c DateStyle=ISO,MDY',
    });
    // An idle client that loses its server must not crash the process.
    this.pool.on('error', () => undefined);
    const waitMs = Number(source.model.poolWaitMs ?? pooling.waitMs ?? DEFAULT_POOL_WAIT_MS);
    this.gate = new PoolGate(source.name, max, waitMs, () => this.pool.idleCount);
    this.gates = pooling.gates;
    this.gates?.add(this.gate);
  }

  private schemas(): string[] {
    return (this.source.model['importer.schemaPattern'] ?? 'public')
      .split(/[;|]/)
      .map((s) => s.trim())
      .filter(Boolean);
  }

  async healthCheck(): Promise<void> {
    // A source that accepts connections but never answers is not healthy: bounded as a connect is.
    const signal = AbortSignal.timeout(this.connectTimeoutMs);
    try {
      await this.withLease(signal, (client) => client.query('SELECT 1'));
    } catch (err) {
      // Busy (every connection in use) is not away.
      if (err instanceof ApiError) throw err;
      if (signal.aborted) throw new SourceUnreachableError(`no answer within the connect timeout (${this.connectTimeoutMs} ms)`);
      throw err instanceof ConnectionLostError ? new SourceUnreachableError(err.message) : err;
    }
  }

  async importMetadata(): Promise<ImportedTable[]> {
    const patterns = this.schemas();
    let result: pg.QueryResult;
    try {
      result = await this.gate.within(NEVER, () =>
        this.pool.query(
          `SELECT n.nspname AS schema, c.relname AS name, c.relkind AS kind,
                CASE WHEN c.reltuples < 0 THEN NULL ELSE c.reltuples::bigint END AS estimate,
                obj_description(c.oid, 'pg_class') AS description,
                json_agg(json_build_object(
                  'name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                  'notnull', a.attnotnull, 'position', a.attnum,
                  'description', col_description(c.oid, a.attnum),
                  'distinct', (SELECT CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * GREATEST(c.reltuples, 0) ELSE s.n_distinct END
                                 FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname
                                  AND s.attname = a.attname AND NOT s.inherited),
                  'null_fraction', (SELECT s.null_frac FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname
                                     AND s.attname = a.attname AND NOT s.inherited),
                  'collation', (SELECT co.collname FROM pg_collation co
                                 WHERE co.oid = a.attcollation AND co.collname NOT IN ('default', 'C', 'POSIX', 'ucs_basic')))
                  ORDER BY a.attnum) AS columns,
                (SELECT json_agg(pa.attname ORDER BY k.ord)
                   FROM pg_index i
                   CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                   JOIN pg_attribute pa ON pa.attrelid = i.indrelid AND pa.attnum = k.attnum
                  WHERE i.indrelid = c.oid AND i.indisprimary) AS primary_key
           FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace
           JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
          WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND NOT c.relispartition
            AND n.nspname LIKE ANY ($1::text[])
          GROUP BY n.nspname, c.relname, c.relkind, c.reltuples, c.oid
          ORDER BY n.nspname, c.relname`,
          [patterns],
        ),
      );
    } catch (err) {
      throw toSourceError(err);
    }
    const importedSchemas = new Set(result.rows.map((row: PgTableRow) => row.schema));
    return result.rows.map((row: PgTableRow) => {
      const columns = row.columns.map((col): ColumnDef => ({
        name: col.name,
        nameInSource: col.name,
        type: engineTypeOfPostgres(col.type),
        // Which text columns are char(n), whose padding the engine would compare (exec/load-padding.ts).
        ...(sourceTypeOfPostgres(col.type) === undefined ? {} : { sourceType: col.type }),
        nullable: !col.notnull,
        position: col.position,
        description: col.description,
        collation: col.collation,
        ...(col.distinct === null || col.distinct === undefined ? {} : { distinct: Math.round(Number(col.distinct)) }),
        ...(col.null_fraction === null || col.null_fraction === undefined ? {} : { nullFraction: Number(col.null_fraction) }),
      }));
      // Bare names when one schema is imported; else `public` bare and the others qualified.
      const isDefault = row.schema === 'public' || importedSchemas.size === 1;
      return {
        name: isDefault ? row.name : `${row.schema}.${row.name}`,
        nameInSource: `${this.quote(row.schema)}.${this.quote(row.name)}`,
        sourceName: { schema: row.schema, table: row.name },
        kind: row.kind === 'v' || row.kind === 'm' ? 'View' : 'Table',
        columns,
        primaryKey: row.primary_key ?? [],
        cardinality: row.estimate === null ? null : Number(row.estimate),
        description: row.description,
      };
    });
  }

  rawType(column: ColumnDef): RawType {
    return rawTypeOfPostgres(column.type);
  }

  /** COPY text of these types is always valid input for the engine's cast. */
  castMayFail(column: ColumnDef): boolean {
    // Numeric NaN and values beyond 38 digits; dates, times and intervals all parse.
    return /^DECIMAL/.test(column.type);
  }

  scanSql(request: ScanRequest): string {
    return `COPY (${this.selectSql(request)}) TO STDOUT`;
  }

  /** SELECT of the requested columns; bytea as hex so it survives the text format. */
  private selectSql(request: ScanRequest): string {
    const list = request.columns
      .map((c) => (c.type === 'BLOB' ? `encode(${this.quote(c.nameInSource)}, 'hex')` : this.quote(c.nameInSource)))
      .join(', ');
    const where = request.filter ? ` WHERE ${request.filter}` : '';
    if (request.probeKeys && request.aggregates?.length === 0 && request.columns.length === 1)
      return this.dialect.keyProbeSql(request.table, request.columns[0]!, request.probeKeys, request.filter);
    if (request.aggregates) return aggregateSelect(request, this.quote, where, this.dialect);
    return `SELECT ${list || 'NULL'} FROM ${this.dialect.tableSql(request.table)}${where}${orderAndLimit(request, this.quote)}`;
  }

  async *scan(request: ScanRequest): AsyncIterable<unknown[][]> {
    const blobs = request.columns.map((c, i) => (c.type === 'BLOB' ? i : -1)).filter((i) => i >= 0);
    for await (const batch of copyTextRows(this.copyOut(this.scanSql(request), request.signal), BATCH_ROWS)) {
      if (blobs.length > 0) {
        for (const row of batch)
          for (const i of blobs) row[i] = row[i] === null ? null : (Buffer.from(row[i] as string, 'hex') as unknown as string);
      }
      yield batch;
    }
  }

  /**
   * Runs a COPY ... TO STDOUT and yields its raw data. Aborting `signal` cancels the statement
   * on the server (pg_cancel_backend); a connection that saw an error is not reused.
   */
  /** COPY ... (FORMAT csv): PostgreSQL writes a NULL unquoted and an empty text as "". */
  scanCsv(request: ScanRequest): AsyncIterable<Buffer> {
    return this.copyOut(`COPY (${this.selectSql(request)}) TO STDOUT WITH (FORMAT csv)`, request.signal);
  }

  private copyOut(copySql: string, signal: AbortSignal): AsyncGenerator<Buffer> {
    return abortable(this.copyChunks(copySql, signal), signal);
  }

  private async *copyChunks(copySql: string, signal: AbortSignal): AsyncGenerator<Buffer> {
    const lease = await this.acquire(signal);
    let complete = false;
    try {
      yield* lease.connection.query(copyTo(copySql)) as AsyncIterable<Buffer>;
      complete = true;
    } catch (err) {
      lease.broken = true;
      throw statementError(err, lease.lost);
    } finally {
      // A COPY left before its end (the reader stopped) leaves the connection mid-protocol.
      if (!complete) lease.broken = true;
      lease.release();
    }
  }

  /** The pool as leases see it (lease.ts): cancels by pg_cancel_backend, destroys the socket of a broken client. */
  private readonly driver: PooledDriver<pg.PoolClient> = {
    connect: () => this.pool.connect(),
    release: (client, broken) => {
      client.release(broken);
      // Removed from the pool and closed now: a half-closed socket to a silent server would linger.
      if (broken) destroySocket(client);
    },
    cancel: (client) => this.cancelBackend((client as unknown as { processID: number }).processID),
    destroy: (client) => destroySocket(client),
    sourceError: toSourceError,
  };

  /**
   * A pooled client whose statement is cancelled (pg_cancel_backend) when `signal` aborts, also
   * when it aborted before the client was had. A client that saw an error is not reused.
   */
  private acquire(signal: AbortSignal): Promise<Lease<pg.PoolClient>> {
    return leaseConnection(this.gate, this.driver, signal);
  }

  /** Runs `work` on one pooled client until it is done or `signal` aborts (then it fails at once). */
  private async withLease<T>(signal: AbortSignal, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const lease = await this.acquire(signal);
    try {
      return await untilAborted(work(lease.connection), signal);
    } catch (err) {
      lease.broken = true;
      if (signal.aborted) throw signal.reason;
      throw statementError(err, lease.lost);
    } finally {
      lease.release();
    }
  }

  /** Whether the database orders text bytewise (C collation), as the engine does. */
  async bytewiseCollation(): Promise<boolean> {
    this.collation ??= this.withLease(AbortSignal.timeout(this.connectTimeoutMs), (client) =>
      client.query('SELECT datcollate FROM pg_database WHERE datname = current_database()'),
    )
      .then((r) => /^(C|POSIX|C\..*)$/i.test(String(r.rows[0]?.datcollate ?? '')))
      .catch(() => {
        // Unknown while the database is away: ask again next time, assume the worst now.
        this.collation = undefined;
        return false;
      });
    return this.collation;
  }

  /**
   * The result columns of a statement (run with LIMIT 0), with their engine types. Fails with
   * the database's error when the statement is not valid there.
   */
  async describeStatement(sql: string, signal: AbortSignal = NEVER): Promise<StatementColumn[]> {
    const lease = await this.acquire(signal);
    let fields: pg.FieldDef[];
    let formatted: pg.QueryResult<{ t: string }>;
    try {
      fields = (await untilAborted(lease.connection.query({ text: `SELECT * FROM (${sql}) AS q LIMIT 0`, rowMode: 'array' }), signal))
        .fields;
      formatted = await untilAborted(
        lease.connection.query<{ t: string }>(
          'SELECT format_type(t, m) AS t FROM unnest($1::oid[], $2::int[]) WITH ORDINALITY AS x(t, m, i) ORDER BY i',
          [fields.map((f) => f.dataTypeID), fields.map((f) => f.dataTypeModifier)],
        ),
        signal,
      );
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const code = (err as { code?: string }).code;
      // Keep the database's own errors (SQLSTATE) for the caller; connection failures say so.
      if (code && !UNREACHABLE.has(code) && !LOST.test(code) && !lease.lost) throw err;
      lease.broken = true;
      throw statementError(err, lease.lost);
    } finally {
      lease.release();
    }
    return fields.map((f, i) => ({ name: f.name, sourceType: formatted.rows[i]!.t, type: engineTypeOfPostgres(formatted.rows[i]!.t) }));
  }

  /** COPY of a whole statement's values as text, which `streamStatementJson` writes as JSON rows (copy-json.ts). */
  statementJsonSql(sql: string, columns: readonly StatementColumn[], window: { limit?: number; offset?: number }): string {
    let select = `SELECT ${copyJsonValuesSql(columns)} FROM (${sql}) AS q(${aliasList(columns)})`;
    if (window.limit !== undefined) select += ` LIMIT ${window.limit}`;
    if (window.offset !== undefined) select += ` OFFSET ${window.offset}`;
    return `COPY (${select}) TO STDOUT`;
  }

  /** The SELECT of `statementJsonSql`: one JSON text per row. */
  statementJsonSelect(
    sql: string,
    columns: readonly StatementColumn[],
    shape: 'array' | 'object',
    window: { limit?: number; offset?: number },
  ): string {
    // A row past the limit is cut there, so that no giant text crosses the wire; then refused here.
    let select = `SELECT left(${jsonRowSql(columns, shape)}, ${this.valueLimit + 1}) FROM (${sql}) AS q(${aliasList(columns)})`;
    if (window.limit !== undefined) select += ` LIMIT ${window.limit}`;
    if (window.offset !== undefined) select += ` OFFSET ${window.offset}`;
    return select;
  }

  /**
   * The JSON texts of a `statementJsonSelect` whose constants are parameters ($1, ...), from a
   * statement PostgreSQL prepares once per connection: at most `cap` rows, read in one round
   * trip. Null when the result has more rows: those are streamed with COPY instead, so that no
   * large result is held here.
   */
  async preparedStatementJson(jsonSelect: string, values: readonly string[], cap: number, signal: AbortSignal): Promise<string[] | null> {
    const text = cappedText(jsonSelect, cap);
    const lease = await this.acquire(signal);
    try {
      const result = await untilAborted(
        lease.connection.query<[string]>({
          name: preparedName(lease.connection, text),
          text,
          values: [...values],
          rowMode: 'array',
        }),
        signal,
      );
      return result.rows.length > cap ? null : result.rows.map((row) => this.withinLimit(row[0]));
    } catch (err) {
      lease.broken = true;
      if (signal.aborted) throw signal.reason;
      // The statement's own errors (SQLSTATE) are the caller's to read; a lost connection says so.
      const code = (err as { code?: string }).code;
      if (code && !UNREACHABLE.has(code) && !LOST.test(code) && !lease.lost) throw err;
      throw statementError(err, lease.lost);
    } finally {
      lease.release();
    }
  }

  private withinLimit(row: string): string {
    if (row.length > this.valueLimit) throw valueTooLarge(`A row of the result from "${this.source.name}"`, this.valueLimit);
    return row;
  }

  /** Streams a statement's rows as JSON texts, chunk by chunk, as they arrive; a row is refused past the value limit. */
  async *streamStatementJson(
    copySql: string,
    form: { columns: readonly StatementColumn[]; shape: 'array' | 'object' },
    signal: AbortSignal,
    onRows?: (count: number) => void,
  ): AsyncGenerator<string> {
    const rows = new CopyToJson(form.columns, form.shape, this.valueLimit, () =>
      valueTooLarge(`A row of the result from "${this.source.name}"`, this.valueLimit),
    );
    for await (const chunk of this.copyOut(copySql, signal)) {
      const { text, rows: count } = rows.convert(chunk);
      onRows?.(count);
      if (text) yield text;
    }
    rows.end();
  }

  /** COPY of a whole statement's rows as CSV (csv-rows.ts). */
  statementCsvSql(sql: string, columns: readonly StatementColumn[], window: { limit?: number; offset?: number }): string {
    let select = `SELECT ${csvValuesSql(columns)} FROM (${sql}) AS q(${aliasList(columns)})`;
    if (window.limit !== undefined) select += ` LIMIT ${window.limit}`;
    if (window.offset !== undefined) select += ` OFFSET ${window.offset}`;
    return `COPY (${select}) TO STDOUT WITH (FORMAT csv)`;
  }

  /** Streams a statement's CSV text in whole rows with CRLF line ends; a row is refused past twice the value limit (quotes doubled). */
  async *streamStatementCsv(copySql: string, signal: AbortSignal, onRows?: (count: number) => void): AsyncGenerator<string> {
    const lines = new CsvLineEnds(this.valueLimit * 2 + 2, () =>
      valueTooLarge(`A row of the result from "${this.source.name}"`, this.valueLimit),
    );
    for await (const chunk of this.copyOut(copySql, signal)) {
      const { text, rows } = lines.convert(chunk);
      onRows?.(rows);
      if (text) yield text;
    }
    const rest = lines.end();
    if (rest) yield rest;
  }

  /** The statement's rows as text values (COPY text), for loading into the engine. */
  statementRawType(column: StatementColumn): RawType {
    return rawTypeOfPostgres(column.type);
  }

  async *statementRows(sql: string, columns: readonly StatementColumn[], signal: AbortSignal): AsyncIterable<unknown[][]> {
    const list = columns.map((c, i) => (c.type === 'BLOB' ? `encode(q.c${i}, 'hex')` : `q.c${i}`)).join(', ');
    const copySql = `COPY (SELECT ${list || 'NULL'} FROM (${sql}) AS q(${columns.map((_, i) => `c${i}`).join(', ')})) TO STDOUT`;
    const blobs = columns.map((c, i) => (c.type === 'BLOB' ? i : -1)).filter((i) => i >= 0);
    for await (const batch of copyTextRows(this.copyOut(copySql, signal), BATCH_ROWS)) {
      for (const row of batch)
        for (const i of blobs) row[i] = row[i] === null ? null : (Buffer.from(row[i] as string, 'hex') as unknown as string);
      yield batch;
    }
  }

  /** Runs `work` on one pooled client, cancelling its statement when `signal` aborts. */
  private async withClient<T>(signal: AbortSignal, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.withLease(signal, work);
  }

  async executeWrite(sql: string, signal: AbortSignal): Promise<number> {
    return this.withClient(signal, async (client) => (await client.query(sql)).rowCount ?? 0);
  }

  /** Multi-row INSERTs with parameters (text values, cast by PostgreSQL), in one transaction. */
  async insertRows(
    table: TableDef,
    columns: readonly ColumnDef[],
    batches: AsyncIterable<Array<string | null>[]>,
    signal: AbortSignal,
  ): Promise<number> {
    const list = columns.map((c) => this.quote(c.nameInSource)).join(', ');
    const rowsPerStatement = Math.max(1, Math.min(1000, Math.floor(60_000 / Math.max(1, columns.length))));
    return this.withClient(signal, async (client) => {
      let count = 0;
      await client.query('BEGIN');
      try {
        for await (const batch of batches) {
          for (let start = 0; start < batch.length; start += rowsPerStatement) {
            const rows = batch.slice(start, start + rowsPerStatement);
            const values = rows.map((_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ');
            const result = await client.query(`INSERT INTO ${this.dialect.tableSql(table)} (${list}) VALUES ${values}`, rows.flat());
            count += result.rowCount ?? 0;
          }
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
      return count;
    });
  }

  /** Cancels the statement of a backend (used on timeout and client disconnect). */
  /**
   * Cancels the statement of backend `pid` over a connection of its own: the pool's may all be
   * busy with the very statements being cancelled, and a cancel waiting for one of them would
   * wait for ever.
   */
  private async cancelBackend(pid: number): Promise<void> {
    const client = new pg.Client({ ...this.pool.options, connectionTimeoutMillis: Math.min(this.connectTimeoutMs, CANCEL_GRACE_MS) });
    // Its connection may be lost as any other: never an unhandled 'error'.
    client.on('error', () => undefined);
    try {
      await withinMs(
        client.connect().then(() => client.query('SELECT pg_cancel_backend($1)', [pid])),
        CANCEL_GRACE_MS,
      );
    } catch {
      // The statement may already be over, or the database away; nothing to cancel.
    } finally {
      destroySocket(client);
    }
  }

  /** Ends the pool: politely, then (a server that does not answer) by destroying what is left. */
  async close(): Promise<void> {
    this.gates?.remove(this.gate);
    const clients = [...((this.pool as unknown as { _clients?: pg.Client[] })._clients ?? [])];
    await withinMs(this.pool.end(), CANCEL_GRACE_MS).catch(() => undefined);
    for (const client of clients) destroySocket(client);
  }
}

interface PgTableRow {
  schema: string;
  name: string;
  kind: string;
  estimate: string | null;
  description: string | null;
  columns: Array<{
    name: string;
    type: string;
    notnull: boolean;
    position: number;
    description: string | null;
    collation: string | null;
    distinct: number | null;
    null_fraction: number | null;
  }>;
  primary_key: string[] | null;
}
