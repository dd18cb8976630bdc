/**
 * Statements a source runs whole: a source that speaks PostgreSQL writes the rows as JSON
 * itself; sources whose dialect has vdb write their whole SELECTs (MySQL/MariaDB, SQLite) run
 * the statements that mean the same there, and their rows are loaded into the engine, which
 * only encodes them.
 */
import { DuckDBTypeId } from '@duckdb/node-api';
import { UNCONSTRAINED_NUMERIC } from '../../catalog/types.js';
import { SourceUnreachableError, type StatementColumn, type WholeStatementConnector } from '../../connectors/types.js';
import { ApiError, messageOf, sourceFailed } from '../../errors.js';
import { ownStorageFailure } from '../../runtime/storage-errors.js';
import { columnTypeName, type ResultColumn } from '../../results/json.js';
import type { BoundStatement } from '../access/bind.js';
import { describe, quoteIdent, type DuckRuntime } from '../../runtime/duckdb.js';
import { engineError } from './errors.js';
import { engineExecution, statementConnection, type Execution } from './execute.js';
import type { SourceQuery } from './load.js';
import type { RawType } from '../../connectors/types.js';
import { DECLINE, directEncoders, jsonString, rowJson, type ValueEncoder } from '../../results/direct-json.js';
import { loadBatches, tryCast } from './load.js';
import { standInColumns } from './stand-ins.js';
import { NOT_DECIMAL } from './load-scale.js';
import type { SourceSelectPlan } from '../plan/choose.js';
import type { WholePlan } from '../plan/whole.js';
import { BoundedCache } from '../tree/statement-cache.js';

/** Most rows of a result written without the engine; a larger result is loaded into it. */
export const DIRECT_ROWS = 2048;

/**
 * Rows written into one chunk of a direct result's stream: all of them, as the engine's first
 * chunk (2,048 rows) holds them. A row limit (maxRowsPerStatement) is then refused before the
 * first byte on both paths alike.
 */
const DIRECT_CHUNK_ROWS = DIRECT_ROWS + 1;

/**
 * Opens a statement that a MySQL/MariaDB or SQLite source runs whole. A result of at most
 * DIRECT_ROWS rows whose every value the direct encoder writes as the engine would
 * (direct-json.ts) is answered from the source's rows in JS, without the engine; any other is
 * loaded into the engine, which then only encodes it, from the rows already read (one round
 * trip either way). The result's names and types are the engine's own for the statement
 * (described over empty stand-ins of the tables, once per shape), so the answer looks the same
 * whichever side computed it. Returns null when the source cannot run it whole.
 */
export async function openSourceSelectExecution(
  bound: BoundStatement,
  planned: SourceSelectPlan,
  runtime: DuckRuntime,
  signal: AbortSignal,
  /** The engine's result columns of statements of a shape (statement-cache.ts). */
  learned?: { cache: BoundedCache<ResultColumn[]>; key: string },
  /** False: always the engine path (for diagnosis and the differential tests). */
  direct = true,
): Promise<Execution | null> {
  const { source, connector, pushed } = planned;
  let columns = learned?.cache.get(learned.key);
  if (!columns) {
    columns = await engineColumnsOf(bound, runtime, signal);
    learned?.cache.set(learned.key, columns);
  }
  if (columns.length !== pushed.raws.length) return null;
  const sourceQueries: SourceQuery[] = [{ source: source.name, sql: pushed.sql }];
  const failure = (err: unknown) =>
    signal.aborted
      ? signal.reason
      : err instanceof ApiError
        ? err
        : (ownStorageFailure(err) ?? sourceFailed(source.name, messageOf(err), err instanceof SourceUnreachableError));
  const rows = connector.statementRows(pushed.sql, [], signal)[Symbol.asyncIterator]();
  const encoders = direct && columns.every((c) => !CONTROL.test(c.name)) ? directEncoders(columns, pushed.raws) : null;
  if (!encoders) {
    return openLoadedExecution(columns, planned, replay([], rows), runtime, signal, failure).catch(async (err: unknown) => {
      await rows.return?.();
      throw err;
    });
  }
  const read: unknown[][] = [];
  let exhausted = false;
  try {
    while (read.length <= DIRECT_ROWS) {
      const next = await rows.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      for (const row of next.value) read.push(row);
    }
  } catch (err) {
    throw failure(err);
  }
  const texts = exhausted && read.length <= DIRECT_ROWS ? encodeRows(read, encoders) : null;
  if (texts) return directExecution(columns, read, texts, sourceQueries, runtime, signal, pushed.raws);
  return openLoadedExecution(columns, planned, replay(read, exhausted ? null : rows), runtime, signal, failure).catch(
    async (err: unknown) => {
      // Failed before the load read the rest (no engine connection): the source's statement ends.
      if (!exhausted) await rows.return?.();
      throw err;
    },
  );
}

