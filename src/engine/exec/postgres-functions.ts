/**
 * PostgreSQL's functions and operators in the engine: calls the engine lacks, or has with another
 * meaning, written so that they answer as in PostgreSQL (round, lag/lead defaults, to_char,
 * format, ...), or refused. Used by engine-dialect.ts's rewrite.
 */
import { badRequest } from '../../errors.js';
import { fieldNames, isObject, type Json } from '../front/ast.js';
import { dateTimeParse, dateTimeText } from './datetime-format.js';
import { EXACT_AVERAGES, floatOnlyArgument, NUMERIC_MATH, numericArgumentsRefused, sameScaleOrRefused } from './numeric-scales.js';
import { postgresText, quotedLiteral, textOf } from './postgres-values.js';
import {
  asVarchar,
  call,
  cast,
  engineCall,
  int,
  isVolatile,
  literalText,
  notAsPostgres,
  op,
  stringConst,
  TYPE_NAMES_OF_FLOATS,
  typeIs,
  written,
} from './syntax-nodes.js';

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
      args: [
        { CaseWhen: { expr: { BoolExpr: { boolop: 'AND_EXPR', args: [isFloat, half, evenBelow] } }, result: engineCall('sign', [value]) } },
      ],
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
  return sameScaleOrRefused({ FuncCall: typed }, [value, fallback], `${fieldNames(fc.funcname).join('.')} with a default`);
}

/** Calls `visit` with every FuncCall body directly in `items` (the functions of a RangeFunction). */
export function walkCalls(items: unknown, visit: (fc: Json) => void): void {
  if (Array.isArray(items)) return items.forEach((item) => walkCalls(item, visit));
  if (!isObject(items)) return;
  if (isObject(items.FuncCall)) return visit(items.FuncCall);
  if (isObject(items.List)) walkCalls(items.List.items, visit);
}

/** Functions of FROM that return one column: an alias without column names names that column. */
const ONE_COLUMN_FUNCTIONS = new Set(['generate_series', 'unnest']);

