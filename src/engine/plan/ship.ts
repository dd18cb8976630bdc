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
 * And only where it pays, by the catalog's statistics: the shipped table has fewer rows than
 * PostgreSQL's side, which is big enough for a plan to matter, and the shipped plan is the
 * cheapest of the estimates of cost.ts (shipped, dependent, parallel); and once read (its
 * conditions applied), at most `maxShippedRows` rows (exec/ship.ts counts them). Pure: no I/O.
 */
import { UNCONSTRAINED_NUMERIC } from '../../connectors/postgres/types.js';
import { randomBytes } from 'node:crypto';
import type { ParseResult, RangeVar, SelectStmt } from '@pgsql/types';
import type { ResolvedTable, SourceRegistry } from '../../catalog/sources.js';
import type { ColumnDef, SourceDef } from '../../catalog/types.js';
import { wholeStatementConnector } from '../../connectors/types.js';
import type { BoundStatement, BoundTable } from '../front/bind.js';
import { everyNode } from '../front/ast.js';
import { parseStatement } from '../front/parse.js';
import { planScans, type ScanPlan } from './scans.js';
import { distinctOf, estimateJoin, groupsOf, MIN_TARGET_ROWS, type JoinEstimates } from './cost.js';
import { planPartialAggregation } from './partial-aggregation.js';
import { planLookup, type LookupPlan } from './ship-lookup.js';

/** Rows of the shipped table at most, unless configured (`dependentJoin.maxShippedRows`). */
export const DEFAULT_MAX_SHIPPED_ROWS = 100_000;

/**
 * The engine types whose text PostgreSQL reads back as the same value, and their type there. A
 * PostgreSQL numeric without declared scale goes as `numeric`: each value keeps the scale of its
 * text (exec/ship-arrays.ts; the load writes it as PostgreSQL did: exec/load-scale.ts).
 */
export function shippedType(column: ColumnDef, source: { kind: string } = { kind: '' }): string | null {
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
  /** The estimates the choice was made on (catalog statistics, cost.ts). */
  estimates: JoinEstimates;
  /**
   * PostgreSQL tables of an inner equi-join with the shipped table, read through
   * `(SELECT * FROM t WHERE column = ANY('<placeholder>'))`: the placeholder becomes the shipped
   * join keys as an array (PostgreSQL then drops the rows that cannot match while it scans, with
   * a hash of the keys, before the join). `keyIndex` is the key's position among the shipped columns.
   */
  keyed: Array<{ placeholder: string; column: ColumnDef; keyIndex: number }>;
  /**
   * Tables the engine reads itself (files), shipped whole along with the other: each read by the
   * engine and written as arrays in place of its `placeholder` relation (all its columns).
   */
  engineTables: Array<{ table: BoundTable & { resolved: Extract<ResolvedTable, { kind: 'native' }> }; placeholder: string }>;
  /** The lookup form of the statement (ship-lookup.ts), where its join allows one; used when the keys turn out dense. */
  lookup: LookupPlan | null;
}

export function planShipping(bound: BoundStatement, registry: SourceRegistry, maxShippedRows: number): ShippingPlan | null {
  if (bound.narrowed.size > 0 || bound.hiddenColumns.size > 0 || bound.readsViews) return null;
  if (bound.tables.some((t) => t.rowCondition)) return null;
  // Tables the engine reads (files) go whole, each under its own alias, all columns shippable.
  const natives = bound.tables.filter((t) => t.resolved.kind === 'native');
  if (!natives.every((t) => t.resolved.table.columns.every((c) => shippedType(c) !== null))) return null;
  const rowTables = bound.tables.filter((t) => t.resolved.kind !== 'native');
  if (rowTables.some((t) => t.resolved.kind !== 'rows' || !t.loadName)) return null;
  const sources = new Map<SourceDef, BoundTable[]>();
  for (const table of rowTables) {
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
    if (maxShippedRows === 0 || targetRows < MIN_TARGET_ROWS || shippedRows >= targetRows) continue;
    const plan = shippable(bound, registry, shipped!);
    if (!plan) continue;
    const estimates = estimatePlans(bound, registry, plan, targetTables, targetRows);
    if (estimates.choice !== 'shipped') continue;
    const engineTables = natives.length > 0 ? shipEngineTables(plan.ast, natives) : [];
    if (engineTables === null) return null;
    // Before keyTargets wraps the PostgreSQL tables (the lookup form goes without).
    const lookup = planLookup(plan.ast, plan.placeholder, { loadName: plan.shipped.loadName, scan: plan.scan }, targetTables, plan.scans);
    return { ...plan, target, targetTables, estimates, keyed: keyTargets(plan, targetTables), engineTables, lookup };
  }
  return null;
}

