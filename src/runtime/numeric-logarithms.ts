/**
 * ln, exp, log(b, x) and log10 of PostgreSQL's numeric, computed exactly enough to round as
 * PostgreSQL 15 does (numeric.c): the result scale chosen by its rules (at least 16 significant
 * digits, never fewer decimals than the arguments'), the value computed in fixed point with 25
 * guard digits and rounded half away from zero. Results of more than 38 digits are refused (the
 * engine's numbers hold 38). `vdb_num_math(fn, a, b)` serves engine/translate/numeric-values.ts:
 * the arguments and the result are numeric texts.
 */
import { DuckDBScalarFunction, VARCHAR, type DuckDBConnection, type DuckDBVarCharVector } from '@duckdb/node-api';
import { badRequest } from '../errors.js';

/** A decimal: `digits` / 10^`scale`. */
interface Decimal {
  digits: bigint;
  scale: number;
}

const MIN_SIG_DIGITS = 16;
const MAX_DISPLAY_SCALE = 1000;
const GUARD = 25;
const MAX_DIGITS = 38;

const pow10 = (n: number): bigint => 10n ** BigInt(n);
const abs = (n: bigint): bigint => (n < 0n ? -n : n);

function parse(text: string): Decimal {
  const match = /^\s*([+-]?)(\d*)(?:\.(\d*))?\s*$/.exec(text);
  if (!match || (!match[2] && !match[3])) throw badRequest(`invalid input syntax for type numeric: "${text}"`, null);
  const fraction = match[3] ?? '';
  const digits = BigInt(`${match[2] || '0'}${fraction}`);
  return { digits: match[1] === '-' ? -digits : digits, scale: fraction.length };
}

/** PostgreSQL's base-10000 view of a positive decimal: its first one or two groups and the first's weight. */
function groups(x: Decimal): { first: number; second: number | null; weight: number } {
  const text = abs(x.digits)
    .toString()
    .padStart(x.scale + 1, '0');
  const whole = text.slice(0, text.length - x.scale);
  const fraction = text.slice(text.length - x.scale);
  const left = whole.padStart(Math.ceil(whole.length / 4) * 4, '0');
  const right = fraction.padEnd(Math.ceil(fraction.length / 4) * 4, '0');
  const all = (left + right).match(/.{4}/g)!.map(Number);
  const lead = all.findIndex((g) => g !== 0);
  let end = all.length;
  while (end > lead + 1 && all[end - 1] === 0) end--;
  return { first: all[lead]!, second: end - lead > 1 ? all[lead + 1]! : null, weight: left.length / 4 - 1 - lead };
}

/** estimate_ln_dweight: the decimal weight of ln(x), estimated as PostgreSQL estimates it. */
function lnWeight(x: Decimal): number {
  if (x.digits <= 0n) return 0;
  const one = pow10(x.scale);
  if (10n * x.digits >= 9n * one && 10n * x.digits <= 11n * one) {
    const less = { digits: x.digits - one, scale: x.scale };
    if (less.digits === 0n) return 0;
    const g = groups(less);
    return g.weight * 4 + Math.trunc(Math.log10(g.first));
  }
  const g = groups(x);
  let digits = g.first;
  let weight = g.weight * 4;
  if (g.second !== null) {
    digits = digits * 10000 + g.second;
    weight -= 4;
  }
  const ln = Math.log(digits) + weight * 2.302585092994046;
  return Math.trunc(Math.log10(Math.abs(ln)));
}

/** A fixed-point number of `w` decimals. */
const fixed = (x: Decimal, w: number): bigint => (w >= x.scale ? x.digits * pow10(w - x.scale) : x.digits / pow10(x.scale - w));

/** atanh(z) for a fixed z (|z| < 1) at w decimals. */
function atanh(z: bigint, w: number): bigint {
  const one = pow10(w);
  const z2 = (z * z) / one;
  let power = z;
  let sum = 0n;
  for (let k = 1n; power !== 0n; k += 2n) {
    sum += power / k;
    power = (power * z2) / one;
  }
  return sum;
}

const ln2 = (w: number): bigint => 2n * atanh(pow10(w) / 3n, w);
/** ln 10 = 3 ln 2 + ln 1.25, and ln 1.25 = 2 atanh(1/9). */
const ln10 = (w: number): bigint => 3n * ln2(w) + 2n * atanh(pow10(w) / 9n, w);

