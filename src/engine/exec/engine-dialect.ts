/**
 * The bound tree written as the engine's SQL. The engine reads PostgreSQL's dialect with a few
 * differences in meaning that are rewritten here, so that it answers as PostgreSQL would:
 *  - LIKE / ILIKE: PostgreSQL escapes with a backslash unless told otherwise; the engine has no
 *    default escape character, so every LIKE gets its escape character spelled out.
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
 *  - Functions and operators the engine lacks or reads otherwise (round, lag/lead defaults,
 *    to_char, format, generate_series in a select list, ...): postgres-functions.ts.
 * What cannot be written to answer as PostgreSQL does is refused with a 400 naming it.
 */
import { deparseSync } from 'pgsql-deparser';
import type { ParseResult } from '@pgsql/types';
import { fieldNames, isObject, type Json } from '../front/ast.js';
import { namedFunctionColumn, postgresCall, postgresOperator, walkCalls } from './postgres-functions.js';
import { checkedCast, typeNameOf } from './postgres-values.js';
import { numericDivisionRefused, sameScaleOrRefused } from './numeric-scales.js';
import { asVarchar, call, int, notAsPostgres, op, stringConst, written } from './syntax-nodes.js';

const LIKE_FUNCTIONS: Record<string, string> = {
  '~~': 'like_escape',
  '!~~': 'not_like_escape',
  '~~*': 'ilike_escape',
  '!~~*': 'not_ilike_escape',
};

function likeCall(expr: Json): Json | null {
  if (expr.kind !== 'AEXPR_LIKE' && expr.kind !== 'AEXPR_ILIKE') return null;
  const op = ((expr.name as Array<{ String?: { sval?: string } }>)?.[0]?.String?.sval ?? '') as string;
  const fn = LIKE_FUNCTIONS[op];
  if (!fn) return null;
  let pattern = expr.rexpr;
  let escape: unknown = stringConst('\\');
  const call = isObject(pattern) && isObject(pattern.FuncCall) ? pattern.FuncCall : null;
  const callName = (call?.funcname as Array<{ String?: { sval?: string } }> | undefined)?.map((n) => n.String?.sval).pop();
  if (call && callName === 'like_escape' && Array.isArray(call.args) && call.args.length === 2) {
    [pattern, escape] = call.args as unknown[];
  }
  return { FuncCall: { funcname: [{ String: { sval: fn } }], args: [expr.lexpr, pattern, escape], funcformat: 'COERCE_EXPLICIT_CALL' } };
}

/** PostgreSQL functions the engine has under another name, with the same arguments. */
const RENAMED: Record<string, string> = { btrim: 'trim', extract: 'date_part' };

const REGEX_OPERATORS: Record<string, { options: string; negated: boolean }> = {
  '~': { options: 's', negated: false },
  '~*': { options: 'si', negated: false },
  '!~': { options: 's', negated: true },
  '!~*': { options: 'si', negated: true },
};

/** `a ~ b` as `regexp_matches(a, b, 's')`, `a !~* b` as `NOT regexp_matches(a, b, 'si')`. */
function regexCall(expr: Json): Json | null {
  const op = (expr.name as Array<{ String?: { sval?: string } }>)?.[0]?.String?.sval ?? '';
  const regex = REGEX_OPERATORS[op];
  if (expr.kind !== 'AEXPR_OP' || !regex || !expr.lexpr) return null;
  const call = {
    FuncCall: {
      funcname: [{ String: { sval: 'regexp_matches' } }],
      args: [expr.lexpr, expr.rexpr, stringConst(regex.options)],
      funcformat: 'COERCE_EXPLICIT_CALL',
    },
  };
  return regex.negated ? { BoolExpr: { boolop: 'NOT_EXPR', args: [call] } } : call;
}

