/**
 * The lookup form of a shipped join (exec/ship-lookup.ts writes it): where the shipped table is
 * tied to a PostgreSQL table by an integer equi-join, its rows can go as a lookup array indexed
 * by the key instead of rows PostgreSQL must hash-join. The shipped relation becomes
 *
 *   LATERAL (SELECT o.customer_id AS id, d.country FROM unnest(<codes>, <distinct countries>)
 *            AS d(code, country) WHERE d.code = ('[lo:hi]={...}'::int4[])[o.customer_id]) AS c
 *
 * For each row of `o` that relation holds exactly the shipped rows whose key equals
 * `o.customer_id` (the statement's own join condition keeps no other row), and PostgreSQL joins
 * a few distinct rows instead of one per key. Planned here where it is valid: integer keys of
 * the same type on both sides (`c.id` keeps its type), and a place in the statement where a
 * LATERAL subquery may name the PostgreSQL table (after it in FROM, or the right side of an
 * inner or left join whose left side holds it). Pure: no I/O.
 */
import type { ParseResult } from '@pgsql/types';
import type { ColumnDef } from '../../catalog/types.js';
import { paddedChar } from '../../connectors/kinds.js';
import type { BoundTable } from '../access/bind.js';
import type { Node } from '@pgsql/types';
import { asKind, conjuncts, everyNode, fieldNames, isObject, statementOf, exprIs } from '../tree/ast.js';
import type { ScanPlan } from './scans.js';
import { distinctOf } from './cost.js';

/** How one shipped table's rows may go as a lookup. */
export interface LookupKey {
  /** The alias of the PostgreSQL table the lookup is indexed by, and its join column. */
  alias: string;
  column: ColumnDef;
  /** The key's position among the shipped columns. */
  keyIndex: number;
  /**
   * Fewer distinct keys than this keep the plain form: they match a small share of the
   * PostgreSQL column's values (by its statistics), which PostgreSQL may read through an index,
   * while a lookup is evaluated on every row.
   */
  minKeys: number;
  /** Conditions of the statement on the table that vdb applies to its rows in the lookup form (taken out of `LookupPlan.ast`). */
  conditions?: ExactCondition[];
}

/**
 * A condition on a shipped column that vdb applies exactly as PostgreSQL would: the row is kept
 * when the column's value is one of `values` (text compared as it is, integers as their text).
 */
export interface ExactCondition {
  columnIndex: number;
  values: string[];
}

/** The main shipped table's lookup, with the statement it runs in. */
export interface LookupPlan extends LookupKey {
  /** A copy of the statement with the shipped placeholders, without the keyed wrappers (the lookup filters by key itself). */
  ast: ParseResult;
}

/** The share of the PostgreSQL column's distinct values the keys must reach for the lookup form. */
export const LOOKUP_MIN_SHARE = 0.05;

const INTEGER_TYPES = new Set(['SMALLINT', 'INTEGER', 'BIGINT']);

/** Whether `node` holds a reference to the relation `name`. */
const holds = (node: unknown, name: string): boolean =>
  !everyNode(node, (nodeType, child) => !(nodeType === 'RangeVar' && (child as { relname?: string }).relname === name));

/** Whether `placeholder` stands where a LATERAL subquery in its place sees `target`. */
function lateralSees(ast: ParseResult, placeholder: string, target: string): boolean {
  const isPlaceholder = (node: unknown) => isObject(node) && (node.RangeVar as { relname?: string } | undefined)?.relname === placeholder;
  let seen = false;
  everyNode(ast, (nodeType, node) => {
    if (nodeType === 'JoinExpr') {
      const join = node as { jointype?: string; larg?: unknown; rarg?: unknown };
      if (isPlaceholder(join.rarg) && (join.jointype === 'JOIN_INNER' || join.jointype === 'JOIN_LEFT') && holds(join.larg, target))
        seen = true;
    }
    if (nodeType === 'SelectStmt') {
      const from = ((node as { fromClause?: unknown[] }).fromClause ?? []) as unknown[];
      const at = from.findIndex(isPlaceholder);
      if (at > 0 && from.slice(0, at).some((item) => holds(item, target))) seen = true;
    }
    return !seen;
  });
  return seen;
}

/** How the shipped table at `placeholder` may go as a lookup, where its join allows one; null otherwise. */
export function planLookup(
  ast: ParseResult,
  placeholder: string,
  shipped: { loadName: string; scan: ScanPlan },
  targetTables: BoundTable[],
  scans: Map<string, ScanPlan>,
): LookupKey | null {
  if (shipped.scan.columns.some((c) => c.name === LOOKUP_CODE)) return null;
  for (const table of targetTables) {
    const dependency = scans
      .get(table.loadName ?? '')
      ?.dependencies.find((d) => d.from === shipped.loadName && INTEGER_TYPES.has(d.column.type) && d.fromColumn.type === d.column.type);
    if (!dependency) continue;
    const keyIndex = shipped.scan.columns.findIndex((c) => c.name === dependency.fromColumn.name);
    if (keyIndex < 0) continue;
    // The PostgreSQL table: read once, under an alias that keeps its column names.
    const aliases: string[] = [];
    everyNode(ast, (nodeType, node) => {
      const range = node as { relname?: string; alias?: { aliasname?: string; colnames?: unknown } };
      if (nodeType === 'RangeVar' && range.relname === table.loadName)
        aliases.push(range.alias && !range.alias.colnames ? String(range.alias.aliasname) : '');
      return true;
    });
    if (aliases.length !== 1 || !aliases[0] || !lateralSees(ast, placeholder, table.loadName!)) continue;
    // Without statistics of the column, the plain form (an index on it may serve better).
    const distinct = table.resolved.origin === 'rows' ? distinctOf(table.resolved.table, dependency.column) : null;
    if (distinct === null) continue;
    return {
      alias: aliases[0],
      column: dependency.column,
      keyIndex,
      minKeys: Math.ceil(distinct * LOOKUP_MIN_SHARE),
    };
  }
  return null;
}

