/**
 * Rows compared as PostgreSQL compares them. The engine compares rows as structs, a NULL field
 * being a value like any other (`ROW(1, 2) = ROW(1, NULL)` false, PostgreSQL's NULL), and its
 * subqueries give one column. PostgreSQL compares rows field by field:
 *  - `=` is the AND of the fields' `=`, `<>` the OR of their `<>`, IS [NOT] DISTINCT FROM the OR
 *    of theirs; `<`, `<=`, `>`, `>=` go left to right and stop at the first pair that is unequal
 *    or holds a NULL (NULL then): `l1 < r1 OR (l1 = r1 AND (... ln <= rn))`;
 *  - `ROW(a, b) IN (ROW(..), ROW(..))` is the OR of the rows' `=` (NOT IN the AND of `<>`);
 *  - `ROW(a, b) op (SELECT x, y ...)`: the subquery's single row (none: NULL; more: an error) as
 *    a struct, its fields compared as above;
 *  - `ROW(a, b) [NOT] IN (SELECT x, y ...)`, `op ANY/ALL (SELECT ...)`: true/false/NULL as the
 *    OR/AND of the row comparisons over the subquery's rows (an aggregate of them);
 *  - `ROW(a, b) IS [NOT] NULL`: every field NULL (not NULL).
 * Each field is written once: a field other than a column or a constant that the comparison
 * needs twice is bound once (a lambda over a one-element list, syntax-nodes.ts).
 */
import type { A_Expr, Node, SelectStmt, SubLink } from '@pgsql/types';
import { asKind, contains, everyNode, fieldNames, nameNode } from '../tree/ast.js';
import { hasFact } from '../tree/functions.js';
import { badRequest } from '../../errors.js';
import { calledName, engineCall, int, isPlain, lambdas, notAsPostgres, op } from '../tree/syntax-nodes.js';

const ORDERINGS: Record<string, string> = { '<': '<', '<=': '<', '>': '>', '>=': '>' };

const and = (args: Node[]): Node => (args.length === 1 ? args[0]! : { BoolExpr: { boolop: 'AND_EXPR', args } });
const or = (args: Node[]): Node => (args.length === 1 ? args[0]! : { BoolExpr: { boolop: 'OR_EXPR', args } });
const not = (arg: Node): Node => ({ BoolExpr: { boolop: 'NOT_EXPR', args: [arg] } });
const column = (...names: string[]): Node => ({ ColumnRef: { fields: names.map(nameNode) } });
const rowArgs = (node: Node | undefined): Node[] | undefined => asKind(node, 'RowExpr')?.args ?? (asKind(node, 'RowExpr') ? [] : undefined);

function sameWidth(left: Node[], right: Node[]): void {
  if (left.length !== right.length) throw badRequest('unequal number of entries in row expressions', null, 'Invalid query');
}

/** Whether `operator` compares rows field by field (PostgreSQL's row comparison operators). */
const isRowOperator = (operator: string): boolean => ['=', '<>', '!='].includes(operator) || operator in ORDERINGS;

/** The comparison of two rows' fields (each used as often as the operator needs: see `bound`). */
function compared(operator: string, left: Node[], right: Node[]): Node {
  if (operator === '=') return and(left.map((l, i) => op('=', l, right[i])));
  if (operator === '<>' || operator === '!=') return or(left.map((l, i) => op('<>', l, right[i])));
  const strict = ORDERINGS[operator]!;
  let whole = op(operator, left.at(-1), right.at(-1)) as Node;
  for (let i = left.length - 2; i >= 0; i--) whole = or([op(strict, left[i], right[i]), and([op('=', left[i], right[i]), whole])]);
  return whole;
}

/** How many times `compared` writes each field. */
const usesOnce = (operator: string): boolean => !(operator in ORDERINGS);

/**
 * `build(values)` where `build` may write each value more than once: the values other than
 * columns and constants are bound once, as the fields of a struct that a lambda receives.
 */
