/**
 * Loading source rows into the engine: batches appended in the raw classes connectors hand
 * over, then cast to the catalog's types by a view (values that do not fit become NULL and are
 * counted for the SQL-Warnings header); scans with their pushed parts, dependent-join key
 * lists, and joins computed by a source.
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SourceRegistry } from '../../sources/registry.js';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { ColumnDef } from '../../catalog/types.js';
import { keyLookup, type EarlyKeys } from './early-keys.js';
import { lookupMinKeys } from '../plan/key-lookup.js';
import { SourceUnreachableError, type KeyLookup, type RawType, type RowConnector } from '../../connectors/types.js';
import { ApiError, messageOf, sourceFailed } from '../../errors.js';
import { ownStorageFailure } from '../../runtime/storage-errors.js';
import type { Node } from '@pgsql/types';
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import { filteredSql } from '../translate/engine-dialect.js';
import { exclusive } from './connection-lock.js';
import type { JoinGroup } from '../plan/join-pushdown.js';
import type { ScanPlan } from '../plan/scans.js';
import type { ScaleUses } from '../plan/scale-uses.js';
import { comparesAsChar, paddedChar, scaleFromValues, sourceTypeUnknown } from '../../connectors/kinds.js';
import { ALL_USED, conditionUses, type PaddedUses } from '../plan/padded-uses.js';
import { paddedRefusal, refusePadded, type PaddedColumn, type PaddedKind } from './load-padding.js';
import { columnScales, NOT_DECIMAL, scaledCast, scaledType, type ColumnScales, type ScaledColumn } from './load-scale.js';

/** A statement sent to a source, as EXPLAIN and the query log show it. */
export interface SourceQuery {
  source: string;
  sql: string;
}

/** Dependent joins: most distinct keys sent to another source, and keys per statement. */
export interface DependentJoinLimits {
  maxKeys: number;
  batchSize: number;
  /** Keys go as a lookup to sources that take one (default true; plan/key-lookup.ts). */
  keyLookups?: boolean;
}

/**
 * TRY_CAST of a raw value to `type`. Text to a wide decimal (more than 18 digits) is slow in the
 * engine (about 10 µs a value); through an 18-digit decimal it is fast, so values that fit take
 * that way and only the others the wide one. Both round the same way.
 */
export function tryCast(expr: string, type: string): string {
  const wide = /^DECIMAL\((\d+),\s*(\d+)\)$/i.exec(type);
  if (wide && Number(wide[1]) > 18 && Number(wide[2]) <= 18) {
    return `COALESCE(TRY_CAST(${expr} AS DECIMAL(18,${wide[2]})), TRY_CAST(${expr} AS ${type}))::${type}`;
  }
  if (BC_TYPES.test(type)) return `TRY_CAST(${bcInput(expr)} AS ${type})`;
  return `TRY_CAST(${expr} AS ${type})`;
}

/** Types whose text may hold a year before 1. */
const BC_TYPES = /^(DATE|TIMESTAMP|TIMESTAMPTZ|TIMESTAMP WITH TIME ZONE)$/i;

/**
 * Text of a date or timestamp as the engine reads it: PostgreSQL writes a year before 1 as
 * "0044-03-15 10:00:00+00 BC", which the engine reads as year 44 AD (a date) or not at all (a
 * timestamp); it reads "0044-03-15 (BC) 10:00:00+00". Other text goes as it is.
 */
function bcInput(expr: string): string {
  const text = `${expr}::VARCHAR`;
  return `CASE WHEN suffix(${text}, ' BC') THEN regexp_replace(${text}, '^(\\S+)(.*) BC$', '\\1 (BC)\\2') ELSE ${text} END`;
}

/**
 * The load's cast of a raw value to its column's type. Numeric NaN and infinities fail the
 * statement when they are read (a refusal; PostgreSQL would answer them): refused at load time,
 * a row that the statement filters out later would fail it too (conditions reach sources as
 * supersets), and as NULL the answer would differ from PostgreSQL's.
 */
