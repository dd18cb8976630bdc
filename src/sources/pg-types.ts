/**
 * PostgreSQL's types as its catalog describes them (pg_type, format_type, information_schema's
 * data_type), and the engine's column types in those terms: what pg_catalog and
 * information_schema (pg-catalog.ts, information-schema.ts) say of each column, the same types
 * the PostgreSQL listener describes a result's columns with (pgwire/types.ts).
 */

/** One row of pg_type: oid, typname, typlen, typbyval, typcategory, typelem, typarray, typalign, typstorage, format_type's name, typinput. */
type TypeRow = [number, string, number, boolean, string, number, number, string, string, string, string];

/** The types vdb's values and catalogs use, as PostgreSQL 15 numbers and names them. */
export const PG_TYPES: readonly TypeRow[] = [
  [16, 'bool', 1, true, 'B', 0, 1000, 'c', 'p', 'boolean', 'boolin'],
  [17, 'bytea', -1, false, 'U', 0, 1001, 'i', 'x', 'bytea', 'byteain'],
  [18, 'char', 1, true, 'Z', 0, 1002, 'c', 'p', '"char"', 'charin'],
  [19, 'name', 64, false, 'S', 18, 1003, 'c', 'p', 'name', 'namein'],
  [20, 'int8', 8, true, 'N', 0, 1016, 'd', 'p', 'bigint', 'int8in'],
  [21, 'int2', 2, true, 'N', 0, 1005, 's', 'p', 'smallint', 'int2in'],
  [22, 'int2vector', -1, false, 'A', 21, 1006, 'i', 'p', 'int2vector', 'int2vectorin'],
  [23, 'int4', 4, true, 'N', 0, 1007, 'i', 'p', 'integer', 'int4in'],
  [24, 'regproc', 4, true, 'N', 0, 1008, 'i', 'p', 'regproc', 'regprocin'],
  [25, 'text', -1, false, 'S', 0, 1009, 'i', 'x', 'text', 'textin'],
  [26, 'oid', 4, true, 'N', 0, 1028, 'i', 'p', 'oid', 'oidin'],
  [30, 'oidvector', -1, false, 'A', 26, 1013, 'i', 'p', 'oidvector', 'oidvectorin'],
  [114, 'json', -1, false, 'U', 0, 199, 'i', 'x', 'json', 'json_in'],
  [199, '_json', -1, false, 'A', 114, 0, 'i', 'x', 'json[]', 'array_in'],
  [700, 'float4', 4, true, 'N', 0, 1021, 'i', 'p', 'real', 'float4in'],
  [701, 'float8', 8, true, 'N', 0, 1022, 'd', 'p', 'double precision', 'float8in'],
  [1000, '_bool', -1, false, 'A', 16, 0, 'i', 'x', 'boolean[]', 'array_in'],
  [1001, '_bytea', -1, false, 'A', 17, 0, 'i', 'x', 'bytea[]', 'array_in'],
  [1005, '_int2', -1, false, 'A', 21, 0, 'i', 'x', 'smallint[]', 'array_in'],
  [1007, '_int4', -1, false, 'A', 23, 0, 'i', 'x', 'integer[]', 'array_in'],
  [1009, '_text', -1, false, 'A', 25, 0, 'i', 'x', 'text[]', 'array_in'],
  [1015, '_varchar', -1, false, 'A', 1043, 0, 'i', 'x', 'character varying[]', 'array_in'],
  [1016, '_int8', -1, false, 'A', 20, 0, 'd', 'x', 'bigint[]', 'array_in'],
  [1021, '_float4', -1, false, 'A', 700, 0, 'i', 'x', 'real[]', 'array_in'],
  [1022, '_float8', -1, false, 'A', 701, 0, 'd', 'x', 'double precision[]', 'array_in'],
  [1028, '_oid', -1, false, 'A', 26, 0, 'i', 'x', 'oid[]', 'array_in'],
  [1043, 'varchar', -1, false, 'S', 0, 1015, 'i', 'x', 'character varying', 'varcharin'],
  [1082, 'date', 4, true, 'D', 0, 1182, 'i', 'p', 'date', 'date_in'],
  [1083, 'time', 8, true, 'D', 0, 1183, 'd', 'p', 'time without time zone', 'time_in'],
  [1114, 'timestamp', 8, true, 'D', 0, 1115, 'd', 'p', 'timestamp without time zone', 'timestamp_in'],
  [1115, '_timestamp', -1, false, 'A', 1114, 0, 'd', 'x', 'timestamp without time zone[]', 'array_in'],
  [1182, '_date', -1, false, 'A', 1082, 0, 'i', 'x', 'date[]', 'array_in'],
  [1183, '_time', -1, false, 'A', 1083, 0, 'd', 'x', 'time without time zone[]', 'array_in'],
  [1184, 'timestamptz', 8, true, 'D', 0, 1185, 'd', 'p', 'timestamp with time zone', 'timestamptz_in'],
  [1185, '_timestamptz', -1, false, 'A', 1184, 0, 'd', 'x', 'timestamp with time zone[]', 'array_in'],
  [1186, 'interval', 16, false, 'T', 0, 1187, 'd', 'p', 'interval', 'interval_in'],
  [1187, '_interval', -1, false, 'A', 1186, 0, 'd', 'x', 'interval[]', 'array_in'],
  [1231, '_numeric', -1, false, 'A', 1700, 0, 'i', 'x', 'numeric[]', 'array_in'],
  [1700, 'numeric', -1, false, 'N', 0, 1231, 'i', 'm', 'numeric', 'numeric_in'],
  [2205, 'regclass', 4, true, 'N', 0, 2210, 'i', 'p', 'regclass', 'regclassin'],
  [2206, 'regtype', 4, true, 'N', 0, 2211, 'i', 'p', 'regtype', 'regtypein'],
  [2950, 'uuid', 16, false, 'U', 0, 2951, 'c', 'p', 'uuid', 'uuid_in'],
  [2951, '_uuid', -1, false, 'A', 2950, 0, 'i', 'x', 'uuid[]', 'array_in'],
  [3802, 'jsonb', -1, false, 'U', 0, 3807, 'i', 'x', 'jsonb', 'jsonb_in'],
  [3807, '_jsonb', -1, false, 'A', 3802, 0, 'i', 'x', 'jsonb[]', 'array_in'],
];

