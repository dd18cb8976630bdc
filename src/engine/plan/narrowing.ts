/**
 * The query of a narrowing subquery (a table as its user may see it, access.ts), as it is
 * computed before the statement (exec/execute.ts), with the statement's own simple conditions on
 * it added: `WHERE e.id = 7` around `(SELECT ... FROM t WHERE <row condition>) AS e` also filters
 * t, so that a point lookup through a narrowing reads one row, not the table.
 *
 * A condition is added only where it means the same inside: the narrowing is not on the
 * null-extended side of an outer join, the condition names only columns the narrowing shows as
 * they are (not masked, not renamed), and it is made of comparisons with constants that cannot
 * fail on a row (no functions, no casts of columns, no subqueries). The statement keeps the
 * condition too.
 */
import type { Node, ParseResult, SelectStmt } from '@pgsql/types';
import { requalify } from '../access/access.js';
import { asKind, conjuncts, fieldNames, isObject, lower, walk, exprIs } from '../tree/ast.js';

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);
const SAFE_KINDS = new Set(['AEXPR_OP', 'AEXPR_IN', 'AEXPR_BETWEEN', 'AEXPR_NOT_BETWEEN', 'AEXPR_LIKE', 'AEXPR_ILIKE']);

/** The narrowing's own SELECT (a copy), with the conditions that may filter it too. */
export function narrowingQuery(tree: ParseResult, entry: Node): Node {
  const subselect = asKind(entry, 'RangeSubselect')!;
  const query = structuredClone(subselect.subquery)!;
  const inner = asKind(query, 'SelectStmt');
  const alias = subselect.alias ?? null;
  const from = inner?.fromClause ?? [];
  const table = from.length === 1 ? (asKind(from[0], 'RangeVar') ?? null) : null;
  const outer = alias && !alias.colnames && table ? enclosingSelect(tree, entry) : null;
  if (!inner || !alias || !table || !outer) return query;
  const tableAlias = String(table.alias?.aliasname ?? table.relname);
  const plain = plainColumns(inner);
  const name = lower(String(alias.aliasname));
  const alone = (outer.fromClause ?? []).length === 1 && outer.fromClause![0] === entry;
  const added = conjuncts(outer.whereClause).filter((part) => safe(part) && namesOnly(part, name, plain, alone));
  if (added.length === 0) return query;
  const parts = [inner.whereClause, ...added.map((part) => requalify(structuredClone(part), tableAlias))].filter((p): p is Node =>
    isObject(p),
  );
  inner.whereClause = parts.length === 1 ? parts[0] : { BoolExpr: { boolop: 'AND_EXPR', args: parts } };
  return query;
}

/** The SELECT whose FROM holds `entry` where its rows are not null-extended. */
function enclosingSelect(tree: ParseResult, entry: Node): SelectStmt | null {
  let found: SelectStmt | null = null;
  const holds = (item: Node | undefined): boolean => {
    if (item === entry) return true;
    const join = asKind(item, 'JoinExpr');
    if (!join) return false;
    const type = String(join.jointype);
    return (
      (type !== 'JOIN_RIGHT' && type !== 'JOIN_FULL' && holds(join.larg)) ||
      (type !== 'JOIN_LEFT' && type !== 'JOIN_FULL' && holds(join.rarg))
    );
  };
  walk(tree, (nodeType, node) => {
    if (nodeType === 'SelectStmt' && !found && (node.fromClause ?? []).some(holds)) found = node;
  });
  return found;
}

/** Columns the narrowing shows as they are: `name` over the column of that name. */
function plainColumns(select: SelectStmt): Set<string> {
  const plain = new Set<string>();
  for (const item of select.targetList ?? []) {
    const target = asKind(item, 'ResTarget');
    const ref = fieldNames(asKind(target?.val, 'ColumnRef')?.fields);
    if (ref.length === 1 && typeof target?.name === 'string' && lower(target.name) === lower(ref[0]!)) plain.add(lower(ref[0]!));
  }
  return plain;
}

/** Comparisons, IN, BETWEEN, LIKE, IS NULL, AND/OR/NOT of columns and constants: nothing that can fail on a row. */
function safe(node: Node): boolean {
  let ok = true;
  const check = (value: Node | Array<Node | undefined> | undefined): void => {
    if (Array.isArray(value)) return value.forEach(check);
    if (!isObject(value)) return;
    if ('ColumnRef' in value || 'A_Const' in value) return;
    if ('TypeCast' in value) {
      if (!asKind(value.TypeCast.arg, 'A_Const')) ok = false;
      return;
    }
    if ('List' in value) return check(value.List.items);
    if ('NullTest' in value) return check(value.NullTest.arg);
    if ('BoolExpr' in value) return check(value.BoolExpr.args);
    if ('A_Expr' in value) {
      const b = value.A_Expr;
      const op = fieldNames(b.name)[0] ?? '';
      if (!SAFE_KINDS.has(String(b.kind)) || (exprIs(b, 'AEXPR_OP') && !COMPARISONS.has(op))) ok = false;
      else check([b.lexpr, b.rexpr]);
      return;
    }
    ok = false;
  };
  check(node);
  return ok;
}

/** Whether every column the condition names is a plain column of the narrowing `alias`. */
function namesOnly(node: Node, alias: string, plain: ReadonlySet<string>, alone: boolean): boolean {
  let ok = true;
  let any = false;
  walk(node, (nodeType, ref) => {
    if (nodeType !== 'ColumnRef') return;
    any = true;
    const fields = fieldNames(ref.fields).map(lower);
    const column = fields[fields.length - 1]!;
    const ours = fields.length === 2 ? fields[0] === alias : fields.length === 1 && alone;
    if (!ours || !plain.has(column)) ok = false;
  });
  return ok && any;
}