function loadCast(expr: string, type: string, raw: RawType, column: string, holdsNotDecimal: boolean): string {
  const cast = tryCast(expr, type);
  // Only where such a value was loaded: the engine may reorder the rows of a view that can fail
  // (a paginated result is stored in the order its view gives).
  if (!holdsNotDecimal || !checksNotDecimal(type, raw)) return cast;
  const message = `A numeric NaN or Infinity (column ${column}) is not supported by vdb's engine: its DECIMAL holds neither; leave such rows out at the source or read the column as float8 there (a view).`;
  // The check runs only for values the cast turned into NULL.
  return `COALESCE(${cast}, CASE WHEN lower(${expr}) IN ${NOT_DECIMAL} THEN error(${sqlLiteral(message)}) END)`;
}

/** Text loaded for a DECIMAL: the load checks it for NaN and infinities. */
const checksNotDecimal = (type: string, raw: RawType) => raw === 'VARCHAR' && /^DECIMAL/i.test(type);

/** Per column, whether it is checked for NaN and infinities and a loaded value is one (one pass over the raw rows). */
async function notDecimalsOf(
  connection: DuckDBConnection,
  rawName: string,
  columns: ReadonlyArray<{ type: string; raw: RawType }>,
): Promise<boolean[]> {
  const checked = columns.flatMap((c, i) => (c.raw !== c.type && checksNotDecimal(c.type, c.raw) ? [i] : []));
  const found = columns.map(() => false);
  if (checked.length === 0) return found;
  const list = checked.map((i) => `bool_or(lower(c${i}) IN ${NOT_DECIMAL})`).join(', ');
  const reader = await exclusive(connection, () => connection.runAndReadAll(`SELECT ${list} FROM ${rawName}`));
  const row = reader.getRows()[0] ?? [];
  checked.forEach((i, k) => (found[i] = row[k] === true));
  return found;
}

/** Values arrive in a raw class; the load casts them to the column's type where they differ. */
const needsCast = (column: ColumnDef, raw: RawType | undefined) => raw !== column.type;

/**
 * Whether a loaded column is a numeric whose values' text decides the type it is loaded as
 * (load-scale.ts): one whose values carry their own scale at the source, arriving as text.
 */
const scaledByValues = (source: { kind: string }, type: string, raw: RawType | undefined) =>
  scaleFromValues({ type }, source) && raw === 'VARCHAR';

/** A load column, and what its scale follows; `uses` unknown: shown. */
const scaledBy = (label: string, column: string, name: string, uses: ScaleUses | undefined): ScaledColumn => ({
  label,
  column,
  shown: uses?.shown(name) ?? true,
});

/**
 * Whether a loaded column's values are checked for trailing spaces where the statement uses it
 * (exec/load-padding.ts), and as what: a char(n), a column that may be one, or a varchar that
 * the statement may compare with one.
 */
function paddedKind(column: ColumnDef, source: { kind: string }, padding: PaddedUses): PaddedKind | null {
  if (paddedChar(column, source)) return sourceTypeUnknown(column) ? 'unknown' : 'char';
  return padding.varchar && comparesAsChar(column, source) ? 'varchar' : null;
}

