/**
 * Shipping the small side: a statement that joins the tables of one PostgreSQL source with one
 * small table of another source can run whole at PostgreSQL once that table's rows go along as
 * typed arrays: `... JOIN (SELECT * FROM unnest('{...}'::int4[], '{...}'::text[]) AS u(id,
 * country)) AS c ON ...`. PostgreSQL then scans its big table once and sends back only the
 * statement's result (30 groups instead of a group per join key). Chosen only where the answer
 * cannot change:
 *  - the rest of the statement is PostgreSQL's own semantics (planWhole's allow-list, run later
 *    over the statement with the shipped table as a placeholder);
 *  - the shipped columns are of types whose text form PostgreSQL reads back exactly;
 *  - no row condition, narrowing or view is involved (the user sees every row of every table);
 *  - the shipped table is read once, under its own alias, without a column list.
 * And only where it pays, by the catalog's row counts: the shipped table is at most a quarter of
 * PostgreSQL's side, which is big enough for a plan to matter; and once loaded (its conditions
 * applied), at most `maxShippedRows` rows (exec/ship.ts counts them). Pure: no I/O.
 */
import { UNCONSTRAINED_NUMERIC } from '../../connectors/postgres/types.js';
import { randomBytes } from 'node:crypto';
import type { ParseResult } from '@pgsql/types';
import type { SourceRegistry } from '../../catalog/sources.js';
import type { ColumnDef, SourceDef } from '../../catalog/types.js';
import { wholeStatementConnector } from '../../connectors/types.js';
import type { BoundStatement, BoundTable } from '../front/bind.js';
import { everyNode } from '../front/ast.js';
import { planScans, type ScanPlan } from './scans.js';

/** Rows of the shipped table at most, unless configured (`dependentJoin.maxShippedRows`). */
export const DEFAULT_MAX_SHIPPED_ROWS = 100_000;

/** Below this many rows at PostgreSQL every plan takes milliseconds: the dependent join stays. */
const MIN_TARGET_ROWS = 10_000;

/** The shipped table may be at most this share of PostgreSQL's side. */
const MAX_SHARE = 0.25;

/**
 * The engine types whose text PostgreSQL reads back as the same value, and their type there. A
 * PostgreSQL numeric without declared scale goes as `numeric`: each value keeps the scale of its
 * text, which the load writes as PostgreSQL did (exec/load-scale.ts).
 */
export function shippedType(column: ColumnDef, source: { kind: string }): string | null {
  if (source.kind === 'postgresql' && column.type === UNCONSTRAINED_NUMERIC) return 'numeric';
  const simple: Record<string, string> = {
    SMALLINT: 'int2',
    INTEGER: 'int4',
    BIGINT: 'int8',
    VARCHAR: 'text',
    DATE: 'date',
    BOOLEAN: 'bool',
  };
  if (simple[column.type]) return simple[column.type]!;
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(column.type);
  return decimal ? `numeric(${decimal[1]},${decimal[2]})` : null;
}

export interface ShippingPlan {
  /** The table whose rows go to PostgreSQL, and its scan at its own source. */
  shipped: BoundTable & { loadName: string };
  scan: ScanPlan;
  /** The PostgreSQL source that runs the statement, and its tables. */
  target: SourceDef;
  targetTables: BoundTable[];
  /** The statement with the shipped table as the relation `placeholder` (same alias). */
  ast: ParseResult;
  placeholder: string;
  /** The estimates the choice was made on (catalog row counts). */
  estimates: { shippedRows: number; targetRows: number };
}

export function planShipping(bound: BoundStatement, registry: SourceRegistry, maxShippedRows: number): ShippingPlan | null {
  if (bound.narrowed.size > 0 || bound.hiddenColumns.size > 0 || bound.readsViews) return null;
  if (bound.tables.some((t) => t.rowCondition || t.resolved.kind !== 'rows' || !t.loadName)) return null;
  const sources = new Map<SourceDef, BoundTable[]>();
  for (const table of bound.tables) {
    if (table.resolved.kind !== 'rows') return null;
    const list = sources.get(table.resolved.source) ?? [];
    list.push(table);
    sources.set(table.resolved.source, list);
  }
  if (sources.size !== 2) return null;
  const [[a, aTables], [b, bTables]] = [...sources.entries()] as [[SourceDef, BoundTable[]], [SourceDef, BoundTable[]]];
  const aSpeaks = wholeStatementConnector(registry.connectorOf(a)) !== null;
  const bSpeaks = wholeStatementConnector(registry.connectorOf(b)) !== null;
  // The other source holds one table; when both speak PostgreSQL, the side with more rows runs it.
  const candidates: Array<[SourceDef, BoundTable[], BoundTable[]]> = [];
  if (aSpeaks && bTables.length === 1) candidates.push([a, aTables, bTables]);
  if (bSpeaks && aTables.length === 1) candidates.push([b, bTables, aTables]);
  for (const [target, targetTables, [shipped]] of candidates) {
    const targetRows = targetTables.reduce((sum, t) => sum + (t.resolved.table.cardinality ?? Number.NaN), 0);
    const shippedRows = shipped!.resolved.table.cardinality;
    if (shippedRows === null || !Number.isFinite(targetRows)) continue;
    // The limit applies to the rows loaded (its conditions applied), counted when they are.
    if (maxShippedRows === 0 || targetRows < MIN_TARGET_ROWS || shippedRows > targetRows * MAX_SHARE) continue;
    const plan = shippable(bound, registry, shipped!);
    if (plan) return { ...plan, target, targetTables, estimates: { shippedRows, targetRows } };
  }
  return null;
}

/** The statement with `shipped` as a placeholder relation, when its columns and references allow. */
function shippable(
  bound: BoundStatement,
  registry: SourceRegistry,
  shipped: BoundTable,
): Pick<ShippingPlan, 'shipped' | 'scan' | 'ast' | 'placeholder'> | null {
  const loadName = shipped.loadName!;
  const scan = planScans(bound, registry, { pushdown: true }).get(loadName);
  const source = shipped.resolved.kind === 'rows' ? shipped.resolved.source : null;
  if (!scan || !source || scan.columns.length === 0 || !scan.columns.every((c) => shippedType(c, source) !== null)) return null;
  const placeholder = `__vdb_shipped_${randomBytes(6).toString('hex')}`;
  const ast = structuredClone(bound.ast) as ParseResult;
  let references = 0;
  let renamed = false;
  everyNode(ast, (key, node) => {
    if (key !== 'RangeVar' || node.relname !== loadName) return true;
    references += 1;
    if (node.alias?.colnames) renamed = true;
    node.relname = placeholder;
    delete node.schemaname;
    return true;
  });
  if (references !== 1 || renamed) return null;
  return { shipped: { ...shipped, loadName }, scan, ast, placeholder };
}
