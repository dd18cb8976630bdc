/**
 * Rows as JSON from PostgreSQL's COPY text (whole-statement pushdown): PostgreSQL sends each
 * value's own text, the fastest thing it writes (a third of the time of building one JSON text
 * per row there), and this module writes the JSON rows byte by byte, exactly as `to_json` would
 * (json-rows.ts, whose rows the prepared path still reads):
 *
 * | PostgreSQL type | selected | JSON |
 * |---|---|---|
 * | smallint, integer, bigint, numeric, real, double precision | the value | its text; NaN and the infinities as strings |
 * | boolean | the value | `true` / `false` for `t` / `f` |
 * | date (DateStyle ISO), and every type the engine shows as text | the value | a JSON string of its text, escaped as `to_json` escapes |
 * | the rest (timestamps, intervals, bytea, ...) | its JSON (json-rows.ts) | as it is |
 *
 * COPY's text escapes `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\v` and writes NULL as `\N`; other
 * control characters come raw (JSON needs them as `\u00XX`).
 */
import type { StatementColumn } from '../types.js';
import { jsonValueSql } from './json-rows.js';

type ValueKind = 'number' | 'boolean' | 'string' | 'json';

const NUMBERS = /^(smallint|integer|bigint|real|double precision|numeric(\(\d+,\d+\))?)$/;

function kindOf(column: StatementColumn): ValueKind {
  if (NUMBERS.test(column.sourceType)) return 'number';
  if (column.sourceType === 'boolean') return 'boolean';
  if (column.type === 'VARCHAR' || column.sourceType === 'date') return 'string';
  return 'json';
}

/** The SELECT list of a COPY whose rows `CopyToJson` reads (columns c0, c1, ... of `q`). */
export function copyJsonValuesSql(columns: readonly StatementColumn[]): string {
  if (columns.length === 0) return 'NULL';
  return columns.map((column, i) => (kindOf(column) === 'json' ? jsonValueSql(column, i) : `q.c${i}`)).join(', ');
}

const TAB = 0x09;
const LF = 0x0a;
const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const ASCII = (text: string) => Buffer.from(text, 'latin1');
/** JSON of the byte after a backslash in COPY's text (`\v` has no short form in JSON). */
const ESCAPED: Record<number, Buffer> = {
  0x5c: ASCII('\\\\'),
  0x62: ASCII('\\b'),
  0x66: ASCII('\\f'),
  0x6e: ASCII('\\n'),
  0x72: ASCII('\\r'),
  0x74: ASCII('\\t'),
  0x76: ASCII('\\u000b'),
};
const NULL = ASCII('null');
const TRUE = ASCII('true');
const FALSE = ASCII('false');
const HEX = '0123456789abcdef';
const UNICODE_ESCAPE = ASCII('\\u00');

/**
 * COPY text chunks to JSON rows: each call answers the rows its chunk completes, joined by
 * commas, and how many they are; a row cut by a chunk's end waits for the next chunk.
 */
export class CopyToJson {
  private readonly kinds: ValueKind[];
  /** Per column: what opens its value (`[` or `,` / `{"name":` or `,"name":`). */
  private readonly openers: Buffer[];
  private readonly close: Buffer;
  /** Bytes a row adds beyond its values' text: openers, closer, a comma, two quotes per value. */
  private readonly overhead: number;
  private pending: Buffer = Buffer.alloc(0);
  private out = Buffer.alloc(1 << 16);
  private length = 0;

  constructor(
    columns: readonly StatementColumn[],
    shape: 'array' | 'object',
    /** The longest JSON text of a row (characters); past it, `tooLarge`. */
    private readonly maxRow: number,
    private readonly tooLarge: () => Error,
  ) {
    this.kinds = columns.map(kindOf);
    this.openers = columns.map((column, i) => {
      const separator = i === 0 ? (shape === 'array' ? '[' : '{') : ',';
      return Buffer.from(shape === 'array' ? separator : `${separator}${JSON.stringify(column.name)}:`, 'utf8');
    });
    this.close = ASCII(shape === 'array' ? (columns.length === 0 ? '[]' : ']') : columns.length === 0 ? '{}' : '}');
    this.overhead = this.openers.reduce((sum, opener) => sum + opener.length + 2, this.close.length + 1);
  }

