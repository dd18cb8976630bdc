/**
 * Decimal numbers in CSV and JSON files read as PostgreSQL's numeric, not as floats: the
 * engine's readers infer DOUBLE for `1.10`, which sums and compares otherwise than the numeric
 * PostgreSQL would hold (0.1 + 0.2). At import, a column the reader infers as a float is scanned
 * whole: when every value is a plain decimal (no exponent, NaN or infinity) of at most 38 digits,
 * the column is numeric with the largest scale of its values, as a `numeric(p,s)` column holds
 * them. A CSV column is read from its text; a JSON number reaches vdb as the reader's double, so
 * a JSON column is numeric only when every value, as the file writes it, has at most 15
 * significant digits (json-numbers.ts: a double holds those exactly), and is read from the
 * double's shortest text. The read checks each value against the type the import found, so a file
 * changed since then fails where a value no longer fits, never rounded. A column a schema file
 * declares `numeric` (no precision or scale) is found so too, whatever the reader inferred.
 * The source property `decimals=double` keeps the reader's floats (docs/sources.md).
 */
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import { SourceUnreachableError } from '../types.js';

/** How a folder's decimal numbers are read: numeric (the default) or the reader's double precision. */
export type DecimalMode = 'numeric' | 'double';

export function decimalModeOf(connection: Record<string, string>): DecimalMode {
  const mode = (connection.decimals ?? 'numeric').trim().toLowerCase();
  if (mode === 'numeric' || mode === 'double') return mode;
  throw new SourceUnreachableError(`decimals=${connection.decimals} is not numeric or double`);
}

/** The engine's float types, which the readers infer for numbers with a point or an exponent. */
export const isFloatType = (type: string) => type === 'DOUBLE' || type === 'FLOAT';

const MAX_DIGITS = 38;

/** The engine's DECIMAL for these digits: 18 digits when they fit (cheaper), else 38. */
export const decimalType = (integerDigits: number, scale: number) => `DECIMAL(${integerDigits + scale <= 18 ? 18 : MAX_DIGITS},${scale})`;

const PLAIN = `'^\\s*[+-]?(\\d+\\.?\\d*|\\.\\d+)\\s*$'`;

/**
 * The numeric types of the float columns `columns` of `relation` (a CSV file read as text),
 * scanned whole; a column some value keeps a float (an exponent, NaN, too many digits) is left out.
 */
export async function decimalColumns(
  relation: string,
  columns: readonly string[],
  query: (sql: string) => Promise<Array<Record<string, unknown>>>,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (columns.length === 0) return found;
  const parts = columns.flatMap((column, i) => {
    const value = `trim(${quoteIdent(column)})`;
    const digits = `ltrim(${value}, '+-')`;
    const whole = `ltrim(split_part(${digits}, '.', 1), '0')`;
    const fraction = `split_part(${digits}, '.', 2)`;
    return [
      `bool_and(${quoteIdent(column)} IS NULL OR regexp_matches(${value}, ${PLAIN})) AS p${i}`,
      `max(length(${whole})) AS w${i}`,
      `max(length(${fraction})) AS s${i}`,
    ];
  });
  const [row] = await query(`SELECT ${parts.join(', ')} FROM ${relation}`);
  columns.forEach((column, i) => {
    if (!row || row[`p${i}`] !== true) return; // a value that is no plain decimal
    const [whole, scale] = [`w${i}`, `s${i}`].map((key) => Number(row[key] ?? 0)) as [number, number];
    if (whole + scale > MAX_DIGITS) return;
    // No value at all (only a column declared numeric can be so): scale 0.
    found.set(column, decimalType(whole, scale));
  });
  return found;
}

/**
 * The read of a column found numeric: its text (CSV) or double (JSON) as `type`, failing where a
 * value holds more decimals than the type (the file changed since the import).
 */
export function checkedDecimal(column: string, type: string, file: string, text: boolean): string {
  const scale = Number(/,(\d+)\)$/.exec(type)![1]);
  const c = quoteIdent(column);
  const failure = `error(${sqlLiteral(
    `A value of column "${column}" of file ${file} has more digits than its type ${type.replace('DECIMAL', 'numeric')}, found when the source was imported: refresh the source (SYSADMIN.refreshDataSource) or declare the column's type in its .schema.json file`,
  )})`;
  if (text) {
    const fraction = scale === 0 ? '\\d+\\.?' : `(\\d+\\.?\\d{0,${scale}}|\\.\\d{1,${scale}})`;
    const fits = `regexp_full_match(${c}, ${sqlLiteral(`\\s*[+-]?${fraction}\\s*`)})`;
    return `CASE WHEN ${c} IS NULL THEN NULL WHEN ${fits} THEN CAST(trim(${c}) AS ${type}) ELSE ${failure} END`;
  }
  // From the double's shortest text: the engine's own cast of a double to DECIMAL(38,30) makes 0.1 0.100000000000000009025336901632.
  const exact = `CAST(CAST(${c} AS VARCHAR) AS ${type})`;
  return `CASE WHEN ${c} IS NULL THEN NULL WHEN CAST(${exact} AS DOUBLE) = ${c} THEN ${exact} ELSE ${failure} END`;
}