/** Control characters in a column name: the engine's two JSON writers escape them differently (not written directly). */
const CONTROL = /\p{Cc}/u;

/** Each row's values as JSON texts, or null when one value is not written directly. */
function encodeRows(rows: readonly unknown[][], encoders: readonly ValueEncoder[]): string[][] | null {
  const texts: string[][] = new Array<string[]>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const values = new Array<string>(encoders.length);
    for (let i = 0; i < encoders.length; i++) {
      const text = encoders[i]!(row[i]);
      if (text === DECLINE) return null;
      values[i] = text;
    }
    texts[r] = values;
  }
  return texts;
}

/** The rows read so far, in one batch, then the rest of the source's (given back when the reader stops early). */
async function* replay(read: unknown[][], rest: AsyncIterator<unknown[][]> | null): AsyncGenerator<unknown[][]> {
  let done = rest === null;
  try {
    if (read.length > 0) yield read;
    while (!done) {
      const next = await rest!.next();
      done = next.done === true;
      if (!next.done) yield next.value;
    }
  } finally {
    // A load that failed or was cancelled: the source's statement ends and its connection is released.
    if (!done) await rest!.return?.();
  }
}

/**
 * A result answered without the engine: its rows' JSON texts, written per request shape and
 * window. Materializing it (a cursor) or reading it as text (INSERT ... SELECT) loads the same
 * rows into the engine, as the engine path does.
 */
function directExecution(
  columns: ResultColumn[],
  rows: unknown[][],
  texts: string[][],
  sourceQueries: SourceQuery[],
  runtime: DuckRuntime,
  signal: AbortSignal,
  raws: readonly RawType[],
): Execution {
  const engine = runtime.current;
  engine.hold();
  let closed = false;
  const loadColumns = columns.map((c, i) => ({ type: engineTypeName(c.type), raw: raws[i]! }));
  return {
    columns,
    warnings: [],
    sourceQueries,
    engine,
    direct: true,
    async *stream(shape, window, options) {
      const keys = shape === 'object' ? columns.map((c) => `${jsonString(c.name) as string}:`) : null;
      const start = Math.min(window.offset ?? 0, texts.length);
      const end = window.limit === undefined ? texts.length : Math.min(texts.length, start + window.limit);
      for (let i = start; i < end; i += DIRECT_CHUNK_ROWS) {
        if (options.cancelled?.()) throw signal.aborted ? signal.reason : new Error('the statement was cancelled');
        const stop = Math.min(end, i + DIRECT_CHUNK_ROWS);
        const chunk = new Array<string>(stop - i);
        for (let r = i; r < stop; r++) chunk[r - i] = rowJson(texts[r]!, keys);
        options.onRows?.(chunk.length);
        yield chunk.join(',');
      }
    },
    async materialize(table) {
      return engine.withConnection(async (connection) => {
        const loaded = await loadBatches(connection, `${table.replace(/\W/g, '_')}_load`, loadColumns, replay(rows, null), signal);
        await connection.run(`CREATE TABLE ${table} AS SELECT * FROM ${loaded.view}`);
        return rows.length;
      });
    },
    async *textRows() {
      const { connection, engine: textEngine, close } = await statementConnection(runtime, signal);
      try {
        const loaded = await loadBatches(connection, '__vdb_statement', loadColumns, replay(rows, null), signal);
        const execution = engineExecution(connection, `SELECT * FROM ${loaded.view}`, columns, {
          warnings: [],
          sourceQueries,
          translateError: (err) => err,
          close,
          engine: textEngine,
        });
        yield* execution.textRows();
      } finally {
        close();
      }
    },
    async engineRelations() {
      return [];
    },
    translateError: (err) => (signal.aborted ? signal.reason : err),
    close() {
      if (closed) return;
      closed = true;
      engine.release();
    },
  };
}

