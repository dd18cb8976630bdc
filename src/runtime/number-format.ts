/**
 * PostgreSQL's to_char of a number (formatting.c of PostgreSQL 15), ported: the template
 * patterns of numbers (9 0 . , D G S MI PL SG PR FM EEEE TH th V RN rn L B C SP) and the text
 * written for int4, int8, numeric, float4 and float8 values, in the C locale of vdb's
 * PostgreSQL ('.' and ',' for D and G, a space for L). Each kind is rounded as PostgreSQL
 * rounds it: numeric half away from zero in decimal; floats as C's printf writes their exact
 * binary value (half to even), with no more than 15 (float8) or 6 (float4) significant digits.
 * Used when statements are translated (constants, templates checked) and by the engine
 * function vdb_to_char for values computed per row.
 */
import { DuckDBScalarFunction, VARCHAR, type DuckDBConnection, type DuckDBVarCharVector } from '@duckdb/node-api';

export type NumberKind = 'int4' | 'int8' | 'numeric' | 'float4' | 'float8';

/** An error PostgreSQL raises too (its text); `unsupported`: what vdb does not do. */
export class NumberFormatError extends Error {
  constructor(
    message: string,
    readonly unsupported = false,
  ) {
    super(message);
  }
}

type Key =
  | ','
  | '.'
  | '0'
  | '9'
  | 'B'
  | 'C'
  | 'D'
  | 'E'
  | 'FM'
  | 'G'
  | 'L'
  | 'MI'
  | 'PL'
  | 'PR'
  | 'RN'
  | 'rn'
  | 'SG'
  | 'SP'
  | 'S'
  | 'TH'
  | 'th'
  | 'V';

/** PostgreSQL's keywords of number templates, in its order (the first that starts the text wins). */
const KEYWORDS: ReadonlyArray<readonly [string, Key]> = [
  [',', ','],
  ['.', '.'],
  ['0', '0'],
  ['9', '9'],
  ['B', 'B'],
  ['C', 'C'],
  ['D', 'D'],
  ['EEEE', 'E'],
  ['FM', 'FM'],
  ['G', 'G'],
  ['L', 'L'],
  ['MI', 'MI'],
  ['PL', 'PL'],
  ['PR', 'PR'],
  ['RN', 'RN'],
  ['SG', 'SG'],
  ['SP', 'SP'],
  ['S', 'S'],
  ['TH', 'TH'],
  ['V', 'V'],
  ['b', 'B'],
  ['c', 'C'],
  ['d', 'D'],
  ['eeee', 'E'],
  ['fm', 'FM'],
  ['g', 'G'],
  ['l', 'L'],
  ['mi', 'MI'],
  ['pl', 'PL'],
  ['pr', 'PR'],
  ['rn', 'rn'],
  ['sg', 'SG'],
  ['sp', 'SP'],
  ['s', 'S'],
  ['th', 'th'],
  ['v', 'V'],
];

type FormatNode = { key: Key } | { text: string };

/** PostgreSQL's NUMDesc: what the template asks for. */
interface NumberDesc {
  pre: number;
  post: number;
  lsign: 'none' | 'pre' | 'post';
  preLsignNum: number;
  multi: number;
  zeroStart: number;
  zeroEnd: number;
  decimal: boolean;
  zero: boolean;
  blank: boolean;
  fillMode: boolean;
  localeSign: boolean;
  bracket: boolean;
  minus: boolean;
  plus: boolean;
  roman: boolean;
  multiply: boolean;
  eeee: boolean;
}

export interface NumberTemplate {
  readonly nodes: readonly FormatNode[];
  readonly desc: Readonly<NumberDesc>;
  readonly empty: boolean;
}

const syntax = (message: string) => new NumberFormatError(message);

