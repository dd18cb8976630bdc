/**
 * Execution: loads what row-delivered sources must supply into the query's own engine
 * connection, turns the bound tree back into SQL, and prepares it to learn the result's columns.
 * The result itself is read by the caller (streamed, or materialised for pagination).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceRegistry } from '../../sources/registry.js';
import { literalOf } from '../../sources/system-copies.js';
import type { UserDef } from '../../catalog/types.js';
import {
  aliasedRelation,
  columnText,
  jsonRowsSql,
  streamJsonRows,
  type ResultColumn,
  type RowShape,
  type StreamOptions,
} from '../../results/json.js';
import type { BoundStatement, BoundTable } from '../access/bind.js';
import { describe, quoteIdent, type DuckRuntime, type EngineGeneration } from '../../runtime/duckdb.js';
import type { BoundedCache } from '../tree/statement-cache.js';
import { engineSql, engineSqlPasses, filteredSql } from '../translate/engine-dialect.js';
import { withNumericValues } from '../translate/numeric-values.js';
import { typedSql } from '../translate/probed-types.js';
import { engineError, isInterrupt } from './errors.js';
import { dropLoad, type DependentJoinLimits, type SourceQuery } from './load.js';
import { loadPlanned } from './load-planned.js';
import { standInColumns } from './stand-ins.js';
import type { FederatedPlan } from '../plan/federated.js';
import type { Plan } from '../plan/choose.js';

/** Rows [offset, offset + limit) of a result. */
export interface ResultWindow {
  limit?: number;
  offset?: number;
}

/**
 * An open statement whose result is ready to be read: streamed as JSON, or written whole into
 * an engine table (for pagination). Either the engine computes it, or (whole-statement
 * pushdown) a source does.
 */
export interface Execution {
  columns: ResultColumn[];
  /** Lossy conversions met while loading source rows; sent in the SQL-Warnings header. */
  warnings: string[];
  /** What each source was asked. */
  sourceQueries: SourceQuery[];
  /** The result's rows as JSON texts, one string per chunk of rows. */
  stream(shape: RowShape, window: ResultWindow, options: StreamOptions): AsyncGenerator<string>;
  /**
   * The result's rows as CSV lines (no header, CRLF), written by the source that runs the
   * statement whole, where it can: the same text results/csv.ts writes from `stream`'s rows.
   */
  streamCsv?(window: ResultWindow, options: StreamOptions): AsyncGenerator<string>;
  /** The engine generation the statement runs on, open until `close` (cursors are stored in it). */
  readonly engine: EngineGeneration;
  /** Writes the whole result into the table `table` of `engine` (columns c0..cn); returns its row count. */
  materialize(table: string): Promise<number>;
  /** The rows with every value as text (NULL as null), in batches: for writing to a source. */
  textRows(): AsyncGenerator<Array<string | null>[]>;
  /** Maps errors met while reading the result to API errors. */
  translateError(err: unknown): unknown;
  /** The statement reads data narrowed for its user: its source queries are not shown to them. */
  narrowed?: boolean;
  /** Answered from a source's rows without the engine (source-execution.ts, directExecution). */
  direct?: boolean;
  /**
   * `stream` reads a source's connection as it goes (a statement the source runs whole): the
   * delivery reads it ahead of a slow client (results/spool.ts), so the connection goes back.
   */
  streamsFromSource?: boolean;
  /** The source tables a SELECT read live (`schema.table`): the query log, and the copies it recommends. */
  tablesRead?: string[];
  /** How a SELECT was answered (the metrics count statements by it); unset for other statements. */
  route?: Plan['route'];
  /**
   * Every temporary relation the engine holds for this statement, with its rows: what a narrowed
   * user's statement can reach of the engine (the tests prove it holds nothing hidden).
   */
  engineRelations?(): Promise<Array<{ name: string; rows: unknown[][] }>>;
  close(): void;
}

/** What the query log keeps of a statement's execution: the sources' queries, the tables read live, the route. */
export const queryLogFields = (execution?: Execution) => ({
  sourceQueries:
    execution && execution.sourceQueries.length > 0 ? execution.sourceQueries.map((q) => `${q.source}: ${q.sql}`).join('\n') : null,
  sources: execution?.sourceQueries.map((q) => q.source) ?? [],
  tables: execution?.tablesRead,
  route: execution?.route,
});

