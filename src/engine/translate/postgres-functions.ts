/**
 * PostgreSQL's functions and operators in the engine: calls the engine lacks, or has with another
 * meaning, written so that they answer as in PostgreSQL (round, lag/lead defaults, to_char,
 * format, ...), or refused. Used by engine-dialect.ts's rewrite.
 */
import { narrowIntegers, probedType } from './probed-types.js';
import { literalNumberText, numberTextCall, toCharKind } from './number-text.js';
import { regression, REGRESSIONS, VARIANCES, youngsCramer } from './youngs-cramer.js';
import { regexSplit } from './regex-split.js';
import { regexpMatchesRows, regexpSplitRows } from './regex-matches.js';
import { scaleCall, widthBucketCall } from './numeric-functions.js';
import { pgTypeofCall } from './type-names.js';
import { matchesEmptyAndMore, sameMatchRegex } from './posix-regex.js';
import { badRequest } from '../../errors.js';
import type { A_Expr, FuncCall, Node, RangeFunction, TypeCast } from '@pgsql/types';
import { asKind, fieldNames, nameNode, exprIs } from '../tree/ast.js';
import { dateTimeParse, dateTimeText } from './datetime-format.js';
import { floatOnlyArgument, numericArgumentsRefused, sameScaleOrRefused } from './numeric-scales.js';
import { functionFacts, functionsWith, hasFact } from '../tree/functions.js';
import { DATE_TIME_TYPES, postgresDateTimeText, postgresText, quotedIdent, quotedLiteral, textOf, typeNameOf } from './postgres-values.js';
import {
  asVarchar,
  call,
  calledName,
  cast,
  engineCall,
  evaluatedOnce,
  int,
  isIntegerConst,
  isNullConst,
  isStringConst,
  isVolatile,
  literalText,
  notAsPostgres,
  op,
  stringConst,
  TYPE_NAMES_OF_FLOATS,
  typeIs,
  typeNamed,
  written,
} from '../tree/syntax-nodes.js';

/**
 * `round(x)`: half to even for floating-point x, as PostgreSQL's rint. Written as a correction
 * of the engine's round (half away from zero) so that a numeric x keeps round's own type.
 */
function roundCall(argument: Node): Node {
  return evaluatedOnce(argument, roundOf);
}

function roundOf(value: Node): Node {
  const isFloat = typeIs(value, TYPE_NAMES_OF_FLOATS);
  const truncated = call('trunc', [value]);
  const half = op('=', call('abs', [op('-', value, truncated)]), { A_Const: { fval: { fval: '0.5' } } });
  const evenBelow = op('=', call('mod', [truncated, int(2)]), int(0));
  const correction: Node = {
    CaseExpr: {
      args: [
        { CaseWhen: { expr: { BoolExpr: { boolop: 'AND_EXPR', args: [isFloat, half, evenBelow] } }, result: engineCall('sign', [value]) } },
      ],
      defresult: int(0),
    },
  };
  return op('-', engineCall('round', [value]), correction);
}

/** `lag(x, n, d)` over the common type of x and d, as PostgreSQL types it (anycompatible). */
function withDefaultType(fc: FuncCall, [value, offset, fallback]: Node[]): Node {
  const common: Node = {
    CaseExpr: { args: [{ CaseWhen: { expr: { A_Const: { boolval: { boolval: false } } }, result: fallback } }], defresult: value },
  };
  const typed: FuncCall = { ...fc, args: [common, offset!, fallback!] };
  written.add(typed);
  return sameScaleOrRefused({ FuncCall: typed }, [value, fallback], `${fieldNames(fc.funcname).join('.')} with a default`);
}

/** Table functions written as the engine's unnest, which would otherwise name their column "unnest". */
const ROWS_NAMED_AFTER_FUNCTION = new Set(['regexp_split_to_table', 'regexp_matches']);

/** Calls `visit` with every FuncCall body directly in `items` (the functions of a RangeFunction). */
export function walkCalls(items: Node[] | undefined, visit: (fc: FuncCall) => void): void {
  for (const item of items ?? []) {
    const fc = asKind(item, 'FuncCall');
    if (fc) visit(fc);
    else walkCalls(asKind(item, 'List')?.items, visit);
  }
}

export function namedFunctionColumn(rangeFunction: RangeFunction): RangeFunction | null {
  const items = rangeFunction.functions ?? [];
  if (items.length !== 1) return null;
  const list = asKind(items[0], 'List');
  const fn = asKind(list ? list.items?.[0] : items[0], 'FuncCall');
  const name = fn ? calledName(fn) : '';
  // Without an alias, PostgreSQL names the column after the function (the engine's unnest: "unnest").
  const alias = rangeFunction.alias ?? (ROWS_NAMED_AFTER_FUNCTION.has(name) ? { aliasname: name } : undefined);
  if (!alias || alias.colnames || rangeFunction.ordinality || rangeFunction.is_rowsfrom) return null;
  const args = fn?.args ?? [];
  if (!hasFact(name, 'oneColumnInFrom') || (name === 'unnest' && args.length !== 1)) return null;
  return { ...rangeFunction, alias: { ...alias, colnames: [{ String: { sval: alias.aliasname } }] } };
}

