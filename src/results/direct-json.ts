/**
 * Source values to the response's JSON in JS, without the engine: for the rows of a statement
 * that MySQL/MariaDB or SQLite runs whole (source-select route). Each value is written exactly
 * as the engine path writes it after its load (load.ts: the raw class, then TRY_CAST to the
 * result column's type; json.ts: the JSON of that type). Where the engine would turn a value
 * into NULL with a warning, round it, or convert it lossy, the encoder gives `DECLINE` instead,
 * and the caller hands the rows to the engine: the direct path only writes what it is sure of.
 */
import { DuckDBTypeId } from '@duckdb/node-api';
import type { RawType } from '../connectors/types.js';
import type { ResultColumn } from './json.js';

/** The encoder's answer for a value it does not write as the engine would for certain. */
export const DECLINE = Symbol('decline');

/** One column's values to their JSON texts (or DECLINE). */
export type ValueEncoder = (value: unknown) => string | typeof DECLINE;

/** Ranges of the integer types the load casts to. */
const INTEGER_RANGES = new Map<DuckDBTypeId, readonly [bigint, bigint]>([
  [DuckDBTypeId.TINYINT, [-128n, 127n]],
  [DuckDBTypeId.SMALLINT, [-32768n, 32767n]],
  [DuckDBTypeId.INTEGER, [-2147483648n, 2147483647n]],
  [DuckDBTypeId.BIGINT, [-(2n ** 63n), 2n ** 63n - 1n]],
  [DuckDBTypeId.HUGEINT, [-(2n ** 127n), 2n ** 127n - 1n]],
  [DuckDBTypeId.UTINYINT, [0n, 255n]],
  [DuckDBTypeId.USMALLINT, [0n, 65535n]],
  [DuckDBTypeId.UINTEGER, [0n, 4294967295n]],
  [DuckDBTypeId.UBIGINT, [0n, 2n ** 64n - 1n]],
]);

const INT64: readonly [bigint, bigint] = [-(2n ** 63n), 2n ** 63n - 1n];
const DIGITS = /^-?\d+$/;
const DECIMAL_TEXT = /^(-?)(\d+)(?:\.(\d+))?$/;
const DOUBLE_TEXT = /^-?\d+(\.\d*)?(e[-+]?\d+)?$/i;
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP_TEXT = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

/**
 * The encoders of a result's columns, or null when a column's type is not one the direct path
 * writes (FLOAT, INTERVAL, JSON, ...: those results take the engine path).
 */
export function directEncoders(columns: readonly ResultColumn[], raws: readonly RawType[]): ValueEncoder[] | null {
  const encoders: ValueEncoder[] = [];
  for (const [i, column] of columns.entries()) {
    const encoder = encoderOf(column, raws[i]!);
    if (!encoder) return null;
    encoders.push(encoder);
  }
  return encoders;
}

function encoderOf(column: ResultColumn, raw: RawType): ValueEncoder | null {
  const { type } = column;
  const range = INTEGER_RANGES.get(type.typeId);
  const nullable =
    (encode: (value: unknown) => string | typeof DECLINE): ValueEncoder =>
    (value) =>
      value === null || value === undefined ? 'null' : encode(value);
  if (range) {
    if (raw !== 'BIGINT' && raw !== 'VARCHAR') return null;
    return nullable((value) => {
      const n = integerOf(value, raw);
      return n === null || n < range[0] || n > range[1] ? DECLINE : n.toString();
    });
  }
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      if (raw !== 'BIGINT') return null;
      return nullable((value) => {
        const n = integerOf(value, raw);
        return n === null ? DECLINE : n !== 0n ? 'true' : 'false';
      });
    case DuckDBTypeId.DECIMAL: {
      const [, width, scale] = /DECIMAL\((\d+),\s*(\d+)\)/i.exec(type.toString()) ?? [];
      if (raw !== 'VARCHAR' || width === undefined || scale === undefined) return null;
      return nullable((value) => decimalJson(textOf(value), Number(width), Number(scale)));
    }
    case DuckDBTypeId.DOUBLE:
      if (raw === 'DOUBLE') return nullable((value) => (typeof value === 'number' ? postgresDouble(value) : DECLINE));
      if (raw !== 'VARCHAR') return null;
      return nullable((value) => {
        const text = textOf(value);
        if (text === null || !DOUBLE_TEXT.test(text)) return DECLINE;
        const n = Number(text);
        return Number.isFinite(n) ? postgresDouble(n) : DECLINE;
      });
    case DuckDBTypeId.DATE:
      if (raw !== 'VARCHAR') return null;
      return nullable((value) => {
        const m = typeof value === 'string' ? DATE_TEXT.exec(value) : null;
        return m && validDate(m[1]!, m[2]!, m[3]!) ? `"${value as string}"` : DECLINE;
      });
    case DuckDBTypeId.TIMESTAMP:
      if (raw !== 'VARCHAR') return null;
      return nullable((value) => {
        const m = typeof value === 'string' ? TIMESTAMP_TEXT.exec(value) : null;
        if (!m || !validDate(m[1]!, m[2]!, m[3]!) || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return DECLINE;
        // The engine writes the fraction without its trailing zeros, and none when it is zero.
        const fraction = (m[7] ?? '').replace(/0+$/, '');
        return `"${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${fraction ? `.${fraction}` : ''}"`;
      });
    case DuckDBTypeId.BLOB:
      if (raw !== 'BLOB') return null;
      return nullable((value) => {
        const bytes =
          value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : Buffer.from(String(value), 'utf8');
        return `"${bytes.toString('base64')}"`;
      });
    case DuckDBTypeId.VARCHAR:
      // JSON is an alias of VARCHAR: its text passes through the engine's JSON cast (not here).
      if (raw !== 'VARCHAR' || type.alias) return null;
      return nullable((value) => {
        const text = textOf(value);
        return text === null ? DECLINE : jsonString(text);
      });
    default:
      return null;
  }
}

