/**
 * Results as an Arrow IPC stream (application/vnd.apache.arrow.stream): one schema, then record
 * batches as the rows come. Values are read from the JSON texts of the rows (json-scan.ts), typed
 * by the result's SQL types (the SQL-Column-Types names):
 *
 * | SQL type | Arrow type |
 * |---|---|
 * | BOOLEAN | Bool |
 * | TINYINT, SMALLINT, INTEGER, BIGINT (and unsigned) | Int8 ... Int64 (Uint8 ... Uint64) |
 * | FLOAT, DOUBLE | Float32, Float64 (NaN, ±Infinity kept) |
 * | DECIMAL(p,s) | Decimal(p, s), 128 bits, exact |
 * | DATE | Date32 (days); infinity and -infinity as the largest and smallest Int32 |
 * | TIMESTAMP, TIMESTAMP WITH TIME ZONE | Timestamp(microsecond), the latter with time zone UTC; infinities as the largest and smallest Int64 |
 * | BLOB | Binary |
 * | anything else (VARCHAR, NUMERIC without a scale, HUGEINT, JSON, lists, intervals, ...) | Utf8: the text of the JSON answer |
 */
import {
  AsyncByteQueue,
  Binary,
  Bool,
  DateDay,
  Decimal,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  TimestampMicrosecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  type Data,
  type DataType,
} from 'apache-arrow';
import { scanArrayRows } from './json-scan.js';
import { scanCsvRows } from './csv.js';

/** A column of the result: its name and SQL type name. */
export interface TypedName {
  name: string;
  type: string;
}

type Kind = 'bool' | 'int' | 'bigint' | 'float' | 'decimal' | 'date' | 'timestamp' | 'binary' | 'utf8';

interface ArrowColumn {
  kind: Kind;
  type: DataType;
  /** For 'decimal': the scale. */
  scale: number;
}

const INTS: Record<string, () => DataType> = {
  TINYINT: () => new Int8(),
  SMALLINT: () => new Int16(),
  INTEGER: () => new Int32(),
  UTINYINT: () => new Uint8(),
  USMALLINT: () => new Uint16(),
  UINTEGER: () => new Uint32(),
};

/** The Arrow type of a SQL type name. */
export function arrowColumn(typeName: string): ArrowColumn {
  const name = typeName.toUpperCase();
  const plain = (kind: Kind, type: DataType): ArrowColumn => ({ kind, type, scale: 0 });
  if (name === 'BOOLEAN') return plain('bool', new Bool());
  if (INTS[name]) return plain('int', INTS[name]());
  if (name === 'BIGINT') return plain('bigint', new Int64());
  if (name === 'UBIGINT') return plain('bigint', new Uint64());
  if (name === 'FLOAT') return plain('float', new Float32());
  if (name === 'DOUBLE') return plain('float', new Float64());
  if (name === 'DATE') return plain('date', new DateDay());
  if (/^TIMESTAMP(_S|_MS|_NS)?$/.test(name)) return plain('timestamp', new TimestampMicrosecond());
  if (name === 'TIMESTAMP WITH TIME ZONE') return plain('timestamp', new TimestampMicrosecond('UTC'));
  if (name === 'BLOB') return plain('binary', new Binary());
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(name);
  if (decimal) return { kind: 'decimal', type: new Decimal(Number(decimal[2]), Number(decimal[1]), 128), scale: Number(decimal[2]) };
  return plain('utf8', new Utf8());
}

/** The Arrow schema of a result. */
export function arrowSchema(columns: readonly TypedName[]): { schema: Schema; arrow: ArrowColumn[] } {
  const arrow = columns.map((c) => arrowColumn(c.type));
  return { schema: new Schema(columns.map((c, i) => new Field(c.name, arrow[i]!.type, true))), arrow };
}

