/**
 * Execution: loads what row-delivered sources must supply into the query's own engine
 * connection, turns the bound tree back into SQL, and prepares it to learn the result's columns.
 * The result itself is read by the caller (streamed, or materialised for pagination).
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { ResolvedTable, SourceRegistry } from '../catalog/sources.js';
import type { ColumnDef, SourceDef } from '../catalog/types.js';
import { SourceUnreachableError, type RawType, type RowConnector } from '../connectors/types.js';
import { ApiError, messageOf, sourceFailed } from '../errors.js';
import { aliasedRelation, jsonRowsSql, streamJsonRows, type ResultColumn, type RowShape, type StreamOptions } from '../results/json.js';
import type { BoundStatement, BoundTable } from './bind.js';
import { DuckRuntime, quoteIdent } from './duckdb.js';
import { engineSql } from './engine-dialect.js';
import { engineError, isInterrupt } from './errors.js';
import type { JoinGroup } from './join-pushdown.js';
import type { ScanPlan } from './plan.js';
import { planStatement } from './planner.js';
import { keyInList, type PredicateDialect } from './sql/dialects.js';
import { CannotPushDown } from './sql/predicate.js';
import { sourceSelect, type SourceSelect } from './sql/source-select.js';
import type { WholePlan } from './whole.js';
import type { StatementColumn } from '../connectors/postgres/json-rows.js';
import { rawTypeOfPostgres } from '../connectors/postgres/types.js';
import { PostgresConnector } from '../connectors/postgres/connector.js';

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
  /** Writes the whole result into the engine table `table` (columns c0..cn); returns its row count. */
  materialize(table: string): Promise<number>;
  /** The rows with every value as text (NULL as null), in batches: for writing to a source. */
  textRows(): AsyncGenerator<Array<string | null>[]>;
  /** Maps errors met while reading the result to API errors. */
  translateError(err: unknown): unknown;
  close(): void;
}