export function namedFunctionColumn(rangeFunction: Json): Json | null {
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

/** Operators the engine lacks or reads otherwise: # (xor), |/ and ||/ (roots), BETWEEN SYMMETRIC. */
export function postgresOperator(expr: Json): Json | null {
  const name = fieldNames(expr.name).join('');
  if (expr.kind === 'AEXPR_OP' && name === '#' && expr.lexpr) return call('xor', [expr.lexpr, expr.rexpr]);
  // PostgreSQL reads a NULL beside || as text; the engine as an integer.
  const isNull = (node: unknown) => isObject(node) && isObject(node.A_Const) && node.A_Const.isnull === true;
  const isText = (node: unknown) => isNull(node) || (isObject(node) && isObject(node.A_Const) && isObject(node.A_Const.sval));
  if (expr.kind === 'AEXPR_OP' && name === '||' && (isNull(expr.lexpr) || isNull(expr.rexpr)) && isText(expr.lexpr) && isText(expr.rexpr)) {
    // The engine folds 'x' || NULL to a NULL it types as an integer: the result is cast back.
    const text = (node: unknown) => (isNull(node) ? asVarchar(node) : node);
    return asVarchar({ A_Expr: { ...expr, lexpr: text(expr.lexpr), rexpr: text(expr.rexpr) } });
  }
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

/** PostgreSQL's result type of functions whose engine namesake answers another type (BIGINT for int4, ...). */
const RESULT_TYPES: Record<string, { type: string; typmods?: number[] }> = {
  length: { type: 'int4' },
  char_length: { type: 'int4' },
  character_length: { type: 'int4' },
  octet_length: { type: 'int4' },
  bit_length: { type: 'int4' },
  strpos: { type: 'int4' },
  position: { type: 'int4' },
  array_length: { type: 'int4' },
  array_position: { type: 'int4' },
  json_array_length: { type: 'int4' },
  ntile: { type: 'int4' },
  ascii: { type: 'int4' },
  date_part: { type: 'float8' },
  factorial: { type: 'numeric', typmods: [38, 0] },
  to_json: { type: 'json' },
  array_to_json: { type: 'json' },
  row_to_json: { type: 'json' },
  json_agg: { type: 'json' },
  json_build_object: { type: 'json' },
  json_build_array: { type: 'json' },
};

/** Functions whose result is int4 when their arguments are (known here for integer literals). */
const INT4_OF_INT4_ARGUMENTS = new Set(['gcd', 'lcm']);

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
function extractType(args: unknown[]): { type: string; typmods: number[] } {
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
function epochOf(value: unknown): Json {
  const micros = cast(engineCall('epoch_us', [value]), 'numeric');
  (micros.TypeCast.typeName as Json).typmods = [int(38), int(0)];
  const unit = cast({ A_Const: { fval: { fval: '0.000001' } } }, 'numeric');
  (unit.TypeCast.typeName as Json).typmods = [int(7), int(6)];
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
export function postgresCall(fc: Json): Json | null {
  if (written.has(fc)) return null;
  const name = fieldNames(fc.funcname).join('.').toLowerCase();
  const args = Array.isArray(fc.args) ? (fc.args as unknown[]) : [];
  const intLiterals = args.length > 0 && args.every((arg) => isObject(arg) && isObject(arg.A_Const) && isObject(arg.A_Const.ival));
  const result =
    name === 'extract' && args.length === 2
      ? extractType(args)
      : INT4_OF_INT4_ARGUMENTS.has(name) && intLiterals
        ? { type: 'int4' }
        : RESULT_TYPES[name];
  const translated = name === 'extract' && literalText(args[0])?.toLowerCase() === 'epoch' ? epochOf(args[1]) : translatedCall(fc);
  if (!result) return translated;
  let value: unknown = translated;
  if (!value) {
    const same = { ...fc };
    written.add(same);
    value = { FuncCall: same };
  }
  // Marked as vdb's own cast, so that the cast's checks (postgres-values.ts) leave it alone.
  const typed = { arg: value, typeName: { names: [{ String: { sval: result.type } }], typmods: result.typmods?.map(int) } };
  written.add(typed);
  return { TypeCast: typed };
}

function translatedCall(fc: Json): Json | null {
  const name = fieldNames(fc.funcname).join('.').toLowerCase();
  const args = Array.isArray(fc.args) ? (fc.args as unknown[]) : [];
  if (name === 'round' && args.length === 1 && !fc.over) return roundCall(args);
  if (NUMERIC_MATH.has(name) && args.length > 0 && !fc.over) {
    const guarded = numericArgumentsRefused(name, args);
    if (guarded) {
      const same = { ...fc, args: guarded };
      written.add(same);
      return { FuncCall: same };
    }
  }
  if (name === 'sign' && args.length === 1 && !isVolatile(args[0])) {
    // PostgreSQL's sign is double precision of integers and floats, numeric of numeric; the engine's a tinyint.
    const same = { ...fc };
    written.add(same);
    const double = cast({ FuncCall: same }, 'float8');
    written.add(double.TypeCast);
    const failure = call('error', [
      stringConst("sign() of a numeric value is not supported by vdb's engine; cast it to float8: sign(x::float8)"),
    ]);
    const numeric = call('starts_with', [call('typeof', [args[0]]), stringConst('DECIMAL')]);
    return { CaseExpr: { args: [{ CaseWhen: { expr: numeric, result: failure } }], defresult: double } };
  }
  if (EXACT_AVERAGES.has(name) && args.length === 1) {
    const checked = { ...fc, args: [floatOnlyArgument(name, args[0])] };
    written.add(checked);
    return { FuncCall: checked };
  }
  if (name === 'percentile_cont' && fc.agg_within_group && Array.isArray(fc.agg_order)) {
    // PostgreSQL interpolates in double precision whatever the ordered values' type.
    const order = fc.agg_order.map((item) =>
      isObject(item) && isObject(item.SortBy) ? { SortBy: { ...item.SortBy, node: cast(item.SortBy.node, 'float8') } } : item,
    );
    const made = { ...fc, agg_order: order };
    written.add(made);
    return { FuncCall: made };
  }
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
          // The engine's JSON values hold numbers as doubles: 1.50 would become 1.5.
          {
            CaseWhen: {
              expr: call('starts_with', [call('typeof', [value]), stringConst('DECIMAL')]),
              result: call('error', [
                stringConst(
                  "to_json() of a numeric value is not supported by vdb's engine (its JSON would drop the scale); select the value itself",
                ),
              ]),
            },
          },
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
    const rows = refusedForDates(args[0], call('unnest', [{ FuncCall: series }]), 'generate_series() of dates');
    // PostgreSQL's series of integers is integer (int4) when its bounds are; the engine's bigint.
    const int4 = args.every((arg) => isObject(arg) && isObject(arg.A_Const) && isObject(arg.A_Const.ival));
    return int4 ? cast(rows, 'int4') : rows;
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
    const same = { ...fc };
    written.add(same);
    return refusedForDates(args[1], { FuncCall: same }, 'date_trunc() of a date');
  }
  if (name === 'div' && args.length === 2 && !isVolatile(args)) {
    // PostgreSQL's div: the quotient truncated toward zero, as numeric; the engine's // truncates too.
    const [dividend, divisor] = args;
    const zero = {
      CaseExpr: {
        args: [{ CaseWhen: { expr: op('=', divisor, int(0)), result: call('error', [stringConst('division by zero')]) } }],
        defresult: divisor,
      },
    };
    const quotient = cast(op('//', integersOnly('div', dividend, divisor), zero), 'numeric');
    (quotient.TypeCast.typeName as Json).typmods = [int(38), int(0)];
    written.add(quotient.TypeCast);
    return quotient;
  }
  if (name === 'cardinality' && args.length === 1 && !isVolatile(args[0])) {
    const [list] = args;
    const nested = op('~~', call('typeof', [list]), stringConst('%[][]'));
    const failure = call('error', [stringConst("cardinality() of a multidimensional array is not supported by vdb's engine")]);
    const count = cast(call('len', [list]), 'int4');
    written.add(count.TypeCast);
    return { CaseExpr: { args: [{ CaseWhen: { expr: nested, result: failure } }], defresult: count } };
  }
  return null;
}

/** `value` when it is not a date; PostgreSQL reads a date there as timestamp with time zone, the engine as timestamp. */
function refusedForDates(date: unknown, value: Json, what: string): Json {
  if (isVolatile(date)) return value;
  const failure = call('error', [
    stringConst(
      `${what} is not supported by vdb's engine (PostgreSQL answers timestamp with time zone, the engine timestamp); cast the date: x::timestamp`,
    ),
  ]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: typeIs(date, ['DATE']), result: failure } }], defresult: value } };
}

/** `dividend`, refused unless both values are integers. */
function integersOnly(name: string, dividend: unknown, divisor: unknown): Json {
  const integers = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT'];
  const notIntegers = {
    BoolExpr: {
      boolop: 'NOT_EXPR',
      args: [{ BoolExpr: { boolop: 'AND_EXPR', args: [typeIs(dividend, integers), typeIs(divisor, integers)] } }],
    },
  };
  const failure = call('error', [stringConst(`${name}() of numeric values is not supported by vdb's engine; it takes integers`)]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: notIntegers, result: failure } }], defresult: dividend } };
}
