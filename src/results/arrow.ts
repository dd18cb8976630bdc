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
import { isString, stringValue } from './json-scan.js';

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

/** One column of a batch as Arrow data, from the value tokens `values` (null: SQL NULL). */
function columnData(column: ArrowColumn, values: ReadonlyArray<string>): Data {
  const length = values.length;
  const nullBitmap = new Uint8Array((length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < length; i++) {
    if (values[i] === 'null') nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  }
  const common = { length, nullCount, nullBitmap };
  const each = (write: (token: string, i: number) => void) => {
    for (let i = 0; i < length; i++) if (values[i] !== 'null') write(values[i]!, i);
  };
  const type = column.type;
  switch (column.kind) {
    case 'bool': {
      const data = new Uint8Array((length + 7) >> 3);
      each((token, i) => {
        if (token === 'true') data[i >> 3]! |= 1 << (i & 7);
      });
      return make({ type, ...common, data });
    }
    case 'int': {
      const Array = (column.type as Int8).ArrayType as unknown as new (n: number) => Int32Array;
      const data = new Array(length);
      each((token, i) => (data[i] = Number(token)));
      return make({ type, ...common, data });
    }
    case 'bigint': {
      const data = column.type instanceof Uint64 ? new BigUint64Array(length) : new BigInt64Array(length);
      each((token, i) => (data[i] = BigInt(token)));
      return make({ type, ...common, data });
    }
    case 'float': {
      const data = column.type instanceof Float32 ? new Float32Array(length) : new Float64Array(length);
      each((token, i) => (data[i] = Number(isString(token) ? stringValue(token) : token)));
      return make({ type, ...common, data });
    }
    case 'decimal': {
      const words = new BigInt64Array(length * 2);
      each((token, i) => {
        const n = decimalUnscaled(token, column.scale);
        words[2 * i] = BigInt.asIntN(64, n);
        words[2 * i + 1] = BigInt.asIntN(64, n >> 64n);
      });
      return make({ type, ...common, data: new Uint32Array(words.buffer) });
    }
    case 'date': {
      const data = new Int32Array(length);
      each((token, i) => (data[i] = dateDays(stringValue(token))));
      return make({ type, ...common, data });
    }
    case 'timestamp': {
      const data = new BigInt64Array(length);
      each((token, i) => (data[i] = timestampMicros(stringValue(token))));
      return make({ type, ...common, data });
    }
    case 'binary':
    case 'utf8': {
      const texts = values.map((token) => (token === 'null' ? null : isString(token) ? stringValue(token) : token));
      const bytes = texts.map((text) =>
        text === null ? null : column.kind === 'binary' ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8'),
      );
      const valueOffsets = new Int32Array(length + 1);
      let total = 0;
      bytes.forEach((b, i) => {
        total += b?.length ?? 0;
        valueOffsets[i + 1] = total;
      });
      const data = new Uint8Array(total);
      bytes.forEach((b, i) => b && data.set(b, valueOffsets[i]!));
      return make({ type, ...common, valueOffsets, data });
    }
  }
}

/** A record batch of rows given as their value tokens. */
export function recordBatch(schema: Schema, arrow: readonly ArrowColumn[], rows: ReadonlyArray<ReadonlyArray<string>>): RecordBatch {
  const children = arrow.map((column, j) =>
    columnData(
      column,
      rows.map((row) => row[j]!),
    ),
  );
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new RecordBatch(schema, data);
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

/** Writes an Arrow IPC stream batch by batch: each call returns the bytes to send next. */
export class ArrowStreamWriter {
  private readonly sink = new Collected();
  private readonly writer = new RecordBatchStreamWriter({ autoDestroy: false });
  private readonly schema: Schema;
  private readonly arrow: ArrowColumn[];
  private wrote = false;

  constructor(columns: readonly TypedName[]) {
    ({ schema: this.schema, arrow: this.arrow } = arrowSchema(columns));
    this.writer.reset(this.sink, this.schema);
  }

  /** The bytes of one batch of rows (and, before the first, the schema). */
  batch(rows: ReadonlyArray<ReadonlyArray<string>>): Buffer {
    this.writer.write(recordBatch(this.schema, this.arrow, rows));
    this.wrote = true;
    return this.sink.take();
  }

  /** The last bytes: an empty batch for a result without rows (so the schema is there), then the end of stream. */
  end(): Buffer {
    if (!this.wrote) this.writer.write(recordBatch(this.schema, this.arrow, []));
    this.writer.finish();
    return this.sink.take();
  }
}