/** Loads the rows of a join that its source computed; returns the warnings of the load. */
export async function loadJoinGroup(
  connection: DuckDBConnection,
  group: JoinGroup,
  signal: AbortSignal,
  uses?: ScaleUses,
  /** How the statement uses the columns beyond showing them (char(n) padding); unknown: every column used. */
  padding: PaddedUses = ALL_USED,
): Promise<{ warnings: string[]; rescaled: boolean }> {
  const { connector, source } = group;
  // char(n) columns the statement uses beyond showing them: their loaded values are checked for padding.
  const padded = group.columns.flatMap((c, i) => {
    const kind = paddedKind(c.column, source, padding);
    return kind && (padding.used(c.column.name) || padding.used(c.name))
      ? [{ expr: `c${i}`, label: `${c.alias}.${c.column.name}`, kind }]
      : [];
  });
  if (padded.length > 0 && padding.paddedConstant()) throw paddedRefusal(padded[0]!);
  const rows = connector.statementRows(
    group.sql,
    group.columns.map((c) => ({ name: c.name, sourceType: c.column.type, type: c.column.type })),
    signal,
  );
  try {
    const loaded = await loadBatches(
      connection,
      group.loadName,
      group.columns.map((c) => ({
        name: c.name,
        type: c.column.type,
        raw: c.raw,
        scaled: scaledByValues(source, c.column.type, c.raw)
          ? scaledBy(`${c.alias}.${c.column.name}`, c.column.name, c.name, uses)
          : undefined,
      })),
      rows,
      signal,
    );
    await refusePadded(connection, loaded.rawName, padded);
    const warnings = loaded.lossy.flatMap((count, i) =>
      count > 0
        ? [
            `${source.name}.${group.columns[i]!.column.name}: ${count} value(s) did not fit ${group.columns[i]!.raw} and were converted lossy`,
          ]
        : [],
    );
    return { warnings, rescaled: loaded.rescaled };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof ApiError) throw err;
    // The engine's spill folder filling up while rows load is vdb's failure, not the source's.
    throw ownStorageFailure(err) ?? sourceFailed(source.name, messageOf(err), err instanceof SourceUnreachableError);
  }
}

/** Key types whose text holds no comma: their keys come back from the engine as one string. */
const COMMA_FREE = /^(SMALLINT|INTEGER|BIGINT|HUGEINT|DECIMAL\(\d+,\s*\d+\)|DATE)$/;

/**
 * The distinct non-NULL keys of a loaded column as text, in the column's own order (numbers as
 * numbers, so that the SQL sent reads naturally); at most `maxKeys` + 1 of them.
 */
async function distinctKeys(connection: DuckDBConnection, load: string, column: ColumnDef, maxKeys: number): Promise<string[]> {
  const name = quoteIdent(column.name);
  const distinct = `SELECT DISTINCT ${name} AS k FROM ${load} WHERE ${name} IS NOT NULL`;
  if (COMMA_FREE.test(column.type)) {
    // One string instead of a row per key: a fraction of the time for many keys.
    const reader = await exclusive(connection, () =>
      connection.runAndReadAll(`SELECT string_agg(CAST(k AS VARCHAR), ',' ORDER BY k) FROM (${distinct} LIMIT ${maxKeys + 1})`),
    );
    const joined = reader.getRows()[0]?.[0];
    return joined === null || joined === undefined ? [] : String(joined).split(',');
  }
  const reader = await exclusive(connection, () =>
    connection.runAndReadAll(`SELECT CAST(k AS VARCHAR) FROM (${distinct}) ORDER BY k LIMIT ${maxKeys + 1}`),
  );
  return reader.getRows().map((row) => String(row[0]));
}

/** The keys of `dependency` as a key lookup (key-lookup.ts) where there are enough of them for one to pay; else undefined. */
function lookupOf(plan: ScanPlan, dependency: ScanPlan['dependencies'][number], keys: readonly string[]): KeyLookup | undefined {
  const minKeys = lookupMinKeys(plan.bound.resolved.table, dependency.column, dependency.fromColumn);
  return (minKeys !== null && keys.length >= minKeys ? keyLookup(keys) : null) ?? undefined;
}

/** Keys a scan of distinct keys asks its source about in one statement, each kept where it has a row (ScanPlan.probe). */
export interface ProbedKeys {
  probe: readonly string[];
}

/**
 * Dependent join: when a table joins (equi-join) a table already loaded whose distinct keys are
 * few enough, the scan asks only for those keys (the dialect's keyFilters, or one probe of them
 * all). Returns the filters of the batches (one scan each), the keys probed, or null to scan without.
 */
