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
 *  - `numeric` without precision: PostgreSQL keeps every digit, the engine rounds to 3 decimals;
 *    a literal gets the exact DECIMAL(p, s) of its digits, any other operand is refused.
 *  - Date and time literals: the engine reads `'01/02/03'` as year 1, so only ISO 8601 forms pass.
 *  - round(double): PostgreSQL rounds half to even, the engine away from zero.
 *  - lag/lead with a default: PostgreSQL's result has the common type of value and default,
 *    the engine casts the default to the value's type.
 *  - A function in FROM with an alias and no column names names its one column after the alias.
 *  - date_trunc to century or millennium: PostgreSQL's start at years ending in 1; refused.
 *  - Casts to text write floats, bytea and intervals as PostgreSQL does (postgresText); casts to
 *    varchar(n) cut the text; char(n) (padded in PostgreSQL) is refused; boolean literals take
 *    PostgreSQL's spellings (yes, off, 1, ...).
 *  - generate_series in a select list: a list in the engine, rows in PostgreSQL (unnest of it).
 *  - octet_length of text: the engine's strlen; to_json of timestamps in ISO form with a T.
 */
import { deparseSync } from 'pgsql-deparser';
import type { ParseResult } from '@pgsql/types';
import { badRequest } from '../../errors.js';
import { fieldNames, isObject, type Json } from '../front/ast.js';
import { dateTimeParse, dateTimeText } from './datetime-format.js';
import { call, int, op, stringConst } from './syntax-nodes.js';

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
  const guarded = { CaseExpr: { args: [{ CaseWhen: { expr: isZero, result: failure } }], defresult: divisor } };
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

/** Nodes written here that are the engine's own already (not to be rewritten again). */
const written = new WeakSet<object>();

const notAsPostgres = (what: string, hint: string) => badRequest(`${what} is not supported by vdb's engine.`, hint, 'Not available');

/** The value of a literal (A_Const) as text when it is a number or a string, else null. */
function literalText(node: unknown): string | null {
  const constant = isObject(node) && isObject(node.A_Const) ? node.A_Const : null;
  if (!constant) return null;
  if (isObject(constant.ival)) return String(constant.ival.ival ?? 0);
  if (isObject(constant.fval)) return String(constant.fval.fval);
  if (isObject(constant.sval)) return String(constant.sval.sval ?? '');
  return null;
}

