/**
 * Rows to JSON, done inside the engine: DuckDB turns each row into one JSON text (json_array or
 * json_object), and JS only concatenates those strings. No value passes through a JS object, so
 * 64-bit and 128-bit integers and decimals keep every digit and dates never become `Date`s.
 *
 * The type mapping (documented in docs/sql.md):
 *  - booleans, integers of every width, decimals: JSON numbers, exact
 *  - float/double: JSON numbers spelled as PostgreSQL spells them (floatJsonSql); NaN and
 *    ±Infinity as the strings "NaN", "Infinity", "-Infinity"
 *  - json: its text as it is
 *  - date: "YYYY-MM-DD"; timestamp: "YYYY-MM-DDTHH:MM:SS[.ffffff]"; timestamptz: UTC with "+00:00"
 *  - blob: base64 string; lists and structs: JSON arrays and objects
 *  - everything else (varchar, uuid, time, interval, enum, ...): its text
 */
import { DuckDBConnection, DuckDBTypeId, type DuckDBType } from '@duckdb/node-api';
import { quoteIdent, sqlLiteral, streamStatement } from '../runtime/duckdb.js';
import { VALUE_LIMIT_MARK } from '../runtime/value-macros.js';

export interface ResultColumn {
  name: string;
  type: DuckDBType;
}

export type RowShape = 'array' | 'object';

/** The alias of the i-th column inside the encoding query (names may repeat in results). */
export const columnAlias = (i: number) => `c${i}`;

/** Types whose own JSON (from json_array) is already the contract: numbers exact, text quoted. */
const AS_IS = new Set<DuckDBTypeId>([
  DuckDBTypeId.BOOLEAN,
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.LIST,
  DuckDBTypeId.ARRAY,
  DuckDBTypeId.STRUCT,
  DuckDBTypeId.MAP,
  DuckDBTypeId.SQLNULL,
  DuckDBTypeId.VARCHAR,
]);

/**
 * How PostgreSQL writes an interval where the engine's text differs: the month unit (1 mon,
 * 9 mons) and a unit of -1 in the plural (-1 days); the rest reads the same. Used for JSON here
 * and for casts to text in the engine (postgres-values.ts).
 */
export const POSTGRES_INTERVAL_TEXT = {
  replacements: [
    [' months', ' mons'],
    [' month', ' mon'],
  ],
  minusOne: { pattern: '(^|\\s)-1 (year|mon|day)(\\s|$)', replacement: '\\1-1 \\2s\\3' },
  // A positive field after a negative one takes a sign: -1 days +02:00:00.
  plusAfterMinus: { pattern: '(-\\d+ [a-z]+) (\\d)', replacement: '\\1 +\\2' },
} as const;

/** `text` (the engine's text of an interval) as PostgreSQL writes it, in the engine's SQL. */
function postgresIntervalSql(text: string): string {
  const replaced = POSTGRES_INTERVAL_TEXT.replacements.reduce(
    (sql, [from, to]) => `replace(${sql}, ${sqlLiteral(from)}, ${sqlLiteral(to)})`,
    text,
  );
  const { minusOne, plusAfterMinus } = POSTGRES_INTERVAL_TEXT;
  const plural = `regexp_replace(${replaced}, ${sqlLiteral(minusOne.pattern)}, ${sqlLiteral(minusOne.replacement)}, 'g')`;
  return `regexp_replace(${plural}, ${sqlLiteral(plusAfterMinus.pattern)}, ${sqlLiteral(plusAfterMinus.replacement)}, 'g')`;
}

/**
 * A finite date or timestamp before year 1 as PostgreSQL writes it, from the engine's text
 * `text`: the engine writes "0044-03-15 (BC) 10:00:00+00", PostgreSQL "0044-03-15 10:00:00+00 BC"
 * (in JSON the date and time joined by "T" and the offset completed: "+00:00 BC"). Also used for
 * casts to text in the engine (postgres-values.ts).
 */