export async function dependentKeys(
  connection: DuckDBConnection,
  registry: SourceRegistry,
  plan: ScanPlan,
  loaded: ReadonlySet<string>,
  limits: DependentJoinLimits,
  /** Keys already collected from a load's rows, by load and column name (early-keys.ts). */
  early?: ReadonlyMap<string, ReadonlyMap<string, string[] | null>>,
): Promise<string[] | ProbedKeys | null> {
  const resolved = plan.bound.resolved;
  if (resolved.origin !== 'rows') return null;
  const connector = registry.connectorOf(resolved.source) as RowConnector;
  let best: string[] | ProbedKeys | null = null;
  let bestKeys = 0;
  for (const dependency of plan.dependencies) {
    if (!loaded.has(dependency.from)) continue;
    const keys =
      early?.get(dependency.from)?.get(dependency.fromColumn.name) ??
      (await distinctKeys(connection, dependency.from, dependency.fromColumn, limits.maxKeys));
    if (keys.length > limits.maxKeys) continue;
    const lookup = limits.keyLookups === false || plan.probe ? undefined : lookupOf(plan, dependency, keys);
    const filters = plan.probe
      ? { probe: keys }
      : connector.pushdown.applyKeyFilter(dependency.column, keys, { batchSize: limits.batchSize, lookup });
    if (filters !== null && (best === null || keys.length < bestKeys)) {
      best = filters;
      bestKeys = keys.length;
    }
  }
  return best;
}

type RowsTable = Extract<ResolvedTable, { origin: 'rows' }>;

/** The loaded relation's columns (those read, then any partial aggregates, as text cast on load), their labels and names in the statement. */
function loadShape(plan: ScanPlan, resolved: RowsTable) {
  const columns = plan.columns;
  const loadColumns: ColumnDef[] = [
    ...columns,
    ...(plan.aggregates ?? []).map((a, i) => ({
      name: a.alias,
      nameInSource: a.alias,
      type: a.type,
      nullable: true,
      position: columns.length + i + 1,
    })),
  ];
  // Partial aggregates are named by what they compute; they are shown (summed, compared as values).
  const labels = [
    ...columns.map((c) => `${resolved.schema}.${resolved.table.name}.${c.name}`),
    ...(plan.aggregates ?? []).map((a) => `${a.fn}(${resolved.schema}.${resolved.table.name}.${a.column?.name ?? '*'})`),
  ];
  const columnNames = [...columns.map((c) => c.name), ...(plan.aggregates ?? []).map((a) => a.column?.name ?? '*')];
  return { loadColumns, labels, columnNames };
}

/** The scan's requests (one per batch of dependent-join keys) and the query the logs show for them. */
function scanRequests(plan: ScanPlan, resolved: RowsTable, connector: RowConnector, keyFilters: string[] | KeyLookup | ProbedKeys | null) {
  const withKeys = (keys: string) => (plan.filter ? `${plan.filter} AND (${keys})` : `(${keys})`);
  const groupLookup = keyFilters !== null && 'codes' in keyFilters ? keyFilters : undefined;
  const probeKeys = keyFilters !== null && 'probe' in keyFilters ? keyFilters.probe : undefined;
  const requests = (Array.isArray(keyFilters) ? keyFilters : [null]).map((keys) => ({
    table: resolved.table,
    columns: plan.columns,
    aggregates: plan.aggregates,
    groupLookup,
    probeKeys,
    orderBy: plan.orderBy,
    limit: plan.limit,
    filter: keys === null ? (plan.filter ?? undefined) : withKeys(keys),
  }));
  const first = connector.scanSql(requests[0]!);
  const query: SourceQuery = {
    source: resolved.source.name,
    sql: requests.length > 1 ? `${first} -- and ${requests.length - 1} more batch(es) of keys` : first,
  };
  return { requests, query };
}

/** A loaded column that may hold char(n) values padded with spaces. */
interface PaddableColumn {
  i: number;
  name: string;
  label: string;
  kind: PaddedKind;
}

/**
 * The char(n) columns (and their partial min/max) that may hold padded values, checked where the
 * statement uses them beyond showing them, and where the row condition reads them; refused at
 * once where the statement or the condition holds what PostgreSQL compares without padding.
 */
