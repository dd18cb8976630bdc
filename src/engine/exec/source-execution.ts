/**
 * Statements a source runs whole: a source that speaks PostgreSQL writes the rows as JSON
 * itself; sources whose dialect has vdb write their whole SELECTs (MySQL/MariaDB, SQLite) run
 * the statements that mean the same there, and their rows are loaded into the engine, which
 * only encodes them.
 */
import { DuckDBTypeId } from '@duckdb/node-api';
import { UNCONSTRAINED_NUMERIC } from '../../connectors/postgres/types.js';
import { SourceUnreachableError, type StatementColumn, type WholeStatementConnector } from '../../connectors/types.js';
import { ApiError, messageOf, sourceFailed } from '../../errors.js';
import type { ResultColumn } from '../../results/json.js';
import type { BoundStatement } from '../front/bind.js';
import { describe, quoteIdent, type DuckRuntime } from '../../runtime/duckdb.js';
import { engineError } from './errors.js';
import { engineExecution, statementConnection, type Execution } from './execute.js';
import type { SourceQuery } from './load.js';
import { loadBatches, tryCast } from './load.js';
import { standInColumns } from './stand-ins.js';
import { NOT_DECIMAL } from './load-scale.js';
import type { SourceSelectPlan } from '../plan/route.js';
import type { WholePlan } from '../plan/whole.js';
import type { BoundedCache } from './statement-cache.js';

/**
 * Opens a statement that a MySQL/MariaDB or SQLite source runs whole: its rows are loaded into
 * the engine, which then only encodes them. The result's names and types are the engine's own
 * for the statement (described over empty stand-ins of the tables), so the answer looks the same
 * whichever side computed it. Returns null when the source cannot run it whole.
 */
export async function openSourceSelectExecution(
  bound: BoundStatement,
  planned: SourceSelectPlan,
  runtime: DuckRuntime,
  signal: AbortSignal,
  /** The engine's result columns of statements of a shape (statement-cache.ts). */
  learned?: { cache: BoundedCache<ResultColumn[]>; key: string },
): Promise<Execution | null> {
  const { source, connector, pushed } = planned;
  const { connection, engine, close } = await statementConnection(runtime, signal);
  try {
    let columns = learned?.cache.get(learned.key);
    if (!columns) {
      columns = await standInColumns(connection, bound);
      learned?.cache.set(learned.key, columns);
    }
    if (columns.length !== pushed.raws.length) {
      close();
      return null;
    }
    const loaded = await loadBatches(
      connection,
      '__vdb_statement',
      columns.map((c, i) => ({ type: engineTypeName(c.type), raw: pushed.raws[i]! })),
      connector.statementRows(pushed.sql, [], signal),
      signal,
    ).catch((err: unknown) => {
      throw signal.aborted
        ? signal.reason
        : err instanceof ApiError
          ? err
          : sourceFailed(source.name, messageOf(err), err instanceof SourceUnreachableError);
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
    described = await plan.connector.describeStatement(plan.sql);
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
        if (engine[i]!.type.typeId === DuckDBTypeId.DECIMAL) columns[i] = { ...columns[i]!, type: engine[i]!.type };
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
  const sourceQueries: SourceQuery[] = [{ source: source.name, sql: connector.statementJsonSql(sql, described, 'array', {}) }];
  return {
    columns,
    warnings: [],
    sourceQueries,
    stream(shape, window, options) {
      const copySql = connector.statementJsonSql(sql, described, shape, window);
      sourceQueries[0] = { source: source.name, sql: copySql };
      if (parameterized && connector.preparedStatementJson && connector.statementJsonSelect) {
        const select = connector.statementJsonSelect(parameterized.sql, described, shape, window);
        return preparedOrStreamed(connector, select, parameterized.values, copySql, signal, options.onRows);
      }
      return connector.streamStatementJson(copySql, signal, options.onRows);
    },
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
  copySql: string,
  signal: AbortSignal,
  onRows?: (count: number) => void,
): AsyncGenerator<string> {
  const rows = await connector.preparedStatementJson!(select, values, PREPARED_ROWS, signal).catch((err: unknown) => {
    // Refused as written with parameters (a place PostgreSQL takes only a constant): as written out, then.
    if (NOT_VALID_THERE.test((err as { code?: string }).code ?? '') && !signal.aborted) return null;
    throw err;
  });
  if (rows === null) {
    yield* connector.streamStatementJson(copySql, signal, onRows);
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
  return sourceFailed(source, messageOf(err), err instanceof SourceUnreachableError || /^(08|57P)/.test(code));
}