/** An execution whose result the engine computes from `sql` on `connection`. */
function engineExecution(
  connection: DuckDBConnection,
  sql: string,
  columns: ResultColumn[],
  rest: Pick<Execution, 'warnings' | 'sourceQueries' | 'translateError' | 'close'>,
): Execution {
  return {
    ...rest,
    columns,
    stream(shape, window, options) {
      let rowsSql = jsonRowsSql(aliasedRelation(sql, columns.length), columns, shape);
      if (window.limit !== undefined) rowsSql += ` LIMIT ${window.limit}`;
      if (window.offset !== undefined) rowsSql += ` OFFSET ${window.offset}`;
      return streamJsonRows(connection, rowsSql, options);
    },
    async *textRows() {
      // An end row (last column TRUE) tells a complete result from one cut short by an error.
      const list = columns.map((_, i) => `CAST(c${i} AS VARCHAR)`).join(', ');
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
    async materialize(table) {
      await connection.run(`CREATE TABLE ${table} AS SELECT * FROM ${aliasedRelation(sql, columns.length)}`);
      const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${table}`);
      return Number(counted.getRows()[0]?.[0] ?? 0);
    },
  };
}

export interface ExecuteOptions {
  signal: AbortSignal;
  /** Push projections and conditions to the sources (off: read whole tables). */
  pushdown: boolean;
  /** Dependent joins: most distinct keys sent to another source, and keys per statement. */
  dependentJoin: { maxKeys: number; batchSize: number };
}

/** A statement sent to a source, as EXPLAIN and the query log show it. */
export interface SourceQuery {
  source: string;
  sql: string;
}

export async function openExecution(
  bound: BoundStatement,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  options: ExecuteOptions,
): Promise<Execution> {
  await registry.ensureSystemTables(bound.tables.filter((t) => t.resolved.kind === 'system').map((t) => t.resolved.table));
  for (const { resolved } of bound.tables) if (resolved.kind === 'native') await registry.ensurePublished(resolved.source);
  const connection = await runtime.connect();
  const { onAbort, stop } = interruptOnAbort(connection, options.signal);
  const rename = renamer(bound.tables);
  const translateError = (err: unknown): unknown => {
    if (options.signal.aborted && (isInterrupt(err) || err === options.signal.reason)) return options.signal.reason;
    return engineError(err, rename, fileSourceOf(bound.tables)) ?? err;
  };
  const close = () => {
    stop();
    options.signal.removeEventListener('abort', onAbort);
    connection.closeSync();
  };
  try {
    const warnings: string[] = [];
    const sourceQueries: SourceQuery[] = [];
    const planned = planStatement(bound, registry, options.pushdown);
    const plans = planned.scans;
    // Joins among one source's own tables: one query to that source each.
    for (const group of planned.joins) {
      warnings.push(...(await loadJoinGroup(connection, group, options.signal)));
      sourceQueries.push({ source: group.source.name, sql: group.sql });
    }
    const loaded = new Set<string>();
    // Smaller tables first, so that their keys can narrow the bigger ones (dependent join).
    const order = [...plans.entries()].sort(([, a], [, b]) => estimate(a) - estimate(b));
    for (const [loadName, plan] of order) {
      const keyFilters = options.pushdown ? await dependentKeys(connection, registry, plan, loaded, options.dependentJoin) : null;
      const result = await loadRows(connection, registry, plan, loadName, options.signal, keyFilters);
      loaded.add(loadName);
      warnings.push(...result.warnings);
      sourceQueries.push(result.query);
    }
    options.signal.throwIfAborted();
    const sql = engineSql(planned.ast);
    const columns = await describe(connection, sql);
    return engineExecution(connection, sql, columns, { warnings, sourceQueries, translateError, close });
  } catch (err) {
    close();
    throw translateError(err);
  }
}

/** The statement in the dialect of the one MySQL/MariaDB or SQLite source it reads, if it can run there whole. */
export function planSourceSelect(bound: BoundStatement, registry: SourceRegistry): { source: SourceDef; connector: RowConnector; pushed: SourceSelect } | null {
  const first = bound.tables[0]?.resolved;
  if (!first || first.kind !== 'rows') return null;
  const source = first.source;
  if (!bound.tables.every((t) => t.resolved.kind === 'rows' && t.resolved.source === source)) return null;
  const connector = registry.connectorOf(source) as RowConnector;
  if (connector.kind !== 'mysql' && connector.kind !== 'sqlite') return null;
  const select = (bound.ast.stmts?.[0]?.stmt as Record<string, unknown> | undefined)?.SelectStmt as Record<string, unknown> | undefined;
  if (!select) return null;
  const tables = new Map(
    bound.tables.map((t) => [t.loadName, { ...t.resolved.table, label: `${t.resolved.schema}.${t.resolved.table.name}` }]),
  );
  try {
    return { source, connector, pushed: sourceSelect(select, connector, (relname) => tables.get(relname)) };
  } catch (err) {
    if (err instanceof CannotPushDown) return null;
    throw err;
  }
}

/**
 * Opens a statement that a MySQL/MariaDB or SQLite source runs whole: its rows are loaded into
 * the engine, which then only encodes them. The result's names and types are the engine's own
 * for the statement (described over empty stand-ins of the tables), so the answer looks the same
 * whichever side computed it. Returns null when the source cannot run it whole.
 */
export async function openSourceSelectExecution(
  bound: BoundStatement,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  signal: AbortSignal,
): Promise<Execution | null> {
  const planned = planSourceSelect(bound, registry);
  if (!planned) return null;
  const { source, connector, pushed } = planned;
  if (!connector.statementRows) return null;
  const connection = await runtime.connect();
  const { onAbort, stop } = interruptOnAbort(connection, signal);
  const close = () => {
    stop();
    signal.removeEventListener('abort', onAbort);
    connection.closeSync();
  };
  try {
    // The engine's own result columns for the statement, over empty stand-ins of the tables.
    for (const { loadName, resolved } of bound.tables) {
      const list = resolved.table.columns.map((c) => `CAST(NULL AS ${c.type}) AS ${quoteIdent(c.name)}`).join(', ');
      await connection.run(`CREATE TEMP VIEW ${loadName} AS SELECT ${list || 'NULL AS none'} WHERE FALSE`);
    }
    const columns = await describe(connection, engineSql(bound.ast));
    for (const { loadName } of bound.tables) await connection.run(`DROP VIEW ${loadName}`);
    if (columns.length !== pushed.raws.length) {
      close();
      return null;
    }
    const loaded = await loadBatches(
      connection,
      '__vdb_statement',
      columns.map((c, i) => ({ type: engineTypeName(c.type), raw: pushed.raws[i]! })),
      connector.statementRows(pushed.sql, signal),
      signal,
    ).catch((err: unknown) => {
      throw signal.aborted ? signal.reason : err instanceof ApiError ? err : sourceFailed(source.name, messageOf(err), err instanceof SourceUnreachableError);
    });
    const rename = (message: string) => message;
    const translateError = (err: unknown) => (signal.aborted ? signal.reason : (engineError(err, rename) ?? err));
    // Values the engine could not take: counted per result column that shows a table's column.
    const checked = columns
      .map((c, i) => ({ i, type: engineTypeName(c.type), origin: pushed.origins[i] }))
      .filter(({ i, type, origin }) => origin && pushed.raws[i] !== type);
    const warnings: string[] = loaded.lossy.flatMap((count, i) =>
      count > 0 ? [`${pushed.origins[i] ?? `${source.name} result column ${i + 1}`}: ${count} value(s) did not fit ${pushed.raws[i]} and were converted lossy`] : [],
    );
    if (checked.length > 0) {
      const counts = checked.map(({ i, type }) => `count(*) FILTER (WHERE c${i} IS NOT NULL AND ${tryCast(`c${i}`, type)} IS NULL)`);
      const row = (await connection.runAndReadAll(`SELECT ${counts.join(', ')} FROM ${loaded.rawName}`)).getRows()[0] ?? [];
      checked.forEach(({ type, origin }, k) => {
        const n = Number(row[k] ?? 0);
        if (n > 0) warnings.push(`${origin}: ${n} value(s) are not valid ${type} and were returned as NULL`);
      });
    }
    return engineExecution(connection, `SELECT * FROM ${loaded.view}`, columns, {
      warnings,
      sourceQueries: [{ source: source.name, sql: pushed.sql }],
      translateError,
      close,
    });
  } catch (err) {
    close();
    throw err;
  }
}

/** A result column's type as the engine spells it in a cast (JSON is an alias of VARCHAR). */
const engineTypeName = (type: ResultColumn['type']) => (type.alias === 'JSON' ? 'JSON' : type.toString());

/** Errors of PostgreSQL that say the statement is not valid there (then the engine runs it). */
const NOT_VALID_THERE = /^(42|0A)/;

/**
 * Opens a statement that a source runs whole. Returns null when the source refuses the
 * statement as such (unknown function, syntax): the caller then runs it in the engine.
 */
export async function openWholeExecution(plan: WholePlan, runtime: DuckRuntime, signal: AbortSignal): Promise<Execution | null> {
  const { connector, source, sql } = plan;
  let described: StatementColumn[];
  try {
    described = await connector.describeStatement(sql);
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (NOT_VALID_THERE.test(code)) return null;
    throw sourceError(source.name, err, signal);
  }
  const types = await runtime.withConnection((connection) =>
    describe(connection, `SELECT ${described.map((c, i) => `CAST(NULL AS ${c.type}) AS c${i}`).join(', ') || '1'}`),
  );
  const columns = described.map((c, i) => ({ name: c.name, type: types[i]!.type }));
  const sourceQueries: SourceQuery[] = [{ source: source.name, sql: connector.statementJsonSql(sql, described, 'array', {}) }];
  return {
    columns,
    warnings: [],
    sourceQueries,
    stream(shape, window, options) {
      const copySql = connector.statementJsonSql(sql, described, shape, window);
      sourceQueries[0] = { source: source.name, sql: copySql };
      return connector.streamStatementJson(copySql, signal, options.onRows);
    },
    async materialize(table) {
      return runtime.withConnection(async (connection) => {
        const loaded = await loadBatches(
          connection,
          `${table.replace(/\W/g, '_')}_load`,
          described.map((c) => ({ type: c.type, raw: rawTypeOfPostgres(c.type) })),
          connector.wholeStatementRows(sql, described, signal),
          signal,
        );
        await connection.run(`CREATE TABLE ${table} AS SELECT * FROM ${loaded.view}`);
        const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${table}`);
        return Number(counted.getRows()[0]?.[0] ?? 0);
      });
    },
    async *textRows() {
      for await (const batch of connector.wholeStatementRows(sql, described, signal)) {
        yield batch.map((row) => row.map((v) => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('hex') : String(v))));
      }
    },
    translateError: (err) => (err instanceof ApiError ? err : sourceError(source.name, err, signal)),
    close: () => undefined,
  };
}