function paddingChecks(
  plan: ScanPlan,
  resolved: RowsTable,
  shape: ReturnType<typeof loadShape>,
  padding: PaddedUses,
): { checkedUses: PaddableColumn[]; checkedByCondition: PaddableColumn[] } {
  const columns = plan.columns;
  const paddable = shape.loadColumns.flatMap((c, i): PaddableColumn[] => {
    const column = i < columns.length ? c : plan.aggregates![i - columns.length]!.column;
    const kind = column && c.type === 'VARCHAR' ? paddedKind(column, resolved.source, padding) : null;
    return kind ? [{ i, name: shape.columnNames[i]!, label: shape.labels[i]!, kind }] : [];
  });
  const condition = plan.bound.rowCondition;
  const narrows = condition !== undefined && !plan.aggregates;
  const checkedUses = paddable.filter((c) => padding.used(c.name));
  const conditionUsed = narrows && paddable.length > 0 ? conditionUses(condition) : null;
  const checkedByCondition = conditionUsed ? paddable.filter((c) => conditionUsed.used(c.name)) : [];
  if (checkedUses.length > 0 && padding.paddedConstant()) throw paddedRefusal(checkedUses[0]!);
  if (checkedByCondition.length > 0 && conditionUsed!.paddedConstant()) throw paddedRefusal(checkedByCondition[0]!);
  return { checkedUses, checkedByCondition };
}

/**
 * Streams a scan of a row-delivered source into the connection (loadBatches: raw classes, then
 * each column cast to its catalog type; values that do not fit are NULL and reported as
 * warnings). Under a row condition the load keeps only the rows the condition lets through.
 */
export async function loadRows(
  connection: DuckDBConnection,
  registry: SourceRegistry,
  plan: ScanPlan,
  loadName: string,
  signal: AbortSignal,
  /** The dependent join's key conditions, one scan each, or the lookup the scan groups by (one scan). */
  keyFilters: string[] | KeyLookup | ProbedKeys | null = null,
  /** The rows of the scan, already being read by the caller (exec/ship.ts); without key filters only. */
  started?: AsyncIterable<unknown[][]>,
  /** How the statement uses the columns (whether it shows them); unknown: every column shown. */
  uses?: ScaleUses,
  /** Sees the rows as the source sends them (early-keys.ts), told when the last has come. */
  watch?: Pick<EarlyKeys, 'batch' | 'end' | 'fail'>,
  /** How the statement uses the columns beyond showing them (char(n) padding); unknown: every column used. */
  padding: PaddedUses = ALL_USED,
  /** A folder the engine may read: rows a source writes as CSV go through a file there (a copy's refresh). */
  bulkDir?: string,
): Promise<{ warnings: string[]; query: SourceQuery; rescaled: boolean }> {
  const resolved = plan.bound.resolved as Extract<ResolvedTable, { origin: 'rows' }>;
  const connector = registry.connectorOf(resolved.source) as RowConnector;
  const columns = plan.columns;
  const { loadColumns, labels, columnNames } = loadShape(plan, resolved);
  const { requests, query } = scanRequests(plan, resolved, connector, keyFilters);
  async function* scans(): AsyncIterable<unknown[][]> {
    if (started) return yield* started;
    try {
      for (const request of requests) {
        for await (const batch of connector.scan({ ...request, signal })) {
          watch?.batch(batch);
          yield batch;
        }
      }
      watch?.end();
    } finally {
      watch?.fail();
    }
  }
  const rawTypes: RawType[] = [...columns.map((c) => connector.rawType(c)), ...(plan.aggregates ?? []).map((): RawType => 'VARCHAR')];
  const scaled = loadColumns.map((c, i) =>
    scaledByValues(resolved.source, c.type, rawTypes[i]) ? scaledBy(labels[i]!, columnNames[i]!, c.name, uses) : undefined,
  );
  const condition = plan.bound.rowCondition;
  const narrows = condition !== undefined && !plan.aggregates;
  const { checkedUses, checkedByCondition } = paddingChecks(plan, resolved, { loadColumns, labels, columnNames }, padding);
  const paddedIn = (list: PaddableColumn[], named: boolean): PaddedColumn[] =>
    list.map((c) => ({ expr: named ? quoteIdent(loadColumns[c.i]!.name) : `c${c.i}`, label: c.label, kind: c.kind }));
  let loaded: Loaded;
  const columnsLoaded = loadColumns.map((c, i) => ({ name: c.name, type: c.type, raw: rawTypes[i]!, scaled: scaled[i] }));
  // Under a row condition, the scales of the rows it lets through alone decide.
  const kept = condition && !plan.aggregates ? { tableName: resolved.table.name, condition } : undefined;
  // A whole read of text values that the source writes as CSV, where the caller asks for it: through a file.
  const csv =
    bulkDir && !started && !watch && requests.length === 1 && rawTypes.every((r) => r === 'VARCHAR') ? connector.scanCsv : undefined;
  try {
    loaded = csv
      ? await loadThroughFile(connection, loadName, columnsLoaded, csv.call(connector, { ...requests[0]!, signal }), bulkDir!, kept)
      : await loadBatches(connection, loadName, columnsLoaded, scans(), signal, kept);
  } catch (err) {
    // A cancelled source statement fails with its driver's error; the cause is the cancel.
    if (signal.aborted) throw signal.reason;
    if (err instanceof ApiError) throw err;
    throw ownStorageFailure(err) ?? sourceFailed(resolved.source.name, messageOf(err), err instanceof SourceUnreachableError);
  }
  // Under a row condition the load keeps only the rows it lets through (partial aggregates were
  // computed at the source over exactly those rows). Warnings would count hidden rows: none.
  if (condition) {
    if (narrows) {
      // The condition runs in the engine: over padded values of a column it uses, it would keep other rows.
      await refusePadded(connection, loaded.rawName, paddedIn(checkedByCondition, false));
      await narrowLoad(connection, loadName, loaded.rawName, resolved.table.name, condition);
    }
    // Only the rows the condition lets through count (hidden rows must not decide).
    await refusePadded(connection, narrows ? loadName : loaded.rawName, paddedIn(checkedUses, narrows));
    return { warnings: [], query, rescaled: loaded.rescaled };
  }
  await refusePadded(connection, loaded.rawName, paddedIn(checkedUses, false));
  // Columns whose scale their values decide never turn a value into NULL: they fail where it is read.
  const checked = loadColumns.map((c, i) => (scaled[i] ? { ...c, type: rawTypes[i]! } : c));
  const warnings = [
    ...loaded.lossy.map((count, i) => lossyWarning(resolved, loadColumns[i], count, rawTypes[i])),
    ...(await castWarnings(connection, resolved, checked, rawTypes, loaded.rawName, connector)),
  ].filter((w): w is string => w !== null);
  return { warnings, query, rescaled: loaded.rescaled };
}

