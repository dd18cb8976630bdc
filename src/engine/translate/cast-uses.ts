/**
 * Casts to types the engine lacks, whose meaning follows from where the value goes; each is
 * written by its use, found here before the rewrite (postgres-values.ts reads the marks), and a
 * use not listed stays refused.
 *  - char(n) (bpchar) is shown padded with spaces to n characters ('ab   '), measured in bytes
 *    and matched by LIKE padded, but becomes text without its trailing spaces where text is
 *    wanted (||, length, upper, a cast to text) and is compared without them with another
 *    char(n), a varchar or an untyped literal: written padded or stripped.
 *  - money is shown as text in lc_monetary's format ('$1,234.56'), and is a number of two
 *    decimals cast to numeric or compared with money: written shown or as that number.
 *  - numeric without precision or scale of a float or text keeps a scale per value, which the
 *    engine's DECIMAL cannot (numeric-values.ts computes such values in the select list); where
 *    the scale is not seen (compared, or in to_char) it is the value, and cast to text its text.
 */
import type { A_Expr, FuncCall, Node, ParseResult, ResTarget, SelectStmt, TypeCast } from '@pgsql/types';
import { asKind, fieldNames, walk } from '../tree/ast.js';
import { calledName, isIntegerConst, isStringConst, literalText } from '../tree/syntax-nodes.js';

/**
 * How a cast is written for the engine: char(n) padded to n or without its trailing spaces;
 * money shown as text or a number; numeric as a value (compared) or its text.
 */
export type CastUse = 'padded' | 'stripped' | 'shown' | 'number' | 'value' | 'text';

let uses = new WeakMap<TypeCast, CastUse>();

/** The use found for `cast` by the last markCastUses, if any. */
export const castUse = (cast: TypeCast): CastUse | undefined => uses.get(cast);

/** The type's name without pg_catalog, in lower case. */
const typeNameOf = (typeName: TypeCast['typeName']): string =>
  typeName
    ? fieldNames(typeName.names)
        .filter((part) => part !== 'pg_catalog')
        .join('.')
        .toLowerCase()
    : '';

const castTo = (type: string, node: Node | undefined): TypeCast | undefined => {
  const cast = asKind(node, 'TypeCast');
  return cast && typeNameOf(cast.typeName) === type && !cast.typeName?.arrayBounds ? cast : undefined;
};
const charCast = (node: Node | undefined) => castTo('bpchar', node);
/** numeric without precision or scale (numeric(p,s) has one scale, as the engine's DECIMAL). */
const numericCast = (node: Node | undefined) => {
  const cast = castTo('numeric', node);
  return cast && !cast.typeName?.typmods ? cast : undefined;
};
const moneyCast = (node: Node | undefined) => castTo('money', node);

/** Functions of text a char(n) argument reaches without its padding (PostgreSQL casts it to text). */
const STRIPPED_ARGUMENT = new Set(['length', 'char_length', 'character_length', 'upper', 'lower']);

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);

/** A_Expr kinds that compare their left operand with the values of a list. */
const LIST_COMPARISONS = new Set(['AEXPR_IN', 'AEXPR_BETWEEN', 'AEXPR_NOT_BETWEEN', 'AEXPR_BETWEEN_SYM', 'AEXPR_NOT_BETWEEN_SYM']);

function markExpr(expr: A_Expr): void {
  if (expr.kind && LIST_COMPARISONS.has(expr.kind)) {
    const items = [expr.lexpr, ...(asKind(expr.rexpr, 'List')?.items ?? [])];
    for (const cast of items.map(numericCast)) if (cast) uses.set(cast, 'value');
    return;
  }
  const name = asKind(expr.name?.[0], 'String')?.sval;
  if (expr.kind !== 'AEXPR_OP' || !name) return;
  const [left, right] = [charCast(expr.lexpr), charCast(expr.rexpr)];
  if (name === '||') {
    for (const cast of [left, right]) if (cast) uses.set(cast, 'stripped');
    return;
  }
  if (COMPARISONS.has(name)) for (const cast of [numericCast(expr.lexpr), numericCast(expr.rexpr)]) if (cast) uses.set(cast, 'value');
  if (COMPARISONS.has(name) && moneyCast(expr.lexpr) && moneyCast(expr.rexpr)) {
    uses.set(moneyCast(expr.lexpr)!, 'number');
    uses.set(moneyCast(expr.rexpr)!, 'number');
  }
  if (!COMPARISONS.has(name) || !(left || right)) return;
  // Both sides without trailing spaces: another char(n), or a literal with none to strip.
  const comparable = (node: Node | undefined) =>
    charCast(node) !== undefined || (isStringConst(node) && !/ $/.test(literalText(node) ?? ''));
  if (comparable(expr.lexpr) && comparable(expr.rexpr)) for (const cast of [left, right]) if (cast) uses.set(cast, 'stripped');
}

