/**
 * Results as CSV (RFC 4180): a header line of the column names, then one line per row, every
 * line ended by CRLF. A field holding a comma, a quote, CR or LF is quoted, its quotes doubled.
 * NULL is an empty field; an empty string is `""`, so the two read back apart. A value is the
 * text of its JSON answer (json.ts): numbers and dates as JSON writes them, strings without their
 * quotes and escapes, booleans true/false, lists and structs as their JSON text.
 */
import { arrayRowValues, isString, stringValue } from './json-scan.js';

const NEEDS_QUOTES = /[",\r\n]/;

/** One field: quoted where it must be, `""` for the empty string. */
export function csvField(text: string): string {
  if (text === '') return '""';
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The field of one JSON value token (null: an empty field). */
export function csvValue(token: string): string {
  if (token === 'null') return '';
  return csvField(isString(token) ? stringValue(token) : token);
}

/** The header line. */
export const csvHeader = (names: readonly string[]): string => `${names.map(csvField).join(',')}\r\n`;

/** The lines of a chunk of array rows ("[v,v],[v,v]"). */
export function csvLines(chunk: string): string {
  let out = '';
  for (const row of arrayRowValues(chunk)) {
    for (let i = 0; i < row.length; i++) out += i === 0 ? csvValue(row[i]!) : `,${csvValue(row[i]!)}`;
    out += '\r\n';
  }
  return out;
}
