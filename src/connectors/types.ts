/**
 * The connector contract. A connector knows one kind of data source: how to connect, check
 * health, import metadata and read rows. It never knows HTTP, and it never plans: the engine
 * decides what to ask of it.
 *
 * Two ways to deliver rows exist:
 *  - `EngineNativeConnector`: the embedded engine (DuckDB) reads the source itself; the connector
 *    only says how (a relation in DuckDB SQL, e.g. `read_parquet('...')`). Files use this.
 *  - `RowConnector`: the connector streams batches of rows, which the engine loads (PostgreSQL,
 *    MySQL/MariaDB, SQLite). Its `dialect` (connectors/<kind>/dialect.ts) tells the planners
 *    every SQL difference of its kind; `scan` takes the SQL they generated for it.
 */
import type { Node } from '@pgsql/types';
import type { ColumnDef, ProcedureDef, SourceDef, SourceKind, TableDef } from '../catalog/types.js';
import type { KeyLookup, SourceDialect } from './dialect.js';
import type { Generated, PredicateScope } from './sql/predicate.js';

/** What a source can take at all (Teiid's translator capabilities); planners ask `ScanPushdown`, which reads these. */
export interface Capabilities {
  /** Only the needed columns are read. */
  projection: boolean;
  /** WHERE predicates on the source's own columns. */
  filters: boolean;
  limit: boolean;
  orderBy: boolean;
  aggregates: boolean;
  /** Joins among the source's own tables. */
  joins: boolean;
}

/** One key of an order: a column, its direction and where NULLs go (the engine's placement). */
export interface SortKey {
  column: ColumnDef;
  descending: boolean;
  nullsFirst: boolean;
}

/**
 * Pushdown as a negotiation (Trino's ConnectorMetadata.apply*): a planner offers one part of a
 * statement at a time, and the source answers what it takes, or null to decline, which leaves
 * that part to the engine. A source declines whatever it would compute otherwise than the
 * engine, so what it takes never changes an answer. SQL sources share one implementation
 * (connectors/sql/scan-pushdown.ts).
 */
export interface ScanPushdown {
  /**
   * A condition on a scan's table (or a join's tables, as `scope` resolves them): the predicate
   * in the source's dialect, `exact` when it keeps exactly the rows the engine's would (else a
   * superset, and the engine filters again).
   */
  applyFilter(condition: Node, scope: Omit<PredicateScope, 'castMayFail'>): Generated | null;
  /** Only the first `limit` rows in `orderBy`'s order, sent in the engine's order. */
  applyTopN(orderBy: readonly SortKey[], limit: number): { orderBy: SortKey[]; limit: number } | null;
  /** `aggregates` per group of `keys` computed by the source (partial aggregation below a join). */
  applyAggregation(
    keys: readonly ColumnDef[],
    aggregates: readonly PartialAggregate[],
  ): { keys: ColumnDef[]; aggregates: PartialAggregate[] } | null;
  /**
   * A join of the source's own tables under their aliases, reading `columns`: the query in the
   * source's dialect, which of `conditions` it applies (the rest stay in the engine), and which
   * of those it applies exactly (`exact`: it keeps the rows the engine would; else a superset).
   */
  applyJoin(join: {
    tables: ReadonlyArray<{ alias: string; table: TableDef }>;
    conditions: readonly Node[];
    /** Conditions already written in the source's SQL (subqueries it runs whole): applied as they are. */
    written?: readonly string[];
    columns: ReadonlyArray<{ alias: string; column: ColumnDef }>;
  }): { sql: string; taken: boolean[]; exact: boolean[] } | null;
  /**
   * A dependent join's keys as filters on `column`, one scan each: one lookup condition where
   * `lookup` is given and the source takes one, else lists of `batchSize` keys at most.
   */
  applyKeyFilter(column: ColumnDef, keys: readonly string[], options: { batchSize: number; lookup?: KeyLookup }): string[] | null;
}

export type ImportedTable = Omit<TableDef, 'uid' | 'oid'>;

/** Storage classes in which a row connector hands over values (before engine casts). */
export type RawType = 'BIGINT' | 'DOUBLE' | 'VARCHAR' | 'BLOB';

/** A result column of a statement sent to a source whole. */
export interface StatementColumn {
  name: string;
  /** The source's type (PostgreSQL: format_type spelling). */
  sourceType: string;
  /** The engine type it maps to. */
  type: string;
}

