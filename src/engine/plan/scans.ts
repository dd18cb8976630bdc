/**
 * Planning what each row-delivering source is asked for. For every table loaded from such a
 * source the planner works out the narrowest scan: only the columns the statement uses, and
 * the conditions on that table alone that its dialect can express (pushdown). The statement
 * itself still runs whole in the engine, WHERE included, so a pushed condition only has to
 * keep every row the original keeps (see connectors/sql/predicate.ts); that is what keeps answers exact.
 *
 * Conditions come from WHERE (tables not on the nullable side of an outer join) and from the
 * ON of joins (tables on the side that ON filters), and through equi-joins from the tables joined
 * with (equivalences.ts). A table referenced more than once has one load for every reference: it
 * is asked for the rows any reference may use (loadFilter), and gets no keys and no LIMIT.
 */
import type { Node, RangeSubselect, RangeVar, SelectStmt, SubLink } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { PartialAggregate, RowConnector, SortKey } from '../../connectors/types.js';
import type { BoundStatement, BoundTable } from '../access/bind.js';
import { selectivity } from './selectivity.js';
import type { JoinEstimates } from './cost.js';
import {
  asKind,
  conjuncts,
  contains,
  everyNode,
  exprIs,
  fieldNames,
  lower,
  rangeAlias,
  sortTarget,
  statementOf,
  walk,
} from '../tree/ast.js';
import { hasFact } from '../tree/functions.js';
import { foldDateArithmetic } from './date-folding.js';
import { deriveThroughEquiJoins } from './equivalences.js';

/** The smaller load and key a scan's partial aggregation may group by the numbers of (key-lookup.ts). */
export interface GroupLookup {
  from: string;
  fromColumn: ColumnDef;
  /** Fewer distinct keys than this keep the IN list. */
  minKeys: number;
}

export interface ScanPlan {
  bound: BoundTable;
  columns: ColumnDef[];
  /** Pushed conditions in the source's dialect, ANDed; null when nothing is pushed. */
  filter: string | null;
  /**
   * Rows the scan reads, estimated: the table's row estimate times the share its pushed
   * conditions keep (selectivity.ts); null when the source keeps no row estimate.
   */
  rows: number | null;
  /**
   * Equi-joins that may reduce this table to the keys another load holds (dependent join):
   * rows whose `column` matches no `fromColumn` value of load `from` cannot be in the answer.
   */
  dependencies: Array<{
    column: ColumnDef;
    from: string;
    fromColumn: ColumnDef;
    /** Where `from` is a join at a source (planner.ts): the table of `fromColumn`, for its statistics. */
    fromTable?: TableDef;
  }>;
  /** Only the first rows, in this order, are needed (a single-table statement with LIMIT). */
  orderBy?: SortKey[];
  limit?: number;
  /**
   * The federated plan of this scan's join with a smaller load (cost.ts chooseJoins): dependent
   * (wait for its keys) or parallel (read at once); absent: dependent where keys are at hand.
   */
  join?: { from: string; estimates: JoinEstimates };
  /** Aggregates the source computes per group of `columns` (partial aggregation below a join); none: distinct rows (distinct-reads.ts). */
  aggregates?: Array<PartialAggregate & { alias: string; type: string }>;
  /** The smaller load whose rows' numbers the partial aggregation may group by instead of its key (key-lookup.ts). */
  groupLookup?: GroupLookup;
  /** Distinct rows of one key column: with dependent-join keys, the source is asked which keys have a row (distinct-reads.ts). */
  probe?: boolean;
}

export interface PlanOptions {
  pushdown: boolean;
}

interface ScopeItem {
  alias: string;
  /** Set for tables loaded from row sources. */
  loadName?: string;
  /** Known column names (lower case); undefined for subqueries and functions. */
  columns?: Set<string>;
  nullable: boolean;
  /** The reference to the load (its RangeVar, also for a narrowing subquery over it). */
  range?: RangeVar;
}

/** The ON conditions of a SELECT's joins, the tables each filters, and whether the join is inner. */
type OnTargets = Array<{ quals: Node; targets: ScopeItem[]; inner: boolean }>;

/** An integer constant (LIMIT, OFFSET, ORDER BY position), else null. */
function constantInt(node: Node | undefined): number | null {
  const constant = asKind(node, 'A_Const');
  if (!constant) return null;
  if (constant.isnull) return null;
  if (!constant.ival) return null;
  const value = Number(constant.ival.ival ?? 0);
  return Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function typeFamily(type: string): 'number' | 'text' | 'date' | null {
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT|DECIMAL)/.test(type)) return 'number';
  if (type === 'VARCHAR') return 'text';
  if (type === 'DATE') return 'date';
  return null;
}