/** A source's failure as an API error: the statement's fault (400), cancelled, or the source's (502/503). */
function sourceError(source: string, err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (/^(22|42|23|2B|0A)/.test(code)) return new ApiError(400, 'Invalid query', messageOf(err), null);
  return sourceFailed(source, messageOf(err), err instanceof SourceUnreachableError || /^(08|57P)/.test(code));
}

/** An execution of engine SQL that needs no binding (procedure results, built by vdb itself). */
export async function openStaticExecution(runtime: DuckRuntime, sql: string, signal: AbortSignal, sourceQueries: SourceQuery[] = []): Promise<Execution> {
  const connection = await runtime.connect();
  const { onAbort, stop } = interruptOnAbort(connection, signal);
  const close = () => {
    stop();
    signal.removeEventListener('abort', onAbort);
    connection.closeSync();
  };
  const translateError = (err: unknown) => engineError(err, (m) => m) ?? err;
  try {
    const columns = await describe(connection, sql);
    return engineExecution(connection, sql, columns, { warnings: [], sourceQueries, translateError, close });
  } catch (err) {
    close();
    throw translateError(err);
  }
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

export async function describe(connection: DuckDBConnection, sql: string): Promise<ResultColumn[]> {
  const prepared = await connection.prepare(sql);
  try {
    return Array.from({ length: prepared.columnCount }, (_, i) => ({ name: prepared.columnName(i), type: prepared.columnType(i) }));
  } finally {
    prepared.destroySync();
  }
}

/**
 * TRY_CAST of a raw value to `type`. Text to a wide decimal (more than 18 digits) is slow in the
 * engine (about 10 µs a value); through an 18-digit decimal it is fast, so values that fit take
 * that way and only the others the wide one. Both round the same way.
 */
function tryCast(expr: string, type: string): string {
  const wide = /^DECIMAL\((\d+),\s*(\d+)\)$/i.exec(type);
  if (wide && Number(wide[1]) > 18 && Number(wide[2]) <= 18) {
    return `COALESCE(TRY_CAST(${expr} AS DECIMAL(18,${wide[2]})), TRY_CAST(${expr} AS ${type}))::${type}`;
  }
  return `TRY_CAST(${expr} AS ${type})`;
}

/** Values arrive in a raw class; the load casts them to the column's type where they differ. */
const needsCast = (column: ColumnDef, raw: RawType | undefined) => raw !== column.type;

/**
 * Streams a table of a row-delivered source into a temporary table of the connection, in the
 * raw storage classes the connector hands over, then exposes it under `loadName` with each
 * column cast to its catalog type. Values that do not fit are NULL and reported as warnings.
 */
/** Loads the rows of a join that its source computed; returns the warnings of the load. */
async function loadJoinGroup(connection: DuckDBConnection, group: JoinGroup, signal: AbortSignal): Promise<string[]> {
  const { connector, source } = group;
  const rows =
    connector instanceof PostgresConnector
      ? connector.wholeStatementRows(
          group.sql,
          group.columns.map((c) => ({ name: c.name, sourceType: c.column.type, type: c.column.type })),
          signal,
        )
      : connector.statementRows!(group.sql, signal);
  try {
    const loaded = await loadBatches(
      connection,
      group.loadName,
      group.columns.map((c) => ({ name: c.name, type: c.column.type, raw: c.raw })),
      rows,
      signal,
    );
    return loaded.lossy.flatMap((count, i) =>
      count > 0 ? [`${source.name}.${group.columns[i]!.column.name}: ${count} value(s) did not fit ${group.columns[i]!.raw} and were converted lossy`] : [],
    );
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof ApiError) throw err;
    throw sourceFailed(source.name, messageOf(err), err instanceof SourceUnreachableError);
  }
}