/** `a / b` as `a / CASE WHEN b = 0 THEN error('division by zero') ELSE b END` (and `%`). */
function checkedDivision(expr: Json): Json | null {
  const op = (expr.name as Array<{ String?: { sval?: string } }>)?.[0]?.String?.sval;
  if (expr.kind !== 'AEXPR_OP' || (op !== '/' && op !== '%') || !expr.rexpr) return null;
  const divisor = expr.rexpr;
  const zero = { A_Const: { ival: { ival: 0 } } };
  const failure = {
    FuncCall: { funcname: [{ String: { sval: 'error' } }], args: [stringConst('division by zero')], funcformat: 'COERCE_EXPLICIT_CALL' },
  };
  const isZero = { A_Expr: { kind: 'AEXPR_OP', name: [{ String: { sval: '=' } }], lexpr: divisor, rexpr: zero } };
  const whens: unknown[] = [{ CaseWhen: { expr: isZero, result: failure } }];
  const numeric = op === '/' ? numericDivisionRefused(expr.lexpr, divisor) : null;
  if (numeric) whens.push({ CaseWhen: { expr: numeric.condition, result: numeric.failure } });
  const guarded = { CaseExpr: { args: whens, defresult: divisor } };
  return { A_Expr: { ...expr, rexpr: guarded } };
}

/** PostgreSQL's substr(s, start[, length]) in the engine's terms (positions before 1 count, but show nothing). */
function substrCall(fc: Json): Json | null {
  const name = fieldNames(fc.funcname).join('.').toLowerCase();
  const args = Array.isArray(fc.args) ? fc.args : [];
  if ((name !== 'substr' && name !== 'substring') || (args.length !== 2 && args.length !== 3)) return null;
  const [text, start, length] = args as unknown[];
  const from = { MinMaxExpr: { op: 'IS_GREATEST', args: [start, int(1)] } };
  if (length === undefined) return call('substr', [text, from]);
  // The characters of [start, start + length) that lie at positions 1 and after.
  const kept = { MinMaxExpr: { op: 'IS_GREATEST', args: [op('-', op('+', start, length), from), int(0)] } };
  const negative = op('<', length, int(0));
  const failure = call('error', [stringConst('negative substring length not allowed')]);
  return call('substr', [text, from, { CaseExpr: { args: [{ CaseWhen: { expr: negative, result: failure } }], defresult: kept } }]);
}

/**
 * `generate_series(1, 3) AS x` in FROM, over integer literals: PostgreSQL's series is integer
 * (int4), the engine's bigint; written as a subquery that casts it.
 */
function integerSeries(rangeFunction: Json): Json | null {
  if (rangeFunction.ordinality || rangeFunction.is_rowsfrom || rangeFunction.lateral) return null;
  const items = Array.isArray(rangeFunction.functions) ? rangeFunction.functions : [];
  const first = items.length === 1 && isObject(items[0]) && isObject(items[0].List) ? items[0].List.items : null;
  const fn = Array.isArray(first) && first.length >= 1 && isObject(first[0]) && isObject(first[0].FuncCall) ? first[0].FuncCall : null;
  if (!fn || fieldNames(fn.funcname).join('.').toLowerCase() !== 'generate_series') return null;
  const args = Array.isArray(fn.args) ? fn.args : [];
  if (!args.every((arg) => isObject(arg) && isObject(arg.A_Const) && isObject(arg.A_Const.ival))) return null;
  const alias = isObject(rangeFunction.alias) ? rangeFunction.alias : { aliasname: 'generate_series' };
  const names = Array.isArray(alias.colnames) && alias.colnames.length > 0 ? alias.colnames : [{ String: { sval: alias.aliasname } }];
  if (names.length !== 1) return null;
  const rows = { ...fn };
  written.add(rows);
  const value = { TypeCast: { arg: call('unnest', [{ FuncCall: rows }]), typeName: { names: [{ String: { sval: 'int4' } }] } } };
  written.add(value.TypeCast);
  const select = { SelectStmt: { targetList: [{ ResTarget: { val: value } }], limitOption: 'LIMIT_OPTION_DEFAULT', op: 'SETOP_NONE' } };
  return { RangeSubselect: { subquery: select, alias: { ...alias, colnames: names } } };
}

