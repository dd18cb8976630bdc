/**
 * Runs a shipping plan (plan/ship.ts): the small table's rows are read from its source (its
 * pushed conditions) and written as array literals of their PostgreSQL types, and the statement,
 * now over PostgreSQL's tables alone, runs whole there. The arrays are written straight from the
 * source's rows where no value could change on its way through the engine (ship-arrays.ts);
 * otherwise the rows are loaded into the engine as any scan's (the catalog's types, warnings)
 * and the arrays read back from there. Returns null, so that the statement runs federated, when
 * the table turns out bigger than the limit, a value cannot go as text (a NUL character, a date
 * PostgreSQL writes differently), or PostgreSQL refuses the statement as such.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceRegistry } from '../../sources/registry.js';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { ColumnDef } from '../../catalog/types.js';
import { SourceUnreachableError, type RowConnector } from '../../connectors/types.js';
import { ApiError, messageOf, sourceFailed } from '../../errors.js';
import { ownStorageFailure } from '../../runtime/storage-errors.js';
import { quoteIdent, type DuckRuntime } from '../../runtime/duckdb.js';
import type { BoundedCache } from '../tree/statement-cache.js';
import type { ShippedRoute } from '../plan/choose.js';
import { shippedType, type ShippedTable, type ShippingPlan } from '../plan/ship.js';
import type { BoundTable } from '../access/bind.js';
import { loadRows, type SourceQuery } from './load.js';
import { NONE_USED } from '../plan/padded-uses.js';
import { ArrayBuilder } from './ship-arrays.js';
import { lookupRelation } from './ship-lookup.js';
import { readTogether } from './read-together.js';
import type { LookupKey } from '../plan/ship-lookup.js';
import type { ScanPlan } from '../plan/scans.js';
import { dialectOf } from '../../connectors/kinds.js';
import { statementConnection, type Execution } from './execute.js';
import { openWholeExecution, type WholeColumns } from './source-execution.js';

/** Text PostgreSQL's input functions read back as the value the engine wrote (other types: any text). */
const EXACT_TEXT: Record<string, string> = {
  date: '\\d{4}-\\d{2}-\\d{2}',
  bool: 'true|false',
};

/** SQL of a text value as an array element, quoted, `\` and `"` escaped (the engine's form of ship-arrays.ts's arrayElement). */
const quotedElementSql = (value: string) => `'"' || replace(replace(${value}, '\\', '\\\\'), '"', '\\"') || '"'`;

/**
 * The shipped table's rows as one array literal per column, with its cast; null when there are
 * more than `maxRows` or a value cannot go as text (a NUL character, text PostgreSQL would read
 * differently). The engine writes the literals itself (one row back): each element quoted, `\`
 * and `"` escaped, NULL unquoted; every column in the same row order (ordered by all columns:
 * rows that tie are equal), so that unnest puts each row back together.
 */