/** A load's size estimate for ordering: the source's row estimate, unknown last. */
function estimate(plan: ScanPlan): number {
  const cardinality = plan.bound.resolved.table.cardinality;
  return cardinality === null ? Number.MAX_SAFE_INTEGER : cardinality;
}

/**
 * Dependent join: when a table joins (equi-join) a table already loaded whose distinct keys are
 * few enough, the scan asks only for those keys, `key IN (...)` in batches. Returns the
 * filters of the batches (one scan each), or null to scan without.
 */
async function dependentKeys(
  connection: DuckDBConnection,
  registry: SourceRegistry,
  plan: ScanPlan,
  loaded: ReadonlySet<string>,
  limits: ExecuteOptions['dependentJoin'],
): Promise<string[] | null> {
  const resolved = plan.bound.resolved;
  if (resolved.kind !== 'rows') return null;
  const connector = registry.connectorOf(resolved.source) as RowConnector;
  if (!connector.capabilities.filters) return null;
  let best: string[] | null = null;
  for (const dependency of plan.dependencies) {
    if (!loaded.has(dependency.from)) continue;
    const column = quoteIdent(dependency.fromColumn.name);
    const reader = await connection.runAndReadAll(
      `SELECT DISTINCT CAST(${column} AS VARCHAR) AS k FROM ${dependency.from} WHERE ${column} IS NOT NULL ORDER BY k LIMIT ${limits.maxKeys + 1}`,
    );
    const keys = reader.getRows().map((row) => String(row[0]));
    if (keys.length > limits.maxKeys) continue;
    // Batches must not overlap at the source: where text matches loosely (MySQL's
    // case-insensitive IN), two batches could return the same row twice. Then: one batch only.
    const loose = connector.kind === 'mysql' && dependency.column.type === 'VARCHAR';
    if (loose && keys.length > limits.batchSize) continue;
    const batches: string[] = [];
    for (let i = 0; i < Math.max(keys.length, 1); i += limits.batchSize) {
      const filter = keyInList(connector.kind as PredicateDialect, dependency.column, keys.slice(i, i + limits.batchSize));
      if (filter === null) break;
      batches.push(filter);
    }
    if (batches.length === Math.max(1, Math.ceil(keys.length / limits.batchSize)) && (best === null || keys.length < best.length)) best = batches;
  }
  return best;
}

