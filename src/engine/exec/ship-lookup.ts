/**
 * Writes the lookup form of a shipped join (plan/ship-lookup.ts) from the shipped rows' array
 * elements: the distinct rows of the columns other than the key, numbered, and an int4 array
 * indexed by the key (its bounds the keys' own) holding each key's number, 0 where no row has
 * that key. Only where that array stays small against the rows (dense keys) and every key is an
 * int4 and unique (a key with two rows would need both): otherwise null, and the statement goes
 * in its plain form. Pure: no I/O.
 */
import type { ColumnDef } from '../../catalog/types.js';
import { LOOKUP_CODE, type LookupPlan } from '../plan/ship-lookup.js';
import { arrayLiteral } from './ship-arrays.js';

/** Elements of the lookup array at most: per shipped row, and in all (an int4 array's text is ~2 bytes per empty slot). */
const SLOTS_PER_ROW = 16;
const MAX_SLOTS = 4_000_000;
const INT4_MAX = 2 ** 31 - 1;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The relation that takes the shipped placeholder's place, or null where the lookup does not
 * apply. `elements` are the shipped columns' array elements, one list per column (ship-arrays.ts).
 */
export function lookupRelation(
  lookup: LookupPlan,
  columns: readonly ColumnDef[],
  elements: readonly string[][],
  source: { kind: string },
): string | null {
  const keys = elements[lookup.keyIndex]!;
  const rows = keys.length;
  if (rows === 0) return null;
  const others = columns.map((_, i) => i).filter((i) => i !== lookup.keyIndex);
  // The keys' bounds first, so that the array can be filled in one pass.
  const numbers = new Float64Array(rows);
  let low = Infinity;
  let high = -Infinity;
  for (let row = 0; row < rows; row++) {
    const text = keys[row]!;
    // A NULL key joins nothing (the join is an equality).
    const key = text === 'NULL' ? Number.NaN : Number(text);
    if (text !== 'NULL' && (!Number.isInteger(key) || Math.abs(key) > INT4_MAX)) return null;
    numbers[row] = key;
    if (key < low) low = key;
    if (key > high) high = key;
  }
  if (low > high) return null;
  const slots = high - low + 1;
  if (slots > SLOTS_PER_ROW * rows + 1024 || slots > MAX_SLOTS) return null;
  const table = new Int32Array(slots);
  const codeOf = new Map<string, number>();
  const tupleOf =
    others.length === 1
      ? (row: number) => elements[others[0]!]![row]!
      : (row: number) => others.map((i) => elements[i]![row]!).join('\u0000');
  for (let row = 0; row < rows; row++) {
    const key = numbers[row]!;
    if (Number.isNaN(key)) continue;
    // A key with two rows: both would have to join.
    if (table[key - low] !== 0) return null;
    const tuple = tupleOf(row);
    let code = codeOf.get(tuple);
    if (code === undefined) codeOf.set(tuple, (code = codeOf.size + 1));
    table[key - low] = code;
  }
  const lookupArray = `'[${low}:${high}]={${table.join(',')}}'::int4[]`;
  // The distinct rows, by number: each column's elements in the order of their numbers.
  const distinct: string[][] = others.map(() => []);
  for (const tuple of codeOf.keys()) tuple.split('\u0000').forEach((element, i) => others.length > 0 && distinct[i]!.push(element));
  const dictionary = [
    `'{${Array.from({ length: codeOf.size }, (_, i) => i + 1).join(',')}}'::int4[]`,
    ...others.map((column, i) => arrayLiteral(distinct[i]!, columns[column]!, source)),
  ];
  const key = `${quote(lookup.alias)}.${quote(lookup.column.name)}`;
  // Subscripts are int4: a bigint key outside the array's bounds looks up nothing instead of failing the cast.
  const index = lookup.column.type === 'BIGINT' ? `CASE WHEN ${key} BETWEEN ${low} AND ${high} THEN ${key}::int4 END` : key;
  const dict = '"__vdb_lookup"';
  const select = columns.map((column, i) => (i === lookup.keyIndex ? `${key} AS ${quote(column.name)}` : `${dict}.${quote(column.name)}`));
  const names = [LOOKUP_CODE, ...others.map((i) => columns[i]!.name)].map(quote).join(', ');
  return (
    `LATERAL (SELECT ${select.join(', ')} FROM unnest(${dictionary.join(', ')}) AS ${dict}(${names}) ` +
    `WHERE ${dict}.${quote(LOOKUP_CODE)} = (SELECT ${lookupArray})[${index}])`
  );
}
