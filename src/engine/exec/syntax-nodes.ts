/** Constructors of the parse-tree nodes that the engine's rewrites write (engine-dialect.ts and its helpers). */

export const stringConst = (text: string) => ({ A_Const: { sval: { sval: text } } });

export const int = (ival: number) => ({ A_Const: { ival: { ival } } });

export const call = (name: string, args: unknown[]) => ({
  FuncCall: { funcname: [{ String: { sval: name } }], args, funcformat: 'COERCE_EXPLICIT_CALL' },
});

export const op = (name: string, lexpr: unknown, rexpr: unknown) => ({
  A_Expr: { kind: 'AEXPR_OP', name: [{ String: { sval: name } }], lexpr, rexpr },
});

export const cast = (arg: unknown, type: string) => ({ TypeCast: { arg, typeName: { names: [{ String: { sval: type } }] } } });
