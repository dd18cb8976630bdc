/**
 * PostgreSQL functions the engine lacks, as engine macros every generation defines at start
 * (engine/translate/postgres-functions.ts writes calls to them; user SQL cannot call them: the
 * allow-list knows only PostgreSQL's names).
 *
 * Degree trigonometry (sind, cosd, tand, cotd, asind, acosd, atand, atan2d): PostgreSQL answers
 * exact values at the special angles (sind(30) = 0.5, tand(45) = 1, acosd(0.5) = 60) by scaling
 * the radian functions by their own values at those angles, computed at run time; the angle is
 * first reduced to [0, 90] degrees with an exact remainder. The same steps here, with the
 * engine's sin/cos/asin/acos/atan (the C library's, as PostgreSQL's), give the same bits; the
 * remainder is vdb_fmod (exact, as C's fmod: the engine's own % of doubles is not exact for
 * large values).
 *
 * width_bucket of floats: PostgreSQL 15 computes count * (x - low) / (high - low) + 1 in double
 * precision, then truncates (so a quotient of 0.9999999999999999 lands in bucket 2).
 */
import { DOUBLE, DuckDBScalarFunction, type DuckDBConnection, type DuckDBDoubleVector } from '@duckdb/node-api';
import { macroSql } from './numeric-macros.js';

/** PostgreSQL's RADIANS_PER_DEGREE as a double. */
const RADIANS = 'CAST(0.017453292519943295 AS DOUBLE)';
const d = (n: number) => `CAST(${n} AS DOUBLE)`;
const OUT_OF_RANGE = `error('input is out of range')`;

