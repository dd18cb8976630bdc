/**
 * Rows as CSV, written by PostgreSQL itself (whole-statement pushdown, Accept: text/csv): each
 * value is the text of its JSON value as json-rows.ts writes it (`to_json(v) #>> '{}'`), so the
 * CSV reads the same as the one vdb writes from the JSON rows (results/csv.ts); COPY's CSV quotes
 * as RFC 4180 does and writes NULL as an empty field, the empty string as `""`. Only its line
 * ends differ: LF, turned into CRLF here (outside quoted fields).
 */
import { StringDecoder } from 'node:string_decoder';
import type { StatementColumn } from '../types.js';
import { jsonValueSql } from './json-rows.js';

/** The SELECT list of the CSV values of a statement's columns (c0, c1, ... of `q`). */
export function csvValuesSql(columns: readonly StatementColumn[]): string {
  return columns
    .map((column, i) =>
      // Text as it is (json-rows.ts writes it as a JSON string of format('%s')); others through their JSON.
      column.type === 'VARCHAR'
        ? `CASE WHEN q.c${i} IS NULL THEN NULL ELSE format('%s', q.c${i}) END`
        : `(${jsonValueSql(column, i)}) #>> '{}'`,
    )
    .join(', ');
}

const QUOTE = 0x22;
const LF = 0x0a;

/**
 * COPY's CSV chunks with CRLF line ends, as text; counts rows (line ends outside quotes) and
 * refuses a row longer than `maxRow` characters.
 */
export class CsvLineEnds {
  private quoted = false;
  private rowLength = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly maxRow: number,
    private readonly tooLarge: () => Error,
  ) {}

  /** The chunk with CRLF line ends, and how many rows ended in it. */
  convert(chunk: Buffer): { text: string; rows: number } {
    const pieces: string[] = [];
    let rows = 0;
    let from = 0;
    // Without quotes in the chunk (most chunks of numbers and dates) only the line ends are looked at.
    const plain = !this.quoted && chunk.indexOf(QUOTE) < 0;
    for (let i = plain ? chunk.indexOf(LF) : 0; i >= 0 && i < chunk.length; i = plain ? chunk.indexOf(LF, i + 1) : i + 1) {
      const byte = chunk[i];
      if (byte === QUOTE) this.quoted = !this.quoted;
      else if (byte === LF && !this.quoted) {
        if (this.rowLength + (i - from) > this.maxRow) throw this.tooLarge();
        pieces.push(this.decoder.write(chunk.subarray(from, i)), '\r\n');
        from = i + 1;
        this.rowLength = 0;
        rows++;
      }
    }
    this.rowLength += chunk.length - from;
    if (this.rowLength > this.maxRow) throw this.tooLarge();
    pieces.push(this.decoder.write(chunk.subarray(from)));
    return { text: pieces.join(''), rows };
  }
}