/** Operators the engine lacks or reads otherwise: # (xor), |/ and ||/ (roots), BETWEEN SYMMETRIC. */
export function postgresOperator(expr: A_Expr): Node | null {
  const name = fieldNames(expr.name).join('');
  if (exprIs(expr, 'AEXPR_OP') && name === '#' && expr.lexpr) return call('xor', [expr.lexpr, expr.rexpr!]);
  // PostgreSQL reads a NULL beside || as text; the engine as an integer.
  const isText = (node: Node | undefined) => isNullConst(node) || isStringConst(node);
  if (
    exprIs(expr, 'AEXPR_OP') &&
    name === '||' &&
    (isNullConst(expr.lexpr) || isNullConst(expr.rexpr)) &&
    isText(expr.lexpr) &&
    isText(expr.rexpr)
  ) {
    // The engine folds 'x' || NULL to a NULL it types as an integer: the result is cast back.
    const text = (node: Node | undefined) => (isNullConst(node) ? asVarchar(node!) : node);
    return asVarchar({ A_Expr: { ...expr, lexpr: text(expr.lexpr), rexpr: text(expr.rexpr) } });
  }
  if (
    exprIs(expr, 'AEXPR_OP') &&
    name === '<<' &&
    !written.has(expr) &&
    expr.lexpr &&
    isIntegerConst(expr.rexpr) &&
    !isVolatile(expr.lexpr)
  ) {
    // PostgreSQL's integer (int4) shifts wrap around at 32 bits; the engine's fail on overflow.
    const count = Number(literalText(expr.rexpr));
    if (count >= 0 && count < 32) {
      const shifted: A_Expr = { ...expr, lexpr: cast(expr.lexpr, 'int8') };
      written.add(shifted);
      const wrapped = call('vdb_int4_wrap', [{ A_Expr: shifted }]);
      written.add(wrapped.FuncCall);
      const int4 = cast(wrapped, 'int4');
      written.add(int4.TypeCast);
      const same: A_Expr = { ...expr };
      written.add(same);
      return { CaseExpr: { args: [{ CaseWhen: { expr: typeIs(expr.lexpr, ['INTEGER']), result: int4 } }], defresult: { A_Expr: same } } };
    }
  }
  if (exprIs(expr, 'AEXPR_OP') && name === '/' && expr.lexpr && typeNameOf(asKind(expr.lexpr, 'TypeCast')?.typeName) === 'interval')
    // An interval literal divided (the engine has no such division): times only, rounded to the microsecond.
    return engineCall('vdb_interval_div', [expr.lexpr, expr.rexpr!]);
  // x ^ y is power(x, y): numeric of a numeric in PostgreSQL, where the engine's ^ is a double.
  if (exprIs(expr, 'AEXPR_OP') && name === '^' && expr.lexpr && expr.rexpr) return call('power', [expr.lexpr, expr.rexpr]);
  if (exprIs(expr, 'AEXPR_OP') && !expr.lexpr && (name === '|/' || name === '||/')) {
    // PostgreSQL's |/ and ||/ take double precision only: a numeric operand is cast (rounded once, postgres-values.ts).
    return call(name === '|/' ? 'sqrt' : 'cbrt', [cast(expr.rexpr!, 'float8')]);
  }
  const symmetric = exprIs(expr, 'AEXPR_BETWEEN_SYM') || exprIs(expr, 'AEXPR_NOT_BETWEEN_SYM');
  const bounds = asKind(expr.rexpr, 'List')?.items;
  if (symmetric && bounds && bounds.length === 2 && !isVolatile(bounds)) {
    const [low, high] = bounds as [Node, Node];
    const least: Node = { MinMaxExpr: { op: 'IS_LEAST', args: [low, high] } };
    const greatest: Node = { MinMaxExpr: { op: 'IS_GREATEST', args: [low, high] } };
    const between = exprIs(expr, 'AEXPR_BETWEEN_SYM');
    return {
      A_Expr: {
        ...expr,
        kind: between ? 'AEXPR_BETWEEN' : 'AEXPR_NOT_BETWEEN',
        name: [nameNode(between ? 'BETWEEN' : 'NOT BETWEEN')],
        rexpr: { List: { items: [least, greatest] } },
      },
    };
  }
  return null;
}

/**
 * to_char of a date or timestamp, to_date and to_timestamp with a constant template, written
 * with the engine's strftime/strptime (datetime-format.ts); anything else is refused.
 */
function dateTimeCall(name: string, args: Node[]): Node {
  const template = args.length === 2 && isStringConst(args[1]) ? literalText(args[1]) : null;
  const hint =
    name === 'to_char'
      ? 'vdb translates constant templates: of numbers (9, 0, ., D, ,, G, S, MI, PL, SG, PR, FM, EEEE, TH, V, RN, L) and of dates (YYYY, MM, DD, HH24, MI, SS, Mon, ...); see docs/sql.md.'
      : 'vdb translates constant date/time templates (YYYY, MM, DD, HH24, MI, SS, Mon, Month, Day, ...); see docs/sql.md.';
  if (template === null) throw notAsPostgres(`${name} without a constant template`, hint);
  if (name === 'to_char') {
    const value = args[0]!;
    const text = isVolatile(value) ? null : dateTimeText(value, template);
    if (text === null) throw notAsPostgres(`The to_char template '${template}'`, hint);
    // The engine's strftime writes years before 1 otherwise (-43 for 44 BC).
    const before = beforeYearOne(value);
    const failure = call('error', [stringConst("to_char of a date or timestamp before year 1 (BC) is not supported by vdb's engine")]);
    return { CaseExpr: { args: [{ CaseWhen: { expr: before, result: failure } }], defresult: text } };
  }
  const format = dateTimeParse(template);
  if (format === null) throw notAsPostgres(`The ${name} template '${template}'`, hint);
  const parsed = engineCall('strptime', [args[0]!, stringConst(format)]);
  return { TypeCast: { arg: parsed, typeName: typeNamed(name === 'to_date' ? 'date' : 'timestamptz') } };
}

/**
 * to_char(value, template): of a number (number-text.ts; a literal written at once, a template
 * of any text), else of a date or timestamp by dateTimeCall, by the engine's type of the value
 * (learned by a probe).
 */
function toCharCall(args: Node[]): Node {
  if (args.length !== 2) return dateTimeCall('to_char', args);
  const [value, format] = args as [Node, Node];
  const template = isStringConst(format) ? literalText(format) : null;
  const literal = template === null ? null : literalNumberText(value, template);
  if (literal) return literal;
  const constant = asKind(value, 'A_Const');
  if (constant && !constant.ival && !constant.fval)
    throw notAsPostgres('to_char of a text or NULL constant', 'Cast it: to_char(x::numeric, ...) or to_char(x::date, ...).');
  const { type, probe, probed } = probedType(value);
  if (probe) return { CaseExpr: { args: [{ CaseWhen: { expr: probe, result: asVarchar({ A_Const: { isnull: true } }) } }] } };
  // A probe that failed (the statement's own error comes as it runs): the number's kind asked while it runs.
  if (type === undefined && probed) return numberTextCall(value, null, format);
  const kind = type === undefined ? 'datetime' : toCharKind(type);
  if (kind === null) throw notAsPostgres(`to_char of ${type}`, 'Give a number, a date or a timestamp.');
  return kind === 'datetime' ? dateTimeCall('to_char', args) : numberTextCall(value, kind, format);
}

