/**
 * The toolkit of the engine's rewrites (engine-dialect.ts, postgres-values.ts,
 * postgres-functions.ts): constructors of the parse-tree nodes they write, and what they ask of
 * the nodes they read.
 */
import type { A_Expr, FuncCall, Node, TypeCast, TypeName } from '@pgsql/types';
import { badRequest } from '../../errors.js';
import { asKind, everyNode, fieldNames, nameNode } from './ast.js';
import { hasFact } from './functions.js';

export const stringConst = (text: string): Node => ({ A_Const: { sval: { sval: text } } });

export const int = (ival: number): Node => ({ A_Const: { ival: { ival } } });

export const call = (name: string, args: Node[]): { FuncCall: FuncCall } => ({
  FuncCall: { funcname: [nameNode(name)], args, funcformat: 'COERCE_EXPLICIT_CALL' },
});

export const op = (name: string, lexpr: Node | undefined, rexpr: Node | undefined): { A_Expr: A_Expr } => ({
  A_Expr: { kind: 'AEXPR_OP', name: [nameNode(name)], lexpr, rexpr },
});

/** A type name of one part, such as `int4` (the engine reads `pg_catalog.int4` alike). */
export const typeNamed = (type: string): TypeName => ({ names: [nameNode(type)] });

/** A cast whose type name is there to be changed (`typmods` added) before it is written. */
export type CastNode = { TypeCast: TypeCast & { typeName: TypeName } };

export const cast = (arg: Node | undefined, type: string): CastNode => ({ TypeCast: { arg, typeName: typeNamed(type) } });

/** The name a call calls, lower case, its parts joined by dots: 'pg_catalog.lower'. */
export const calledName = (fc: FuncCall): string => fieldNames(fc.funcname).join('.').toLowerCase();

/** Nodes the rewrites wrote, already the engine's own (not to be rewritten again). */
export const written = new WeakSet<object>();

export const notAsPostgres = (what: string, hint: string) => badRequest(`${what} is not supported by vdb's engine.`, hint, 'Not available');

/** The value of a literal (A_Const) as text when it is a number or a string, else null. */
export function literalText(node: Node | undefined): string | null {
  const constant = asKind(node, 'A_Const');
  if (!constant) return null;
  if (constant.ival) return String(constant.ival.ival ?? 0);
  if (constant.fval) return String(constant.fval.fval);
  if (constant.sval) return String(constant.sval.sval ?? '');
  return null;
}

/** Whether a node is a string literal ('text'). */
export const isStringConst = (node: Node | undefined): boolean => asKind(node, 'A_Const')?.sval !== undefined;

/** Whether a node is an integer literal (1, -3). */
export const isIntegerConst = (node: Node | undefined): boolean => asKind(node, 'A_Const')?.ival !== undefined;

/** Whether a node is the literal NULL. */
export const isNullConst = (node: Node | undefined): boolean => asKind(node, 'A_Const')?.isnull === true;

export const TYPE_NAMES_OF_FLOATS = ['DOUBLE', 'FLOAT'];

/** Whether `node` calls a function whose value changes from one evaluation to the next (never duplicated by a rewrite). */
export const isVolatile = (node: Node | Node[] | undefined): boolean =>
  !everyNode(node, (...[kind, body]) => kind !== 'FuncCall' || !hasFact(calledName(body), 'volatile'));

/** `typeof(value) IN (names)`: whether the engine's type of `value` is one of `names`. */
export const typeIs = (value: Node, names: string[]): Node => ({
  A_Expr: {
    kind: 'AEXPR_IN',
    name: [nameNode('=')],
    lexpr: call('typeof', [value]),
    rexpr: { List: { items: names.map(stringConst) } },
  },
});

/** The engine's own cast to text (not rewritten again). */
export const asVarchar = (value: Node): Node => {
  const cast: TypeCast = { arg: value, typeName: typeNamed('varchar') };
  written.add(cast);
  return { TypeCast: cast };
};

export const engineCall = (name: string, args: Node[]): { FuncCall: FuncCall } => {
  const made = call(name, args);
  written.add(made.FuncCall);
  return made;
};

/** The engine's lambdas (`x -> body`) that `evaluatedOnce` writes: not JSON arrows, not rewritten as such. */
export const lambdas = new WeakSet<object>();

/** A column, a constant or a parameter (possibly cast): small and cheap to write more than once. */
export function isPlain(node: Node | undefined): boolean {
  const typeCast = asKind(node, 'TypeCast');
  if (typeCast) return isPlain(typeCast.arg);
  return asKind(node, 'ColumnRef') !== undefined || asKind(node, 'A_Const') !== undefined || asKind(node, 'ParamRef') !== undefined;
}

/**
 * `build(value)`, where `build` may use its argument many times: for an expression other than a
 * plain one, written as `list_transform(ARRAY[value], vdb_once -> build(vdb_once))[1]`, so that
 * the statement holds `value` once. Rewrites that nest (concat of concat, round of round) would
 * otherwise grow the statement exponentially with the nesting.
 */
export function evaluatedOnce(value: Node, build: (ref: Node) => Node): Node {
  if (isPlain(value)) return build(value);
  const ref: Node = { ColumnRef: { fields: [nameNode('vdb_once')] } };
  const lambda: A_Expr = { kind: 'AEXPR_OP', name: [nameNode('->')], lexpr: ref, rexpr: build(ref) };
  lambdas.add(lambda);
  const transformed = engineCall('list_transform', [{ A_ArrayExpr: { elements: [value] } }, { A_Expr: lambda }]);
  return { A_Indirection: { arg: transformed, indirection: [{ A_Indices: { uidx: int(1) } }] } };
}