  convert(chunk: Buffer): { text: string; rows: number } {
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const last = data.lastIndexOf(LF);
    // COPY doubles a backslash at most: a row within the limit is at most twice as long.
    if (last < 0) {
      if (data.length > this.maxRow * 2 + 2) throw this.tooLarge();
      this.pending = data;
      return { text: '', rows: 0 };
    }
    this.pending = data.subarray(last + 1);
    if (this.pending.length > this.maxRow * 2 + 2) throw this.tooLarge();
    this.length = 0;
    let rows = 0;
    for (let start = 0; start <= last; rows++) start = this.row(data, start);
    return { text: this.out.toString('utf8', 0, this.length), rows };
  }

  /** Writes the row starting at `start` (a comma before all but the chunk's first); answers where the next starts. */
  private row(data: Buffer, start: number): number {
    const rowEnd = data.indexOf(LF, start);
    // At most six bytes per byte of text (`\u00XX`), plus the openers, quotes and the comma.
    this.reserve((rowEnd - start) * 6 + this.overhead);
    const out = this.out;
    let n = this.length;
    if (n > 0) out[n++] = 0x2c;
    const rowStart = n;
    let at = start;
    for (let c = 0; c < this.kinds.length; c++) {
      n = writeBytes(this.openers[c]!, out, n);
      let end = at;
      while (end < rowEnd && data[end] !== TAB) end++;
      n = writeValue(this.kinds[c]!, data, at, end, out, n);
      at = end + 1;
    }
    n = writeBytes(this.close, out, n);
    this.length = n;
    if (n - rowStart > this.maxRow && out.toString('utf8', rowStart, n).length > this.maxRow) throw this.tooLarge();
    return rowEnd + 1;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.out.length) return;
    const grown = Buffer.alloc(Math.max(this.out.length * 2, this.length + bytes));
    this.out.copy(grown, 0, 0, this.length);
    this.out = grown;
  }

  /** What is left after the last chunk: nothing, for COPY's output, whose last row ends with LF. */
  end(): void {
    if (this.pending.length > 0) throw new Error('COPY ended within a row');
  }
}

/** Writes one value's JSON at `n` of `out` (room reserved); answers where it ends. */
function writeValue(kind: ValueKind, data: Buffer, start: number, end: number, out: Buffer, n: number): number {
  if (end - start === 2 && data[start] === BACKSLASH && data[start + 1] === 0x4e) return writeBytes(NULL, out, n);
  switch (kind) {
    case 'number': {
      // NaN, Infinity, -Infinity: strings, as to_json writes them.
      const first = data[start + (data[start] === 0x2d ? 1 : 0)]!;
      const numeric = first >= 0x30 && first <= 0x39;
      if (!numeric) out[n++] = QUOTE;
      for (let i = start; i < end; i++) out[n++] = data[i]!;
      if (!numeric) out[n++] = QUOTE;
      return n;
    }
    case 'boolean':
      return writeBytes(data[start] === 0x74 ? TRUE : FALSE, out, n);
    case 'string':
      return writeString(data, start, end, out, n);
    case 'json':
      // A JSON text PostgreSQL wrote, whose only escapes in COPY's text are doubled backslashes.
      for (let i = start; i < end; i++) {
        const byte = data[i]!;
        out[n++] = byte;
        if (byte === BACKSLASH) i++;
      }
      return n;
  }
}

/** A JSON string of COPY's text of a value, escaped as to_json escapes. */
function writeString(data: Buffer, start: number, end: number, out: Buffer, n: number): number {
  out[n++] = QUOTE;
  for (let i = start; i < end; i++) {
    const byte = data[i]!;
    if (byte >= 0x20 && byte !== QUOTE && byte !== BACKSLASH) out[n++] = byte;
    else if (byte === BACKSLASH) {
      // COPY writes no other escapes; a backslash before anything else would stand for that byte.
      const escaped = ESCAPED[data[++i]!];
      if (escaped) n = writeBytes(escaped, out, n);
      else out[n++] = data[i]!;
    } else if (byte === QUOTE) {
      out[n++] = BACKSLASH;
      out[n++] = QUOTE;
    } else {
      n = writeBytes(UNICODE_ESCAPE, out, n);
      out[n++] = HEX.charCodeAt(byte >> 4);
      out[n++] = HEX.charCodeAt(byte & 15);
    }
  }
  out[n++] = QUOTE;
  return n;
}

function writeBytes(bytes: Buffer, out: Buffer, n: number): number {
  for (let k = 0; k < bytes.length; k++) out[n++] = bytes[k]!;
  return n;
}