/** NUMDesc_prepare: one keyword's effect on the description, and PostgreSQL's template errors. */
function prepare(num: NumberDesc, key: Key): void {
  if (num.eeee && key !== 'E') throw syntax('"EEEE" must be the last pattern used');
  switch (key) {
    case '9':
      if (num.bracket) throw syntax('"9" must be ahead of "PR"');
      if (num.multiply) num.multi++;
      else if (num.decimal) num.post++;
      else num.pre++;
      break;
    case '0':
      if (num.bracket) throw syntax('"0" must be ahead of "PR"');
      if (!num.zero && !num.decimal) {
        num.zero = true;
        num.zeroStart = num.pre + 1;
      }
      if (!num.decimal) num.pre++;
      else num.post++;
      num.zeroEnd = num.pre + num.post;
      break;
    case 'B':
      if (num.pre === 0 && num.post === 0 && !num.zero) num.blank = true;
      break;
    case 'D':
    case '.':
      if (num.decimal) throw syntax('multiple decimal points');
      if (num.multiply) throw syntax('cannot use "V" and decimal point together');
      num.decimal = true;
      break;
    case 'FM':
      num.fillMode = true;
      break;
    case 'S':
      if (num.localeSign) throw syntax('cannot use "S" twice');
      if (num.plus || num.minus || num.bracket) throw syntax('cannot use "S" and "PL"/"MI"/"SG"/"PR" together');
      if (!num.decimal) {
        num.lsign = 'pre';
        num.preLsignNum = num.pre;
        num.localeSign = true;
      } else if (num.lsign === 'none') {
        num.lsign = 'post';
        num.localeSign = true;
      }
      break;
    case 'MI':
      if (num.localeSign) throw syntax('cannot use "S" and "MI" together');
      num.minus = true;
      break;
    case 'PL':
      if (num.localeSign) throw syntax('cannot use "S" and "PL" together');
      num.plus = true;
      break;
    case 'SG':
      if (num.localeSign) throw syntax('cannot use "S" and "SG" together');
      num.minus = true;
      num.plus = true;
      break;
    case 'PR':
      if (num.localeSign || num.plus || num.minus) throw syntax('cannot use "PR" and "S"/"PL"/"MI"/"SG" together');
      num.bracket = true;
      break;
    case 'RN':
    case 'rn':
      // PostgreSQL 15 allows RN twice (later versions refuse it).
      num.roman = true;
      break;
    case 'V':
      if (num.decimal) throw syntax('cannot use "V" and decimal point together');
      num.multiply = true;
      break;
    case 'E':
      if (num.eeee) throw syntax('cannot use "EEEE" twice');
      if (num.blank || num.fillMode || num.localeSign || num.bracket || num.minus || num.plus || num.roman || num.multiply)
        throw syntax('"EEEE" is incompatible with other formats');
      num.eeee = true;
      break;
    default:
      break;
  }
}

const PARSED = new Map<string, NumberTemplate>();

/** The template read as PostgreSQL reads it (parse_format); PostgreSQL's errors for bad ones. */
export function numberTemplate(template: string): NumberTemplate {
  const known = PARSED.get(template);
  if (known) return known;
  const num: NumberDesc = {
    pre: 0,
    post: 0,
    lsign: 'none',
    preLsignNum: 0,
    multi: 0,
    zeroStart: 0,
    zeroEnd: 0,
    decimal: false,
    zero: false,
    blank: false,
    fillMode: false,
    localeSign: false,
    bracket: false,
    minus: false,
    plus: false,
    roman: false,
    multiply: false,
    eeee: false,
  };
  const nodes: FormatNode[] = [];
  const chars = Array.from(template);
  let i = 0;
  while (i < chars.length) {
    const rest = chars.slice(i, i + 4).join('');
    const code = chars[i]!.codePointAt(0)!;
    const keyword = code > 32 && code < 126 ? KEYWORDS.find(([name]) => rest.startsWith(name)) : undefined;
    if (keyword) {
      nodes.push({ key: keyword[1] });
      prepare(num, keyword[1]);
      i += keyword[0].length;
    } else if (chars[i] === '"') {
      // A quoted literal; a backslash quotes the next character.
      i++;
      while (i < chars.length) {
        if (chars[i] === '"') {
          i++;
          break;
        }
        if (chars[i] === '\\' && i + 1 < chars.length) i++;
        nodes.push({ text: chars[i]! });
        i++;
      }
    } else {
      // Outside quotes a backslash is special only before a double quote.
      if (chars[i] === '\\' && chars[i + 1] === '"') i++;
      nodes.push({ text: chars[i]! });
      i++;
    }
  }
  const parsed: NumberTemplate = { nodes, desc: num, empty: template.length === 0 };
  if (PARSED.size > 1000) PARSED.clear();
  PARSED.set(template, parsed);
  return parsed;
}

// ---- exact decimal text of numbers ----

const TEN = 10n;
const pow10 = (n: number): bigint => TEN ** BigInt(n);