/** format() with a constant template of %s, %I, %L, %% and positions (%2$s); null for other templates. */
function formatCall(args: Node[]): Node | null {
  const template = isStringConst(args[0]) ? literalText(args[0]) : null;
  if (template === null || args.some((arg) => isVolatile(arg))) return null;
  const pieces: Node[] = [];
  let next = 1;
  const spec = /%(?:(\d+)\$)?(-)?(\d+)?([sIL%])|%/g;
  let last = 0;
  for (let match = spec.exec(template); match; match = spec.exec(template)) {
    if (match.index > last) pieces.push(stringConst(template.slice(last, match.index)));
    last = spec.lastIndex;
    const [, given, left, width, conversion] = match;
    if (conversion === '%' && !left && !width) {
      pieces.push(stringConst('%'));
      continue;
    }
    if (!conversion || conversion === '%') return null; // '*' widths: not translated
    const position = given ? Number(given) : next;
    next = position + 1;
    const value = args[position];
    if (value === undefined) throw badRequest('too few arguments for format()', 'Give one argument per %s or %L.');
    const text =
      conversion === 's'
        ? textOf(value, 't')
        : conversion === 'I'
          ? identifierOf(value)
          : { CoalesceExpr: { args: [quotedLiteral(textOf(value, 'true')), stringConst('NULL')] } };
    // A width pads with spaces (on the right with '-'), never cuts; a NULL %s is '' and is padded too.
    const padded = (node: Node): Node => {
      const filled = { CoalesceExpr: { args: [node, stringConst('')] } };
      const pad = call(left ? 'rpad' : 'lpad', [filled, int(Number(width)), stringConst(' ')]);
      const long = op('>=', call('length', [filled]), int(Number(width)));
      return { CaseExpr: { args: [{ CaseWhen: { expr: long, result: filled } }], defresult: pad } };
    };
    pieces.push(width ? padded(text) : text);
  }
  if (last < template.length) pieces.push(stringConst(template.slice(last)));
  return pieces.length === 0 ? stringConst('') : call('concat', pieces);
}

/** format's %I: the value's text as quote_ident writes it; NULL fails, as in PostgreSQL. */
function identifierOf(value: Node): Node {
  const text = textOf(value, 't');
  const failure = call('error', [stringConst('null values cannot be formatted as an SQL identifier')]);
  return {
    CaseExpr: {
      args: [{ CaseWhen: { expr: { NullTest: { arg: text, nulltesttype: 'IS_NULL' } }, result: failure } }],
      defresult: quotedIdent(text),
    },
  };
}

/** Text functions PostgreSQL has that the engine lacks or answers otherwise (null: not one of them). */
function textFunction(name: string, args: Node[]): Node | null {
  if (name === 'format') {
    const formatted = formatCall(args);
    if (!formatted)
      throw notAsPostgres(
        'format() with a template other than constant %s, %I, %L and %%',
        'Use concat(), or format with %s, %I and %L only.',
      );
    return formatted;
  }
  if (name === 'quote_literal' && args.length === 1 && !isVolatile(args[0])) return quotedLiteral(textOf(args[0]!, 'true'));
  if (name === 'quote_ident' && args.length === 1 && !isVolatile(args[0])) return quotedIdent(asVarchar(args[0]!));
  if (name === 'to_hex' && args.length === 1 && !isVolatile(args[0])) {
    // PostgreSQL writes a negative integer in its own width (8 digits), the engine in 16.
    const value = args[0]!;
    const hex = call('lower', [engineCall('to_hex', [value])]);
    const narrowNegative: Node = {
      BoolExpr: { boolop: 'AND_EXPR', args: [op('<', value, int(0)), typeIs(value, ['INTEGER', 'SMALLINT', 'TINYINT'])] },
    };
    return { CaseExpr: { args: [{ CaseWhen: { expr: narrowNegative, result: call('right', [hex, int(8)]) } }], defresult: hex } };
  }
  if ((name === 'encode' || name === 'decode') && args.length === 2) {
    const [value, kind] = args as [Node, Node];
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
    const [text, replacement, start, length = call('length', [replacement])] = args as [Node, Node, Node, Node?];
    return call('concat', [call('left', [text, op('-', start, int(1))]), replacement, call('substr', [text, op('+', start, length)])]);
  }
  // The engine has functions of these names that mean something else: no other form reaches them.
  if (hasFact(name, 'textNamesake')) throw notAsPostgres(`${name} in this form`, 'See docs/sql.md for the forms vdb translates.');
  return null;
}

/** Fields whose EXTRACT is a whole number; PostgreSQL answers numeric (scale 0). */
const WHOLE_FIELDS = new Set([
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'dow',
  'isodow',
  'doy',
  'week',
  'quarter',
  'century',
  'decade',
  'millennium',
  'isoyear',
  'microseconds',
  'timezone',
  'timezone_hour',
  'timezone_minute',
]);

/** EXTRACT's numeric type: scale 0 for whole fields, 6 for seconds, 3 for milliseconds; other fields are refused. */
function extractType(args: Node[]): { type: string; typmods: number[] } {
  const field = literalText(args[0])?.toLowerCase() ?? '';
  if (WHOLE_FIELDS.has(field)) return { type: 'numeric', typmods: [38, 0] };
  if (field === 'second') return { type: 'numeric', typmods: [38, 6] };
  if (field === 'milliseconds') return { type: 'numeric', typmods: [38, 3] };
  if (field === 'epoch') return { type: 'numeric', typmods: [38, 6] };
  throw notAsPostgres(
    `EXTRACT(${field || 'a field given by an expression'} FROM ...)`,
    "Use date_part('epoch', x), which answers double precision as in PostgreSQL, or one of the calendar and clock fields.",
  );
}

/** EXTRACT(epoch FROM x) of a timestamp, exact to the microsecond; refused for other types (PostgreSQL's scale differs). */
function epochOf(value: Node): Node {
  const micros = cast(engineCall('epoch_us', [value]), 'numeric');
  micros.TypeCast.typeName.typmods = [int(38), int(0)];
  const unit = cast({ A_Const: { fval: { fval: '0.000001' } } }, 'numeric');
  unit.TypeCast.typeName.typmods = [int(7), int(6)];
  written.add(micros.TypeCast);
  written.add(unit.TypeCast);
  const timestamp = typeIs(value, ['TIMESTAMP', 'TIMESTAMP WITH TIME ZONE']);
  const failure = call('error', [
    stringConst("EXTRACT(epoch FROM ...) of a date or interval is not supported by vdb's engine; use date_part('epoch', x)"),
  ]);
  return {
    CaseExpr: {
      args: [{ CaseWhen: { expr: { BoolExpr: { boolop: 'NOT_EXPR', args: [timestamp] } }, result: failure } }],
      defresult: op('*', micros, unit),
    },
  };
}