/** The code column of the lookup's distinct rows (a shipped column of this name keeps the plain form). */
export const LOOKUP_CODE = '__vdb_code';

/** The types whose equality in PostgreSQL is that of their text as the rows carry it (ship-arrays.ts writes integers canonically). */
const EXACT_TYPES = new Set(['VARCHAR', 'SMALLINT', 'INTEGER', 'BIGINT']);

/**
 * Takes out of the statement's WHERE (`ast`, mutated) the conditions on the shipped table at
 * `placeholder` that compare a text or integer column with constants (`c.segment =
 * 'enterprise'`, `c.id IN (1, 2)`), for vdb to apply to the shipped rows instead. Text is equal
 * in PostgreSQL when its bytes are (its default collations are deterministic), so vdb's test
 * of the rows is PostgreSQL's, while the source's own (MariaDB's, ignoring case and trailing
 * spaces) may keep more. Only where dropping rows before the join means the same as the WHERE
 * after it: a plain SELECT whose FROM joins tables with inner joins only. PostgreSQL then
 * estimates the statement without a condition on rows it has no statistics of.
 */
export function takeExactConditions(
  ast: ParseResult,
  placeholder: string,
  columns: readonly ColumnDef[],
  source: { kind: string },
): ExactCondition[] {
  const select = asKind(statementOf(ast), 'SelectStmt');
  if (!select?.fromClause || (select.op && select.op !== 'SETOP_NONE') || !select.whereClause) return [];
  let alias: string | null = null;
  let inner = true;
  const visit = (item: Node): void => {
    const join = asKind(item, 'JoinExpr');
    if (join) {
      if (join.jointype !== 'JOIN_INNER') inner = false;
      [join.larg, join.rarg].forEach((side) => side && visit(side));
      return;
    }
    const range = asKind(item, 'RangeVar');
    if (range?.relname === placeholder && range.alias?.aliasname && !range.alias.colnames) alias = range.alias.aliasname;
  };
  select.fromClause.forEach(visit);
  if (!inner || alias === null) return [];
  const taken: ExactCondition[] = [];
  const kept = conjuncts(select.whereClause).filter((conjunct) => {
    const condition = exactCondition(conjunct, alias!, columns, source);
    if (condition) taken.push(condition);
    return !condition;
  });
  if (taken.length === 0) return [];
  if (kept.length === 0) delete select.whereClause;
  else select.whereClause = kept.length === 1 ? kept[0]! : { BoolExpr: { boolop: 'AND_EXPR', args: kept } };
  return taken;
}

/** `alias.column = constant`, `constant = alias.column` or `alias.column IN (constants)` of an exact type; null otherwise. */
function exactCondition(node: Node, alias: string, columns: readonly ColumnDef[], source: { kind: string }): ExactCondition | null {
  const expr = asKind(node, 'A_Expr');
  if (!expr || fieldNames(expr.name).join('.') !== '=' || (expr.kind !== 'AEXPR_OP' && expr.kind !== 'AEXPR_IN')) return null;
  const columnOf = (side: Node | undefined) => {
    const fields = fieldNames(asKind(side, 'ColumnRef')?.fields);
    if (fields.length !== 2 || fields[0] !== alias) return -1;
    const index = columns.findIndex((c) => c.name === fields[1]);
    // A char(n) compares without its padding: not as its text is.
    return index >= 0 && EXACT_TYPES.has(columns[index]!.type) && !paddedChar(columns[index]!, source) ? index : -1;
  };
  const constantOf = (side: Node | undefined, type: string): string | null => {
    const constant = asKind(side, 'A_Const');
    if (!constant || constant.isnull) return null;
    if (type === 'VARCHAR') return constant.sval ? String(constant.sval.sval ?? '') : null;
    return constant.ival ? String(constant.ival.ival ?? 0) : null;
  };
  let index = columnOf(expr.lexpr);
  let other = expr.rexpr;
  if (index < 0 && exprIs(expr, 'AEXPR_OP')) {
    index = columnOf(expr.rexpr);
    other = expr.lexpr;
  }
  if (index < 0) return null;
  const type = columns[index]!.type;
  const sides = exprIs(expr, 'AEXPR_IN') ? (asKind(other, 'List')?.items ?? []) : [other];
  const values = sides.map((side) => constantOf(side, type));
  return values.length > 0 && values.every((v) => v !== null) ? { columnIndex: index, values: values as string[] } : null;
}