/** A decimal value: sign, digits without the point, and how many of them follow it. */
interface Decimal {
  negative: boolean;
  digits: bigint;
  scale: number;
}

function decimalOf(text: string): Decimal {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match || (match[2] === '' && !match[3])) throw new NumberFormatError(`invalid input syntax for type numeric: "${text}"`);
  const fraction = match[3] ?? '';
  let digits = BigInt((match[2] ?? '') + fraction || '0');
  let scale = fraction.length - Number(match[4] ?? 0);
  if (scale < 0) {
    digits *= pow10(-scale);
    scale = 0;
  }
  return { negative: match[1] === '-' && digits !== 0n, digits, scale };
}

/** n / d rounded half away from zero (n, d >= 0). */
const roundHalfUp = (n: bigint, d: bigint): bigint => {
  const q = n / d;
  return 2n * (n % d) >= d ? q + 1n : q;
};

/** n / d rounded half to even (n, d >= 0). */
const roundHalfEven = (n: bigint, d: bigint): bigint => {
  const q = n / d;
  const twice = 2n * (n % d);
  return twice > d || (twice === d && q % 2n === 1n) ? q + 1n : q;
};

/** Digits `q` (scaled by 10^scale) written with `scale` digits after the point. */
function withPoint(q: bigint, scale: number): string {
  if (scale <= 0) return q.toString();
  const text = q.toString().padStart(scale + 1, '0');
  return `${text.slice(0, -scale)}.${text.slice(-scale)}`;
}

/** numeric_round(x, scale) written by numeric_out: half away from zero, exactly `scale` digits, no negative zero. */
function numericRounded(value: Decimal, scale: number): string {
  if (value.scale <= scale) return (value.negative ? '-' : '') + withPoint(value.digits * pow10(scale - value.scale), scale);
  const q = roundHalfUp(value.digits, pow10(value.scale - scale));
  return (value.negative && q !== 0n ? '-' : '') + withPoint(q, scale);
}

/** numeric_out_sci: the significand of the unrounded exponent, rounded half away from zero ("10.0e+02" for 999 with one digit). */
function numericScientific(value: Decimal, scale: number): string {
  const exponent = value.digits === 0n ? 0 : value.digits.toString().length - 1 - value.scale;
  const shift = scale - value.scale - exponent;
  const q = shift >= 0 ? value.digits * pow10(shift) : roundHalfUp(value.digits, pow10(-shift));
  const sign = value.negative ? '-' : '';
  return `${sign}${withPoint(q, scale)}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** A finite double as m * 2^e (m >= 0). */
function binaryOf(x: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  return exponent === 0 ? { m: fraction, e: -1074 } : { m: fraction | (1n << 52n), e: exponent - 1075 };
}

/** |x| * 10^k as a fraction n / d. */
function scaled(x: number, k: number): { n: bigint; d: bigint } {
  const { m, e } = binaryOf(x);
  let n = m;
  let d = 1n;
  if (e >= 0) n <<= BigInt(e);
  else d <<= BigInt(-e);
  if (k >= 0) n *= pow10(k);
  else d *= pow10(-k);
  return { n, d };
}

/** C's printf("%.*f", digits, x) of a finite double (PostgreSQL's snprintf writes NaN and Infinity itself). */
function printfFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x < 0 ? '-Infinity' : 'Infinity';
  const negative = x < 0 || Object.is(x, -0);
  // toFixed rounds the exact value too, but ties up: it serves where there is no tie.
  if (Math.abs(x) < 1e21 && !isTie(x, digits)) return (negative ? '-' : '') + Math.abs(x).toFixed(digits);
  const { n, d } = scaled(x, digits);
  return (negative ? '-' : '') + withPoint(roundHalfEven(n, d), digits);
}

const WORDS = new DataView(new ArrayBuffer(8));

/** Whether |x| * 10^digits lies exactly halfway between two integers: |x| = m * 2^e (m odd) with e + digits + 1 = 0. */
function isTie(x: number, digits: number): boolean {
  if (x === 0) return false;
  WORDS.setFloat64(0, x);
  const high = WORDS.getUint32(0);
  const low = WORDS.getUint32(4);
  const biased = (high >>> 20) & 0x7ff;
  const mantissaHigh = (high & 0xfffff) | (biased === 0 ? 0 : 0x100000);
  const trailing = (v: number) => 31 - Math.clz32(v & -v);
  const zeros = low !== 0 ? trailing(low) : 32 + trailing(mantissaHigh);
  const exponent = (biased === 0 ? -1074 : biased - 1075) + zeros;
  return exponent + digits + 1 === 0;
}

/** C's printf("%+.*e", digits, x) of a finite double. */
function printfScientific(x: number, digits: number): string {
  const negative = x < 0 || Object.is(x, -0);
  let exponent = 0;
  let q = 0n;
  if (x !== 0) {
    exponent = Math.floor(Math.log10(Math.abs(x)));
    // The exact exponent: 10^e <= |x| < 10^(e+1).
    for (;;) {
      const { n, d } = scaled(x, -exponent);
      if (n < d) exponent--;
      else if (n >= 10n * d) exponent++;
      else break;
    }
    const { n, d } = scaled(x, digits - exponent);
    q = roundHalfEven(n, d);
    if (q === pow10(digits + 1)) {
      q = pow10(digits);
      exponent++;
    }
  }
  return `${negative ? '-' : '+'}${withPoint(q, digits)}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

const ROMAN_ONES = ['I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX'];
const ROMAN_TENS = ['X', 'XX', 'XXX', 'XL', 'L', 'LX', 'LXX', 'LXXX', 'XC'];
const ROMAN_HUNDREDS = ['C', 'CC', 'CCC', 'CD', 'D', 'DC', 'DCC', 'DCCC', 'CM'];

function romanOf(value: number): string {
  if (value > 3999 || value < 1) return '#'.repeat(15);
  const digits = String(value);
  let text = '';
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]) - 1;
    if (digit < 0) continue;
    const place = digits.length - i;
    if (place > 3) text += 'M'.repeat(digit + 1);
    else text += [ROMAN_ONES, ROMAN_TENS, ROMAN_HUNDREDS][place - 1]![digit]!;
  }
  return text;
}