export function planScans(bound: BoundStatement, registry: PlanCatalog, options: PlanOptions): Map<string, ScanPlan> {
  const planner = new ScanPlanner(bound, registry);
  if (planner.loads.size === 0) return new Map();
  const columns = planner.pruneColumns(options.pushdown);
  if (options.pushdown) {
    planner.pushFilters();
    if (planner.loads.size === 1) planner.pushLimit();
  }
  return planner.plans(columns);
}

/**
 * The scans of one statement, worked out in steps that share what they learn of the statement:
 * which loads each alias names and how often each is referenced (constructor), the columns
 * needed (pruneColumns), conditions and dependent joins (pushFilters), LIMIT (pushLimit).
 */
class ScanPlanner {
  /** The loads of row sources, by load name. */
  readonly loads = new Map<string, BoundTable>();
  /** Which loads each alias names. */
  private readonly aliasLoads = new Map<string, Set<string>>();
  /** How often each load is referenced: a load named twice serves both (no LIMIT; conditions and keys only where each reference has its own). */
  private readonly references = new Map<string, number>();
  /** The references of each load, in the order of the statement. */
  private readonly occurrences = new Map<string, RangeVar[]>();
  /** Loads whose columns are renamed by an alias list (`t AS x(a, b)`): every column is needed. */
  private readonly renamed = new Set<string>();
  /** Conditions pushed for each reference of each load, in the source's dialect. */
  private readonly pushed = new Map<string, Map<RangeVar, string[]>>();
  /** The share of rows the pushed conditions of each reference keep (estimated). */
  private readonly shares = new Map<RangeVar, number>();
  private readonly limitPlans = new Map<string, Pick<ScanPlan, 'orderBy' | 'limit'>>();
  private readonly dependencies = new Map<string, ScanPlan['dependencies']>();
  /** Dependent joins of each reference of a load named more than once: the load takes those every reference has. */
  private readonly referenceDependencies = new Map<RangeVar, ScanPlan['dependencies']>();

  constructor(
    private readonly bound: BoundStatement,
    private readonly registry: PlanCatalog,
  ) {
    for (const table of bound.tables) if (table.loadName && table.resolved.origin === 'rows') this.loads.set(table.loadName, table);
    for (const loadName of this.loads.keys()) {
      this.pushed.set(loadName, new Map());
      this.occurrences.set(loadName, []);
      this.dependencies.set(loadName, []);
    }
    // Which loads each alias names, how often each load is referenced, which are renamed.
    walk(this.bound.ast, (key, node) => {
      if (key === 'JoinExpr' && node.alias) {
        // `(a JOIN b) AS j`: j names the loads of both sides (j.*).
        const alias = lower(String(node.alias.aliasname));
        if (!this.aliasLoads.has(alias)) this.aliasLoads.set(alias, new Set());
        walk(node, (k, n) => {
          if (k === 'RangeVar' && typeof n.relname === 'string' && this.loads.has(n.relname)) this.aliasLoads.get(alias)!.add(n.relname);
        });
      }
      if (key !== 'RangeVar' || typeof node.relname !== 'string' || !this.loads.has(node.relname)) return;
      const alias = rangeAlias(node);
      if (!this.aliasLoads.has(alias)) this.aliasLoads.set(alias, new Set());
      this.aliasLoads.get(alias)!.add(node.relname);
      this.references.set(node.relname, (this.references.get(node.relname) ?? 0) + 1);
      this.occurrences.get(node.relname)!.push(node);
      if (node.alias?.colnames) this.renamed.add(node.relname);
    });
  }

  private tableOf(loadName: string): TableDef {
    return this.loads.get(loadName)!.resolved.table;
  }

  private hasColumn(loadName: string, name: string): boolean {
    return this.tableOf(loadName).columns.some((c) => lower(c.name) === lower(name));
  }