/** Replaces a load by a table of only the rows that meet `condition`; the unfiltered rows are dropped. */
async function narrowLoad(
  connection: DuckDBConnection,
  loadName: string,
  rawName: string,
  tableName: string,
  condition: Node,
): Promise<void> {
  await exclusive(connection, () =>
    connection.run(`CREATE TEMP TABLE ${loadName}_narrowed AS ${filteredSql({ name: loadName }, tableName, condition)}`),
  );
  await exclusive(connection, () => connection.run(`DROP VIEW ${loadName}`));
  await exclusive(connection, () => connection.run(`DROP TABLE ${rawName}`));
  await exclusive(connection, () => connection.run(`ALTER TABLE ${loadName}_narrowed RENAME TO ${loadName}`));
}

/**
 * Drops a load and its raw rows: a view over them (loadBatches), or a table where a row
 * condition narrowed it (narrowLoad). The view goes first, since it depends on the raw rows.
 */
export async function dropLoad(connection: DuckDBConnection, loadName: string): Promise<void> {
  const reader = await exclusive(connection, () =>
    connection.runAndReadAll(`SELECT count(*) FROM duckdb_views() WHERE temporary AND view_name = '${loadName}'`),
  );
  const isView = Number(reader.getRows()[0]?.[0] ?? 0) > 0;
  await exclusive(connection, () => connection.run(isView ? `DROP VIEW ${loadName}` : `DROP TABLE ${loadName}`));
  await exclusive(connection, () => connection.run(`DROP TABLE IF EXISTS ${loadName}_raw`));
}

