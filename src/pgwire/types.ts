/**
 * The result's types as PostgreSQL names them (type OIDs, sizes and modifiers for
 * RowDescription), and each value as PostgreSQL's text output writes it. Values come from the
 * JSON row texts the REST API sends (results/json.ts), so both front doors answer the same
 * values: only the spelling differs where JSON and PostgreSQL's text differ (booleans t/f,
 * a space between date and time, "+00" offsets, bytea as \x hex, arrays in braces).
 */
import { DuckDBTypeId, type DuckDBType } from '@duckdb/node-api';
import { isString, scanArrayRows, stringValue } from '../results/json-scan.js';
import type { ResultColumn } from '../results/json.js';
import { WireError } from './errors.js';

/** A type as RowDescription describes it. */
export interface PgType {
  oid: number;
  /** pg_type.typlen: bytes of a fixed-size type, -1 for variable size. */
  size: number;
  /** atttypmod: numeric(p, s) as ((p << 16) | s) + 4; -1 for none. */
  modifier: number;
}

/** Type OIDs (pg_type.oid), as PostgreSQL 15 numbers them. */
export const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  json: 114,
  float4: 700,
  float8: 701,
  unknown: 705,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  timetz: 1266,
  numeric: 1700,
  uuid: 2950,
  jsonb: 3802,
} as const;

/** The array type of each element type (pg_type.typarray). */
const ARRAY_OF: Record<number, number> = {
  [OID.bool]: 1000,
  [OID.bytea]: 1001,
  [OID.int2]: 1005,
  [OID.int4]: 1007,
  [OID.text]: 1009,
  [OID.int8]: 1016,
  [OID.float4]: 1021,
  [OID.float8]: 1022,
  [OID.timestamp]: 1115,
  [OID.date]: 1182,
  [OID.time]: 1183,
  [OID.timestamptz]: 1185,
  [OID.interval]: 1187,
  [OID.numeric]: 1231,
  [OID.timetz]: 1270,
  [OID.uuid]: 2951,
  [OID.json]: 199,
  [OID.jsonb]: 3807,
};

const fixed = (oid: number, size: number): PgType => ({ oid, size, modifier: -1 });
const variable = (oid: number): PgType => ({ oid, size: -1, modifier: -1 });

/** The struct of one text field vdb uses for PostgreSQL's numeric and json values (results/json.ts). */
const textStructOid = (type: DuckDBType): number | null => {
  const text = type.toString();
  if (text === 'STRUCT("pg numeric" VARCHAR)') return OID.numeric;
  if (text === 'STRUCT("pg json" VARCHAR)') return OID.json;
  return null;
};

/** How PostgreSQL describes a column of the engine's type `type`. */
export function pgTypeOf(type: DuckDBType): PgType {
  if (type.alias === 'JSON') return variable(OID.json);
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return fixed(OID.bool, 1);
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.UTINYINT:
      return fixed(OID.int2, 2);
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.USMALLINT:
      return fixed(OID.int4, 4);
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UINTEGER:
      return fixed(OID.int8, 8);
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
      return variable(OID.numeric);
    case DuckDBTypeId.DECIMAL:
      return { oid: OID.numeric, size: -1, modifier: ((type.width << 16) | type.scale) + 4 };
    case DuckDBTypeId.FLOAT:
      return fixed(OID.float4, 4);
    case DuckDBTypeId.DOUBLE:
      return fixed(OID.float8, 8);
    case DuckDBTypeId.DATE:
      return fixed(OID.date, 4);
    case DuckDBTypeId.TIME:
      return fixed(OID.time, 8);
    case DuckDBTypeId.TIME_TZ:
      return fixed(OID.timetz, 12);
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return fixed(OID.timestamp, 8);
    case DuckDBTypeId.TIMESTAMP_TZ:
      return fixed(OID.timestamptz, 8);
    case DuckDBTypeId.INTERVAL:
      return fixed(OID.interval, 16);
    case DuckDBTypeId.BLOB:
      return variable(OID.bytea);
    case DuckDBTypeId.UUID:
      return fixed(OID.uuid, 16);
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY: {
      const element = pgTypeOf(type.valueType).oid;
      return variable(ARRAY_OF[element] ?? 1009);
    }
    case DuckDBTypeId.STRUCT:
      return variable(textStructOid(type) ?? OID.text);
    default:
      return variable(OID.text);
  }
}