/** Calls rewritten for PostgreSQL's meaning and result type (null: as written). */
export function postgresCall(fc: FuncCall): Node | null {
  if (written.has(fc)) return null;
  const name = calledName(fc);
  const args = fc.args ?? [];
  const intLiterals = args.length > 0 && args.every(isIntegerConst);
  const result =
    name === 'extract' && args.length === 2
      ? extractType(args)
      : hasFact(name, 'int4OfInt4') && intLiterals
        ? { type: 'int4' }
        : functionFacts(name)?.resultType;
  const translated = name === 'extract' && literalText(args[0])?.toLowerCase() === 'epoch' ? epochOf(args[1]!) : translatedCall(fc);
  if (!result) return translated;
  let value: Node | null = translated;
  if (!value) {
    const same = { ...fc };
    written.add(same);
    value = { FuncCall: same };
  }
  // Marked as vdb's own cast, so that the cast's checks (postgres-values.ts) leave it alone.
  const typed: TypeCast = { arg: value, typeName: { names: [nameNode(result.type)], typmods: result.typmods?.map(int) } };
  written.add(typed);
  return { TypeCast: typed };
}

/** The fields of EXTRACT/date_part that count years, whose engine value differs before year 1 (PostgreSQL's spellings). */
const YEAR_FIELDS: Record<string, 'year' | 'isoyear' | 'decade'> = {
  year: 'year',
  years: 'year',
  y: 'year',
  yr: 'year',
  yrs: 'year',
  isoyear: 'isoyear',
  decade: 'decade',
  decades: 'decade',
  dec: 'decade',
  decs: 'decade',
};

/**
 * Whether a date or timestamp lies before year 1 (BC), by its epoch: the engine's year of a
 * timestamp with time zone is the year of its era there (44 for 44 BC), of the others the
 * astronomical year (-43). Binds for intervals too (their type makes it false).
 */
export function beforeYearOne(value: Node): Node {
  const epoch = engineCall('date_part', [stringConst('epoch'), value]);
  return {
    BoolExpr: {
      boolop: 'AND_EXPR',
      args: [typeIs(value, DATE_TIME_TYPES), op('<', epoch, { A_Const: { fval: { fval: '-62135596800' } } })],
    },
  };
}

/** The astronomical year (1 BC is 0) of a date or timestamp before year 1 (see beforeYearOne). */
function astronomicalYear(value: Node): Node {
  const year = engineCall('date_part', [stringConst('year'), value]);
  return {
    CaseExpr: {
      args: [{ CaseWhen: { expr: typeIs(value, ['TIMESTAMP WITH TIME ZONE']), result: op('-', int(1), year) } }],
      defresult: year,
    },
  };
}

/**
 * EXTRACT/date_part of a year field of a date or timestamp before year 1: PostgreSQL has no year
 * 0 (1 BC is year -1, 2 BC -2), the engine counts 0, -1, ... (its isoyear too); PostgreSQL's
 * decade of those years is -((8 - (year - 1)) / 10) of the astronomical year (timestamp.c).
 * Null for other calls.
 */
function yearFieldCall(name: string, args: Node[]): Node | null {
  if ((name !== 'date_part' && name !== 'extract') || args.length !== 2 || isVolatile(args[1])) return null;
  const field = YEAR_FIELDS[literalText(args[0])?.toLowerCase() ?? ''];
  if (!field) return null;
  const value = args[1]!;
  const own = engineCall('date_part', [stringConst(field), value]);
  if (field === 'isoyear') {
    const before: Node = { BoolExpr: { boolop: 'AND_EXPR', args: [typeIs(value, DATE_TIME_TYPES), op('<', own, int(1))] } };
    return { CaseExpr: { args: [{ CaseWhen: { expr: before, result: op('-', own, int(1)) } }], defresult: own } };
  }
  const year = astronomicalYear(value);
  const bc = field === 'decade' ? op('-', int(0), engineCall('divide', [op('-', int(9), year), int(10)])) : op('-', year, int(1));
  return { CaseExpr: { args: [{ CaseWhen: { expr: beforeYearOne(value), result: bc } }], defresult: own } };
}

/** make_date/make_timestamp(tz)'s year as the engine reads it: PostgreSQL's -44 is 44 BC (the engine's -43); 0 fails. */
function madeYear(name: string, args: Node[]): Node[] | null {
  if (!['make_date', 'make_timestamp', 'make_timestamptz'].includes(name) || args.length < 3) return null;
  const year = args[0]!;
  if (isVolatile(year)) throw notAsPostgres(`${name} of a volatile year`, 'Compute the year once, in a subquery.');
  const failure = call('error', [stringConst(`date field value out of range: year 0 (${name})`)]);
  const read: Node = {
    CaseExpr: {
      args: [
        { CaseWhen: { expr: op('<', year, int(0)), result: op('+', year, int(1)) } },
        { CaseWhen: { expr: op('=', year, int(0)), result: failure } },
      ],
      defresult: year,
    },
  };
  return [read, ...args.slice(1)];
}

/**
 * A translation of calls of one name: the call written for the engine, or null when this form
 * is not one it handles (the next translation of the name is tried, then the call as written).
 * It may also refuse the call (notAsPostgres).
 */
type Translation = (fc: FuncCall, args: Node[]) => Node | null;

/** The translations of each function name, tried in order: the one place that says how a call of PostgreSQL's is written for the engine. */
const TRANSLATIONS = new Map<string, Translation[]>();

function translate(names: Iterable<string>, translation: Translation): void {
  for (const name of names) TRANSLATIONS.set(name, [...(TRANSLATIONS.get(name) ?? []), translation]);
}

/** The call marked as vdb's own, with other arguments. */
function withArgs(fc: FuncCall, args: Node[]): Node {
  const same: FuncCall = { ...fc, args };
  written.add(same);
  return { FuncCall: same };
}

function translatedCall(fc: FuncCall): Node | null {
  const name = calledName(fc);
  const args = fc.args ?? [];
  for (const translation of TRANSLATIONS.get(name) ?? []) {
    const translated = translation(fc, args);
    if (translated) return translated;
  }
  return null;
}

// The engine's date_part of a field computed per row fails inside itself for some fields (an
// 'epoch' of a timestamptz), and such a failure closes the whole engine: only constant fields.
translate(['date_part'], (_fc, args) => {
  if (args.length !== 2) return null;
  // A field written as a cast constant ('year'::text) is that constant.
  const castField = asKind(args[0], 'TypeCast');
  if (castField && isStringConst(castField.arg) && ['text', 'varchar'].includes(typeNameOf(castField.typeName) ?? ''))
    args[0] = castField.arg!;
  if (literalText(args[0]) === null) {
    throw notAsPostgres(
      'date_part of a field given by an expression',
      "Name the field as a constant, such as date_part('year', x), or use EXTRACT(year FROM x).",
    );
  }
  return null;
});