async function loadRows(
  connection: DuckDBConnection,
  registry: SourceRegistry,
  plan: ScanPlan,
  loadName: string,
  signal: AbortSignal,
  keyFilters: string[] | null = null,
): Promise<{ warnings: string[]; query: SourceQuery }> {
  const resolved = plan.bound.resolved as Extract<ResolvedTable, { kind: 'rows' }>;
  const connector = registry.connectorOf(resolved.source) as RowConnector;
  const columns = plan.columns;
  // The loaded relation: the columns read, then any partial aggregates (as text, cast on load).
  const loadColumns: ColumnDef[] = [
    ...columns,
    ...(plan.aggregates ?? []).map((a, i) => ({ name: a.alias, nameInSource: a.alias, type: a.type, nullable: true, position: columns.length + i + 1 })),
  ];
  const withKeys = (keys: string) => (plan.filter ? `${plan.filter} AND (${keys})` : `(${keys})`);
  const requests = (keyFilters ?? [null]).map((keys) => ({
    table: resolved.table,
    columns,
    aggregates: plan.aggregates,
    orderBy: plan.orderBy,
    limit: plan.limit,
    filter: keys === null ? (plan.filter ?? undefined) : withKeys(keys),
  }));
  const first = connector.scanSql(requests[0]!);
  const query = {
    source: resolved.source.name,
    sql: requests.length > 1 ? `${first} -- and ${requests.length - 1} more batch(es) of keys` : first,
  };
  async function* scans(): AsyncIterable<unknown[][]> {
    for (const request of requests) yield* connector.scan({ ...request, signal });
  }
  const rawTypes: RawType[] = [...columns.map((c) => connector.rawType(c)), ...(plan.aggregates ?? []).map((): RawType => 'VARCHAR')];
  let loaded: Loaded;
  try {
    loaded = await loadBatches(
      connection,
      loadName,
      loadColumns.map((c, i) => ({ name: c.name, type: c.type, raw: rawTypes[i]! })),
      scans(),
      signal,
    );
  } catch (err) {
    // A cancelled source statement fails with its driver's error; the cause is the cancel.
    if (signal.aborted) throw signal.reason;
    if (err instanceof ApiError) throw err;
    throw sourceFailed(resolved.source.name, messageOf(err), err instanceof SourceUnreachableError);
  }
  const warnings = [
    ...loaded.lossy.map((count, i) => lossyWarning(resolved, loadColumns[i], count, rawTypes[i])),
    ...(await castWarnings(connection, resolved, loadColumns, rawTypes, loaded.rawName, connector)),
  ].filter((w): w is string => w !== null);
  return { warnings, query };
}

