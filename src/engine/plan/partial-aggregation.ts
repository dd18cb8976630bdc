/**
 * Partial aggregation below a join (Teiid's and Trino's pushdown of aggregates through joins).
 * For an aggregate statement over inner joins, one table's rows can be grouped at its source by
 * the columns the rest of the statement needs from it (join keys and grouping columns), with
 * count, sum, min and max computed per group; the engine then aggregates those partial results
 * (count -> sum of counts, sum -> sum of sums, min/max of mins/maxes). The source sends one row
 * per group instead of one per row.
 *
 * Applied only where the answer cannot change: inner joins only, no DISTINCT aggregates, no
 * FILTER, no window functions, no subqueries, every column of the table qualified, its own
 * conditions pushed exactly (they cannot be re-checked after grouping), aggregates over other
 * tables only min/max (grouping changes how often their rows join).
 */
import type { FuncCall, Node, ParseResult, SelectStmt } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { PartialAggregate, RowConnector } from '../../connectors/types.js';
import { hasFact } from '../tree/functions.js';
import type { BoundStatement } from '../access/bind.js';
import type { ScanPlan } from './scans.js';
import { foldDateArithmetic } from './date-folding.js';
import {
  asKind,
  conjuncts,
  fieldNames,
  lower,
  nameNode,
  rangeAlias,
  replaceNodes,
  replaceNodesBelow,
  statementOf,
  walk,
} from '../tree/ast.js';

export interface PartialAggregation {
  /** The statement the engine runs over the partial results. */
  ast: ParseResult;
  loadName: string;
  /** The grouping columns read from the source. */
  keys: ColumnDef[];
  aggregates: Array<PartialAggregate & { alias: string; type: string }>;
  /** The table's own conditions, all pushed exactly. */
  filter: string | null;
}

class Abort extends Error {}

const andOf = (parts: Node[]): Node | undefined =>
  parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : { BoolExpr: { boolop: 'AND_EXPR', args: parts } };

/** The aliases of every column reference in a node. */
function aliasesIn(node: Node | undefined): Set<string> {
  const aliases = new Set<string>();
  walk(node, (key, n) => {
    if (key !== 'ColumnRef') return;
    const fields = fieldNames(n.fields);
    aliases.add(fields.length >= 2 ? lower(fields[fields.length - 2]!) : '');
  });
  return aliases;
}

/** `CAST(expr AS type)`. */
const typed = (expr: Node, type: string): Node => ({ TypeCast: { arg: expr, typeName: { names: [nameNode(type)] } } });

function sumType(column: ColumnDef): string {
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/i.exec(column.type);
  if (decimal) return `DECIMAL(38,${decimal[2]})`;
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT)/.test(column.type)) return 'DECIMAL(38,0)';
  if (/^(FLOAT|DOUBLE)/.test(column.type)) return 'DOUBLE';
  throw new Abort();
}

export function planPartialAggregation(
  bound: BoundStatement,
  plans: Map<string, ScanPlan>,
  registry: PlanCatalog,
): PartialAggregation | null {
  // A join of two loads at least (a table named twice is one load): nothing to look at otherwise.
  if (plans.size < 2) return null;
  const select = asKind(statementOf(bound.ast), 'SelectStmt');
  if (!select || select.op !== 'SETOP_NONE' || select.distinctClause || select.windowClause || select.withClause || select.valuesLists)
    return null;
  let unsupported = false;
  walk(select, (key, node) => {
    if (key === 'SubLink' || key === 'RangeSubselect' || key === 'RangeFunction' || key === 'GroupingSet') unsupported = true;
    if (key === 'FuncCall' && (node.over || node.agg_distinct || node.agg_filter || node.agg_order)) unsupported = true;
  });
  if (unsupported) return null;

  // FROM: table references under inner joins only.
  const ranges: Array<{ alias: string; relname: string }> = [];
  const visit = (item: Node | undefined): boolean => {
    if (!item) return false;
    if ('RangeVar' in item) {
      const rv = item.RangeVar;
      ranges.push({ alias: rangeAlias(rv), relname: String(rv.relname) });
      return true;
    }
    if ('JoinExpr' in item) {
      const join = item.JoinExpr;
      if (join.jointype !== 'JOIN_INNER' || join.usingClause || join.isNatural) return false;
      return visit(join.larg) && visit(join.rarg);
    }
    return false;
  };
  if (!(select.fromClause ?? []).every(visit) || ranges.length < 2) return null;

  const candidates = ranges
    .filter((r) => plans.has(r.relname) && ranges.filter((o) => o.relname === r.relname).length === 1)
    .sort(
      (a, b) =>
        (plans.get(b.relname)!.bound.resolved.table.cardinality ?? 0) - (plans.get(a.relname)!.bound.resolved.table.cardinality ?? 0),
    );
  for (const candidate of candidates) {
    try {
      const result = rewrite(bound, select, candidate, plans.get(candidate.relname)!, registry);
      if (result) return result;
    } catch (err) {
      if (!(err instanceof Abort)) throw err;
    }
  }
  return null;
}