/** The exact DECIMAL(p, s) of a number written as text, or null when it is not a plain number. */
function decimalOf(text: string): { precision: number; scale: number } | null {
  const match = /^\s*[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(text);
  if (!match || (!match[1] && !match[2])) return null;
  const exponent = Number(match[3] ?? 0);
  const digits = `${match[1] ?? ''}${match[2] ?? ''}`;
  const scale = Math.max(0, (match[2] ?? '').length - exponent);
  const integerDigits = Math.max(0, digits.replace(/^0+/, '').length - (match[2] ?? '').length + exponent);
  // At least one integer digit: the engine writes DECIMAL(5,5) as '.09561'.
  return { precision: Math.max(1, integerDigits) + scale, scale };
}

const typeNameOf = (typeName: unknown): string =>
  isObject(typeName)
    ? fieldNames(typeName.names)
        .filter((part) => part !== 'pg_catalog')
        .join('.')
        .toLowerCase()
    : '';

/**
 * Text the engine reads as another value than PostgreSQL does (dates in other orders, numbers
 * with exponents as integers): only the forms both read alike pass, as literals and as text
 * cast while the statement runs. The patterns are whole-text regular expressions of both sides.
 */
const TEXT_INPUT: Array<{ types: ReadonlySet<string>; pattern: RegExp; why: string; hint: string }> = [
  {
    types: new Set(['date', 'timestamp', 'timestamptz']),
    pattern: /^\s*(\d{4,}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*(Z|[+-]\d{1,2}(:?\d{2})?)?|[+-]?infinity)\s*$/,
    why: 'only ISO 8601 forms are read as PostgreSQL reads them',
    hint: "write dates as 'YYYY-MM-DD', e.g. DATE '1999-01-08'.",
  },
  {
    types: new Set(['time', 'timetz']),
    pattern: /^\s*\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{1,2}(:?\d{2})?)?\s*$/,
    why: 'only ISO 8601 forms are read as PostgreSQL reads them',
    hint: "write times as 'HH:MM:SS'.",
  },
  {
    types: new Set(['int2', 'int4', 'int8']),
    pattern: /^\s*[+-]?\d+\s*$/,
    why: 'PostgreSQL reads only digits as an integer',
    hint: 'cast to numeric first for other forms, e.g. CAST(CAST(x AS numeric(20, 0)) AS bigint).',
  },
];
/** A cast as the engine must write it to give PostgreSQL's value, or null when it needs nothing. */
function checkedCast(cast: Json): Json | null {
  const type = typeNameOf(cast.typeName);
  const typmods = isObject(cast.typeName) ? cast.typeName.typmods : undefined;
  const arrayBounds = isObject(cast.typeName) ? cast.typeName.arrayBounds : undefined;
  const literal = literalText(cast.arg);
  if (type === 'numeric' && !typmods && !arrayBounds) {
    const exact = literal === null ? null : decimalOf(literal);
    if (!exact || exact.precision > 38) {
      throw notAsPostgres(
        'numeric without precision and scale over an expression (the engine would round it to 3 decimals)',
        'Give the precision and scale, e.g. CAST(x AS numeric(20, 6)), or cast to double precision.',
      );
    }
    return {
      TypeCast: {
        ...cast,
        typeName: { ...(cast.typeName as Json), typmods: [int(exact.precision), int(exact.scale)] },
      },
    };
  }
  if (arrayBounds && literal !== null && isObject(cast.arg) && isObject(cast.arg.A_Const) && isObject(cast.arg.A_Const.sval)) {
    return arrayLiteral(literal, cast);
  }
  if (type === 'bpchar' && !arrayBounds) {
    throw notAsPostgres('char(n) (PostgreSQL pads it with spaces and ignores them in comparisons)', 'Use varchar(n) or text.');
  }
  if (type === 'varchar' && Array.isArray(typmods) && typmods.length === 1 && !arrayBounds) {
    // An explicit cast to varchar(n) cuts the text to n characters in PostgreSQL.
    return { TypeCast: { arg: call('left', [asVarchar(cast.arg), typmods[0]]), typeName: cast.typeName } };
  }
  if (
    type === 'bool' &&
    literal !== null &&
    !arrayBounds &&
    isObject(cast.arg) &&
    isObject(cast.arg.A_Const) &&
    isObject(cast.arg.A_Const.sval)
  ) {
    const value = booleanOf(literal);
    if (value === null) throw badRequest(`invalid input syntax for type boolean: "${literal}"`, 'Use true/false, yes/no, on/off or 1/0.');
    return { TypeCast: { arg: stringConst(String(value)), typeName: cast.typeName } };
  }
  if (TEXT_TYPES.has(type) && !typmods && !arrayBounds && literal === null) {
    const written = postgresText(cast.arg, 'true');
    if (written) return { TypeCast: { arg: written, typeName: cast.typeName } };
  }
  const input = arrayBounds ? undefined : TEXT_INPUT.find((rule) => rule.types.has(type));
  if (!input) return null;
  const text = isObject(cast.arg) && isObject(cast.arg.A_Const) && isObject(cast.arg.A_Const.sval) ? literal : null;
  if (text !== null) {
    if (!input.pattern.test(text)) throw notAsPostgres(`The ${type} input '${text}' (${input.why})`, input.hint);
    return null;
  }
  if (literal !== null || isVolatile(cast.arg)) return null;
  // Text that reaches the cast while the statement runs is checked the same way, in the engine.
  const wrong = {
    BoolExpr: {
      boolop: 'AND_EXPR',
      args: [
        typeIs(cast.arg, ['VARCHAR']),
        { BoolExpr: { boolop: 'NOT_EXPR', args: [call('regexp_full_match', [asVarchar(cast.arg), stringConst(input.pattern.source)])] } },
      ],
    },
  };
  const failure = call('error', [stringConst(`${type} input not read as PostgreSQL reads it (${input.why}); ${input.hint}`)]);
  const checked = { ...cast };
  written.add(checked);
  return { CaseExpr: { args: [{ CaseWhen: { expr: wrong, result: failure } }], defresult: { TypeCast: checked } } };
}