/** The text the load appends for a VARCHAR raw value (appendValue): strings, and numbers as String() writes them. */
function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  return null;
}

/** An integer as the load reads it in its raw class, or null where it would round, warn or fail. */
function integerOf(value: unknown, raw: RawType): bigint | null {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  else if (typeof value === 'string' && DIGITS.test(value)) n = BigInt(value);
  else return null;
  // A BIGINT raw class holds 64 bits; beyond, the append would fail.
  if (raw === 'BIGINT' && (n < INT64[0] || n > INT64[1])) return null;
  return n;
}

/**
 * A decimal's JSON as the engine writes it: the digits with the column's scale (1.50), no sign
 * on zero. Text that the cast would round (more fraction digits than the scale) or that does
 * not fit (NULL and a warning) is declined.
 */
function decimalJson(text: string | null, width: number, scale: number): string | typeof DECLINE {
  const m = text === null ? null : DECIMAL_TEXT.exec(text);
  if (!m) return DECLINE;
  const [, sign, whole, fraction = ''] = m;
  if (fraction.length > scale) return DECLINE;
  const integer = whole!.replace(/^0+/, '');
  if (integer.length > width - scale) return DECLINE;
  const digits = fraction.padEnd(scale, '0');
  const zero = integer === '' && /^0*$/.test(digits);
  return `${sign && !zero ? '-' : ''}${integer || '0'}${scale > 0 ? `.${digits}` : ''}`;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A calendar date from year 1 to 9999 (the engine writes those with four digits, as given). */
function validDate(y: string, m: string, d: string): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS[month - 1]!);
}

/**
 * A double as PostgreSQL writes it (float8out), as the engine path writes it (json.ts,
 * floatJsonSql): the shortest digits that read back as the same value, in exponent form
 * (1e+15, 1.5e-07) when the decimal exponent is below -4 or at least 15, else positional, whole
 * numbers without a fraction, -0 signed; NaN and the infinities as JSON strings.
 */
export function postgresDouble(x: number): string {
  if (Number.isNaN(x)) return '"NaN"';
  if (x === Infinity) return '"Infinity"';
  if (x === -Infinity) return '"-Infinity"';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const sign = x < 0 ? '-' : '';
  // toExponential() without an argument: the shortest digits that identify the value.
  const [mantissa, exponentText] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 15) {
    const magnitude = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${exponent < 0 ? '-' : '+'}${magnitude}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A superset of what needs escaping (control characters of U+007F to U+009F too: the loop leaves those). */
const NEEDS_ESCAPE = /["\\\p{Cc}]/u;
const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A JSON string as the engine's json_array writes it: quotes and backslashes escaped, control
 * characters as \b \f \n \r \t or \u00XX (upper-case hex), everything else as it is (/, DEL,
 * U+2028 included). A string that is not well formed (a lone surrogate) is declined.
 */
export function jsonString(text: string): string | typeof DECLINE {
  if (LONE_SURROGATE.test(text)) return DECLINE;
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  let out = '"';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    out += SHORT_ESCAPES[ch] ?? (code < 0x20 ? `\\u${code.toString(16).toUpperCase().padStart(4, '0')}` : ch);
  }
  return `${out}"`;
}

/** One row's JSON as an array or an object (`keys`: the column names as JSON strings with their colon). */
export function rowJson(values: readonly string[], keys: readonly string[] | null): string {
  if (!keys) return `[${values.join(',')}]`;
  let out = '{';
  for (let i = 0; i < values.length; i++) out += `${i > 0 ? ',' : ''}${keys[i]}${values[i]}`;
  return `${out}}`;
}