  /** The columns each load must read (all of them without pushdown). */
  pruneColumns(pushdown: boolean): Map<string, ColumnDef[]> {
    // Columns needed: conservative, any reference that may mean a column of a load marks it.
    const everything = new Set<string>();
    const needed = new Map<string, Set<string>>([...this.loads.keys()].map((l) => [l, new Set<string>()]));
    const markAll = (loadNames: Iterable<string>) => {
      for (const l of loadNames) everything.add(l);
    };
    const markName = (loadNames: Iterable<string>, name: string) => {
      for (const l of loadNames) if (this.hasColumn(l, name)) needed.get(l)!.add(lower(name));
    };
    /** The this.loads a SELECT reads directly in its FROM (not inside its subqueries). */
    const directLoads = (select: SelectStmt): string[] => {
      const found: string[] = [];
      const visit = (item: Node | undefined): void => {
        if (!item) return;
        if ('RangeVar' in item && typeof item.RangeVar.relname === 'string' && this.loads.has(item.RangeVar.relname))
          found.push(item.RangeVar.relname);
        else if ('JoinExpr' in item) [item.JoinExpr.larg, item.JoinExpr.rarg].forEach(visit);
        else if ('RangeTableSample' in item) visit(item.RangeTableSample.relation);
      };
      for (const item of select.fromClause ?? []) visit(item);
      return found;
    };
    // `*` and NATURAL JOIN mean every column of the tables in the FROM of their own SELECT: a
    // subquery's columns (a view's, a narrowed table's) are those of its own select list.
    const markColumns = (value: unknown, scope: readonly string[]): void =>
      walk(value, (key, node) => {
        if (key === 'SelectStmt') {
          markColumns(node, directLoads(node));
          return 'skip';
        }
        // EXISTS asks whether rows exist: a `*` in its select list needs no column (TPC-H's Q22).
        const exists = key === 'SubLink' && node.subLinkType === 'EXISTS_SUBLINK' ? asKind(node.subselect, 'SelectStmt') : undefined;
        if (exists) {
          const targetList = (exists.targetList ?? []).filter((item) => !isStar(asKind(item, 'ResTarget')?.val));
          markColumns({ ...exists, targetList }, directLoads(exists));
          return 'skip';
        }
        if (key === 'ColumnRef') {
          const fields = fieldNames(node.fields);
          const last = fields[fields.length - 1]!;
          if (fields.length === 1) {
            if (last === '*') markAll(scope);
            else {
              markName(this.loads.keys(), last);
              markAll(this.aliasLoads.get(lower(last)) ?? []); // a whole-row reference
            }
          } else {
            const targets = this.aliasLoads.get(lower(fields[fields.length - 2]!)) ?? new Set<string>();
            if (last === '*') markAll(targets);
            else markName(targets, last);
          }
        } else if (key === 'JoinExpr') {
          if (node.isNatural) markAll(scope);
          for (const name of fieldNames(node.usingClause)) markName(this.loads.keys(), name);
        }
      });
    markColumns(this.bound.ast, [...this.loads.keys()]);
    markAll(this.renamed);
    const columns = new Map<string, ColumnDef[]>();
    for (const loadName of this.loads.keys()) {
      const all = this.tableOf(loadName).columns;
      let used = everything.has(loadName) || !pushdown ? all : all.filter((c) => needed.get(loadName)!.has(lower(c.name)));
      // Nothing referenced (count(*)): one column still carries the row count.
      if (used.length === 0 && all.length > 0) used = [all[0]!];
      columns.set(loadName, used);
    }
    return columns;
  }

  /** Pushes every SELECT's WHERE and ON conditions to the loads of its FROM; notes dependent joins. */
  pushFilters(): void {
    walk(this.bound.ast, (key, node) => {
      if (key === 'SelectStmt') this.pushSelect(node);
    });
  }

  /**
   * What a load's source is asked to filter: its one reference's conditions ANDed; for a load
   * that serves several references, the rows any of them may use (each reference's conditions
   * ANDed, then ORed), and nothing when one reference has no condition of its own.
   */
  private loadFilter(loadName: string): { filter: string | null; share: number } {
    const pushed = this.pushed.get(loadName)!;
    const each = this.occurrences.get(loadName)!.map((range) => ({ filters: pushed.get(range) ?? [], share: this.shares.get(range) ?? 1 }));
    const and = (filters: string[]) => filters.map((f) => `(${f})`).join(' AND ');
    if (each.length === 1) return { filter: each[0]!.filters.length > 0 ? and(each[0]!.filters) : null, share: each[0]!.share };
    if (each.length === 0 || each.some((e) => e.filters.length === 0)) return { filter: null, share: 1 };
    return {
      filter: each.map((e) => `(${and(e.filters)})`).join(' OR '),
      share: Math.min(
        1,
        each.reduce((sum, e) => sum + e.share, 0),
      ),
    };
  }