export function bcText(text: string, separator: ' ' | 'T', offsetTail = ''): string {
  const plain = `replace(${text}, ' (BC)', '')`;
  return `${separator === ' ' ? plain : `replace(${plain}, ' ', ${sqlLiteral(separator)})`} || ${sqlLiteral(`${offsetTail} BC`)}`;
}

/** The expression that gives the JSON value of one column. */
export function jsonValueSql(column: string, type: DuckDBType): string {
  const c = quoteIdent(column);
  switch (type.typeId) {
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      // Rows splice these texts in (jsonRowsSql); as a JSON value the engine would spell it anew.
      return `json(${floatJsonSql(c, type.typeId)})`;
    case DuckDBTypeId.DATE:
      return `CASE WHEN ${c} < DATE '0001-01-01' AND isfinite(${c}) THEN ${bcText(`${c}::VARCHAR`, ' ')} ELSE ${c}::VARCHAR END`;
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return `CASE WHEN ${c} < TIMESTAMP '0001-01-01' AND isfinite(${c}) THEN ${bcText(`${c}::VARCHAR`, 'T')} ELSE replace(${c}::VARCHAR, ' ', 'T') END`;
    case DuckDBTypeId.TIMESTAMP_TZ:
      // Always UTC (the engine's time zone), with a full offset (+00:00) as PostgreSQL writes it.
      return `CASE WHEN NOT isfinite(${c}) THEN ${c}::VARCHAR WHEN ${c} < TIMESTAMPTZ '0001-01-01 00:00:00+00' THEN ${bcText(`${c}::VARCHAR`, 'T', ':00')} ELSE replace(${c}::VARCHAR, ' ', 'T') || ':00' END`;
    case DuckDBTypeId.BLOB:
      return `to_base64(${c})`;
    case DuckDBTypeId.INTERVAL:
      return postgresIntervalSql(`${c}::VARCHAR`);
    case DuckDBTypeId.DECIMAL: {
      // Decimals of 16+ digits are written from their digits, scale kept (1.50); the engine
      // writes narrower ones through a double, dropping trailing zeros, so they are widened.
      const [, width, scale] = /DECIMAL\((\d+),\s*(\d+)\)/i.exec(type.toString()) ?? [];
      return Number(width) < 16 ? `${c}::DECIMAL(18, ${Number(scale)})` : c;
    }
    default:
      if (AS_IS.has(type.typeId)) return c;
      if (type.alias === 'JSON') return c;
      return `${c}::VARCHAR`;
  }
}

/**
 * The JSON text of a float as PostgreSQL writes it (float4out/float8out): the shortest digits
 * that read back as the same value, in exponent form (1e+15, 1.5e-07: the exponent signed, two
 * digits at least) when the decimal exponent is below -4 or at least 15 (float4: 6), else
 * without one, and without a fraction when whole (100, -0); NaN and the infinities as strings.
 * The engine's text has the same digits and forms except that it writes exponents of up to 15
 * without one (1000000000000000.0, 1000000.0 for a float4) and whole numbers with ".0".
 */
export function floatJsonSql(c: string, typeId: DuckDBTypeId.FLOAT | DuckDBTypeId.DOUBLE): string {
  const text = `CAST(${c} AS VARCHAR)`;
  // From where PostgreSQL writes an exponent to where the engine starts to (1e16).
  const exponentFrom = typeId === DuckDBTypeId.FLOAT ? '1e6' : '1e15';
  const digits = `rtrim(regexp_replace(${text}, '[-.]', '', 'g'), '0')`;
  const exponent = `length(split_part(ltrim(${text}, '-'), '.', 1)) - 1`;
  // Most values take the first branches: whole numbers through BIGINT, others as the engine writes them.
  return `CASE WHEN ${c} IS NULL THEN 'null'
    WHEN NOT isfinite(${c}) THEN CASE WHEN isnan(${c}) THEN '"NaN"' WHEN ${c} > 0 THEN '"Infinity"' ELSE '"-Infinity"' END
    WHEN abs(${c}) < ${exponentFrom} THEN CASE WHEN ${c} <> trunc(${c}) THEN ${text}
      WHEN ${c} = 0 AND signbit(${c}) THEN '-0' ELSE CAST(CAST(${c} AS BIGINT) AS VARCHAR) END
    WHEN abs(${c}) >= 1e16 THEN ${text}
    ELSE CASE WHEN ${c} < 0 THEN '-' ELSE '' END || ${digits}[1] || CASE WHEN length(${digits}) > 1 THEN '.' || ${digits}[2:] ELSE '' END
      || 'e+' || lpad((${exponent})::VARCHAR, 2, '0') END`;
}

