/**
 * PostgreSQL's values in the engine: casts (exact numeric literals, text read as PostgreSQL
 * reads it, varchar(n), arrays and booleans written as text) and values written as text the way
 * PostgreSQL writes them. Used by engine-dialect.ts's rewrite.
 */
import { badRequest } from '../../errors.js';
import { POSTGRES_INTERVAL_TEXT } from '../../results/json.js';
import { INTERVAL_FIELDS, intervalTruncation } from '../front/allow-list.js';
import { engineIntervalText, FULL_RANGE, intervalInput } from '../../runtime/interval-input.js';
import { dateTimeInput, type DateTimeType } from '../../runtime/datetime-input.js';
import { byteaHex } from '../../runtime/bytea-input.js';
import { castUse } from './cast-uses.js';
import type { A_Const, FuncCall, Node, TypeCast, TypeName } from '@pgsql/types';
import { asKind, fieldNames, nameNode } from '../tree/ast.js';
import { probedType } from './probed-types.js';
import {
  engineCall,
  asVarchar,
  evaluatedOnce,
  call,
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

export const typeNameOf = (typeName: TypeName | undefined): string =>
  typeName
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
    // A year of four digits or more, not all zeros (PostgreSQL has no year 0; the engine's is 1 BC).
    pattern:
      /^\s*((?:\d{3,}[1-9]|\d{2,}[1-9]\d|\d+[1-9]\d{2}|\d*[1-9]\d{3,})-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*(Z|[+-]\d{1,2}(:?\d{2})?)?|[+-]?infinity)\s*$/,
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
/**
 * `x::numeric` of an expression: integers and numeric keep their value and scale (added to a
 * numeric of scale 0); other values (floats, text) would need a scale per value and are refused.
 */
function numericOfExpression(value: Node, cast: TypeCast): Node {
  // The value's type where a probe learned it: text and floats are refused here, in words (the
  // engine could not even add text to a number), but where their scale is not seen (cast-uses.ts);
  // in the select list they are answered (numeric-values.ts).
  const { type, probe } = probedType(value);
  if (probe) return { CaseExpr: { args: [{ CaseWhen: { expr: probe, result: { TypeCast: numericZero() } } }] } };
  const use = castUse(cast);
  if ((type === 'VARCHAR' || type === 'FLOAT' || type === 'DOUBLE') && (use === 'value' || use === 'text')) {
    const read = type === 'VARCHAR' ? 'vdb_num_of_text' : type === 'FLOAT' ? 'vdb_num_of_real' : 'vdb_num_of_double';
    const pair = marked(call(read, [type === 'VARCHAR' ? asVarchar(value) : value]));
    // Compared: exact in a DECIMAL(38,18) (numeric-macros.ts refuses what it cannot hold); as text, PostgreSQL's text.
    return use === 'text' ? marked(call('vdb_num_text', [pair])) : marked(call('vdb_num_decimal', [pair, stringConst('numeric')]));
  }
  if (type === 'VARCHAR' || type === 'FLOAT' || type === 'DOUBLE') {
    throw notAsPostgres(
      `numeric without precision and scale over a ${type === 'VARCHAR' ? 'text' : 'float'} value outside a column of the select list (PostgreSQL keeps a scale per value)`,
      'Give the precision and scale, e.g. CAST(x AS numeric(20, 6)), or compute it in the select list.',
    );
  }
  const exact: Node = {
    BoolExpr: {
      boolop: 'OR_EXPR',
      args: [
        call('starts_with', [call('typeof', [value]), stringConst('DECIMAL')]),
        typeIs(value, ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT']),
      ],
    },
  };
  const failure = call('error', [
    stringConst(
      "numeric without precision and scale over a float or text value is not supported by vdb's engine (PostgreSQL keeps a scale per value); give the precision and scale, e.g. CAST(x AS numeric(20, 6))",
    ),
  ]);
  const checked: Node = {
    CaseExpr: { args: [{ CaseWhen: { expr: { BoolExpr: { boolop: 'NOT_EXPR', args: [exact] } }, result: failure } }], defresult: value },
  };
  return op('+', checked, { TypeCast: numericZero() });
}

/** A call the rewrite leaves as it is (the engine's macros). */
const marked = (fc: { FuncCall: FuncCall }): Node => {
  written.add(fc.FuncCall);
  return fc;
};

/** 0::numeric(38,0), the engine's own. */
function numericZero(): TypeCast {
  const zero: TypeCast = { arg: int(0), typeName: { names: [nameNode('numeric')], typmods: [int(38), int(0)] } };
  written.add(zero);
  return zero;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** An ISO timestamp with a zone of hours only (+02), which the engine does not read, with a full one (+02:00). */
function isoZoneInput(text: string): string | null {
  const zoned = /^(\d{4,}-\d{1,2}-\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*([+-])(\d{1,2})$/.exec(text.trim());
  if (!zoned) return null;
  const [, date, hour, minute, second = '00', sign, zone] = zoned;
  return `${date} ${pad(Number(hour))}:${minute}:${second}${sign}${pad(Number(zone))}:00`;
}

/** A date or time literal read as PostgreSQL reads it (datetime-input.ts), for the engine. */
function dateTimeLiteral(text: string, cast: TypeCast, type: DateTimeType): Node {
  const value = dateTimeInput(text, type);
  if (value.kind === 'text') return { TypeCast: { ...cast, arg: stringConst(value.text) } };
  const today: Node = { SQLValueFunction: { op: 'SVFOP_CURRENT_DATE', typmod: -1 } };
  const now: Node = { SQLValueFunction: { op: 'SVFOP_CURRENT_TIMESTAMP', typmod: -1 } };
  // Read as the statement runs: 'today' is the current date then, as in PostgreSQL.
  const arg = value.kind === 'now' ? now : value.days === 0 ? today : op(value.days > 0 ? '+' : '-', today, int(Math.abs(value.days)));
  const typed: TypeCast = { ...cast, arg };
  written.add(typed);
  return { TypeCast: typed };
}

/** A date or timestamp literal before year 1 as PostgreSQL writes it ('0044-03-15 10:00:00+00 BC'). */
export const BC_DATE_TIME =
  /^\s*(\d{4,}-\d{1,2}-\d{1,2})((?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\s*(?:Z|[+-]\d{1,2}(?::?\d{2})?)?)\s+BC\s*$/i;

/**
 * A literal before year 1 as the engine reads it: PostgreSQL's '0044-03-15 10:00:00+00 BC' is
 * the engine's '0044-03-15 (BC) 10:00:00+00' (read as 44 AD, or not at all, as written). Null
 * for other texts.
 */
export function bcDateTimeInput(text: string): string | null {
  const match = BC_DATE_TIME.exec(text);
  if (!match || /^0+-/.test(match[1]!)) return null;
  const rest = match[2]!.trim().replace(/^T/, '');
  return `${match[1]} (BC)${rest ? ` ${rest}` : ''}`;
}

/** A cast and what its rules look at. */
interface CastParts {
  cast: TypeCast;
  arg: Node;
  type: string;
  typmods: Node[] | undefined;
  arrayBounds: Node[] | undefined;
  /** The argument's text when it is a literal. */
  literal: string | null;
  stringLiteral: boolean;
}

/** A rule of casts: the cast written for the engine, null when it needs nothing, undefined when the rule is not about it. */
type CastRule = (parts: CastParts) => Node | null | undefined;

/** numeric without precision and scale: a literal's own, or per value (numeric-values.ts). */
const numericCast: CastRule = ({ cast, arg, type, typmods, arrayBounds, literal, stringLiteral }) => {
  if (type === 'numeric' && !arrayBounds && stringLiteral && literal?.trim().toLowerCase() === 'nan') {
    // Shown in the select list it is PostgreSQL's text (numeric-values.ts), and so cast to text.
    if (castUse(cast) === 'text') return stringConst('NaN');
    throw notAsPostgres(
      "A numeric NaN in this place (the engine's numbers hold none; PostgreSQL compares and sorts it above every number)",
      'A NaN is answered shown in the select list or cast to text; compute with float8 (whose NaN compares and sorts as PostgreSQL does).',
    );
  }
  if (!(type === 'numeric' && !typmods && !arrayBounds)) return undefined;
  const exact = literal === null ? null : decimalOf(literal);
  if (literal === null && !isVolatile(arg)) return numericOfExpression(arg, cast);
  if (!exact || exact.precision > 38) {
    throw notAsPostgres(
      'numeric without precision and scale over an expression (the engine would round it to 3 decimals)',
      'Give the precision and scale, e.g. CAST(x AS numeric(20, 6)), or cast to double precision.',
    );
  }
  return {
    TypeCast: {
      ...cast,
      typeName: { ...cast.typeName, typmods: [int(exact.precision), int(exact.scale)] },
    },
  };
};

/**
 * Interval text the engine reads as PostgreSQL does: whole years, months, days and a time, each
 * once and in that order ('1 year 2 mons -3 days 04:05:06').
 */
const ENGINE_INTERVAL_TEXT = (() => {
  const years = '-?\\d{1,9} years?';
  const months = '-?\\d{1,9} mons?|-?\\d{1,9} months?';
  const days = '-?\\d{1,9} days?';
  const time = '-?\\d{1,9}:[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,6})?)?';
  const then = (item: string) => `(?:\\s+(?:${item}))?`;
  const alternatives = [
    `(?:${years})${then(months)}${then(days)}${then(time)}`,
    `(?:${months})${then(days)}${then(time)}`,
    `(?:${days})${then(time)}`,
    `(?:${time})`,
  ];
  return `\\s*(?:${alternatives.join('|')})\\s*`;
})();

/** An interval literal, with or without fields and precision: read here as PostgreSQL reads it, the engine given its exact value. */
const intervalLiteralCast: CastRule = ({ cast, arg, type, typmods, arrayBounds, literal, stringLiteral }) => {
  if (type !== 'interval' || arrayBounds) return undefined;
  const mods = (typmods ?? []).map((mod) => Number(literalText(mod)));
  if (literal !== null && !stringLiteral) return undefined;
  if (literal === null) {
    if (isVolatile(arg)) throw notAsPostgres('A cast to interval of a volatile expression', 'Cast a column or a literal.');
    // Text is read per value as PostgreSQL reads it (runtime/datetime-functions.ts); intervals
    // are cast as they are, but for fields or a precision, which are not applied to them here.
    const read: TypeCast = {
      arg: engineCall('vdb_interval_in', [asVarchar(arg), int(mods[0] ?? FULL_RANGE), int(mods.length === 2 ? mods[1]! : -1)]),
      typeName: { ...cast.typeName, typmods: undefined },
    };
    written.add(read);
    const plain: TypeCast = { ...cast, typeName: { ...cast.typeName, typmods: undefined } };
    written.add(plain);
    if (mods.length === 0) {
      // Text the engine reads as PostgreSQL does goes to the engine's own cast, much faster.
      const other: Node = {
        BoolExpr: {
          boolop: 'AND_EXPR',
          args: [
            typeIs(arg, ['VARCHAR']),
            { BoolExpr: { boolop: 'NOT_EXPR', args: [call('regexp_full_match', [asVarchar(arg), stringConst(ENGINE_INTERVAL_TEXT)])] } },
          ],
        },
      };
      return { CaseExpr: { args: [{ CaseWhen: { expr: other, result: { TypeCast: read } } }], defresult: { TypeCast: plain } } };
    }
    const other: Node =
      mods.length > 0
        ? call('error', [stringConst("fields or a precision of an interval cast from anything but text are not supported by vdb's engine")])
        : { TypeCast: plain };
    return { CaseExpr: { args: [{ CaseWhen: { expr: typeIs(arg, ['VARCHAR']), result: { TypeCast: read } } }], defresult: other } };
  }
  const value = intervalInput(literal, mods[0] ?? FULL_RANGE, mods.length === 2 ? mods[1]! : null);
  return { TypeCast: { arg: stringConst(engineIntervalText(value)), typeName: { ...cast.typeName, typmods: undefined } } };
};

/** interval '2' hour and kin: a number of the one field, or the literal with its smaller fields dropped. */
const intervalFieldCast: CastRule = ({ cast, arg, type, typmods, literal, stringLiteral }) => {
  if (!(type === 'interval' && Array.isArray(typmods) && typmods.length === 1)) return undefined;
  // interval '2' hour: a number of the one field, its fraction dropped as the field's
  // restriction drops smaller fields ('1.5' day is 1 day), but for seconds.
  const mask = Number(literalText(typmods[0]));
  const unit = INTERVAL_FIELDS[mask];
  const number = literal === null ? null : /^\s*([+-]?\d+)(\.\d*)?\s*$/.exec(literal);
  if (unit && number && literal !== null) {
    const value = unit === 'second' ? literal.trim() : String(Number(number[1]));
    return { TypeCast: { arg: stringConst(`${value} ${unit}`), typeName: { ...cast.typeName, typmods: undefined } } };
  }
  // interval '1 day 2 hours' day to hour: the literal read, then its smaller fields dropped.
  const truncation = intervalTruncation(mask);
  if (truncation && literal !== null && stringLiteral && !number) {
    const plain: TypeCast = { arg, typeName: { ...cast.typeName, typmods: undefined } };
    written.add(plain);
    // Down to seconds, fractions included: nothing is dropped.
    return truncation === 'second' ? { TypeCast: plain } : call('date_trunc', [stringConst(truncation), { TypeCast: plain }]);
  }
  if (!unit || literal === null || !/^\s*[+-]?\d+\s*$/.test(literal)) {
    throw notAsPostgres(
      'An interval restricted to a field (INTERVAL ... YEAR) over anything but a whole number literal',
      "Write the unit inside the literal: interval '1 year'.",
    );
  }
  return { TypeCast: { arg: stringConst(`${literal.trim()} ${unit}`), typeName: { ...cast.typeName, typmods: undefined } } };
};

/** Casts PostgreSQL reads otherwise than the engine by their shape: array literals, char(n), varchar(n), boolean literals, text of values. */
const shapeCast: CastRule = ({ cast, arg, type, typmods, arrayBounds, literal, stringLiteral }) => {
  if (arrayBounds && literal !== null && stringLiteral) {
    return arrayLiteral(literal, cast);
  }
  if (type === 'bpchar' && !arrayBounds) return charCastFor(cast, arg, typmods);
  if (type === 'varchar' && Array.isArray(typmods) && typmods.length === 1 && !arrayBounds) {
    // An explicit cast to varchar(n) cuts the text to n characters in PostgreSQL.
    return { TypeCast: { arg: call('left', [asVarchar(arg), typmods[0]!]), typeName: cast.typeName } };
  }
  if (type === 'bool' && literal !== null && !arrayBounds && stringLiteral) {
    const value = booleanOf(literal);
    if (value === null) throw badRequest(`invalid input syntax for type boolean: "${literal}"`, 'Use true/false, yes/no, on/off or 1/0.');
    return { TypeCast: { arg: stringConst(String(value)), typeName: cast.typeName } };
  }
  const elements = asKind(arg, 'A_ArrayExpr')?.elements;
  if (TEXT_TYPES.has(type) && !typmods && !arrayBounds && elements && elements.every((e) => isIntegerConst(e) || isNullConst(e))) {
    // ARRAY[1, NULL]::text, written as PostgreSQL writes it: {1,NULL}.
    return stringConst(`{${elements.map((e) => (isNullConst(e) ? 'NULL' : literalText(e))).join(',')}}`);
  }
  if (TEXT_TYPES.has(type) && !typmods && !arrayBounds && literal === null) {
    const written = postgresText(arg, 'true');
    if (written) return { TypeCast: { arg: written, typeName: cast.typeName } };
  }
  if (type === 'interval' && stringLiteral && !typmods && literal !== null && /^\s*\+\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*$/.test(literal)) {
    // '+02:00': the engine does not read the sign of a time.
    return { TypeCast: { ...cast, arg: stringConst(literal.trim().slice(1)) } };
  }
  return undefined;
};

/**
 * A cast to char(n) as its use wants it (char-casts.ts): padded to n characters, or without its
 * trailing spaces; bpchar without a length keeps the text's length. Other uses are refused.
 */
function charCastFor(cast: TypeCast, arg: Node, typmods: Node[] | undefined): Node {
  const use = castUse(cast);
  if (!(use === 'padded' || use === 'stripped') || isVolatile(arg)) {
    throw notAsPostgres(
      'char(n) in this place (PostgreSQL pads it with spaces and ignores them in comparisons)',
      'Use varchar(n) or text; a char(n) cast is answered where it is shown, measured, joined with || or compared with another char(n) or a literal.',
    );
  }
  const length = typmods?.[0];
  const text = textOf(arg, 'true');
  const cut = length === undefined ? text : call('rpad', [text, length, stringConst(' ')]);
  return use === 'padded' ? cut : call('rtrim', [cut, stringConst(' ')]);
}

/** name: text of at most 63 bytes (NAMEDATALEN - 1), cut at a character's end. */
const nameCast: CastRule = ({ arg, type, arrayBounds, literal, stringLiteral }) => {
  if (type !== 'name' || arrayBounds) return undefined;
  if (literal !== null && stringLiteral) {
    let text = literal;
    while (Buffer.byteLength(text) > NAME_BYTES) text = [...text].slice(0, -1).join('');
    return asVarchar(stringConst(text));
  }
  if (isVolatile(arg)) throw notAsPostgres('A cast to name of a volatile expression', 'Cast a column or a literal.');
  const text = textOf(arg, 'true');
  const failure = call('error', [
    stringConst("a cast to name of text of more than 63 bytes with characters other than ASCII is not supported by vdb's engine"),
  ]);
  // ASCII text is cut at 63 characters, which are its 63 bytes (NULL is NULL).
  const wide: Node = {
    BoolExpr: {
      boolop: 'AND_EXPR',
      args: [op('>', call('strlen', [text]), int(NAME_BYTES)), op('<>', call('strlen', [text]), call('length', [text]))],
    },
  };
  return { CaseExpr: { args: [{ CaseWhen: { expr: wide, result: failure } }], defresult: call('left', [text, int(NAME_BYTES)]) } };
};

const NAME_BYTES = 63;

/**
 * money, by its use (cast-uses.ts): a number of two decimals rounded half away from zero (from
 * a number, or from a literal in lc_monetary C's form: $, grouping commas, parentheses for a
 * negative), shown as PostgreSQL writes it ('-$1,234.57'). Floats are not cast (PostgreSQL has
 * no such cast), nor text while the statement runs.
 */
const moneyCast: CastRule = ({ cast, arg, type, arrayBounds, literal, stringLiteral }) => {
  if (type !== 'money' || arrayBounds) return undefined;
  const use = castUse(cast);
  if (!(use === 'shown' || use === 'number') || isVolatile(arg)) {
    throw notAsPostgres(
      'money in this place',
      'money is answered where a cast to it is shown, cast to numeric or text, or compared with money; compute with numeric(20,2) instead.',
    );
  }
  const number = moneyNumber(arg, literal, stringLiteral);
  return use === 'number' ? number : moneyText(number);
};

function moneyNumber(arg: Node, literal: string | null, stringLiteral: boolean): Node {
  const typed = (value: Node): Node => {
    const cast: TypeCast = { arg: value, typeName: { names: [nameNode('numeric')], typmods: [int(38), int(2)] } };
    written.add(cast);
    return { TypeCast: cast };
  };
  if (literal !== null && stringLiteral) return typed({ A_Const: { fval: { fval: moneyInput(literal) } } });
  // Checked to be a number within money's range, written once (runtime/numeric-macros.ts).
  return engineCall('vdb_money_number', [arg]);
}

/** A money literal in lc_monetary C's form, as a number of two decimals (the third rounds half up, as cash_in does). */
function moneyInput(text: string): string {
  const match = /^\s*(\()?\s*(-)?\s*\$?\s*(\d[\d,]*)?(?:\.(\d*))?\s*(\))?\s*$/.exec(text);
  if (!match || (!match[3] && !match[4]) || Boolean(match[1]) !== Boolean(match[5]) || (match[1] && match[2])) {
    throw notAsPostgres(`The money input '${text}' in this form`, "Write it as '1234.56', '$1,234.56' or '(1.50)'.");
  }
  const whole = BigInt((match[3] ?? '0').replace(/,/g, '') || '0');
  const fraction = (match[4] ?? '').padEnd(3, '0');
  let cents = whole * 100n + BigInt(fraction.slice(0, 2)) + (Number(fraction[2]) >= 5 ? 1n : 0n);
  if (cents > 9223372036854775807n) throw badRequest(`value "${text}" is out of range for type money`, 'Write a smaller amount.');
  if (match[1] || match[2]) cents = -cents;
  const sign = cents < 0n ? '-' : '';
  const digits = (cents < 0n ? -cents : cents).toString().padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** A money number as PostgreSQL writes it under lc_monetary C: '$1,234.50', '-$0.25' (runtime/numeric-macros.ts). */
const moneyText = (number: Node): Node => engineCall('vdb_money_text', [number]);

/** Text read as a date, time or other typed value: checked against what PostgreSQL reads, as a literal or in the engine. */
const textInputCast: CastRule = ({ cast, arg, type, arrayBounds, literal, stringLiteral }) => {
  const input = arrayBounds ? undefined : TEXT_INPUT.find((rule) => rule.types.has(type));
  if (!input) return null;
  const text = stringLiteral ? literal : null;
  if (text !== null && input.types.has('date')) {
    const bc = bcDateTimeInput(text);
    if (bc !== null) return { TypeCast: { ...cast, arg: stringConst(bc) } };
    if (/^\s*0+-/.test(text))
      throw badRequest(`date/time field value out of range: "${text}"`, 'PostgreSQL has no year 0: 1 BC is written 0001-01-01 BC.');
  }
  if (text !== null) {
    const zoned = input.types.has('date') ? isoZoneInput(text) : null;
    if (zoned !== null) return { TypeCast: { ...cast, arg: stringConst(zoned) } };
    // ISO 8601 goes as it is, but with an offset, which the engine reads in fewer forms.
    const offset = /:\d{2}(\.\d*)?\s*([+-]\d|z\s*$)/i.test(text);
    if (input.pattern.test(text) && !(offset && DATE_TIME_INPUTS.has(type))) return null;
    if (DATE_TIME_INPUTS.has(type)) return dateTimeLiteral(text, cast, type as DateTimeType);
    throw notAsPostgres(`The ${type} input '${text}' (${input.why})`, input.hint);
  }
  if (literal !== null || isVolatile(arg)) return null;
  // Text that reaches the cast while the statement runs is checked the same way, in the engine.
  const wrong: Node = {
    BoolExpr: {
      boolop: 'AND_EXPR',
      args: [
        typeIs(arg, ['VARCHAR']),
        { BoolExpr: { boolop: 'NOT_EXPR', args: [call('regexp_full_match', [asVarchar(arg), stringConst(input.pattern.source)])] } },
      ],
    },
  };
  // Dates and times in other forms are read per value as PostgreSQL reads them (runtime/datetime-functions.ts).
  const read: TypeCast = { ...cast, arg: engineCall('vdb_datetime_in', [asVarchar(arg), stringConst(type)]) };
  written.add(read);
  const failure = DATE_TIME_INPUTS.has(type)
    ? { TypeCast: read }
    : call('error', [
        stringConst(
          `${type} input cast while the statement runs is not supported by vdb's engine in this form (${input.why}); ${input.hint}`,
        ),
      ]);
  const checked = { ...cast };
  written.add(checked);
  return { CaseExpr: { args: [{ CaseWhen: { expr: wrong, result: failure } }], defresult: { TypeCast: checked } } };
};

/**
 * A cast to bytea: text read as PostgreSQL reads it (runtime/bytea-input.ts: `\x6162` is two
 * bytes, the engine's cast reads `\x61` as one and `62` as two more; the escape form `\ooo`),
 * a literal here, text of a table per value; a bytea stays as it is.
 */
const byteaCast: CastRule = ({ arg, type, arrayBounds, literal, stringLiteral }) => {
  if (type !== 'bytea' || arrayBounds) return undefined;
  if (stringLiteral && literal !== null) return engineCall('unhex', [stringConst(byteaHex(literal))]);
  if (literal !== null || isVolatile(arg)) return undefined;
  // A blob stays as it is; other types fail to bind, as PostgreSQL refuses their casts to bytea.
  return engineCall('vdb_bytea_in', [arg]);
};

/**
 * A numeric literal cast to a float (0.48959407210350037::float8): read from its text, rounded
 * once as PostgreSQL reads it; the engine's DECIMAL to DOUBLE rounds twice past 15 digits.
 */
const floatLiteralCast: CastRule = ({ cast, arg, type, arrayBounds, literal }) => {
  if ((type !== 'float8' && type !== 'float4') || arrayBounds || !asKind(arg, 'A_Const')?.fval || literal === null) return undefined;
  // Out of the type's range (to an infinity, or a nonzero value to zero): PostgreSQL's error.
  const value = type === 'float4' ? Math.fround(Number(literal)) : Number(literal);
  const digits = literal.replace(/[eE].*$/, '');
  if (!Number.isFinite(value) || (value === 0 && /[1-9]/.test(digits))) {
    const name = type === 'float4' ? 'real' : 'double precision';
    throw badRequest(`"${literal}" is out of range for type ${name}`, 'Write a value within the range of the type.');
  }
  return { TypeCast: { ...cast, arg: stringConst(literal) } };
};

/**
 * A value cast to a float while the statement runs: a numeric one goes through its text, rounded
 * once as PostgreSQL rounds it (numeric to float reads the number's text); the engine's DECIMAL
 * to DOUBLE rounds twice past 15 digits (0.48959407210350037 became 0.4895940721035004).
 */
const decimalFloatCast: CastRule = ({ cast, arg, type, arrayBounds, literal }) => {
  if ((type !== 'float8' && type !== 'float4') || arrayBounds || literal !== null || isVolatile(arg)) return undefined;
  const viaText: TypeCast = { arg: asVarchar(arg), typeName: cast.typeName };
  const direct: TypeCast = { ...cast };
  written.add(viaText);
  written.add(direct);
  const decimal = call('starts_with', [call('typeof', [arg]), stringConst('DECIMAL')]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: decimal, result: { TypeCast: viaText } } }], defresult: { TypeCast: direct } } };
};

const CAST_RULES: CastRule[] = [
  byteaCast,
  nameCast,
  moneyCast,
  floatLiteralCast,
  decimalFloatCast,
  numericCast,
  intervalLiteralCast,
  intervalFieldCast,
  shapeCast,
  textInputCast,
];

/** A cast as the engine must write it to give PostgreSQL's value, or null when it needs nothing. */
export function checkedCast(cast: TypeCast): Node | null {
  const arg = cast.arg;
  // The parser gives every cast an argument.
  if (!arg) return null;
  const parts: CastParts = {
    cast,
    arg,
    type: typeNameOf(cast.typeName),
    typmods: cast.typeName?.typmods,
    arrayBounds: cast.typeName?.arrayBounds,
    literal: literalText(arg),
    stringLiteral: isStringConst(arg),
  };
  for (const rule of CAST_RULES) {
    const written = rule(parts);
    if (written !== undefined) return written;
  }
  return null;
}

/**
 * `value` as text the way PostgreSQL writes it, where the engine writes it otherwise: floats
 * without the engine's ".0" (2, not 2.0) and NaN/Infinity spelled out; bytea as \x hex;
 * intervals with "mon(s)"; booleans as t/f where PostgreSQL uses the type's output (concat);
 * arrays refused (PostgreSQL writes {1,2}). Decided
 * by the value's type in the engine; null when `value` cannot be duplicated.
 */
export function postgresText(value: Node, booleans: 'true' | 't'): Node | null {
  if (isVolatile(value)) return null;
  return evaluatedOnce(value, (once) => textByType(once, booleans));
}

/** postgresText of `value`, which it writes many times. */
function textByType(value: Node, booleans: 'true' | 't'): Node {
  const float: Node = { TypeCast: { arg: asVarchar(value), typeName: typeNamed('double') } };
  const floatText: Node = {
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
            result: asVarchar({ TypeCast: { arg: float, typeName: typeNamed('bigint') } }),
          },
        },
      ],
      defresult: asVarchar(float),
    },
  };
  const cases: Node[] = [
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
  const bytes: Node = { TypeCast: { arg: asVarchar(value), typeName: typeNamed('blob') } };
  cases.push({ CaseWhen: { expr: typeIs(value, ['BLOB']), result: op('||', stringConst('\\x'), call('lower', [call('hex', [bytes])])) } });
  const replaced = POSTGRES_INTERVAL_TEXT.replacements.reduce<Node>(
    (text, [from, to]) => call('replace', [text, stringConst(from), stringConst(to)]),
    asVarchar(value),
  );
  const { minusOne, plusAfterMinus } = POSTGRES_INTERVAL_TEXT;
  const plural = engineCall('regexp_replace', [
    replaced,
    stringConst(minusOne.pattern),
    stringConst(minusOne.replacement),
    stringConst('g'),
  ]);
  const months = engineCall('regexp_replace', [
    plural,
    stringConst(plusAfterMinus.pattern),
    stringConst(plusAfterMinus.replacement),
    stringConst('g'),
  ]);
  cases.push({ CaseWhen: { expr: typeIs(value, ['INTERVAL']), result: months } });
  cases.push({ CaseWhen: { expr: typeIs(value, DATE_TIME_TYPES), result: postgresDateTimeText(asVarchar(value), ' ') } });
  if (booleans === 't') cases.push({ CaseWhen: { expr: typeIs(value, ['BOOLEAN']), result: call('left', [asVarchar(value), int(1)]) } });
  return { CaseExpr: { args: cases, defresult: asVarchar(value) } };
}