async function shippedArrays(
  connection: DuckDBConnection,
  loadName: string,
  columns: readonly ColumnDef[],
  source: { kind: string },
  maxRows: number,
): Promise<string[] | null> {
  const text = columns.map((c) => `CAST(${quoteIdent(c.name)} AS VARCHAR)`);
  const order = columns.map((c) => quoteIdent(c.name)).join(', ');
  const parts = columns.flatMap((column, i) => {
    const value = text[i]!;
    const exact = EXACT_TEXT[shippedType(column, source)!.replace(/\(.*$/, '')];
    const element = `CASE WHEN ${value} IS NULL THEN 'NULL' ELSE ${quotedElementSql(value)} END`;
    return [
      `coalesce(string_agg(${element}, ',' ORDER BY ${order}), '')`,
      `coalesce(bool_or(strpos(${value}, chr(0)) > 0${exact ? ` OR NOT regexp_full_match(${value}, '${exact}')` : ''}), false)`,
    ];
  });
  const reader = await connection.runAndReadAll(`SELECT count(*), ${parts.join(', ')} FROM ${loadName}`);
  const row = reader.getRows()[0]!;
  if (Number(row[0]) > maxRows) return null;
  const arrays: string[] = [];
  for (const [i, column] of columns.entries()) {
    if (row[2 + 2 * i] === true) return null;
    arrays.push(`'{${String(row[1 + 2 * i]).replace(/'/g, "''")}}'::${shippedType(column, source)!}[]`);
  }
  return arrays;
}

/**
 * The values of a loaded table's rows, one list per column, as ship-arrays.ts keeps them from a
 * source's rows: each value's text, null for NULL. Read after `shippedArrays` accepted every
 * value (the same casts).
 */
async function loadedValues(
  connection: DuckDBConnection,
  loadName: string,
  columns: readonly ColumnDef[],
): Promise<Array<Array<string | null>>> {
  const list = columns.map((column) => `CAST(${quoteIdent(column.name)} AS VARCHAR)`);
  const reader = await connection.runAndReadAll(`SELECT ${list.join(', ')} FROM ${loadName}`);
  const values: Array<Array<string | null>> = columns.map(() => []);
  for (const row of reader.getRows()) for (let i = 0; i < columns.length; i++) values[i]!.push(row[i] === null ? null : String(row[i]));
  return values;
}

/** The load's refusals of a value where it is read (load-scale.ts). */
const REFUSED_VALUE =
  /^Invalid Input Error: (The numeric column .* digits after the point|A numeric value of column .* more than 38 digits|A numeric NaN or Infinity)/;

/** A shipped table's source (its kind decides how a numeric without scale goes: plan/ship.ts). */
const NO_SOURCE = { kind: '' };
const sourceOf = (table: BoundTable) => (table.resolved.origin === 'rows' ? table.resolved.source : NO_SOURCE);

export interface ShipOptions {
  signal: AbortSignal;
  maxShippedRows: number;
  /** Dense integer keys go as a lookup array (ship-lookup.ts); false: always rows to join. */
  lookupArrays?: boolean;
  /** Result columns of shipped statements of a shape, as PostgreSQL described them. */
  learned?: { cache: BoundedCache<WholeColumns | null>; key: string };
}

/** Runs a shipped plan; null when it declines at run time (too many rows, PostgreSQL refuses): then the plan's `otherwise` runs. */
export async function openShippedExecution(
  route: ShippedRoute,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  options: ShipOptions,
): Promise<Execution | null> {
  // PostgreSQL refused statements of this shape before: not worth loading the small side for.
  if (options.learned?.cache.get(options.learned.key) === null) return null;
  const { shipping: plan, whole } = route;
  const target = dialectOf(whole.source);
  if (!target) return null;
  const quote = (name: string) => target.quoteIdentifier(name);
  // The shipped tables are read from their sources at the same time, the engine's (files) meanwhile.
  const mainKeys = plan.keyed.map((k) => k.keyIndex);
  const lookups = options.lookupArrays !== false;
  const read = await readTogether<ShippedRows | string[][]>(
    [
      (signal) =>
        shipTable({ table: plan.shipped, scan: plan.scan }, mainKeys, lookups && !!plan.lookup, registry, runtime, { ...options, signal }),
      ...plan.moreShipped.map(
        (more) => (signal: AbortSignal) => shipTable(more, [], lookups && !!more.lookup, registry, runtime, { ...options, signal }),
      ),
      (signal) => shipEngineTables(plan, registry, runtime, { ...options, signal }),
    ],
    options.signal,
  );
  if (read === null) return null;
  const shipped = read[0] as ShippedRows;
  const moreShipped = read.slice(1, -1) as ShippedRows[];
  const engineArrays = read[read.length - 1] as string[][];
  // Dense unique integer keys: the rows go as a lookup array (ship-lookup.ts), the keyed wrappers left out.
  const lookupOf = (key: LookupKey | null | undefined, table: BoundTable, scan: ScanPlan, read: ShippedRows) =>
    key && options.lookupArrays !== false && read.values ? lookupRelation(key, scan.columns, read.values, sourceOf(table), quote) : null;
  const engineRelations = [
    ...plan.moreShipped.map((more, i) => {
      const read = moreShipped[i]!;
      return [
        more.placeholder,
        lookupOf(more.lookup, more.table, more.scan, read) ?? shippedRelation(more.scan.columns, read.arrays()),
      ] as const;
    }),
    ...plan.engineTables.map((t, i) => [t.placeholder, shippedRelation(t.table.resolved.table.columns, engineArrays[i]!)] as const),
  ];
  const lookup = lookupOf(plan.lookup, plan.shipped, plan.scan, shipped);
  const lookupWhole = lookup && route.lookupWhole;
  let sql: string | null;
  if (lookup && lookupWhole) {
    sql = substitute(lookupWhole.sql, [[plan.placeholder, lookup], ...engineRelations]);
  } else {
    sql = substitute(whole.sql, [[plan.placeholder, shippedRelation(plan.scan.columns, shipped.arrays())], ...engineRelations]);
    const keyLists = plan.keyed.length > 0 ? shipped.keys() : [];
    for (const [i, keyed] of plan.keyed.entries()) {
      const keys = keyLists[i];
      const array = keys && target?.keyArray(keyed.column, keys);
      const split = sql?.split(`'${keyed.placeholder}'`);
      // Keys the source would not read as the column's type: the statement runs federated.
      if (!array || !split || split.length !== 2) return null;
      sql = split.join(array);
    }
  }
  if (sql === null) return null;
  const execution = await openWholeExecution({ ...whole, sql }, runtime, options.signal, options.learned);
  if (!execution) return null;
  // Index 0 is PostgreSQL's statement (openWholeExecution rewrites it when streaming).
  for (const table of [shipped, ...moreShipped]) {
    execution.sourceQueries.push(table.query);
    execution.warnings.push(...table.warnings);
  }
  return execution;
}

/** The relation of shipped rows written as arrays. */
function shippedRelation(columns: readonly ColumnDef[], arrays: readonly string[]): string {
  const names = columns.map((c) => `"${c.name.replace(/"/g, '""')}"`).join(', ');
  return `(SELECT * FROM unnest(${arrays.join(', ')}) AS shipped(${names}))`;
}

/** `sql` with each placeholder (named exactly once) replaced by its relation; null when one is not found once. */
function substitute(sql: string, relations: ReadonlyArray<readonly [string, string]>): string | null {
  for (const [placeholder, relation] of relations) {
    const parts = sql.split(placeholder);
    if (parts.length !== 2) return null;
    sql = parts.join(relation);
  }
  return sql;
}

/** A shipped table as read: its arrays and keys, written when asked for. */
interface ShippedRows {
  /** The array literals, written when asked for (the lookup form does not need them). */
  arrays: () => string[];
  /** The distinct keys of the keyed columns, computed when asked for (the lookup form does not need them). */
  keys: () => Array<string[] | undefined>;
  /** The rows' values, one list per column (ship-arrays.ts), where a lookup form was planned. */
  values?: Array<Array<string | null>>;
  query: SourceQuery;
  warnings: string[];
}

/**
 * Reads a shipped table from its source and writes its arrays: straight from the rows while
 * every value goes exactly as it came (ship-arrays.ts); from the first value that does not, the
 * rows are loaded into the engine as any scan's (its casts and warnings) and written from there.
 * Null when the table has more than `maxShippedRows` rows (the source's statement is then
 * cancelled at once) or a value cannot go as text.
 */
async function shipTable(
  { table, scan }: Pick<ShippedTable, 'table' | 'scan'>,
  keyIndexes: number[],
  /** Whether the rows' values are wanted (a lookup form is planned) also where they go through the engine's load. */
  wantValues: boolean,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  options: ShipOptions,
): Promise<ShippedRows | null> {
  const resolved = table.resolved as Extract<ResolvedTable, { origin: 'rows' }>; // planShipping ships row sources only
  const connector = registry.connectorOf(resolved.source) as RowConnector;
  const request = {
    table: resolved.table,
    columns: scan.columns,
    filter: scan.filter ?? undefined,
    orderBy: scan.orderBy,
    limit: scan.limit,
  };
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  const reading: Reading = { iterator: connector.scan({ ...request, signal })[Symbol.asyncIterator](), read: [], stop };
  // Under a row condition the rows go through the engine's load, which keeps only those it lets through.
  const builder = table.rowCondition ? null : ArrayBuilder.for(scan.columns, resolved.source);
  const direct = await readDirect(reading, builder, resolved.source.name, options);
  if (direct === 'too many') return null;
  if (direct === 'done' && builder) {
    return {
      arrays: () => builder.literals(),
      keys: () => keyIndexes.map((i) => [...builder.distinct(i)]),
      values: builder.values,
      query: { source: resolved.source.name, sql: connector.scanSql(request) },
      warnings: [],
    };
  }
  return shipThroughEngine(reading, { table, scan }, keyIndexes, wantValues, registry, runtime, options, signal);
}

/** A shipped table's scan being read: its iterator, the batches read so far, and what stops its source statement. */
interface Reading {
  iterator: AsyncIterator<unknown[][]>;
  read: unknown[][][];
  stop: AbortController;
}

/**
 * Reads the rows straight into the arrays while every value goes as it came: 'done' at the end,
 * 'too many' past maxShippedRows (the source's statement cancelled at once), 'engine' from the
 * first value that must go through the engine's load (or with no builder at all).
 */
async function readDirect(
  reading: Reading,
  builder: ArrayBuilder | null,
  sourceName: string,
  options: ShipOptions,
): Promise<'done' | 'too many' | 'engine'> {
  const { iterator, read, stop } = reading;
  let count = 0;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return builder ? 'done' : 'engine';
      count += next.value.length;
      if (count > options.maxShippedRows) {
        stop.abort();
        await iterator.return?.();
        return 'too many';
      }
      read.push(next.value);
      if (builder && !next.value.every((row) => builder.add(row))) return 'engine';
    }
  } catch (err) {
    await iterator.return?.().catch(() => undefined);
    if (options.signal.aborted) throw options.signal.reason;
    if (err instanceof ApiError) throw err;
    throw ownStorageFailure(err) ?? sourceFailed(sourceName, messageOf(err), err instanceof SourceUnreachableError);
  }
}

