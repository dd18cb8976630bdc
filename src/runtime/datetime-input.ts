/**
 * PostgreSQL's date and time input (DateStyle ISO, MDY; the session in UTC), read here so that
 * the engine gets an ISO text it reads exactly: 'January 8, 1999', '1/8/1999', '08-Jan-1999',
 * '19990108', 'J2451187', 'epoch', 'allballs', zones by abbreviation or name. 'today', 'tomorrow',
 * 'yesterday' and 'now' become the engine's current date or time, so they are read as the
 * statement runs.
 *
 * Written from PostgreSQL's documented rules (Appendix B, "Interpreting Date/Time Input"): the
 * text is cut into tokens (dates with separators, times with colons, numbers, words, signed
 * offsets); a field of three or more digits is a year, else numbers follow the MDY order; a month
 * may be spelled in any position; two-digit years are 1970-2069. What these rules leave
 * uncertain is refused rather than guessed (a 400 naming the input).
 */
import { badRequest } from '../errors.js';
import { notSupported, rint } from './interval-input.js';

export type DateTimeType = 'date' | 'timestamp' | 'timestamptz' | 'time';

/** What a literal is for the engine: ISO text of the type, or the current date moved by days, or the current time. */
export type DateTimeValue = { kind: 'text'; text: string } | { kind: 'today'; days: number } | { kind: 'now' };

const MONTHS: Record<string, number> = {
  jan: 1,
  january: 1,
  feb: 2,
  february: 2,
  mar: 3,
  march: 3,
  apr: 4,
  april: 4,
  may: 5,
  jun: 6,
  june: 6,
  jul: 7,
  july: 7,
  aug: 8,
  august: 8,
  sep: 9,
  sept: 9,
  september: 9,
  oct: 10,
  october: 10,
  nov: 11,
  november: 11,
  dec: 12,
  december: 12,
};
const WEEKDAYS = new Set('sun sunday mon monday tue tues tuesday wed wednesday thu thur thurs thursday fri friday sat saturday'.split(' '));

/** Zone abbreviations of fixed offsets (seconds east of UTC), each as PostgreSQL's Default set reads it (checked against PostgreSQL in the tests). */
const ZONES: Record<string, number> = {
  utc: 0,
  ut: 0,
  gmt: 0,
  z: 0,
  zulu: 0,
  est: -5 * 3600,
  edt: -4 * 3600,
  cst: -6 * 3600,
  cdt: -5 * 3600,
  mst: -7 * 3600,
  mdt: -6 * 3600,
  pst: -8 * 3600,
  pdt: -7 * 3600,
  cet: 3600,
  cest: 2 * 3600,
  eet: 2 * 3600,
  eest: 3 * 3600,
  wet: 0,
  jst: 9 * 3600,
  hst: -10 * 3600,
};

const SPECIALS = new Set(['epoch', 'infinity', '-infinity', 'now', 'today', 'tomorrow', 'yesterday', 'allballs']);

type Token =
  | { kind: 'date'; text: string; parts: string[] }
  | { kind: 'time'; text: string }
  | { kind: 'number'; text: string }
  | { kind: 'offset'; text: string }
  | { kind: 'word'; text: string }
  | { kind: 'zone'; text: string };

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * `text` read as PostgreSQL reads a value of `type`. Throws PostgreSQL's error for what it
 * fails, and a refusal (400, "not supported") for forms not read here.
 */
export function dateTimeInput(text: string, type: DateTimeType): DateTimeValue {
  const refuse = (why: string) =>
    notSupported(
      `The ${type} input '${text}' (${why})`,
      type === 'time' ? "Write times as 'HH:MM:SS'." : "Write dates as 'YYYY-MM-DD' (and times as 'HH:MM:SS'), e.g. DATE '1999-01-08'.",
    );
  const invalid = () =>
    badRequest(`invalid input syntax for type ${typeLabel(type)}: "${text}"`, 'Write a date or time as PostgreSQL reads it.');
  const outOfRange = () =>
    badRequest(`date/time field value out of range: "${text}"`, 'Months go from 1 to 12, days to the end of their month.');
  const tokens = tokensOf(text.trim(), refuse, invalid);
  if (tokens.length === 0) throw invalid();

  const words = tokens.filter((t) => t.kind === 'word').map((t) => t.text);
  const special = words.find((w) => SPECIALS.has(w));
  if (special) {
    if (tokens.length !== 1) throw refuse(`'${special}' with other fields`);
    return specialValue(special, type, refuse);
  }

  const fields: Fields = { date: {}, time: {}, zone: null, bc: false, meridiem: null, julian: false };
  const errors: Errors = { refuse, invalid, outOfRange };
  readTokens(tokens, fields, errors);
  return valueOf(fields, type, errors);
}