const TEXT_TYPES = new Set(['text', 'varchar']);

/** The types whose literals datetime-input.ts reads. */
const DATE_TIME_INPUTS = new Set(['date', 'timestamp', 'timestamptz', 'time']);

/** The engine's names of the date and time types whose text marks years before 1 otherwise than PostgreSQL's. */
export const DATE_TIME_TYPES = ['DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE'];

/**
 * The engine's text of a date or timestamp (`text`) as PostgreSQL writes it: before year 1 the
 * engine writes "0044-03-15 (BC) 10:00:00+00", PostgreSQL "0044-03-15 10:00:00+00 BC" (JSON
 * joins the date and time with "T"); later values are written alike (but for JSON's "T").
 */
export function postgresDateTimeText(text: Node, separator: ' ' | 'T', offsetTail = ''): Node {
  const plain = call('replace', [text, stringConst(' (BC)'), stringConst('')]);
  const joined = separator === ' ' ? plain : call('replace', [plain, stringConst(' '), stringConst(separator)]);
  const bc = op('||', joined, stringConst(`${offsetTail} BC`));
  const later = separator === ' ' ? text : call('replace', [text, stringConst(' '), stringConst(separator)]);
  const tail = offsetTail ? op('||', later, stringConst(offsetTail)) : later;
  const cases: Node[] = [{ CaseWhen: { expr: call('contains', [text, stringConst(' (BC)')]), result: bc } }];
  // ±infinity take no offset.
  if (offsetTail) cases.push({ CaseWhen: { expr: call('suffix', [text, stringConst('infinity')]), result: text } });
  return { CaseExpr: { args: cases, defresult: tail } };
}