  /** The plans, from the columns chosen and what was pushed. */
  plans(columns: Map<string, ColumnDef[]>): Map<string, ScanPlan> {
    const plans = new Map<string, ScanPlan>();
    for (const [loadName, table] of this.loads) {
      const { filter, share } = this.loadFilter(loadName);
      const cardinality = table.resolved.table.cardinality;
      plans.set(loadName, {
        bound: table,
        columns: columns.get(loadName)!,
        filter,
        rows: cardinality === null ? null : Math.max(filter !== null ? 1 : 0, Math.round(cardinality * share)),
        dependencies: (this.references.get(loadName) ?? 0) > 1 ? this.sharedDependencies(loadName) : this.dependencies.get(loadName)!,
        ...this.limitPlans.get(loadName),
      });
    }
    return plans;
  }

  /**
   * LIMIT (with its ORDER BY) of a statement over one table: the source sends only the first
   * LIMIT + OFFSET rows. Only when the engine keeps every row the source sends and orders them
   * the same way: all conditions pushed exactly, nothing that aggregates or removes rows after
   * the WHERE, and sort keys that are plain columns ordered alike on both sides.
   */
  pushLimit(): void {
    const select = asKind(statementOf(this.bound.ast), 'SelectStmt');
    if (!select || select.op !== 'SETOP_NONE' || select.distinctClause || select.groupClause || select.havingClause) return;
    if (select.windowClause || select.withClause || select.valuesLists || select.lockingClause) return;
    const limit = constantInt(select.limitCount);
    const offset = select.limitOffset === undefined ? 0 : constantInt(select.limitOffset);
    if (limit === null || offset === null) return;
    const from = select.fromClause ?? [];
    const range = from.length === 1 ? (asKind(from[0], 'RangeVar') ?? null) : null;
    const loadName = range && typeof range.relname === 'string' ? range.relname : null;
    if (!loadName || !this.loads.has(loadName) || (this.references.get(loadName) ?? 0) !== 1) return;
    let simple = true;
    walk(select, (key, node) => {
      // Only scalar functions known not to aggregate; anything else might (count, sum, ...).
      if (key === 'FuncCall' && (!hasFact(lower(fieldNames(node.funcname).pop() ?? ''), 'keepsRows') || node.over)) simple = false;
      if (key === 'SubLink' || key === 'RangeSubselect') simple = false;
    });
    if (!simple) return;
    const bt = this.loads.get(loadName)!;
    if (bt.resolved.origin !== 'rows') return;
    const connector = this.registry.connectorOf(bt.resolved.source) as RowConnector;
    const alias = rangeAlias(range!);
    const table = bt.resolved.table;
    const columnOf = (fields: string[]) =>
      fields.length === 1 || (fields.length === 2 && lower(fields[0]!) === alias)
        ? table.columns.find((c) => lower(c.name) === lower(fields[fields.length - 1]!))
        : undefined;
    // Every condition must reach the source exactly, or the source's first rows are not the engine's.
    for (const part of conjuncts(select.whereClause)) {
      if (!connector.pushdown.applyFilter(foldDateArithmetic(part, columnOf), { column: columnOf })?.exact) return;
    }
    const targets = select.targetList ?? [];
    const orderBy: SortKey[] = [];
    for (const item of select.sortClause ?? []) {
      const sort = asKind(item, 'SortBy')!;
      const ref = asKind(sortTarget(sort.node, targets), 'ColumnRef');
      const column = ref ? columnOf(fieldNames(ref.fields)) : undefined;
      if (!column) return;
      const descending = sort.sortby_dir === 'SORTBY_DESC';
      const nullsFirst = sort.sortby_nulls === 'SORTBY_NULLS_FIRST' || (sort.sortby_nulls !== 'SORTBY_NULLS_LAST' && descending);
      orderBy.push({ column, descending, nullsFirst });
    }
    const topN = connector.pushdown.applyTopN(orderBy, limit + offset);
    if (!topN) return;
    this.limitPlans.set(loadName, topN);
  }