interface Fields {
  date: { year?: number; month?: number; day?: number; twoDigitYear?: boolean; textMonth?: boolean };
  time: { hour?: number; minute?: number; second?: number; micro?: number };
  zone: { offset: number } | { name: string } | null;
  bc: boolean;
  meridiem: 'am' | 'pm' | null;
  julian: boolean;
}

interface Errors {
  refuse: (why: string) => Error;
  invalid: () => Error;
  outOfRange: () => Error;
}

/** A number placed in the date as PostgreSQL's MDY order places it. */
function placeNumber(date: Fields['date'], digits: string, refuse: (why: string) => Error): void {
  const value = Number(digits);
  const hasYear = date.year !== undefined;
  const hasMonth = date.month !== undefined;
  const hasDay = date.day !== undefined;
  const setYear = () => {
    date.year = value;
    date.twoDigitYear = digits.length <= 2;
  };
  if (!hasYear && !hasMonth && !hasDay) {
    if (digits.length >= 3) setYear();
    else date.month = value;
  } else if (hasYear && !hasMonth && !hasDay) date.month = value;
  else if (!hasYear && hasMonth && !hasDay) {
    if (date.textMonth && digits.length >= 3) setYear();
    else date.day = value;
  } else if (hasYear && hasMonth && !hasDay) {
    if (date.textMonth && digits.length >= 3 && date.twoDigitYear) {
      // DD-MON-YYYY: the first number was the day.
      date.day = date.year;
      setYear();
    } else date.day = value;
  } else if (!hasYear && hasMonth && hasDay) setYear();
  else throw refuse('a number after the whole date');
}

/** The tokens read into the fields, left to right. */
function readTokens(tokens: Token[], f: Fields, { refuse, invalid, outOfRange }: Errors): void {
  const { date, time } = f;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    switch (token.kind) {
      case 'date': {
        if (tokens.slice(0, i).some((t) => t.kind === 'word' && WEEKDAYS.has(t.text))) throw refuse("a weekday's name before a date");
        if (date.year !== undefined || date.month !== undefined || date.day !== undefined) throw refuse('two dates');
        const named = token.parts.filter((p) => /[a-z]/.test(p));
        if (named.length > 1 || token.parts.length !== 3) throw refuse('a date of this form');
        for (const part of named) {
          const month = MONTHS[part];
          if (month === undefined) throw invalid();
          date.month = month;
          date.textMonth = true;
        }
        for (const part of token.parts) {
          if (/[a-z]/.test(part)) continue;
          if (!/^\d+$/.test(part)) throw invalid();
          placeNumber(date, part, refuse);
        }
        break;
      }
      case 'number': {
        if (f.julian) {
          if (!/^\d+$/.test(token.text)) throw refuse('a Julian day of this form');
          if (date.year !== undefined || date.month !== undefined || date.day !== undefined) throw invalid();
          const [year, month, day] = fromJulianDay(Number(token.text));
          Object.assign(date, { year, month, day, twoDigitYear: false });
          f.julian = false;
          break;
        }
        if (!/^\d+$/.test(token.text)) throw refuse('a number with a fraction');
        const noDate = date.year === undefined && date.month === undefined && date.day === undefined;
        if (noDate && (token.text.length === 8 || token.text.length === 6) && !date.textMonth) {
          // Concatenated YYYYMMDD or YYMMDD.
          const yearDigits = token.text.length - 4;
          date.year = Number(token.text.slice(0, yearDigits));
          date.twoDigitYear = yearDigits === 2;
          date.month = Number(token.text.slice(yearDigits, yearDigits + 2));
          date.day = Number(token.text.slice(yearDigits + 2));
          break;
        }
        if (token.text.length === 3 && date.year !== undefined && date.month === undefined) throw refuse('a day of the year');
        if (token.text.length > 4 && !noDate) throw refuse('a number of this length');
        placeNumber(date, token.text, refuse);
        break;
      }
      case 'time':
        if (time.hour !== undefined) throw invalid();
        readTime(token.text, time, refuse, outOfRange);
        break;
      case 'offset': {
        if (f.zone) throw refuse('two time zones');
        const parts = /^([+-])(\d{1,2})(?::?(\d{2}))?(?::(\d{2}))?$/.exec(token.text);
        if (!parts) throw refuse('an offset of this form');
        const seconds = Number(parts[2]) * 3600 + Number(parts[3] ?? 0) * 60 + Number(parts[4] ?? 0);
        if (Number(parts[2]) > 15 || Number(parts[3] ?? 0) > 59 || Number(parts[4] ?? 0) > 59) throw refuse('an offset of this size');
        f.zone = { offset: parts[1] === '-' ? -seconds : seconds };
        break;
      }
      case 'zone':
        if (f.zone) throw refuse('two time zones');
        f.zone = { name: token.text };
        break;
      case 'word': {
        const word = token.text;
        if (MONTHS[word] !== undefined) {
          if (date.textMonth) throw invalid();
          if (date.month !== undefined) {
            // A number read as the month was the day (8 January 1999).
            if (date.day !== undefined || date.month < 1 || date.month > 31) throw invalid();
            date.day = date.month;
          }
          date.month = MONTHS[word];
          date.textMonth = true;
        } else if (WEEKDAYS.has(word) || word === 'at' || word === 'on') {
          // A weekday's name is not checked; 'at' and 'on' are noise words.
        } else if (word === 'am' || word === 'pm') {
          if (f.meridiem) throw invalid();
          f.meridiem = word;
        } else if (word === 'bc' || word === 'ad') {
          f.bc = word === 'bc';
        } else if (word === 't') {
          if (tokens[i + 1]?.kind !== 'time') throw refuse("'T' before anything but HH:MM:SS");
        } else if (word === 'j') {
          if (tokens[i + 1]?.kind !== 'number') throw refuse("'J' before anything but a day number");
          f.julian = true;
        } else if (ZONES[word] !== undefined) {
          if (f.zone) throw refuse('two time zones');
          f.zone = { offset: ZONES[word] };
        } else throw refuse(`the word '${word}'`);
        break;
      }
    }
  }
}