function markCall(fc: FuncCall): void {
  const name = calledName(fc);
  const number = numericCast(fc.args?.[0]);
  if (number && name === 'to_char' && fc.args?.length === 2) uses.set(number, 'value');
  const first = charCast(fc.args?.[0]);
  if (!first || fc.args?.length !== 1) return;
  if (STRIPPED_ARGUMENT.has(name)) uses.set(first, 'stripped');
  if (name === 'octet_length') uses.set(first, 'padded');
}

/** The name PostgreSQL gives an unnamed column of a cast: its operand's, through other casts (a column's, a call's). */
function implicitName(node: Node | undefined): string | undefined {
  const cast = asKind(node, 'TypeCast');
  if (cast) return implicitName(cast.arg);
  const column = asKind(node, 'ColumnRef');
  if (column) return fieldNames(column.fields).pop();
  const fc = asKind(node, 'FuncCall');
  return fc ? calledName(fc) : undefined;
}

/** Whether ORDER BY names the i-th column of `select` (by position, or by its name). */
function sortedBy(select: SelectStmt, i: number, target: ResTarget): boolean {
  const name = target.name ?? implicitName(target.val);
  return (select.sortClause ?? []).some((item) => {
    const by = asKind(item, 'SortBy')?.node;
    if (isIntegerConst(by)) return Number(literalText(by)) === i + 1;
    const ref = asKind(by, 'ColumnRef');
    return ref !== undefined && fieldNames(ref.fields).length === 1 && fieldNames(ref.fields)[0] === name;
  });
}

/** Finds the uses of char(n) and money casts in `tree`, the statement about to be rewritten. */
export function markCastUses(tree: ParseResult): void {
  uses = new WeakMap();
  // Shown: a column of the statement's own result (not of a subquery, whose uses are elsewhere).
  const top = asKind(tree.stmts?.[0]?.stmt, 'SelectStmt');
  if (top && (top.op ?? 'SETOP_NONE') === 'SETOP_NONE') {
    for (const [i, item] of (top.targetList ?? []).entries()) {
      const target = asKind(item, 'ResTarget');
      // Not where ORDER BY names the column (ORDER BY 1): PostgreSQL sorts money as numbers and
      // char(n) without its padding, the engine would sort the text written here.
      if (!target || sortedBy(top, i, target)) continue;
      const value = target.val;
      const cast = charCast(value) ?? moneyCast(value);
      if (cast) uses.set(cast, cast === charCast(value) ? 'padded' : 'shown');
    }
  }
  walk(tree, (kind, node) => {
    if (kind === 'A_Expr') markExpr(node as A_Expr);
    if (kind === 'FuncCall') markCall(node as FuncCall);
    const cast = kind === 'TypeCast' ? (node as TypeCast) : undefined;
    const [inner, money] = [charCast(cast?.arg), moneyCast(cast?.arg)];
    const toText = cast !== undefined && ['text', 'varchar'].includes(typeNameOf(cast.typeName));
    // char(n)::text and ::varchar: without the padding; money::text as shown; money::numeric its number.
    if (toText && inner) uses.set(inner, 'stripped');
    if (toText && money) uses.set(money, 'shown');
    const number = numericCast(cast?.arg);
    if (toText && number) uses.set(number, 'text');
    if (cast && money && typeNameOf(cast.typeName) === 'numeric') uses.set(money, 'number');
  });
}