function rewrite(
  bound: BoundStatement,
  original: SelectStmt,
  target: { alias: string; relname: string },
  plan: ScanPlan,
  registry: PlanCatalog,
): PartialAggregation | null {
  const resolved = plan.bound.resolved;
  if (resolved.origin !== 'rows') return null;
  const connector = registry.connectorOf(resolved.source) as RowConnector;
  const table = resolved.table;
  // Unqualified references could mean the table's columns: not handled.
  walk(original, (key, node) => {
    if (key !== 'ColumnRef') return;
    const fields = fieldNames(node.fields);
    if (fields.length === 1 && table.columns.some((c) => lower(c.name) === lower(fields[0]!))) throw new Abort();
    if (fields.length === 1 && fields[0] === '*') throw new Abort();
  });

  const ast = structuredClone(bound.ast);
  const select = asKind(statementOf(ast), 'SelectStmt')!;
  const rewriting = new PartialRewrite(target.alias, table, connector);
  select.whereClause = rewriting.splitCondition(select.whereClause);
  if (select.whereClause === undefined) delete select.whereClause;
  walk(select.fromClause, (key, node) => {
    if (key === 'JoinExpr' && node.quals) {
      const quals = rewriting.splitCondition(node.quals);
      node.quals = quals ?? { A_Const: { boolval: { boolval: true } } };
    }
  });
  rewriting.groupKeys(select.groupClause ?? []);
  const transform = (value: Node) => rewriting.transform(value);
  replaceNodesBelow(select.targetList, transform);
  if (select.havingClause) select.havingClause = replaceNodes(select.havingClause, transform);
  if (select.sortClause) replaceNodesBelow(select.sortClause, transform);
  const { keys, aggregates, pushedSql } = rewriting;
  if (!rewriting.hasAggregate && !select.groupClause) return null;
  if (aggregates.length === 0 && keys.size === table.columns.length) return null;

  // The source may decline (no aggregates, or keys it groups otherwise than the engine).
  const taken = connector.pushdown.applyAggregation(
    table.columns.filter((c) => keys.has(c.name)),
    aggregates.map(({ fn, column }) => ({ fn, column })),
  );
  if (!taken) return null;
  return {
    ast,
    loadName: target.relname,
    keys: taken.keys,
    aggregates,
    filter: pushedSql.length > 0 ? pushedSql.map((p) => `(${p})`).join(' AND ') : null,
  };
}

/** The rewrite of one statement for partial aggregation at the table under `alias`: what it pushes, groups by and computes there. */
class PartialRewrite {
  /** The grouping keys at the source: GROUP BY columns and join keys. */
  readonly keys = new Map<string, ColumnDef>();
  /** The table's own conditions, in the source's dialect (exact). */
  readonly pushedSql: string[] = [];
  readonly aggregates: PartialAggregation['aggregates'] = [];
  hasAggregate = false;

  constructor(
    private readonly alias: string,
    private readonly table: TableDef,
    private readonly connector: RowConnector,
  ) {}

  /** The table's column that `alias.column` names; null for anything else. */
  private columnOf(fields: string[]): ColumnDef | null {
    if (fields.length !== 2 || lower(fields[0]!) !== this.alias) return null;
    return this.table.columns.find((c) => lower(c.name) === lower(fields[1]!)) ?? null;
  }

  /** Splits a condition: the table's own parts are pushed (exactly) and dropped here. */
  splitCondition(condition: Node | undefined): Node | undefined {
    const kept: Node[] = [];
    for (const part of conjuncts(condition)) {
      const aliases = aliasesIn(part);
      if (!aliases.has(this.alias)) {
        kept.push(part);
        continue;
      }
      if (aliases.size === 1) {
        this.pushedSql.push(this.pushed(part));
        continue;
      }
      // A join condition: only `t.k = other.x`, which keeps t.k as a grouping key.
      const expr = asKind(part, 'A_Expr');
      if (!expr || expr.kind !== 'AEXPR_OP' || fieldNames(expr.name)[0] !== '=') throw new Abort();
      const sides = [expr.lexpr, expr.rexpr].map((s) => {
        const ref = asKind(s, 'ColumnRef');
        return ref ? fieldNames(ref.fields) : null;
      });
      const own = sides.map((f) => (f ? this.columnOf(f) : null));
      const ownSide = own.findIndex((c) => c !== null);
      if (ownSide < 0 || own[1 - ownSide] || !sides[1 - ownSide]) throw new Abort();
      this.keys.set(own[ownSide]!.name, own[ownSide]!);
      kept.push(part);
    }
    return andOf(kept);
  }