/**
 * The shipped table loaded into the engine as any scan's (its casts, warnings and row condition),
 * the rows read so far first, and its arrays written from there; null when a value cannot go.
 */
async function shipThroughEngine(
  { iterator, read, stop }: Reading,
  { table, scan }: Pick<ShippedTable, 'table' | 'scan'>,
  keyIndexes: number[],
  wantValues: boolean,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  options: ShipOptions,
  /** The scan's own signal: the statement's, or the scan stopped. */
  signal: AbortSignal,
): Promise<ShippedRows | null> {
  const resolved = table.resolved as Extract<ResolvedTable, { origin: 'rows' }>;
  async function* rows(): AsyncIterable<unknown[][]> {
    let finished = false;
    try {
      yield* read;
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          finished = true;
          return;
        }
        yield next.value;
      }
    } finally {
      // The load stopped early (an error): the source's statement is cancelled, its connection dropped.
      if (!finished) {
        stop.abort();
        await iterator.return?.().catch(() => undefined);
      }
    }
  }
  let held: Awaited<ReturnType<typeof statementConnection>>;
  try {
    held = await statementConnection(runtime, options.signal);
  } catch (err) {
    stop.abort();
    await iterator.return?.().catch(() => undefined);
    throw err;
  }
  try {
    // Its rows go to PostgreSQL as they are (a char(n) as bpchar, plan/ship.ts): only a row condition run here uses them.
    const loaded = await loadRows(held.connection, registry, scan, table.loadName, signal, null, rows(), undefined, undefined, NONE_USED);
    // A value the load refuses to write as text (a numeric of another scale, NaN, beyond 38
    // digits: load-scale.ts) does not go: the statement runs federated, where only what it reads counts.
    const arrays = await shippedArrays(held.connection, table.loadName, scan.columns, resolved.source, options.maxShippedRows).catch(
      (err: unknown) => {
        if (options.signal.aborted || !REFUSED_VALUE.test(err instanceof Error ? err.message : '')) throw err;
        return null;
      },
    );
    if (arrays === null) return null;
    const keys: string[][] = [];
    for (const i of keyIndexes) {
      const column = quoteIdent(scan.columns[i]!.name);
      const reader = await held.connection.runAndReadAll(
        `SELECT DISTINCT CAST(${column} AS VARCHAR) FROM ${table.loadName} WHERE ${column} IS NOT NULL`,
      );
      keys.push(reader.getRows().map((row) => String(row[0])));
    }
    // A lookup needs the rows' values: read back from the load, in the form the rows' would have.
    const values = wantValues ? await loadedValues(held.connection, table.loadName, scan.columns) : undefined;
    return { arrays: () => arrays, keys: () => keys, values, query: loaded.query, warnings: loaded.warnings };
  } finally {
    held.close();
  }
}

/** The arrays of the engine's tables shipped whole (files); null when one has too many rows or a value cannot go. */
async function shipEngineTables(
  plan: ShippingPlan,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  options: ShipOptions,
): Promise<string[][] | null> {
  if (plan.engineTables.length === 0) return [];
  for (const { table } of plan.engineTables) if (table.resolved.source) await registry.ensurePublished(table.resolved.source);
  const held = await statementConnection(runtime, options.signal);
  try {
    const all: string[][] = [];
    for (const { table } of plan.engineTables) {
      const { engineSchema, engineName } = table.resolved;
      const relation = `${quoteIdent(engineSchema)}.${quoteIdent(engineName)}`;
      const arrays = await shippedArrays(held.connection, relation, table.resolved.table.columns, NO_SOURCE, options.maxShippedRows);
      if (arrays === null) return null;
      all.push(arrays);
    }
    return all;
  } finally {
    held.close();
  }
}