/** An execution whose result the engine computes from `sql` on `connection`. */
export function engineExecution(
  connection: DuckDBConnection,
  sql: string,
  columns: ResultColumn[],
  rest: Pick<Execution, 'warnings' | 'sourceQueries' | 'translateError' | 'close' | 'engine'> & {
    /** The engine's own types of the result, where `columns` report others (a decimal's scale). */
    encoding?: ResultColumn[];
  },
): Execution {
  const { encoding = columns, ...shared } = rest;
  return {
    ...shared,
    columns,
    stream(shape, window, options) {
      let rowsSql = jsonRowsSql(aliasedRelation(sql, columns.length), encoding, shape);
      if (window.limit !== undefined) rowsSql += ` LIMIT ${window.limit}`;
      if (window.offset !== undefined) rowsSql += ` OFFSET ${window.offset}`;
      return streamJsonRows(connection, rowsSql, options);
    },
    async *textRows() {
      // An end row (last column TRUE) tells a complete result from one cut short by an error.
      const list = columns.map((column, i) => columnText(`c${i}`, column.type)).join(', ');
      const nulls = columns.map(() => 'NULL').join(', ');
      const result = await connection.stream(
        `SELECT ${list}${list ? ', ' : ''}FALSE FROM ${aliasedRelation(sql, columns.length)} UNION ALL SELECT ${nulls}${nulls ? ', ' : ''}TRUE`,
      );
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const rows = chunk.getRows() as unknown[][];
        const done = rows[rows.length - 1]?.[columns.length] === true;
        if (done) rows.pop();
        if (rows.length > 0) yield rows.map((row) => row.slice(0, columns.length) as Array<string | null>);
        if (done) return;
      }
      await connection.run(sql); // throws the statement's own error
      throw new Error('The statement failed while its rows were being read.');
    },
    async engineRelations() {
      const names = await connection.runAndReadAll(
        'SELECT table_name FROM duckdb_tables() WHERE temporary UNION ALL SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal',
      );
      const relations: Array<{ name: string; rows: unknown[][] }> = [];
      for (const [name] of names.getRows()) {
        const reader = await connection.runAndReadAll(`SELECT * FROM temp.main.${quoteIdent(String(name))}`);
        relations.push({ name: String(name), rows: reader.getRowsJS() as unknown[][] });
      }
      return relations;
    },
    async materialize(table) {
      await connection.run(`CREATE TABLE ${table} AS SELECT * FROM ${aliasedRelation(sql, columns.length)}`);
      const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${table}`);
      return Number(counted.getRows()[0]?.[0] ?? 0);
    },
  };
}

export interface ExecuteOptions {
  signal: AbortSignal;
  /** Who runs the statement (what the logs show depends on it). */
  user: UserDef;
  /** Push projections and conditions to the sources (off: read whole tables). */
  pushdown: boolean;
  /** Dependent joins: most distinct keys sent to another source, and keys per statement. */
  dependentJoin: DependentJoinLimits;
  /** Result columns of statements that read no source, learned once (statement-cache.ts). */
  learned?: BoundedCache<ResultColumn[]>;
  /** A long statement's wait for a turn of the event loop before an expensive stage (cpu-lane.ts). */
  turn?: () => Promise<void>;
  /** A folder the engine may read: whole reads a source writes as CSV go through files there (a copy's refresh). */
  bulkDir?: string;
}

/**
 * Computes the plan's narrowings (a table as its user may see it: fewer columns, rows, masked
 * values), innermost first, each into its table, and drops what was loaded for them before the
 * statement runs. The statement reads those tables: what it can see of the engine never holds a
 * hidden row, column or unmasked value.
 */
async function computeNarrowings(
  connection: DuckDBConnection,
  plan: FederatedPlan,
  registry: SourceRegistry,
  options: ExecuteOptions,
  sourceQueries: SourceQuery[],
  loads: { rescaled: boolean },
): Promise<void> {
  for (const { table, plan: narrowing } of plan.narrowings) {
    // Warnings of these loads count values of rows the user may not see: not shown.
    const made = await loadPlanned(connection, registry, narrowing, options, [], sourceQueries);
    loads.rescaled ||= made.rescaled;
    const strip = narrowing.paddedUses.stripped;
    await connection.run(`CREATE TEMP TABLE ${table} AS ${await typedSql(connection, () => engineSql(narrowing.ast, strip))}`);
    for (const relation of made.relations) await dropLoad(connection, relation);
  }
}

/** Runs a federated plan: loads, narrowings, the statement in the engine; its result ready to read. */
export async function openFederatedExecution(
  plan: FederatedPlan,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  options: ExecuteOptions,
): Promise<Execution> {
  const { bound } = plan;
  // The system tables' copies are brought up to date only for a statement that reads them.
  if (bound.tables.some((t) => t.resolved.origin === 'system')) await registry.ensureSystemTables();
  for (const { resolved } of bound.tables)
    if (resolved.origin === 'native' && resolved.source) await registry.ensurePublished(resolved.source);
  const held = await statementConnection(runtime, options.signal);
  const { connection, engine, close } = held;
  const rename = renamer(bound.tables);
  const translateError = (err: unknown): unknown => {
    if (options.signal.aborted && (isInterrupt(err) || err === options.signal.reason)) return options.signal.reason;
    return engineError(err, rename, fileSourceOf(bound.tables)) ?? err;
  };
  try {
    const warnings: string[] = [];
    const sourceQueries: SourceQuery[] = [];
    const loads = { rescaled: false };
    // Tables of the engine under a row condition: copied with only the rows it lets through.
    for (const { resolved, loadName, rowCondition } of bound.tables) {
      if (resolved.origin === 'rows' || !loadName || !rowCondition) continue;
      await connection.run(
        `CREATE TEMP TABLE ${loadName} AS ${filteredSql({ schema: resolved.engineSchema, name: resolved.engineName }, resolved.table.name, rowCondition)}`,
      );
    }
    // Narrowing subqueries next, each into a table of its own; the statement then reads only those.
    await computeNarrowings(connection, plan, registry, options, sourceQueries, loads);
    // The logs, as this user may see them, on this statement's own connection.
    for (const { resolved, loadName, rowCondition } of bound.tables) {
      if (resolved.origin !== 'system' || !loadName || rowCondition) continue;
      const columns = resolved.table.columns.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ');
      await connection.run(`CREATE TEMP TABLE ${loadName} (${columns})`);
      const rows = await registry.volatileRows(resolved.table, options.user);
      for (let i = 0; i < rows.length; i += 500) {
        const values = rows
          .slice(i, i + 500)
          .map((row) => `(${row.map(literalOf).join(', ')})`)
          .join(', ');
        await connection.run(`INSERT INTO ${loadName} VALUES ${values}`);
      }
    }
    const planned = plan.statement;
    loads.rescaled ||= (await loadPlanned(connection, registry, planned, options, warnings, sourceQueries)).rescaled;
    await options.turn?.();
    const strip = planned.paddedUses.stripped;
    const tree = await withNumericValues(connection, planned.ast, (t) => engineSql(t, strip));
    // Nothing of the statement stays on the connection when it loaded nothing (no source rows,
    // narrowed copies or logs): the connection serves the next statement.
    held.reusable = plan.narrowings.length === 0 && bound.tables.every((t) => !t.loadName);
    const constant = held.reusable && bound.tables.every((t) => t.resolved.origin === 'system');
    await options.turn?.();
    // A long statement's SQL is written pass by pass, each pass in a turn of its own.
    const sql = options.turn
      ? await typedSql(connection, () => engineSqlPasses(tree, strip), { reusable: constant, turn: options.turn })
      : await typedSql(connection, () => engineSql(tree, strip), { reusable: constant });
    // Statements over no data, or over the system tables only, have the same columns until the
    // catalog changes: described once.
    const key = constant ? `${registry.generation}\u0000${sql}` : null;
    let columns = key ? options.learned?.get(key) : undefined;
    if (!columns) {
      columns = await describe(connection, sql);
      if (key) options.learned?.set(key, columns);
    }
    // Values decided a column's scale: the result says the types it has on every route (only
    // a decimal's can differ).
    const decimals = columns.some((c) => c.type.toString().includes('DECIMAL'));
    const declared =
      loads.rescaled && plan.asBound && decimals
        ? await declaredColumns({ ...bound, ast: plan.asBound }, columns, runtime, options.signal)
        : columns;
    return engineExecution(connection, sql, declared, { warnings, sourceQueries, translateError, close, engine, encoding: columns });
  } catch (err) {
    close();
    throw translateError(err);
  }
}

/**
 * The result's columns with the types the statement has over the catalog's types (those a
 * statement sent whole to PostgreSQL reports, source-execution.ts) where the loads' values made
 * a decimal's scale another: `columns` are the engine's types, with which the values are written.
 */
async function declaredColumns(
  bound: BoundStatement,
  columns: ResultColumn[],
  runtime: DuckRuntime,
  signal: AbortSignal,
): Promise<ResultColumn[]> {
  const catalog = await statementConnection(runtime, signal)
    .then(
      ({ connection, close }) => standInColumns(connection, bound).finally(close),
      () => null,
    )
    .catch(() => null);
  if (catalog?.length !== columns.length) return columns;
  // The same type but for the decimals' precision and scale (in lists and structs too).
  const shape = (type: ResultColumn['type']) => type.toString().replace(/DECIMAL\(\d+,\s*\d+\)/g, 'DECIMAL');
  return columns.map((column, i) => (shape(column.type) === shape(catalog[i]!.type) ? { ...column, type: catalog[i]!.type } : column));
}

/** An execution of engine SQL that needs no binding (procedure results, built by vdb itself). */
export async function openStaticExecution(
  runtime: DuckRuntime,
  sql: string,
  signal: AbortSignal,
  sourceQueries: SourceQuery[] = [],
): Promise<Execution> {
  const { connection, engine, close } = await statementConnection(runtime, signal);
  const translateError = (err: unknown) => engineError(err, (m) => m) ?? err;
  try {
    const columns = await describe(connection, sql);
    return engineExecution(connection, sql, columns, { warnings: [], sourceQueries, translateError, close, engine });
  } catch (err) {
    close();
    throw translateError(err);
  }
}

/** A statement's own engine connection; `close` gives it back (for reuse only if `reusable` was set). */
export interface StatementConnection {
  connection: DuckDBConnection;
  engine: EngineGeneration;
  /** Set when the statement leaves nothing on the connection (no temporary tables or views). */
  reusable: boolean;
  close: () => void;
}

/**
 * A connection of its own for one statement, interrupted when `signal` aborts; `close` ends both.
 * Its engine generation stays open until then, even when a newer one takes over.
 */
export async function statementConnection(runtime: DuckRuntime, signal: AbortSignal): Promise<StatementConnection> {
  const engine = runtime.current;
  engine.hold();
  let connection: DuckDBConnection;
  try {
    connection = await engine.acquire();
  } catch (err) {
    engine.release();
    throw err;
  }
  const { onAbort, stop } = interruptOnAbort(connection, signal);
  let closed = false;
  const statement: StatementConnection = {
    connection,
    engine,
    reusable: false,
    close: () => {
      if (closed) return;
      closed = true;
      stop();
      signal.removeEventListener('abort', onAbort);
      // An interrupted connection is not handed on: the interrupt could reach the next statement.
      engine.releaseConnection(connection, statement.reusable && !signal.aborted);
      engine.release();
    },
  };
  return statement;
}

/**
 * Interrupts the connection when `signal` aborts, and keeps interrupting until stopped: an
 * interrupt that arrives between two statements hits nothing, so one alone could be lost.
 */
function interruptOnAbort(connection: DuckDBConnection, signal: AbortSignal): { onAbort: () => void; stop: () => void } {
  let repeat: NodeJS.Timeout | null = null;
  const onAbort = () => {
    connection.interrupt();
    // Unref'd: a forgotten execution must not keep the process alive.
    repeat ??= setInterval(() => connection.interrupt(), 25).unref();
  };
  signal.addEventListener('abort', onAbort);
  if (signal.aborted) onAbort();
  return {
    onAbort,
    stop: () => {
      if (repeat) clearInterval(repeat);
    },
  };
}

/** The file source whose folder a failed read's message names. */
function fileSourceOf(tables: readonly BoundTable[]): (message: string) => string | null {
  return (message) => {
    for (const { resolved } of tables) {
      if (resolved.origin !== 'native' || !resolved.source) continue;
      const folder = resolved.source.connection.ParentDirectory;
      if (folder && message.includes(folder)) return resolved.source.name;
    }
    const natives = tables.filter((t) => t.resolved.origin === 'native');
    return natives.length === 1 && natives[0]!.resolved.origin === 'native' ? (natives[0]!.resolved.source?.name ?? null) : null;
  };
}

/** Turns engine relation names in messages back into schema.table. */
function renamer(tables: readonly BoundTable[]): (message: string) => string {
  const pairs: Array<[string, string]> = [];
  for (const { resolved, loadName } of tables) {
    const user = `${resolved.schema}.${resolved.table.name}`;
    if (loadName) pairs.push([loadName, user]);
    if (resolved.origin !== 'rows') pairs.push([`${resolved.engineSchema}.${resolved.engineName}`, user]);
  }
  return (message) =>
    pairs
      .reduce((text, [engine, user]) => text.split(engine).join(user), message)
      .replace(/\bsrc_\d+\./g, '')
      .replace(/__vdb_cte_/g, '');
}
