/**
 * The bound tree written as the engine's SQL. The engine reads PostgreSQL's dialect with a few
 * differences in meaning that are rewritten here, so that it answers as PostgreSQL would:
 *  - LIKE / ILIKE [ESCAPE], SIMILAR TO and SUBSTRING ... SIMILAR: sql-patterns.ts.
 *  - Division and modulo by zero: an error in PostgreSQL, NULL in the engine; the divisor is
 *    checked so that the engine fails the same way.
 *  - btrim (what TRIM(...) parses to) is the engine's trim; extract (EXTRACT(field FROM x)) its date_part.
 *  - substr/substring with a start below 1: PostgreSQL counts the positions before the text (so
 *    `substr('hello', -1, 3)` is 'h'), the engine counts from the end; the start and length are
 *    written as PostgreSQL means them, and a negative length fails as in PostgreSQL.
 *  - Regular expressions: PostgreSQL's `~` finds a match anywhere, the engine's `~` must match
 *    the whole text; `.` matches a newline in PostgreSQL only. Written as regexp_matches with
 *    the 's' option (and 'i' for `~*`).
 *  - Values (casts, text written as PostgreSQL writes it): postgres-values.ts.
 *  - avg() of exact values compared with others: compared-averages.ts.
 *  - RANGE offsets over an integer window key: the key read as a HUGEINT (no overflow at the limits).
 *  - A char(n) column where PostgreSQL reads it without its padding: rtrim(x, ' ') (plan/padded-uses.ts).
 *  - An aggregate of an outer query's columns inside a subquery is refused: outer-aggregates.ts.
 *  - Rows compared field by field (NULLs as PostgreSQL), also with subqueries: row-comparisons.ts.
 *  - money arithmetic as casts of its numbers to money: money-arithmetic.ts.
 *  - Functions and operators the engine lacks or reads otherwise (round, lag/lead defaults,
 *    to_char, format, generate_series in a select list, ...): postgres-functions.ts.
 * What cannot be written to answer as PostgreSQL does is refused with a 400 naming it.
 */
import { deparseSync } from 'pgsql-deparser';
import type { A_Expr, FuncCall, Node, ParseResult, RangeFunction, SelectStmt, TypeCast } from '@pgsql/types';
import { asKind, mapChildren, mapTree, mapTreeUp, nameNode, exprIs } from '../tree/ast.js';
import { functionFacts } from '../tree/functions.js';
import { namedFunctionColumn, postgresCall, postgresOperator, walkCalls } from './postgres-functions.js';
import { BC_DATE_TIME, checkedCast, typeNameOf } from './postgres-values.js';
import { markCastUses } from './cast-uses.js';
import { untypedIntervalDiffers } from '../../runtime/interval-input.js';
import { numericDivisionRefused, sameScaleOrRefused } from './numeric-scales.js';
import { probedType, typedDifference, typedSum } from './probed-types.js';
import { comparedAverage, comparedAverages } from './compared-averages.js';
import { refuseOuterAggregates } from './outer-aggregates.js';
import { rowComparison } from './row-comparisons.js';
import { moneyArithmetic } from './money-arithmetic.js';
import { boundValues } from './value-bounds.js';
import { likeCall, similarCall, similarSubstring } from './sql-patterns.js';
import { matchTestRegex } from './posix-regex.js';
import { badRequest, statementTooComplex } from '../../errors.js';
import {
  asVarchar,
  call,
  cast,
  calledName,
  engineCall,
  int,
  lambdas,
  literalText,
  isIntegerConst,
  isNullConst,
  isStringConst,
  notAsPostgres,
  op,
  stringConst,
  typeNamed,
  written,
} from '../tree/syntax-nodes.js';

/** The first part of an operator's name: '~~' for `a LIKE b`. */
const operatorName = (expr: A_Expr): string | undefined => asKind(expr.name?.[0], 'String')?.sval;

