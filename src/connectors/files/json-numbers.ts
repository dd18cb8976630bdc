/**
 * The numbers of a JSON file as written, not as the engine's reader holds them: the reader reads
 * every JSON number through a double (1.0000000000000001 becomes 1, and a column declared
 * numeric(p,s) is filled from the double), so what a column holds exactly is found from the
 * file's text at import. A number of more than 15 significant digits (DBL_DIG) is held exactly
 * only when it is the very text its double writes (0.30000000000000004, a float written by a
 * program): a column with any other is refused when read, never rounded silently.
 */
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';

/** What the import learned of one member name's numbers (every object's, nested ones too: a refusal errs on the safe side). */
export interface JsonNumberFacts {
  /** Some number has more than 15 significant digits. */
  long: boolean;
  /** Some number the reader's double does not hold (more than 15 digits, not the double's own text). */
  lossy: boolean;
  /** Some number has an exponent. */
  exponent: boolean;
  /** The most digits before the point, and after it. */
  whole: number;
  scale: number;
}

/** Significant digits a double holds exactly, whatever the decimal (DBL_DIG). */
export const DOUBLE_DIGITS = 15;

/** A member name in quotes and a number after it, or any other string (skipped whole, so text inside strings is never read as a member). */
const MEMBER = `'("(?:[^"\\\\]|\\\\.)*")\\s*:\\s*(-?[0-9][0-9.eE+-]*)|"(?:[^"\\\\]|\\\\.)*"'`;

/** SQL of the parts of the number text `x`: its significant digits and where the point stands after the first of them. */
function numberParts(x: string): { significant: string; normal: string; whole: string; scale: string; exponent: string } {
  const mantissa = `split_part(lower(ltrim(${x}, '-')), 'e', 1)`;
  const exponent = `coalesce(TRY_CAST(nullif(split_part(lower(${x}), 'e', 2), '') AS INTEGER), 0)`;
  const whole = `split_part(${mantissa}, '.', 1)`;
  const fraction = `split_part(${mantissa}, '.', 2)`;
  const digits = `(${whole} || ${fraction})`;
  const significant = `rtrim(ltrim(${digits}, '0'), '0')`;
  const leadingZeros = `(length(${digits}) - length(ltrim(${digits}, '0')))`;
  const sign = `CASE WHEN starts_with(${x}, '-') THEN '-' ELSE '' END`;
  const normal = `CASE WHEN ${significant} = '' THEN '0' ELSE ${sign} || ${significant} || 'e' || (length(${whole}) + ${exponent} - ${leadingZeros}) END`;
  return {
    significant,
    normal,
    whole: `length(ltrim(${whole}, '0'))`,
    scale: `length(${fraction})`,
    exponent: `contains(lower(${x}), 'e')`,
  };
}

/** The facts of every member name holding numbers in the JSON file `file` (a path the engine may read). */
export async function jsonNumberFacts(
  file: string,
  query: (sql: string) => Promise<Array<Record<string, unknown>>>,
): Promise<Map<string, JsonNumberFacts>> {
  const raw = numberParts('x');
  const asDouble = numberParts("coalesce(TRY_CAST(TRY_CAST(x AS DOUBLE) AS VARCHAR), '')");
  const sql = `WITH members AS (
      SELECT unnest(regexp_extract_all(j, ${MEMBER}, 1)) AS k, unnest(regexp_extract_all(j, ${MEMBER}, 2)) AS x
      FROM read_json_objects(${sqlLiteral(file)}) t(j)
    )
    SELECT json_extract_string(k, '$') AS name,
      bool_or(length(${raw.significant}) > ${DOUBLE_DIGITS}) AS long,
      bool_or(length(${raw.significant}) > ${DOUBLE_DIGITS} AND ${raw.normal} <> ${asDouble.normal}) AS lossy,
      bool_or(${raw.exponent}) AS exponent, max(${raw.whole}) AS whole, max(${raw.scale}) AS scale
    FROM members WHERE x <> '' GROUP BY name`;
  const facts = new Map<string, JsonNumberFacts>();
  for (const row of await query(sql)) {
    const name = String(row.name);
    const known = facts.get(name);
    const found: JsonNumberFacts = {
      long: row.long === true,
      lossy: row.lossy === true,
      exponent: row.exponent === true,
      whole: Number(row.whole ?? 0),
      scale: Number(row.scale ?? 0),
    };
    // Names written with escapes ("\u0061") meet their plain spelling here.
    facts.set(name, known ? merged(known, found) : found);
  }
  return facts;
}

const merged = (a: JsonNumberFacts, b: JsonNumberFacts): JsonNumberFacts => ({
  long: a.long || b.long,
  lossy: a.lossy || b.lossy,
  exponent: a.exponent || b.exponent,
  whole: Math.max(a.whole, b.whole),
  scale: Math.max(a.scale, b.scale),
});

/**
 * The source type that marks a JSON column refused at import (ColumnDef.sourceType): its numbers
 * are more exact than the reader's doubles.
 */
export const LOSSY_JSON_NUMBERS = 'json numbers beyond double precision';

/** The read of a refused column: NULLs stay, any value fails the statement with the reason. */
export function refusedJsonColumn(column: string, file: string): string {
  const c = quoteIdent(column);
  const failure = sqlLiteral(
    `Column "${column}" of file ${file} holds numbers of more than ${DOUBLE_DIGITS} significant digits, which vdb's JSON reader cannot read exactly (it reads JSON numbers as double precision) and which are not supported: declare the column double precision in its .schema.json file to read them as floats, or write the file as CSV to read them as numeric`,
  );
  return `CASE WHEN ${c} IS NULL THEN NULL ELSE CAST(error(${failure}) AS DOUBLE) END`;
}