function bound(values: Node[], build: (refs: Node[]) => Node): Node {
  const bindable = values.map((value) => !isPlain(value));
  if (!bindable.some(Boolean)) return build(values);
  const packed = values.filter((_, i) => bindable[i]);
  let k = 0;
  const refs = values.map((value, i) =>
    bindable[i] ? { A_Indirection: { arg: column('vdb_row'), indirection: [{ A_Indices: { uidx: int(++k) } }] } } : value,
  );
  const lambda: A_Expr = { kind: 'AEXPR_OP', name: [nameNode('->')], lexpr: column('vdb_row'), rexpr: build(refs) };
  lambdas.add(lambda);
  const struct: Node = { RowExpr: { args: packed, row_format: 'COERCE_EXPLICIT_CALL' } };
  const transformed = engineCall('list_transform', [{ A_ArrayExpr: { elements: [struct] } }, { A_Expr: lambda }]);
  return { A_Indirection: { arg: transformed, indirection: [{ A_Indices: { uidx: int(1) } }] } };
}

/** The number of columns a subquery gives, where its select list says it (no `*`). */
function widthOf(select: SelectStmt | undefined): number | undefined {
  if (!select) return undefined;
  if (select.op && select.op !== 'SETOP_NONE') return widthOf(asKind(select.larg as Node, 'SelectStmt') ?? select.larg);
  if (select.valuesLists) return asKind(select.valuesLists[0], 'List')?.items?.length;
  const targets = select.targetList ?? [];
  return contains(targets, 'A_Star') ? undefined : targets.length;
}

/** The subquery of a sublink, its columns named vdb_r1..n, as a FROM item (its width checked where it is known). */
function namedSubquery(sublink: SubLink, width: number): Node {
  const given = widthOf(asKind(sublink.subselect, 'SelectStmt'));
  if (given !== undefined && given !== width)
    throw badRequest(`subquery has too ${given > width ? 'many' : 'few'} columns`, null, 'Invalid query');
  const colnames = Array.from({ length: width }, (_, i) => nameNode(`vdb_r${i + 1}`));
  return { RangeSubselect: { subquery: sublink.subselect, alias: { aliasname: 'vdb_rows', colnames } } };
}

const select = (target: Node, from: Node): Node => ({
  SelectStmt: {
    targetList: [{ ResTarget: { val: target } }],
    fromClause: [from],
    limitOption: 'LIMIT_OPTION_DEFAULT',
    op: 'SETOP_NONE',
  },
});
const scalar = (query: Node): Node => ({ SubLink: { subLinkType: 'EXPR_SUBLINK', subselect: query } });

/** `ROW(a, b) op (SELECT x, y ...)`: the subquery's row as a struct (NULL without a row), bound with the fields. */
function comparedWithSubquery(operator: string, left: Node[], sublink: SubLink): Node {
  const refs = left.map((_, i) => column(`vdb_r${i + 1}`));
  const row: Node = { RowExpr: { args: refs, row_format: 'COERCE_EXPLICIT_CALL' } };
  const struct = scalar(select(row, namedSubquery(sublink, left.length)));
  return bound([...left, struct], (values) => {
    const fields = left.map((_, i) => ({
      A_Indirection: { arg: values[left.length]!, indirection: [{ A_Indices: { uidx: int(i + 1) } }] },
    }));
    return compared(operator, values.slice(0, left.length), fields);
  });
}

/** Whether `node` holds an aggregate or a window function (which a subquery around it would take to another level). */
const aggregates = (node: Node): boolean =>
  !everyNode(node, (...[kind, body]) => kind !== 'FuncCall' || (!body.over && !hasFact(calledName(body), 'allowedAggregate')));

/**
 * `ROW(a, b) op ANY/ALL (SELECT x, y ...)` (IN is `= ANY`): over the subquery's rows, ANY is
 * true where a row compares true, else NULL where one compares NULL, else false; ALL the converse.
 */
