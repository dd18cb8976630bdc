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
 * Written as a fold (list_reduce) over the list of the group's values, so the digits are
 * PostgreSQL's when both see the rows in the same order (as they do for a scan, VALUES, an
 * aggregate's ORDER BY, a window's frame; DISTINCT values in ascending order, as PostgreSQL sorts
 * them). The list holds the group's values: memory grows with the size of the largest group.
 */
import type { FuncCall, Node } from '@pgsql/types';
import { nameNode } from '../tree/ast.js';
import { call, cast, engineCall, evaluatedOnce, lambdas, op, stringConst, written } from '../tree/syntax-nodes.js';

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

const column = (name: string): Node => ({ ColumnRef: { fields: [nameNode(name)] } });
const field = (struct: Node, name: string): Node => engineCall('struct_extract', [struct, stringConst(name)]);

const double = (value: number | string): Node => {
  const made = cast(stringConst(String(value)), 'float8');
  written.add(made.TypeCast);
  return made;
};
const nullDouble = (): Node => cast({ A_Const: { isnull: true } }, 'float8');

const not = (arg: Node): Node => ({ BoolExpr: { boolop: 'NOT_EXPR', args: [arg] } });
const or = (args: Node[]): Node => ({ BoolExpr: { boolop: 'OR_EXPR', args } });
const and = (args: Node[]): Node => ({ BoolExpr: { boolop: 'AND_EXPR', args } });
const when = (condition: Node, result: Node, otherwise: Node): Node => ({
  CaseExpr: { args: [{ CaseWhen: { expr: condition, result } }], defresult: otherwise },
});
const isInf = (value: Node): Node => engineCall('isinf', [value]);
const isNaN = (value: Node): Node => engineCall('isnan', [value]);
const nonFinite = (value: Node): Node => or([isNaN(value), isInf(value)]);

/** A struct of the engine with these fields. */
const struct = (fields: Record<string, Node>): Node =>
  engineCall(
    'struct_pack',
    Object.entries(fields).map(([name, arg]) => ({ NamedArgExpr: { name, arg, argnumber: -1 } })),
  );

/** A lambda of the engine: `x -> body`, `(a, b) -> body`. */
function lambda(params: string[], body: Node): Node {
  const lexpr: Node =
    params.length === 1 ? column(params[0]!) : { RowExpr: { args: params.map(column), row_format: 'COERCE_IMPLICIT_CAST' } };
  const made = { kind: 'AEXPR_OP' as const, name: [nameNode('->')], lexpr, rexpr: body };
  lambdas.add(made);
  return { A_Expr: made };
}

const OVERFLOW = () => call('error', [stringConst('value out of range: overflow')]);

/** float8_accum: the state {n, sx, sxx, x} after the value carried in `value.x`. */
function accumulated(acc: Node, value: Node): Node {
  const previousN = field(acc, 'n');
  const sx = field(acc, 'sx');
  const x = field(value, 'x');
  const n = op('+', previousN, double(1));
  const newSx = op('+', sx, x);
  const tmp = op('-', op('*', x, n), newSx);
  const newSxx = op('+', field(acc, 'sxx'), op('/', op('*', tmp, tmp), op('*', n, previousN)));
  // Only finite inputs that lead to an infinite result fail; an infinite input makes the variance NaN.
  const later = when(or([isInf(newSx), isInf(newSxx)]), when(and([not(isInf(sx)), not(isInf(x))]), OVERFLOW(), double('NaN')), newSxx);
  const first = when(nonFinite(x), double('NaN'), field(acc, 'sxx'));
  return struct({ n, sx: newSx, sxx: when(op('>', previousN, double(0)), later, first), x: double(0) });
}

/** float8_regr_accum: the state {n, sx, sxx, sy, syy, sxy, x, y} after the pair carried in `value.y`, `value.x`. */
function regressionAccumulated(acc: Node, value: Node): Node {
  const previousN = field(acc, 'n');
  const [sx, sy] = [field(acc, 'sx'), field(acc, 'sy')];
  const [x, y] = [field(value, 'x'), field(value, 'y')];
  const n = op('+', previousN, double(1));
  const newSx = op('+', sx, x);
  const newSy = op('+', sy, y);
  const tmpX = op('-', op('*', x, n), newSx);
  const tmpY = op('-', op('*', y, n), newSy);
  const scale = op('/', double(1), op('*', n, previousN));
  const sum = (name: string, a: Node, b: Node) => op('+', field(acc, name), op('*', op('*', a, b), scale));
  const [newSxx, newSyy, newSxy] = [sum('sxx', tmpX, tmpX), sum('syy', tmpY, tmpY), sum('sxy', tmpX, tmpY)];
  const finiteX = and([not(isInf(sx)), not(isInf(x))]);
  const finiteY = and([not(isInf(sy)), not(isInf(y))]);
  const overflow = or([
    and([or([isInf(newSx), isInf(newSxx)]), finiteX]),
    and([or([isInf(newSy), isInf(newSyy)]), finiteY]),
    and([isInf(newSxy), finiteX, finiteY]),
  ]);
  const nanIfInfinite = (value: Node) => when(overflow, OVERFLOW(), when(isInf(value), double('NaN'), value));
  const later = (value: Node) => nanIfInfinite(value);
  const first = (name: string, nonFiniteInput: Node) => when(nonFiniteInput, double('NaN'), field(acc, name));
  const step = (name: string, value: Node, nonFiniteInput: Node) =>
    when(op('>', previousN, double(0)), later(value), first(name, nonFiniteInput));
  return struct({
    n,
    sx: newSx,
    sxx: step('sxx', newSxx, nonFinite(x)),
    sy: newSy,
    syy: step('syy', newSyy, nonFinite(y)),
    sxy: step('sxy', newSxy, or([nonFinite(x), nonFinite(y)])),
    x: double(0),
    y: double(0),
  });
}