const INT4_MAX = 2147483647;
const INT4_MIN = -2147483648;

/** The double PostgreSQL holds for the engine's text of a float ("nan", "-inf", "1e+300"). */
function floatOf(text: string, kind: 'float4' | 'float8'): number {
  const lower = text.trim().toLowerCase();
  const x = /^[+-]?nan$/.test(lower)
    ? NaN
    : /^[+-]?inf(inity)?$/.test(lower)
      ? lower.startsWith('-')
        ? -Infinity
        : Infinity
      : Number(lower);
  if (Number.isNaN(x) && !lower.includes('nan')) throw new NumberFormatError(`invalid input syntax for type double precision: "${text}"`);
  return kind === 'float4' ? Math.fround(x) : x;
}

/** NaN, Infinity or -Infinity as numeric_out writes them; null for a number. */
function specialNumeric(text: string): string | null {
  const lower = text.trim().toLowerCase();
  if (lower === 'nan') return 'NaN';
  if (/^[+]?inf(inity)?$/.test(lower)) return 'Infinity';
  if (/^-inf(inity)?$/.test(lower)) return '-Infinity';
  return null;
}

/** EEEE of NaN and the infinities: '#' for the sign, digits, point and exponent. */
function nonFiniteScientific(num: NumberDesc): string {
  const hashes = '#'.repeat(num.pre + num.post + 6).split('');
  hashes[0] = ' ';
  hashes[num.pre + 1] = '.';
  return hashes.join('');
}

/** '#' for each digit and the point where the value does not fit the template. */
const overflowText = (pre: number, post: number) => `${'#'.repeat(pre)}.${'#'.repeat(post)}`;