/** The engine path: the source's rows loaded into the engine, which encodes them (with the load's warnings). */
async function openLoadedExecution(
  columns: ResultColumn[],
  planned: SourceSelectPlan,
  batches: AsyncIterable<unknown[][]>,
  runtime: DuckRuntime,
  signal: AbortSignal,
  failure: (err: unknown) => unknown,
): Promise<Execution> {
  const { source, pushed } = planned;
  const { connection, engine, close } = await statementConnection(runtime, signal);
  try {
    const loaded = await loadBatches(
      connection,
      '__vdb_statement',
      columns.map((c, i) => ({ type: engineTypeName(c.type), raw: pushed.raws[i]! })),
      batches,
      signal,
    ).catch((err: unknown) => {
      throw failure(err);
    });
    const rename = (message: string) => message;
    const translateError = (err: unknown) => (signal.aborted ? signal.reason : (engineError(err, rename) ?? err));
    // Values the engine could not take: counted per result column that shows a table's column.
    const checked = columns
      .map((c, i) => ({ i, type: engineTypeName(c.type), origin: pushed.origins[i] }))
      .filter(({ i, type, origin }) => origin && pushed.raws[i] !== type);
    const warnings: string[] = loaded.lossy.flatMap((count, i) =>
      count > 0
        ? [
            `${pushed.origins[i] ?? `${source.name} result column ${i + 1}`}: ${count} value(s) did not fit ${pushed.raws[i]} and were converted lossy`,
          ]
        : [],
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
      engine,
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

/** A whole statement's result columns: as the source describes them, and in the engine's types. */
export interface WholeColumns {
  described: StatementColumn[];
  columns: ResultColumn[];
}

/** The engine's own result columns for a bound statement (described over empty stand-ins of its tables). */
export async function engineColumnsOf(bound: BoundStatement, runtime: DuckRuntime, signal: AbortSignal): Promise<ResultColumn[]> {
  const { connection, close } = await statementConnection(runtime, signal);
  try {
    return await standInColumns(connection, bound);
  } finally {
    close();
  }
}

/**
 * Asks the source for the statement's result columns; null when the statement is not valid there.
 * A numeric without declared scale (sum(x) of a numeric(10,2), say) takes the engine's type for
 * the statement when `engineColumns` can tell it, so that the types do not depend on the route.
 */
async function describeWhole(
  plan: WholePlan,
  runtime: DuckRuntime,
  signal: AbortSignal,
  engineColumns?: () => Promise<ResultColumn[]>,
): Promise<WholeColumns | null> {
  let described: StatementColumn[];
  try {
    described = await plan.connector.describeStatement(plan.sql, signal);
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (NOT_VALID_THERE.test(code)) return null;
    throw sourceError(plan.source.name, err, signal);
  }
  const types = await runtime.withConnection((connection) =>
    describe(connection, `SELECT ${described.map((c, i) => `CAST(NULL AS ${c.type}) AS c${i}`).join(', ') || '1'}`),
  );
  const columns = described.map((c, i) => ({ name: c.name, type: types[i]!.type }));
  const unconstrained = described.flatMap((c, i) => (c.type === UNCONSTRAINED_NUMERIC ? [i] : []));
  if (unconstrained.length > 0 && engineColumns) {
    // The engine may not know the statement (a function only PostgreSQL has): PostgreSQL's type then.
    const engine = await engineColumns().catch(() => null);
    if (engine?.length === columns.length) {
      for (const i of unconstrained)
        // A decimal of the engine's scale, or a numeric with a scale per value (numeric-values.ts).
        if (engine[i]!.type.typeId === DuckDBTypeId.DECIMAL || columnTypeName(engine[i]!.type) === 'NUMERIC')
          columns[i] = { ...columns[i]!, type: engine[i]!.type };
    }
  }
  return { described, columns };
}

/**
 * Opens a statement that a source runs whole. Returns null when the source refuses the
 * statement as such (unknown function, syntax): the caller then runs it in the engine.
 */
export async function openWholeExecution(
  plan: WholePlan,
  runtime: DuckRuntime,
  signal: AbortSignal,
  /** The result columns of statements of a shape, as the source described them (null: not valid there). */
  learned?: { cache: BoundedCache<WholeColumns | null>; key: string },
  /** The same statement with its constants as parameters (whole-template.ts), for a prepared statement. */
  parameterized?: { sql: string; values: string[] } | null,
  /** The engine's result columns for the statement, where it can tell them (describeWhole). */
  engineColumns?: () => Promise<ResultColumn[]>,
): Promise<Execution | null> {
  const { connector, source, sql } = plan;
  let known = learned?.cache.get(learned.key);
  if (known === undefined) {
    known = await describeWhole(plan, runtime, signal, engineColumns);
    learned?.cache.set(learned.key, known);
  }
  if (known === null) return null;
  const { described, columns } = known;
  const engine = runtime.current;
  engine.hold();
  const sourceQueries: SourceQuery[] = [{ source: source.name, sql: connector.statementJsonSql(sql, described, {}) }];
  return {
    columns,
    warnings: [],
    sourceQueries,
    streamsFromSource: true,
    stream(shape, window, options) {
      const copySql = connector.statementJsonSql(sql, described, window);
      sourceQueries[0] = { source: source.name, sql: copySql };
      const form = { columns: described, shape };
      if (parameterized && connector.preparedStatementJson && connector.statementJsonSelect) {
        const select = preparedSelect(connector, parameterized.sql, described, shape, window);
        return preparedOrStreamed(connector, select, parameterized.values, { sql: copySql, form }, signal, options.onRows);
      }
      return connector.streamStatementJson(copySql, form, signal, options.onRows);
    },
    ...(connector.statementCsvSql && connector.streamStatementCsv
      ? {
          streamCsv(window: { limit?: number; offset?: number }, options: { onRows?: (count: number) => void }) {
            const csvSql = connector.statementCsvSql!(sql, described, window);
            sourceQueries[0] = { source: source.name, sql: csvSql };
            return connector.streamStatementCsv!(csvSql, signal, options.onRows);
          },
        }
      : {}),
    engine,
    async materialize(table) {
      return engine.withConnection(async (connection) => {
        // A numeric without declared scale keeps PostgreSQL's text of each value, as the
        // statement's JSON does (NaN and the infinities as strings): stored as JSON.
        const unconstrained = described.map((c) => c.type === UNCONSTRAINED_NUMERIC && connector.statementRawType(c) === 'VARCHAR');
        const loaded = await loadBatches(
          connection,
          `${table.replace(/\W/g, '_')}_load`,
          described.map((c, i) => ({ type: unconstrained[i] ? 'VARCHAR' : c.type, raw: connector.statementRawType(c) })),
          connector.statementRows(sql, described, signal),
          signal,
        );
        const list = described.map((_, i) => {
          const c = quoteIdent(`c${i}`);
          return unconstrained[i]
            ? `CAST(CASE WHEN lower(${c}) IN ${NOT_DECIMAL} THEN '"' || ${c} || '"' ELSE ${c} END AS JSON) AS ${c}`
            : c;
        });
        await connection.run(`CREATE TABLE ${table} AS SELECT ${list.join(', ') || '*'} FROM ${loaded.view}`);
        const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${table}`);
        return Number(counted.getRows()[0]?.[0] ?? 0);
      });
    },
    async *textRows() {
      for await (const batch of connector.statementRows(sql, described, signal)) {
        yield batch.map((row) =>
          row.map((v) => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('hex') : String(v))),
        );
      }
    },
    translateError: (err) => (err instanceof ApiError ? err : sourceError(source.name, err, signal)),
    close: () => engine.release(),
  };
}

/**
 * The SELECTs of prepared statements, by the described columns, the parameterized text (the
 * same string each time, whole-template.ts) and the window: written once, not per request.
 */
const preparedSelects = new WeakMap<readonly StatementColumn[], Map<string, Map<string, string>>>();
const MAX_PREPARED_SELECTS = 1000;

function preparedSelect(
  connector: WholeStatementConnector,
  sql: string,
  described: readonly StatementColumn[],
  shape: 'array' | 'object',
  window: { limit?: number; offset?: number },
): string {
  let bySql = preparedSelects.get(described);
  if (!bySql) preparedSelects.set(described, (bySql = new Map()));
  let byWindow = bySql.get(sql);
  if (!byWindow) {
    if (bySql.size >= MAX_PREPARED_SELECTS) bySql.clear();
    bySql.set(sql, (byWindow = new Map()));
  }
  const windowKey = `${shape} ${window.limit ?? ''} ${window.offset ?? ''}`;
  let select = byWindow.get(windowKey);
  if (select === undefined) {
    select = connector.statementJsonSelect!(sql, described, shape, window);
    if (byWindow.size >= MAX_PREPARED_SELECTS) byWindow.clear();
    byWindow.set(windowKey, select);
  }
  return select;
}

/**
 * The prepared SELECTs a source refused with parameters (an untyped parameter it cannot type):
 * asked as written out from then on, not refused again each time (a refusal costs a connection).
 */
const refusedSelects = new WeakMap<WholeStatementConnector, BoundedCache<true>>();

/** Most rows read through a prepared statement; a result with more is streamed with COPY. */
const PREPARED_ROWS = 1000;

/**
 * A small result from the source's prepared statement in one round trip; a larger one (more
 * than PREPARED_ROWS rows), or one the source refuses with parameters, streamed with COPY as
 * written out, as any other.
 */
async function* preparedOrStreamed(
  connector: WholeStatementConnector,
  select: string,
  values: string[],
  copy: { sql: string; form: { columns: readonly StatementColumn[]; shape: 'array' | 'object' } },
  signal: AbortSignal,
  onRows?: (count: number) => void,
): AsyncGenerator<string> {
  let refused = refusedSelects.get(connector);
  const rows =
    refused?.peek(select) !== undefined
      ? null
      : await connector.preparedStatementJson!(select, values, PREPARED_ROWS, signal).catch((err: unknown) => {
          // Refused as written with parameters (a place PostgreSQL takes only a constant): as written out, then, from now on.
          if (!NOT_VALID_THERE.test((err as { code?: string }).code ?? '') || signal.aborted) throw err;
          if (!refused) refusedSelects.set(connector, (refused = new BoundedCache<true>(MAX_PREPARED_SELECTS)));
          refused.set(select, true);
          return null;
        });
  if (rows === null) {
    yield* connector.streamStatementJson(copy.sql, copy.form, signal, onRows);
    return;
  }
  onRows?.(rows.length);
  if (rows.length > 0) yield rows.join(',');
}

/** A source's failure as an API error: the statement's fault (400), cancelled, or the source's (502/503). */
function sourceError(source: string, err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (/^(22|42|23|2B|0A)/.test(code)) return new ApiError(400, 'Invalid query', messageOf(err), null);
  return ownStorageFailure(err) ?? sourceFailed(source, messageOf(err), err instanceof SourceUnreachableError || /^(08|57P)/.test(code));
}