/** An aggregate a source computes per group of a scan (partial aggregation below a join). */
export interface PartialAggregate {
  fn: 'count' | 'sum' | 'min' | 'max';
  /** The aggregated column; null for count(*). */
  column: ColumnDef | null;
}

export type { KeyLookup };

export interface ScanRequest {
  table: TableDef;
  /**
   * The columns to read, in order; each batch row holds their values in this order. With
   * `aggregates`, these are the grouping columns, and each row then holds the aggregates' values
   * (as text) after them.
   */
  columns: ColumnDef[];
  aggregates?: PartialAggregate[];
  /**
   * With `aggregates` and one grouping column (an integer key): the rows are grouped by their
   * key's number in this lookup instead of by the key, and each group's key column holds the
   * least key of the group; rows whose key has no number are left out (plan/key-lookup.ts).
   */
  groupLookup?: KeyLookup;
  /**
   * With `aggregates` empty and one column (distinct rows, plan/distinct-reads.ts): the rows are
   * the keys among these that have a row meeting `filter` (SourceDialect.keyProbeSql).
   */
  probeKeys?: readonly string[];
  /** Order of the rows (with the engine's NULL placement) when `limit` is set. */
  orderBy?: SortKey[];
  /** Only the first rows are needed (the engine still applies the statement's own LIMIT). */
  limit?: number;
  /** A predicate in the source's dialect, pushed down by the planner (rows must satisfy it). */
  filter?: string;
  signal: AbortSignal;
}

interface ConnectorBase {
  readonly kind: SourceKind;
  readonly source: SourceDef;
  readonly capabilities: Capabilities;
  /** Resolves when the source answers; rejects with a message naming what failed. */
  healthCheck(): Promise<void>;
  importMetadata(): Promise<ImportedTable[]>;
  close(): Promise<void>;
}

export interface EngineNativeConnector extends ConnectorBase {
  readonly delivery: 'engine';
  /** A DuckDB relation expression that reads the table, e.g. `read_csv('/data/x.csv')`. */
  relationSql(table: TableDef): string;
  /** The folder (real path) the engine must be allowed to read for this source; null while it is missing. */
  engineFolder(): string | null;
  /** Statements that make the source readable in a fresh engine before its views are made (e.g. ATTACH). */
  setupSql(): string[];
}

export interface RowConnector extends ConnectorBase {
  readonly delivery: 'rows';
  /** Every SQL difference of this kind of source that the planners need (connectors/<kind>/dialect.ts). */
  readonly dialect: SourceDialect;
  /** What the source takes of a scan when offered (filters, top-N, aggregation, joins, key filters). */
  readonly pushdown: ScanPushdown;
  /** The raw type each column's values arrive in; the engine casts to the column's type. */
  rawType(column: ColumnDef): RawType;
  /**
   * Whether casting a raw value to the column's type can fail (then the load counts the
   * failures for the SQL-Warnings header, at the cost of one more pass). Default: true.
   */
  castMayFail?(column: ColumnDef): boolean;
  /** The exact statement `scan` sends for `request` (shown by EXPLAIN and the query log). */
  scanSql(request: Omit<ScanRequest, 'signal'>): string;
  /**
   * The rows of a whole SELECT in the source's dialect (a join at the source, whole-statement
   * pushdown), in batches, each value in the raw class the caller expects. `columns` describes
   * the result where the source needs it to convert values (PostgreSQL's COPY).
   */
  statementRows(sql: string, columns: readonly StatementColumn[], signal: AbortSignal): AsyncIterable<unknown[][]>;
  /** Streams the requested columns in batches. Stops early when `signal` aborts. */
  scan(request: ScanRequest): AsyncIterable<unknown[][]>;
  /**
   * The rows `scan` would read, as CSV text the source writes itself (RFC 4180: NULL unquoted and
   * empty, an empty text quoted), for loads of many rows that the engine reads from a file; each
   * value the text `scan` gives for it. Absent where the source writes no CSV.
   */
  scanCsv?(request: ScanRequest): AsyncIterable<Buffer>;
  /** Writes INSERT, UPDATE and DELETE to the source; absent where vdb does not write. */
  readonly writer?: SourceWriter;
  /** Runs whole statements written in PostgreSQL's SQL; absent where the dialect is another. */
  readonly wholeStatements?: WholeStatementConnector;
  /** Imports and calls the source's procedures; absent where vdb imports none. */
  readonly procedures?: ProcedureConnector;
  /** Reads a table's changes from the source's log (copies of mode `changes`); absent where the source has none. */
  readonly changeCapture?: ChangeCaptureConnector;
}