const TYPE_NAMES_OF_FLOATS = ['DOUBLE', 'FLOAT'];

/**
 * `round(x)`: half to even for floating-point x, as PostgreSQL's rint. Written as a correction
 * of the engine's round (half away from zero) so that a numeric x keeps round's own type.
 */
function roundCall(args: unknown[]): Json {
  const [value] = args;
  const isFloat = {
    A_Expr: {
      kind: 'AEXPR_IN',
      name: [{ String: { sval: '=' } }],
      lexpr: call('typeof', [value]),
      rexpr: { List: { items: TYPE_NAMES_OF_FLOATS.map(stringConst) } },
    },
  };
  const truncated = call('trunc', [value]);
  const half = op('=', call('abs', [op('-', value, truncated)]), { A_Const: { fval: { fval: '0.5' } } });
  const evenBelow = op('=', call('mod', [truncated, int(2)]), int(0));
  const correction = {
    CaseExpr: {
      args: [{ CaseWhen: { expr: { BoolExpr: { boolop: 'AND_EXPR', args: [isFloat, half, evenBelow] } }, result: call('sign', [value]) } }],
      defresult: int(0),
    },
  };
  return op('-', engineCall('round', [value]), correction);
}

/** `lag(x, n, d)` over the common type of x and d, as PostgreSQL types it (anycompatible). */
function withDefaultType(fc: Json): Json {
  const [value, offset, fallback] = fc.args as unknown[];
  const common = {
    CaseExpr: { args: [{ CaseWhen: { expr: { A_Const: { boolval: { boolval: false } } }, result: fallback } }], defresult: value },
  };
  const typed = { ...fc, args: [common, offset, fallback] };
  written.add(typed);
  return { FuncCall: typed };
}

/** Calls whose value changes from one evaluation to the next: never duplicated by a rewrite. */
const VOLATILE = new Set(['random', 'gen_random_uuid', 'uuidv4', 'uuidv7']);
const isVolatile = (node: unknown): boolean =>
  Array.isArray(node)
    ? node.some(isVolatile)
    : isObject(node) &&
      ((isObject(node.FuncCall) && VOLATILE.has(fieldNames(node.FuncCall.funcname).join('.').toLowerCase())) ||
        Object.values(node).some(isVolatile));

const typeIs = (value: unknown, names: string[]) => ({
  A_Expr: {
    kind: 'AEXPR_IN',
    name: [{ String: { sval: '=' } }],
    lexpr: call('typeof', [value]),
    rexpr: { List: { items: names.map(stringConst) } },
  },
});
/** The engine's own cast to text (not rewritten again). */
const asVarchar = (value: unknown) => {
  const cast = { arg: value, typeName: { names: [{ String: { sval: 'varchar' } }] } };
  written.add(cast);
  return { TypeCast: cast };
};

/**
 * `value` as text the way PostgreSQL writes it, where the engine writes it otherwise: floats
 * without the engine's ".0" (2, not 2.0) and NaN/Infinity spelled out; bytea as \x hex;
 * intervals with "mon(s)"; booleans as t/f where PostgreSQL uses the type's output (concat);
 * arrays refused (PostgreSQL writes {1,2}). Decided
 * by the value's type in the engine; null when `value` cannot be duplicated.
 */