  /** Pushes the WHERE and ON conditions of one SELECT to the this.loads of its FROM. */
  private pushSelect(select: SelectStmt): void {
    const scope: ScopeItem[] = [];
    const onTargets: OnTargets = [];
    for (const item of select.fromClause ?? []) scope.push(...this.fromItem(item, onTargets));
    if (scope.every((s) => !s.loadName)) return;
    const attempt = (condition: Node | undefined, targets: ScopeItem[]) => {
      for (const part of conjuncts(condition)) {
        if (asKind(part, 'SubLink')) this.noteSemiJoin(asKind(part, 'SubLink')!, targets, scope);
        if (contains(part, 'SubLink')) continue;
        for (const target of targets) this.tryPush(part, target, scope);
        this.noteEquiJoin(part, targets, scope);
        // An OR over several tables still narrows each table that every alternative names.
        for (const target of targets) {
          const own = this.factoredOut(part, target, scope);
          if (own) this.tryPush(own, target, scope);
        }
      }
    };
    const filterable = scope.filter((s) => s.loadName && !s.nullable);
    attempt(select.whereClause, filterable);
    for (const { quals, targets } of onTargets) attempt(quals, targets);
    // Correlated subqueries anywhere in this SELECT (NOT EXISTS, scalar ones too) narrow their tables by this scope's keys.
    walk([select.whereClause, select.targetList, select.havingClause, onTargets.map((o) => o.quals)], (key, node) => {
      if (key === 'SelectStmt') return 'skip';
      if (key === 'SubLink') this.noteCorrelated(node, scope);
    });
    // Conditions carried through equi-joins to the other tables (equivalences.ts): facts of
    // WHERE and of inner joins' ON, over tables no outer join fills with NULLs.
    const facts = [select.whereClause, ...onTargets.filter((o) => o.inner).map((o) => o.quals)]
      .flatMap((condition) => conjuncts(condition))
      .filter((part) => !contains(part, 'SubLink'));
    const resolve = (fields: string[]) => {
      const found = this.resolveColumn(fields, scope);
      return found && filterable.includes(found.item) ? { alias: found.item.alias, column: found.column } : null;
    };
    for (const { alias, condition } of deriveThroughEquiJoins(facts, resolve, typeFamily)) {
      const target = filterable.find((s) => s.alias === alias);
      if (target) this.tryPush(condition, target, scope);
    }
  }

  /** Scope items of a FROM entry; `nullable` is relative to this entry. Collects ON targets. */
  private fromItem(item: Node | undefined, onTargets: OnTargets): ScopeItem[] {
    if (!item) return [];
    if ('RangeVar' in item) {
      const rv = item.RangeVar;
      const alias = rangeAlias(rv);
      // Columns renamed by an alias list: names here are not the table's, nothing is pushed through them.
      if (rv.alias?.colnames) return [{ alias, nullable: false }];
      const loadName = typeof rv.relname === 'string' && this.loads.has(rv.relname) ? rv.relname : undefined;
      const resolved = this.bound.tables.find(
        (t) => t.loadName === loadName || (!t.loadName && t.resolved.origin !== 'rows' && t.resolved.engineName === rv.relname),
      );
      const columns = resolved ? new Set(resolved.resolved.table.columns.map((c) => lower(c.name))) : undefined;
      return [{ alias, loadName, columns, nullable: false, range: loadName ? rv : undefined }];
    }
    if ('JoinExpr' in item) {
      const join = item.JoinExpr;
      const type = String(join.jointype);
      // Nullability relative to each input of this join first, then relative to the join.
      const leftInput = this.fromItem(join.larg, onTargets);
      const rightInput = this.fromItem(join.rarg, onTargets);
      if (join.quals) {
        const filterable = (items: ScopeItem[]) => items.filter((s) => s.loadName && !s.nullable);
        // ON filters both inputs of an inner join, and only the null-supplying input of an outer one.
        const targets =
          type === 'JOIN_INNER'
            ? [...filterable(leftInput), ...filterable(rightInput)]
            : type === 'JOIN_LEFT'
              ? filterable(rightInput)
              : type === 'JOIN_RIGHT'
                ? filterable(leftInput)
                : [];
        onTargets.push({ quals: join.quals, targets, inner: type === 'JOIN_INNER' });
      }
      const nullableLeft = type === 'JOIN_RIGHT' || type === 'JOIN_FULL';
      const nullableRight = type === 'JOIN_LEFT' || type === 'JOIN_FULL';
      return [
        ...leftInput.map((s) => ({ ...s, nullable: s.nullable || nullableLeft })),
        ...rightInput.map((s) => ({ ...s, nullable: s.nullable || nullableRight })),
      ];
    }
    if ('RangeSubselect' in item) {
      const projection = this.loadProjection(item.RangeSubselect);
      if (projection) return [projection];
    }
    // Other subqueries and table functions: their columns are unknown here.
    const other = 'RangeSubselect' in item ? item.RangeSubselect : 'RangeFunction' in item ? item.RangeFunction : undefined;
    const alias = other?.alias ? lower(String(other.alias.aliasname)) : '';
    return [{ alias, nullable: false }];
  }