const REGEX_OPERATORS: Record<string, { options: string; negated: boolean }> = {
  '~': { options: 's', negated: false },
  '~*': { options: 'si', negated: false },
  '!~': { options: 's', negated: true },
  '!~*': { options: 'si', negated: true },
};

/** `a ~ b` as `regexp_matches(a, b, 's')`, `a !~* b` as `NOT regexp_matches(a, b, 'si')`. */
function regexCall(expr: A_Expr): Node | null {
  const regex = REGEX_OPERATORS[operatorName(expr) ?? ''];
  if (expr.kind !== 'AEXPR_OP' || !regex || !expr.lexpr) return null;
  // A constant pattern is written with PostgreSQL's meaning of its escapes (posix-regex.ts).
  const pattern = isStringConst(expr.rexpr) ? stringConst(matchTestRegex(literalText(expr.rexpr)!)) : expr.rexpr!;
  // The engine's own regexp_matches (a match test), not PostgreSQL's set-returning one.
  const matches = engineCall('regexp_matches', [expr.lexpr, pattern, stringConst(regex.options)]);
  return regex.negated ? { BoolExpr: { boolop: 'NOT_EXPR', args: [matches] } } : matches;
}

/** `a / b` as `a / CASE WHEN b = 0 THEN error('division by zero') ELSE b END` (and `%`). */
function checkedDivision(expr: A_Expr): A_Expr | null {
  const operator = operatorName(expr);
  if (expr.kind !== 'AEXPR_OP' || (operator !== '/' && operator !== '%') || !expr.rexpr) return null;
  const divisor = expr.rexpr;
  const failure = call('error', [stringConst('division by zero')]);
  const whens: Node[] = [{ CaseWhen: { expr: op('=', divisor, int(0)), result: failure } }];
  const numeric = operator === '/' ? numericDivisionRefused(expr.lexpr!, divisor) : null;
  if (numeric) whens.push({ CaseWhen: { expr: numeric.condition, result: numeric.failure } });
  // x % -1 is 0 in PostgreSQL even for the smallest integer (the engine overflows): x % 1 is the same.
  if (operator === '%') whens.push({ CaseWhen: { expr: op('=', divisor, int(-1)), result: int(1) } });
  return { ...expr, rexpr: { CaseExpr: { args: whens, defresult: divisor } } };
}

/** PostgreSQL's substr(s, start[, length]) in the engine's terms (positions before 1 count, but show nothing). */
function substrCall(fc: FuncCall): FuncCall | null {
  const name = calledName(fc);
  const args = fc.args ?? [];
  if ((name !== 'substr' && name !== 'substring') || (args.length !== 2 && args.length !== 3)) return null;
  const [text, start, length] = args as [Node, Node, Node?];
  const from: Node = { MinMaxExpr: { op: 'IS_GREATEST', args: [start, int(1)] } };
  if (length === undefined) return call('substr', [text, from]).FuncCall;
  // The characters of [start, start + length) that lie at positions 1 and after.
  const kept: Node = { MinMaxExpr: { op: 'IS_GREATEST', args: [op('-', op('+', start, length), from), int(0)] } };
  const negative = op('<', length, int(0));
  const failure = call('error', [stringConst('negative substring length not allowed')]);
  return call('substr', [text, from, { CaseExpr: { args: [{ CaseWhen: { expr: negative, result: failure } }], defresult: kept } }])
    .FuncCall;
}

/**
 * upper(x): the engine writes ß as ẞ, PostgreSQL keeps it (libc's toupper, under the database's
 * C.UTF-8 collation; every other letter agrees). The ß are set aside around the engine's upper,
 * behind an escape character (\x01, itself escaped) so that no text of the user's can mistake them
 * (the argument is written once: volatile ones too).
 */
function upperCall(fc: FuncCall): Node | null {
  const args = fc.args ?? [];
  if (calledName(fc) !== 'upper' || args.length !== 1 || fc.over) return null;
  const replace = (value: Node, from: string, to: string) => engineCall('replace', [value, stringConst(from), stringConst(to)]);
  const escaped = replace(replace(args[0]!, '\x01', '\x01\x02'), '\u00df', '\x01\x03');
  return replace(replace(engineCall('upper', [escaped]), '\x01\x03', '\u00df'), '\x01\x02', '\x01');
}