translate(['date_part', 'extract'], (fc, args) => yearFieldCall(calledName(fc), args));

translate(['make_date', 'make_timestamp', 'make_timestamptz'], (fc, args) => {
  const made = madeYear(calledName(fc), args);
  return made ? withArgs(fc, made) : null;
});

translate(['round'], (fc, args) => (args.length === 1 && !fc.over ? roundCall(args[0]!) : null));

translate(functionsWith('numericMath'), (fc, args) => {
  if (args.length === 0 || fc.over) return null;
  const guarded = numericArgumentsRefused(calledName(fc), args);
  return guarded ? withArgs(fc, guarded) : null;
});

translate(['sign'], (fc, args) => {
  if (args.length !== 1 || isVolatile(args[0])) return null;
  // PostgreSQL's sign is double precision of integers and floats, numeric of numeric; the engine's a tinyint.
  const same = { ...fc };
  written.add(same);
  const double = cast({ FuncCall: same }, 'float8');
  written.add(double.TypeCast);
  const failure = call('error', [
    stringConst("sign() of a numeric value is not supported by vdb's engine; cast it to float8: sign(x::float8)"),
  ]);
  const numeric = call('starts_with', [call('typeof', [args[0]!]), stringConst('DECIMAL')]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: numeric, result: failure } }], defresult: double } };
});

translate(['regexp_replace'], (fc, args) => {
  if (args.length !== 3 && args.length !== 4) return null;
  const flags = args.length === 4 ? literalText(args[3]) : '';
  const pattern = literalText(args[1]);
  if (flags === null || !/^[gic]*$/.test(flags) || isIntegerConst(args[3]) || pattern === null || !isStringConst(args[1])) {
    throw notAsPostgres(
      'regexp_replace with a pattern or flags that are not constants, or flags other than g, i and c',
      "Give the pattern and the flags as constants ('g', 'i', 'c').",
    );
  }
  // PostgreSQL's '.' matches a newline; the engine's only with (?s). The pattern must find PostgreSQL's matches (posix-regex.ts).
  const caseInsensitive = flags.lastIndexOf('i') > flags.lastIndexOf('c');
  // PostgreSQL's global replace also replaces the empty match right after a (non-empty) match;
  // RE2's skips it. The same text when the pattern matches only empty texts, or the replacement is empty.
  if (flags.includes('g') && matchesEmptyAndMore(pattern, caseInsensitive) && literalText(args[2]) !== '') {
    throw notAsPostgres(
      "regexp_replace(..., 'g') of a pattern that matches both the empty text and longer ones, with a replacement that is not empty",
      "Write the pattern so that it matches at least one character (x+ rather than x*), or replace with ''.",
    );
  }
  return withArgs(fc, [args[0]!, stringConst(`(?s)${sameMatchRegex(pattern, caseInsensitive)}`), ...args.slice(2)]);
});

translate(['regexp_split_to_array'], (fc, args) => (fc.over ? null : regexSplit(args)));

// Set-returning: the engine's functions of these names answer otherwise, so every call is translated or refused.
translate(['regexp_split_to_table'], (_fc, args) => regexpSplitRows(args));
translate(['regexp_matches'], (_fc, args) => regexpMatchesRows(args));

translate(['width_bucket'], (_fc, args) => widthBucketCall(args));
translate(['scale', 'min_scale', 'trim_scale'], (fc, args) => scaleCall(calledName(fc), args));
translate(['pg_typeof'], (_fc, args) => pgTypeofCall(args));
// booleq(a, b): a = b (NULL for a NULL).
translate(['booleq'], (_fc, args) => (args.length === 2 ? op('=', args[0], args[1]) : null));

translate(['string_agg'], (fc, args) => {
  if (args.length !== 2) return null;
  const [value, separator] = args as [Node, Node];
  const { type, probe } = probedType(value);
  // The probe only learns the value's type: the engine's string_agg takes text and a constant separator.
  if (probe) return withArgs(fc, [asVarchar({ CaseExpr: { args: [{ CaseWhen: { expr: probe, result: value } }] } }), stringConst(',')]);
  if (type !== 'BLOB') return null;
  // string_agg(bytea, bytea): the values' hex digits joined by the separator's, read back as
  // bytes; hex digits order as the bytes do (DISTINCT sorts them).
  const separatorHex = byteaHex(separator);
  if (separatorHex === null) {
    throw notAsPostgres(
      'string_agg(bytea, ...) with a separator other than a constant',
      "Give the separator as a constant: '\\x2c'::bytea.",
    );
  }
  const made: FuncCall = { ...fc, args: [engineCall('hex', [value]), stringConst(separatorHex)] };
  if (fc.agg_distinct && !fc.agg_order)
    made.agg_order = [{ SortBy: { node: made.args![0], sortby_dir: 'SORTBY_DEFAULT', sortby_nulls: 'SORTBY_NULLS_DEFAULT' } }];
  written.add(made);
  return engineCall('unhex', [{ FuncCall: made }]);
});

/** The hex digits of a constant bytea (NULL: none, as PostgreSQL joins with no separator), or null when not a constant. */
function byteaHex(value: Node): string | null {
  const castArg = asKind(value, 'TypeCast');
  const inner = castArg && typeNameOf(castArg.typeName) === 'bytea' ? castArg.arg : value;
  if (isNullConst(inner)) return '';
  const text = isStringConst(inner) ? literalText(inner) : null;
  if (text === null) return null;
  if (/^\\x([0-9a-fA-F]{2})*$/.test(text)) return text.slice(2).toUpperCase();
  // PostgreSQL's escape form: bytes as written, but for backslashes (not translated here).
  if (text.includes('\\')) return null;
  return [...Buffer.from(text, 'utf8')].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join('');
}

translate(['string_agg', 'array_agg'], (fc, args) => {
  if (args.length === 0) return null;
  // A NULL separator joins with none in PostgreSQL; the engine's string_agg answers NULL.
  const separator = asKind(args[1], 'TypeCast')?.arg ?? args[1];
  const nullSeparator = calledName(fc) === 'string_agg' && args.length === 2 && isNullConst(separator);
  // PostgreSQL's DISTINCT aggregates take their values sorted; the engine's in the order met.
  const sorted = fc.agg_distinct && !fc.agg_order;
  if (!nullSeparator && !sorted) return null;
  const made: FuncCall = { ...fc, args: nullSeparator ? [args[0]!, stringConst('')] : args };
  if (sorted) made.agg_order = [{ SortBy: { node: args[0], sortby_dir: 'SORTBY_DEFAULT', sortby_nulls: 'SORTBY_NULLS_DEFAULT' } }];
  written.add(made);
  return { FuncCall: made };
});