/** The value's digits (no sign), where they start and its sign, as PostgreSQL's to_char functions prepare them. */
function prepared(kind: NumberKind, text: string, num: NumberDesc): { digits: string; outPreSpaces: number; sign: string } {
  let sign = '\0';
  let digits: string;
  if (num.roman) {
    let whole: number;
    if (kind === 'float4' || kind === 'float8') {
      const x = floatOf(text, kind);
      const even = x - Math.floor(x) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x);
      whole = Number.isNaN(x) || even > INT4_MAX || even < INT4_MIN ? INT4_MAX : even;
    } else {
      const special = specialNumeric(text);
      if (special) throw new NumberFormatError(`cannot convert ${special === 'NaN' ? 'NaN' : 'infinity'} to integer`);
      // PostgreSQL 15 converts with int4's range check.
      const rounded = BigInt(numericRounded(decimalOf(text), 0));
      if (rounded > BigInt(INT4_MAX) || rounded < BigInt(INT4_MIN)) throw new NumberFormatError('integer out of range');
      whole = Number(rounded);
    }
    return { digits: romanOf(whole), outPreSpaces: 0, sign };
  }
  if (num.eeee) {
    let written: string;
    if (kind === 'float4' || kind === 'float8' || kind === 'int4') {
      const x = kind === 'int4' ? Number(text) : floatOf(text, kind);
      if (!Number.isFinite(x)) return { digits: nonFiniteScientific(num), outPreSpaces: 0, sign };
      written = printfScientific(x, num.post);
      return { digits: written.startsWith('+') ? ` ${written.slice(1)}` : written, outPreSpaces: 0, sign };
    }
    if (specialNumeric(text)) return { digits: nonFiniteScientific(num), outPreSpaces: 0, sign };
    written = numericScientific(decimalOf(text), num.post);
    return { digits: written.startsWith('-') ? written : ` ${written}`, outPreSpaces: 0, sign };
  }
  if (kind === 'int4' || kind === 'int8') {
    // The engine's text of an integer is int4out's/int8out's.
    let written = text.trim();
    if (!/^(-?[1-9]\d*|0)$/.test(written)) written = BigInt(written).toString();
    if (num.multiply) {
      let value = BigInt(written);
      const [low, high, name] = kind === 'int4' ? [-(2n ** 31n), 2n ** 31n - 1n, 'integer'] : [-(2n ** 63n), 2n ** 63n - 1n, 'bigint'];
      const factor = pow10(num.multi);
      if (factor > high || value * factor > high || value * factor < low) throw new NumberFormatError(`${name} out of range`);
      value *= factor;
      written = value.toString();
      num.pre += num.multi;
    }
    sign = written.startsWith('-') ? '-' : '+';
    const whole = written.replace(/^-/, '');
    digits = num.post ? `${whole}.${'0'.repeat(num.post)}` : whole;
    return fitted(digits, whole.length, num, sign);
  }
  if (kind === 'numeric') {
    const special = specialNumeric(text);
    if (special) {
      if (num.multiply) num.pre += num.multi;
      sign = special.startsWith('-') ? '-' : '+';
      digits = special.replace('-', '');
      return fitted(digits, digits.length, num, sign);
    }
    const value = decimalOf(text);
    if (num.multiply) {
      value.digits *= pow10(num.multi);
      num.pre += num.multi;
    }
    const written = numericRounded(value, num.post);
    sign = written.startsWith('-') ? '-' : '+';
    digits = written.replace(/^-/, '');
    return fitted(digits, digits.split('.')[0]!.length, num, sign);
  }
  let x = floatOf(text, kind);
  if (num.multiply) {
    const factor = Number(`1e${num.multi}`);
    x = kind === 'float4' ? Math.fround(x * Math.fround(factor)) : x * factor;
    num.pre += num.multi;
  }
  const precision = kind === 'float4' ? 6 : 15;
  const wholeLength = printfFixed(Math.abs(x), 0).length;
  if (wholeLength >= precision) num.post = 0;
  else if (wholeLength + num.post > precision) num.post = precision - wholeLength;
  const written = printfFixed(x, num.post);
  sign = written.startsWith('-') ? '-' : '+';
  digits = written.replace(/^-/, '');
  const point = digits.indexOf('.');
  return fitted(digits, point < 0 ? digits.length : point, num, sign);
}

/** Spaces before the digits, or '#'s where the whole part is longer than the template's. */
function fitted(digits: string, wholeLength: number, num: NumberDesc, sign: string) {
  if (wholeLength < num.pre) return { digits, outPreSpaces: num.pre - wholeLength, sign };
  if (wholeLength > num.pre) return { digits: overflowText(num.pre, num.post), outPreSpaces: 0, sign };
  return { digits, outPreSpaces: 0, sign };
}

/** get_th: the ordinal suffix of the number's last digits. */
function ordinal(digits: string, upper: boolean): string {
  const last = digits[digits.length - 1] ?? '';
  if (!/\d/.test(last)) throw new NumberFormatError(`"${digits}" is not a number`);
  const teen = digits.length > 1 && digits[digits.length - 2] === '1';
  const suffix = teen ? 'th' : (({ '1': 'st', '2': 'nd', '3': 'rd' } as Record<string, string>)[last] ?? 'th');
  return upper ? suffix.toUpperCase() : suffix;
}