  /**
   * `(SELECT a, b, f(c) AS c FROM load WHERE ...) AS x`, the shape of a table narrowed for a
   * user (access.ts): a condition on x.a or x.b means the same on the load's a and b, so it may
   * be pushed there too. Computed columns (masks) are left out: a condition on one is about the
   * computed value.
   */
  private loadProjection(subselect: RangeSubselect): ScopeItem | null {
    const select = asKind(subselect.subquery, 'SelectStmt');
    if (!select || select.op !== 'SETOP_NONE' || subselect.lateral) return null;
    for (const clause of [
      'distinctClause',
      'groupClause',
      'havingClause',
      'windowClause',
      'limitCount',
      'limitOffset',
      'withClause',
      'valuesLists',
      'sortClause',
    ] as const) {
      if (select[clause]) return null;
    }
    const alias = subselect.alias ?? null;
    if (!alias || alias.colnames) return null;
    const from = select.fromClause ?? [];
    const range = from.length === 1 ? (asKind(from[0], 'RangeVar') ?? null) : null;
    const loadName = range && typeof range.relname === 'string' && this.loads.has(range.relname) ? range.relname : undefined;
    if (!loadName) return null;
    // A window, aggregate or set-returning function in the select list sees the rows before an
    // outer condition: pushing it below would change what those compute.
    let computesOverRows = false;
    walk(select.targetList, (key, node) => {
      if (
        key === 'FuncCall' &&
        (node.over || node.agg_star || node.agg_distinct || hasFact(lower(fieldNames(node.funcname).pop() ?? ''), 'computesOverRows'))
      )
        computesOverRows = true;
    });
    if (computesOverRows) return null;
    const columns = new Set<string>();
    for (const item of select.targetList ?? []) {
      const target = asKind(item, 'ResTarget');
      const ref = fieldNames(asKind(target?.val, 'ColumnRef')?.fields);
      const name = ref[ref.length - 1];
      if (ref.length !== 1 || name === '*' || (typeof target!.name === 'string' && lower(target!.name) !== lower(name!))) continue;
      if (this.hasColumn(loadName, name!)) columns.add(lower(name!));
    }
    return { alias: lower(String(alias.aliasname)), loadName, columns, nullable: false, range: range! };
  }

  /** The load and column a column reference means in `scope`, if it is a loaded table's. */
  private resolveColumn(fields: string[], scope: ScopeItem[]): { item: ScopeItem; column: ColumnDef } | null {
    const name = lower(fields[fields.length - 1] ?? '');
    let candidates: ScopeItem[];
    if (fields.length === 2) candidates = scope.filter((s) => s.alias === lower(fields[0]!));
    else if (fields.length === 1) {
      candidates = scope.filter((s) => !s.columns || s.columns.has(name));
      if (candidates.some((s) => !s.columns)) return null;
    } else return null;
    if (candidates.length !== 1 || !candidates[0]!.loadName || !candidates[0]!.columns?.has(name)) return null;
    const column = this.tableOf(candidates[0]!.loadName).columns.find((c) => lower(c.name) === name);
    return column ? { item: candidates[0]!, column } : null;
  }

  /**
   * What an OR of conditions over several tables asks of one of them, `(a.x = 1 AND b.y = 2) OR
   * (a.x = 3 AND b.y = 4)` of `a`: `a.x = 1 OR a.x = 3`, where every alternative has conditions
   * on that table alone (else null). A row of `a` that the factored condition drops fails every
   * alternative, so it keeps every row the statement keeps (the engine applies the whole OR).
   */
  private factoredOut(condition: Node, target: ScopeItem, scope: ScopeItem[]): Node | null {
    const or = asKind(condition, 'BoolExpr');
    if (or?.boolop !== 'OR_EXPR') return null;
    const own = (part: Node) =>
      everyNode(part, (key, node) => key !== 'ColumnRef' || this.resolveColumn(fieldNames(node.fields), scope)?.item === target) &&
      contains(part, 'ColumnRef');
    const alternatives: Node[] = [];
    for (const alternative of or.args ?? []) {
      const parts = conjuncts(alternative).filter(own);
      if (parts.length === 0) return null;
      alternatives.push(parts.length === 1 ? parts[0]! : { BoolExpr: { boolop: 'AND_EXPR', args: parts } });
    }
    // The whole OR is already this table's own: tried as it is.
    if (own(condition)) return null;
    return { BoolExpr: { boolop: 'OR_EXPR', args: alternatives } };
  }

