/**
 * Runs a shipping plan (plan/ship.ts): the small table is loaded into the engine as any scan is
 * (its source's conditions, the catalog's types, warnings), its columns read back as text and
 * written as array literals of their PostgreSQL types, and the statement, now over PostgreSQL's
 * tables alone, runs whole there. Returns null, so that the statement runs federated, when the
 * table turns out bigger than the limit, a value cannot go as text (a NUL character, a date
 * PostgreSQL writes differently), or PostgreSQL refuses the statement as such.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceRegistry } from '../../catalog/sources.js';
import type { ColumnDef } from '../../catalog/types.js';
import { quoteIdent, type DuckRuntime } from '../../runtime/duckdb.js';
import type { BoundedCache } from './statement-cache.js';
import { planWhole } from '../plan/whole.js';
import { shippedType, type ShippingPlan } from '../plan/ship.js';
import type { BoundStatement } from '../front/bind.js';
import { loadRows } from './load.js';
import { statementConnection, type Execution } from './execute.js';
import { openWholeExecution, type WholeColumns } from './source-execution.js';

/** Text PostgreSQL's input functions read back as the value the engine wrote (other types: any text). */
const EXACT_TEXT: Record<string, string> = {
  date: '\\d{4}-\\d{2}-\\d{2}',
  bool: 'true|false',
};

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
    const element = `CASE WHEN ${value} IS NULL THEN 'NULL' ELSE '"' || replace(replace(${value}, '\\', '\\\\'), '"', '\\"') || '"' END`;
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

/** The load's refusals of a value where it is read (load-scale.ts). */
const REFUSED_VALUE =
  /^Invalid Input Error: (The numeric column .* digits after the point|A numeric value of column .* more than 38 digits|A numeric NaN or Infinity)/;

/** The shipped table's source (its kind decides how a numeric without scale goes: plan/ship.ts). */
const sourceKindOf = (plan: ShippingPlan) => (plan.shipped.resolved.kind === 'rows' ? plan.shipped.resolved.source : { kind: '' });

export interface ShipOptions {
  signal: AbortSignal;
  maxShippedRows: number;
  /** Result columns of shipped statements of a shape, as PostgreSQL described them. */
  learned?: { cache: BoundedCache<WholeColumns | null>; key: string };
}

export async function openShippedExecution(
  bound: BoundStatement,
  plan: ShippingPlan,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  options: ShipOptions,
): Promise<Execution | null> {
  // PostgreSQL refused statements of this shape before: not worth loading the small side for.
  if (options.learned?.cache.get(options.learned.key) === null) return null;
  const whole = await planWhole({ ...bound, ast: plan.ast, tables: plan.targetTables }, registry);
  if (!whole) return null;
  const held = await statementConnection(runtime, options.signal);
  let loaded: Awaited<ReturnType<typeof loadRows>>;
  let arrays: string[] | null;
  try {
    loaded = await loadRows(held.connection, registry, plan.scan, plan.shipped.loadName, options.signal);
    // A value the load refuses to write as text (a numeric of another scale, NaN, beyond 38
    // digits: load-scale.ts) does not go: the statement runs federated, where only what it reads counts.
    arrays = await shippedArrays(
      held.connection,
      plan.shipped.loadName,
      plan.scan.columns,
      sourceKindOf(plan),
      options.maxShippedRows,
    ).catch((err: unknown) => {
      if (options.signal.aborted || !REFUSED_VALUE.test(err instanceof Error ? err.message : '')) throw err;
      return null;
    });
  } finally {
    held.close();
  }
  if (arrays === null) return null;
  const names = plan.scan.columns.map((c) => `"${c.name.replace(/"/g, '""')}"`).join(', ');
  const relation = `(SELECT * FROM unnest(${arrays.join(', ')}) AS shipped(${names}))`;
  const parts = whole.sql.split(plan.placeholder);
  if (parts.length !== 2) return null;
  const execution = await openWholeExecution({ ...whole, sql: parts.join(relation) }, runtime, options.signal, options.learned);
  if (!execution) return null;
  // Index 0 is PostgreSQL's statement (openWholeExecution rewrites it when streaming).
  execution.sourceQueries.push(loaded.query);
  execution.warnings.push(...loaded.warnings);
  return execution;
}
