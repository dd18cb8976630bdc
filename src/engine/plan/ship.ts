/**
 * Shipping the small sides: a statement that joins the tables of one PostgreSQL source with small
 * tables of other sources can run whole at PostgreSQL once those tables' rows go along as typed
 * arrays (each read by its own query, all at the same time):
 * `... JOIN (SELECT * FROM unnest('{...}'::int4[], '{...}'::text[]) AS u(id, country)) AS c ON ...`.
 * PostgreSQL then scans its big table once and sends back only the statement's result (30
 * groups instead of a group per join key). Chosen only where the answer cannot change:
 *  - the rest of the statement is PostgreSQL's own semantics (planWhole's allow-list, run later
 *    over the statement with the shipped table as a placeholder);
 *  - the shipped columns are of types whose text form PostgreSQL reads back exactly;
 *  - no mask, hidden column or view is involved, and no row condition on PostgreSQL's tables (a
 *    shipped table's row condition narrows its rows before they go);
 *  - each shipped table is read once, under its own alias, without a column list.
 * And only where it pays, by the catalog's statistics: each shipped table has fewer rows than
 * PostgreSQL's side, which is big enough for a plan to matter, and the shipped plan of the main
 * one (the table PostgreSQL's tables are joined with) is the cheapest of the estimates of
 * cost.ts (shipped, dependent, parallel); and once read (its conditions applied), each has at
 * most `maxShippedRows` rows (exec/ship.ts counts them). Pure: no I/O.
 */
import { paddedChar, scaleFromValues, sourceTypeUnknown } from '../../connectors/kinds.js';
import { randomBytes } from 'node:crypto';
import type { Node, ParseResult, RangeVar, SelectStmt } from '@pgsql/types';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { PlanCatalog } from './plan-catalog.js';
import type { ColumnDef, SourceDef } from '../../catalog/types.js';
import { wholeStatementConnector } from '../../connectors/types.js';
import type { BoundStatement, BoundTable } from '../access/bind.js';
import { asKind, everyNode, isObject } from '../tree/ast.js';
import { isRowCondition } from '../access/access.js';
import { parseStatement } from '../front/parse.js';
import { planScans, type ScanPlan } from './scans.js';
import { distinctOf, estimateJoin, groupsOf, MIN_TARGET_ROWS, type JoinEstimates } from './cost.js';
import { planPartialAggregation } from './partial-aggregation.js';
import { planLookup, takeExactConditions, type LookupKey, type LookupPlan } from './ship-lookup.js';

/** Rows of the shipped table at most, unless configured (`dependentJoin.maxShippedRows`). */
export const DEFAULT_MAX_SHIPPED_ROWS = 100_000;

/**
 * The engine types whose text PostgreSQL reads back as the same value, and their type there. A
 * PostgreSQL numeric without declared scale goes as `numeric`: each value keeps the scale of its
 * text (exec/ship-arrays.ts; the load writes it as PostgreSQL did: exec/load-scale.ts). A
 * PostgreSQL char(n) goes as `bpchar`: its padded values compared without the padding, as at
 * their source; a PostgreSQL text column imported before vdb recorded which are char(n) does
 * not go (none until the source is refreshed).
 */
