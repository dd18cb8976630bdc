/**
 * Where in a statement an error is, from the API's message: a syntax error names its line and
 * column; a semantic error names what it did not find ("Table \"nosuch\" does not exist."), which
 * is looked up in the statement as a whole word. Nothing is marked when the place is unclear.
 */

export interface ErrorRange {
  /** Offsets in the statement's text. */
  from: number;
  to: number;
}

const LINE_COLUMN = /\(line (\d+), column (\d+)\)/;
const NEAR = /at or near "((?:[^"]|"")*)"/;
const QUOTED = /"((?:[^"]|"")+)"/;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The end of the word (or the single character) starting at `from`. */
function wordEnd(sql: string, from: number): number {
  const word = /[\w$.]+|"(?:[^"]|"")*"|'(?:[^']|'')*'/y;
  word.lastIndex = from;
  return word.test(sql) ? word.lastIndex : Math.min(sql.length, from + 1);
}

export function errorRange(description: string, sql: string): ErrorRange | null {
  const place = LINE_COLUMN.exec(description);
  if (place) {
    const lines = sql.split('\n');
    const line = Number(place[1]) - 1;
    if (line >= lines.length) return null;
    const start = lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0) + Math.max(0, Number(place[2]) - 1);
    if (start >= sql.length) return sql.length > 0 ? { from: sql.length - 1, to: sql.length } : null;
    const near = NEAR.exec(description)?.[1]?.replace(/""/g, '"');
    const to = near && sql.startsWith(near, start) ? start + near.length : wordEnd(sql, start);
    return { from: start, to };
  }
  const name = QUOTED.exec(description)?.[1]?.replace(/""/g, '"');
  if (!name) return null;
  // "SYS.nosuch": the whole name, else its last part; matched as a word, in any case, quoted or not.
  for (const candidate of [name, name.split('.').pop()!]) {
    const parts = candidate.split('.').map((p) => `"?${escapeRegExp(p)}"?`);
    const found = new RegExp(`(?<![\\w$"])${parts.join('\\s*\\.\\s*')}(?![\\w$])`, 'i').exec(sql);
    if (found) return { from: found.index, to: found.index + found[0].length };
  }
  return null;
}
