/**
 * Decoder of PostgreSQL's logical replication messages (the built-in `pgoutput` plugin, protocol
 * version 1), as pg_logical_slot_peek_binary_changes returns them: one message per row. Values
 * come in text (each type's output function), NULL, or "unchanged" (a TOASTed value an UPDATE
 * did not touch, which the message leaves out).
 */

/** A column value of a tuple: its text, NULL, or left out (unchanged TOAST). */
export type TupleValue = string | null | typeof UNCHANGED;
export const UNCHANGED: unique symbol = Symbol('unchanged TOAST value');

export interface RelationColumn {
  name: string;
  /** Part of the replica identity (the primary key by default). */
  key: boolean;
  typeOid: number;
  typeModifier: number;
}

export type PgOutputMessage =
  | { kind: 'begin' }
  | { kind: 'commit'; endLsn: string }
  | { kind: 'relation'; relationId: number; schema: string; table: string; columns: RelationColumn[] }
  | { kind: 'insert'; relationId: number; row: TupleValue[] }
  | { kind: 'update'; relationId: number; old: TupleValue[] | null; row: TupleValue[] }
  | { kind: 'delete'; relationId: number; old: TupleValue[] }
  | { kind: 'truncate'; relationIds: number[] }
  /** Origin, type and logical messages: nothing to apply. */
  | { kind: 'other'; tag: string };

/** Reads one message's fields in order. */
class Reader {
  private at = 0;
  constructor(private readonly buffer: Buffer) {}

  byte(): string {
    return String.fromCharCode(this.buffer.readUInt8(this.at++));
  }
  int8(): number {
    return this.buffer.readUInt8(this.at++);
  }
  int16(): number {
    const value = this.buffer.readInt16BE(this.at);
    this.at += 2;
    return value;
  }
  int32(): number {
    const value = this.buffer.readInt32BE(this.at);
    this.at += 4;
    return value;
  }
  /** An LSN in PostgreSQL's text form (`16/B374D848`). */
  lsn(): string {
    const high = this.buffer.readUInt32BE(this.at);
    const low = this.buffer.readUInt32BE(this.at + 4);
    this.at += 8;
    return `${high.toString(16).toUpperCase()}/${low.toString(16).toUpperCase()}`;
  }
  /** A NUL-terminated string. */
  string(): string {
    const end = this.buffer.indexOf(0, this.at);
    if (end < 0) throw new Error('pgoutput: a string without its end');
    const text = this.buffer.toString('utf8', this.at, end);
    this.at = end + 1;
    return text;
  }
  text(length: number): string {
    const text = this.buffer.toString('utf8', this.at, this.at + length);
    this.at += length;
    return text;
  }

  tuple(): TupleValue[] {
    const count = this.int16();
    const values: TupleValue[] = [];
    for (let i = 0; i < count; i++) {
      const kind = this.byte();
      if (kind === 'n') values.push(null);
      else if (kind === 'u') values.push(UNCHANGED);
      else if (kind === 't') values.push(this.text(this.int32()));
      else throw new Error(`pgoutput: a tuple value of kind "${kind}" (protocol 1 sends text only)`);
    }
    return values;
  }
}

export function decodePgOutput(data: Buffer): PgOutputMessage {
  const reader = new Reader(data);
  const tag = reader.byte();
  switch (tag) {
    case 'B':
      return { kind: 'begin' };
    case 'C':
      reader.int8();
      reader.lsn();
      return { kind: 'commit', endLsn: reader.lsn() };
    case 'R': {
      const relationId = reader.int32();
      const schema = reader.string();
      const table = reader.string();
      reader.int8(); // replica identity setting
      const count = reader.int16();
      const columns: RelationColumn[] = [];
      for (let i = 0; i < count; i++) {
        const flags = reader.int8();
        columns.push({ key: (flags & 1) === 1, name: reader.string(), typeOid: reader.int32(), typeModifier: reader.int32() });
      }
      return { kind: 'relation', relationId, schema, table, columns };
    }
    case 'I': {
      const relationId = reader.int32();
      reader.byte(); // 'N'
      return { kind: 'insert', relationId, row: reader.tuple() };
    }
    case 'U': {
      const relationId = reader.int32();
      const marker = reader.byte();
      // 'K': the old key (the key changed); 'O': the whole old row (REPLICA IDENTITY FULL); then 'N'.
      const old = marker === 'K' || marker === 'O' ? reader.tuple() : null;
      if (old) reader.byte();
      return { kind: 'update', relationId, old, row: reader.tuple() };
    }
    case 'D': {
      const relationId = reader.int32();
      reader.byte(); // 'K' or 'O'
      return { kind: 'delete', relationId, old: reader.tuple() };
    }
    case 'T': {
      const count = reader.int32();
      reader.int8(); // CASCADE, RESTART IDENTITY
      const relationIds: number[] = [];
      for (let i = 0; i < count; i++) relationIds.push(reader.int32());
      return { kind: 'truncate', relationIds };
    }
    default:
      return { kind: 'other', tag };
  }
}

/** The bytes of a bytea's text output: hex (`\x0102`, the default) or the older escape format. */
export function byteaFromText(text: string): Buffer {
  if (text.startsWith('\\x')) return Buffer.from(text.slice(2), 'hex');
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') {
      bytes.push(text.charCodeAt(i));
    } else if (text[i + 1] === '\\') {
      bytes.push(92);
      i += 1;
    } else {
      bytes.push(parseInt(text.slice(i + 1, i + 4), 8));
      i += 3;
    }
  }
  return Buffer.from(bytes);
}