export function shippedType(column: ColumnDef, source: { kind: string } = { kind: '' }): string | null {
  if (scaleFromValues(column, source)) return 'numeric';
  if (paddedChar(column, source)) return sourceTypeUnknown(column) ? null : 'bpchar';
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

/** The kind of source a table is read at (none for a system table). */
const sourceOf = (table: BoundTable): { kind: string } => ('source' in table.resolved ? table.resolved.source : null) ?? { kind: '' };

/** A table read at its own source and written as arrays in place of the relation `placeholder`. */
export interface ShippedTable {
  table: BoundTable & { loadName: string };
  scan: ScanPlan;
  placeholder: string;
  /** Its lookup form (ship-lookup.ts), where its join with a PostgreSQL table allows one. */
  lookup?: LookupKey | null;
}

export interface ShippingPlan {
  /** The main table whose rows go to PostgreSQL (the one its tables are joined with), and its scan at its own source. */
  shipped: BoundTable & { loadName: string };
  scan: ScanPlan;
  /** The other sources' tables shipped along (read at the same time as the main one; each as a lookup where it allows). */
  moreShipped: ShippedTable[];
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
  engineTables: Array<{ table: BoundTable & { resolved: Extract<ResolvedTable, { origin: 'native' }> }; placeholder: string }>;
  /** The lookup form of the statement (ship-lookup.ts), where its join allows one; used when the keys turn out dense. */
  lookup: LookupPlan | null;
}

export function planShipping(bound: BoundStatement, registry: PlanCatalog, maxShippedRows: number): ShippingPlan | null {
  if (maxShippedRows === 0 || !shippableAccess(bound)) return null;
  // Tables the engine reads (files) go whole, each under its own alias, all columns shippable.
  const natives = bound.tables.filter((t) => t.resolved.origin === 'native');
  if (!natives.every((t) => t.resolved.table.columns.every((c) => shippedType(c) !== null))) return null;
  const candidates = targetCandidates(bound, registry);
  if (candidates.length === 0) return null;
  // Planned once, after the cheap tests of the first candidate that passes them.
  let planned: Map<string, ScanPlan> | undefined;
  for (const [target, targetTables, shippedTables] of candidates) {
    // PostgreSQL's own tables are read whole by the statement: none may be under a row condition.
    if (targetTables.some((t) => t.rowCondition)) continue;
    const targetRows = targetTables.reduce((sum, t) => sum + (t.resolved.table.cardinality ?? Number.NaN), 0);
    if (!Number.isFinite(targetRows) || targetRows < MIN_TARGET_ROWS) continue;
    // Each shipped table smaller than PostgreSQL's side. The limit applies to the rows loaded
    // (their conditions applied), counted when they are: a further table without statistics
    // (a SQLite file never analysed) is tried, the main one's estimates decide the plan.
    const rowsOf = (t: BoundTable) => t.resolved.table.cardinality;
    if (shippedTables.some((t) => (rowsOf(t) ?? 0) >= targetRows)) continue;
    const scans = (planned ??= planScans(bound, registry, { pushdown: true }));
    const ast = structuredClone(bound.ast) as ParseResult;
    const placed = orderShipped(shippedTables, targetTables, scans).map((t) => placeShipped(ast, t, scans));
    if (placed.some((p) => p === null)) continue;
    const [main, ...moreShipped] = placed as ShippedTable[];
    if (rowsOf(main!.table) === null) continue;
    // Row conditions go with their tables' rows: each must be found in a WHERE and taken out.
    if (takeRowConditions(ast) !== shippedTables.filter((t) => t.rowCondition).length) continue;
    // A table estimated beyond the limit would only be read to be given up, and the plan that
    // ran would not be the one EXPLAIN showed: the main one as much as any further one.
    if ([main!, ...moreShipped].some((m) => (m.scan.rows ?? rowsOf(m.table) ?? 0) > maxShippedRows)) continue;
    const plan = { shipped: main!.table, scan: main!.scan, placeholder: main!.placeholder, ast, scans };
    const estimates = estimatePlans(bound, registry, plan, targetTables, targetRows);
    if (estimates.choice !== 'shipped') continue;
    const engineTables = natives.length > 0 ? shipEngineTables(ast, natives) : [];
    if (engineTables === null) return null;
    // Before keyTargets wraps the PostgreSQL tables (the lookup form goes without).
    const lookupOf = (t: ShippedTable) => planLookup(ast, t.placeholder, { loadName: t.table.loadName, scan: t.scan }, targetTables, scans);
    const key = lookupOf(main!);
    for (const more of moreShipped) more.lookup = lookupOf(more);
    const lookup = key && lookupPlan(key, ast, main!);
    return { ...plan, moreShipped, target, targetTables, estimates, keyed: keyTargets(plan, targetTables), engineTables, lookup };
  }
  return null;
}

/**
 * Whether what the user may see allows shipping: no hidden column, no view, and a table narrowed
 * by a row condition alone (the condition also in the statement's WHERE), whose rows go
 * narrowed by the engine's load (exec/ship.ts), never a hidden one; anything else narrowed (a
 * mask, a condition kept as a subquery) or a file under a row condition is not shipped.
 */
function shippableAccess(bound: BoundStatement): boolean {
  if (bound.hiddenColumns.size > 0 || bound.readsViews) return false;
  const nameOf = (t: BoundTable) => `${t.resolved.schema}.${t.resolved.table.name}`;
  const conditioned = (name: string) => bound.tables.every((t) => nameOf(t) !== name || t.rowCondition !== undefined);
  if (![...bound.narrowed].every((name) => bound.tables.some((t) => nameOf(t) === name) && conditioned(name))) return false;
  return !bound.tables.some((t) => t.resolved.origin === 'native' && t.rowCondition);
}

/**
 * The sources that could run the statement (those that speak PostgreSQL), each with its tables
 * and the other sources' tables it would be shipped (two tables of one source as two queries,
 * joined at PostgreSQL). When several sources speak PostgreSQL, the one with more rows runs it
 * (the shipped tables must be smaller). None where a table is not a row source's.
 */
function targetCandidates(bound: BoundStatement, registry: PlanCatalog): Array<[SourceDef, BoundTable[], BoundTable[]]> {
  const sources = new Map<SourceDef, BoundTable[]>();
  for (const table of bound.tables) {
    if (table.resolved.origin === 'native') continue;
    if (table.resolved.origin !== 'rows' || !table.loadName) return [];
    const list = sources.get(table.resolved.source) ?? [];
    list.push(table);
    sources.set(table.resolved.source, list);
  }
  if (sources.size < 2) return [];
  const candidates: Array<[SourceDef, BoundTable[], BoundTable[]]> = [];
  for (const [target, tables] of sources) {
    if (wholeStatementConnector(registry.connectorOf(target)) === null) continue;
    candidates.push([target, tables, [...sources].filter(([source]) => source !== target).flatMap(([, list]) => list)]);
  }
  return candidates;
}

/**
 * Takes the row conditions that joined a WHERE (access.ts marks them) out of `ast` (mutated):
 * their tables' rows go already narrowed by them, by the engine (exec/ship.ts), so PostgreSQL
 * does not evaluate them again with its own reading of them (a regular expression's `\b` is a
 * word boundary to the engine, a backspace to PostgreSQL). Returns how many were taken.
 */
function takeRowConditions(ast: ParseResult): number {
  let taken = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isObject(value)) return;
    if (isObject(value.whereClause)) {
      const where = value.whereClause as Node;
      // The condition itself may be an AND: a marked node is taken whole.
      const and = isRowCondition(where) ? undefined : asKind(where, 'BoolExpr');
      const parts = and?.boolop === 'AND_EXPR' ? (and.args ?? []) : [where];
      const kept = parts.filter((part) => !isRowCondition(part));
      taken += parts.length - kept.length;
      if (kept.length === 0) delete value.whereClause;
      else if (kept.length === 1) value.whereClause = kept[0];
      else if (kept.length < parts.length) and!.args = kept;
    }
    Object.values(value).forEach(visit);
  };
  visit(ast);
  return taken;
}