/**
 * Values written as PostgreSQL's text (engine/exec/numeric-values.ts): a numeric with a scale
 * per value, a json value spaced as PostgreSQL spaces it. A struct of one field holds the
 * text, written into the row as it is (the engine's JSON would reparse it: 1.50 would become
 * 1.5); the header shows the type the field names.
 */
const TEXT_FIELDS: Record<string, string> = { 'pg numeric': 'NUMERIC', 'pg json': 'JSON' };
const textField = (type: DuckDBType): string | undefined =>
  type.typeId === DuckDBTypeId.STRUCT
    ? Object.keys(TEXT_FIELDS).find((field) => type.toString() === `STRUCT("${field}" VARCHAR)`)
    : undefined;

/** The type name the SQL-Column-Types header shows. */
export const columnTypeName = (type: DuckDBType): string => {
  const field = textField(type);
  return field ? TEXT_FIELDS[field]! : type.toString();
};

/** A column's value as text (for writing it to a source). */
export const columnText = (column: string, type: DuckDBType): string => {
  const field = textField(type);
  return field ? `struct_extract(${quoteIdent(column)}, ${sqlLiteral(field)})` : `CAST(${quoteIdent(column)} AS VARCHAR)`;
};

/**
 * The JSON text of a column that json_array would write anew, or null: json_array writes
 * numbers its own way (1e301, 1e-7) and JSON values without their spaces, where PostgreSQL
 * keeps a json value's text as it is.
 */
function ownText(column: ResultColumn, c: string): string | null {
  const field = textField(column.type);
  // A numeric NaN is a string in JSON, as PostgreSQL's to_json writes it.
  if (field === 'pg numeric')
    return `COALESCE(CASE struct_extract(${c}, 'pg numeric') WHEN 'NaN' THEN '"NaN"' ELSE struct_extract(${c}, 'pg numeric') END, 'null')`;
  if (field) return `COALESCE(struct_extract(${c}, ${sqlLiteral(field)}), 'null')`;
  const { typeId } = column.type;
  if (typeId === DuckDBTypeId.FLOAT || typeId === DuckDBTypeId.DOUBLE) return floatJsonSql(c, typeId);
  if (column.type.alias === 'JSON') return `COALESCE(CAST(${c} AS VARCHAR), 'null')`;
  if (column.type.typeId === DuckDBTypeId.LIST) {
    // A list of floats (array_agg(x), ARRAY[...]): its elements as above.
    const element = column.type.valueType.typeId;
    if (element !== DuckDBTypeId.FLOAT && element !== DuckDBTypeId.DOUBLE) return null;
    return `CASE WHEN ${c} IS NULL THEN 'null' ELSE '[' || array_to_string(list_transform(${c}, lambda x: ${floatJsonSql('x', element)}), ',') || ']' END`;
  }
  return null;
}

/**
 * SELECT that turns the rows of `relationSql` (aliased c0..cn) into one JSON text per row:
 * json_array (json_object) in the engine, the columns of `ownText` written as text between the
 * json_array texts of the others.
 */
