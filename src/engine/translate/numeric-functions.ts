/**
 * PostgreSQL's functions of numeric scale and buckets, written for the engine: width_bucket
 * (float and numeric forms, as PostgreSQL 15 picks and computes them: runtime/function-macros.ts),
 * scale, min_scale and trim_scale. The engine's DECIMAL has one scale per column, which is
 * PostgreSQL's scale of each value where vdb types it (literals, numeric(p, s) columns); a numeric
 * without declared scale (DECIMAL(38,10)) or a float, whose PostgreSQL scale is not known here,
 * is refused while the statement runs.
 */
import type { Node } from '@pgsql/types';
import { UNCONSTRAINED_NUMERIC } from '../../catalog/types.js';
import { asKind } from '../tree/ast.js';
import {
  asVarchar,
  call,
  cast,
  engineCall,
  evaluatedOnce,
  int,
  literalText,
  notAsPostgres,
  stringConst,
  TYPE_NAMES_OF_FLOATS,
  typeIs,
  written,
} from '../tree/syntax-nodes.js';

const or = (args: Node[]): Node => (args.length === 1 ? args[0]! : { BoolExpr: { boolop: 'OR_EXPR', args } });
const not = (arg: Node): Node => ({ BoolExpr: { boolop: 'NOT_EXPR', args: [arg] } });
const isDecimal = (value: Node): Node => call('starts_with', [call('typeof', [value]), stringConst('DECIMAL')]);
const INTEGER_TYPES = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT'];

/** `value`, or the engine's error naming what is not supported where `condition` holds. */
const unless = (condition: Node, what: string, hint: string, value: Node): Node => ({
  CaseExpr: {
    args: [{ CaseWhen: { expr: condition, result: call('error', [stringConst(`${what} is not supported by vdb's engine: ${hint}`)]) } }],
    defresult: value,
  },
});

const UNKNOWN_SCALE_HINT = 'its PostgreSQL scale per value is not known to the engine; cast it to numeric(p, s).';

/**
 * width_bucket(x, low, high, count): the numeric form when a numeric value and no float is among
 * the bounds and operand (PostgreSQL's choice), else the float form. The form over an array of
 * thresholds is refused.
 */
export function widthBucketCall(args: Node[]): Node {
  if (args.length === 2) {
    throw notAsPostgres('width_bucket(x, thresholds array)', 'Give the bounds and the count: width_bucket(x, low, high, count).');
  }
  if (args.length !== 4) throw notAsPostgres(`width_bucket with ${args.length} arguments`, 'Give the value, the bounds and the count.');
  const values = args.slice(0, 3);
  // An integer past bigint (HUGEINT to the engine) is numeric to PostgreSQL.
  const exact = values.map((v) => or([isDecimal(v), typeIs(v, ['HUGEINT'])]));
  const numeric: Node = {
    BoolExpr: { boolop: 'AND_EXPR', args: [or(exact), not(or(values.map((v) => typeIs(v, TYPE_NAMES_OF_FLOATS))))] },
  };
  const bucket: Node = {
    CaseExpr: {
      args: [{ CaseWhen: { expr: numeric, result: engineCall('vdb_width_bucket_n', args) } }],
      defresult: engineCall('vdb_width_bucket', args),
    },
  };
  return unless(
    or(values.map((v) => typeIs(v, [UNCONSTRAINED_NUMERIC]))),
    'width_bucket() of a numeric without declared scale',
    UNKNOWN_SCALE_HINT,
    bucket,
  );
}

/** The value's text with its scale, refused where PostgreSQL's scale is not the engine's. */
function exactText(name: string, value: Node): { text: Node; guard: (result: Node) => Node } {
  const unknownScale = or([typeIs(value, [UNCONSTRAINED_NUMERIC]), not(or([isDecimal(value), typeIs(value, INTEGER_TYPES)]))]);
  return {
    text: asVarchar(value),
    guard: (result) =>
      unless(
        { BoolExpr: { boolop: 'AND_EXPR', args: [{ NullTest: { arg: value, nulltesttype: 'IS_NOT_NULL' } }, unknownScale] } },
        `${name}() of a float, a numeric without declared scale or another type`,
        'give it a numeric(p, s), an integer or a numeric literal.',
        result,
      ),
  };
}

/** scale(x) and min_scale(x) (int4 by the registry's result type); trim_scale of a literal. */
export function scaleCall(name: string, args: Node[]): Node {
  if (args.length !== 1) throw notAsPostgres(`${name} with ${args.length} arguments`, 'Give one numeric value.');
  const value = args[0]!;
  if (name === 'trim_scale') {
    const constant = asKind(value, 'A_Const');
    const literal = constant?.fval || constant?.ival ? literalText(value) : null;
    if (literal === null) {
      throw notAsPostgres(
        'trim_scale() of a value other than a numeric literal',
        'PostgreSQL gives each value its own scale; the engine one per column.',
      );
    }
    const trimmed = literal.includes('.') ? literal.replace(/0+$/, '').replace(/\.$/, '') : literal;
    if (trimmed.includes('.')) return { A_Const: { fval: { fval: trimmed } } };
    // A whole number is still numeric (scale 0), as the engine's DECIMAL(38,0).
    const whole = cast({ A_Const: { fval: { fval: trimmed } } }, 'numeric');
    whole.TypeCast.typeName.typmods = [int(38), int(0)];
    written.add(whole.TypeCast);
    return whole;
  }
  return evaluatedOnce(value, (once) => {
    const { text, guard } = exactText(name, once);
    const fraction = engineCall('split_part', [text, stringConst('.'), { A_Const: { ival: { ival: 2 } } }]);
    const digits = name === 'scale' ? fraction : engineCall('rtrim', [fraction, stringConst('0')]);
    return guard(engineCall('length', [digits]));
  });
}