/** Why a table's changes cannot be read from the source's log, and what to do about it. */
export interface CaptureRefusal {
  reason: string;
  hint: string;
}

/** A row's state after the changes read: its values (the table's columns in order), or deleted. */
export interface CapturedRow {
  /** The key's values as text, in the order of the key columns given to `read`. */
  key: string[];
  /** Each column's text (bytes for a BLOB column), or null; null for a deleted row. */
  values: Array<string | Buffer | null> | null;
  /** Columns (indexes) an update left as they were without sending their values (large values): the copy's hold them. */
  kept?: number[];
}

export interface CapturedChanges {
  /** The log position to `advance` to once these changes are applied; null when none were read. */
  upTo: string | null;
  /** Messages read from the log. */
  messages: number;
  /** Why the changes cannot be applied row by row and the table must be read whole (truncated, columns changed...). */
  wholeReason: string | null;
  /** The last state of each key that changed, in no order. */
  rows: CapturedRow[];
}

/**
 * A source's change log for local copies (docs/copies.md): a capture is named by its caller
 * (one name for the log position it keeps and for what it publishes), started before the table
 * is read whole, read without being consumed, and moved on only once its changes are applied.
 */
export interface ChangeCaptureConnector {
  /** Why changes of `table` cannot be captured (the source's settings, the user's privileges, the table), or null. */
  unavailable(table: TableDef, keyColumns: readonly ColumnDef[]): Promise<CaptureRefusal | null>;
  /** Starts capture `name` of `table`'s changes from now. */
  start(name: string, table: TableDef): Promise<void>;
  /** The changes of capture `name` not yet passed, at most about `limit` messages (else `wholeReason` says so). */
  read(name: string, table: TableDef, keyColumns: readonly ColumnDef[], limit: number): Promise<CapturedChanges>;
  /** Passes the changes up to `upTo` (applied): they are not read again and the source may discard them. */
  advance(name: string, upTo: string): Promise<void>;
  /** Ends every capture whose name starts with `prefix`, but `keep`. */
  drop(prefix: string, keep?: string): Promise<void>;
}

export type ImportedProcedure = Omit<ProcedureDef, 'uid' | 'oid'>;

/**
 * A source's procedures (PostgreSQL functions, MariaDB stored procedures): imported with its
 * tables, called with their arguments as bound parameters, never spliced into the SQL text.
 */
export interface ProcedureConnector {
  /** The procedures the import patterns select, of the kinds vdb can call. */
  importProcedures(): Promise<ImportedProcedure[]>;
  /**
   * Calls `procedure` with `args` (one per parameter in order: text, null, or undefined for one
   * left out). Resolves once the source told the result's columns; the rows follow in batches,
   * each value in the raw class of `rawType(column)`.
   */
  callProcedure(procedure: ProcedureDef, args: ReadonlyArray<string | null | undefined>, signal: AbortSignal): Promise<ProcedureRows>;
  /** The statement `callProcedure` sends (for the query log), its values as $1, $2, ... or ?. */
  procedureCallSql(procedure: ProcedureDef, args: ReadonlyArray<string | null | undefined>): string;
}

export interface ProcedureRows {
  columns: StatementColumn[];
  /** The raw class of each column's values. */
  rawTypes: RawType[];
  rows: AsyncIterable<unknown[][]>;
  /** Gives the connection back when the rows are not read (a failure before reading them). */
  close(): void;
}

/** What writes to a source (engine/statements/dml.ts). */
export interface SourceWriter {
  /** Runs one statement in the source's dialect; returns the number of rows it changed. */
  executeWrite(sql: string, signal: AbortSignal): Promise<number>;
  /** Inserts batches of text values into `columns` of `table` in one transaction. */
  insertRows(
    table: TableDef,
    columns: readonly ColumnDef[],
    batches: AsyncIterable<Array<string | null>[]>,
    signal: AbortSignal,
  ): Promise<number>;
  /**
   * Runs `work` in one transaction on one connection (writes whose rows the engine chose:
   * engine/statements/keyed-write.ts); absent where the dialect speaks PostgreSQL (writes go whole there).
   */
  inTransaction?<T>(signal: AbortSignal, work: (transaction: SourceTransaction) => Promise<T>): Promise<T>;
}

