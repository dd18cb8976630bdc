/**
 * Reading back the JSON texts the result writers produce (json.ts, the sources' writers, the
 * cursor pages): a chunk is rows joined by commas, each row an array or an object. The other
 * formats are written from these texts, so that every value reads as the JSON answer writes it
 * whichever route computed the rows. Only the structure is scanned; values stay text (a decimal
 * keeps every digit).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** Index of the quote that closes the JSON string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end < 0) throw new Error('A result row holds an unterminated JSON string.');
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The texts of the rows of `chunk` ("row,row,..."), each as it was written. */
export function rowTexts(chunk: string): string[] {
  const rows: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < chunk.length; i++) {
    const c = chunk.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(chunk, i);
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (depth++ === 0) start = i;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      if (--depth === 0) rows.push(chunk.slice(start, i + 1));
    }
  }
  return rows;
}

/**
 * Walks the array rows of `chunk` ("[v,v],[v,v],..."): `value` gets each value's column and
 * place [start, end) in `chunk` (numbers, true, false, null and nested arrays or objects as
 * written, strings with their quotes and escapes), `rowEnd` the end of each row. No string is
 * made: the caller reads what it needs.
 */
export function scanArrayRows(chunk: string, value: (column: number, start: number, end: number) => void, rowEnd: () => void): void {
  let depth = 0;
  let column = 0;
  // The current value at depth 1: where it starts (-1: none yet) and ends (after its last character).
  let start = -1;
  let end = -1;
  for (let i = 0; i < chunk.length; i++) {
    const c = chunk.charCodeAt(i);
    if (isSpace(c)) continue;
    if (depth === 0) {
      if (c === OPEN_BRACKET) {
        depth = 1;
        column = 0;
        start = -1;
      }
      continue;
    }
    if (c === QUOTE) {
      if (start < 0) start = i;
      i = stringEnd(chunk, i);
      end = i + 1;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (depth === 1 && start < 0) start = i;
      depth++;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
      if (depth === 0) {
        if (start >= 0) value(column, start, end);
        rowEnd();
      } else end = i + 1;
    } else if (c === COMMA && depth === 1) {
      value(column++, start, end);
      start = -1;
    } else {
      if (depth === 1 && start < 0) start = i;
      end = i + 1;
    }
  }
}

/** The value texts of each array row of `chunk`, as `scanArrayRows` finds them. */
export function arrayRowValues(chunk: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  scanArrayRows(
    chunk,
    (_, start, end) => row.push(chunk.slice(start, end)),
    () => {
      rows.push(row);
      row = [];
    },
  );
  return rows;
}

/** The text a JSON string token stands for (`"a\"b"` -> `a"b`). */
export const stringValue = (token: string): string => (token.indexOf('\\') < 0 ? token.slice(1, -1) : (JSON.parse(token) as string));

/** Whether a value token is a JSON string. */
export const isString = (token: string): boolean => token.charCodeAt(0) === QUOTE;