/** The main table's lookup, in a copy of the statement without the conditions vdb applies to its rows then. */
function lookupPlan(key: LookupKey, ast: ParseResult, main: ShippedTable): LookupPlan {
  const copy = structuredClone(ast);
  return { ...key, ast: copy, conditions: takeExactConditions(copy, main.placeholder, main.scan.columns, sourceOf(main.table)) };
}

/**
 * The shipped tables, the main one first: one with a row estimate that a PostgreSQL table is
 * joined with (its keys can filter that table, the plan's estimates are its join's), the one
 * with more rows where several are.
 */
function orderShipped(shipped: BoundTable[], targetTables: BoundTable[], scans: Map<string, ScanPlan>): BoundTable[] {
  const rows = (t: BoundTable) => t.resolved.table.cardinality;
  const joined = (t: BoundTable) =>
    rows(t) !== null && targetTables.some((target) => scans.get(target.loadName ?? '')?.dependencies.some((d) => d.from === t.loadName));
  return [...shipped].sort((a, b) => Number(joined(b)) - Number(joined(a)) || (rows(b) ?? 0) - (rows(a) ?? 0));
}

/** The estimates of the shipped, dependent and parallel plans of this join (cost.ts). */
function estimatePlans(
  bound: BoundStatement,
  registry: PlanCatalog,
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

/**
 * Puts a placeholder relation in place of `shipped` in `ast` (mutated), when its columns are of
 * shippable types and the statement names it once, under an alias without a column list.
 */
function placeShipped(ast: ParseResult, shipped: BoundTable, scans: Map<string, ScanPlan>): ShippedTable | null {
  const loadName = shipped.loadName!;
  const scan = scans.get(loadName);
  const source = shipped.resolved.origin === 'rows' ? shipped.resolved.source : null;
  if (!scan || !source || scan.columns.length === 0 || !scan.columns.every((c) => shippedType(c, source) !== null)) return null;
  const placeholder = `__vdb_shipped_${randomBytes(6).toString('hex')}`;
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
  return { table: { ...shipped, loadName }, scan, placeholder };
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
    const dependency = plan.scans.get(table.loadName ?? '')?.dependencies.find(
      (d) =>
        d.from === plan.shipped.loadName &&
        KEYED_TYPES.test(d.column.type) &&
        // A char(n)'s padded keys would miss the text they equal at PostgreSQL ('5    ' and '5').
        !paddedChar(d.fromColumn, sourceOf(plan.shipped)) &&
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
    if (table.resolved.origin !== 'native') return null;
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
