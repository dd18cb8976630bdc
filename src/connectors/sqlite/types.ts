/**
 * SQLite type mapping. SQLite columns have a declared type and an affinity; values may still be
 * of any storage class. We map the declared type to an engine type (following SQLite's affinity
 * rules, plus the common DATE/TIMESTAMP/BOOLEAN/DECIMAL conventions), and load values in their
 * raw storage class so the engine can cast them with TRY_CAST and report what did not fit.
 */
import type { RawType } from '../types.js';

export function engineTypeOfSqlite(declared: string): string {
  const t = declared.trim().toUpperCase();
  const decimal = /^(DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/.exec(t);
  if (decimal) {
    const precision = Math.min(Number(decimal[2]), 38);
    const scale = Math.min(Number(decimal[3] ?? 0), precision);
    return `DECIMAL(${precision},${scale})`;
  }
  if (t === 'DATE') return 'DATE';
  if (t === 'DATETIME' || t.startsWith('TIMESTAMP')) return 'TIMESTAMP';
  if (t === 'BOOLEAN' || t === 'BOOL') return 'BOOLEAN';
  // SQLite's own affinity rules, in their documented order.
  if (t.includes('INT')) return 'BIGINT';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'VARCHAR';
  if (t.includes('BLOB')) return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'DOUBLE';
  if (t.includes('NUMERIC') || t.includes('DECIMAL')) return 'DOUBLE';
  // No declared type (expressions in views): values are shown as text.
  return 'VARCHAR';
}

/** The storage class values of an engine type are loaded in before the engine casts them. */
export function rawTypeOf(engineType: string): RawType {
  if (engineType === 'BIGINT') return 'BIGINT';
  if (engineType === 'DOUBLE') return 'DOUBLE';
  if (engineType === 'BLOB') return 'BLOB';
  if (engineType === 'BOOLEAN') return 'BIGINT';
  if (engineType.startsWith('DECIMAL')) return 'VARCHAR';
  return 'VARCHAR';
}

/** The declared type of a table's rowid alias (its INTEGER PRIMARY KEY): only 64-bit integers there. */
export const ROWID_ALIAS = 'INTEGER PRIMARY KEY';

/** Appended to the declared type of a STRICT table's column, whose values SQLite keeps in the declared class. */
export const STRICT_SUFFIX = ' STRICT';

/**
 * Whether every non-NULL value of the column is of the storage class its engine type is loaded
 * from, so that SQLite compares it as the engine compares the loaded value. SQLite guarantees
 * that for a rowid alias (integers only), for the columns of a STRICT table declared INT,
 * INTEGER, REAL or TEXT (a value of another class is refused, an integer stored as REAL), and
 * for a column of TEXT affinity (numbers are stored as their text). Any other column may hold a
 * value of any class: an INTEGER column a REAL 1.5 or the text 'abc', a DECIMAL one a REAL with
 * float noise that the engine's cast rounds.
 */
export function storedClassCertain(column: { type: string; sourceType?: string }): boolean {
  const declared = column.sourceType ?? '';
  if (declared === ROWID_ALIAS) return true;
  if (declared.endsWith(STRICT_SUFFIX)) return /^(BIGINT|DOUBLE|VARCHAR)$/.test(column.type);
  return column.type === 'VARCHAR' && /CHAR|CLOB|TEXT/i.test(declared);
}

/** 2^53: integers beyond it are rounded when loaded as a DOUBLE. */
const EXACT_DOUBLE = '9007199254740992';

/**
 * The condition that holds for the rows whose stored value SQLite may compare otherwise than the
 * engine compares it after its load's cast (`sql` is the column's reference): values of another
 * storage class than the one the comparison is exact for. A pushed comparison OR this keeps
 * every row the engine may keep (a superset; the engine applies the condition again). NULL is
 * NULL on both sides: not among them.
 *  - BIGINT (loaded as integers; a REAL is rounded, a text parsed or NULL): integers only.
 *  - DECIMAL(p,s) (loaded as text, cast with rounding to the scale): integers only; a REAL
 *    such as 2.3000000000000003 becomes 2.30.
 *  - DOUBLE: reals, and integers that a double holds exactly (|i| <= 2^53).
 *  - VARCHAR (an untyped column: numbers loaded as their JS text): text only.
 * Other types: every non-NULL row (their comparisons are not pushed anyway).
 */
export function otherClassesSql(column: { type: string }, sql: string): string {
  if (column.type === 'BIGINT' || column.type.startsWith('DECIMAL')) return `typeof(${sql}) NOT IN ('integer', 'null')`;
  if (column.type === 'DOUBLE')
    return `typeof(${sql}) NOT IN ('integer', 'real', 'null') OR ${sql} NOT BETWEEN -${EXACT_DOUBLE} AND ${EXACT_DOUBLE}`;
  if (column.type === 'VARCHAR') return `typeof(${sql}) NOT IN ('text', 'null')`;
  return `${sql} IS NOT NULL`;
}

/** The class of the values that compare exactly (otherClassesSql), for the key batches after the first. */
export function exactClassSql(column: { type: string }, sql: string): string | null {
  if (column.type === 'BIGINT' || column.type.startsWith('DECIMAL')) return `typeof(${sql}) = 'integer'`;
  if (column.type === 'DOUBLE') return `typeof(${sql}) IN ('integer', 'real') AND ${sql} BETWEEN -${EXACT_DOUBLE} AND ${EXACT_DOUBLE}`;
  if (column.type === 'VARCHAR') return `typeof(${sql}) = 'text'`;
  return null;
}

/** The scale the engine's load rounds a numeric column's raw numbers to: 0 for BIGINT, s for DECIMAL(p,s); null for the others. */
function roundedScale(type: string): number | null {
  if (type === 'BIGINT') return 0;
  const decimal = /^DECIMAL\(\d+,\s*(\d+)\)$/.exec(type);
  return decimal ? Number(decimal[1]) : null;
}

/** The decimal `k` plus or minus half a unit of the scale (k ± 0.5·10^-scale), written exactly. */
function halfUnitAway(k: string, scale: number, sign: 1n | -1n): string {
  const negative = k.startsWith('-');
  const [int, frac = ''] = (negative ? k.slice(1) : k).split('.');
  const digits = Math.max(frac.length, scale + 1);
  const n = BigInt(int! + frac.padEnd(digits, '0')) * (negative ? -1n : 1n) + sign * 5n * 10n ** BigInt(digits - scale - 1);
  const abs = (n < 0n ? -n : n).toString().padStart(digits + 1, '0');
  return `${n < 0n ? '-' : ''}${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
}

/**
 * A comparison of a numeric column with number constants, widened so that it keeps every row the
 * engine may keep after its load's cast, and still reads through an index on the column (where
 * a `typeof()` test would read the whole table):
 *  - BIGINT, DECIMAL(p,s): a number v loads as v rounded to the scale (half a unit either way),
 *    so `= k` keeps [k - h, k + h], `>`/`>=` from k - h, `<`/`<=` up to k + h (h: half a unit),
 *    each beside the comparison as written (exact for integers stored as such, at any size);
 *    text and blobs (which the load may read as a number, or turn into NULL) sort after every
 *    number in SQLite: `>= ''`.
 *  - DOUBLE: reals and integers up to 2^53 compare exactly; larger integers, text and blobs
 *    are kept by `< -2^53` and `> 2^53`.
 * `op` is the column's side (column op constant); `=` takes several constants (an IN list).
 * Null where no such form applies (`<>`, other types).
 */
export function widenedComparison(column: { type: string }, sql: string, op: string, constants: readonly string[]): string | null {
  if (constants.length === 0 || !constants.every((k) => /^-?\d+(\.\d+)?$/.test(k))) return null;
  if (column.type === 'DOUBLE') {
    if (op === '<>' || (op !== '=' && constants.length !== 1)) return null;
    const compared = op === '=' ? `${sql} IN (${constants.join(', ')})` : `${sql} ${op} ${constants[0]}`;
    return `(${compared} OR ${sql} < -${EXACT_DOUBLE} OR ${sql} > ${EXACT_DOUBLE})`;
  }
  const scale = roundedScale(column.type);
  if (scale === null) return null;
  const low = (k: string) => halfUnitAway(k, scale, -1n);
  const high = (k: string) => halfUnitAway(k, scale, 1n);
  // The comparison as written first: SQLite reads the widened bounds as reals, which beyond 2^53
  // round (1500000000000000000.5 is 1.5e18, below the integer 1500000000000000001).
  let widened: string[];
  if (op === '=') widened = [`${sql} IN (${constants.join(', ')})`, ...constants.map((k) => `${sql} BETWEEN ${low(k)} AND ${high(k)}`)];
  else if (constants.length !== 1) return null;
  else if (op === '>' || op === '>=') widened = [`${sql} ${op} ${constants[0]!}`, `${sql} >= ${low(constants[0]!)}`];
  else if (op === '<' || op === '<=') widened = [`${sql} ${op} ${constants[0]!}`, `${sql} <= ${high(constants[0]!)}`];
  else return null;
  return `(${[...widened, `${sql} >= ''`].join(' OR ')})`;
}

/** `a` compared with `b`, two decimals written as text (exactly, whatever their size). */
function compareDecimals(a: string, b: string): number {
  const digits = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const scaled = (k: string) => {
    const negative = k.startsWith('-');
    const [int, frac = ''] = (negative ? k.slice(1) : k).split('.');
    return BigInt(int! + frac.padEnd(digits, '0')) * (negative ? -1n : 1n);
  };
  const d = scaled(a) - scaled(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/**
 * The values of another class than the keys compare exactly with (otherClassesSql) that the
 * engine may still match with one of `keys`, read through an index on the column where there is
 * one: numbers of another class only within the keys' span widened by the load's rounding (a
 * range of the index), text and blobs after every number (`>= ''`); for DOUBLE, integers beyond
 * 2^53, text and blobs (two ranges). Null: only a `typeof()` test (which reads the whole table).
 */
export function otherClassesNearKeys(column: { type: string }, sql: string, keys: readonly string[]): string | null {
  if (keys.length === 0 || !keys.every((k) => /^-?\d+(\.\d+)?$/.test(k))) return null;
  if (column.type === 'DOUBLE') return `${sql} < -${EXACT_DOUBLE} OR ${sql} > ${EXACT_DOUBLE}`;
  const scale = roundedScale(column.type);
  if (scale === null) return null;
  const sorted = [...keys].sort(compareDecimals);
  const low = halfUnitAway(sorted[0]!, scale, -1n);
  const high = halfUnitAway(sorted[sorted.length - 1]!, scale, 1n);
  return `(${sql} BETWEEN ${low} AND ${high} AND typeof(${sql}) NOT IN ('integer', 'null')) OR ${sql} >= ''`;
}