/**
 * A source that runs whole statements written in PostgreSQL's SQL and writes their rows as JSON
 * itself (whole-statement pushdown); its dialect says `speaksPostgres`.
 */
export interface WholeStatementConnector extends RowConnector {
  /** Whether the database and its columns order text bytewise, as the engine does. */
  bytewiseCollation(): Promise<boolean>;
  /** The result columns of a statement, without running it; rejects when the source refuses it. */
  describeStatement(sql: string, signal?: AbortSignal): Promise<StatementColumn[]>;
  /** The statement the source runs for the rows of `sql` in the requested window, which `streamStatementJson` writes as JSON. */
  statementJsonSql(sql: string, columns: readonly StatementColumn[], window: { limit?: number; offset?: number }): string;
  /** The SELECT inside `statementJsonSql`, for `preparedStatementJson`. */
  statementJsonSelect?(
    sql: string,
    columns: readonly StatementColumn[],
    shape: 'array' | 'object',
    window: { limit?: number; offset?: number },
  ): string;
  /**
   * The JSON texts of a `statementJsonSelect` whose constants are parameters ($1, ... as text),
   * prepared once per connection; null when it has more than `cap` rows.
   */
  preparedStatementJson?(jsonSelect: string, values: readonly string[], cap: number, signal: AbortSignal): Promise<string[] | null>;
  /** The JSON texts of the rows of a `statementJsonSql` statement in `form`'s shape, as they arrive. */
  streamStatementJson(
    jsonSql: string,
    form: { columns: readonly StatementColumn[]; shape: 'array' | 'object' },
    signal: AbortSignal,
    onRows?: (count: number) => void,
  ): AsyncGenerator<string>;
  /** The raw class of a result column's values in `statementRows`. */
  statementRawType(column: StatementColumn): RawType;
  /**
   * The statement that writes the rows of `sql` as CSV lines without a header (each value the
   * text of its JSON value, results/csv.ts), where the source can; with `streamStatementCsv`.
   */
  statementCsvSql?(sql: string, columns: readonly StatementColumn[], window: { limit?: number; offset?: number }): string;
  /** The CSV text of a `statementCsvSql` statement in whole rows, CRLF line ends, as it arrives. */
  streamStatementCsv?(csvSql: string, signal: AbortSignal, onRows?: (count: number) => void): AsyncGenerator<string>;
}

/** The connector as one that runs whole PostgreSQL statements, or null when its dialect is another. */
export function wholeStatementConnector(connector: Connector): WholeStatementConnector | null {
  return connector.delivery === 'rows' ? (connector.wholeStatements ?? null) : null;
}

export type Connector = EngineNativeConnector | RowConnector;

/**
 * One transaction of a writable source, on one connection (a write whose rows the engine chose:
 * engine/exec/dml.ts). It commits when the work given to the connector resolves and rolls back
 * when it throws.
 */
export interface SourceTransaction {
  /**
   * True when no other writer can change the source until the end (SQLite's BEGIN IMMEDIATE):
   * rows read now stay as they are without `lockRows`.
   */
  readonly excludesWriters: boolean;
  /** Locks the rows of `table` that `filter` (in the source's dialect) keeps against other writers, until the end. */
  lockRows(table: TableDef, filter: string): Promise<void>;
  /** Runs one statement (PostgreSQL's spelling of names, as `executeWrite`); answers the rows it reached. */
  execute(sql: string): Promise<number>;
}

/** Thrown by connectors when the source cannot be reached (503) rather than failing (502). */
export class SourceUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceUnreachableError';
  }
}

export const NO_PUSHDOWN: Capabilities = {
  projection: false,
  filters: false,
  limit: false,
  orderBy: false,
  aggregates: false,
  joins: false,
};

/**
 * Whether a column's source values may arrive as NULL in the engine (a failed cast, or a value
 * of another storage class): then a condition or order computed by the source may differ.
 */
export function castMayFail(connector: RowConnector, column: ColumnDef): boolean {
  return connector.castMayFail?.(column) ?? true;
}