/** ln(x) of a positive decimal at w decimals. */
function lnFixed(x: Decimal, w: number): bigint {
  const one = pow10(w);
  const length = abs(x.digits).toString().length;
  const exponent = length - 1 - x.scale;
  // x = m * 10^exponent with m in [1, 10), then m = t * 2^b with t near 1.
  let m = fixed({ digits: x.digits, scale: length - 1 }, w);
  let b = 0n;
  while (m * 2n > 3n * one) {
    m /= 2n;
    b++;
  }
  const lnT = 2n * atanh(((m - one) * one) / (m + one), w);
  return lnT + b * ln2(w) + BigInt(exponent) * ln10(w);
}

/** exp(x) at w decimals. */
function expFixed(x: Decimal, w: number): bigint {
  const one = pow10(w);
  const value = fixed(x, w);
  const l2 = ln2(w);
  const k = (2n * value + (value >= 0n ? l2 : -l2)) / (2n * l2);
  const y = value - k * l2;
  let term = one;
  let sum = one;
  for (let n = 1n; term !== 0n; n++) {
    term = (term * y) / one / n;
    sum += term;
  }
  return k >= 0n ? sum << k : sum >> -k;
}

/** A fixed value of w decimals rounded half away from zero to `scale`, as text. */
function rounded(value: bigint, w: number, scale: number): string {
  if (w < scale) return rounded(value * pow10(scale - w), scale, scale);
  const unit = pow10(w - scale);
  const q = (abs(value) + unit / 2n) / unit;
  const signed = value < 0n ? -q : q;
  const digits = abs(signed)
    .toString()
    .padStart(scale + 1, '0');
  if (digits.replace(/^0+/, '').length > MAX_DIGITS) throw tooLong();
  const sign = signed < 0n ? '-' : '';
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

const tooLong = () =>
  badRequest("A numeric value of more than 38 digits is not supported by vdb's engine", 'Cast to double precision (x::float8).');

const clampScale = (scale: number) => Math.min(Math.max(scale, 0), MAX_DISPLAY_SCALE);

function positive(x: Decimal): void {
  if (x.digits === 0n) throw badRequest('cannot take logarithm of zero', null);
  if (x.digits < 0n) throw badRequest('cannot take logarithm of a negative number', null);
}

/** numeric_ln. */
export function numericLn(text: string): string {
  const x = parse(text);
  positive(x);
  const scale = clampScale(Math.max(MIN_SIG_DIGITS - lnWeight(x), x.scale));
  if (scale > MAX_DIGITS + 1) throw tooLong();
  const w = scale + GUARD;
  return rounded(lnFixed(x, w), w, scale);
}

/** numeric_exp. */
export function numericExp(text: string): string {
  const x = parse(text);
  const weight = Math.max(-1000, Math.min(1000, (Number(x.digits) / 10 ** x.scale) * 0.434294481903252));
  const scale = clampScale(Math.max(MIN_SIG_DIGITS - Math.trunc(weight), x.scale));
  const whole = Math.max(Math.ceil(weight), 0);
  if (scale + whole > MAX_DIGITS + 1) throw tooLong();
  // Guard digits below the result's last, which a large result's digits before the point would take.
  const w = scale + GUARD + whole;
  return rounded(expFixed(x, w), w, scale);
}

/** numeric_log: log(base, x), as log_var computes it. */
export function numericLog(baseText: string, text: string): string {
  const [base, x] = [parse(baseText), parse(text)];
  positive(base);
  positive(x);
  const resultWeight = lnWeight(x) - lnWeight(base);
  const scale = clampScale(Math.max(MIN_SIG_DIGITS - resultWeight, base.scale, x.scale));
  if (scale > MAX_DIGITS + 1) throw tooLong();
  const w = scale + GUARD + Math.max(0, resultWeight);
  const lnBase = lnFixed(base, w);
  if (lnBase === 0n) throw badRequest('division by zero', null);
  const quotient = (lnFixed(x, w) * pow10(w)) / lnBase;
  return rounded(quotient, w, scale);
}

/** A decimal rounded half away from zero to `scale` decimals (which may be more than its own). */
function roundDecimal(x: Decimal, scale: number): Decimal {
  if (scale >= x.scale) return { digits: x.digits * pow10(scale - x.scale), scale };
  const unit = pow10(x.scale - scale);
  const q = (abs(x.digits) + unit / 2n) / unit;
  return { digits: x.digits < 0n ? -q : q, scale };
}

const textOf = (x: Decimal): string => rounded(x.digits, x.scale, x.scale);

/** base ^ n of a whole n (power_var_int): exact, then rounded to `scale`; 1 / base^-n rounded for n < 0. */
function wholePower(base: Decimal, n: bigint, scale: number): string {
  if (n > 1000n || n < -1000n) throw tooLong();
  if (base.digits === 0n) return rounded(n === 0n ? 1n : 0n, 0, scale);
  const power = base.digits ** (n < 0n ? -n : n);
  const powerScale = base.scale * Number(n < 0n ? -n : n);
  if (n >= 0n) return rounded(power, powerScale, scale);
  // 1 / (power / 10^powerScale) at `scale` + guard decimals.
  const w = scale + GUARD;
  return rounded((pow10(powerScale + w) * 1n) / power, w, scale);
}

/** numeric_power: base ^ exponent, as power_var chooses its scale and computes it. */
export function numericPower(baseText: string, exponentText: string): string {
  const [base, exponent] = [parse(baseText), parse(exponentText)];
  const integral = exponent.digits % pow10(exponent.scale) === 0n;
  if (base.digits === 0n && exponent.digits < 0n) throw badRequest('zero raised to a negative power is undefined', null);
  if (base.digits < 0n && !integral) throw badRequest('a negative number raised to a non-integer power yields a complex result', null);
  const whole = exponent.digits / pow10(exponent.scale);
  if (integral && whole >= -2147483648n && whole <= 2147483647n)
    return wholePower(base, whole, clampScale(Math.max(MIN_SIG_DIGITS, base.scale)));
  if (base.digits === 0n) return rounded(0n, 0, MIN_SIG_DIGITS);
  const magnitude = { digits: abs(base.digits), scale: base.scale };
  const lnDweight = lnWeight(magnitude);
  // A first estimate of the result's weight, at about 8 significant digits of ln(base).
  const rough = Math.max(8 - lnDweight, 0);
  const lnRough = roundDecimal({ digits: lnFixed(magnitude, rough + GUARD), scale: rough + GUARD }, rough);
  const product = roundDecimal({ digits: lnRough.digits * exponent.digits, scale: lnRough.scale + exponent.scale }, rough);
  let val = Number(textOf(product));
  if (Math.abs(val) > 2000 * 3.01) {
    if (val > 0) throw tooLong();
    return rounded(0n, 0, MAX_DISPLAY_SCALE);
  }
  val *= 0.434294481903252;
  const scale = clampScale(Math.max(MIN_SIG_DIGITS - Math.trunc(val), base.scale, exponent.scale));
  if (scale + Math.max(Math.ceil(val), 0) > MAX_DIGITS + 1) throw tooLong();
  const significant = Math.max(scale + Math.trunc(val), 0);
  const local = Math.max(significant - lnDweight + 8, 0);
  const lnBase = roundDecimal({ digits: lnFixed(magnitude, local + GUARD), scale: local + GUARD }, local);
  const lnNum = roundDecimal({ digits: lnBase.digits * exponent.digits, scale: lnBase.scale + exponent.scale }, local);
  const w = scale + GUARD + Math.max(Math.ceil(val), 0);
  const result = rounded(expFixed(lnNum, w), w, scale);
  // A negative base raised to an odd whole power (only whole powers reach here when negative).
  return base.digits < 0n && whole % 2n !== 0n ? `-${result}` : result;
}

/** The function of `vdb_num_math(fn, a, b)`. */
function numericMath(fn: string, a: string, b: string): string {
  switch (fn) {
    case 'ln':
      return numericLn(a);
    case 'exp':
      return numericExp(a);
    case 'log':
      return numericLog(a, b);
    case 'power':
      return numericPower(a, b);
    default:
      throw new Error(`vdb_num_math: ${fn}`);
  }
}

const message = (err: unknown) => (err instanceof Error && 'description' in err ? String(err.description) : String(err));

export function registerNumericLogarithms(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_num_math',
      returnType: VARCHAR,
      parameterTypes: [VARCHAR, VARCHAR, VARCHAR],
      mainFunction: (info, batch, output) => {
        const [fns, as, bs] = [0, 1, 2].map((i) => batch.getColumnVector(i) as DuckDBVarCharVector);
        const out = output as DuckDBVarCharVector;
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            const [fn, a, b] = [fns!.getItem(i), as!.getItem(i), bs!.getItem(i)];
            out.setItem(i, fn === null || a === null || b === null ? null : numericMath(fn, a, b));
          }
        } catch (err) {
          info.setError(message(err));
          return;
        }
        out.flush();
      },
    }),
  );
}