/** `json -> key`, `json -> index`, `->>`: the part's text as written (runtime/json-parts.ts), as PostgreSQL's json keeps it. */
const isArrow = (expr: A_Expr) => exprIs(expr, 'AEXPR_OP') && (operatorName(expr) === '->' || operatorName(expr) === '->>');

function jsonPartCall(expr: A_Expr, doc: Node, step: Node): Node {
  const asText = operatorName(expr) === '->>';
  const part = engineCall('vdb_json_part', [asVarchar(doc), step, { A_Const: { boolval: { boolval: asText } } }]);
  if (asText) return part;
  const json: TypeCast = { arg: part, typeName: typeNamed('json') };
  written.add(json);
  return { TypeCast: json };
}

/**
 * `generate_series(1, 3) AS x` in FROM, over integer literals: PostgreSQL's series is integer
 * (int4), the engine's bigint; written as a subquery that casts it. The series stays a table
 * function, which streams its rows (a list of them would be built whole).
 */
function integerSeries(rangeFunction: RangeFunction): Node | null {
  if (rangeFunction.ordinality || rangeFunction.is_rowsfrom || rangeFunction.lateral) return null;
  const items = rangeFunction.functions ?? [];
  // Each function of FROM is a List of the call and its column definitions.
  const first = items.length === 1 ? asKind(items[0], 'List')?.items : undefined;
  const fn = first && first.length >= 1 ? asKind(first[0], 'FuncCall') : undefined;
  if (!fn || calledName(fn) !== 'generate_series') return null;
  if (!(fn.args ?? []).every(isIntegerConst)) return null;
  const alias = rangeFunction.alias ?? { aliasname: 'generate_series' };
  const names = alias.colnames && alias.colnames.length > 0 ? alias.colnames : [{ String: { sval: alias.aliasname } }];
  if (names.length !== 1) return null;
  const rows: FuncCall = { ...fn };
  written.add(rows);
  const series: RangeFunction = {
    functions: [{ List: { items: [{ FuncCall: rows }, {} as Node] } }],
    alias: { aliasname: 'vdb_series', colnames: [{ String: { sval: 'vdb_value' } }] },
  };
  written.add(series);
  const value: TypeCast = { arg: { ColumnRef: { fields: [nameNode('vdb_series'), nameNode('vdb_value')] } }, typeName: typeNamed('int4') };
  written.add(value);
  const select: Node = {
    SelectStmt: {
      targetList: [{ ResTarget: { val: { TypeCast: value } } }],
      fromClause: [{ RangeFunction: series }],
      limitOption: 'LIMIT_OPTION_DEFAULT',
      op: 'SETOP_NONE',
    },
  };
  return { RangeSubselect: { subquery: select, alias: { ...alias, colnames: names } } };
}

/**
 * generate_series of dates in FROM: PostgreSQL's rows are timestamp with time zone there, the
 * engine's timestamp. Date literals are cast (midnight UTC, as in PostgreSQL here); other dates are refused.
 */
function dateSeries(rangeFunction: RangeFunction): RangeFunction {
  let functions = rangeFunction.functions;
  walkCalls(rangeFunction.functions, (fc) => {
    const args = fc.args ?? [];
    if (calledName(fc) !== 'generate_series' || args.length === 0) return;
    if (typeNameOf(asKind(args[0], 'TypeCast')?.typeName) !== 'date') return;
    const literals = args.length === 3 && args.slice(0, 2).every((arg) => typeNameOf(asKind(arg, 'TypeCast')?.typeName) === 'date');
    if (!literals || (rangeFunction.functions ?? []).length !== 1) {
      throw notAsPostgres(
        'generate_series() of dates',
        'PostgreSQL answers timestamp with time zone there, the engine timestamp; cast the bounds: generate_series(x::timestamp, y::timestamp, interval)',
      );
    }
    const series: FuncCall = { ...fc, args: [cast(args[0], 'timestamptz'), cast(args[1], 'timestamptz'), args[2]!] };
    written.add(series);
    const list = asKind(rangeFunction.functions![0], 'List');
    functions = [list ? { List: { items: [{ FuncCall: series }, ...(list.items ?? []).slice(1)] } } : { FuncCall: series }];
  });
  return functions === rangeFunction.functions ? rangeFunction : { ...rangeFunction, functions };
}

