/**
 * Engine functions for PostgreSQL's statistics of floating-point values (the translation is
 * translate/youngs-cramer.ts): the Youngs–Cramer accumulations of PostgreSQL's float.c
 * (float8_accum, float8_regr_accum) over a group's values in the order listed, then its final
 * functions. JavaScript's numbers are IEEE double precision as C's double is, with the same
 * rounding of each + - * / and sqrt, so the digits are PostgreSQL's.
 *  - vdb_float_variance(values DOUBLE[], kind VARCHAR): var_pop, var_samp, stddev_pop, stddev_samp;
 *  - vdb_float_regression(pairs STRUCT(y DOUBLE, x DOUBLE)[], kind VARCHAR): covar_pop, covar_samp,
 *    corr, regr_sxx, regr_syy, regr_sxy, regr_slope, regr_intercept, regr_r2;
 *  - vdb_float4_sum(values FLOAT[]): sum of real values in real arithmetic (float4pl).
 * A NULL list (no rows) gives NULL; the lists hold no NULLs (the aggregate's FILTER leaves them out).
 */
import {
  DOUBLE,
  FLOAT,
  DuckDBFloatVector,
  DuckDBDoubleVector,
  DuckDBListVector,
  DuckDBScalarFunction,
  DuckDBStructVector,
  DuckDBVarCharVector,
  LIST,
  STRUCT,
  VARCHAR,
  type DuckDBConnection,
} from '@duckdb/node-api';

/** PostgreSQL's error where finite values add up to an infinity. */
export const OVERFLOW = 'value out of range: overflow';

class Overflow extends Error {}

/** float8_accum over `values`: [N, Sx, Sxx]. */
export function accumulate(values: ArrayLike<number>): [number, number, number] {
  let n = 0;
  let sx = 0;
  let sxx = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    const previousN = n;
    const previousSx = sx;
    n += 1;
    sx += x;
    if (previousN > 0) {
      const tmp = x * n - sx;
      sxx += (tmp * tmp) / (n * previousN);
      // Only finite inputs that lead to an infinite result fail; an infinite input makes Sxx NaN.
      if (isInfinite(sx) || isInfinite(sxx)) {
        if (!isInfinite(previousSx) && !isInfinite(x)) throw new Overflow(OVERFLOW);
        sxx = NaN;
      }
    } else if (!Number.isFinite(x)) sxx = NaN;
  }
  return [n, sx, sxx];
}

const isInfinite = (value: number): boolean => value === Infinity || value === -Infinity;

/** float8_var_pop, float8_var_samp, float8_stddev_pop, float8_stddev_samp. */
export function variance(kind: string, [n, , sxx]: [number, number, number]): number | null {
  const sample = kind === 'var_samp' || kind === 'stddev_samp';
  if (n <= (sample ? 1 : 0)) return null;
  const value = sxx / (sample ? n - 1 : n);
  return kind.startsWith('stddev') ? Math.sqrt(value) : value;
}

/** float8_regr_accum over pairs (y, x): [N, Sx, Sxx, Sy, Syy, Sxy]. */
export function accumulatePairs(ys: ArrayLike<number>, xs: ArrayLike<number>): number[] {
  let [n, sx, sxx, sy, syy, sxy] = [0, 0, 0, 0, 0, 0];
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    const previousN = n;
    const previousSx = sx;
    const previousSy = sy;
    n += 1;
    sx += x;
    sy += y;
    if (previousN > 0) {
      const tmpX = x * n - sx;
      const tmpY = y * n - sy;
      const scale = 1 / (n * previousN);
      sxx += tmpX * tmpX * scale;
      syy += tmpY * tmpY * scale;
      sxy += tmpX * tmpY * scale;
      if (isInfinite(sx) || isInfinite(sxx) || isInfinite(sy) || isInfinite(syy) || isInfinite(sxy)) {
        const finiteX = !isInfinite(previousSx) && !isInfinite(x);
        const finiteY = !isInfinite(previousSy) && !isInfinite(y);
        if (
          ((isInfinite(sx) || isInfinite(sxx)) && finiteX) ||
          ((isInfinite(sy) || isInfinite(syy)) && finiteY) ||
          (isInfinite(sxy) && finiteX && finiteY)
        )
          throw new Overflow(OVERFLOW);
        if (isInfinite(sxx)) sxx = NaN;
        if (isInfinite(syy)) syy = NaN;
        if (isInfinite(sxy)) sxy = NaN;
      }
    } else {
      if (!Number.isFinite(x)) sxx = sxy = NaN;
      if (!Number.isFinite(y)) syy = sxy = NaN;
    }
  }
  return [n, sx, sxx, sy, syy, sxy];
}