/** NUM_processor's state while it writes (PostgreSQL's NUMProc). */
interface Writing {
  num: NumberDesc;
  /** The prepared digits, and the position of the next one. */
  input: string;
  p: number;
  out: string[];
  outPreSpaces: number;
  sign: string;
  signWrote: boolean;
  numCount: number;
  /** FM: the last digit after the point worth writing (-1: none). */
  lastRelevant: number;
  numIn: boolean;
  numCurr: number;
}

const relevantIsPoint = (w: Writing) => w.lastRelevant >= 0 && w.input[w.lastRelevant] === '.';
/** IS_PREDEC_SPACE: a lone 0 before the point is written as a space ("9.9" of 0.1 is "  .1"). */
const predecSpace = (w: Writing) => !w.num.zero && w.p === 0 && w.input[0] === '0' && w.num.post !== 0;

/** The sign before the first digit written, where one is due. */
function leadingSign(w: Writing): void {
  const { num, sign } = w;
  if (w.signWrote || !(w.numCurr >= w.outPreSpaces || (num.zero && num.zeroStart === w.numCurr))) return;
  if (predecSpace(w) && !relevantIsPoint(w)) return;
  if (num.localeSign) {
    if (num.lsign === 'pre') {
      w.out.push(sign === '-' ? '-' : '+');
      w.signWrote = true;
    }
  } else if (num.bracket) {
    w.out.push(sign === '+' ? ' ' : '<');
    w.signWrote = true;
  } else if (sign === '+') {
    if (!num.fillMode) w.out.push(' ');
    w.signWrote = true;
  } else if (sign === '-') {
    w.out.push('-');
    w.signWrote = true;
  }
}

/** NUM_numpart_to_char: a digit, zero, space or point for one of 9, 0, . and D, and the sign around it. */
function numberPart(w: Writing, key: Key): void {
  const { num, out } = w;
  if (num.roman) return;
  w.numIn = false;
  leadingSign(w);
  if (w.numCurr < w.outPreSpaces && (num.zeroStart > w.numCurr || !num.zero)) {
    if (!num.fillMode) out.push(' ');
  } else if (num.zero && w.numCurr < w.outPreSpaces && num.zeroStart <= w.numCurr) {
    out.push('0');
    w.numIn = true;
  } else {
    const ch = w.p < w.input.length ? w.input[w.p]! : '\0';
    if (ch === '.') {
      if (!relevantIsPoint(w) || num.fillMode) out.push('.');
    } else if (w.lastRelevant >= 0 && w.p > w.lastRelevant && key !== '0') {
      // past the last relevant digit (FM)
    } else if (predecSpace(w)) {
      if (!num.fillMode) out.push(' ');
      else if (relevantIsPoint(w)) out.push('0');
    } else {
      out.push(ch);
      w.numIn = true;
    }
    if (w.p < w.input.length) w.p++;
  }
  let end = w.numCount + (w.outPreSpaces ? 1 : 0) + (num.decimal ? 1 : 0);
  if (w.lastRelevant >= 0 && w.lastRelevant === w.p) end = w.numCurr;
  if (w.numCurr + 1 === end) {
    if (w.signWrote && num.bracket) out.push(w.sign === '+' ? ' ' : '>');
    else if (num.localeSign && num.lsign === 'post') out.push(w.sign === '-' ? '-' : '+');
  }
  w.numCurr++;
}

/** The last digit after the point worth writing in fill mode, '0' patterns kept (-1: no point). */
function lastRelevantDigit(num: NumberDesc, input: string, outPreSpaces: number): number {
  const point = input.indexOf('.');
  if (!num.fillMode || !num.decimal || point < 0) return -1;
  let last = point;
  for (let i = point + 1; i < input.length; i++) if (input[i] !== '0') last = i;
  if (num.zeroEnd > outPreSpaces) last = Math.max(last, Math.min(input.length - 1, num.zeroEnd - outPreSpaces));
  return last;
}

/** Whether the sign is written by the digits (false) or not at all or by MI/PL/SG (true), as NUM_processor sets it up. */
function signSetUp(num: NumberDesc, sign: string): boolean {
  if (num.plus || num.minus) return !(num.plus && !num.minus);
  if (sign !== '-' && num.fillMode) num.bracket = false;
  if (num.lsign === 'pre' && num.pre === num.preLsignNum) num.lsign = 'post';
  return sign === '+' && num.fillMode && !num.localeSign;
}

