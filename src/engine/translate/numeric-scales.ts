/**
 * PostgreSQL's numeric keeps a scale per value (coalesce(1.50, 0) gives 1.50 and 0; avg(1, 2) gives
 * 1.5000000000000000), while the engine's DECIMAL has one scale per column. Where the engine would
 * write another scale (0.00 for 0) or a double (1.5), the statement is refused while it runs, with
 * a message saying what to write instead: the engine's checks here are constant per statement
 * (they ask the values' types), so they cost nothing per row.
 */
import type { Node } from '@pgsql/types';
import { call, int, isNullConst, isVolatile, op, stringConst, TYPE_NAMES_OF_FLOATS, typeIs } from '../tree/syntax-nodes.js';

const or = (args: Node[]): Node => (args.length === 1 ? args[0]! : { BoolExpr: { boolop: 'OR_EXPR', args } });
const and = (args: Node[]): Node => ({ BoolExpr: { boolop: 'AND_EXPR', args } });
const not = (arg: Node): Node => ({ BoolExpr: { boolop: 'NOT_EXPR', args: [arg] } });

const typeOf = (value: Node) => call('typeof', [value]);
const isDecimal = (value: Node) => call('starts_with', [typeOf(value), stringConst('DECIMAL')]);
const isFloat = (value: Node): Node => typeIs(value, TYPE_NAMES_OF_FLOATS);
const INTEGER_TYPES = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT'];
const isExact = (value: Node) => or([isDecimal(value), typeIs(value, INTEGER_TYPES)]);
/** The scale of a value as PostgreSQL's numeric would hold it: a DECIMAL's own, 0 for integers. */
const scaleOf = (value: Node): Node => ({
  CaseExpr: {
    args: [
      {
        CaseWhen: {
          expr: isDecimal(value),
          result: call('regexp_extract', [typeOf(value), stringConst(',(\\d+)\\)'), int(1)]),
        },
      },
    ],
    defresult: stringConst('0'),
  },
});

const refusal = (what: string, hint: string) => call('error', [stringConst(`${what} is not supported by vdb's engine: ${hint}`)]);

/** `CASE WHEN condition THEN error(...) ELSE value END`. */
const unless = (condition: Node, failure: Node, value: Node | undefined): Node => ({
  CaseExpr: { args: [{ CaseWhen: { expr: condition, result: failure } }], defresult: value },
});

/**
 * True while the statement runs when `values` mix numeric scales (one of them a DECIMAL, none a
 * float, not all of one scale); null when they cannot be told (volatile, fewer than two).
 */
function mixedScales(values: Array<Node | undefined>): Node | null {
  const typed = values.filter((v): v is Node => v !== undefined && !isNullConst(v));
  if (typed.length < 2 || isVolatile(typed)) return null;
  const scales = typed.map(scaleOf);
  return and([or(typed.map(isDecimal)), not(or(typed.map(isFloat))), or(scales.slice(1).map((scale) => op('<>', scales[0], scale)))]);
}

const MIXED_HINT =
  'PostgreSQL keeps each numeric value with its own scale, the engine gives them one; write the values with one scale (coalesce(x, 0.00)) or cast them to float8.';

/** `expr` (COALESCE, GREATEST/LEAST, CASE, lag/lead with a default) refused when `values` mix numeric scales. */
export function sameScaleOrRefused(expr: Node, values: Array<Node | undefined>, what: string): Node {
  const condition = mixedScales(values);
  return condition ? unless(condition, refusal(`${what} over numeric values of different scales`, MIXED_HINT), expr) : expr;
}

/** The argument of avg(x) and kin, refused when exact (integers, numeric): PostgreSQL answers numeric there. */
export function floatOnlyArgument(name: string, value: Node): Node {
  const failure = refusal(
    `${name}() of integers or numeric`,
    `PostgreSQL answers numeric with as many as 16 or more digits, the engine a double; write ${name}(x::float8) for a double, or round(${name}(x::float8), n).`,
  );
  return unless(isExact(value), failure, value);
}

/** Dividing by `divisor`: refused when numeric division would answer numeric in PostgreSQL (a double in the engine). */
export function numericDivisionRefused(dividend: Node, divisor: Node): { condition: Node; failure: Node } | null {
  if (isVolatile([dividend, divisor])) return null;
  return {
    condition: and([or([isDecimal(dividend), isDecimal(divisor)]), not(or([isFloat(dividend), isFloat(divisor)]))]),
    failure: refusal(
      'Division of numeric values',
      'PostgreSQL answers numeric with a scale of its own choosing, the engine a double; cast one side to float8 for a double, or round the quotient: round(x::float8 / y, 2).',
    ),
  };
}

/** The arguments of `name`, the first refused when a numeric one (and no float) is among them; null when volatile. */
export function numericArgumentsRefused(name: string, args: Node[]): Node[] | null {
  if (isVolatile(args)) return null;
  // log(b, x) has no double precision form in PostgreSQL: numeric unless a float is among them.
  const exact = name === 'log' && args.length === 2 ? or(args.map(isExact)) : or(args.map(isDecimal));
  const condition = and([exact, not(or(args.map(isFloat)))]);
  const failure = refusal(
    `${name}() of numeric values`,
    `PostgreSQL answers numeric with a scale of its own choosing, the engine a double; cast the argument to float8: ${name}(x::float8).`,
  );
  return [unless(condition, failure, args[0]!), ...args.slice(1)];
}