/** The estimates of the shipped, dependent and parallel plans of this join (cost.ts). */
function estimatePlans(
  bound: BoundStatement,
  registry: SourceRegistry,
  plan: Pick<ShippingPlan, 'shipped' | 'scan'> & { scans: Map<string, ScanPlan> },
  targetTables: BoundTable[],
  targetRows: number,
): JoinEstimates {
  const shippedTable = plan.shipped.resolved.table;
  // The join key: a target's equi-join with the shipped table (planScans' dependencies).
  let smallKeyDistinct: number | null = null;
  let bigKeyDistinct: number | null = null;
  let bigColumns = 1;
  let bigGroups: number | null = null;
  // The federated plans group a PostgreSQL table at its source where a partial aggregation applies.
  const partial = planPartialAggregation(bound, plan.scans, registry);
  // The rows PostgreSQL's tables keep after their own conditions (their scans' estimates).
  let bigRows = 0;
  for (const table of targetTables) {
    const scan = plan.scans.get(table.loadName ?? '');
    bigRows += scan?.rows ?? table.resolved.table.cardinality ?? 0;
    if (!scan) continue;
    bigColumns = Math.max(bigColumns, scan.columns.length);
    if (partial && partial.loadName === table.loadName) {
      bigColumns = partial.keys.length + partial.aggregates.length;
      bigGroups = groupsOf(table.resolved.table, partial.keys, scan.rows ?? table.resolved.table.cardinality ?? 0);
    }
    const dependency = scan.dependencies.find((d) => d.from === plan.shipped.loadName);
    if (dependency && smallKeyDistinct === null) {
      smallKeyDistinct = distinctOf(shippedTable, dependency.fromColumn);
      bigKeyDistinct = distinctOf(table.resolved.table, dependency.column);
    }
  }
  return estimateJoin({
    smallRows: plan.scan.rows ?? shippedTable.cardinality ?? 0,
    smallColumns: plan.scan.columns.length,
    smallKeyDistinct,
    bigRows,
    bigTableRows: targetRows,
    bigColumns,
    bigKeyDistinct,
    bigGroups,
  });
}

/** The statement with `shipped` as a placeholder relation, when its columns and references allow. */
function shippable(
  bound: BoundStatement,
  registry: SourceRegistry,
  shipped: BoundTable,
): (Pick<ShippingPlan, 'shipped' | 'scan' | 'ast' | 'placeholder'> & { scans: Map<string, ScanPlan> }) | null {
  const loadName = shipped.loadName!;
  const scans = planScans(bound, registry, { pushdown: true });
  const scan = scans.get(loadName);
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
  return { shipped: { ...shipped, loadName }, scan, ast, placeholder, scans };
}

/** Column types whose keys go as an array PostgreSQL reads exactly (connectors/postgres/key-array.ts). */
const KEYED_TYPES = /^(SMALLINT|INTEGER|BIGINT|DECIMAL\(\d+,\s*\d+\)|DATE|VARCHAR)$/;

/**
 * Wraps each PostgreSQL table that an inner equi-join ties to the shipped table (a dependency
 * of its scan in planScans: a row whose key is not among the shipped keys cannot be in the
 * answer) in a subquery that keeps only the rows whose key is among them. Only tables read
 * once, under an alias without a column list; mutates `plan.ast`.
 */
function keyTargets(
  plan: Pick<ShippingPlan, 'ast' | 'shipped' | 'scan'> & { scans: Map<string, ScanPlan> },
  targetTables: BoundTable[],
): ShippingPlan['keyed'] {
  const keyed: ShippingPlan['keyed'] = [];
  for (const table of targetTables) {
    const dependency = plan.scans
      .get(table.loadName ?? '')
      ?.dependencies.find(
        (d) =>
          d.from === plan.shipped.loadName &&
          KEYED_TYPES.test(d.column.type) &&
          plan.scan.columns.some((c) => c.name === d.fromColumn.name),
      );
    if (!dependency) continue;
    const placeholder = `__vdb_keys_${randomBytes(6).toString('hex')}`;
    let wrapped = 0;
    const wrap = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(wrap);
      if (value === null || typeof value !== 'object') return;
      const node = value as Record<string, unknown>;
      const range = node.RangeVar as RangeVar | undefined;
      if (range && range.relname === table.loadName && range.alias && !range.alias.colnames) {
        const column = `"${dependency.column.name.replace(/"/g, '""')}"`;
        const alias = `"${String(range.alias.aliasname).replace(/"/g, '""')}"`;
        const select = parseStatement(
          `SELECT * FROM (SELECT * FROM ${table.loadName} WHERE ${column} = ANY('${placeholder}')) AS ${alias}`,
        );
        const from = (select.stmts![0]!.stmt as { SelectStmt: SelectStmt }).SelectStmt.fromClause![0]! as Record<string, unknown>;
        delete node.RangeVar;
        node.RangeSubselect = from.RangeSubselect;
        wrapped += 1;
        return;
      }
      Object.values(node).forEach(wrap);
    };
    wrap(plan.ast);
    if (wrapped === 1)
      keyed.push({
        placeholder,
        column: dependency.column,
        keyIndex: plan.scan.columns.findIndex((c) => c.name === dependency.fromColumn.name),
      });
  }
  return keyed;
}

/**
 * Replaces each engine table's reference by a placeholder relation (the statement then names
 * PostgreSQL's tables and placeholders only); null when one is named more than once or renames
 * its columns. Mutates `ast`.
 */
function shipEngineTables(ast: ParseResult, natives: BoundTable[]): ShippingPlan['engineTables'] | null {
  const shipped: ShippingPlan['engineTables'] = [];
  for (const table of natives) {
    if (table.resolved.kind !== 'native') return null;
    const { engineSchema, engineName } = table.resolved;
    const placeholder = `__vdb_shipped_${randomBytes(6).toString('hex')}`;
    let references = 0;
    let renamed = false;
    everyNode(ast, (key, node) => {
      if (key !== 'RangeVar' || node.relname !== engineName || node.schemaname !== engineSchema) return true;
      references += 1;
      if (node.alias?.colnames || !node.alias) renamed = true;
      node.relname = placeholder;
      delete node.schemaname;
      return true;
    });
    if (references !== 1 || renamed) return null;
    shipped.push({ table: table as ShippingPlan['engineTables'][number]['table'], placeholder });
  }
  return shipped;
}
