/**
 * Rows as CSV, written by PostgreSQL itself (whole-statement pushdown, Accept: text/csv): each
 * value is the text of its JSON value as json-rows.ts writes it, so the CSV reads the same as the
 * one vdb writes from the JSON rows (results/csv.ts); COPY's CSV quotes as RFC 4180 does and
 * writes NULL as an empty field, the empty string as `""`. Only its line ends differ: LF, turned
 * into CRLF here (outside quoted fields).
 */
import { StringDecoder } from 'node:string_decoder';
import type { StatementColumn } from '../types.js';
import { jsonValueSql } from './json-rows.js';

/**
 * Types whose text is their JSON value's text: numbers (to_json writes a number with its output
 * function; NaN and the infinities as strings of the same text) and text (json-rows.ts writes
 * format('%s'): the output function too). For PostgreSQL that is about half the work of going
 * through JSON; dates, booleans and the rest go through their JSON (`to_json(v) #>> '{}'`).
 */
const AS_TEXT = /^(SMALLINT|INTEGER|BIGINT|FLOAT|DOUBLE|VARCHAR|DECIMAL\(\d+,\d+\))$/;

/** The SELECT list of the CSV values of a statement's columns (c0, c1, ... of `q`). */
export function csvValuesSql(columns: readonly StatementColumn[]): string {
  return columns.map((column, i) => (AS_TEXT.test(column.type) ? `q.c${i}::text` : `(${jsonValueSql(column, i)}) #>> '{}'`)).join(', ');
}

const QUOTE = 0x22;
const LF = 0x0a;
const CRLF = Buffer.from('\r\n');

/**
 * COPY's CSV chunks with CRLF line ends, as text; counts rows (line ends outside quotes) and
 * refuses a row longer than `maxRow` bytes.
 */
export class CsvLineEnds {
  private quoted = false;
  private rowLength = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly maxRow: number,
    private readonly tooLarge: () => Error,
  ) {}

  /** Counts a row ending at `end` of a chunk whose current row began at `from`. */
  private rowEnds(from: number, end: number): void {
    if (this.rowLength + (end - from) > this.maxRow) throw this.tooLarge();
    this.rowLength = 0;
  }

  private rest(chunk: Buffer, from: number): void {
    this.rowLength += chunk.length - from;
    if (this.rowLength > this.maxRow) throw this.tooLarge();
  }

  /** The chunk with CRLF line ends, and how many rows ended in it. */
  convert(chunk: Buffer): { text: string; rows: number } {
    let rows = 0;
    let from = 0;
    // Without quotes in the chunk (most chunks of numbers and dates) every LF ends a row.
    if (!this.quoted && chunk.indexOf(QUOTE) < 0) {
      for (let i = chunk.indexOf(LF); i >= 0; i = chunk.indexOf(LF, i + 1)) {
        this.rowEnds(from, i);
        from = i + 1;
        rows++;
      }
      this.rest(chunk, from);
      return { text: this.decoder.write(chunk).replaceAll('\n', '\r\n'), rows };
    }
    const pieces: Buffer[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === QUOTE) this.quoted = !this.quoted;
      else if (byte === LF && !this.quoted) {
        this.rowEnds(from, i);
        pieces.push(chunk.subarray(from, i), CRLF);
        from = i + 1;
        rows++;
      }
    }
    this.rest(chunk, from);
    pieces.push(chunk.subarray(from));
    return { text: this.decoder.write(Buffer.concat(pieces)), rows };
  }
}