function postgresText(value: unknown, booleans: 'true' | 't'): Json | null {
  if (isVolatile(value)) return null;
  const float = { TypeCast: { arg: asVarchar(value), typeName: { names: [{ String: { sval: 'double' } }] } } };
  const floatText = {
    CaseExpr: {
      args: [
        { CaseWhen: { expr: call('isnan', [float]), result: stringConst('NaN') } },
        { CaseWhen: { expr: op('=', float, stringConst('inf')), result: stringConst('Infinity') } },
        { CaseWhen: { expr: op('=', float, stringConst('-inf')), result: stringConst('-Infinity') } },
        {
          CaseWhen: {
            expr: {
              BoolExpr: {
                boolop: 'AND_EXPR',
                args: [op('=', float, call('trunc', [float])), op('<', call('abs', [float]), { A_Const: { fval: { fval: '1e15' } } })],
              },
            },
            result: asVarchar({ TypeCast: { arg: float, typeName: { names: [{ String: { sval: 'bigint' } }] } } }),
          },
        },
      ],
      defresult: asVarchar(float),
    },
  };
  const cases: unknown[] = [
    { CaseWhen: { expr: typeIs(value, TYPE_NAMES_OF_FLOATS), result: floatText } },
    {
      CaseWhen: {
        expr: op('~~', call('typeof', [value]), stringConst('%[]')),
        result: call('error', [
          stringConst("arrays as text are not supported by vdb's engine (PostgreSQL writes them as {1,2}); use array_to_string"),
        ]),
      },
    },
  ];
  // bytea in PostgreSQL's hex output; intervals with its month unit spelling (1 mon, 9 mons).
  const bytes = { TypeCast: { arg: asVarchar(value), typeName: { names: [{ String: { sval: 'blob' } }] } } };
  cases.push({ CaseWhen: { expr: typeIs(value, ['BLOB']), result: op('||', stringConst('\\x'), call('lower', [call('hex', [bytes])])) } });
  const months = call('regexp_replace', [
    call('replace', [
      call('replace', [asVarchar(value), stringConst(' months'), stringConst(' mons')]),
      stringConst(' month'),
      stringConst(' mon'),
    ]),
    stringConst(INTERVAL_MINUS_ONE.pattern),
    stringConst(INTERVAL_MINUS_ONE.replacement),
    stringConst('g'),
  ]);
  cases.push({ CaseWhen: { expr: typeIs(value, ['INTERVAL']), result: months } });
  if (booleans === 't') cases.push({ CaseWhen: { expr: typeIs(value, ['BOOLEAN']), result: call('left', [asVarchar(value), int(1)]) } });
  return { CaseExpr: { args: cases, defresult: asVarchar(value) } };
}

const TEXT_TYPES = new Set(['text', 'varchar']);

/** PostgreSQL writes a unit of -1 in the plural (-1 days); the engine in the singular. */
export const INTERVAL_MINUS_ONE = { pattern: '(^|\\s)-1 (year|mon|day)(\\s|$)', replacement: '\\1-1 \\2s\\3' };

/**
 * A one-dimensional array written as PostgreSQL text ('{1,2,NULL}', '{"a b",c}') as an ARRAY of
 * casts of its elements; other forms (nested, with bounds) are refused.
 */
function arrayLiteral(text: string, cast: Json): Json {
  const refuse = () =>
    notAsPostgres(`The array input '${text}' in this form`, "Write a one-dimensional array such as '{1,2,3}', or ARRAY[1, 2, 3].");
  const body = /^\s*\{(.*)\}\s*$/s.exec(text)?.[1];
  if (body === undefined || /[{}]/.test(body)) throw refuse();
  const elements: Array<string | null> = [];
  const item = /\s*(?:"((?:[^"\\]|\\.)*)"|([^,"]*?))\s*(,|$)/gy;
  if (body.trim() !== '') {
    for (let match = item.exec(body); match; match = item.exec(body)) {
      if (match[1] !== undefined) elements.push(match[1].replace(/\\(.)/g, '$1'));
      else elements.push(match[2]!.toUpperCase() === 'NULL' ? null : match[2]!);
      if (match[3] === '') break;
    }
    if (item.lastIndex !== body.length && item.lastIndex !== 0) throw refuse();
  }
  const typeName = cast.typeName as Json;
  const elementType = { ...typeName, arrayBounds: undefined };
  const items = elements.map((element) =>
    element === null
      ? { TypeCast: { arg: { A_Const: { isnull: true } }, typeName: elementType } }
      : { TypeCast: { arg: stringConst(element), typeName: elementType } },
  );
  return { TypeCast: { arg: { A_ArrayExpr: items.length ? { elements: items } : {} }, typeName } };
}

