/**
 * Results as CSV (RFC 4180): a header line of the column names, then one line per row, every
 * line ended by CRLF. A field holding a comma, a quote, CR or LF is quoted, its quotes doubled.
 * NULL is an empty field; an empty string is `""`, so the two read back apart. A value is the
 * text of its JSON answer (json.ts): numbers and dates as JSON writes them, strings without their
 * quotes and escapes, booleans true/false, lists and structs as their JSON text.
 */
import { arrayRowValues, isString, stringValue } from './json-scan.js';

const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;

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

/**
 * Walks whole CSV lines as written here (CRLF line ends): `value` gets each field's column and
 * place [start, end) in `chunk`, a quoted field with its quotes, `rowEnd` the end of each line.
 */
export function scanCsvRows(chunk: string, value: (column: number, start: number, end: number) => void, rowEnd: () => void): void {
  let column = 0;
  let i = 0;
  while (i < chunk.length) {
    const start = i;
    if (chunk.charCodeAt(i) === QUOTE) {
      // The closing quote is one not followed by another (a doubled quote stands for one).
      let close = chunk.indexOf('"', i + 1);
      while (close >= 0 && chunk.charCodeAt(close + 1) === QUOTE) close = chunk.indexOf('"', close + 2);
      if (close < 0) throw new Error('A CSV field of the result is not closed.');
      i = close + 1;
    } else {
      while (i < chunk.length && chunk.charCodeAt(i) !== COMMA && chunk.charCodeAt(i) !== CR) i++;
    }
    value(column, start, i);
    if (chunk.charCodeAt(i) === COMMA) {
      column++;
      i++;
    } else {
      // CRLF
      i += 2;
      column = 0;
      rowEnd();
    }
  }
}