/** Whether an operand of `-` may be a date (no number literal): date - date is integer in PostgreSQL. */
const mayBeDates = (node: Node | undefined): boolean => {
  const constant = asKind(node, 'A_Const');
  return node !== undefined && !(constant && (constant.ival || constant.fval || constant.isnull));
};

/** PostgreSQL's frame options of a window without a frame clause (RANGE UNBOUNDED PRECEDING AND CURRENT ROW). */
const DEFAULT_FRAME = 0x2 | 0x20 | 0x400;

const INTEGER_KEYS = /^(TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER)$/;

/**
 * A window of `RANGE ... n PRECEDING/FOLLOWING` over an integer key: the engine adds the offset
 * in the key's type and overflows near its limits, where PostgreSQL takes the frame as reaching
 * past the last row; the key is read as a HUGEINT there (its type probed, probed-types.ts).
 */
function rangeKeyWidened(fc: FuncCall | undefined): FuncCall | undefined {
  const over = fc?.over;
  if (!fc || !over || written.has(fc) || !((over.frameOptions ?? 0) & 2) || !(over.startOffset || over.endOffset)) return fc;
  const sortBy = over.orderClause?.length === 1 ? asKind(over.orderClause[0], 'SortBy') : undefined;
  if (!sortBy?.node) return fc;
  const { type, probe } = probedType(sortBy.node);
  // The probe without the offsets, which may overflow while it is prepared (constants are folded then).
  if (probe) {
    const { startOffset: _start, endOffset: _end, ...frameless } = over;
    return { ...fc, over: { ...frameless, frameOptions: DEFAULT_FRAME, partitionClause: [...(over.partitionClause ?? []), probe] } };
  }
  if (!type || !INTEGER_KEYS.test(type)) return fc;
  const widened: TypeCast = { arg: sortBy.node, typeName: typeNamed('hugeint') };
  written.add(widened);
  return { ...fc, over: { ...over, orderClause: [{ SortBy: { ...sortBy, node: { TypeCast: widened } } }] } };
}

/** Whether a SELECT, or a branch of its set operation, has no column (PostgreSQL answers rows of none). */
function withoutColumns(select: SelectStmt): boolean {
  if (select.op && select.op !== 'SETOP_NONE')
    return [select.larg, select.rarg].some((branch) => branch !== undefined && withoutColumns(branch));
  return !select.valuesLists && !(select.targetList && select.targetList.length > 0);
}

/** A copy of `value` in the engine's terms (`rewriteNode` for each node). */
const rewrite = <T>(value: T): T => mapTree(value, rewriteNode);

/**
 * Nodes the rewrite of one statement may still visit. A translation writes its argument more
 * than once at times (round, text of a value); nested, such writings would multiply, so the
 * rewrite stops past a budget that grows with the statement (a 400, not a stalled process).
 */
let rewriteBudget = 0;

/** The statement's avg() calls whose value only meets a comparison (compared-averages.ts), set by each rewrite. */
let averages = new WeakSet<object>();

/** References of char(n) columns read without their padding (plan/padded-uses.ts), set by each rewrite. */
let stripped: WeakSet<object> = new WeakSet();
const REWRITE_NODES_PER_NODE = 40;
const REWRITE_NODES_LEAST = 200_000;

function countNodes(value: unknown): number {
  let count = 0;
  const visit = (item: unknown): void => {
    if (Array.isArray(item)) item.forEach(visit);
    else if (typeof item === 'object' && item !== null) {
      count++;
      for (const child of Object.values(item)) visit(child);
    }
  };
  visit(value);
  return count;
}