/** PostgreSQL's boolean input: true/false, yes/no, on/off, 1/0 and unique prefixes, any case. */
function booleanOf(text: string): boolean | null {
  const word = text.trim().toLowerCase();
  if (!word) return null;
  if (word === '1' || ['true', 'yes'].some((w) => w.startsWith(word)) || (word.length > 1 && 'on'.startsWith(word))) return true;
  if (word === '0' || ['false', 'no'].some((w) => w.startsWith(word)) || (word.length > 1 && 'off'.startsWith(word))) return false;
  return null;
}

/** Calls `visit` with every FuncCall body directly in `items` (the functions of a RangeFunction). */
function walkCalls(items: unknown, visit: (fc: Json) => void): void {
  if (Array.isArray(items)) return items.forEach((item) => walkCalls(item, visit));
  if (!isObject(items)) return;
  if (isObject(items.FuncCall)) return visit(items.FuncCall);
  if (isObject(items.List)) walkCalls(items.List.items, visit);
}

/** Functions of FROM that return one column: an alias without column names names that column. */
const ONE_COLUMN_FUNCTIONS = new Set(['generate_series', 'unnest']);

function namedFunctionColumn(rangeFunction: Json): Json | null {
  const alias = isObject(rangeFunction.alias) ? rangeFunction.alias : null;
  if (!alias || alias.colnames || rangeFunction.ordinality || rangeFunction.is_rowsfrom) return null;
  const items = Array.isArray(rangeFunction.functions) ? rangeFunction.functions : [];
  if (items.length !== 1) return null;
  const first = (isObject(items[0]) && isObject(items[0].List) ? items[0].List.items : items[0]) as unknown;
  const fn = Array.isArray(first) ? first[0] : first;
  const name = isObject(fn) && isObject(fn.FuncCall) ? fieldNames(fn.FuncCall.funcname).join('.').toLowerCase() : '';
  const args = isObject(fn) && isObject(fn.FuncCall) && Array.isArray(fn.FuncCall.args) ? fn.FuncCall.args : [];
  if (!ONE_COLUMN_FUNCTIONS.has(name) || (name === 'unnest' && args.length !== 1)) return null;
  return { ...rangeFunction, alias: { ...alias, colnames: [{ String: { sval: alias.aliasname } }] } };
}

const engineCall = (name: string, args: unknown[]) => {
  const made = call(name, args);
  written.add(made.FuncCall);
  return made;
};

/** Operators the engine lacks or reads otherwise: # (xor), |/ and ||/ (roots), BETWEEN SYMMETRIC. */
function postgresOperator(expr: Json): Json | null {
  const name = fieldNames(expr.name).join('');
  if (expr.kind === 'AEXPR_OP' && name === '#' && expr.lexpr) return call('xor', [expr.lexpr, expr.rexpr]);
  if (expr.kind === 'AEXPR_OP' && !expr.lexpr && (name === '|/' || name === '||/'))
    return call(name === '|/' ? 'sqrt' : 'cbrt', [expr.rexpr]);
  const symmetric = expr.kind === 'AEXPR_BETWEEN_SYM' || expr.kind === 'AEXPR_NOT_BETWEEN_SYM';
  const bounds = isObject(expr.rexpr) && isObject(expr.rexpr.List) ? expr.rexpr.List.items : expr.rexpr;
  if (symmetric && Array.isArray(bounds) && bounds.length === 2 && !isVolatile(bounds)) {
    const [low, high] = bounds as unknown[];
    const least = { MinMaxExpr: { op: 'IS_LEAST', args: [low, high] } };
    const greatest = { MinMaxExpr: { op: 'IS_GREATEST', args: [low, high] } };
    const kind = expr.kind === 'AEXPR_BETWEEN_SYM' ? 'AEXPR_BETWEEN' : 'AEXPR_NOT_BETWEEN';
    return {
      A_Expr: {
        ...expr,
        kind,
        name: [{ String: { sval: kind === 'AEXPR_BETWEEN' ? 'BETWEEN' : 'NOT BETWEEN' } }],
        rexpr: { List: { items: [least, greatest] } },
      },
    };
  }
  return null;
}

/** Function-style casts of PostgreSQL (float8(3), int4('7'), text(x)): the type's cast. */
const CAST_FUNCTIONS = new Set(['float8', 'float4', 'int2', 'int4', 'int8', 'text', 'bool', 'date']);