interface Loaded {
  /** The view with the cast values (the load name). */
  view: string;
  rawName: string;
  /** Per column: values that did not fit their raw class. */
  lossy: number[];
}

/**
 * Appends batches of rows to a temporary table of the connection, in the raw classes given,
 * and exposes them under `loadName` as a view that casts each column to its type (TRY_CAST:
 * what does not fit becomes NULL). Columns are named as given, or c0..cn.
 */
async function loadBatches(
  connection: DuckDBConnection,
  loadName: string,
  columns: ReadonlyArray<{ name?: string; type: string; raw: RawType }>,
  batches: AsyncIterable<unknown[][]>,
  signal: AbortSignal,
): Promise<Loaded> {
  const rawName = `${loadName}_raw`;
  const rawColumns = columns.map((c, i) => `c${i} ${c.raw}`).join(', ');
  await connection.run(`CREATE TEMP TABLE ${rawName} (${rawColumns || 'c0 INTEGER'})`);
  const appender = await connection.createAppender(rawName, 'main', 'temp');
  const lossy = new Array<number>(columns.length).fill(0);
  for await (const batch of batches) {
    signal.throwIfAborted();
    for (const row of batch) {
      for (let i = 0; i < columns.length; i++) {
        if (!appendValue(appender, columns[i]!.raw, row[i])) lossy[i]! += 1;
      }
      appender.endRow();
    }
  }
  appender.closeSync();
  const select = columns
    .map((c, i) => `${c.raw !== c.type ? tryCast(`c${i}`, c.type) : `c${i}`} AS ${quoteIdent(c.name ?? `c${i}`)}`)
    .join(', ');
  await connection.run(`CREATE TEMP VIEW ${loadName} AS SELECT ${select || 'NULL AS none'} FROM ${rawName}`);
  return { view: loadName, rawName, lossy };
}

function lossyWarning(resolved: ResolvedTable, column: ColumnDef | undefined, count: number, raw: RawType | undefined): string | null {
  if (!column || count === 0) return null;
  return `${resolved.schema}.${resolved.table.name}.${column.name}: ${count} value(s) did not fit ${raw} and were converted lossy (NULL or rounded)`;
}

