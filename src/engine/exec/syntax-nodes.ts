/**
 * The toolkit of the engine's rewrites (engine-dialect.ts, postgres-values.ts,
 * postgres-functions.ts): constructors of the parse-tree nodes they write, and what they ask of
 * the nodes they read.
 */
import { badRequest } from '../../errors.js';
import { fieldNames, isObject } from '../front/ast.js';

export const stringConst = (text: string) => ({ A_Const: { sval: { sval: text } } });

export const int = (ival: number) => ({ A_Const: { ival: { ival } } });

export const call = (name: string, args: unknown[]) => ({
  FuncCall: { funcname: [{ String: { sval: name } }], args, funcformat: 'COERCE_EXPLICIT_CALL' },
});

export const op = (name: string, lexpr: unknown, rexpr: unknown) => ({
  A_Expr: { kind: 'AEXPR_OP', name: [{ String: { sval: name } }], lexpr, rexpr },
});

export const cast = (arg: unknown, type: string) => ({ TypeCast: { arg, typeName: { names: [{ String: { sval: type } }] } } });

/** Nodes the rewrites wrote, already the engine's own (not to be rewritten again). */
export const written = new WeakSet<object>();

export const notAsPostgres = (what: string, hint: string) => badRequest(`${what} is not supported by vdb's engine.`, hint, 'Not available');

/** The value of a literal (A_Const) as text when it is a number or a string, else null. */
export function literalText(node: unknown): string | null {
  const constant = isObject(node) && isObject(node.A_Const) ? node.A_Const : null;
  if (!constant) return null;
  if (isObject(constant.ival)) return String(constant.ival.ival ?? 0);
  if (isObject(constant.fval)) return String(constant.fval.fval);
  if (isObject(constant.sval)) return String(constant.sval.sval ?? '');
  return null;
}

export const TYPE_NAMES_OF_FLOATS = ['DOUBLE', 'FLOAT'];

/** Calls whose value changes from one evaluation to the next: never duplicated by a rewrite. */
const VOLATILE = new Set(['random', 'gen_random_uuid', 'uuidv4', 'uuidv7']);
export const isVolatile = (node: unknown): boolean =>
  Array.isArray(node)
    ? node.some(isVolatile)
    : isObject(node) &&
      ((isObject(node.FuncCall) && VOLATILE.has(fieldNames(node.FuncCall.funcname).join('.').toLowerCase())) ||
        Object.values(node).some(isVolatile));

export const typeIs = (value: unknown, names: string[]) => ({
  A_Expr: {
    kind: 'AEXPR_IN',
    name: [{ String: { sval: '=' } }],
    lexpr: call('typeof', [value]),
    rexpr: { List: { items: names.map(stringConst) } },
  },
});
/** The engine's own cast to text (not rewritten again). */
export const asVarchar = (value: unknown) => {
  const cast = { arg: value, typeName: { names: [{ String: { sval: 'varchar' } }] } };
  written.add(cast);
  return { TypeCast: cast };
};

export const engineCall = (name: string, args: unknown[]) => {
  const made = call(name, args);
  written.add(made.FuncCall);
  return made;
};