/**
 * to_char of a date or timestamp, to_date and to_timestamp with a constant template, written
 * with the engine's strftime/strptime (datetime-format.ts); anything else is refused.
 */
function dateTimeCall(name: string, args: unknown[]): Json {
  const template =
    args.length === 2 && isObject(args[1]) && isObject(args[1].A_Const) && isObject(args[1].A_Const.sval) ? literalText(args[1]) : null;
  const hint = 'vdb translates constant date/time templates (YYYY, MM, DD, HH24, MI, SS, Mon, Month, Day, ...); see docs/sql.md.';
  if (template === null) throw notAsPostgres(`${name} without a constant template`, hint);
  if (name === 'to_char') {
    const [value] = args;
    if (isObject(value) && isObject(value.A_Const))
      throw notAsPostgres('to_char of a number or text', 'Format numbers with round() and casts, or with concat.');
    const text = isVolatile(value) ? null : dateTimeText(value, template);
    if (text === null) throw notAsPostgres(`The to_char template '${template}'`, hint);
    return text as Json;
  }
  const format = dateTimeParse(template);
  if (format === null) throw notAsPostgres(`The ${name} template '${template}'`, hint);
  const parsed = engineCall('strptime', [args[0], stringConst(format)]);
  return { TypeCast: { arg: parsed, typeName: { names: [{ String: { sval: name === 'to_date' ? 'date' : 'timestamptz' } }] } } };
}

/** quote_literal's text: in quotes, quotes doubled; with backslashes, PostgreSQL's E'' form. */
function quotedLiteral(text: unknown): Json {
  const doubled = call('replace', [text, stringConst("'"), stringConst("''")]);
  const escaped = call('replace', [doubled, stringConst('\\'), stringConst('\\\\')]);
  const hasBackslash = op('>', call('strpos', [text, stringConst('\\')]), int(0));
  return {
    CaseExpr: {
      // || keeps a NULL NULL (concat would make it '').
      args: [{ CaseWhen: { expr: hasBackslash, result: op('||', op('||', stringConst("E'"), escaped), stringConst("'")) } }],
      defresult: op('||', op('||', stringConst("'"), doubled), stringConst("'")),
    },
  };
}

/** A value as format('%s') and quote_literal see it: PostgreSQL's text of the value. */
function textOf(value: unknown, booleans: 'true' | 't'): unknown {
  if (isObject(value) && isObject(value.A_Const)) {
    const constant = value.A_Const;
    if (isObject(constant.boolval)) return stringConst(constant.boolval.boolval ? booleans : booleans === 't' ? 'f' : 'false');
    return isObject(constant.sval) ? value : asVarchar(value);
  }
  return postgresText(value, booleans) ?? asVarchar(value);
}

/** format() with a constant template of %s, %L, %% and positions (%2$s); null for other templates. */
function formatCall(args: unknown[]): Json | null {
  const template = isObject(args[0]) && isObject(args[0].A_Const) && isObject(args[0].A_Const.sval) ? literalText(args[0]) : null;
  if (template === null || args.some(isVolatile)) return null;
  const pieces: unknown[] = [];
  let next = 1;
  const spec = /%(?:(\d+)\$)?([sL%])|%/g;
  let last = 0;
  for (let match = spec.exec(template); match; match = spec.exec(template)) {
    if (match.index > last) pieces.push(stringConst(template.slice(last, match.index)));
    last = spec.lastIndex;
    if (match[2] === '%') {
      pieces.push(stringConst('%'));
      continue;
    }
    if (!match[2]) return null; // width, flags or %I: not translated
    const position = match[1] ? Number(match[1]) : next;
    next = position + 1;
    const value = args[position];
    if (value === undefined) throw badRequest('too few arguments for format()', 'Give one argument per %s or %L.');
    if (match[2] === 's') pieces.push(textOf(value, 't'));
    else pieces.push({ CoalesceExpr: { args: [quotedLiteral(textOf(value, 'true')), stringConst('NULL')] } });
  }
  if (last < template.length) pieces.push(stringConst(template.slice(last)));
  return pieces.length === 0 ? stringConst('') : call('concat', pieces);
}