  /** A condition on the table alone in the source's dialect; it must be exact. */
  private pushed(part: Node): string {
    const column = (fields: string[]) => this.columnOf(fields) ?? undefined;
    const taken = this.connector.pushdown.applyFilter(foldDateArithmetic(part, column), { column });
    if (!taken?.exact) throw new Abort();
    return taken.sql;
  }

  /** GROUP BY items of the table: its plain columns, which become keys. */
  groupKeys(items: Node[]): void {
    for (const item of items) {
      const aliases = aliasesIn(item);
      if (!aliases.has(this.alias)) continue;
      const ref = asKind(item, 'ColumnRef');
      const fields = ref ? fieldNames(ref.fields) : null;
      const column = fields ? this.columnOf(fields) : null;
      if (!column) throw new Abort();
      this.keys.set(column.name, column);
    }
  }

  /**
   * Replaces aggregates over the table by aggregates over its partial results (replaceNodes:
   * a node answered is kept and not walked into; undefined walks into the node).
   */
  transform(value: Node): Node | undefined {
    if ('FuncCall' in value) {
      const fc = value.FuncCall;
      const name = lower(fieldNames(fc.funcname).pop() ?? '');
      if (hasFact(name, 'partialAggregate')) return this.aggregateOf(value, fc, name);
    }
    if ('ColumnRef' in value) {
      const column = this.columnOf(fieldNames(value.ColumnRef.fields));
      // Outside aggregates the table's columns must be grouping keys.
      if (column && !this.keys.has(column.name)) throw new Abort();
      return value;
    }
    return undefined;
  }

  /** An aggregate over partial results: counts summed, sums summed, min of mins, max of maxes. */
  private aggregateOf(value: Node, fc: FuncCall, name: string): Node {
    this.hasAggregate = true;
    const args = fc.args ?? [];
    if (fc.agg_star) return coalesceZero(aggregateCall('sum', [this.partial('count', null, 'BIGINT')]));
    const arg = args[0];
    const ref = args.length === 1 ? asKind(arg, 'ColumnRef') : undefined;
    const fields = ref ? fieldNames(ref.fields) : null;
    const column = fields ? this.columnOf(fields) : null;
    if (!column) {
      // Over other tables: only min and max do not depend on how often rows join.
      if (aliasesIn(arg).has(this.alias) || (name !== 'min' && name !== 'max')) throw new Abort();
      return value;
    }
    if (name === 'count') return coalesceZero(aggregateCall('sum', [this.partial('count', column, 'BIGINT')]));
    if (name === 'sum') {
      // The type the engine gives the sum of the column itself: the same answer on both plans.
      const sum = aggregateCall('sum', [this.partial('sum', column, sumType(column))]);
      // (PostgreSQL's: bigint for narrow integers, numeric for bigint; a float4's sum is float4.)
      if (/^(TINYINT|SMALLINT|INTEGER)$/.test(column.type)) return typed(sum, 'int8');
      return column.type === 'FLOAT' ? typed(sum, 'float4') : sum;
    }
    // min/max of text depend on collation: numbers and dates only.
    if (!/^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT|DECIMAL|FLOAT|DOUBLE|DATE|TIMESTAMP)/.test(column.type)) throw new Abort();
    return aggregateCall(name, [this.partial(name as 'min' | 'max', column, column.type)]);
  }

  /** A partial aggregate computed at the source, as the load's column that holds it. */
  private partial(fn: PartialAggregate['fn'], column: ColumnDef | null, type: string): Node {
    const alias = `__agg_${this.aggregates.length}`;
    this.aggregates.push({ fn, column, alias, type });
    return { ColumnRef: { fields: [nameNode(this.alias), nameNode(alias)] } };
  }
}

const aggregateCall = (fn: string, args: Node[]): Node => ({
  FuncCall: { funcname: [nameNode(fn)], args, funcformat: 'COERCE_EXPLICIT_CALL' },
});

/** A sum of counts over no rows is NULL where the count was 0; a bigint, as a count of rows is. */
const coalesceZero = (expr: Node): Node => typed({ CoalesceExpr: { args: [expr, { A_Const: { ival: { ival: 0 } } }] } }, 'bigint');