// Floats as PostgreSQL accumulates them (youngs-cramer.ts); integers and numeric are refused here (numeric-values.ts answers them in the select list).
translate(VARIANCES, (fc, args) => {
  if (args.length !== 1 || isVolatile(args[0])) return null;
  const name = calledName(fc);
  return youngsCramer(fc, name, floatOnlyArgument(name, args[0]!));
});

// Pairs (y, x) as float8 values, as PostgreSQL reads every argument of these.
translate(REGRESSIONS, (fc, args) => (args.length === 2 && !isVolatile(args) ? regression(fc, calledName(fc), args[0]!, args[1]!) : null));

translate(functionsWith('exactAverage'), (fc, args) =>
  args.length === 1 ? withArgs(fc, [floatOnlyArgument(calledName(fc), args[0]!)]) : null,
);

translate(['percentile_disc', 'percentile_cont'], (fc, args) => {
  const fractions = asKind(args[0], 'A_ArrayExpr')?.elements ?? [];
  // The engine answers one dimension of fractions; PostgreSQL's answer keeps the array's shape.
  if (fractions.some((element) => asKind(element, 'A_ArrayExpr')))
    throw notAsPostgres(
      `${calledName(fc)} of a multidimensional array of fractions`,
      'Give a one-dimensional array: percentile_disc(ARRAY[0.25, 0.5]).',
    );
  return null;
});

translate(['percentile_cont'], (fc) => {
  if (!fc.agg_within_group || !fc.agg_order) return null;
  // PostgreSQL interpolates in double precision whatever the ordered values' type.
  const order = fc.agg_order.map((item): Node => {
    const sortBy = asKind(item, 'SortBy');
    return sortBy ? { SortBy: { ...sortBy, node: cast(sortBy.node, 'float8') } } : item;
  });
  const made = { ...fc, agg_order: order };
  written.add(made);
  return { FuncCall: made };
});

translate(['lag', 'lead'], (fc, args) => (args.length === 3 && fc.over ? withDefaultType(fc, args) : null));

translate(functionsWith('castFunction'), (fc, args) =>
  args.length === 1 ? { TypeCast: { arg: args[0], typeName: typeNamed(calledName(fc)) } } : null,
);

translate(['lpad', 'rpad'], (fc, args) => (args.length === 2 ? call(calledName(fc), [...args, stringConst(' ')]) : null));

translate(['octet_length'], (_fc, args) => {
  if (args.length !== 1) return null;
  const value = args[0]!;
  const bytes: Node = { TypeCast: { arg: asVarchar(value), typeName: typeNamed('blob') } };
  return {
    CaseExpr: {
      args: [{ CaseWhen: { expr: typeIs(value, ['BLOB']), result: engineCall('octet_length', [bytes]) } }],
      defresult: call('strlen', [asVarchar(value)]),
    },
  };
});

translate(['to_json'], (_fc, args) => (args.length === 1 && !isVolatile(args[0]) ? cast(jsonText(args[0]!), 'json') : null));

translate(['json_agg'], (fc, args) => {
  if (args.length !== 1 || fc.over || isVolatile(args[0])) return null;
  // PostgreSQL's text: elements as to_json writes them, joined by ', ' (scalars only).
  const elements: FuncCall = {
    ...fc,
    funcname: [nameNode('string_agg')],
    args: [{ CoalesceExpr: { args: [scalarJsonText(args[0]!), stringConst('null')] } }, stringConst(', ')],
  };
  written.add(elements);
  const list = op('||', op('||', stringConst('['), { FuncCall: elements }), stringConst(']'));
  return cast(list, 'json');
});

translate(['string_to_array'], (_fc, args) => {
  if (args.length !== 2 || isVolatile(args[0])) return null;
  // PostgreSQL: no elements for '', one per character for a NULL delimiter.
  const [text, delimiter] = args as [Node, Node];
  const split = engineCall('string_to_array', [text, isNullConst(delimiter) ? stringConst('') : delimiter]);
  const empty: Node = { TypeCast: { arg: { A_ArrayExpr: {} }, typeName: { ...typeNamed('varchar'), arrayBounds: [int(-1)] } } };
  return { CaseExpr: { args: [{ CaseWhen: { expr: op('=', text, stringConst('')), result: empty } }], defresult: split } };
});

// The engine's arrays start at 1, as PostgreSQL's do unless written otherwise: the upper bound is the length.
translate(['array_length', 'array_upper'], (_fc, args) => {
  if (args.length !== 2) return null;
  // PostgreSQL has no length for an empty array (NULL), the engine 0. A deeper dimension (2, 3)
  // is the length of the first element's (PostgreSQL's arrays are rectangular).
  const dimension = isIntegerConst(args[1]) ? Number(literalText(args[1])) : 1;
  if (dimension >= 2 && dimension <= 6) {
    let list: Node = args[0]!;
    for (let d = 1; d < dimension; d++) list = { A_Indirection: { arg: list, indirection: [{ A_Indices: { uidx: int(1) } }] } };
    return cast(call('nullif', [engineCall('len', [list]), int(0)]), 'int4');
  }
  return call('nullif', [engineCall('array_length', args), int(0)]);
});

translate(['date_part', 'extract'], (fc, args) => {
  if (args.length !== 2 || literalText(args[0])?.toLowerCase() !== 'second' || isVolatile(args[1])) return null;
  // PostgreSQL's seconds keep their fraction; the engine's are whole.
  const micros: Node = {
    TypeCast: { arg: engineCall(calledName(fc), [stringConst('microseconds'), args[1]!]), typeName: typeNamed('float8') },
  };
  return op('/', micros, int(1_000_000));
});

translate(['generate_series'], (fc, args) => {
  if (fc.over) return null;
  // PostgreSQL's series of integers is integer (int4) when its bounds are; the engine's bigint.
  const integers = args.every(isIntegerConst) ? { narrow: true } : narrowIntegers(args);
  const first: Node = integers.probe ? { CaseExpr: { args: [{ CaseWhen: { expr: integers.probe, result: args[0] } }] } } : args[0]!;
  const series = { ...fc, args: [first, ...args.slice(1)] };
  written.add(series);
  const rows = refusedForDates(args[0]!, call('unnest', [{ FuncCall: series }]), 'generate_series() of dates');
  return integers.narrow ? cast(rows, 'int4') : rows;
});

// PostgreSQL writes NULL elements as the third argument; the engine has no such argument.
translate(['array_to_string'], (_fc, args) => (args.length === 3 && !isVolatile(args[0]) ? engineCall('vdb_array_to_string', args) : null));