/** h:m[:s[.f]] into the time fields. */
function readTime(text: string, time: Fields['time'], refuse: (why: string) => Error, outOfRange: () => Error): void {
  const parts = /^(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?(\.\d+)?$/.exec(text);
  if (!parts || (parts[4] !== undefined && parts[3] === undefined)) throw refuse('a time of this form');
  time.hour = Number(parts[1]);
  time.minute = Number(parts[2]);
  time.second = parts[3] === undefined ? 0 : Number(parts[3]);
  time.micro = parts[4] === undefined ? 0 : rint(Number(`0${parts[4]}`) * 1_000_000);
  if (time.hour > 24 || time.minute > 59 || time.second > 60) throw outOfRange();
  if (time.hour === 24) throw refuse('a time at the end of a day');
}

/** The fields checked and written as the engine reads the type. */
function valueOf(f: Fields, type: DateTimeType, { refuse, invalid, outOfRange }: Errors): DateTimeValue {
  const { date, time, zone, bc, meridiem } = f;
  if (date.year === undefined || date.month === undefined || date.day === undefined) {
    if (type === 'time' && date.year === undefined && date.month === undefined && date.day === undefined) {
      // A time alone.
    } else throw refuse('a date without year, month or day');
  }
  if (type !== 'time') {
    let year = date.year!;
    if (date.twoDigitYear && !bc) year += year >= 70 ? 1900 : 2000;
    if (year === 0 && !date.twoDigitYear) throw outOfRange();
    if (date.month! < 1 || date.month! > 12 || date.day! < 1 || date.day! > daysIn(bc ? 1 - year : year, date.month!)) throw outOfRange();
    if (year > 9999) throw refuse('a year after 9999');
    date.year = year;
  }
  const timeGiven = time.hour !== undefined;
  if (meridiem) {
    time.hour ??= 0;
    time.minute ??= 0;
    time.second ??= 0;
    if (time.hour > 12) throw outOfRange();
    if (meridiem === 'am' && time.hour === 12) time.hour = 0;
    if (meridiem === 'pm' && time.hour < 12) time.hour += 12;
  }
  // The time of day in microseconds: a fraction rounded up or a 60th second carries into the next minute, hour or day.
  const dayMicros = (((time.hour ?? 0) * 60 + (time.minute ?? 0)) * 60 + (time.second ?? 0)) * 1_000_000 + (time.micro ?? 0);
  if (type === 'time') {
    if (!timeGiven) throw invalid();
    if (bc || date.year !== undefined) throw refuse('a date in a time');
    if (zone && 'name' in zone) throw refuse('a time zone name in a time');
    if (dayMicros >= DAY_MICROS) throw refuse('a time at the end of a day');
    return { kind: 'text', text: clockText(dayMicros) };
  }
  if (bc && date.year! <= 0) throw outOfRange();
  // A zone's name is checked where the type ignores the zone, as PostgreSQL does.
  if (zone && 'name' in zone && type !== 'timestamptz') zoneFormat(zone.name, refuse);
  if (type === 'date') return { kind: 'text', text: `${pad(date.year!, 4)}-${pad(date.month!)}-${pad(date.day!)}${bc ? ' (BC)' : ''}` };
  const astronomical = bc ? 1 - date.year! : date.year!;
  let local = utcMillis(astronomical, date.month!, date.day!, 0, 0, 0) + Math.floor(dayMicros / 1_000_000) * 1000;
  if (type === 'timestamptz' && zone) {
    // timestamp with time zone: the instant, written in UTC.
    if ('name' in zone && astronomical < 1) throw refuse('a time zone name before year 1');
    local -= ('offset' in zone ? zone.offset : zoneOffset(zone.name, local, refuse)) * 1000;
  }
  const instant = new Date(local);
  const year = instant.getUTCFullYear();
  if (year < -4712 || year > 9999) throw refuse('a year outside 4713 BC to 9999');
  const day = `${pad(year < 1 ? 1 - year : year, 4)}-${pad(instant.getUTCMonth() + 1)}-${pad(instant.getUTCDate())}${year < 1 ? ' (BC)' : ''}`;
  const seconds = instant.getUTCHours() * 3600 + instant.getUTCMinutes() * 60 + instant.getUTCSeconds();
  const text = `${day} ${clockText(seconds * 1_000_000 + (dayMicros % 1_000_000))}`;
  return { kind: 'text', text: type === 'timestamptz' ? `${text}+00` : text };
}

const DAY_MICROS = 86_400_000_000;

/** HH:MM:SS[.ffffff] of microseconds of a day, the fraction without trailing zeros. */
function clockText(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = micros % 1_000_000;
  const hms = `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`;
  return fraction ? `${hms}.${pad(fraction, 6).replace(/0+$/, '')}` : hms;
}

/** Milliseconds since 1970 of a UTC date and time (Date.UTC would read years 0-99 as 1900-1999). */
function utcMillis(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

function typeLabel(type: DateTimeType): string {
  return type === 'timestamptz' ? 'timestamp with time zone' : type === 'timestamp' ? 'timestamp' : type === 'time' ? 'time' : 'date';
}

function specialValue(word: string, type: DateTimeType, refuse: (why: string) => Error): DateTimeValue {
  if (type === 'time') {
    if (word === 'allballs') return { kind: 'text', text: '00:00:00' };
    throw refuse(`'${word}' as a time`);
  }
  switch (word) {
    case 'epoch':
      return {
        kind: 'text',
        text: type === 'date' ? '1970-01-01' : type === 'timestamp' ? '1970-01-01 00:00:00' : '1970-01-01 00:00:00+00',
      };
    case 'infinity':
    case '-infinity':
      return { kind: 'text', text: word };
    case 'today':
      return { kind: 'today', days: 0 };
    case 'tomorrow':
      return { kind: 'today', days: 1 };
    case 'yesterday':
      return { kind: 'today', days: -1 };
    case 'now':
      return type === 'date' ? { kind: 'today', days: 0 } : { kind: 'now' };
    default:
      throw refuse(`'${word}' as a ${type}`);
  }
}

/** The tokens of the text, as PostgreSQL cuts it. */
function tokensOf(text: string, refuse: (why: string) => Error, invalid: () => Error): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const lower = text.toLowerCase();
  const run = (from: number, allowed: RegExp) => {
    let end = from;
    while (end < lower.length && allowed.test(lower[end]!)) end++;
    return end;
  };
  while (i < lower.length) {
    const c = lower[i]!;
    if (/[\s,]/.test(c)) {
      i++;
      continue;
    }
    if (/[0-9]/.test(c)) {
      const digitsEnd = run(i, /[0-9]/);
      const next = lower[digitsEnd] ?? '';
      if (next === ':') {
        const end = run(digitsEnd, /[0-9:.]/);
        tokens.push({ kind: 'time', text: lower.slice(i, end) });
        i = end;
      } else if (next === '-' || next === '/' || next === '.') {
        // After the first separator: digits only when a digit follows, else letters too (08-jan-1999).
        const letters = /[a-z]/.test(lower[digitsEnd + 1] ?? '') ? 'a-z' : '';
        const end = run(i, new RegExp(`[0-9${letters}${next === '-' ? '\\-' : next === '/' ? '/' : '.'}]`));
        const body = lower.slice(i, end);
        if (next === '.' && /^\d+\.\d+$/.test(body)) tokens.push({ kind: 'number', text: body });
        else tokens.push({ kind: 'date', text: body, parts: body.split(next) });
        i = end;
      } else {
        tokens.push({ kind: 'number', text: lower.slice(i, digitsEnd) });
        i = digitsEnd;
      }
    } else if (c === '+' || c === '-') {
      if (/[a-z]/.test(lower[i + 1] ?? '')) {
        const end = run(i + 1, /[a-z]/);
        tokens.push({ kind: 'word', text: lower.slice(i, end) });
        i = end;
      } else if (/[0-9]/.test(lower[i + 1] ?? '')) {
        const end = run(i + 1, /[0-9:.]/);
        tokens.push({ kind: 'offset', text: lower.slice(i, end) });
        i = end;
      } else throw invalid();
    } else if (/[a-z]/.test(c)) {
      const wordEnd = run(i, /[a-z]/);
      const next = lower[wordEnd] ?? '';
      if (next === '/' || next === '_') {
        // A time zone name (America/New_York), in its own case.
        const end = run(i, /[a-z0-9_/+-]/);
        tokens.push({ kind: 'zone', text: text.slice(i, end) });
        i = end;
      } else if ((next === '-' || next === '.') && /[0-9a-z]/.test(lower[wordEnd + 1] ?? '')) {
        const end = run(i, next === '-' ? /[0-9a-z-]/ : /[0-9a-z.]/);
        const body = lower.slice(i, end);
        tokens.push({ kind: 'date', text: body, parts: body.split(next) });
        i = end;
      } else {
        tokens.push({ kind: 'word', text: lower.slice(i, wordEnd) });
        i = wordEnd;
      }
    } else throw refuse(`the character '${c}'`);
  }
  return tokens;
}

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/** The proleptic Gregorian date of a Julian day number (day 2451545 is 2000-01-01). */
function fromJulianDay(julianDay: number): [number, number, number] {
  const days = julianDay - 2440588;
  const date = new Date(0);
  date.setUTCDate(date.getUTCDate() + days);
  return [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
}

/**
 * The offset (seconds east of UTC) of a zone named as in the IANA database at the local time
 * `local` (milliseconds as if UTC); refused where the local time is skipped or repeated.
 */
function zoneOffset(name: string, local: number, refuse: (why: string) => Error): number {
  const format = zoneFormat(name, refuse);
  const offsetAt = (instant: number) => {
    const parts = Object.fromEntries(format.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
    const asUtc = utcMillis(
      Number(parts.year),
      Number(parts.month),
      Number(parts.day),
      Number(parts.hour),
      Number(parts.minute),
      Number(parts.second),
    );
    return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 1000);
  };
  // The offsets a day either side: the local time must map to exactly one instant.
  const candidates = new Set([offsetAt(local - 86_400_000), offsetAt(local + 86_400_000), offsetAt(local)]);
  const fitting = [...candidates].filter((offset) => offsetAt(local - offset * 1000) === offset);
  if (fitting.length !== 1) throw refuse(`a local time that '${name}' skips or repeats`);
  return fitting[0]!;
}

/** A formatter of the zone named as in the IANA database; an unknown name is refused. */
function zoneFormat(name: string, refuse: (why: string) => Error): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw refuse(`the time zone '${name}'`);
  }
}