/** generate_series of dates in FROM: PostgreSQL's rows are timestamp with time zone there, the engine's timestamp. */
function refuseDateSeries(rangeFunction: Json): void {
  walkCalls(rangeFunction.functions, (fc) => {
    const args = Array.isArray(fc.args) ? fc.args : [];
    if (fieldNames(fc.funcname).join('.').toLowerCase() !== 'generate_series' || args.length === 0) return;
    const date = isObject(args[0]) && isObject(args[0].TypeCast) && typeNameOf(args[0].TypeCast.typeName) === 'date';
    if (date) {
      throw notAsPostgres(
        'generate_series() of dates',
        'PostgreSQL answers timestamp with time zone there, the engine timestamp; cast the bounds: generate_series(x::timestamp, y::timestamp, interval)',
      );
    }
  });
}

/** grouping(): PostgreSQL's is an integer (int4), the engine's a bigint. */
const groupingCalls = new WeakSet<object>();

function rewrite(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewrite);
  if (!isObject(value)) return value;
  const select = isObject(value.SelectStmt) ? value.SelectStmt : null;
  if (select && select.op === 'SETOP_NONE' && !select.valuesLists && !(Array.isArray(select.targetList) && select.targetList.length > 0)) {
    throw notAsPostgres('A select list without columns (SELECT FROM ...)', 'Select at least one column, e.g. SELECT 1 FROM ...');
  }
  if (isObject(value.GroupingFunc) && !groupingCalls.has(value.GroupingFunc)) {
    groupingCalls.add(value.GroupingFunc);
    const typed = { arg: value, typeName: { names: [{ String: { sval: 'int4' } }] } };
    written.add(typed);
    return { TypeCast: { ...typed, arg: rewrite(value) } };
  }
  if (isObject(value.TypeCast) && !written.has(value.TypeCast)) {
    const cast = checkedCast(value.TypeCast);
    if (cast && isObject(cast.TypeCast)) return { TypeCast: { ...cast.TypeCast, arg: rewrite(cast.TypeCast.arg) } };
    if (cast) return Object.fromEntries(Object.entries(cast).map(([k, v]) => [k, rewrite(v)]));
  }
  if (isObject(value.RangeFunction)) {
    // Functions of FROM are table functions already (generate_series gives rows there).
    walkCalls(value.RangeFunction.functions, (fc) => {
      if (fieldNames(fc.funcname).join('.').toLowerCase() === 'generate_series') written.add(fc);
    });
    refuseDateSeries(value.RangeFunction);
    const series = integerSeries(value.RangeFunction);
    if (series) return rewrite(series);
    const named = namedFunctionColumn(value.RangeFunction);
    if (named) return { RangeFunction: rewrite(named) };
  }
  if (isObject(value.FuncCall)) {
    const rewritten = postgresCall(value.FuncCall);
    if (rewritten) return Object.fromEntries(Object.entries(rewritten).map(([k, v]) => [k, rewrite(v)]));
  }
  if (isObject(value.FuncCall) && !value.FuncCall.over) {
    const substr = substrCall(value.FuncCall);
    if (substr) return { FuncCall: { ...(substr.FuncCall as Json), args: rewrite((substr.FuncCall as Json).args) } };
  }
  const renamed = isObject(value.FuncCall) ? RENAMED[fieldNames(value.FuncCall.funcname).join('.').toLowerCase()] : undefined;
  if (isObject(value.FuncCall) && renamed) {
    return {
      FuncCall: {
        ...value.FuncCall,
        funcname: [{ String: { sval: renamed } }],
        funcformat: 'COERCE_EXPLICIT_CALL',
        args: rewrite(value.FuncCall.args),
      },
    };
  }
  if (isObject(value.A_Expr)) {
    const translated = postgresOperator(value.A_Expr);
    if (translated) return rewrite(translated);
  }
  if (isObject(value.A_Expr)) {
    const call = likeCall(value.A_Expr) ?? regexCall(value.A_Expr);
    if (call) return rewrite(call);
    const division = isObject(value.A_Expr.rexpr) ? checkedDivision(value.A_Expr) : null;
    if (division) {
      const inner = division.A_Expr as Json;
      return { A_Expr: { ...inner, lexpr: rewrite(inner.lexpr), rexpr: rewrite(inner.rexpr) } };
    }
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]));
}

