/**
 * PostgreSQL's statistics of floating-point values as PostgreSQL computes them: the Youngs–Cramer
 * accumulations of float.c, value by value in the order the rows come, then its final functions.
 *  - var_pop, var_samp, variance, stddev, stddev_pop, stddev_samp: float8_accum (N, Sx, Sxx);
 *  - covar_pop, covar_samp, corr, regr_sxx, regr_syy, regr_sxy, regr_slope, regr_intercept,
 *    regr_r2 of (y, x): float8_regr_accum (N, Sx, Sxx, Sy, Syy, Sxy), rows with a NULL left out.
 * The engine's own (Welford's, and others) round otherwise: their last digits differ, and the
 * engine fails on a NaN or an infinity where PostgreSQL answers NaN. PostgreSQL's overflow error
 * (finite values whose sums become infinite) is raised as there.
 *
 * The group's values are listed by the engine's list aggregate (in the order of the rows; the
 * call's ORDER BY, FILTER and OVER kept; DISTINCT values sorted, as PostgreSQL sorts them) and
 * accumulated by vdb's engine functions (runtime/float-statistics.ts). The digits are
 * PostgreSQL's when both see the rows in the same order. The list holds the group's values:
 * memory grows with the size of the largest group.
 */
import type { FuncCall, Node } from '@pgsql/types';
import { nameNode } from '../tree/ast.js';
import { call, cast, engineCall, stringConst, written } from '../tree/syntax-nodes.js';

/** The variances (one value per row). */
export const VARIANCES = ['var_pop', 'var_samp', 'variance', 'stddev', 'stddev_pop', 'stddev_samp'];
/** The statistics of pairs (y, x). */
export const REGRESSIONS = [
  'covar_pop',
  'covar_samp',
  'corr',
  'regr_sxx',
  'regr_syy',
  'regr_sxy',
  'regr_slope',
  'regr_intercept',
  'regr_r2',
];

/** PostgreSQL's other names of the variances. */
const SAME_AS: Record<string, string> = { variance: 'var_samp', stddev: 'stddev_samp' };

const notNull = (value: Node): Node => ({ NullTest: { arg: value, nulltesttype: 'IS_NOT_NULL' } });

/** The call's `element`s as a list, in the order of its rows, the rows for which `present` fails left out. */
function listed(fc: FuncCall, element: Node, present: Node): Node {
  const filter: Node = fc.agg_filter ? { BoolExpr: { boolop: 'AND_EXPR', args: [fc.agg_filter, present] } } : present;
  const made: FuncCall = { ...fc, funcname: [nameNode('list')], args: [element], agg_filter: filter };
  written.add(made);
  // PostgreSQL's DISTINCT aggregates take the values sorted.
  return fc.agg_distinct ? engineCall('list_sort', [{ FuncCall: made }]) : { FuncCall: made };
}

/** `name(value)` (one of VARIANCES) as PostgreSQL computes it over float8 values. */
export function youngsCramer(fc: FuncCall, name: string, value: Node): Node {
  const values = listed(fc, cast(value, 'float8'), notNull(value));
  return engineCall('vdb_float_variance', [values, stringConst(SAME_AS[name] ?? name)]);
}

/** `name(y, x)` (one of REGRESSIONS) as PostgreSQL computes it over float8 values. */
export function regression(fc: FuncCall, name: string, y: Node, x: Node): Node {
  // y before x: DISTINCT sorts the pairs by y, then x, as PostgreSQL does.
  const pair = engineCall('struct_pack', [
    { NamedArgExpr: { name: 'y', arg: cast(y, 'float8'), argnumber: -1 } },
    { NamedArgExpr: { name: 'x', arg: cast(x, 'float8'), argnumber: -1 } },
  ]);
  const present: Node = { BoolExpr: { boolop: 'AND_EXPR', args: [notNull(y), notNull(x)] } };
  return engineCall('vdb_float_regression', [listed(fc, pair, present), stringConst(name)]);
}

/** sum(x) of real values as PostgreSQL adds them: in real arithmetic, row by row (float4pl). */
export function realSum(fc: FuncCall, value: Node): Node {
  return engineCall('vdb_float4_sum', [listed(fc, cast(value, 'float4'), notNull(value))]);
}

/**
 * sum(x) of double precision values (the engine adds them in the order of the rows, as
 * PostgreSQL does): PostgreSQL fails where finite values add up to an infinity (float8pl).
 */
export function overflowChecked(sum: Node, fc: FuncCall, value: Node): Node {
  const nonFinite: Node = {
    BoolExpr: { boolop: 'OR_EXPR', args: [engineCall('isinf', [cast(value, 'float8')]), engineCall('isnan', [cast(value, 'float8')])] },
  };
  const anyNonFinite: FuncCall = { ...fc, funcname: [nameNode('bool_or')], args: [nonFinite] };
  written.add(anyNonFinite);
  const overflow: Node = {
    BoolExpr: {
      boolop: 'AND_EXPR',
      args: [
        engineCall('isinf', [cast(sum, 'float8')]),
        {
          BoolExpr: {
            boolop: 'NOT_EXPR',
            args: [{ CoalesceExpr: { args: [{ FuncCall: anyNonFinite }, { A_Const: { boolval: { boolval: false } } }] } }],
          },
        },
      ],
    },
  };
  const failure = call('error', [stringConst('value out of range: overflow')]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: overflow, result: failure } }], defresult: sum } };
}