/** Days from 1970-01-01 of a proleptic Gregorian date (astronomical years: 1 BC is 0). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const DATE = /^(\d+)-(\d\d)-(\d\d)( BC)?$/;
const TIMESTAMP = /^(\d+)-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:([+-])(\d\d)(?::?(\d\d))?(?::\d\d)?)?( BC)?$/;
const INT32_MAX = 2147483647;
const INT64_MAX = 2n ** 63n - 1n;

function unreadable(value: string, what: string): Error {
  return new Error(`The value ${value.slice(0, 100)} cannot be written as an Arrow ${what}.`);
}

function dateDays(text: string): number {
  if (text === 'infinity') return INT32_MAX;
  if (text === '-infinity') return -INT32_MAX - 1;
  const m = DATE.exec(text);
  if (!m) throw unreadable(text, 'date');
  const year = m[4] ? 1 - Number(m[1]) : Number(m[1]);
  return daysFromCivil(year, Number(m[2]), Number(m[3]));
}

function timestampMicros(text: string): bigint {
  if (text === 'infinity') return INT64_MAX;
  if (text === '-infinity') return -INT64_MAX - 1n;
  const m = TIMESTAMP.exec(text);
  if (!m) throw unreadable(text, 'timestamp');
  const year = m[11] ? 1 - Number(m[1]) : Number(m[1]);
  let seconds = daysFromCivil(year, Number(m[2]), Number(m[3])) * 86400 + Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6]);
  if (m[8]) seconds -= (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60);
  const micros = Number((m[7] ?? '').padEnd(6, '0').slice(0, 6));
  return BigInt(seconds) * 1_000_000n + BigInt(micros);
}

/** The unscaled integer of a decimal text at `scale` (12.5 at scale 2: 1250). */
function decimalUnscaled(text: string, scale: number): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m || (m[3] ?? '').length > scale) throw unreadable(text, `decimal of scale ${scale}`);
  return BigInt(`${m[1]}${m[2]}${(m[3] ?? '').padEnd(scale, '0')}`);
}

/** makeData over the props of any type (its overloads want the exact one). */
const make = (props: Record<string, unknown>): Data => makeData(props as never) as Data;

/** Rows of one record batch: fewer, larger batches cost readers less. */
export const ARROW_BATCH_ROWS = 16 * 1024;

const TWO_32 = 4294967296;
/** Digits a number holds exactly (below 2^53). */
const EXACT_DIGITS = 15;

/** The integer written at [start, end) of `text` (at most EXACT_DIGITS digits, an optional minus). */
function intAt(text: string, start: number, end: number): number {
  const negative = text.charCodeAt(start) === 0x2d;
  let n = 0;
  for (let i = negative ? start + 1 : start; i < end; i++) n = n * 10 + (text.charCodeAt(i) - 48);
  return negative ? -n : n;
}

/** Two's complement words (low first) of an integer below 2^53 in magnitude, at `words[at]`. */
function setWords(words: Int32Array, at: number, n: number, count: 2 | 4): void {
  words[at] = n >>> 0;
  const high = Math.floor(n / TWO_32);
  words[at + 1] = high;
  if (count === 4) words[at + 2] = words[at + 3] = n < 0 ? -1 : 0;
}

/**
 * How the values of the rows read: JSON texts (strings quoted, with escapes; NULL is `null`) or
 * CSV lines (a field quoted where it must be, quotes doubled; NULL is an empty unquoted field).
 */
interface ValueForm {
  /** The text a value stands for. */
  text(text: string, start: number, end: number): string;
  /** 1 when dates and timestamps come quoted (JSON), 0 when bare (CSV). */
  quote: 0 | 1;
}

/** The text of a value: a string's content, or the JSON text of anything else. */
function textOf(text: string, start: number, end: number): string {
  if (text.charCodeAt(start) !== 0x22) return text.slice(start, end);
  for (let i = start + 1; i < end - 1; i++) if (text.charCodeAt(i) === 0x5c) return JSON.parse(text.slice(start, end)) as string;
  return text.slice(start + 1, end - 1);
}

const JSON_FORM: ValueForm = { text: textOf, quote: 1 };
const CSV_FORM: ValueForm = {
  text: (text, start, end) =>
    text.charCodeAt(start) === 0x22 ? text.slice(start + 1, end - 1).replaceAll('""', '"') : text.slice(start, end),
  quote: 0,
};