function comparedWithRows(sublink: SubLink, left: Node[]): Node {
  const operator = fieldNames(sublink.operName).join('.') || '=';
  if (!isRowOperator(operator)) throw notAsPostgres(`The operator ${operator} between rows`, 'Compare the fields one by one.');
  if (left.some(aggregates) || (!usesOnce(operator) && !left.every(isPlain))) {
    throw notAsPostgres(
      `A row of aggregates or computed fields compared with ${operator} ${sublink.subLinkType === 'ALL_SUBLINK' ? 'ALL' : 'ANY'} (SELECT ...)`,
      'Compare the fields one by one: EXISTS (SELECT 1 FROM ... WHERE x = a AND y = b).',
    );
  }
  const refs = left.map((_, i) => column('vdb_rows', `vdb_r${i + 1}`));
  const match = column('vdb_match', 'vdb_match');
  const comparisons = select(compared(operator, left, refs), namedSubquery(sublink, left.length));
  const target = asKind(comparisons, 'SelectStmt')!.targetList![0]!;
  asKind(target, 'ResTarget')!.name = 'vdb_match';
  const from: Node = { RangeSubselect: { subquery: comparisons, alias: { aliasname: 'vdb_match' } } };
  const any = sublink.subLinkType === 'ANY_SUBLINK';
  // ANY: bool_or true → true; ALL: bool_and false → false; then NULL where a comparison was NULL.
  const decided: Node = any ? engineCall('bool_or', [match]) : not(engineCall('bool_and', [match]));
  const someNull = op('>', engineCall('count', []), engineCall('count', [match]));
  asKind(asKind(someNull, 'A_Expr')!.lexpr, 'FuncCall')!.agg_star = true;
  const answer: Node = {
    CaseExpr: {
      args: [
        { CaseWhen: { expr: decided, result: { A_Const: { boolval: { boolval: any } } } } },
        { CaseWhen: { expr: someNull, result: { A_Const: { isnull: true } } } },
      ],
      defresult: { A_Const: { boolval: { boolval: !any } } },
    },
  };
  return scalar(select(answer, from));
}

/** `ROW(a, b) IS [NOT] NULL`: every field NULL (every field not NULL). */
function rowNullTest(node: Node): Node | null {
  const test = asKind(node, 'NullTest');
  const fields = rowArgs(test?.arg);
  if (!test || !fields) return null;
  if (fields.some((field) => asKind(field, 'RowExpr')))
    throw notAsPostgres('IS NULL of a row holding a row', 'Test the fields one by one.');
  return and(fields.map((arg) => ({ NullTest: { arg, nulltesttype: test.nulltesttype } })));
}

/** `node` rewritten where it compares rows as PostgreSQL does; null where it compares none. */
export function rowComparison(node: Node): Node | null {
  const sublink = asKind(node, 'SubLink');
  const tested = rowArgs(sublink?.testexpr);
  if (sublink && tested && (sublink.subLinkType === 'ANY_SUBLINK' || sublink.subLinkType === 'ALL_SUBLINK'))
    return comparedWithRows(sublink, tested);
  const expr = asKind(node, 'A_Expr');
  const left = rowArgs(expr?.lexpr);
  if (!expr || !left) return rowNullTest(node);
  const operator = fieldNames(expr.name).join('.');
  const rightSublink = asKind(expr.rexpr, 'SubLink');
  if (expr.kind === 'AEXPR_OP' && isRowOperator(operator) && rightSublink?.subLinkType === 'EXPR_SUBLINK')
    return comparedWithSubquery(operator, left, rightSublink);
  const right = rowArgs(expr.rexpr);
  if (right && expr.kind === 'AEXPR_OP' && isRowOperator(operator)) {
    sameWidth(left, right);
    return usesOnce(operator)
      ? compared(operator, left, right)
      : bound([...left, ...right], (v) => compared(operator, v.slice(0, left.length), v.slice(left.length)));
  }
  if (right && (expr.kind === 'AEXPR_DISTINCT' || expr.kind === 'AEXPR_NOT_DISTINCT')) {
    sameWidth(left, right);
    const distinct = or(left.map((l, i) => ({ A_Expr: { kind: 'AEXPR_DISTINCT', name: [nameNode('=')], lexpr: l, rexpr: right[i] } })));
    return expr.kind === 'AEXPR_DISTINCT' ? distinct : not(distinct);
  }
  const list = asKind(expr.rexpr, 'List')?.items;
  if (expr.kind === 'AEXPR_IN' && list?.every((item) => rowArgs(item))) {
    const rows = list.map((item) => rowArgs(item)!);
    rows.forEach((row) => sameWidth(left, row));
    const equal = operator === '=';
    return bound([...left], (fields) => (equal ? or : and)(rows.map((row) => compared(equal ? '=' : '<>', fields, row))));
  }
  return null;
}
