/**
 * Decoder of PostgreSQL's COPY text format (the fastest way to move rows out of PostgreSQL:
 * values arrive as text, with no per-value conversion in the driver). Rows are separated by
 * newlines, fields by tabs, NULL is \N, and backslash escapes protect the rest.
 */
import { StringDecoder } from 'node:string_decoder';

const SIMPLE_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

export function unescapeCopyField(field: string): string | null {
  if (field === '\\N') return null;
  if (!field.includes('\\')) return field;
  let out = '';
  for (let i = 0; i < field.length; i++) {
    const ch = field[i]!;
    if (ch !== '\\' || i === field.length - 1) {
      out += ch;
      continue;
    }
    const next = field[++i]!;
    if (next in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[next];
    else if (next >= '0' && next <= '7') {
      let digits = next;
      while (digits.length < 3 && field[i + 1] !== undefined && field[i + 1]! >= '0' && field[i + 1]! <= '7') digits += field[++i];
      out += String.fromCharCode(parseInt(digits, 8));
    } else if (next === 'x' && /[0-9a-fA-F]/.test(field[i + 1] ?? '')) {
      let digits = '';
      while (digits.length < 2 && /[0-9a-fA-F]/.test(field[i + 1] ?? '')) digits += field[++i];
      out += String.fromCharCode(parseInt(digits, 16));
    } else out += next;
  }
  return out;
}

/** Splits a stream of COPY text chunks into rows, `batchRows` rows at a time. */
export async function* copyTextRows(chunks: AsyncIterable<Buffer>, batchRows: number): AsyncGenerator<Array<Array<string | null>>> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let batch: Array<Array<string | null>> = [];
  for await (const chunk of chunks) {
    const text = rest + decoder.write(chunk);
    let start = 0;
    for (let end = text.indexOf('\n', start); end >= 0; end = text.indexOf('\n', start)) {
      batch.push(text.slice(start, end).split('\t').map(unescapeCopyField));
      start = end + 1;
    }
    rest = text.slice(start);
    if (batch.length >= batchRows) {
      yield batch;
      batch = [];
    }
  }
  rest += decoder.end();
  if (rest.length > 0) batch.push(rest.split('\t').map(unescapeCopyField));
  if (batch.length > 0) yield batch;
}
