/**
 * Sorting a result in the browser, which the console does only when every row is loaded (a
 * result of one chunk): a longer result would need ORDER BY in the statement. Numbers compare
 * exactly by their digits; text by code points (not the database's collation); NULLs as
 * PostgreSQL puts them: last going up, first going down.
 */
import type { Cell, Row } from './api.js';
import { Num, RawJson } from './json.js';

const PLAIN = /^(-?)0*(\d*?)(?:\.(\d*?)0*)?$/;

/** Exact comparison of two decimal texts; numbers with exponents compare as doubles. */
export function compareNumbers(a: string, b: string): number {
  const x = PLAIN.exec(a);
  const y = PLAIN.exec(b);
  if (!x || !y) return Math.sign(Number(a) - Number(b));
  const [, xs, xi = '', xf = ''] = x;
  const [, ys, yi = '', yf = ''] = y;
  const xNeg = xs === '-' && (xi !== '' || xf !== '');
  const yNeg = ys === '-' && (yi !== '' || yf !== '');
  if (xNeg !== yNeg) return xNeg ? -1 : 1;
  let magnitude = xi.length - yi.length || (xi < yi ? -1 : xi > yi ? 1 : 0);
  if (magnitude === 0) {
    const width = Math.max(xf.length, yf.length);
    const [pf, qf] = [xf.padEnd(width, '0'), yf.padEnd(width, '0')];
    magnitude = pf < qf ? -1 : pf > qf ? 1 : 0;
  }
  return Math.sign(xNeg ? -magnitude : magnitude);
}

function compareValues(a: Cell, b: Cell): number {
  if (a instanceof Num && b instanceof Num) return compareNumbers(a.text, b.text);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const [p, q] = [
    a instanceof RawJson || typeof a !== 'object' ? String(a) : JSON.stringify(a),
    b instanceof RawJson || typeof b !== 'object' ? String(b) : JSON.stringify(b),
  ];
  return p < q ? -1 : p > q ? 1 : 0;
}

/** The order of the rows sorted by column `col`, going up or down, as their indexes; equal values keep their order. */
export function sortOrder(rows: readonly Row[], col: number, descending: boolean): number[] {
  return rows
    .map((row, i) => ({ row, i }))
    .sort((m, n) => {
      const [a, b] = [m.row[col] ?? null, n.row[col] ?? null];
      let order: number;
      if (a === null || b === null) order = a === b ? 0 : a === null ? 1 : -1;
      else order = compareValues(a, b);
      return (descending ? -order : order) || m.i - n.i;
    })
    .map((x) => x.i);
}

/** The rows sorted by column `col`, going up or down; equal values keep their order. */
export const sortRows = (rows: readonly Row[], col: number, descending: boolean): Row[] =>
  sortOrder(rows, col, descending).map((i) => rows[i]!);