/** Text functions PostgreSQL has that the engine lacks or answers otherwise (null: not one of them). */
function textFunction(name: string, args: unknown[]): Json | null {
  if (name === 'format') {
    const formatted = formatCall(args);
    if (!formatted)
      throw notAsPostgres('format() with a template other than constant %s, %L and %%', 'Use concat(), or format with %s and %L only.');
    return formatted;
  }
  if (name === 'quote_literal' && args.length === 1 && !isVolatile(args[0])) return quotedLiteral(textOf(args[0], 'true'));
  if (name === 'to_hex' && args.length === 1 && !isVolatile(args[0])) {
    // PostgreSQL writes a negative integer in its own width (8 digits), the engine in 16.
    const [value] = args;
    const hex = call('lower', [engineCall('to_hex', [value])]);
    const narrowNegative = {
      BoolExpr: { boolop: 'AND_EXPR', args: [op('<', value, int(0)), typeIs(value, ['INTEGER', 'SMALLINT', 'TINYINT'])] },
    };
    return { CaseExpr: { args: [{ CaseWhen: { expr: narrowNegative, result: call('right', [hex, int(8)]) } }], defresult: hex } };
  }
  if ((name === 'encode' || name === 'decode') && args.length === 2) {
    const [value, kind] = args;
    const format = literalText(kind)?.toLowerCase();
    if (name === 'encode' && format === 'hex') return call('lower', [call('hex', [value])]);
    if (name === 'decode' && format === 'hex') return call('unhex', [value]);
    if (name === 'decode' && format === 'base64') return call('from_base64', [value]);
    if (name === 'encode' && format === 'base64' && !isVolatile(value)) {
      // PostgreSQL breaks base64 lines after 76 characters (57 bytes); shorter values read alike.
      const long = op('>', call('octet_length', [value]), int(57));
      const failure = call('error', [
        stringConst('encode(..., base64) of more than 57 bytes is not supported by vdb (PostgreSQL breaks its lines)'),
      ]);
      return { CaseExpr: { args: [{ CaseWhen: { expr: long, result: failure } }], defresult: call('to_base64', [value]) } };
    }
    throw notAsPostgres(
      `${name}(..., ${format ? `'${format}'` : 'a format given by an expression'})`,
      "Use 'hex', or 'base64' for short values.",
    );
  }
  if (name === 'overlay' && (args.length === 3 || args.length === 4) && !isVolatile(args)) {
    const [text, replacement, start, length = call('length', [replacement])] = args;
    return call('concat', [call('left', [text, op('-', start, int(1))]), replacement, call('substr', [text, op('+', start, length)])]);
  }
  // The engine has functions of these names that mean something else: no other form reaches them.
  if (TEXT_FUNCTIONS.has(name)) throw notAsPostgres(`${name} in this form`, 'See docs/sql.md for the forms vdb translates.');
  return null;
}

const TEXT_FUNCTIONS = new Set(['format', 'quote_literal', 'to_hex', 'encode', 'decode', 'overlay']);