/**
 * A one-dimensional array written as PostgreSQL text ('{1,2,NULL}', '{"a b",c}') as an ARRAY of
 * casts of its elements; other forms (nested, with bounds) are refused.
 */
function arrayLiteral(text: string, cast: TypeCast): Node {
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
  const typeName = cast.typeName;
  const elementType: TypeName = { ...typeName, arrayBounds: undefined };
  const items = elements.map((element): Node =>
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

/** quote_literal's text: in quotes, quotes doubled; with backslashes, PostgreSQL's E'' form. */
export function quotedLiteral(text: Node): Node {
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

/**
 * PostgreSQL 15's keywords that are not unreserved (pg_get_keywords() where catcode <> 'U'):
 * quote_ident quotes them.
 */
const QUOTED_KEYWORDS: readonly string[] = (
  'all analyse analyze and any array as asc asymmetric authorization between bigint binary bit boolean both case ' +
  'cast char character check coalesce collate collation column concurrently constraint create cross ' +
  'current_catalog current_date current_role current_schema current_time current_timestamp current_user dec ' +
  'decimal default deferrable desc distinct do else end except exists extract false fetch float for foreign ' +
  'freeze from full grant greatest group grouping having ilike in initially inner inout int integer intersect ' +
  'interval into is isnull join lateral leading least left like limit localtime localtimestamp national natural ' +
  'nchar none normalize not notnull null nullif numeric offset on only or order out outer overlaps overlay ' +
  'placing position precision primary real references returning right row select session_user setof similar ' +
  'smallint some substring symmetric table tablesample then time timestamp to trailing treat trim true union ' +
  'unique user using values varchar variadic verbose when where window with xmlattributes xmlconcat xmlelement ' +
  'xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable'
).split(' ');

/**
 * quote_ident's text (and format's %I): as it is when it is lower case letters, digits and
 * underscores, not starting with a digit, and no keyword but an unreserved one; else in double
 * quotes, quotes doubled.
 */
export function quotedIdent(text: Node): Node {
  const plain: Node = {
    BoolExpr: {
      boolop: 'AND_EXPR',
      args: [
        call('regexp_full_match', [text, stringConst('[a-z_][a-z0-9_]*')]),
        {
          BoolExpr: {
            boolop: 'NOT_EXPR',
            args: [engineCall('list_contains', [{ A_ArrayExpr: { elements: QUOTED_KEYWORDS.map((w) => stringConst(w)) } }, text])],
          },
        },
      ],
    },
  };
  const quoted = op('||', op('||', stringConst('"'), call('replace', [text, stringConst('"'), stringConst('""')])), stringConst('"'));
  return { CaseExpr: { args: [{ CaseWhen: { expr: plain, result: text } }], defresult: quoted } };
}

/** A value as format('%s') and quote_literal see it: PostgreSQL's text of the value. */
export function textOf(value: Node, booleans: 'true' | 't'): Node {
  const constant: A_Const | undefined = asKind(value, 'A_Const');
  if (constant) {
    if (constant.boolval) return stringConst(constant.boolval.boolval ? booleans : booleans === 't' ? 'f' : 'false');
    return constant.sval ? value : asVarchar(value);
  }
  return postgresText(value, booleans) ?? asVarchar(value);
}
