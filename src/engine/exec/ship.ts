/**
 * Runs a shipping plan (plan/ship.ts): the small table is loaded into the engine as any scan is
 * (its source's conditions, the catalog's types, warnings), its columns read back as text and
 * written as array literals of their PostgreSQL types, and the statement, now over PostgreSQL's
 * tables alone, runs whole there. Returns null, so that the statement runs federated, when the
 * table turns out bigger than the limit, a value cannot go as text (a NUL character, a date
 * PostgreSQL writes differently), or PostgreSQL refuses the statement as such.
 */
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

/** Text PostgreSQL's input functions read back as the value the engine wrote. */
const EXACT_TEXT: Record<string, RegExp> = {
  date: /^\d{4}-\d{2}-\d{2}$/,
  bool: /^(true|false)$/,
};

/** An array literal of `type` with these elements (null: NULL), as a SQL string with its cast. */
export function arrayLiteral(values: ReadonlyArray<string | null>, type: string): string | null {
  const exact = EXACT_TEXT[type.replace(/\(.*$/, '')];
  const elements: string[] = [];
  for (const value of values) {
    if (value === null) elements.push('NULL');
    else if (value.includes('\u0000') || (exact && !exact.test(value))) return null;
    else elements.push(`"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
  }
  return `'{${elements.join(',').replace(/'/g, "''")}}'::${type}[]`;
}

/** The shipped table's rows as one array literal per column; null when they cannot all go. */
async function shippedArrays(
  connection: Awaited<ReturnType<typeof statementConnection>>['connection'],
  loadName: string,
  columns: readonly ColumnDef[],
  maxRows: number,
): Promise<string[] | null> {
  const list = columns.map((c) => `CAST(${quoteIdent(c.name)} AS VARCHAR)`).join(', ');
  const reader = await connection.runAndReadAll(`SELECT ${list} FROM ${loadName} LIMIT ${maxRows + 1}`);
  const rows = reader.getRows() as Array<Array<string | null>>;
  if (rows.length > maxRows) return null;
  const arrays: string[] = [];
  for (const [i, column] of columns.entries()) {
    const literal = arrayLiteral(
      rows.map((row) => row[i] ?? null),
      shippedType(column)!,
    );
    if (literal === null) return null;
    arrays.push(literal);
  }
  return arrays;
}

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
  const whole = await planWhole({ ...bound, ast: plan.ast, tables: plan.targetTables }, registry);
  if (!whole) return null;
  const held = await statementConnection(runtime, options.signal);
  let loaded: Awaited<ReturnType<typeof loadRows>>;
  let arrays: string[] | null;
  try {
    loaded = await loadRows(held.connection, registry, plan.scan, plan.shipped.loadName, options.signal);
    arrays = await shippedArrays(held.connection, plan.shipped.loadName, plan.scan.columns, options.maxShippedRows);
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