/** float8_covar_pop, float8_corr, float8_regr_* (PostgreSQL 15's float.c). */
export function regression(kind: string, [n, sx, sxx, sy, syy, sxy]: number[]): number | null {
  if (n! < 1) return null;
  switch (kind) {
    case 'covar_pop':
      return sxy! / n!;
    case 'covar_samp':
      return n! < 2 ? null : sxy! / (n! - 1);
    case 'corr':
      return sxx === 0 || syy === 0 ? null : sxy! / Math.sqrt(sxx! * syy!);
    case 'regr_sxx':
      return sxx!;
    case 'regr_syy':
      return syy!;
    case 'regr_sxy':
      return sxy!;
    case 'regr_slope':
      return sxx === 0 ? null : sxy! / sxx!;
    case 'regr_intercept':
      return sxx === 0 ? null : (sy! - (sx! * sxy!) / sxx!) / n!;
    case 'regr_r2':
      return sxx === 0 ? null : syy === 0 ? 1 : (sxy! * sxy!) / (sxx! * syy!);
    default:
      throw new Error(`unknown statistic ${kind}`);
  }
}

/** The doubles of one list row (no NULLs: the aggregate left them out). */
function doubles(child: DuckDBDoubleVector | DuckDBFloatVector, offset: number, length: number): Float64Array {
  const values = new Float64Array(length);
  for (let j = 0; j < length; j++) values[j] = child.getItem(offset + j) ?? NaN;
  return values;
}

/** float4pl over `values`, row by row: each sum rounded to real (from double, which rounds alike); NULL for none. */
export function realSum(values: ArrayLike<number>): number | null {
  if (values.length === 0) return null;
  let sum = values[0]!;
  for (let i = 1; i < values.length; i++) {
    const next = Math.fround(sum + values[i]!);
    if (isInfinite(next) && !isInfinite(sum) && !isInfinite(values[i]!)) throw new Overflow(OVERFLOW);
    sum = next;
  }
  return sum;
}

export function registerFloatStatistics(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_float4_sum',
      returnType: FLOAT,
      parameterTypes: [LIST(FLOAT)],
      mainFunction: (info, batch, output) => {
        const lists = batch.getColumnVector(0) as DuckDBListVector;
        const out = output as DuckDBFloatVector;
        const child = lists.childVector as DuckDBFloatVector;
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            if (lists.getItemVector(i) === null) out.setItem(i, null);
            else out.setItem(i, realSum(doubles(child, lists.getEntryOffset(i), lists.getEntryLength(i))));
          }
        } catch (err) {
          info.setError(err instanceof Overflow ? OVERFLOW : String(err));
          return;
        }
        out.flush();
      },
    }),
  );
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_float_variance',
      returnType: DOUBLE,
      parameterTypes: [LIST(DOUBLE), VARCHAR],
      mainFunction: (info, batch, output) => {
        const lists = batch.getColumnVector(0) as DuckDBListVector;
        const kinds = batch.getColumnVector(1) as DuckDBVarCharVector;
        const out = output as DuckDBDoubleVector;
        const child = lists.childVector as DuckDBDoubleVector;
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            const kind = kinds.getItem(i);
            if (lists.getItemVector(i) === null || kind === null) out.setItem(i, null);
            else out.setItem(i, variance(kind, accumulate(doubles(child, lists.getEntryOffset(i), lists.getEntryLength(i)))));
          }
        } catch (err) {
          info.setError(err instanceof Overflow ? OVERFLOW : String(err));
          return;
        }
        out.flush();
      },
    }),
  );
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_float_regression',
      returnType: DOUBLE,
      parameterTypes: [LIST(STRUCT({ y: DOUBLE, x: DOUBLE })), VARCHAR],
      mainFunction: (info, batch, output) => {
        const lists = batch.getColumnVector(0) as DuckDBListVector;
        const kinds = batch.getColumnVector(1) as DuckDBVarCharVector;
        const out = output as DuckDBDoubleVector;
        const pairs = lists.childVector as DuckDBStructVector;
        const [ys, xs] = [pairs.entryVectorAt(0) as DuckDBDoubleVector, pairs.entryVectorAt(1) as DuckDBDoubleVector];
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            const kind = kinds.getItem(i);
            if (lists.getItemVector(i) === null || kind === null) {
              out.setItem(i, null);
              continue;
            }
            const [offset, length] = [lists.getEntryOffset(i), lists.getEntryLength(i)];
            out.setItem(i, regression(kind, accumulatePairs(doubles(ys, offset, length), doubles(xs, offset, length))));
          }
        } catch (err) {
          info.setError(err instanceof Overflow ? OVERFLOW : String(err));
          return;
        }
        out.flush();
      },
    }),
  );
}
