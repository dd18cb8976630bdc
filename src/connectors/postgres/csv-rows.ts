/**
 * Rows as CSV, written by PostgreSQL itself (whole-statement pushdown, Accept: text/csv): each
 * value is the text of its JSON value as json-rows.ts writes it, so the CSV reads the same as the
 * one vdb writes from the JSON rows (results/csv.ts); COPY's CSV quotes as RFC 4180 does and
 * writes NULL as an empty field, the empty string as `""`. Only its line ends differ: LF, turned
 * into CRLF here (outside quoted fields).
 */
import type { StatementColumn } from '../types.js';
import { jsonValueSql } from './json-rows.js';

/**
 * Types whose text is their JSON value's text: numbers (to_json writes a number with its output
 * function; NaN and the infinities as strings of the same text), text (json-rows.ts writes
 * format('%s'): the output function too), booleans (`true`/`false` both ways) and dates (JSON's
 * form is the ISO one, BC and infinity included, and the connector's sessions set DateStyle ISO).
 * For PostgreSQL that is about half the work of going through JSON; timestamps (JSON writes a
 * `T`) and the rest go through their JSON (`to_json(v) #>> '{}'`).
 */
const AS_TEXT = /^(SMALLINT|INTEGER|BIGINT|FLOAT|DOUBLE|VARCHAR|BOOLEAN|DATE|DECIMAL\(\d+,\d+\))$/;

/**
 * The SELECT list of the CSV values of a statement's columns (c0, c1, ... of `q`): COPY writes a
 * value with its type's output function, as `format('%s')` does (a `char(n)` keeps its padding,
 * which `::text` would strip); a boolean's is `t`/`f`, its `::text` `true`/`false`.
 */
export function csvValuesSql(columns: readonly StatementColumn[]): string {
  return columns
    .map((column, i) =>
      column.type === 'BOOLEAN' ? `q.c${i}::text` : AS_TEXT.test(column.type) ? `q.c${i}` : `(${jsonValueSql(column, i)}) #>> '{}'`,
    )
    .join(', ');
}

const QUOTE = 0x22;
const LF = 0x0a;
const CRLF = Buffer.from('\r\n');

/**
 * COPY's CSV chunks as whole rows with CRLF line ends: rows are counted (line ends outside
 * quotes), a row longer than `maxRow` bytes is refused, and a row cut by a chunk's end waits
 * for the next chunk, so each text holds whole rows only.
 */
export class CsvLineEnds {
  private quoted = false;
  private rowLength = 0;
  /** Bytes read since the last row end (no row end among them). */
  private pending: Buffer[] = [];

  constructor(
    private readonly maxRow: number,
    private readonly tooLarge: () => Error,
  ) {}

  /** The whole rows completed by `chunk`, with CRLF line ends, and how many they are. */
  convert(chunk: Buffer): { text: string; rows: number } {
    // Without quotes anywhere (most chunks of numbers and dates) every LF ends a row.
    if (this.pending.length === 0 && !this.quoted && chunk.indexOf(QUOTE) < 0) {
      let rows = 0;
      let from = 0;
      for (let i = chunk.indexOf(LF); i >= 0; i = chunk.indexOf(LF, i + 1)) {
        if (i - from > this.maxRow) throw this.tooLarge();
        from = i + 1;
        rows++;
      }
      this.keep(chunk.subarray(from));
      return { text: rows === 0 ? '' : chunk.toString('utf8', 0, from).replaceAll('\n', '\r\n'), rows };
    }
    const pieces: Buffer[] = [];
    let rows = 0;
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === QUOTE) this.quoted = !this.quoted;
      else if (byte === LF && !this.quoted) {
        if (this.rowLength + (i - from) > this.maxRow) throw this.tooLarge();
        pieces.push(...this.pending, chunk.subarray(from, i), CRLF);
        this.pending = [];
        this.rowLength = 0;
        from = i + 1;
        rows++;
      }
    }
    this.keep(chunk.subarray(from));
    return { text: rows === 0 ? '' : Buffer.concat(pieces).toString('utf8'), rows };
  }

  /** What is left after the last chunk (nothing, for COPY's output, whose last row ends with LF). */
  end(): string {
    const rest = Buffer.concat(this.pending).toString('utf8');
    this.pending = [];
    return rest;
  }

  private keep(rest: Buffer): void {
    if (rest.length === 0) return;
    this.rowLength += rest.length;
    if (this.rowLength > this.maxRow) throw this.tooLarge();
    this.pending.push(rest);
  }
}