/** The call's values listed in the order of its rows (its DISTINCT sorted, its ORDER BY, FILTER and OVER kept), NULLs left out. */
function listed(fc: FuncCall, element: Node, present: (value: Node) => Node): Node {
  const made: FuncCall = { ...fc, funcname: [nameNode('list')], args: [element] };
  written.add(made);
  let values: Node = { FuncCall: made };
  // PostgreSQL's DISTINCT aggregates take the values sorted.
  if (fc.agg_distinct) values = engineCall('list_sort', [values]);
  return engineCall('list_filter', [values, lambda(['vdb_v'], present(column('vdb_v')))]);
}

/** The fold of `states` (each a state carrying one value) from `initial` with `step`. */
function folded(values: Node, toState: (value: Node) => Node, initial: Node, step: (acc: Node, value: Node) => Node): Node {
  const states = engineCall('list_transform', [values, lambda(['vdb_v'], toState(column('vdb_v')))]);
  return engineCall('list_reduce', [states, lambda(['vdb_acc', 'vdb_value'], step(column('vdb_acc'), column('vdb_value'))), initial]);
}

const notNull = (value: Node): Node => ({ NullTest: { arg: value, nulltesttype: 'IS_NOT_NULL' } });

/** `name(value)` (one of VARIANCES) as PostgreSQL computes it over float8 values. */
export function youngsCramer(fc: FuncCall, name: string, value: Node): Node {
  const zero = double(0);
  const values = listed(fc, cast(value, 'float8'), notNull);
  const state = folded(
    values,
    (x) => struct({ n: zero, sx: zero, sxx: zero, x }),
    struct({ n: zero, sx: zero, sxx: zero, x: zero }),
    accumulated,
  );
  const sample = name === 'var_samp' || name === 'variance' || name === 'stddev' || name === 'stddev_samp';
  return evaluatedOnce(state, (acc) => {
    const n = field(acc, 'n');
    const variance = op('/', field(acc, 'sxx'), sample ? op('-', n, double(1)) : n);
    const result = name.startsWith('stddev') ? engineCall('sqrt', [variance]) : variance;
    return when(op('<=', n, double(sample ? 1 : 0)), nullDouble(), result);
  });
}

/** `name(y, x)` (one of REGRESSIONS) as PostgreSQL computes it over float8 values. */
export function regression(fc: FuncCall, name: string, y: Node, x: Node): Node {
  const zero = double(0);
  const pair = struct({ y: cast(y, 'float8'), x: cast(x, 'float8') });
  const values = listed(fc, pair, (p) => and([notNull(field(p, 'y')), notNull(field(p, 'x'))]));
  const empty = { n: zero, sx: zero, sxx: zero, sy: zero, syy: zero, sxy: zero };
  const state = folded(
    values,
    (p) => struct({ ...empty, x: field(p, 'x'), y: field(p, 'y') }),
    struct({ ...empty, x: zero, y: zero }),
    regressionAccumulated,
  );
  return evaluatedOnce(state, (acc) => {
    const [n, sx, sxx, sy, syy, sxy] = ['n', 'sx', 'sxx', 'sy', 'syy', 'sxy'].map((f) => field(acc, f)) as [
      Node,
      Node,
      Node,
      Node,
      Node,
      Node,
    ];
    const none = (condition: Node, result: Node) => when(condition, nullDouble(), result);
    const noRows = op('<', n, double(1));
    const flatX = op('=', sxx, double(0));
    const flatY = op('=', syy, double(0));
    // float8_covar_pop, float8_corr, float8_regr_* of PostgreSQL's float.c.
    const results: Record<string, Node> = {
      covar_pop: none(noRows, op('/', sxy, n)),
      covar_samp: none(op('<', n, double(2)), op('/', sxy, op('-', n, double(1)))),
      corr: none(or([noRows, flatX, flatY]), op('/', sxy, engineCall('sqrt', [op('*', sxx, syy)]))),
      regr_sxx: none(noRows, sxx),
      regr_syy: none(noRows, syy),
      regr_sxy: none(noRows, sxy),
      regr_slope: none(or([noRows, flatX]), op('/', sxy, sxx)),
      regr_intercept: none(or([noRows, flatX]), op('/', op('-', sy, op('/', op('*', sx, sxy), sxx)), n)),
      regr_r2: none(or([noRows, flatX]), when(flatY, double(1), op('/', op('*', sxy, sxy), op('*', sxx, syy)))),
    };
    return results[name]!;
  });
}
