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