const MACROS: ReadonlyArray<readonly [string, string]> = [
  // sin of [0, 30] degrees: exactly 0 at 0, 0.5 at 30.
  ['vdb_sind_0_30(x)', `(sin($x * ${RADIANS}) / sin(${d(30)} * ${RADIANS})) / ${d(2)}`],
  // cos of [0, 60] degrees: exactly 1 at 0, 0.5 at 60.
  ['vdb_cosd_0_60(x)', `${d(1)} - ((${d(1)} - cos($x * ${RADIANS})) / (${d(1)} - cos(${d(60)} * ${RADIANS}))) / ${d(2)}`],
  ['vdb_sind_q1(x)', `CASE WHEN $x <= ${d(30)} THEN vdb_sind_0_30($x) ELSE vdb_cosd_0_60(${d(90)} - $x) END`],
  ['vdb_cosd_q1(x)', `CASE WHEN $x <= ${d(60)} THEN vdb_cosd_0_60($x) ELSE vdb_sind_0_30(${d(90)} - $x) END`],
  // Division as C's: a nonzero number over zero is an infinity, signed by both (the engine's x / 0 is NULL).
  [
    'vdb_fdiv(a, b)',
    `CASE WHEN $b = ${d(0)} THEN (CASE WHEN signbit($b) THEN -$a ELSE $a END) * CAST('Infinity' AS DOUBLE) ELSE $a / $b END`,
  ],
  ['vdb_tand_q1(x)', `vdb_fdiv(vdb_sind_q1($x), vdb_cosd_q1($x)) / (vdb_sind_q1(${d(45)}) / vdb_cosd_q1(${d(45)}))`],
  ['vdb_cotd_q1(x)', `vdb_fdiv(vdb_cosd_q1($x), vdb_sind_q1($x)) / (vdb_cosd_q1(${d(45)}) / vdb_sind_q1(${d(45)}))`],
  // The angle reduced to [0, 360) in magnitude, checked as PostgreSQL checks it.
  ['vdb_degrees_reduced(x)', `CASE WHEN isinf(CAST($x AS DOUBLE)) THEN ${OUT_OF_RANGE} ELSE vdb_fmod(CAST($x AS DOUBLE), ${d(360)}) END`],
  // Each step of the reduction: a negative angle, one past 180, one past 90, with the sign each flips.
  ['vdb_sind_c(a)', `vdb_sind_q1(CASE WHEN $a > ${d(90)} THEN ${d(180)} - $a ELSE $a END)`],
  ['vdb_sind_b(a)', `CASE WHEN $a > ${d(180)} THEN -vdb_sind_c(${d(360)} - $a) ELSE vdb_sind_c($a) END`],
  ['vdb_sind_a(a)', `CASE WHEN isnan($a) THEN $a WHEN $a < ${d(0)} THEN -vdb_sind_b(-$a) ELSE vdb_sind_b($a) END`],
  ['vdb_sind(x)', `vdb_sind_a(vdb_degrees_reduced($x))`],
  ['vdb_cosd_b(a)', `CASE WHEN $a > ${d(90)} THEN -vdb_cosd_q1(${d(180)} - $a) ELSE vdb_cosd_q1($a) END`],
  ['vdb_cosd_a(a)', `CASE WHEN isnan($a) THEN $a ELSE vdb_cosd_b(CASE WHEN $a > ${d(180)} THEN ${d(360)} - $a ELSE $a END) END`],
  ['vdb_cosd(x)', `vdb_cosd_a(abs(vdb_degrees_reduced($x)))`],
  // tand and cotd flip the sign at each step; a zero is +0 (PostgreSQL's "force it to plain zero").
  ['vdb_plain_zero(v)', `CASE WHEN $v = ${d(0)} THEN ${d(0)} ELSE $v END`],
  ['vdb_tand_c(a)', `CASE WHEN $a > ${d(90)} THEN -vdb_tand_q1(${d(180)} - $a) ELSE vdb_tand_q1($a) END`],
  ['vdb_tand_b(a)', `CASE WHEN $a > ${d(180)} THEN -vdb_tand_c(${d(360)} - $a) ELSE vdb_tand_c($a) END`],
  ['vdb_tand_a(a)', `CASE WHEN isnan($a) THEN $a WHEN $a < ${d(0)} THEN -vdb_tand_b(-$a) ELSE vdb_tand_b($a) END`],
  ['vdb_tand(x)', `vdb_plain_zero(vdb_tand_a(vdb_degrees_reduced($x)))`],
  ['vdb_cotd_c(a)', `CASE WHEN $a > ${d(90)} THEN -vdb_cotd_q1(${d(180)} - $a) ELSE vdb_cotd_q1($a) END`],
  ['vdb_cotd_b(a)', `CASE WHEN $a > ${d(180)} THEN -vdb_cotd_c(${d(360)} - $a) ELSE vdb_cotd_c($a) END`],
  ['vdb_cotd_a(a)', `CASE WHEN isnan($a) THEN $a WHEN $a < ${d(0)} THEN -vdb_cotd_b(-$a) ELSE vdb_cotd_b($a) END`],
  ['vdb_cotd(x)', `vdb_plain_zero(vdb_cotd_a(vdb_degrees_reduced($x)))`],
  // Inverse functions over [0, 1]: exact at 0, 0.5 and 1.
  [
    'vdb_asind_q1(x)',
    `CASE WHEN $x <= ${d(0.5)} THEN (asin($x) / asin(${d(0.5)})) * ${d(30)} ELSE ${d(90)} - (acos($x) / acos(${d(0.5)})) * ${d(60)} END`,
  ],
  [
    'vdb_acosd_q1(x)',
    `CASE WHEN $x <= ${d(0.5)} THEN ${d(90)} - (asin($x) / asin(${d(0.5)})) * ${d(30)} ELSE (acos($x) / acos(${d(0.5)})) * ${d(60)} END`,
  ],
  [
    'vdb_unit_range(x)',
    `CASE WHEN isnan(CAST($x AS DOUBLE)) THEN CAST($x AS DOUBLE) WHEN CAST($x AS DOUBLE) < ${d(-1)} OR CAST($x AS DOUBLE) > ${d(1)} THEN ${OUT_OF_RANGE} ELSE CAST($x AS DOUBLE) END`,
  ],
  ['vdb_asind_a(x)', `CASE WHEN isnan($x) THEN $x WHEN $x >= ${d(0)} THEN vdb_asind_q1($x) ELSE -vdb_asind_q1(-$x) END`],
  ['vdb_asind(x)', `vdb_asind_a(vdb_unit_range($x))`],
  ['vdb_acosd_a(x)', `CASE WHEN isnan($x) THEN $x WHEN $x >= ${d(0)} THEN vdb_acosd_q1($x) ELSE ${d(90)} + vdb_asind_q1(-$x) END`],
  ['vdb_acosd(x)', `vdb_acosd_a(vdb_unit_range($x))`],
  // atan of an infinity is the engine's ±pi/2, as C's.
  ['vdb_atand_a(x)', `CASE WHEN isnan($x) THEN $x ELSE (atan($x) / atan(${d(1)})) * ${d(45)} END`],
  ['vdb_atand(x)', `vdb_atand_a(CAST($x AS DOUBLE))`],
  ['vdb_atan2d_a(y, x)', `CASE WHEN isnan($y) OR isnan($x) THEN CAST('NaN' AS DOUBLE) ELSE (atan2($y, $x) / atan(${d(1)})) * ${d(45)} END`],
  ['vdb_atan2d(y, x)', `vdb_atan2d_a(CAST($y AS DOUBLE), CAST($x AS DOUBLE))`],
  // width_bucket(x, low, high, count) of floats, with PostgreSQL's checks and errors.
  ['vdb_bucket_past(n)', `CASE WHEN $n >= 2147483647 THEN error('integer out of range') ELSE CAST($n + 1 AS INTEGER) END`],
  [
    'vdb_width_bucket_in(x, lo, hi, n)',
    `CASE WHEN $lo < $hi THEN (CASE WHEN $x < $lo THEN 0 WHEN $x >= $hi THEN vdb_bucket_past($n) ELSE CAST(trunc(CAST($n AS DOUBLE) * ($x - $lo) / ($hi - $lo) + ${d(1)}) AS INTEGER) END) ` +
      `ELSE (CASE WHEN $x > $lo THEN 0 WHEN $x <= $hi THEN vdb_bucket_past($n) ELSE CAST(trunc(CAST($n AS DOUBLE) * ($lo - $x) / ($lo - $hi) + ${d(1)}) AS INTEGER) END) END`,
  ],
  [
    'vdb_width_bucket_f(x, lo, hi, n)',
    `CASE WHEN $x IS NULL OR $lo IS NULL OR $hi IS NULL OR $n IS NULL THEN NULL ` +
      `WHEN $n <= 0 THEN error('count must be greater than zero') ` +
      `WHEN isnan($x) OR isnan($lo) OR isnan($hi) THEN error('operand, lower bound, and upper bound cannot be NaN') ` +
      `WHEN isinf($lo) OR isinf($hi) THEN error('lower and upper bounds must be finite') ` +
      `WHEN $lo = $hi THEN error('lower bound cannot equal upper bound') ` +
      `ELSE vdb_width_bucket_in($x, $lo, $hi, $n) END`,
  ],
  [
    'vdb_width_bucket(x, lo, hi, n)',
    `vdb_width_bucket_f(CAST($x AS DOUBLE), CAST($lo AS DOUBLE), CAST($hi AS DOUBLE), CAST($n AS INTEGER))`,
  ],
  // width_bucket of numeric values, as PostgreSQL 15 computes it: the quotient rounded at the
  // scale of its division (numeric-macros.ts), then 1 added and the floor taken (so a quotient
  // just below a whole number may round up to it, as there).
  [
    'vdb_num_of(x)',
    `vdb_num(CAST(replace(CAST($x AS VARCHAR), '.', '') AS HUGEINT), CASE WHEN contains(CAST($x AS VARCHAR), '.') THEN length(CAST($x AS VARCHAR)) - strpos(CAST($x AS VARCHAR), '.') ELSE 0 END)`,
  ],
  ['vdb_num_floor_next(p)', `CAST(vdb_num_u($p) // vdb_pow10(vdb_num_r($p)) + 1 AS INTEGER)`],
  ['vdb_num_bucket(a, b, n)', `vdb_num_floor_next(vdb_num_div(vdb_num_mul($a, vdb_num($n, 0)), $b))`],
  [
    'vdb_width_bucket_p(x, lo, hi, n)',
    `CASE WHEN $x IS NULL OR $lo IS NULL OR $hi IS NULL OR $n IS NULL THEN NULL ` +
      `WHEN $n <= 0 THEN error('count must be greater than zero') ` +
      `WHEN vdb_num_cmp($lo, $hi) = 0 THEN error('lower bound cannot equal upper bound') ` +
      `WHEN vdb_num_cmp($lo, $hi) < 0 THEN (CASE WHEN vdb_num_cmp($x, $lo) < 0 THEN 0 WHEN vdb_num_cmp($x, $hi) >= 0 THEN vdb_bucket_past($n) ELSE vdb_num_bucket(vdb_num_sub($x, $lo), vdb_num_sub($hi, $lo), $n) END) ` +
      `ELSE (CASE WHEN vdb_num_cmp($x, $lo) > 0 THEN 0 WHEN vdb_num_cmp($x, $hi) <= 0 THEN vdb_bucket_past($n) ELSE vdb_num_bucket(vdb_num_sub($lo, $x), vdb_num_sub($lo, $hi), $n) END) END`,
  ],
  ['vdb_width_bucket_n(x, lo, hi, n)', `vdb_width_bucket_p(vdb_num_of($x), vdb_num_of($lo), vdb_num_of($hi), CAST($n AS INTEGER))`],
];

/** The statements that define the macros (after registerExactRemainder). */
export const FUNCTION_MACROS: readonly string[] = MACROS.map(macroSql);

/** `vdb_fmod(x, y)`: the exact remainder of x / y with the sign of x, as C's fmod (JavaScript's % is that). */
export function registerExactRemainder(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_fmod',
      returnType: DOUBLE,
      parameterTypes: [DOUBLE, DOUBLE],
      mainFunction: (_info, batch, output) => {
        const xs = batch.getColumnVector(0) as DuckDBDoubleVector;
        const ys = batch.getColumnVector(1) as DuckDBDoubleVector;
        const out = output as DuckDBDoubleVector;
        for (let i = 0; i < batch.rowCount; i++) {
          const [x, y] = [xs.getItem(i), ys.getItem(i)];
          out.setItem(i, x === null || y === null ? null : x % y);
        }
        out.flush();
      },
    }),
  );
}
