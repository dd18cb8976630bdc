/**
 * var_pop, var_samp, variance, stddev, stddev_pop and stddev_samp of floating-point values as
 * PostgreSQL computes them: the Youngs–Cramer accumulation of float8_accum (float.c), value by
 * value in the order the rows come, then float8_var_pop / float8_var_samp / their square roots.
 * The engine's own variance (Welford's) rounds otherwise: its last digits differ, and it fails on
 * a NaN or an infinity where PostgreSQL answers NaN.
 *
 * Written as a fold (list_reduce) over the list of the group's values, so the digits are
 * PostgreSQL's when both see the rows in the same order (as they do for a scan, VALUES, an
 * aggregate's ORDER BY, a window's frame; DISTINCT values in ascending order, as PostgreSQL sorts
 * them). The list holds the group's values: memory grows with the size of the largest group.
 */
import type { FuncCall, Node } from '@pgsql/types';
import { nameNode } from '../tree/ast.js';
import { call, cast, engineCall, evaluatedOnce, lambdas, op, stringConst, written } from '../tree/syntax-nodes.js';

const ref = (name: string, field?: string): Node => {
  const column: Node = { ColumnRef: { fields: [nameNode(name)] } };
  return field ? engineCall('struct_extract', [column, stringConst(field)]) : column;
};

const double = (value: number | string): Node => {
  const made = cast(stringConst(String(value)), 'float8');
  written.add(made.TypeCast);
  return made;
};

const not = (arg: Node): Node => ({ BoolExpr: { boolop: 'NOT_EXPR', args: [arg] } });
const or = (args: Node[]): Node => ({ BoolExpr: { boolop: 'OR_EXPR', args } });
const and = (args: Node[]): Node => ({ BoolExpr: { boolop: 'AND_EXPR', args } });
const when = (condition: Node, result: Node, otherwise: Node): Node => ({
  CaseExpr: { args: [{ CaseWhen: { expr: condition, result } }], defresult: otherwise },
});

/** A struct {n, sx, sxx, x} of the engine: the accumulator, and each value carried in x. */
const state = (n: Node, sx: Node, sxx: Node, x: Node): Node =>
  engineCall('struct_pack', [
    { NamedArgExpr: { name: 'n', arg: n, argnumber: -1 } },
    { NamedArgExpr: { name: 'sx', arg: sx, argnumber: -1 } },
    { NamedArgExpr: { name: 'sxx', arg: sxx, argnumber: -1 } },
    { NamedArgExpr: { name: 'x', arg: x, argnumber: -1 } },
  ]);

/** float8_accum: the accumulator after one more value (acc and value are the lambda's parameters). */
function accumulated(): Node {
  const previousN = ref('vdb_acc', 'n');
  const sx = ref('vdb_acc', 'sx');
  const sxx = ref('vdb_acc', 'sxx');
  const x = ref('vdb_value', 'x');
  const n = op('+', previousN, double(1));
  const newSx = op('+', sx, x);
  const tmp = op('-', op('*', x, n), newSx);
  const newSxx = op('+', sxx, op('/', op('*', tmp, tmp), op('*', n, previousN)));
  const nan = double('NaN');
  // Only finite inputs that lead to an infinite result fail; an infinite input makes the variance NaN.
  const overflow = call('error', [stringConst('value out of range: overflow')]);
  const infinite = or([engineCall('isinf', [newSx]), engineCall('isinf', [newSxx])]);
  const later = when(infinite, when(and([not(engineCall('isinf', [sx])), not(engineCall('isinf', [x]))]), overflow, nan), newSxx);
  const first = when(or([engineCall('isnan', [x]), engineCall('isinf', [x])]), nan, sxx);
  return state(n, newSx, when(op('>', previousN, double(0)), later, first), double(0));
}

/** `name(value)` (one of the variances) as PostgreSQL computes it over float8 values; the call's DISTINCT, ORDER BY, FILTER and OVER kept. */
export function youngsCramer(fc: FuncCall, name: string, value: Node): Node {
  const listed: FuncCall = { ...fc, funcname: [nameNode('list')], args: [cast(value, 'float8')] };
  written.add(listed);
  let values: Node = { FuncCall: listed };
  // PostgreSQL's DISTINCT aggregates take the values sorted.
  if (fc.agg_distinct) values = engineCall('list_sort', [values]);
  const present = lambda(['vdb_v'], { NullTest: { arg: ref('vdb_v'), nulltesttype: 'IS_NOT_NULL' } });
  const nonNull = engineCall('list_filter', [values, present]);
  const states = engineCall('list_transform', [nonNull, lambda(['vdb_v'], state(double(0), double(0), double(0), ref('vdb_v')))]);
  const folded = engineCall('list_reduce', [
    states,
    lambda(['vdb_acc', 'vdb_value'], accumulated()),
    state(double(0), double(0), double(0), double(0)),
  ]);
  const sample = name === 'var_samp' || name === 'variance' || name === 'stddev' || name === 'stddev_samp';
  const root = name.startsWith('stddev');
  return evaluatedOnce(folded, (acc) => {
    const n = engineCall('struct_extract', [acc, stringConst('n')]);
    const sxx = engineCall('struct_extract', [acc, stringConst('sxx')]);
    const divisor = sample ? op('-', n, double(1)) : n;
    const variance = op('/', sxx, divisor);
    const result = root ? engineCall('sqrt', [variance]) : variance;
    const none = op('<=', n, double(sample ? 1 : 0));
    return when(none, cast({ A_Const: { isnull: true } }, 'float8'), result);
  });
}

/** A lambda of the engine: `x -> body`, `(a, b) -> body`. */
function lambda(params: string[], body: Node): Node {
  const lexpr: Node =
    params.length === 1 ? ref(params[0]!) : { RowExpr: { args: params.map((p) => ref(p)), row_format: 'COERCE_IMPLICIT_CAST' } };
  const made = { kind: 'AEXPR_OP' as const, name: [nameNode('->')], lexpr, rexpr: body };
  lambdas.add(made);
  return { A_Expr: made };
}
