/**
 * The share of a table's rows that its own conditions keep, estimated from the catalog's
 * statistics (distinct values and NULL shares of columns) the way PostgreSQL's planner does
 * without histograms: equality 1/n of a column's n distinct values, an IN list k/n, a range or
 * a pattern a default share, AND as a product, OR as the sum less the product (independent
 * conditions), NULL tests from the NULL share. For ranking plans (cost.ts), never for answers.
 * Pure: no I/O.
 */
import type { Node } from '@pgsql/types';
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import { asKind, fieldNames } from '../tree/ast.js';
import { distinctOf } from './cost.js';

/** PostgreSQL's defaults where nothing is known (selfuncs.h). */
export const DEFAULT_SELECTIVITY = {
  /** `column = constant` without statistics (DEFAULT_EQ_SEL). */
  equality: 0.005,
  /** `column < constant` and the other one-sided comparisons (DEFAULT_INEQ_SEL). */
  range: 1 / 3,
  /** LIKE, ILIKE, SIMILAR TO (DEFAULT_MATCH_SEL). */
  pattern: 0.005,
  /** IS NULL of a nullable column without statistics (DEFAULT_UNK_SEL). */
  isNull: 0.005,
  /** A boolean column on its own, or a condition of another shape. */
  other: 1 / 3,
} as const;

/** The column a reference names in this table (the scan's own resolution), or undefined. */
export type ColumnResolver = (fields: string[]) => ColumnDef | undefined;

const clamp = (share: number) => Math.min(1, Math.max(0, share));

/** The estimated share of `table`'s rows that every condition of `conditions` keeps. */
export function selectivity(table: TableDef, conditions: readonly Node[], column: ColumnResolver): number {
  return conditions.reduce((share, condition) => share * conditionShare(table, condition, column), 1);
}

function conditionShare(table: TableDef, node: Node, resolve: ColumnResolver): number {
  const bool = asKind(node, 'BoolExpr');
  if (bool) {
    const parts = (bool.args ?? []).map((arg) => conditionShare(table, arg, resolve));
    if (bool.boolop === 'AND_EXPR') return parts.reduce((a, b) => a * b, 1);
    if (bool.boolop === 'OR_EXPR') return clamp(parts.reduce((a, b) => a + b - a * b, 0));
    return clamp(1 - (parts[0] ?? 0));
  }
  const test = asKind(node, 'NullTest');
  if (test) {
    const column = columnOf(test.arg, resolve);
    const nulls = column ? nullShare(column) : DEFAULT_SELECTIVITY.isNull;
    return test.nulltesttype === 'IS_NOT_NULL' ? 1 - nulls : nulls;
  }
  const expr = asKind(node, 'A_Expr');
  if (!expr) return columnOf(node, resolve)?.type === 'BOOLEAN' ? 0.5 : DEFAULT_SELECTIVITY.other;
  // `column op constant` or `constant op column`: a side that names no column is a constant here.
  const left = columnOf(expr.lexpr, resolve);
  const right = columnOf(expr.rexpr, resolve);
  const column = left ?? right;
  const constant = left ? !namesColumn(expr.rexpr) : right ? !namesColumn(expr.lexpr) : false;
  const operator = fieldNames(expr.name)[0] ?? '';
  const equal = column && constant ? equalShare(table, column) : DEFAULT_SELECTIVITY.equality;
  switch (expr.kind) {
    case 'AEXPR_OP':
      if (operator === '=') return equal;
      if (operator === '<>' || operator === '!=') return clamp(1 - equal - (column ? nullShare(column) : 0));
      if (['<', '<=', '>', '>='].includes(operator)) return DEFAULT_SELECTIVITY.range;
      return DEFAULT_SELECTIVITY.other;
    case 'AEXPR_IN': {
      const items = asKind(expr.rexpr, 'List')?.items?.length ?? 1;
      const share = clamp(items * equal);
      return operator === '<>' ? clamp(1 - share - (column ? nullShare(column) : 0)) : share;
    }
    case 'AEXPR_LIKE':
    case 'AEXPR_ILIKE':
    case 'AEXPR_SIMILAR':
      return operator.startsWith('!') ? 1 - DEFAULT_SELECTIVITY.pattern : DEFAULT_SELECTIVITY.pattern;
    case 'AEXPR_BETWEEN':
    case 'AEXPR_BETWEEN_SYM':
      return DEFAULT_SELECTIVITY.range * DEFAULT_SELECTIVITY.range;
    case 'AEXPR_NOT_BETWEEN':
    case 'AEXPR_NOT_BETWEEN_SYM':
      return 1 - DEFAULT_SELECTIVITY.range * DEFAULT_SELECTIVITY.range;
    default:
      return DEFAULT_SELECTIVITY.other;
  }
}

/** `column = constant`: the non-NULL rows shared evenly among the distinct values. */
function equalShare(table: TableDef, column: ColumnDef): number {
  const distinct = distinctOf(table, column);
  return distinct === null ? DEFAULT_SELECTIVITY.equality : (1 - nullShare(column)) / Math.max(1, distinct);
}

function nullShare(column: ColumnDef): number {
  if (!column.nullable) return 0;
  return column.nullFraction ?? DEFAULT_SELECTIVITY.isNull;
}

/** The column a node is (possibly under casts), if it is one of the table's. */
function columnOf(node: Node | undefined, resolve: ColumnResolver): ColumnDef | undefined {
  const cast = asKind(node, 'TypeCast');
  if (cast) return columnOf(cast.arg, resolve);
  const ref = asKind(node, 'ColumnRef');
  return ref ? resolve(fieldNames(ref.fields)) : undefined;
}

/** Whether a node references any column (then it is no constant). */
function namesColumn(node: Node | undefined): boolean {
  return node !== undefined && JSON.stringify(node).includes('"ColumnRef"');
}