export interface PgColumnType {
  oid: number;
  /** atttypmod: numeric(p, s) as ((p << 16) | s) + 4; -1 for none. */
  typmod: number;
  /** numeric's precision and scale, when declared. */
  precision: number | null;
  scale: number | null;
}

const SIMPLE: Record<string, number> = {
  BOOLEAN: 16,
  BOOL: 16,
  TINYINT: 21,
  SMALLINT: 21,
  UTINYINT: 21,
  INTEGER: 23,
  INT: 23,
  USMALLINT: 23,
  BIGINT: 20,
  UINTEGER: 20,
  HUGEINT: 1700,
  UBIGINT: 1700,
  UHUGEINT: 1700,
  FLOAT: 700,
  REAL: 700,
  DOUBLE: 701,
  VARCHAR: 25,
  TEXT: 25,
  DATE: 1082,
  TIME: 1083,
  TIMESTAMP: 1114,
  'TIMESTAMP WITH TIME ZONE': 1184,
  TIMESTAMPTZ: 1184,
  INTERVAL: 1186,
  BLOB: 17,
  UUID: 2950,
  JSON: 114,
};

const byOid = new Map(PG_TYPES.map((row) => [row[0], row]));

/** A column of the engine's type `type` (as the catalog keeps it: `DECIMAL(12,2)`, `VARCHAR[]`) in PostgreSQL's terms. */
export function pgColumnType(type: string): PgColumnType {
  const text = type.trim().toUpperCase().replace(/\s+/g, ' ');
  if (text.endsWith('[]')) {
    const element = pgColumnType(text.slice(0, -2));
    const array = byOid.get(element.oid)?.[6] ?? 1009;
    return { oid: array, typmod: element.typmod, precision: null, scale: null };
  }
  const decimal = /^(?:DECIMAL|NUMERIC)\s*\((\d+)\s*,\s*(\d+)\)$/.exec(text);
  if (decimal) {
    const [precision, scale] = [Number(decimal[1]), Number(decimal[2])];
    return { oid: 1700, typmod: ((precision << 16) | scale) + 4, precision, scale };
  }
  // Anything else (structs, maps, enums) is written as text, as the listener describes it.
  return { oid: SIMPLE[text] ?? 25, typmod: -1, precision: null, scale: null };
}

/** format_type(oid, typmod): `integer`, `numeric(12,2)`, `text[]`; null for an unknown type. */
export function formatType(oid: number, typmod: number | null): string | null {
  const row = byOid.get(oid);
  if (!row) return null;
  const name = row[9];
  if (oid === 1700 && typmod !== null && typmod >= 4) return `numeric(${(typmod - 4) >> 16},${(typmod - 4) & 0xffff})`;
  if (oid === 1231 && typmod !== null && typmod >= 4) return `numeric(${(typmod - 4) >> 16},${(typmod - 4) & 0xffff})[]`;
  return name;
}

/** information_schema's data_type of a type: its SQL name, `ARRAY` for arrays. */
export const sqlDataType = (oid: number): string => (byOid.get(oid)?.[4] === 'A' ? 'ARRAY' : (formatType(oid, null) ?? 'text'));

/** pg_type's name of a type (`int4`, `_text`). */
export const typeName = (oid: number): string => byOid.get(oid)?.[1] ?? 'text';
