/**
 * Writes the lookup form of a shipped join (plan/ship-lookup.ts) from the shipped rows' values:
 * the distinct rows of the columns other than the key, numbered, and an int4 array
 * indexed by the key (its bounds the keys' own) holding each key's number, 0 where no row has
 * that key. Only where that array stays small against the rows (dense keys) and every key is an
 * int4 and unique (a key with two rows would need both): otherwise null, and the statement goes
 * in its plain form. Pure: no I/O.
 */
import type { ColumnDef } from '../../catalog/types.js';
import { LOOKUP_CODE, type ExactCondition, type LookupKey } from '../plan/ship-lookup.js';
import { arrayLiteral } from './ship-arrays.js';
import { TupleNumbers } from '../translate/tuple-numbers.js';

/** Elements of the lookup array at most: per shipped row, and in all (an int4 array's text is ~2 bytes per empty slot). */
const SLOTS_PER_ROW = 16;
const MAX_SLOTS = 4_000_000;
const INT4_MAX = 2 ** 31 - 1;

/** The rows the conditions keep (their texts among the conditions' values), 1 for each; null without conditions. */
function keptRows(conditions: readonly ExactCondition[], values: ReadonlyArray<ReadonlyArray<string | null>>): Uint8Array | null {
  if (conditions.length === 0) return null;
  const rows = new Uint8Array(values[0]?.length ?? 0).fill(1);
  for (const { columnIndex, values: wanted } of conditions) {
    const wantedSet = new Set<string | null>(wanted);
    const column = values[columnIndex]!;
    for (let row = 0; row < rows.length; row++) if (rows[row] && !wantedSet.has(column[row]!)) rows[row] = 0;
  }
  return rows;
}

/**
 * `1,0,0,2,...`: the numbers separated by commas, written as bytes (a typed array's own join
 * takes five times as long on the 100,000 slots of a lookup).
 */
export function numbersText(numbers: Int32Array): string {
  // At most 11 characters a number (-2147483648) and a comma.
  const out = Buffer.allocUnsafe(numbers.length * 12);
  let at = 0;
  for (let i = 0; i < numbers.length; i++) {
    if (i > 0) out[at++] = 44; // ','
    const value = numbers[i]!;
    if (value >= 0 && value < 10) out[at++] = 48 + value;
    else at += out.write(String(value), at, 'latin1');
  }
  return out.toString('latin1', 0, at);
}

/**
 * The SQL of a key's number in the lookup (NULL outside its bounds, 0 for a key without a row).
 * Up to 255 numbers it is a byte per slot, `decode('<hex>', 'hex')`: PostgreSQL reads that text
 * in a tenth of an int4 array literal's time (2 against 14 ms for 100,000 slots), and its parallel
 * workers each read a quarter of the bytes. More numbers go as an int4 array with the keys' bounds.
 */
function lookupCode(key: string, bigint: boolean, low: number, high: number, table: Int32Array, numbers: number): string {
  if (numbers <= 255) {
    const bytes = Buffer.allocUnsafe(table.length);
    bytes.set(table);
    // Within the bounds the offset fits an int4 (at most MAX_SLOTS); outside them it is not computed.
    const offset = bigint ? `(${key} - (${low}))::int4` : `${key} - (${low})`;
    return `CASE WHEN ${key} BETWEEN ${low} AND ${high} THEN get_byte((SELECT decode('${bytes.toString('hex')}', 'hex')), ${offset}) END`;
  }
  // Subscripts are int4: a bigint key outside the array's bounds looks up nothing instead of failing the cast.
  const index = bigint ? `CASE WHEN ${key} BETWEEN ${low} AND ${high} THEN ${key}::int4 END` : key;
  return `(SELECT '[${low}:${high}]={${numbersText(table)}}'::int4[])[${index}]`;
}

/**
 * The relation that takes the shipped placeholder's place, or null where the lookup does not
 * apply. `values` are the shipped columns' texts, one list per column, null for NULL (ship-arrays.ts).
 */
export function lookupRelation(
  lookup: LookupKey,
  columns: readonly ColumnDef[],
  values: ReadonlyArray<ReadonlyArray<string | null>>,
  source: { kind: string },
  quote: (name: string) => string,
): string | null {
  const keys = values[lookup.keyIndex]!;
  const rows = keys.length;
  if (rows === 0) return null;
  const kept = keptRows(lookup.conditions ?? [], values);
  const others = columns.map((_, i) => i).filter((i) => i !== lookup.keyIndex);
  // The keys' bounds first, so that the array can be filled in one pass.
  const numbers = new Float64Array(rows);
  let low = Infinity;
  let high = -Infinity;
  let keyCount = 0;
  for (let row = 0; row < rows; row++) {
    const text = keys[row]!;
    // A NULL key joins nothing (the join is an equality); nor does a row the conditions drop.
    const key = text === null || (kept && !kept[row]) ? Number.NaN : Number(text);
    if (!Number.isNaN(key) && (!Number.isInteger(key) || Math.abs(key) > INT4_MAX)) return null;
    numbers[row] = key;
    if (Number.isNaN(key)) continue;
    keyCount += 1;
    if (key < low) low = key;
    if (key > high) high = key;
  }
  if (keyCount === 0 || keyCount < lookup.minKeys) return null;
  const slots = high - low + 1;
  if (slots > SLOTS_PER_ROW * keyCount + 1024 || slots > MAX_SLOTS) return null;
  const table = new Int32Array(slots);
  // Each distinct row of the other columns gets a number, and the first row that had it.
  const rowNumbers = new TupleNumbers<number>(others.length, (row, k) => values[others[k]!]![row]!);
  const firstRows: number[] = [];
  const numberOf = (row: number): number => {
    const code = rowNumbers.numberOf(row);
    if (code > firstRows.length) firstRows.push(row);
    return code;
  };
  for (let row = 0; row < rows; row++) {
    const key = numbers[row]!;
    if (Number.isNaN(key)) continue;
    // A key with two rows: both would have to join.
    if (table[key - low] !== 0) return null;
    table[key - low] = numberOf(row);
  }
  const dictionary = [
    `'{${firstRows.map((_, i) => i + 1).join(',')}}'::int4[]`,
    ...others.map((column) =>
      arrayLiteral(
        firstRows.map((row) => values[column]![row]!),
        columns[column]!,
        source,
      ),
    ),
  ];
  const key = `${quote(lookup.alias)}.${quote(lookup.column.name)}`;
  const code = lookupCode(key, lookup.column.type === 'BIGINT', low, high, table, firstRows.length);
  const dict = '"__vdb_lookup"';
  const select = columns.map((column, i) => (i === lookup.keyIndex ? `${key} AS ${quote(column.name)}` : `${dict}.${quote(column.name)}`));
  const names = [LOOKUP_CODE, ...others.map((i) => columns[i]!.name)].map(quote).join(', ');
  return (
    `LATERAL (SELECT ${select.join(', ')} FROM unnest(${dictionary.join(', ')}) AS ${dict}(${names}) ` +
    `WHERE ${dict}.${quote(LOOKUP_CODE)} = ${code})`
  );
}