/** A char(n) column's reference where PostgreSQL reads it without the spaces that pad it: rtrim(x, ' '). */
function strippedReference(node: Node): Node | undefined {
  const columnRef = asKind(node, 'ColumnRef');
  if (!columnRef || !stripped.has(columnRef)) return undefined;
  const trimmed = call('rtrim', [node, stringConst(' ')]);
  written.add(trimmed.FuncCall);
  return trimmed;
}

/** Refuses the forms the engine cannot answer as PostgreSQL does: no columns, a subquery compared with a row. */
function refuseForms(node: Node): void {
  const select = asKind(node, 'SelectStmt');
  if (select && withoutColumns(select)) {
    throw notAsPostgres(
      'A select list without columns (SELECT FROM ..., SELECT UNION SELECT)',
      'Select at least one column, e.g. SELECT 1 FROM ...',
    );
  }
  const compared = asKind(node, 'A_Expr');
  if (compared && asKind(compared.lexpr, 'SubLink') && asKind(compared.rexpr, 'RowExpr')) {
    // PostgreSQL fails it too (a subquery compared with a row must stand on the right).
    throw badRequest('subquery must return only one column', null, 'Invalid query');
  }
}

/**
 * An untyped literal operand of an operator ('x = '1.99 years'') that, where it meets an interval,
 * the engine would read otherwise than PostgreSQL: refused, with the typed form as hint.
 */
function checkUntypedIntervals(node: Node): void {
  const expr = asKind(node, 'A_Expr');
  if (!expr) return;
  const operands = [expr.lexpr, expr.rexpr, ...(asKind(expr.rexpr, 'List')?.items ?? [])];
  for (const operand of operands) {
    const text = asKind(operand, 'A_Const')?.sval?.sval;
    if (text !== undefined && untypedIntervalDiffers(text)) {
      throw notAsPostgres(
        `The untyped literal '${text}' (where it meets an interval, the engine would read it otherwise than PostgreSQL)`,
        `Give its type: INTERVAL '${text}'.`,
      );
    }
  }
}