translate(['rank'], (fc, args) => {
  const constant = asKind(args[0], 'A_Const');
  if (!fc.agg_within_group || fc.agg_order?.length !== 1 || args.length !== 1 || !constant || constant.isnull) return null;
  // Hypothetical rank of a constant: 1 + the rows ordered before it (NULLs last ascending, first descending).
  const sortBy = asKind(fc.agg_order[0], 'SortBy');
  if (!sortBy?.node || (sortBy.sortby_nulls ?? 'SORTBY_NULLS_DEFAULT') !== 'SORTBY_NULLS_DEFAULT') return null;
  const descending = sortBy.sortby_dir === 'SORTBY_DESC';
  const nulls: Node = { NullTest: { arg: sortBy.node, nulltesttype: 'IS_NULL' } };
  const before: Node = descending
    ? { BoolExpr: { boolop: 'OR_EXPR', args: [op('>', sortBy.node, args[0]!), nulls] } }
    : op('<', sortBy.node, args[0]!);
  // The call's own FILTER applies too.
  const filter: Node = fc.agg_filter ? { BoolExpr: { boolop: 'AND_EXPR', args: [fc.agg_filter, before] } } : before;
  const count: FuncCall = {
    funcname: [nameNode('count')],
    agg_star: true,
    agg_filter: filter,
    funcformat: 'COERCE_EXPLICIT_CALL',
    over: fc.over,
  };
  written.add(count);
  return op('+', { FuncCall: count }, int(1));
});

translate(['initcap'], (_fc, args) => (args.length === 1 ? engineCall('vdb_initcap', args) : null));

translate(['concat', 'concat_ws'], (fc, args) => {
  const name = calledName(fc);
  if (!fc.func_variadic || args.length !== (name === 'concat' ? 1 : 2)) return null;
  // VARIADIC ARRAY[...]: the array's elements are the arguments (NULLs skipped); text arrays only.
  const list = args[args.length - 1]!;
  const joined = engineCall('array_to_string', [list, name === 'concat' ? stringConst('') : args[0]!]);
  const failure = call('error', [stringConst(`${name}(VARIADIC ...) of a non-text array is not supported by vdb's engine`)]);
  const text = typeIs(list, ['VARCHAR[]']);
  return {
    CaseExpr: { args: [{ CaseWhen: { expr: { BoolExpr: { boolop: 'NOT_EXPR', args: [text] } }, result: failure } }], defresult: joined },
  };
});

translate(['make_interval'], (_fc, args) => {
  if (args.length === 0 || !args.every((arg) => asKind(arg, 'NamedArgExpr'))) return null;
  const units: Record<string, (value: Node) => Node> = {
    years: (v) => engineCall('to_years', [cast(v, 'int4')]),
    months: (v) => engineCall('to_months', [cast(v, 'int4')]),
    weeks: (v) => engineCall('to_days', [cast(op('*', v, int(7)), 'int4')]),
    days: (v) => engineCall('to_days', [cast(v, 'int4')]),
    hours: (v) => engineCall('to_hours', [cast(v, 'int8')]),
    mins: (v) => engineCall('to_minutes', [cast(v, 'int8')]),
  };
  const parts = args.map((arg) => {
    const named = asKind(arg, 'NamedArgExpr')!;
    const unit = units[named.name ?? ''];
    if (!unit) throw notAsPostgres(`make_interval(${named.name} => ...)`, 'Give years, months, weeks, days, hours or mins.');
    return unit(named.arg!);
  });
  return parts.reduce((sum, piece) => op('+', sum, piece));
});

translate(['justify_days'], (_fc, args) => (args.length === 1 ? engineCall('vdb_justify_days', args) : null));

translate(['format'], (fc, args) => {
  if (!fc.func_variadic || args.length < 2) return null;
  // format(t, VARIADIC ARRAY[...]): the array's elements are the arguments.
  const last = args[args.length - 1]!;
  const list = asKind(last, 'A_ArrayExpr') ?? asKind(asKind(last, 'TypeCast')?.arg, 'A_ArrayExpr');
  if (!list || (list.elements ?? []).some((element) => asKind(element, 'A_ArrayExpr'))) {
    throw notAsPostgres(
      'format(..., VARIADIC x) of an array other than ARRAY[...] of values',
      'Pass the values one by one, or as ARRAY[a, b].',
    );
  }
  return textFunction('format', [...args.slice(0, -1), ...(list.elements ?? [])]);
});

translate(functionsWith('textNamesake'), (fc, args) => textFunction(calledName(fc), args));

translate(['to_char', 'to_date', 'to_timestamp'], (fc, args) => {
  const name = calledName(fc);
  if (name === 'to_char') return toCharCall(args);
  return name !== 'to_timestamp' || args.length === 2 ? dateTimeCall(name, args) : null;
});

translate(['row_to_json'], (_fc, args) => {
  const row = args.length === 1 ? asKind(args[0], 'RowExpr') : undefined;
  if (row?.args && row.args.length > 0 && !isVolatile(row.args)) {
    // PostgreSQL names a ROW(...)'s fields f1, f2, ... and writes each value as to_json does.
    const fields = row.args.map((arg, i): Node => {
      const value = { CoalesceExpr: { args: [scalarJsonText(arg), stringConst('null')] } };
      return op('||', stringConst(`${i === 0 ? '{' : ','}"f${i + 1}":`), value);
    });
    return cast(
      op(
        '||',
        fields.reduce((text, field) => op('||', text, field)),
        stringConst('}'),
      ),
      'json',
    );
  }
  if (args.some((arg) => asKind(arg, 'RowExpr'))) {
    throw notAsPostgres(
      'row_to_json of a ROW(...) constructor',
      'Select the values from a subquery with named columns and pass its row: row_to_json(t).',
    );
  }
  return null;
});

translate(['concat', 'concat_ws'], (fc, args) => {
  const name = calledName(fc);
  const texts = args.map((arg, i) =>
    literalText(arg) !== null || (name === 'concat_ws' && i === 0) ? arg : (postgresText(arg, 't') ?? arg),
  );
  return withArgs(fc, texts);
});

translate(['date_trunc'], (_fc, args) => (args.length === 2 ? dateTruncCall(args) : null));

