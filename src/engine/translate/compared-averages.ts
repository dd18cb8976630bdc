/**
 * avg() of integers or numeric where only its value counts, not its text: an operand of a
 * comparison (`HAVING avg(x) > 5`), or the one column of a subquery compared with a value
 * (`x > (SELECT avg(x) FROM t)`, `x > ALL (SELECT avg(x) ...)`). PostgreSQL answers numeric
 * there, rounded to a scale of its own choosing (numeric-values.ts computes the same digits in
 * the outermost select list); here the same rounded value is made a DECIMAL(38,18), which
 * compares exactly with the other side. A value PostgreSQL gives more than 18 decimals, or that
 * does not fit, is refused while the statement runs. Elsewhere (nested in other expressions, a
 * subquery's column shown by the outer query) avg of exact values stays refused: its text
 * would show another scale.
 */
import type { FuncCall, Node, SelectStmt } from '@pgsql/types';
import { asKind, fieldNames, walk } from '../tree/ast.js';
import { call, calledName, int, stringConst, written } from '../tree/syntax-nodes.js';
import { UNCONSTRAINED_NUMERIC } from '../../catalog/types.js';
import { probedArgument } from './probed-types.js';
import { floatOnlyArgument } from './numeric-scales.js';

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);

const INTEGERS = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT)$/;

/** The scale PostgreSQL's numeric holds the engine's type with: 0 for integers; null where not exact (or not known). */
function exactScale(type: string | undefined): number | null {
  if (type === undefined) return null;
  if (INTEGERS.test(type)) return 0;
  const decimal = /^DECIMAL\((\d+),(\d+)\)$/.exec(type);
  // DECIMAL(38,10) is a numeric without declared scale: each value's PostgreSQL scale is not known.
  return decimal && type !== UNCONSTRAINED_NUMERIC ? Number(decimal[2]) : null;
}

const mark = <T extends { FuncCall: FuncCall }>(made: T): T => {
  written.add(made.FuncCall);
  return made;
};

/** The avg() calls of `tree` whose value only meets a comparison (see the module comment). */
export function comparedAverages(tree: unknown): WeakSet<object> {
  const found = new WeakSet<object>();
  const operand = (node: Node | undefined): void => {
    const fc = asKind(node, 'FuncCall');
    if (fc && calledName(fc) === 'avg' && fc.args?.length === 1 && !fc.over && !fc.agg_star && !fc.func_variadic) found.add(fc);
    const sublink = asKind(node, 'SubLink');
    if (sublink?.subLinkType === 'EXPR_SUBLINK') onlyColumn(asKind(sublink.subselect, 'SelectStmt'));
  };
  const onlyColumn = (select: SelectStmt | undefined): void => {
    if (!select || (select.op && select.op !== 'SETOP_NONE') || select.targetList?.length !== 1) return;
    operand(asKind(select.targetList[0], 'ResTarget')?.val);
  };
  walk(tree, (kind, node) => {
    if (kind === 'A_Expr' && node.kind === 'AEXPR_OP' && COMPARISONS.has(fieldNames(node.name).join(''))) {
      operand(node.lexpr);
      operand(node.rexpr);
    } else if (kind === 'SubLink' && (node.subLinkType === 'ANY_SUBLINK' || node.subLinkType === 'ALL_SUBLINK')) {
      const operator = fieldNames(node.operName).join('');
      if (operator === '' || COMPARISONS.has(operator)) onlyColumn(asKind(node.subselect, 'SelectStmt'));
    }
  });
  return found;
}

/**
 * avg(x) (its children already written) as PostgreSQL's rounded numeric in a DECIMAL(38,18)
 * where x is exact; otherwise as the engine's avg, refused for exact values (numeric-scales.ts).
 */
export function comparedAverage(fc: FuncCall): Node {
  const { type, call: probing } = probedArgument(fc);
  const arg = fc.args![0]!;
  const scale = exactScale(type);
  if (scale === null) {
    const made: FuncCall = { ...probing, args: [floatOnlyArgument('avg', arg)] };
    written.add(made);
    return { FuncCall: made };
  }
  const digits = mark(call(scale > 0 ? 'vdb_unscaled' : 'vdb_hugeint', [arg]));
  const aggregate = (name: string, args: Node[]) => {
    const made = mark(call(name, args));
    Object.assign(made.FuncCall, { agg_filter: fc.agg_filter, agg_distinct: fc.agg_distinct });
    return made;
  };
  const sum = mark(call('vdb_num', [aggregate('sum', [digits]), int(scale)]));
  const count = mark(call('vdb_num', [aggregate('count', [arg]), int(0)]));
  return mark(call('vdb_num_decimal', [mark(call('vdb_num_div', [sum, count])), stringConst('avg()')]));
}