/** What `node` becomes in the engine's SQL, its children rewritten too; undefined where only its children change. */
function rewriteNode(node: Node): Node | undefined {
  if (--rewriteBudget < 0) throw statementTooComplex();
  const trimmed = strippedReference(node);
  if (trimmed) return trimmed;
  const rows = rowComparison(node);
  if (rows) return rewrite(rows);
  refuseForms(node);
  if (asKind(node, 'GroupingFunc')) {
    // grouping(): PostgreSQL's is an integer (int4), the engine's a bigint.
    const typed: TypeCast = { arg: mapChildren(node, rewriteNode), typeName: typeNamed('int4') };
    written.add(typed);
    return { TypeCast: typed };
  }
  const typeCast = asKind(node, 'TypeCast');
  if (typeCast && !written.has(typeCast)) {
    const checked = checkedCast(typeCast);
    const checkedBody = checked ? asKind(checked, 'TypeCast') : undefined;
    if (checkedBody) return { TypeCast: { ...checkedBody, arg: rewrite(checkedBody.arg) } };
    if (checked) return mapChildren(checked, rewriteNode);
    // A BC date's text cast to another type (text) is that text.
    if (isStringConst(typeCast.arg)) return node;
  }
  const constant = asKind(node, 'A_Const');
  if (constant?.sval && BC_DATE_TIME.test(constant.sval.sval ?? '')) {
    // Compared with a date, the engine would read it as a year AD.
    throw notAsPostgres(
      `The untyped literal '${constant.sval.sval}' (a date before year 1, which the engine would read as a year AD)`,
      "Give its type: DATE '0044-03-15 BC'.",
    );
  }
  checkUntypedIntervals(node);
  const rangeFunction = asKind(node, 'RangeFunction');
  if (rangeFunction && !written.has(rangeFunction)) {
    // Functions of FROM are table functions already (generate_series gives rows there).
    walkCalls(rangeFunction.functions, (fc) => {
      if (calledName(fc) === 'generate_series') written.add(fc);
    });
    const dated = dateSeries(rangeFunction);
    if (dated !== rangeFunction) return { RangeFunction: rewrite(namedFunctionColumn(dated) ?? dated) };
    const series = integerSeries(rangeFunction);
    if (series) return rewrite(series);
    const named = namedFunctionColumn(rangeFunction);
    if (named) return { RangeFunction: rewrite(named) };
  }
  const original = asKind(node, 'FuncCall');
  const funcCall = rangeKeyWidened(original);
  if (funcCall && averages.has(funcCall) && !written.has(funcCall))
    return comparedAverage(mapChildren({ FuncCall: funcCall }, rewriteNode).FuncCall);
  if (funcCall) {
    const rewritten = postgresCall(funcCall);
    if (rewritten) return mapChildren(rewritten, rewriteNode);
    if (calledName(funcCall) === 'sum' && funcCall.args?.length === 1 && !funcCall.agg_star && !written.has(funcCall)) {
      return typedSum(mapChildren({ FuncCall: funcCall }, rewriteNode));
    }
    const upper = written.has(funcCall) ? null : upperCall(funcCall);
    if (upper) return mapChildren(upper, rewriteNode);
    const similar = similarSubstring(funcCall);
    if (similar) return mapChildren(similar, rewriteNode);
    const substr = funcCall.over || written.has(funcCall) ? null : substrCall(funcCall);
    if (substr) return { FuncCall: { ...substr, args: rewrite(substr.args) } };
    const renamed = functionFacts(calledName(funcCall))?.engineName;
    if (renamed) {
      return {
        FuncCall: { ...funcCall, funcname: [nameNode(renamed)], funcformat: 'COERCE_EXPLICIT_CALL', args: rewrite(funcCall.args) },
      };
    }
    if (funcCall !== original) return mapChildren({ FuncCall: funcCall }, rewriteNode);
  }
  const expr = asKind(node, 'A_Expr');
  if (expr && !lambdas.has(expr)) {
    const translated = postgresOperator(expr) ?? likeCall(expr) ?? similarCall(expr) ?? regexCall(expr);
    if (translated) return rewrite(translated);
    const division = expr.rexpr ? checkedDivision(expr) : null;
    if (division) return { A_Expr: { ...division, lexpr: rewrite(division.lexpr), rexpr: rewrite(division.rexpr) } };
    if (isArrow(expr) && expr.lexpr && expr.rexpr) return jsonPartCall(expr, rewrite(expr.lexpr), rewrite(expr.rexpr));
    if (exprIs(expr, 'AEXPR_OP') && operatorName(expr) === '-' && mayBeDates(expr.lexpr) && mayBeDates(expr.rexpr)) {
      const difference = mapChildren({ A_Expr: expr }, rewriteNode);
      return typedDifference(difference, difference.A_Expr.lexpr!, difference.A_Expr.rexpr!);
    }
  }
  return undefined;
}

/** A VALUES list whose column mixes numeric scales, refused (the first row's value carries the check). */
function guardValues(subquery: Node | undefined): Node | undefined {
  const select = asKind(subquery, 'SelectStmt');
  if (!select?.valuesLists || select.valuesLists.length < 2) return subquery;
  const rows = select.valuesLists.map((row) => asKind(row, 'List')?.items ?? []);
  const firstRow = rows[0]!.map((item, i) =>
    sameScaleOrRefused(
      item,
      rows.map((row) => row[i]),
      'A VALUES column',
    ),
  );
  return { SelectStmt: { ...select, valuesLists: [{ List: { items: firstRow } }, ...select.valuesLists.slice(1)] } };
}

/** Whether a CASE result is NULL: a NULL literal, or no result at all (no ELSE). */
const isNullResult = (result: Node | null | undefined): boolean => result === undefined || (result !== null && isNullConst(result));

