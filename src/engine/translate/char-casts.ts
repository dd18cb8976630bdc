/**
 * Casts to char(n) (bpchar) where PostgreSQL's meaning follows from where the value goes: a
 * char(n) is shown padded with spaces to n characters ('ab   '), measured in bytes and matched
 * by LIKE padded, but becomes text without its trailing spaces where text is wanted (||, length,
 * upper, a cast to text) and is compared without them with another char(n), a varchar or an
 * untyped literal. The engine has no such type: each cast is written padded or stripped by its
 * use, found here before the rewrite (postgres-values.ts reads the marks); a use not listed
 * (a text column compared, a sort, a function of its own) stays refused.
 */
import type { A_Expr, FuncCall, Node, ParseResult, TypeCast } from '@pgsql/types';
import { asKind, fieldNames, walk } from '../tree/ast.js';
import { calledName, isStringConst, literalText } from '../tree/syntax-nodes.js';

/** How a char(n) cast is written for the engine: padded to n, or without its trailing spaces. */
export type CharUse = 'padded' | 'stripped';

let uses = new WeakMap<TypeCast, CharUse>();

/** The use found for `cast` by the last markCharCasts, if any. */
export const charUse = (cast: TypeCast): CharUse | undefined => uses.get(cast);

/** The type's name without pg_catalog, in lower case. */
const typeNameOf = (typeName: TypeCast['typeName']): string =>
  typeName
    ? fieldNames(typeName.names)
        .filter((part) => part !== 'pg_catalog')
        .join('.')
        .toLowerCase()
    : '';

const charCast = (node: Node | undefined): TypeCast | undefined => {
  const cast = asKind(node, 'TypeCast');
  return cast && typeNameOf(cast.typeName) === 'bpchar' && !cast.typeName?.arrayBounds ? cast : undefined;
};

/** Functions of text a char(n) argument reaches without its padding (PostgreSQL casts it to text). */
const STRIPPED_ARGUMENT = new Set(['length', 'char_length', 'character_length', 'upper', 'lower']);

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);

function markExpr(expr: A_Expr): void {
  const name = asKind(expr.name?.[0], 'String')?.sval;
  if (expr.kind !== 'AEXPR_OP' || !name) return;
  const [left, right] = [charCast(expr.lexpr), charCast(expr.rexpr)];
  if (name === '||') {
    for (const cast of [left, right]) if (cast) uses.set(cast, 'stripped');
    return;
  }
  if (!COMPARISONS.has(name) || !(left || right)) return;
  // Both sides without trailing spaces: another char(n), or a literal with none to strip.
  const comparable = (node: Node | undefined) =>
    charCast(node) !== undefined || (isStringConst(node) && !/ $/.test(literalText(node) ?? ''));
  if (comparable(expr.lexpr) && comparable(expr.rexpr)) for (const cast of [left, right]) if (cast) uses.set(cast, 'stripped');
}

function markCall(fc: FuncCall): void {
  const name = calledName(fc);
  const first = charCast(fc.args?.[0]);
  if (!first || fc.args?.length !== 1) return;
  if (STRIPPED_ARGUMENT.has(name)) uses.set(first, 'stripped');
  if (name === 'octet_length') uses.set(first, 'padded');
}

/** Finds the uses of char(n) casts in `tree`, the statement about to be rewritten. */
export function markCharCasts(tree: ParseResult): void {
  uses = new WeakMap();
  // Shown: a column of the statement's own result (not of a subquery, whose uses are elsewhere).
  const top = asKind(tree.stmts?.[0]?.stmt, 'SelectStmt');
  if (top && (top.op ?? 'SETOP_NONE') === 'SETOP_NONE') {
    for (const target of top.targetList ?? []) {
      const cast = charCast(asKind(target, 'ResTarget')?.val);
      if (cast) uses.set(cast, 'padded');
    }
  }
  walk(tree, (kind, node) => {
    if (kind === 'A_Expr') markExpr(node as A_Expr);
    if (kind === 'FuncCall') markCall(node as FuncCall);
    const cast = kind === 'TypeCast' ? (node as TypeCast) : undefined;
    const inner = cast ? charCast(cast.arg) : undefined;
    // char(n)::text and ::varchar: without the padding.
    if (cast && inner && ['text', 'varchar'].includes(typeNameOf(cast.typeName))) uses.set(inner, 'stripped');
  });
}
