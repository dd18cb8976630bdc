/**
 * Text read as bytea as PostgreSQL reads it (byteain): `\x` and hex digits, two per byte, with
 * blanks between bytes; otherwise the escape form, where `\\` is a backslash, `\ooo` (three octal
 * digits, the first 0-3) one byte, and every other character its UTF-8 bytes. The engine reads
 * `\x61` as one byte and the rest as characters: `'\x6162'::bytea` would be three bytes there.
 * `byteaHex` serves literals (translate/postgres-values.ts) and `vdb_bytea_in` values of tables.
 */
import {
  BLOB,
  DuckDBBlobValue,
  DuckDBScalarFunction,
  VARCHAR,
  type DuckDBBlobVector,
  type DuckDBConnection,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';
import { badRequest } from '../errors.js';

const HEX_BLANKS = new Set([' ', '\t', '\n', '\r']);

/** The bytes of `text` read as PostgreSQL reads a bytea, as lowercase hex digits; PostgreSQL's error otherwise. */
export function byteaHex(text: string): string {
  if (text.startsWith('\\x')) return hexForm(text);
  const out: string[] = [];
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte !== 0x5c) {
      out.push(byte.toString(16).padStart(2, '0'));
      continue;
    }
    const next = bytes.subarray(i + 1, i + 4).toString('latin1');
    if (/^[0-3][0-7][0-7]$/.test(next)) {
      out.push(parseInt(next, 8).toString(16).padStart(2, '0'));
      i += 3;
    } else if (next.startsWith('\\')) {
      out.push('5c');
      i += 1;
    } else throw badRequest('invalid input syntax for type bytea', 'Write a backslash as \\\\ and a byte as \\ooo, or use the hex form.');
  }
  return out.join('');
}

/** The hex form: `\x` then pairs of hex digits, blanks allowed before each pair. */
function hexForm(text: string): string {
  const out: string[] = [];
  for (let i = 2; i < text.length; i++) {
    const c = text[i]!;
    if (HEX_BLANKS.has(c)) continue;
    const d = text[i + 1];
    if (!/[0-9a-fA-F]/.test(c)) throw invalidHexDigit(c);
    if (d === undefined) throw badRequest('invalid hexadecimal data: odd number of digits', 'Write two hexadecimal digits per byte.');
    if (!/[0-9a-fA-F]/.test(d)) throw invalidHexDigit(d);
    out.push(`${c}${d}`.toLowerCase());
    i += 1;
  }
  return out.join('');
}

const invalidHexDigit = (c: string) => badRequest(`invalid hexadecimal digit: "${c}"`, 'Write two hexadecimal digits per byte.');

const message = (err: unknown) => (err instanceof Error && 'description' in err ? String(err.description) : String(err));

/**
 * `vdb_bytea_in(value)`: text read as the bytes PostgreSQL reads it as, a blob as it is. One
 * overload per type, so that a cast names its argument once: a CASE over the argument's type
 * named it three times, and twenty nested casts made a statement of 3^20 terms.
 */
export function registerByteaInput(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_bytea_in',
      returnType: BLOB,
      parameterTypes: [VARCHAR],
      mainFunction: (info, batch, output) => {
        const texts = batch.getColumnVector(0) as DuckDBVarCharVector;
        const out = output as DuckDBBlobVector;
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            const text = texts.getItem(i);
            out.setItem(i, text === null ? null : new DuckDBBlobValue(Buffer.from(byteaHex(text), 'hex')));
          }
        } catch (err) {
          info.setError(message(err));
          return;
        }
        out.flush();
      },
    }),
  );
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_bytea_in',
      returnType: BLOB,
      parameterTypes: [BLOB],
      mainFunction: (_info, batch, output) => {
        const blobs = batch.getColumnVector(0) as DuckDBBlobVector;
        const out = output as DuckDBBlobVector;
        for (let i = 0; i < batch.rowCount; i++) out.setItem(i, blobs.getItem(i));
        out.flush();
      },
    }),
  );
}