/**
 * The user's COALESCE, GREATEST/LEAST and VALUES lists in FROM or WITH over numeric values of
 * different scales, refused (numeric-scales.ts); a CASE of NULLs only typed as text. A pass of
 * its own before the rewrite, which writes COALESCEs and CASEs of its own. (CASE itself is not
 * checked: vdb's column masks are CASEs over the masked column and its replacement.)
 */
function guardScales(node: Node): Node {
  const coalesce = asKind(node, 'CoalesceExpr');
  if (coalesce?.args) return sameScaleOrRefused(node, coalesce.args, 'COALESCE');
  const minMax = asKind(node, 'MinMaxExpr');
  if (minMax?.args) return sameScaleOrRefused(node, minMax.args, minMax.op === 'IS_GREATEST' ? 'GREATEST' : 'LEAST');
  // VALUES in FROM or WITH only: an INSERT's VALUES take the column's type (and scale).
  const subselect = asKind(node, 'RangeSubselect');
  if (subselect) return { RangeSubselect: { ...subselect, subquery: guardValues(subselect.subquery) } };
  const cte = asKind(node, 'CommonTableExpr');
  if (cte) return { CommonTableExpr: { ...cte, ctequery: guardValues(cte.ctequery) } };
  const caseExpr = asKind(node, 'CaseExpr');
  if (caseExpr?.args) {
    const results = caseExpr.args.map((when) => {
      const caseWhen = asKind(when, 'CaseWhen');
      return caseWhen ? caseWhen.result : null;
    });
    // Only NULLs: PostgreSQL's CASE is text then, the engine's an integer.
    if (results.every(isNullResult) && isNullResult(caseExpr.defresult)) return asVarchar(node);
  }
  return node;
}

/**
 * `engineSql` pass by pass: it pauses (yields) between its passes over the tree, so that a long
 * statement can wait for a turn of the event loop there (probed-types.ts); for the largest
 * statements allowed the whole took 15-25 ms of the main thread at once, its longest pass (the
 * rewrite) takes 40% of that. Each pass sets and uses its module state within itself.
 */
export function* engineSqlPasses(tree: ParseResult, strip: WeakSet<object> = new WeakSet()): Generator<void, string> {
  const nodes = countNodes(tree);
  refuseOuterAggregates(tree);
  const guarded = moneyArithmetic(mapTreeUp(tree, guardScales));
  yield;
  rewriteBudget = Math.max(REWRITE_NODES_LEAST, REWRITE_NODES_PER_NODE * nodes);
  averages = comparedAverages(guarded);
  markCastUses(guarded);
  stripped = strip;
  const rewritten = rewrite(guarded);
  yield;
  const bounded = boundValues(rewritten);
  yield;
  // The deparser keeps a trailing ';', which must not end up inside the wrapping queries.
  return deparseSync(bounded).replace(/;\s*$/, '');
}

/** The engine's SQL for a bound statement tree (which is left unchanged); `strip`: references of char(n) columns read without padding. */
export function engineSql(tree: ParseResult, strip?: WeakSet<object>): string {
  const passes = engineSqlPasses(tree, strip);
  for (;;) {
    const pass = passes.next();
    if (pass.done) return pass.value;
  }
}

/** `SELECT * FROM [schema.]relation AS alias WHERE condition`, in the engine's SQL. */
export function filteredSql(relation: { schema?: string; name: string }, alias: string, condition: Node): string {
  const select: Node = {
    SelectStmt: {
      targetList: [{ ResTarget: { val: { ColumnRef: { fields: [{ A_Star: {} }] } } } }],
      fromClause: [
        { RangeVar: { schemaname: relation.schema, relname: relation.name, inh: true, relpersistence: 'p', alias: { aliasname: alias } } },
      ],
      whereClause: condition,
      limitOption: 'LIMIT_OPTION_DEFAULT',
      op: 'SETOP_NONE',
    },
  };
  return engineSql({ version: 0, stmts: [{ stmt: select }] });
}