const digitsAt = (text: string, start: number, count: number) => {
  let n = 0;
  for (let i = start; i < start + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
};

/** One column of the batch being built: values written at their row, nulls left to the bitmap. */
interface Builder {
  add(text: string, start: number, end: number, row: number): void;
  addNull(row: number): void;
  data(length: number, nullBitmap: Uint8Array, nullCount: number): Data;
}

/** Fixed-width values in a typed array; `write` puts one value at its row. */
function fixed<A extends { subarray(begin: number, end: number): A }>(
  type: DataType,
  allocate: () => A,
  write: (values: A, text: string, start: number, end: number, row: number) => void,
  view: (values: A, length: number) => unknown = (values, length) => values.subarray(0, length),
): Builder {
  let values = allocate();
  return {
    add: (text, start, end, row) => write(values, text, start, end, row),
    addNull: () => undefined,
    data(length, nullBitmap, nullCount) {
      const data = make({ type, length, nullCount, nullBitmap, data: view(values, length) });
      values = allocate();
      return data;
    },
  };
}

/** 64-bit integers: exact numbers below 2^53 written as two words, longer ones through BigInt. */
function int64Builder(type: DataType, unsigned: boolean): Builder {
  return fixed(
    type,
    () => new Int32Array(ARROW_BATCH_ROWS * 2),
    (words, text, start, end, row) => {
      if (end - start <= EXACT_DIGITS) return setWords(words, row * 2, intAt(text, start, end), 2);
      const wide = unsigned ? new BigUint64Array(words.buffer) : new BigInt64Array(words.buffer);
      wide[row] = BigInt(text.slice(start, end));
    },
    (words, length) => (unsigned ? new BigUint64Array(words.buffer, 0, length) : new BigInt64Array(words.buffer, 0, length)),
  );
}

/** Decimal128 at `scale`: the unscaled integer, as a number while exact, else through BigInt. */
function decimalBuilder(type: DataType, scale: number): Builder {
  return fixed(
    type,
    () => new Int32Array(ARROW_BATCH_ROWS * 4),
    (words, text, start, end, row) => {
      // The point, looked for within the value only (a chunk may have none for a long way).
      let point = -1;
      for (let i = start; i < end; i++) if (text.charCodeAt(i) === 0x2e) point = i;
      const fraction = point >= 0 ? end - point - 1 : 0;
      if (fraction > scale) throw unreadable(text.slice(start, end), `decimal of scale ${scale}`);
      const digits = end - start - (point >= 0 ? 1 : 0) + (scale - fraction);
      if (digits <= EXACT_DIGITS) {
        const negative = text.charCodeAt(start) === 0x2d;
        let n = 0;
        for (let i = negative ? start + 1 : start; i < end; i++) if (i !== point) n = n * 10 + (text.charCodeAt(i) - 48);
        n *= 10 ** (scale - fraction);
        return setWords(words, row * 4, negative ? -n : n, 4);
      }
      const n = decimalUnscaled(text.slice(start, end), scale);
      const wide = new BigInt64Array(words.buffer);
      wide[row * 2] = BigInt.asIntN(64, n);
      wide[row * 2 + 1] = BigInt.asIntN(64, n >> 64n);
    },
    (words, length) => new Uint32Array(words.buffer, 0, length * 4),
  );
}

/** Days of a date "YYYY-MM-DD" read in place; other forms (BC, infinity) by dateDays. */
function dateAt(text: string, start: number, end: number, form: ValueForm): number {
  const s = start + form.quote;
  if (end - start === 10 + 2 * form.quote && text.charCodeAt(s + 4) === 0x2d && text.charCodeAt(s + 7) === 0x2d) {
    const year = digitsAt(text, s, 4);
    const month = digitsAt(text, s + 5, 2);
    const day = digitsAt(text, s + 8, 2);
    if (year >= 0 && month >= 0 && day >= 0) return daysFromCivil(year, month, day);
  }
  return dateDays(form.text(text, start, end));
}

/** Microseconds of "YYYY-MM-DDTHH:MM:SS[.f][+00:00]" read in place as a number, or null for other forms. */
function timestampAt(text: string, start: number, end: number, form: ValueForm): number | null {
  const s = start + form.quote;
  const e = end - form.quote;
  if (e - s < 19 || text.charCodeAt(s + 10) !== 0x54 || text.charCodeAt(s + 4) !== 0x2d) return null;
  const parts = [
    digitsAt(text, s, 4),
    digitsAt(text, s + 5, 2),
    digitsAt(text, s + 8, 2),
    digitsAt(text, s + 11, 2),
    digitsAt(text, s + 14, 2),
    digitsAt(text, s + 17, 2),
  ];
  if (parts.some((p) => p < 0)) return null;
  let i = s + 19;
  let micros = 0;
  if (text.charCodeAt(i) === 0x2e) {
    let scale = 100000;
    for (i++; i < e && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57; i++) {
      micros += (text.charCodeAt(i) - 48) * scale;
      scale /= 10;
    }
    micros = Math.floor(micros);
  }
  let offset = 0;
  if (i < e) {
    const sign = text.charCodeAt(i);
    if ((sign !== 0x2b && sign !== 0x2d) || e - i !== 6) return null;
    const hours = digitsAt(text, i + 1, 2);
    const minutes = digitsAt(text, i + 4, 2);
    if (hours < 0 || minutes < 0) return null;
    offset = (sign === 0x2d ? -1 : 1) * (hours * 3600 + minutes * 60);
  }
  const [year, month, day, hour, minute, second] = parts as [number, number, number, number, number, number];
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  // Exact as a number up to about year 2255; later ones through BigInt.
  return Math.abs(seconds) < 9e9 ? seconds * 1e6 + micros : null;
}

function timestampBuilder(type: DataType, form: ValueForm): Builder {
  return fixed(
    type,
    () => new Int32Array(ARROW_BATCH_ROWS * 2),
    (words, text, start, end, row) => {
      const micros = timestampAt(text, start, end, form);
      if (micros !== null) return setWords(words, row * 2, micros, 2);
      new BigInt64Array(words.buffer)[row] = timestampMicros(form.text(text, start, end));
    },
    (words, length) => new BigInt64Array(words.buffer, 0, length),
  );
}

/** Variable-length values (Utf8, Binary): offsets, and the bytes written into one growing buffer. */
function variableBuilder(type: DataType, binary: boolean, form: ValueForm): Builder {
  let offsets = new Int32Array(ARROW_BATCH_ROWS + 1);
  let bytes = Buffer.allocUnsafe(64 * 1024);
  let used = 0;
  const room = (more: number) => {
    if (used + more <= bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(bytes.length * 2, used + more));
    bytes.copy(grown, 0, 0, used);
    bytes = grown;
  };
  return {
    add(text, start, end, row) {
      const value = form.text(text, start, end);
      if (binary) {
        const decoded = Buffer.from(value, 'base64');
        room(decoded.length);
        used += decoded.copy(bytes, used);
      } else {
        room(value.length * 3);
        used += bytes.write(value, used, 'utf8');
      }
      offsets[row + 1] = used;
    },
    addNull(row) {
      offsets[row + 1] = used;
    },
    data(length, nullBitmap, nullCount) {
      const data = make({
        type,
        length,
        nullCount,
        nullBitmap,
        valueOffsets: offsets.subarray(0, length + 1),
        data: bytes.subarray(0, used),
      });
      offsets = new Int32Array(ARROW_BATCH_ROWS + 1);
      bytes = Buffer.allocUnsafe(Math.max(64 * 1024, used));
      used = 0;
      return data;
    },
  };
}

function builderOf(column: ArrowColumn, form: ValueForm): Builder {
  const { type } = column;
  switch (column.kind) {
    case 'bool':
      return fixed(
        type,
        () => new Uint8Array(ARROW_BATCH_ROWS / 8),
        (bits, text, start, _end, row) => {
          if (text.charCodeAt(start) === 0x74) bits[row >> 3]! |= 1 << (row & 7);
        },
        (bits, length) => bits.subarray(0, (length + 7) >> 3),
      );
    case 'int': {
      const ArrayType = (type as Int8).ArrayType as unknown as new (n: number) => Int32Array;
      return fixed(
        type,
        () => new ArrayType(ARROW_BATCH_ROWS),
        (values, text, start, end, row) => (values[row] = intAt(text, start, end)),
      );
    }
    case 'bigint':
      return int64Builder(type, type instanceof Uint64);
    case 'float':
      return fixed(
        type,
        () => (type instanceof Float32 ? new Float32Array(ARROW_BATCH_ROWS) : new Float64Array(ARROW_BATCH_ROWS)),
        (values, text, start, end, row) => (values[row] = Number(form.text(text, start, end))),
      );
    case 'decimal':
      return decimalBuilder(type, column.scale);
    case 'date':
      return fixed(
        type,
        () => new Int32Array(ARROW_BATCH_ROWS),
        (values, text, start, end, row) => (values[row] = dateAt(text, start, end, form)),
      );
    case 'timestamp':
      return timestampBuilder(type, form);
    case 'binary':
    case 'utf8':
      return variableBuilder(type, column.kind === 'binary', form);
  }
}

/** Collects what the writer writes, so each batch's bytes can be sent as they are made. */
class Collected extends AsyncByteQueue {
  private pieces: Uint8Array[] = [];
  override write(value: Uint8Array): void {
    if (value.byteLength > 0) this.pieces.push(value);
  }
  take(): Buffer {
    const bytes = Buffer.concat(this.pieces);
    this.pieces = [];
    return bytes;
  }
}

/**
 * Writes an Arrow IPC stream from chunks of rows, JSON array rows or whole CSV lines (`form`):
 * each call returns the bytes of the batches it completed (the schema before the first), `end`
 * the rest and the end of the stream.
 */
export class ArrowStreamWriter {
  private readonly sink = new Collected();
  private readonly writer = new RecordBatchStreamWriter({ autoDestroy: false });
  private readonly schema: Schema;
  private readonly builders: Builder[];
  private rows = 0;
  private valid: Uint8Array[] = [];
  private nulls: number[] = [];
  private wrote = false;

  private readonly form: 'json' | 'csv';

  constructor(columns: readonly TypedName[], form: 'json' | 'csv' = 'json') {
    const { schema, arrow } = arrowSchema(columns);
    this.schema = schema;
    this.form = form;
    this.builders = arrow.map((column) => builderOf(column, form === 'csv' ? CSV_FORM : JSON_FORM));
    this.writer.reset(this.sink, this.schema);
    this.startBatch();
  }

  private startBatch(): void {
    this.rows = 0;
    this.valid = this.builders.map(() => new Uint8Array(ARROW_BATCH_ROWS / 8));
    this.nulls = this.builders.map(() => 0);
  }

  private flush(): void {
    const length = this.rows;
    const children = this.builders.map((builder, i) => builder.data(length, this.valid[i]!.subarray(0, (length + 7) >> 3), this.nulls[i]!));
    const data = make({ type: new Struct(this.schema.fields), length, nullCount: 0, children });
    this.writer.write(new RecordBatch(this.schema, data as Data<Struct>));
    this.wrote = true;
    this.startBatch();
  }

  /** The bytes of the batches completed by the rows of `chunk` ("[v,v],[v,v]", or CSV lines), maybe none. */
  write(chunk: string): Buffer {
    const { builders } = this;
    const csv = this.form === 'csv';
    (csv ? scanCsvRows : scanArrayRows)(
      chunk,
      (column, start, end) => {
        const row = this.rows;
        // NULL: JSON's null, CSV's empty unquoted field.
        if (csv ? start === end : end - start === 4 && chunk.charCodeAt(start) === 0x6e) {
          this.nulls[column]!++;
          builders[column]!.addNull(row);
        } else {
          this.valid[column]![row >> 3]! |= 1 << (row & 7);
          builders[column]!.add(chunk, start, end, row);
        }
      },
      () => {
        if (++this.rows === ARROW_BATCH_ROWS) this.flush();
      },
    );
    return this.sink.take();
  }

  /** The last bytes: the rows left (or, for a result without rows, an empty batch: the schema is there), then the end of stream. */
  end(): Buffer {
    if (this.rows > 0 || !this.wrote) this.flush();
    this.writer.finish();
    return this.sink.take();
  }
}