/** Counts values that the load casts turned into NULL. */
async function castWarnings(
  connection: DuckDBConnection,
  resolved: ResolvedTable,
  columns: readonly ColumnDef[],
  rawTypes: readonly RawType[],
  rawName: string,
  connector: RowConnector,
): Promise<string[]> {
  const cast = columns
    .map((c, i) => ({ c, i }))
    .filter(({ c, i }) => needsCast(c, rawTypes[i]) && (connector.castMayFail?.(c) ?? true));
  if (cast.length === 0) return [];
  const counts = cast
    .map(({ c, i }) => `count(*) FILTER (WHERE c${i} IS NOT NULL AND ${tryCast(`c${i}`, c.type)} IS NULL)`)
    .join(', ');
  const reader = await connection.runAndReadAll(`SELECT ${counts} FROM ${rawName}`);
  const row = reader.getRows()[0] ?? [];
  return cast
    .map(({ c }, k) => ({ c, n: Number(row[k] ?? 0) }))
    .filter(({ n }) => n > 0)
    .map(({ c, n }) => `${resolved.schema}.${resolved.table.name}.${c.name}: ${n} value(s) are not valid ${c.type} and were returned as NULL`);
}

/** Appends one value in the column's raw class; returns false when the value did not fit. */
function appendValue(appender: DuckDBAppender, raw: RawType, value: unknown): boolean {
  if (value === null || value === undefined) {
    appender.appendNull();
    return true;
  }
  switch (raw) {
    case 'BIGINT':
      if (typeof value === 'bigint') appender.appendBigInt(value);
      else if (typeof value === 'number' && Number.isInteger(value)) appender.appendBigInt(BigInt(value));
      else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) appender.appendBigInt(BigInt(value.trim()));
      else if (typeof value === 'number' && Number.isFinite(value)) {
        appender.appendBigInt(BigInt(Math.round(value)));
        return false;
      } else {
        appender.appendNull();
        return false;
      }
      return true;
    case 'DOUBLE':
      if (typeof value === 'number') appender.appendDouble(value);
      else if (typeof value === 'bigint') {
        appender.appendDouble(Number(value));
        return BigInt(Number(value)) === value;
      } else if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
        appender.appendDouble(Number(value));
      } else {
        appender.appendNull();
        return false;
      }
      return true;
    case 'VARCHAR':
      if (typeof value === 'string') appender.appendVarchar(value);
      else if (typeof value === 'number' || typeof value === 'bigint') appender.appendVarchar(String(value));
      else if (value instanceof Uint8Array) {
        appender.appendVarchar(Buffer.from(value).toString('utf8'));
        return false;
      } else {
        appender.appendVarchar(String(value));
      }
      return true;
    case 'BLOB':
      if (value instanceof Uint8Array) appender.appendBlob(value);
      else appender.appendBlob(Buffer.from(String(value), 'utf8'));
      return true;
  }
}

/** The file source whose folder a failed read's message names. */
function fileSourceOf(tables: readonly BoundTable[]): (message: string) => string | null {
  return (message) => {
    for (const { resolved } of tables) {
      if (resolved.kind !== 'native') continue;
      const folder = resolved.source.connection.ParentDirectory;
      if (folder && message.includes(folder)) return resolved.source.name;
    }
    const natives = tables.filter((t) => t.resolved.kind === 'native');
    return natives.length === 1 && natives[0]!.resolved.kind === 'native' ? natives[0]!.resolved.source.name : null;
  };
}

/** Turns engine relation names in messages back into schema.table. */
function renamer(tables: readonly BoundTable[]): (message: string) => string {
  const pairs: Array<[string, string]> = [];
  for (const { resolved, loadName } of tables) {
    const user = `${resolved.schema}.${resolved.table.name}`;
    if (loadName) pairs.push([loadName, user]);
    if (resolved.kind !== 'rows') pairs.push([`${resolved.engineSchema}.${resolved.engineName}`, user]);
  }
  return (message) => pairs.reduce((text, [engine, user]) => text.split(engine).join(user), message).replace(/\bsrc_\d+\./g, '');
}