translate(['div'], (_fc, args) => {
  if (args.length !== 2 || isVolatile(args)) return null;
  // PostgreSQL's div: the quotient truncated toward zero, as numeric; the engine's // truncates too.
  const [dividend, divisor] = args as [Node, Node];
  const zero: Node = {
    CaseExpr: {
      args: [{ CaseWhen: { expr: op('=', divisor, int(0)), result: call('error', [stringConst('division by zero')]) } }],
      defresult: divisor,
    },
  };
  const quotient = cast(op('//', integersOnly('div', dividend, divisor), zero), 'numeric');
  quotient.TypeCast.typeName.typmods = [int(38), int(0)];
  written.add(quotient.TypeCast);
  return quotient;
});

translate(['cardinality'], (_fc, args) => {
  if (args.length !== 1 || isVolatile(args[0])) return null;
  const list = args[0]!;
  const nested = op('~~', call('typeof', [list]), stringConst('%[][]'));
  const failure = call('error', [stringConst("cardinality() of a multidimensional array is not supported by vdb's engine")]);
  const count = cast(call('len', [list]), 'int4');
  written.add(count.TypeCast);
  return { CaseExpr: { args: [{ CaseWhen: { expr: nested, result: failure } }], defresult: count } };
});

/** date_trunc(field, value) as PostgreSQL answers it; refused for fields given by expressions. */
function dateTruncCall(args: Node[]): Node {
  const field = literalText(args[0])?.toLowerCase() ?? null;
  if (field === null) {
    throw notAsPostgres(
      'date_trunc to a field given by an expression',
      "Truncate to 'millennium', 'century', 'decade', 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute' or 'second', written as a constant.",
    );
  }
  // A date literal is timestamp with time zone to PostgreSQL's date_trunc (midnight UTC here).
  const dateLiteral = typeNameOf(asKind(args[1], 'TypeCast')?.typeName) === 'date';
  const value = dateLiteral ? cast(args[1], 'timestamptz') : args[1]!;
  const unit = { century: 100, millennium: 1000 }[field];
  let truncated: Node;
  if (unit && !isVolatile(value)) {
    // Centuries and millennia begin with their year 1 (2001), the engine's with year 0.
    const year = engineCall('year', [value]);
    const back = engineCall('to_years', [cast(op('%', op('-', year, int(1)), int(unit)), 'int4')]);
    const start = op('-', engineCall('date_trunc', [stringConst('year'), value]), back);
    const failure = call('error', [stringConst(`date_trunc to ${field} of a year before 1 is not supported by vdb's engine`)]);
    // The engine's year of a timestamp with time zone before year 1 is its era's (44 for 44 BC).
    const before: Node = { BoolExpr: { boolop: 'OR_EXPR', args: [op('<', year, int(1)), beforeYearOne(value)] } };
    truncated = { CaseExpr: { args: [{ CaseWhen: { expr: before, result: failure } }], defresult: start } };
  } else if (unit) {
    throw notAsPostgres(`date_trunc to ${field} of a volatile value`, 'Truncate a value computed once, in a subquery.');
  } else if (field === 'decade' && !isVolatile(value)) {
    // PostgreSQL's decades before year 1 end with a year 1 BC, 11 BC, ...; the engine's otherwise.
    const failure = call('error', [stringConst(`date_trunc to decade of a year before 1 is not supported by vdb's engine`)]);
    const engineDecade = engineCall('date_trunc', [args[0]!, value]);
    truncated = { CaseExpr: { args: [{ CaseWhen: { expr: beforeYearOne(value), result: failure } }], defresult: engineDecade } };
  } else truncated = engineCall('date_trunc', [args[0]!, value]);
  return dateLiteral ? truncated : refusedForDates(args[1]!, truncated, 'date_trunc() of a date');
}

/** `value` when it is not a date; PostgreSQL reads a date there as timestamp with time zone, the engine as timestamp. */
function refusedForDates(date: Node, value: Node, what: string): Node {
  if (isVolatile(date)) return value;
  const failure = call('error', [
    stringConst(
      `${what} is not supported by vdb's engine (PostgreSQL answers timestamp with time zone, the engine timestamp); cast the date: x::timestamp`,
    ),
  ]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: typeIs(date, ['DATE']), result: failure } }], defresult: value } };
}

/**
 * The JSON text PostgreSQL's to_json writes for a scalar value: numbers as written (1.50),
 * dates and timestamps ISO and quoted, text quoted; other types as the engine writes them.
 */
function jsonText(value: Node): Node {
  const text = asVarchar(value);
  const quoted = (inner: Node) => op('||', op('||', stringConst('"'), inner), stringConst('"'));
  const when = (types: string[], result: Node): Node => ({ CaseWhen: { expr: typeIs(value, types), result } });
  return {
    CaseExpr: {
      args: [
        { CaseWhen: { expr: { NullTest: { arg: value, nulltesttype: 'IS_NULL' } }, result: { A_Const: { isnull: true } } } },
        when(['VARCHAR'], asVarchar(engineCall('to_json', [value]))),
        when(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'BOOLEAN'], text),
        { CaseWhen: { expr: call('starts_with', [call('typeof', [value]), stringConst('DECIMAL')]), result: text } },
        when(['DATE'], quoted(postgresDateTimeText(text, ' '))),
        when(['TIMESTAMP'], quoted(postgresDateTimeText(text, 'T'))),
        when(['TIMESTAMP WITH TIME ZONE'], quoted(postgresDateTimeText(text, 'T', ':00'))),
        when(TYPE_NAMES_OF_FLOATS, engineCall('vdb_float_json', [text])),
      ],
      defresult: asVarchar(engineCall('to_json', [value])),
    },
  };
}

/** jsonText of a scalar: PostgreSQL's json_agg writes rows and arrays on lines of their own. */
function scalarJsonText(value: Node): Node {
  const type = call('typeof', [value]);
  const composite: Node = {
    BoolExpr: { boolop: 'OR_EXPR', args: [op('~~', type, stringConst('STRUCT%')), op('~~', type, stringConst('%[]'))] },
  };
  const failure = call('error', [stringConst("json_agg() of rows or arrays is not supported by vdb's engine; aggregate scalar values")]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: composite, result: failure } }], defresult: jsonText(value) } };
}

/** `dividend`, refused unless both values are integers. */
function integersOnly(name: string, dividend: Node, divisor: Node): Node {
  const integers = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT'];
  const notIntegers: Node = {
    BoolExpr: {
      boolop: 'NOT_EXPR',
      args: [{ BoolExpr: { boolop: 'AND_EXPR', args: [typeIs(dividend, integers), typeIs(divisor, integers)] } }],
    },
  };
  const failure = call('error', [stringConst(`${name}() of numeric values is not supported by vdb's engine; it takes integers`)]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: notIntegers, result: failure } }], defresult: dividend } };
}
