/**
 * The grid's filter: the rows of a result that hold a text in any value, case aside. Values are
 * matched as the grid shows them (cellText: the digits as sent, JSON as its text), so a filter
 * for `.50` finds the DECIMAL 0.50 that a float would have made 0.5. NULL matches nothing.
 */
import type { Row } from './api.js';
import { cellText } from './format.js';

export interface Filtered {
  rows: Row[];
  /** Each row's index in the whole result. */
  numbers: number[];
}

export function rowMatches(row: Row, needle: string): boolean {
  const lower = needle.toLowerCase();
  return row.some((v) => v !== null && cellText(v).toLowerCase().includes(lower));
}

/** The rows that match, numbered from `offset`; added to `into`. */
export function filterRows(rows: readonly Row[], needle: string, offset = 0, into: Filtered = { rows: [], numbers: [] }): Filtered {
  rows.forEach((row, i) => {
    if (!rowMatches(row, needle)) return;
    into.rows.push(row);
    into.numbers.push(offset + i);
  });
  return into;
}

/**
 * Reads a cursor chunk by chunk and keeps the rows that match (only those stay in memory).
 * `progress` hears the rows read so far; an aborted signal stops the reading.
 */
export async function filterCursor(
  load: (offset: number, limit: number, signal: AbortSignal) => Promise<Row[]>,
  needle: string,
  /** The cursor's row count, when known: the reading stops there. */
  total: number | null,
  chunk: number,
  signal: AbortSignal,
  progress: (read: number, matched: number) => void,
): Promise<Filtered> {
  const found: Filtered = { rows: [], numbers: [] };
  for (let offset = 0; ; offset += chunk) {
    const rows = await load(offset, chunk, signal);
    filterRows(rows, needle, offset, found);
    progress(offset + rows.length, found.rows.length);
    if (rows.length < chunk || (total !== null && offset + rows.length >= total)) return found;
  }
}