/** What one pattern other than the digits writes. */
function patternText(w: Writing, key: Key): string {
  const { num, sign, input } = w;
  switch (key) {
    case ',':
    case 'G':
      return w.numIn ? ',' : num.fillMode ? '' : ' ';
    case 'L':
      return ' ';
    case 'RN':
    case 'rn': {
      const roman = key === 'rn' ? input.toLowerCase() : input;
      return num.fillMode ? roman : roman.padStart(15, ' ');
    }
    case 'TH':
    case 'th':
      return num.roman || input[0] === '#' || sign === '-' || num.decimal ? '' : ordinal(input, key === 'TH');
    case 'MI':
      return sign === '-' ? '-' : num.fillMode ? '' : ' ';
    case 'PL':
      return sign === '+' ? '+' : num.fillMode ? '' : ' ';
    case 'SG':
      return sign;
    default:
      return '';
  }
}

/** NUM_processor of to_char: the template written around the prepared digits. */
function processed(nodes: readonly FormatNode[], num: NumberDesc, input: string, outPreSpaces: number, sign: string): string {
  if (num.zeroStart) num.zeroStart--;
  if (num.eeee) return input;
  if (num.roman) {
    // PostgreSQL 15's Roman correction: nothing but FM is kept.
    Object.assign(num, { lsign: 'none', preLsignNum: 0, post: 0, pre: 0 });
    for (const flag of ['decimal', 'zero', 'blank', 'localeSign', 'bracket', 'minus', 'plus', 'multiply', 'eeee'] as const)
      num[flag] = false;
    outPreSpaces = 0;
  }
  const signWrote = signSetUp(num, sign);
  const w: Writing = {
    num,
    input,
    p: 0,
    out: [],
    outPreSpaces,
    sign,
    signWrote,
    numCount: num.post + num.pre - 1 + (!signWrote && outPreSpaces === 0 ? 1 : 0),
    lastRelevant: lastRelevantDigit(num, input, outPreSpaces),
    numIn: false,
    numCurr: 0,
  };
  for (const node of nodes) {
    if ('text' in node) w.out.push(node.text);
    else if (node.key === '9' || node.key === '0' || node.key === '.' || node.key === 'D') numberPart(w, node.key);
    else w.out.push(patternText(w, node.key));
  }
  // PostgreSQL 15 writes into a C string: a NUL written past the digits ends the text there.
  const text = w.out.join('');
  const nul = text.indexOf('\0');
  return nul < 0 ? text : text.slice(0, nul);
}

/** to_char(value, template) as PostgreSQL writes it; `text` is the value's text (the engine's for floats). */
export function numberText(kind: NumberKind, text: string, template: NumberTemplate): string {
  if (template.empty) return '';
  const num: NumberDesc = { ...template.desc };
  const { digits, outPreSpaces, sign } = prepared(kind, text, num);
  return processed(template.nodes, num, digits, outPreSpaces, sign);
}

const KINDS = new Set<string>(['int4', 'int8', 'numeric', 'float4', 'float8']);

/**
 * `vdb_to_char(value_text, kind, template)`: numberText for each row, in the engine. A value
 * PostgreSQL refuses (V past the integer's range) fails the statement with PostgreSQL's text.
 */
export function registerNumberFormat(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_to_char',
      returnType: VARCHAR,
      parameterTypes: [VARCHAR, VARCHAR, VARCHAR],
      mainFunction: (info, batch, output) => {
        const values = batch.getColumnVector(0) as DuckDBVarCharVector;
        const kinds = batch.getColumnVector(1) as DuckDBVarCharVector;
        const templates = batch.getColumnVector(2) as DuckDBVarCharVector;
        const out = output as DuckDBVarCharVector;
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            const value = values.getItem(i);
            const kind = kinds.getItem(i);
            const template = templates.getItem(i);
            if (value === null || kind === null || template === null || !KINDS.has(kind)) out.setItem(i, null);
            else out.setItem(i, numberText(kind as NumberKind, value, numberTemplate(template)));
          }
        } catch (err) {
          info.setError(err instanceof Error ? err.message : String(err));
          return;
        }
        out.flush();
      },
    }),
  );
}