const mapValues = (node: Json, map: (v: unknown) => unknown): Json => {
  let changed = false;
  const entries = Object.entries(node).map(([k, v]) => {
    const mapped = map(v);
    changed ||= mapped !== v;
    return [k, mapped];
  });
  return changed ? Object.fromEntries(entries) : node;
};

/** A VALUES list whose column mixes numeric scales, refused (the first row's value carries the check). */
function guardValues(subquery: unknown): unknown {
  const select = isObject(subquery) && isObject(subquery.SelectStmt) ? subquery.SelectStmt : null;
  if (!select || !Array.isArray(select.valuesLists) || select.valuesLists.length < 2) return subquery;
  const rows = select.valuesLists.map((row) =>
    isObject(row) && isObject(row.List) && Array.isArray(row.List.items) ? row.List.items : [],
  );
  const firstRow = rows[0]!.map((item, i) =>
    sameScaleOrRefused(
      item as Json,
      rows.map((row) => row[i]),
      'A VALUES column',
    ),
  );
  return { SelectStmt: { ...select, valuesLists: [{ List: { items: firstRow } }, ...select.valuesLists.slice(1)] } };
}

/**
 * The user's COALESCE, GREATEST/LEAST and VALUES lists in FROM or WITH over numeric values of
 * different scales, refused (numeric-scales.ts); a CASE of NULLs only typed as text. A pass of
 * its own before the rewrite, which writes COALESCEs and CASEs of its own. (CASE itself is not
 * checked: vdb's column masks are CASEs over the masked column and its replacement.)
 */
function guardScales(value: unknown): unknown {
  if (Array.isArray(value)) {
    const mapped = value.map(guardScales);
    return mapped.some((v, i) => v !== value[i]) ? mapped : value;
  }
  if (!isObject(value)) return value;
  const node = mapValues(value, guardScales);
  if (isObject(node.CoalesceExpr) && Array.isArray(node.CoalesceExpr.args))
    return sameScaleOrRefused(node, node.CoalesceExpr.args, 'COALESCE');
  if (isObject(node.MinMaxExpr) && Array.isArray(node.MinMaxExpr.args))
    return sameScaleOrRefused(node, node.MinMaxExpr.args, node.MinMaxExpr.op === 'IS_GREATEST' ? 'GREATEST' : 'LEAST');
  // VALUES in FROM or WITH only: an INSERT's VALUES take the column's type (and scale).
  if (isObject(node.RangeSubselect))
    return { RangeSubselect: { ...node.RangeSubselect, subquery: guardValues(node.RangeSubselect.subquery) } };
  if (isObject(node.CommonTableExpr))
    return { CommonTableExpr: { ...node.CommonTableExpr, ctequery: guardValues(node.CommonTableExpr.ctequery) } };
  if (isObject(node.CaseExpr) && Array.isArray(node.CaseExpr.args)) {
    const results = node.CaseExpr.args.map((when) => (isObject(when) && isObject(when.CaseWhen) ? when.CaseWhen.result : null));
    // Only NULLs: PostgreSQL's CASE is text then, the engine's an integer.
    const isNull = (v: unknown) => v === undefined || (isObject(v) && isObject(v.A_Const) && v.A_Const.isnull === true);
    if (results.every(isNull) && isNull(node.CaseExpr.defresult)) return asVarchar(node);
  }
  return node;
}

/** The engine's SQL for a bound statement tree (which is left unchanged). */
export function engineSql(tree: ParseResult): string {
  // The deparser keeps a trailing ';', which must not end up inside the wrapping queries.
  return deparseSync(rewrite(guardScales(tree)) as ParseResult).replace(/;\s*$/, '');
}

/** `SELECT * FROM [schema.]relation AS alias WHERE condition`, in the engine's SQL. */
export function filteredSql(relation: { schema?: string; name: string }, alias: string, condition: Json): string {
  const select = {
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
  return engineSql({ version: 0, stmts: [{ stmt: select as never }] } as ParseResult);
}