interface Loaded {
  /** The view with the cast values (the load name). */
  view: string;
  rawName: string;
  /** Per column: values that did not fit their raw class. */
  lossy: number[];
  /** A column was loaded with another type than asked for (its values' scale: load-scale.ts). */
  rescaled: boolean;
}

/**
 * Appends batches of rows to a temporary table of the connection, in the raw classes given,
 * and exposes them under `loadName` as a view that casts each column to its type (TRY_CAST:
 * what does not fit becomes NULL). Columns are named as given, or c0..cn. A `scaled` column
 * (a numeric without declared scale) takes the type its values' scales call for (load-scale.ts):
 * of all rows, or of those `kept` lets through.
 */
export async function loadBatches(
  connection: DuckDBConnection,
  loadName: string,
  columns: ReadonlyArray<LoadColumn>,
  batches: AsyncIterable<unknown[][]>,
  signal: AbortSignal,
  kept?: { tableName: string; condition: Node },
): Promise<Loaded> {
  const rawName = `${loadName}_raw`;
  const rawColumns = columns.map((c, i) => `c${i} ${c.raw}`).join(', ');
  await exclusive(connection, () => connection.run(`CREATE TEMP TABLE ${rawName} (${rawColumns || 'c0 INTEGER'})`));
  const appender = await exclusive(connection, () => connection.createAppender(rawName, 'main', 'temp'));
  const lossy = new Array<number>(columns.length).fill(0);
  for await (const batch of batches) {
    signal.throwIfAborted();
    // A batch's appends may flush into the table: not while another load's statement runs.
    await exclusive(connection, () => {
      for (const row of batch) {
        for (let i = 0; i < columns.length; i++) {
          if (!appendValue(appender, columns[i]!.raw, row[i])) lossy[i]! += 1;
        }
        appender.endRow();
      }
    });
  }
  await exclusive(connection, () => appender.closeSync());
  return castLoad(connection, loadName, rawName, columns, lossy, kept);
}

