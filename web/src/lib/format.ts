/** How values look in the grid, the clipboard and CSV. */
import type { Cell } from './api.js';
import { Num, RawJson, jsonText } from './json.js';

/** Text of a value for display and copying; NULL is the word NULL (told apart by style in the grid). */
export function cellText(value: Cell | undefined): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Num || value instanceof RawJson) return value.text;
  if (typeof value === 'object') return jsonText(value);
  return String(value);
}

/** A row as tab-separated text, the form spreadsheets paste. */
export const rowText = (row: readonly Cell[]): string => row.map((v) => cellText(v).replace(/[\t\n\r]/g, ' ')).join('\t');

/** 1234567 -> "1,234,567" whatever the browser's locale, so tests and docs read the same. */
export const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** Milliseconds as "850 ms" or "1.24 s". */
export const duration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`);

/** Types the chart can use as numbers. */
const NUMERIC =
  /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|REAL|DECIMAL|NUMERIC)/i;

/** A column is numeric by its SQL type, or, without types, when every non-null sample is a number. */
export function isNumericColumn(type: string | undefined, samples: readonly Cell[]): boolean {
  if (type) return NUMERIC.test(type);
  const values = samples.filter((v) => v !== null);
  return values.length > 0 && values.every((v) => v instanceof Num);
}