/** Calls rewritten for PostgreSQL's meaning (null: as written). */
function postgresCall(fc: Json): Json | null {
  if (written.has(fc)) return null;
  const name = fieldNames(fc.funcname).join('.').toLowerCase();
  const args = Array.isArray(fc.args) ? (fc.args as unknown[]) : [];
  if (name === 'round' && args.length === 1 && !fc.over) return roundCall(args);
  if ((name === 'lag' || name === 'lead') && args.length === 3 && fc.over) return withDefaultType(fc);
  if (CAST_FUNCTIONS.has(name) && args.length === 1)
    return { TypeCast: { arg: args[0], typeName: { names: [{ String: { sval: name } }] } } };
  if ((name === 'lpad' || name === 'rpad') && args.length === 2) return call(name, [...args, stringConst(' ')]);
  if (name === 'octet_length' && args.length === 1) {
    const [value] = args;
    const bytes = { TypeCast: { arg: asVarchar(value), typeName: { names: [{ String: { sval: 'blob' } }] } } };
    return {
      CaseExpr: {
        args: [{ CaseWhen: { expr: typeIs(value, ['BLOB']), result: engineCall('octet_length', [bytes]) } }],
        defresult: call('strlen', [asVarchar(value)]),
      },
    };
  }
  if (name === 'to_json' && args.length === 1 && !isVolatile(args[0])) {
    const [value] = args;
    const iso = call('replace', [asVarchar(value), stringConst(' '), stringConst('T')]);
    return {
      CaseExpr: {
        args: [
          { CaseWhen: { expr: typeIs(value, ['TIMESTAMP']), result: engineCall('to_json', [iso]) } },
          {
            CaseWhen: {
              expr: typeIs(value, ['TIMESTAMP WITH TIME ZONE']),
              result: engineCall('to_json', [op('||', iso, stringConst(':00'))]),
            },
          },
        ],
        defresult: engineCall('to_json', [value]),
      },
    };
  }
  if (name === 'string_to_array' && args.length === 2 && !isVolatile(args[0])) {
    // PostgreSQL: no elements for '', one per character for a NULL delimiter.
    const [text, delimiter] = args;
    const nullDelimiter = isObject(delimiter) && isObject(delimiter.A_Const) && delimiter.A_Const.isnull === true;
    const split = engineCall('string_to_array', [text, nullDelimiter ? stringConst('') : delimiter]);
    const empty = {
      TypeCast: { arg: { A_ArrayExpr: {} }, typeName: { names: [{ String: { sval: 'varchar' } }], arrayBounds: [int(-1)] } },
    };
    return { CaseExpr: { args: [{ CaseWhen: { expr: op('=', text, stringConst('')), result: empty } }], defresult: split } };
  }
  if (name === 'array_length' && args.length === 2) {
    // PostgreSQL has no length for an empty array (NULL), the engine 0.
    return call('nullif', [engineCall('array_length', args), int(0)]);
  }
  if (
    (name === 'date_part' || name === 'extract') &&
    args.length === 2 &&
    literalText(args[0])?.toLowerCase() === 'second' &&
    !isVolatile(args[1])
  ) {
    // PostgreSQL's seconds keep their fraction; the engine's are whole.
    const micros = {
      TypeCast: { arg: engineCall(name, [stringConst('microseconds'), args[1]]), typeName: { names: [{ String: { sval: 'float8' } }] } },
    };
    return op('/', micros, int(1_000_000));
  }
  if (name === 'generate_series' && !fc.over) {
    const series = { ...fc };
    written.add(series);
    return call('unnest', [{ FuncCall: series }]);
  }
  const text = textFunction(name, args);
  if (text) return text;
  if (name === 'to_char' || name === 'to_date' || (name === 'to_timestamp' && args.length === 2)) return dateTimeCall(name, args);
  if (name === 'row_to_json' && args.some((arg) => isObject(arg) && isObject(arg.RowExpr))) {
    throw notAsPostgres(
      'row_to_json of a ROW(...) constructor',
      'Select the values from a subquery with named columns and pass its row: row_to_json(t).',
    );
  }
  if (name === 'concat' || name === 'concat_ws') {
    const texts = args.map((arg, i) =>
      literalText(arg) !== null || (name === 'concat_ws' && i === 0) ? arg : (postgresText(arg, 't') ?? arg),
    );
    const made = { ...fc, args: texts };
    written.add(made);
    return { FuncCall: made };
  }
  if (name === 'date_trunc' && args.length >= 2) {
    const field = literalText(args[0])?.toLowerCase() ?? null;
    if (field === null || field === 'century' || field === 'millennium') {
      throw notAsPostgres(
        `date_trunc to ${field ?? 'a field given by an expression'}`,
        "Truncate to 'year', 'decade', 'quarter', 'month', 'week', 'day', 'hour', 'minute' or 'second', written as a constant.",
      );
    }
  }
  return null;
}

function rewrite(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewrite);
  if (!isObject(value)) return value;
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

/** The engine's SQL for a bound statement tree (which is left unchanged). */
export function engineSql(tree: ParseResult): string {
  // The deparser keeps a trailing ';', which must not end up inside the wrapping queries.
  return deparseSync(rewrite(tree) as ParseResult).replace(/;\s*$/, '');
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
