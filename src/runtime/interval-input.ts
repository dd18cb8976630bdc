/**
 * PostgreSQL's interval input (IntervalStyle postgres), read here so that the engine gets the
 * exact value: the engine reads many forms otherwise ('1.99 years' is 1 year 11 months there, 2
 * years in PostgreSQL) or not at all ('-1 +02:03', 'P1Y2M', '1 2' DAY TO HOUR).
 *
 * Written from PostgreSQL's documented rules (section 8.5.4 and Appendix B): the text is cut into
 * fields; the fields are read from right to left, a unit naming the number on its left; a number
 * without a unit is the restriction's lowest field (seconds when there is none), a number left of
 * a time or of hours is days; fractions spill to the smaller units (a month is 30 days, a day 24
 * hours; fractions of years are rounded to months); each unit at most once; `ago` negates. The
 * value is kept as PostgreSQL keeps it: months, days and microseconds.
 */
import { badRequest } from '../errors.js';

export interface IntervalValue {
  months: number;
  days: number;
  micros: bigint;
}

/** PostgreSQL's interval field bits (INTERVAL_MASK) as they arrive in the typmods. */
export const FIELD = { month: 1 << 1, year: 1 << 2, day: 1 << 3, hour: 1 << 10, minute: 1 << 11, second: 1 << 12 } as const;
/** The mask of an interval without a field restriction. */
export const FULL_RANGE = 0x7fff;

type Unit =
  'microsecond' | 'millisecond' | 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year' | 'decade' | 'century' | 'millennium';

/** Unit words, as PostgreSQL looks them up: by their first 10 characters. */
const UNITS: Record<string, Unit> = {
  microsecon: 'microsecond',
  us: 'microsecond',
  usec: 'microsecond',
  usecs: 'microsecond',
  millisecon: 'millisecond',
  ms: 'millisecond',
  msec: 'millisecond',
  msecs: 'millisecond',
  s: 'second',
  sec: 'second',
  secs: 'second',
  second: 'second',
  seconds: 'second',
  m: 'minute',
  min: 'minute',
  mins: 'minute',
  minute: 'minute',
  minutes: 'minute',
  h: 'hour',
  hr: 'hour',
  hrs: 'hour',
  hour: 'hour',
  hours: 'hour',
  d: 'day',
  day: 'day',
  days: 'day',
  w: 'week',
  week: 'week',
  weeks: 'week',
  mon: 'month',
  mons: 'month',
  month: 'month',
  months: 'month',
  y: 'year',
  yr: 'year',
  yrs: 'year',
  year: 'year',
  years: 'year',
  dec: 'decade',
  decs: 'decade',
  decade: 'decade',
  decades: 'decade',
  c: 'century',
  cent: 'century',
  century: 'century',
  centuries: 'century',
  mil: 'millennium',
  mils: 'millennium',
  millennia: 'millennium',
  millennium: 'millennium',
};

const USEC = { second: 1_000_000n, minute: 60_000_000n, hour: 3_600_000_000n, day: 86_400_000_000n } as const;
const INT32_MAX = 2 ** 31 - 1;
const INT64_MAX = 2n ** 63n - 1n;

/** A 400 for what vdb does not read (as the translations word it). */
export const notSupported = (what: string, hint: string) => badRequest(`${what} is not supported by vdb's engine.`, hint, 'Not available');

