/** CSV as RFC 4180 writes it: fields with a comma, quote or line break are quoted. */
import type { Cell } from './api.js';

export function csvField(value: Cell | undefined): string {
  // NULL is an empty field: the usual reading of CSV by databases and spreadsheets.
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (row: readonly Cell[]): string => `${row.map(csvField).join(',')}\r\n`;