/** Turns one JSON value token of a column into PostgreSQL's text of the value (null: SQL NULL). */
export type ValueText = (token: string) => string | null;

const plain: ValueText = (token) => (token === 'null' ? null : isString(token) ? stringValue(token) : token);

const jsonText: ValueText = (token) => (token === 'null' ? null : token);

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** bytea's hex output: \x then two hex digits per byte. */
const byteaText = (base64: string): string => {
  const bytes = Buffer.from(base64, 'base64');
  let out = '\\x';
  for (const byte of bytes) out += HEX[byte]!;
  return out;
};

/** "2024-01-02T03:04:05" -> "2024-01-02 03:04:05" (only the first T: a BC suffix has none). */
const spaced = (text: string) => text.replace('T', ' ');

/** A timestamptz's JSON text (always UTC, "+00:00") as PostgreSQL writes it with TimeZone UTC: "+00". */
const utcText = (text: string) => spaced(text).replace(/([+-]\d\d):00( BC)?$/, '$1$2');

/** How a JSON token of each type becomes PostgreSQL's text. */
export function valueTextOf(type: DuckDBType): ValueText {
  // A json value is its JSON text as it stands in the row (a string keeps its quotes).
  if (type.alias === 'JSON') return jsonText;
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return (token) => (token === 'null' ? null : token === 'true' ? 't' : 'f');
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return (token) => (token === 'null' ? null : spaced(stringValue(token)));
    case DuckDBTypeId.TIMESTAMP_TZ:
      return (token) => (token === 'null' ? null : utcText(stringValue(token)));
    case DuckDBTypeId.BLOB:
      return (token) => (token === 'null' ? null : byteaText(stringValue(token)));
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return arrayText(valueTextOf(type.valueType));
    default:
      return plain;
  }
}

/** Whether an array element must be quoted (array_out's rule): empty, NULL, specials, spaces. */
const NEEDS_QUOTES = /^$|^null$|[{},"\\\s]/i;

/** A JSON array of values as PostgreSQL's array text: {1,2,NULL}, {"a b","c\"d"}, nested braces. */
function arrayText(element: ValueText): ValueText {
  const text = (token: string): string | null => {
    if (token === 'null') return null;
    const parts: string[] = [];
    scanArrayRows(
      token,
      (_, start, end) => {
        const item = token.slice(start, end);
        if (item.startsWith('[')) {
          parts.push(text(item) ?? 'NULL');
          return;
        }
        const value = element(item);
        parts.push(value === null ? 'NULL' : NEEDS_QUOTES.test(value) ? `"${value.replace(/["\\]/g, '\\$&')}"` : value);
      },
      () => undefined,
    );
    return `{${parts.join(',')}}`;
  };
  return text;
}

/** The converters of each list of columns: a known statement's columns are the same list each time. */
const converters = new WeakMap<readonly ResultColumn[], ValueText[]>();

/** The converters of a result's columns, in order. */
export function columnTexts(columns: readonly ResultColumn[]): ValueText[] {
  let texts = converters.get(columns);
  if (!texts) converters.set(columns, (texts = columns.map((c) => valueTextOf(c.type))));
  return texts;
}

/**
 * A value in binary format, from its text: the integers, floats and booleans; other types are
 * refused, so a client that asks for them in binary learns it rather than reading wrong bytes.
 */
export function binaryValue(text: string, type: DuckDBType): Buffer {
  const { oid } = pgTypeOf(type);
  const out = Buffer.allocUnsafe(oid === OID.int2 ? 2 : oid === OID.int4 || oid === OID.float4 ? 4 : oid === OID.bool ? 1 : 8);
  switch (oid) {
    case OID.bool:
      out[0] = text === 't' ? 1 : 0;
      return out;
    case OID.int2:
      out.writeInt16BE(Number(text));
      return out;
    case OID.int4:
      out.writeInt32BE(Number(text));
      return out;
    case OID.int8:
      out.writeBigInt64BE(BigInt(text));
      return out;
    case OID.float4:
      out.writeFloatBE(Number(text));
      return out;
    case OID.float8:
      out.writeDoubleBE(Number(text));
      return out;
    default:
      throw new WireError('0A000', `vdb sends values of type ${oid} in text format only.`, 'Ask for this column in text format.');
  }
}