export function jsonRowsSql(relationSql: string, columns: readonly ResultColumn[], shape: RowShape): string {
  // No row longer than the configuration's valueLimit leaves the engine (runtime/value-macros.ts).
  return (
    `SELECT CASE WHEN strlen(vdb_row) > vdb_value_limit() THEN error('${VALUE_LIMIT_MARK}:a row of the result:' || vdb_value_limit()) ` +
    `ELSE vdb_row END FROM (${rowTextsSql(relationSql, columns, shape)}) AS vdb_rows(vdb_row)`
  );
}

function rowTextsSql(relationSql: string, columns: readonly ResultColumn[], shape: RowShape): string {
  const values = columns.map((col, i) => jsonValueSql(columnAlias(i), col.type));
  const encode = (indexes: number[]) =>
    shape === 'array'
      ? `json_array(${indexes.map((i) => values[i]).join(', ')})`
      : `json_object(${indexes.map((i) => `${sqlLiteral(columns[i]!.name)}, ${values[i]}`).join(', ')})`;
  const texts = columns.map((col, i) => ownText(col, quoteIdent(columnAlias(i))));
  if (texts.every((text) => text === null)) return `SELECT ${encode(columns.map((_, i) => i))}::VARCHAR FROM ${relationSql}`;
  const parts: string[] = [];
  let run: number[] = [];
  const flush = () => {
    if (run.length > 0) parts.push(`(${encode(run)}::VARCHAR)[2:-2]`);
    run = [];
  };
  columns.forEach((col, i) => {
    const text = texts[i];
    if (!text) return run.push(i);
    flush();
    parts.push(shape === 'array' ? `(${text})` : `${sqlLiteral(`${JSON.stringify(col.name)}:`)} || (${text})`);
  });
  flush();
  const [open, close] = shape === 'array' ? ["'['", "']'"] : ["'{'", "'}'"];
  return `SELECT ${open} || ${parts.join(" || ',' || ")} || ${close} FROM ${relationSql}`;
}

/** `(sql) AS q(c0, c1, ...)`: a result wrapped so that its columns have unique names. */
export function aliasedRelation(sql: string, columnCount: number): string {
  const aliases = Array.from({ length: columnCount }, (_, i) => columnAlias(i)).join(', ');
  return `(${sql}) AS q(${aliases})`;
}

/** The header row: the column names as a JSON array. */
export const headerRow = (columns: readonly ResultColumn[]) => JSON.stringify(columns.map((c) => c.name));

/** Marks the true end of a result: a stream that stops without it was cut short by an error. */
const END_OF_ROWS = '#end';

/**
 * Streams the rows of a JSON-encoding query: each yielded string holds the rows of one engine
 * chunk joined by commas. Memory stays at one chunk whatever the result size.
 *
 * The engine's stream ends the same way whether it is exhausted or failed (the error is not
 * reported), so the query gets an end marker as its last row: no marker, no success. A failure
 * before any row is run again without streaming to obtain its message.
 */
export interface StreamOptions {
  /** True once the statement was cancelled (timeout, client gone). */
  cancelled?: () => boolean;
  /** Told the number of rows of each chunk sent. */
  onRows?: (count: number) => void;
}

export async function* streamJsonRows(connection: DuckDBConnection, sql: string, options: StreamOptions = {}): AsyncGenerator<string> {
  const { cancelled = () => false, onRows } = options;
  const result = await streamStatement(connection, `SELECT * FROM (${sql}) UNION ALL SELECT '${END_OF_ROWS}'`);
  let sent = false;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const values = chunk.getColumnValues(0) as string[];
    const done = values[values.length - 1] === END_OF_ROWS;
    if (done) values.pop();
    if (values.length > 0) {
      onRows?.(values.length);
      yield values.join(',');
      sent = true;
    }
    if (done) return;
  }
  if (cancelled()) throw new Error('INTERRUPT Error: the statement was cancelled');
  if (!sent) await connection.run(sql); // throws the statement's own error
  throw new Error('The statement failed while its rows were being sent.');
}