/** Writes the CSV text a source sends into a file of `dir`, loads it (loadCsvFile), and removes the file. */
async function loadThroughFile(
  connection: DuckDBConnection,
  loadName: string,
  columns: ReadonlyArray<LoadColumn>,
  csv: AsyncIterable<Buffer>,
  dir: string,
  kept?: { tableName: string; condition: Node },
): Promise<Loaded> {
  const file = path.join(dir, `${loadName}-${randomBytes(6).toString('hex')}.csv`);
  try {
    await pipeline(Readable.from(csv), fs.createWriteStream(file, { mode: 0o600 }));
    return await loadCsvFile(connection, loadName, columns, file, kept);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * As `loadBatches`, from a CSV file the source wrote (`RowConnector.scanCsv`, every column text):
 * the engine reads it in parallel, the values never pass through JavaScript. A NULL is unquoted
 * and empty, an empty text quoted.
 */
export async function loadCsvFile(
  connection: DuckDBConnection,
  loadName: string,
  columns: ReadonlyArray<LoadColumn>,
  file: string,
  kept?: { tableName: string; condition: Node },
): Promise<Loaded> {
  const rawName = `${loadName}_raw`;
  const types = columns.map((_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  const read =
    `read_csv(${sqlLiteral(file)}, columns = {${types}}, header = false, delim = ',', quote = '"', escape = '"', ` +
    `nullstr = '', allow_quoted_nulls = false, auto_detect = false, max_line_size = ${CSV_LINE_BYTES})`;
  await exclusive(connection, () => connection.run(`CREATE TEMP TABLE ${rawName} AS SELECT * FROM ${read}`));
  return castLoad(connection, loadName, rawName, columns, new Array<number>(columns.length).fill(0), kept);
}

/** The longest line (row) a CSV load reads: the engine's longest value. */
const CSV_LINE_BYTES = 64 * 1024 * 1024;

/** A column of a load: its name, its catalog type, the raw class its values arrive in. */
type LoadColumn = { name?: string; type: string; raw: RawType; scaled?: ScaledColumn };

/** The load's view over its raw rows: each column cast to its type (or the scale its values call for). */
async function castLoad(
  connection: DuckDBConnection,
  loadName: string,
  rawName: string,
  columns: ReadonlyArray<LoadColumn>,
  lossy: number[],
  kept?: { tableName: string; condition: Node },
): Promise<Loaded> {
  const notDecimals = await notDecimalsOf(connection, rawName, columns);
  const castOf = (c: LoadColumn, i: number) =>
    c.raw !== c.type ? loadCast(`c${i}`, c.type, c.raw, c.name ?? `${i + 1}`, notDecimals[i]!) : `c${i}`;
  const alias = (c: LoadColumn, i: number) => quoteIdent(c.name ?? `c${i}`);
  const scales = await scalesOf(connection, rawName, columns, kept, (c, i) => `${castOf(c, i)} AS ${alias(c, i)}`);
  let rescaled = false;
  const select = columns
    .map((c, i) => {
      const found = scales[i];
      const type = found ? scaledType(found) : null;
      if (!found || !type || !c.scaled) return `${castOf(c, i)} AS ${alias(c, i)}`;
      if (type !== c.type) rescaled = true;
      return `${scaledCast(`c${i}`, type, found, c.scaled, tryCast)} AS ${alias(c, i)}`;
    })
    .join(', ');
  await exclusive(connection, () => connection.run(`CREATE TEMP VIEW ${loadName} AS SELECT ${select || 'NULL AS none'} FROM ${rawName}`));
  return { view: loadName, rawName, lossy, rescaled };
}

/**
 * The scales of the values of the `scaled` columns (undefined for the others): of every raw row,
 * or, under a row condition, of the rows it lets through (over the columns cast as `cast` says).
 */
async function scalesOf<C extends { scaled?: ScaledColumn }>(
  connection: DuckDBConnection,
  rawName: string,
  columns: readonly C[],
  kept: { tableName: string; condition: Node } | undefined,
  cast: (column: C, i: number) => string,
): Promise<Array<ColumnScales | null | undefined>> {
  const indexes = columns.flatMap((c, i) => (c.scaled ? [i] : []));
  if (indexes.length === 0) return [];
  let relation = rawName;
  let texts = indexes.map((i) => `c${i}`);
  const keptView = `${rawName}_kept`;
  if (kept) {
    texts = indexes.map((i) => quoteIdent(`__vdb_text_${i}`));
    const list = [...columns.map(cast), ...indexes.map((i, k) => `c${i} AS ${texts[k]}`)].join(', ');
    await exclusive(connection, () => connection.run(`CREATE TEMP VIEW ${keptView} AS SELECT ${list} FROM ${rawName}`));
    relation = `(${filteredSql({ name: keptView }, kept.tableName, kept.condition)}) AS kept`;
  }
  try {
    const found = await columnScales(connection, relation, texts);
    const scales: Array<ColumnScales | null | undefined> = columns.map(() => undefined);
    indexes.forEach((i, k) => (scales[i] = found[k]));
    return scales;
  } finally {
    if (kept) await exclusive(connection, () => connection.run(`DROP VIEW ${keptView}`));
  }
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
  const cast = columns.map((c, i) => ({ c, i })).filter(({ c, i }) => needsCast(c, rawTypes[i]) && (connector.castMayFail?.(c) ?? true));
  if (cast.length === 0) return [];
  // NaN and infinities are not counted: the statement fails where it reads them (loadCast).
  const counts = cast
    .map(
      ({ c, i }) =>
        `count(*) FILTER (WHERE c${i} IS NOT NULL AND ${tryCast(`c${i}`, c.type)} IS NULL AND lower(c${i}::VARCHAR) NOT IN ${NOT_DECIMAL})`,
    )
    .join(', ');
  const reader = await exclusive(connection, () => connection.runAndReadAll(`SELECT ${counts} FROM ${rawName}`));
  const row = reader.getRows()[0] ?? [];
  return cast
    .map(({ c }, k) => ({ c, n: Number(row[k] ?? 0) }))
    .filter(({ n }) => n > 0)
    .map(
      ({ c, n }) => `${resolved.schema}.${resolved.table.name}.${c.name}: ${n} value(s) are not valid ${c.type} and were returned as NULL`,
    );
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
