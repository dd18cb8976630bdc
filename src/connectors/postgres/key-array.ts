/**
 * Dependent-join keys for PostgreSQL as one array value, `column = ANY('{k1,k2,...}')` (numbers,
 * dates and text; text elements quoted and escaped as array syntax wants). The
 * literal has no type of its own, so PostgreSQL reads it as an array of the column's own type:
 * the comparison is the column's own equality, which PostgreSQL 14+ answers from a hash table
 * built once per statement. A list of 25,000 literals (`IN (...)`) is parsed and planned value by
 * value and took about 1.3 times as long in bench/federation.ts; an array of a wider type
 * (`::int8[]` for an int4 column) is a cross-type comparison that PostgreSQL does not hash.
 */
import type { ColumnDef } from '../../catalog/types.js';

/** Integer types of the engine and the range of the PostgreSQL type each comes from. */
const INTEGER_RANGES: Record<string, [bigint, bigint]> = {
  SMALLINT: [-(2n ** 15n), 2n ** 15n - 1n],
  INTEGER: [-(2n ** 31n), 2n ** 31n - 1n],
  BIGINT: [-(2n ** 63n), 2n ** 63n - 1n],
};

/**
 * The array elements for keys of `column` (values as the engine writes them as text), or null
 * when the column's type is not one whose keys this form writes exactly: then the caller keeps
 * the literal list. Keys that no value of the column can equal (a fraction or an out-of-range
 * number for an integer column) are left out; PostgreSQL would refuse them in the array.
 */
export function keyArrayElements(column: ColumnDef, keys: readonly string[]): string[] | null {
  const range = INTEGER_RANGES[column.type];
  if (range) {
    const elements: string[] = [];
    for (const key of keys) {
      const integral = /^(-?\d+)(?:\.0*)?$/.exec(key);
      if (!integral) {
        if (/^-?\d+\.\d+$/.test(key)) continue; // a fraction equals no integer
        return null;
      }
      const value = BigInt(integral[1]!);
      if (value >= range[0] && value <= range[1]) elements.push(value.toString());
    }
    return elements;
  }
  if (/^DECIMAL\(/.test(column.type)) return keys.every((k) => /^-?\d+(\.\d+)?$/.test(k)) ? [...keys] : null;
  if (column.type === 'DATE') return keys.every((k) => /^\d{4}-\d{2}-\d{2}$/.test(k)) ? [...keys] : null;
  // Text: each element quoted, `\` and `"` escaped; PostgreSQL text cannot hold NUL.
  if (column.type === 'VARCHAR') {
    if (keys.some((k) => k.includes('\0'))) return null;
    return keys.map((k) => `"${k.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
  }
  return null;
}

/** `"column" = ANY('{...}')`, or null where keyArrayElements declines. */
export function keyArrayFilter(quotedColumn: string, column: ColumnDef, keys: readonly string[]): string | null {
  const elements = keyArrayElements(column, keys);
  if (elements === null) return null;
  if (elements.length === 0) return '1 = 0';
  return `${quotedColumn} = ANY(${keyArrayLiteral(elements)})`;
}

/** The SQL literal of an array of these elements, untyped (read as the column's own array type). */
export function keyArrayLiteral(elements: readonly string[]): string {
  return `'{${elements.join(',').replace(/'/g, "''")}}'`;
}