  /** `a.x = b.y` between two loads: each side that the condition filters may depend on the other. */
  private noteEquiJoin(condition: Node, targets: ScopeItem[], scope: ScopeItem[]): void {
    const expr = asKind(condition, 'A_Expr');
    if (!expr || expr.kind !== 'AEXPR_OP' || fieldNames(expr.name)[0] !== '=') return;
    const side = (node: Node | undefined) => {
      const ref = asKind(node, 'ColumnRef');
      return ref ? this.resolveColumn(fieldNames(ref.fields), scope) : null;
    };
    const left = side(expr.lexpr);
    const right = side(expr.rexpr);
    if (!left || !right || left.item.loadName === right.item.loadName) return;
    // Keys are compared as values of one kind on both sides; mixed kinds compare through casts.
    if (typeFamily(left.column.type) === null || typeFamily(left.column.type) !== typeFamily(right.column.type)) return;
    for (const [target, other] of [
      [left, right],
      [right, left],
    ] as const) {
      const loadName = target.item.loadName!;
      if (!targets.some((t) => t.loadName === loadName && t.alias === target.item.alias)) continue;
      this.noteDependency(target.item, { column: target.column, from: other.item.loadName!, fromColumn: other.column });
    }
  }

  /**
   * A dependent join of one reference to a load. A load serving several references (a table
   * named twice) is narrowed only by the keys every reference depends on alike: rows any of
   * them may use match those keys (plans()).
   */
  private noteDependency(item: ScopeItem, dependency: ScanPlan['dependencies'][number]): void {
    const loadName = item.loadName!;
    if ((this.references.get(loadName) ?? 0) === 1) this.dependencies.get(loadName)!.push(dependency);
    else if (item.range) this.referenceDependencies.set(item.range, [...(this.referenceDependencies.get(item.range) ?? []), dependency]);
  }

  /** The dependencies every reference of a load named several times has (same column, load and key column). */
  private sharedDependencies(loadName: string): ScanPlan['dependencies'] {
    const each = this.occurrences.get(loadName)!.map((range) => this.referenceDependencies.get(range) ?? []);
    const key = (d: ScanPlan['dependencies'][number]) => `${lower(d.column.name)}\u0000${d.from}\u0000${lower(d.fromColumn.name)}`;
    const [first = [], ...rest] = each;
    const shared = first.filter((d) => rest.every((other) => other.some((o) => key(o) === key(d))));
    return shared.filter((d, i) => shared.findIndex((o) => key(o) === key(d)) === i);
  }

  /**
   * `a.x IN (SELECT b.y FROM b ...)` and `EXISTS (SELECT ... FROM b WHERE b.y = a.x ...)`, a
   * conjunct that filters `a`: rows of `a` whose x is no y of b's load cannot be in the answer
   * (b's load holds every row the subquery may use), so `a` may depend on b's keys as in an
   * equi-join. Only plain subqueries over loads, with qualified references on both sides.
   */
  private noteSemiJoin(sublink: SubLink, targets: ScopeItem[], scope: ScopeItem[]): void {
    const select = asKind(sublink.subselect, 'SelectStmt');
    if (!select || select.op !== 'SETOP_NONE') return;
    const inner: ScopeItem[] = [];
    for (const item of select.fromClause ?? []) inner.push(...this.fromItem(item, []));
    const own = (node: Node | undefined, where: ScopeItem[]) => {
      const fields = fieldNames(asKind(node, 'ColumnRef')?.fields);
      const found = fields.length === 2 ? this.resolveColumn(fields, where) : null;
      return found && !found.item.nullable ? found : null;
    };
    const pairs: Array<[ReturnType<typeof own>, ReturnType<typeof own>]> = [];
    // `x IN (...)` has no operator name; `x = ANY (...)` names '='.
    const operator = fieldNames(sublink.operName).join('.');
    if (sublink.subLinkType === 'ANY_SUBLINK' && (operator === '' || operator === '=') && select.targetList?.length === 1) {
      pairs.push([own(sublink.testexpr, scope), own(asKind(select.targetList[0], 'ResTarget')?.val, inner)]);
    } else if (sublink.subLinkType === 'EXISTS_SUBLINK') {
      const innerAliases = new Set(inner.map((i) => i.alias));
      for (const part of conjuncts(select.whereClause)) {
        const expr = asKind(part, 'A_Expr');
        if (!expr || !exprIs(expr, 'AEXPR_OP') || fieldNames(expr.name).join('.') !== '=') continue;
        for (const [outerSide, innerSide] of [
          [expr.lexpr, expr.rexpr],
          [expr.rexpr, expr.lexpr],
        ] as const) {
          // The outer reference must not name a table of the subquery (which would hide the outer one).
          const alias = lower(fieldNames(asKind(outerSide, 'ColumnRef')?.fields)[0] ?? '');
          if (!innerAliases.has(alias)) pairs.push([own(outerSide, scope), own(innerSide, inner)]);
        }
      }
    }
    for (const [outer, from] of pairs) {
      if (!outer || !from || outer.item.loadName === from.item.loadName) continue;
      if (typeFamily(outer.column.type) === null || typeFamily(outer.column.type) !== typeFamily(from.column.type)) continue;
      if (!targets.includes(outer.item)) continue;
      this.noteDependency(outer.item, { column: outer.column, from: from.item.loadName!, fromColumn: from.column });
    }
  }

