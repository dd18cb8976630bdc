/**
 * Answers as comparable text: vdb's JSON body and PostgreSQL's rows (read as text) become rows of
 * tagged values, `n:` numbers in one canonical decimal form, `s:` strings, `null`, `b:` booleans.
 * Nothing goes through a double: vdb's JSON numbers are read as their literal text (JSON.parse
 * would round 16+ significant digits), PostgreSQL's values are its own text output.
 *
 * Normalised, and only this: a number's formatting (1.50 = 1.5 = 1.5e0, -0 = 0), and the
 * trailing spaces of a column PostgreSQL types as char(n) (padding carries no meaning there; a
 * MariaDB CHAR drops it). Everything else must be equal: a string "13" never equals a number 13.
 */
import type pg from 'pg';

export type Value = string;
export type Rows = Value[][];

/** Canonical decimal text of a numeric literal (plain or with an exponent). */
export function canonicalNumber(literal: string): string {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(literal.trim());
  if (!match) return literal.trim(); // NaN, Infinity: kept as written
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  let digits = `${whole}${fraction}`;
  let point = whole.length + Number(exponent);
  // Pad so that the point falls within or at the ends of the digits.
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const intPart = digits.slice(0, point).replace(/^0+/, '') || '0';
  const fracPart = digits.slice(point).replace(/0+$/, '');
  const text = fracPart ? `${intPart}.${fracPart}` : intPart;
  return sign === '-' && text !== '0' ? `-${text}` : text;
}

/** vdb's answer (JSON rows of arrays) with numbers kept as their literal text. */
export function parseVdbRows(body: string): Rows {
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`vdb answer is not rows of arrays (${what} at ${i}): ${body.slice(Math.max(0, i - 40), i + 40)}`);
  };
  const space = () => {
    while (i < body.length && /\s/.test(body[i]!)) i++;
  };
  const scalar = (): Value => {
    space();
    const c = body[i];
    if (c === '"') {
      const start = i;
      i++;
      while (i < body.length && body[i] !== '"') i += body[i] === '\\' ? 2 : 1;
      i++;
      return `s:${JSON.parse(body.slice(start, i)) as string}`;
    }
    if (body.startsWith('null', i)) {
      i += 4;
      return 'null';
    }
    if (body.startsWith('true', i) || body.startsWith('false', i)) {
      const value = body.startsWith('true', i);
      i += value ? 4 : 5;
      return `b:${value}`;
    }
    const number = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(body.slice(i, i + 400));
    if (!number) return fail('unexpected value');
    i += number[0].length;
    return `n:${canonicalNumber(number[0])}`;
  };
  const expect = (c: string) => {
    space();
    if (body[i] !== c) fail(`expected ${c}`);
    i++;
  };
  const rows: Rows = [];
  expect('[');
  space();
  if (body[i] === ']') return rows;
  for (;;) {
    expect('[');
    const row: Value[] = [];
    space();
    if (body[i] !== ']') {
      for (;;) {
        row.push(scalar());
        space();
        if (body[i] === ',') i++;
        else break;
      }
    }
    expect(']');
    rows.push(row);
    space();
    if (body[i] === ',') i++;
    else break;
  }
  expect(']');
  return rows;
}

const NUMERIC_TYPES = new Set([20, 21, 23, 26, 700, 701, 1700]);
const BPCHAR = 1042;
const BOOL = 16;

/** Type parsers that keep PostgreSQL's text output of every type. */
export const TEXT_TYPES = { getTypeParser: () => (value: string) => value } as unknown as NonNullable<pg.QueryConfig['types']>;

/** PostgreSQL's rows, read with TEXT_TYPES and rowMode 'array'. */
export function pgRows(result: pg.QueryResult<unknown[]>): Rows {
  const kinds = result.fields.map((f) => (NUMERIC_TYPES.has(f.dataTypeID) ? 'n' : f.dataTypeID === BOOL ? 'b' : 's'));
  return result.rows.map((row) =>
    row.map((value, c) => {
      if (value === null) return 'null';
      const text = String(value);
      if (kinds[c] === 'n') return `n:${canonicalNumber(text)}`;
      if (kinds[c] === 'b') return `b:${text === 't' || text === 'true'}`;
      return `s:${text}`;
    }),
  );
}

/** The columns PostgreSQL types as char(n): their padding is dropped on both sides. */
export const paddedColumns = (result: pg.QueryResult<unknown[]>) => result.fields.flatMap((f, c) => (f.dataTypeID === BPCHAR ? [c] : []));

export function unpad(rows: Rows, columns: number[]): Rows {
  if (columns.length === 0) return rows;
  return rows.map((row) => row.map((v, c) => (columns.includes(c) && v.startsWith('s:') ? v.replace(/ +$/, '') : v)));
}

const rowKey = (row: Value[]) => JSON.stringify(row);

/**
 * Null when `actual` is the answer `expected` is, or the differences, one a line. Rows equal on
 * the ORDER BY columns may come in any order (`order`: 0-based column, descending), so a
 * different order is accepted when the rows are the same and actual's order is the statement's.
 */
export function difference(expected: Rows, actual: Rows, order: Array<[number, boolean]>): string | null {
  const width = (rows: Rows) => (rows[0] ? rows[0].length : 0);
  if (expected.length > 0 && actual.length > 0 && width(expected) !== width(actual)) {
    return `columns: expected ${width(expected)}, got ${width(actual)}`;
  }
  const same = expected.length === actual.length && expected.every((row, r) => rowKey(row) === rowKey(actual[r]!));
  if (same) return null;
  const lines: string[] = [];
  const counts = new Map<string, number>();
  for (const row of expected) counts.set(rowKey(row), (counts.get(rowKey(row)) ?? 0) + 1);
  const extra: Rows = [];
  for (const row of actual) {
    const n = counts.get(rowKey(row)) ?? 0;
    if (n > 0) counts.set(rowKey(row), n - 1);
    else extra.push(row);
  }
  const missing = [...counts].flatMap(([key, n]) => Array.from({ length: n }, () => key));
  if (missing.length === 0 && extra.length === 0) {
    if (inOrder(actual, order)) return null;
    lines.push(`same rows in another order than ORDER BY's; first rows: ${actual.slice(0, 3).map(rowKey).join(' ')}`);
    return lines.join('\n');
  }
  lines.push(`rows: expected ${expected.length}, got ${actual.length}; ${missing.length} missing, ${extra.length} not expected`);
  for (const key of missing.slice(0, 5)) lines.push(`  missing  ${key}`);
  for (const row of extra.slice(0, 5)) lines.push(`  got      ${rowKey(row)}`);
  return lines.join('\n');
}

function compareValues(a: Value, b: Value): number {
  if (a.startsWith('n:') && b.startsWith('n:')) {
    const d = Number(a.slice(2)) - Number(b.slice(2));
    if (d !== 0) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function inOrder(rows: Rows, order: Array<[number, boolean]>): boolean {
  for (let r = 1; r < rows.length; r++) {
    for (const [column, descending] of order) {
      const c = compareValues(rows[r - 1]![column]!, rows[r]![column]!);
      if (c === 0) continue;
      if (descending ? c < 0 : c > 0) return false;
      break;
    }
  }
  return true;
}