/** C's rint: to the nearest integer, halves to even. */
export function rint(x: number): number {
  const floor = Math.floor(x);
  const rest = x - floor;
  if (rest < 0.5) return floor;
  if (rest > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** The value being read, its fields added as PostgreSQL adds them. */
class Accumulator {
  months = 0;
  days = 0;
  micros = 0n;
  constructor(private readonly text: string) {}

  overflow(): Error {
    return badRequest(
      `interval field value out of range: "${this.text}"`,
      'PostgreSQL keeps months and days in 32 bits, the time in 64-bit microseconds.',
    );
  }
  addMonths(n: number): void {
    this.months += n;
    if (Math.abs(this.months) > INT32_MAX || !Number.isSafeInteger(n)) throw this.overflow();
  }
  addDays(n: number): void {
    this.days += n;
    if (Math.abs(this.days) > INT32_MAX || !Number.isSafeInteger(n)) throw this.overflow();
  }
  addMicros(n: bigint): void {
    this.micros += n;
    if (this.micros > INT64_MAX || this.micros < -INT64_MAX - 1n) throw this.overflow();
  }
  /** A fraction of `scale` microseconds: whole microseconds, the rest rounded. */
  fractMicros(frac: number, scale: bigint): void {
    if (frac === 0) return;
    const product = frac * Number(scale);
    const whole = Math.trunc(product);
    this.addMicros(BigInt(whole) + BigInt(rint(product - whole)));
  }
  /** A fraction of `scale` days: whole days, the rest as microseconds. */
  fractDays(frac: number, scale: number): void {
    if (frac === 0) return;
    const product = frac * scale;
    const whole = Math.trunc(product);
    this.addDays(whole);
    this.fractMicros(product - whole, USEC.day);
  }
  /** A fraction of `scale` years, rounded to months. */
  fractYears(frac: number, scale: number): void {
    this.addMonths(rint(frac * scale * 12));
  }
  /** `whole` and `frac` of `unit`. */
  add(unit: Unit, whole: bigint, frac: number): void {
    const n = Number(whole);
    switch (unit) {
      case 'microsecond':
        this.addMicros(whole);
        this.fractMicros(frac, 1n);
        return;
      case 'millisecond':
        this.addMicros(whole * 1000n);
        this.fractMicros(frac, 1000n);
        return;
      case 'second':
      case 'minute':
      case 'hour':
        this.addMicros(whole * USEC[unit]);
        this.fractMicros(frac, USEC[unit]);
        return;
      case 'day':
        this.addDays(n);
        this.fractMicros(frac, USEC.day);
        return;
      case 'week':
        this.addDays(n * 7);
        this.fractDays(frac, 7);
        return;
      case 'month':
        this.addMonths(n);
        this.fractDays(frac, 30);
        return;
      default: {
        const years = { year: 1, decade: 10, century: 100, millennium: 1000 }[unit];
        this.addMonths(n * years * 12);
        this.fractYears(frac, years);
      }
    }
  }
}

/** Bits of PostgreSQL's field mask: each unit may be given once. */
const UNIT_BITS: Record<Unit, number> = {
  microsecond: 1,
  millisecond: 2,
  second: 4,
  minute: 8,
  hour: 16,
  day: 32,
  week: 64,
  month: 128,
  year: 256,
  decade: 512,
  century: 1024,
  millennium: 2048,
};
const TIME_BITS = UNIT_BITS.hour | UNIT_BITS.minute | UNIT_BITS.second | UNIT_BITS.millisecond | UNIT_BITS.microsecond;
const ALL_SECONDS = UNIT_BITS.second | UNIT_BITS.millisecond | UNIT_BITS.microsecond;

type Field =
  { kind: 'number'; text: string; signed: boolean } | { kind: 'time'; text: string; signed: boolean } | { kind: 'word'; text: string };

/**
 * `text` in PostgreSQL's interval input as months, days and microseconds, restricted to the
 * fields of `mask` and rounded to `precision` fractional digits of a second. Throws PostgreSQL's
 * error for text it fails, and a refusal for forms not read here.
 */
export function intervalInput(text: string, mask: number = FULL_RANGE, precision: number | null = null): IntervalValue {
  const invalid = () =>
    badRequest(
      `invalid input syntax for type interval: "${text}"`,
      "Write an interval as PostgreSQL reads it, e.g. '1 day 02:03:04' or 'P1DT2H'.",
    );
  const refuse = (why: string) =>
    notSupported(`The interval input '${text}' (${why})`, "Write it as units and a time, e.g. interval '1 day 02:03:04'.");
  const value = new Accumulator(text);
  const trimmed = text.trim();
  if (/^P/.test(trimmed)) iso8601(trimmed.slice(1), value, invalid, refuse);
  else postgresFields(fieldsOf(trimmed, invalid, refuse), mask, value, invalid);
  return restricted({ months: value.months, days: value.days, micros: value.micros }, mask, precision);
}

/** The fields of the text, as PostgreSQL cuts them: numbers (signed ones apart), times, words. */
function fieldsOf(text: string, invalid: () => Error, refuse: (why: string) => Error): Field[] {
  const fields: Field[] = [];
  let i = 0;
  const digitsFrom = (from: number) => {
    let end = from;
    while (end < text.length && /[0-9]/.test(text[end]!)) end++;
    return end;
  };
  if (text.startsWith('@')) i = 1;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const signed = c === '+' || c === '-';
    const start = i;
    if (/[0-9]/.test(c) || (signed && /[0-9]/.test(text[i + 1] ?? ''))) {
      let end = digitsFrom(signed ? i + 1 : i);
      if (text[end] === ':') {
        while (end < text.length && /[0-9:.]/.test(text[end]!)) end++;
        fields.push({ kind: 'time', text: text.slice(start, end), signed });
      } else {
        if (text[end] === '.') end = digitsFrom(end + 1);
        else if (text[end] === '-' && /[0-9]/.test(text[end + 1] ?? '')) end = digitsFrom(end + 1);
        if (/[-/.:]/.test(text[end] ?? '')) throw refuse('a number of this form');
        fields.push({ kind: 'number', text: text.slice(start, end), signed });
      }
      i = end;
    } else if (/[a-z]/i.test(c)) {
      let end = i;
      while (end < text.length && /[a-z]/i.test(text[end]!)) end++;
      if (/[-/.]/.test(text[end] ?? '')) throw refuse('a word joined to a date');
      // PostgreSQL reads letters and the digits after them as one word (day2), never a unit.
      if (/[0-9]/.test(text[end] ?? '')) throw invalid();
      fields.push({ kind: 'word', text: text.slice(start, end).toLowerCase() });
      i = end;
    } else if (signed || c === '.') throw refuse('a sign or point without digits');
    else throw invalid();
  }
  return fields;
}

/** The fields read right to left, as PostgreSQL reads them. */
function postgresFields(fields: Field[], mask: number, value: Accumulator, invalid: () => Error): void {
  let type: Unit | 'none' | 'ago' = 'none';
  let seen = 0;
  let unitPending = false;
  let ago = false;
  const claim = (bits: number) => {
    if ((seen & bits) !== 0) throw invalid();
    seen |= bits;
  };
  for (let i = fields.length - 1; i >= 0; i--) {
    const field = fields[i]!;
    if (field.kind === 'word') {
      if (unitPending) throw invalid();
      if (field.text === 'ago') {
        // Only last: PostgreSQL's handling of an `ago` elsewhere is not followed here.
        if (i !== fields.length - 1) throw invalid();
        ago = true;
        type = 'ago';
        continue;
      }
      const unit = UNITS[field.text.slice(0, 10)];
      if (!unit) throw invalid();
      type = unit;
      unitPending = true;
      continue;
    }
    if (field.kind === 'time') {
      // A time sets the microseconds: fractions spilled by fields on its right are dropped, as in PostgreSQL 15.
      value.micros = 0n;
      value.addMicros(timeMicros(field.signed ? field.text.slice(1) : field.text, mask, invalid) * (field.text.startsWith('-') ? -1n : 1n));
      claim(TIME_BITS);
      type = 'day';
      unitPending = false;
      continue;
    }
    const match = /^([+-]?\d+)(?:\.(\d*)|-(\d+))?$/.exec(field.text);
    if (!match) throw invalid();
    if (type === 'ago' && match[3] === undefined) throw invalid();
    if (type === 'none' || type === 'ago') type = lowestField(mask);
    let whole = BigInt(match[1]!);
    let frac = 0;
    let unit: Unit = type;
    if (match[3] !== undefined) {
      // SQL's years-months: 1-2.
      const months = Number(match[3]);
      if (months >= 12) throw value.overflow();
      whole = whole * 12n + BigInt(field.text.startsWith('-') ? -months : months);
      unit = 'month';
      type = 'month';
    } else if (match[2] !== undefined) {
      frac = Number(`0.${match[2]}`) * (field.text.startsWith('-') ? -1 : 1);
    }
    if (whole > 2n ** 63n || whole < -(2n ** 63n)) throw value.overflow();
    value.add(unit, whole, frac);
    claim(unit === 'second' && frac !== 0 ? ALL_SECONDS : UNIT_BITS[unit]);
    // A number left of hours is days ('1 2' DAY TO HOUR).
    if (unit === 'hour') type = 'day';
    unitPending = false;
  }
  if (seen === 0 || unitPending) throw invalid();
  if (ago) {
    value.months = -value.months;
    value.days = -value.days;
    value.micros = -value.micros;
  }
}

/** The field a number without a unit stands for: the restriction's lowest, else seconds. */
function lowestField(mask: number): Unit {
  if (mask === FIELD.year) return 'year';
  if (mask === FIELD.month || mask === (FIELD.year | FIELD.month)) return 'month';
  if (mask === FIELD.day) return 'day';
  if (mask === FIELD.hour || mask === (FIELD.day | FIELD.hour)) return 'hour';
  if (mask === FIELD.minute || mask === (FIELD.hour | FIELD.minute) || mask === (FIELD.day | FIELD.hour | FIELD.minute)) return 'minute';
  return 'second';
}

/** h:m[:s[.f]] (or m:s.f, and m:s in MINUTE TO SECOND) in microseconds. */
function timeMicros(text: string, mask: number, invalid: () => Error): bigint {
  const parts = /^(\d+):(\d+)(?::(\d+))?(\.\d*)?$/.exec(text);
  if (!parts) throw invalid();
  let hours = Number(parts[1]);
  let minutes = Number(parts[2]);
  let seconds = parts[3] === undefined ? 0 : Number(parts[3]);
  const fraction = parts[4] === undefined ? 0 : rint(Number(`0${parts[4]}`) * 1_000_000);
  if (parts[3] === undefined && (parts[4] !== undefined || mask === (FIELD.minute | FIELD.second))) {
    // mm:ss.fff, and mm:ss in MINUTE TO SECOND.
    seconds = minutes;
    minutes = hours;
    hours = 0;
  }
  if (minutes > 59 || seconds > 60 || !Number.isSafeInteger(hours))
    throw badRequest(`interval field value out of range: "${text}"`, 'Minutes go to 59, seconds to 60.');
  return BigInt(hours) * USEC.hour + BigInt(minutes) * USEC.minute + BigInt(seconds) * USEC.second + BigInt(fraction);
}

/**
 * ISO 8601 durations after the P: designators (1Y2M3W4DT5H6M7.5S, each number signed, fractions
 * allowed) or the alternative form YYYY-MM-DDTHH:MM:SS. Designators in their order, each once.
 */
function iso8601(body: string, value: Accumulator, invalid: () => Error, refuse: (why: string) => Error): void {
  const alternative = /^(\d+)-(\d+)-(\d+)(?:T(\d+):(\d+):(\d+)(\.\d+)?)?$/.exec(body);
  if (alternative) {
    const [, years, months, days, hours = '0', minutes = '0', seconds = '0', fraction] = alternative;
    value.add('year', BigInt(years!), 0);
    value.add('month', BigInt(months!), 0);
    value.add('day', BigInt(days!), 0);
    value.add('hour', BigInt(hours), 0);
    value.add('minute', BigInt(minutes), 0);
    value.add('second', BigInt(seconds), fraction ? Number(`0${fraction}`) : 0);
    return;
  }
  const designated =
    /^(?:(-?\d+(?:\.\d+)?)Y)?(?:(-?\d+(?:\.\d+)?)M)?(?:(-?\d+(?:\.\d+)?)W)?(?:(-?\d+(?:\.\d+)?)D)?(?:T(?:(-?\d+(?:\.\d+)?)H)?(?:(-?\d+(?:\.\d+)?)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$/.exec(
      body,
    );
  if (!designated) {
    if (/^[0-9YMWDTHS.+-]*$/.test(body)) throw refuse('an ISO 8601 form not read by vdb');
    throw invalid();
  }
  if (body === '' || body.endsWith('T')) throw invalid();
  const units: Unit[] = ['year', 'month', 'week', 'day', 'hour', 'minute', 'second'];
  units.forEach((unit, k) => {
    const number = designated[k + 1];
    if (number === undefined) return;
    const [whole, fraction] = number.split('.');
    const frac = fraction === undefined ? 0 : Number(`0.${fraction}`) * (number.startsWith('-') ? -1 : 1);
    value.add(unit, BigInt(whole!), frac);
  });
}

/** The value restricted to the fields of `mask` and rounded to `precision` digits, as PostgreSQL's typmod does. */
export function restricted(value: IntervalValue, mask: number, precision: number | null): IntervalValue {
  const truncate = (micros: bigint, unit: bigint) => (micros / unit) * unit;
  let { months, days, micros } = value;
  const drop = (keepDays: boolean) => {
    if (!keepDays) days = 0;
    micros = 0n;
  };
  switch (mask) {
    case FIELD.year:
      months = Math.trunc(months / 12) * 12;
      drop(false);
      break;
    case FIELD.month:
    case FIELD.year | FIELD.month:
      drop(false);
      break;
    case FIELD.day:
      drop(true);
      break;
    case FIELD.hour:
    case FIELD.day | FIELD.hour:
      micros = truncate(micros, USEC.hour);
      break;
    case FIELD.minute:
    case FIELD.hour | FIELD.minute:
    case FIELD.day | FIELD.hour | FIELD.minute:
      micros = truncate(micros, USEC.minute);
      break;
    default:
      break;
  }
  const seconds = mask === FULL_RANGE || (mask & FIELD.second) !== 0;
  if (precision !== null && seconds && precision < 6) {
    const scale = 10n ** BigInt(6 - precision);
    const half = scale / 2n;
    micros = micros >= 0n ? ((micros + half) / scale) * scale : -(((-micros + half) / scale) * scale);
  }
  return { months, days, micros };
}

/**
 * Whether an untyped literal (`x = '1.99 years'`) looks like an interval the engine would read
 * otherwise than PostgreSQL, or read where PostgreSQL fails: a fraction of years (PostgreSQL
 * rounds it to months, the engine truncates), a unit given twice (PostgreSQL fails).
 */
export function untypedIntervalDiffers(text: string): boolean {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  if (!/^\s*@?\s*[+-]?\.?\d/.test(text) || words.length === 0) return false;
  const units = words.filter((word) => word !== 'ago').map((word) => UNITS[word.slice(0, 10)]);
  if (units.some((unit) => unit === undefined)) return false;
  const yearFraction = /\.\d*\s*(y|yr|yrs|years?|decs?|decades?|c|cent|century|centuries|mils?|millennium|millennia)\b/i.test(text);
  return yearFraction || new Set(units).size !== units.length;
}

/** The value as text the engine reads exactly. */
export function engineIntervalText(value: IntervalValue): string {
  return `${value.months} months ${value.days} days ${value.micros} microseconds`;
}