  /**
   * `(SELECT ... FROM b WHERE b.y = a.x AND ...)` correlated to `a` of the enclosing SELECT, in any
   * place (EXISTS, NOT EXISTS, a scalar subquery): a row of b whose y is no x of a's load fails
   * that conjunct for every outer row, so the subquery never uses it, whatever it computes from
   * the rows left (its WHERE comes first). b may take a's keys (dependent join).
   */
  private noteCorrelated(sublink: SubLink, outer: ScopeItem[]): void {
    const select = asKind(sublink.subselect, 'SelectStmt');
    if (!select || select.op !== 'SETOP_NONE') return;
    const inner: ScopeItem[] = [];
    for (const item of select.fromClause ?? []) inner.push(...this.fromItem(item, []));
    const innerAliases = new Set(inner.map((i) => i.alias));
    // A reference the subquery's own tables cannot mean (by their alias, or by a column name none of them may have).
    const outside = (fields: string[]) =>
      fields.length === 2
        ? !innerAliases.has(lower(fields[0]!))
        : fields.length === 1 && inner.every((i) => i.columns && !i.columns.has(lower(fields[0]!)));
    for (const part of conjuncts(select.whereClause)) {
      const expr = asKind(part, 'A_Expr');
      if (!expr || !exprIs(expr, 'AEXPR_OP') || fieldNames(expr.name).join('.') !== '=') continue;
      for (const [innerSide, outerSide] of [
        [expr.lexpr, expr.rexpr],
        [expr.rexpr, expr.lexpr],
      ] as const) {
        const innerFields = fieldNames(asKind(innerSide, 'ColumnRef')?.fields);
        const outerFields = fieldNames(asKind(outerSide, 'ColumnRef')?.fields);
        if (!outside(outerFields)) continue;
        const own = this.resolveColumn(innerFields, inner);
        const from = this.resolveColumn(outerFields, outer);
        if (!own || !from || own.item.nullable || own.item.loadName === from.item.loadName) continue;
        if (typeFamily(own.column.type) === null || typeFamily(own.column.type) !== typeFamily(from.column.type)) continue;
        this.noteDependency(own.item, { column: own.column, from: from.item.loadName!, fromColumn: from.column });
      }
    }
  }

  private tryPush(condition: Node, target: ScopeItem, scope: ScopeItem[]): void {
    const loadName = target.loadName!;
    // Conditions are kept per reference (loadFilter): one the scope cannot name stays in the engine.
    if (!target.range) return;
    const bt = this.loads.get(loadName)!;
    if (bt.resolved.origin !== 'rows') return;
    const connector = this.registry.connectorOf(bt.resolved.source) as RowConnector;
    const table = bt.resolved.table;
    const column = (fields: string[]): ColumnDef | undefined => {
      const name = lower(fields[fields.length - 1] ?? '');
      if (fields.length === 2 && lower(fields[0]!) !== target.alias) return undefined;
      if (fields.length > 2) return undefined;
      if (fields.length === 1) {
        // Unqualified: only when no other FROM entry can have such a column.
        const others = scope.filter((s) => s.alias !== target.alias || s.loadName !== target.loadName);
        if (others.some((s) => !s.columns || s.columns.has(name))) return undefined;
      }
      // Only the columns this FROM entry shows as they are (not a narrowing subquery's computed ones).
      if (!target.columns?.has(name)) return undefined;
      return table.columns.find((c) => lower(c.name) === name);
    };
    const offered = foldDateArithmetic(condition, column);
    const taken = connector.pushdown.applyFilter(offered, { column });
    if (!taken) return;
    const pushed = this.pushed.get(loadName)!;
    pushed.set(target.range, [...(pushed.get(target.range) ?? []), taken.sql]);
    this.shares.set(target.range, (this.shares.get(target.range) ?? 1) * selectivity(table, [offered], column));
  }
}

/** `*` or `alias.*` as a select-list item. */
function isStar(node: Node | undefined): boolean {
  const fields = asKind(node, 'ColumnRef')?.fields ?? [];
  return fields.length > 0 && 'A_Star' in fields[fields.length - 1]!;
}
