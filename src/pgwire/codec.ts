/**
 * PostgreSQL's frontend/backend protocol 3.0, the bytes: reading the client's messages out of
 * the socket's chunks (the length-only start-up packets, then type byte + length frames), and
 * writing the server's messages. Nothing here knows what a message means.
 */

/** Most bytes of one client message: a statement of vdb's largest size and its parameters fit. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Protocol 3.0 and the special start-up codes (the version field of a start-up packet). */
export const PROTOCOL_3 = 196608;
export const SSL_REQUEST = 80877103;
export const GSSENC_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;

/** One message from the client: its type byte (0 for a start-up packet) and its body. */
export interface ClientMessage {
  type: number;
  body: Buffer;
}

/**
 * Cuts the socket's chunks into messages. Until `started`, a packet is a length and a body
 * (start-up, SSLRequest, CancelRequest); after it, a type byte, a length and a body.
 */
export class MessageReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  started = false;

  push(chunk: Buffer): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
  }

  /** The next whole message, or null until more bytes arrive; throws on a length out of bounds. */
  next(): ClientMessage | null {
    const header = this.started ? 5 : 4;
    if (this.pendingBytes < header) return null;
    const buffer = this.joined();
    const type = this.started ? buffer[0]! : 0;
    const length = buffer.readInt32BE(this.started ? 1 : 0);
    if (length < 4 || length > MAX_MESSAGE_BYTES) throw new Error(`invalid message length ${length}`);
    const total = length + (this.started ? 1 : 0);
    if (buffer.length < total) return null;
    const body = buffer.subarray(header, total);
    const rest = buffer.subarray(total);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return { type, body };
  }

  private joined(): Buffer {
    if (this.pending.length > 1) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!;
  }
}

/** A message that does not hold what its type says (too short, a string not terminated). */
export class ProtocolViolation extends Error {}

/** Reads the fields of a message body in order. */
export class BodyReader {
  private offset = 0;
  constructor(private readonly body: Buffer) {}

  private need(bytes: number): void {
    if (this.offset + bytes > this.body.length) throw new ProtocolViolation('a message is shorter than its fields');
  }

  int16(): number {
    this.need(2);
    const value = this.body.readInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  int32(): number {
    this.need(4);
    const value = this.body.readInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  /** A NUL-terminated UTF-8 string. */
  cstring(): string {
    const end = this.body.indexOf(0, this.offset);
    if (end < 0) throw new ProtocolViolation('a string of the message is not terminated');
    const text = this.body.toString('utf8', this.offset, end);
    this.offset = end + 1;
    return text;
  }

  bytes(count: number): Buffer {
    if (count < 0 || this.offset + count > this.body.length) throw new ProtocolViolation('a message is shorter than its fields');
    const value = this.body.subarray(this.offset, this.offset + count);
    this.offset += count;
    return value;
  }

  get remaining(): number {
    return this.body.length - this.offset;
  }
}

/** Builds one server message: the type byte, the length, then the fields appended. */
export class MessageWriter {
  private parts: Buffer[] = [];
  private size = 0;

  constructor(private readonly type: string) {}

  int16(value: number): this {
    const b = Buffer.allocUnsafe(2);
    b.writeInt16BE(value);
    return this.add(b);
  }

  int32(value: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32BE(value);
    return this.add(b);
  }

  byte(value: number): this {
    return this.add(Buffer.from([value]));
  }

  cstring(text: string): this {
    return this.add(Buffer.from(`${text}\0`, 'utf8'));
  }

  add(bytes: Buffer): this {
    this.parts.push(bytes);
    this.size += bytes.length;
    return this;
  }

  end(): Buffer {
    const head = Buffer.allocUnsafe(5);
    head.write(this.type, 0, 'latin1');
    head.writeInt32BE(this.size + 4, 1);
    return Buffer.concat([head, ...this.parts], this.size + 5);
  }
}

/** Messages that are the same bytes each time, made once (they are never written to). */
const constantMessages = new Map<string, Buffer>();
const constant = (key: string, make: () => Buffer): Buffer => {
  let message = constantMessages.get(key);
  if (!message) constantMessages.set(key, (message = make()));
  return message;
};

/** A message of `type` with no fields (ParseComplete, BindComplete, NoData, ...). */
export const emptyMessage = (type: string): Buffer => constant(type, () => new MessageWriter(type).end());

export const readyForQuery = (status: 'I' | 'T' | 'E'): Buffer =>
  constant(`Z${status}`, () => new MessageWriter('Z').byte(status.charCodeAt(0)).end());

export const parameterStatus = (name: string, value: string): Buffer => new MessageWriter('S').cstring(name).cstring(value).end();

export const commandComplete = (tag: string): Buffer => new MessageWriter('C').cstring(tag).end();

/**
 * A DataRow of texts (null: SQL NULL), written straight into one buffer: the hot path of a
 * result, no intermediate buffers per value.
 */
export function dataRow(values: ReadonlyArray<string | null>): Buffer {
  let size = 4 + 2;
  const lengths: number[] = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const length = value === null || value === undefined ? -1 : Buffer.byteLength(value, 'utf8');
    lengths[i] = length;
    size += 4 + Math.max(0, length);
  }
  const out = Buffer.allocUnsafe(size + 1);
  out.write('D', 0, 'latin1');
  out.writeInt32BE(size, 1);
  out.writeInt16BE(values.length, 5);
  let offset = 7;
  for (let i = 0; i < values.length; i++) {
    const length = lengths[i]!;
    out.writeInt32BE(length, offset);
    offset += 4;
    if (length > 0) offset += out.write(values[i]!, offset, 'utf8');
  }
  return out;
}

/**
 * The DataRows of many rows of texts in one buffer: each value written once, straight to its
 * place (its length after it is written), no buffer per row or per value. The buffer is made
 * for the most bytes the texts can take (3 per UTF-16 unit); the rest of it is not sent.
 */
export function dataRows(rows: ReadonlyArray<ReadonlyArray<string | null>>): Buffer {
  let capacity = 0;
  for (const row of rows) {
    capacity += 7 + 4 * row.length;
    for (const value of row) if (value) capacity += 3 * value.length;
  }
  const out = Buffer.allocUnsafe(capacity);
  let offset = 0;
  for (const row of rows) {
    const start = offset;
    out[offset] = 0x44; // 'D'
    out.writeInt16BE(row.length, offset + 5);
    offset += 7;
    for (const value of row) {
      if (value === null || value === undefined) {
        out.writeInt32BE(-1, offset);
        offset += 4;
        continue;
      }
      const length = value.length === 0 ? 0 : out.write(value, offset + 4, 'utf8');
      out.writeInt32BE(length, offset);
      offset += 4 + length;
    }
    out.writeInt32BE(offset - start - 1, start + 1);
  }
  return out.subarray(0, offset);
}

/** A DataRow of raw values (binary format, or text already as bytes). */
export function dataRowBytes(values: ReadonlyArray<Buffer | null>): Buffer {
  const writer = new MessageWriter('D').int16(values.length);
  for (const value of values) {
    if (value === null) writer.int32(-1);
    else writer.int32(value.length).add(value);
  }
  return writer.end();
}
