/**
 * Recognizing a statement by its text, before it is parsed: `... WHERE id = 17` and
 * `... WHERE id = 18` are one statement text with another constant. A small lexer lifts the
 * plain numeric and string literals out of the text (each replaced by a marker of its kind) and
 * counts the `$n` placeholders; anything it cannot read with certainty (comments, E'' and
 * dollar-quoted strings, escapes, numbers in other notations, characters outside ASCII outside
 * quotes) makes it give up, and the statement takes the full path.
 *
 * The engine links such a text to the statement's template (engine.ts) only after checking that
 * the constants of the parsed statement are exactly the lifted literals and the parameters'
 * values, each in its own place (`learnSlots`), also for a second set of values (`variantText`).
 */
import { randomInt } from 'node:crypto';

/** A literal lifted out of the text: as the deparser writes it, and its kind (the kind of A_Const it parses to). */
export interface LiftedLiteral {
  text: string;
  kind: string;
  /** Where it stands in the text. */
  start: number;
  end: number;
}

export interface LiftedText {
  /** The text with each lifted literal replaced by a marker of its kind. */
  key: string;
  literals: LiftedLiteral[];
  /** How many times each `$n` occurs, by n. */
  placeholders: Map<number, number>;
}

const INT4_MAX = '2147483647';
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isWordStart = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
const isWordPart = (c: string | undefined) => isWordStart(c) || isDigit(c) || c === '$';
/** What may stand before a string literal that is lifted: nothing that would make it E'', B'', U&'' or part of a word. */
const BEFORE_STRING = new Set([undefined, ' ', '\t', '\n', '\r', '(', ',', '=', '<', '>', '!', '|', '+', '-', '*', '/', '%', '[']);
/** Punctuation passed through as it is (whatever else is outside ASCII's printable range or not listed: give up). */
const PUNCTUATION = new Set([...'()[],;:.=<>!|+-*/%^&~@#?{}']);

/** The kind of an unsigned integer literal: an int4 (ival) or, larger, a numeral (fval). */
function integerKind(digits: string): string {
  const fits = digits.length < INT4_MAX.length || (digits.length === INT4_MAX.length && digits <= INT4_MAX);
  return fits ? 'i' : `f${digits.length}`;
}

/** The statement text with its plain literals lifted out; null where the lexer is not sure of what it reads. */
export function liftLiterals(sql: string): LiftedText | null {
  const literals: LiftedLiteral[] = [];
  const placeholders = new Map<number, number>();
  // The key: the text up to `copied` with the literals replaced, the rest copied at the end.
  let key = '';
  let copied = 0;
  let i = 0;
  const n = sql.length;
  /** The last character before `at` that is not white space. */
  const previousSignificant = (at: number) => {
    let j = at - 1;
    while (j >= 0 && (sql[j] === ' ' || sql[j] === '\t' || sql[j] === '\n' || sql[j] === '\r')) j--;
    return j >= 0 ? sql[j] : undefined;
  };
  while (i < n) {
    const c = sql[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (isWordStart(c)) {
      while (i < n && isWordPart(sql[i])) i++;
      // E'...', B'...', X'...', N'...', or a word run into a string: not a plain literal.
      if (sql[i] === "'") return null;
    } else if (isDigit(c)) {
      const start = i;
      while (isDigit(sql[i])) i++;
      let kind = integerKind(sql.slice(start, i));
      if (sql[i] === '.' && isDigit(sql[i + 1])) {
        const point = i;
        i++;
        while (isDigit(sql[i])) i++;
        kind = `f${point - start}.${i - point - 1}`;
      }
      // 1e5, 1., 0x1F, 1_000, 5abc: other notations.
      if (isWordPart(sql[i]) || sql[i] === '.') return null;
      const text = sql.slice(start, i);
      // 007 parses as 7; and a sign before a number may be folded into it by the parser: kept as written.
      const signed = previousSignificant(start);
      if ((text.length > 1 && text[0] === '0' && text[1] !== '.') || signed === '-' || signed === '+') continue;
      literals.push({ text, kind, start, end: i });
      key += `${sql.slice(copied, start)}\u0001${kind}\u0001`;
      copied = i;
    } else if (c === "'") {
      if (!BEFORE_STRING.has(sql[i - 1])) return null;
      const start = i;
      const close = sql.indexOf("'", i + 1);
      if (close < 0) return null;
      const content = sql.slice(i + 1, close);
      // Escapes ('' or a backslash) and a string continued on the next line are left to the parser.
      if (content.includes('\\') || sql[close + 1] === "'") return null;
      let after = close + 1;
      while (after < n && (sql[after] === ' ' || sql[after] === '\t' || sql[after] === '\n' || sql[after] === '\r')) after++;
      if (sql[after] === "'") return null;
      for (const ch of content) if (ch < ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') return null;
      i = close + 1;
      literals.push({ text: sql.slice(start, i), kind: 's', start, end: i });
      key += `${sql.slice(copied, start)}\u0001s\u0001`;
      copied = i;
    } else if (c === '"') {
      // A quoted identifier, kept as written ("" inside is a quote).
      let close = i + 1;
      for (;;) {
        close = sql.indexOf('"', close);
        if (close < 0) return null;
        if (sql[close + 1] !== '"') break;
        close += 2;
      }
      for (let j = i; j <= close; j++) if (sql[j]! < ' ') return null;
      i = close + 1;
    } else if (c === '$') {
      // $1, $2, ...: a dollar-quoted string ($$, $tag$) is not read here.
      const start = i + 1;
      i++;
      while (isDigit(sql[i])) i++;
      if (i === start || isWordPart(sql[i])) return null;
      const number = Number(sql.slice(start, i));
      placeholders.set(number, (placeholders.get(number) ?? 0) + 1);
    } else if (PUNCTUATION.has(c)) {
      // Comments, and numbers written from the point (.5).
      if ((c === '-' && sql[i + 1] === '-') || (c === '/' && sql[i + 1] === '*') || (c === '.' && isDigit(sql[i + 1]))) return null;
      i++;
    } else {
      return null;
    }
  }
  return { key: key + sql.slice(copied), literals, placeholders };
}

/**
 * Where each constant of a parsed statement (in walk order) comes from: the index of the value
 * (lifted literals, then parameters) it is, or its own text where it is written in the
 * statement's key (a number after a sign, a constant the grammar makes).
 */
export type Slot = number | string;

/**
 * The slots of `constants` over `values`, each value occurring `occurrences[i]` times among the
 * constants; null when a value is ambiguous (two values alike) or not where it must be.
 */
export function learnSlots(constants: readonly string[], values: readonly string[], occurrences: readonly number[]): Slot[] | null {
  const index = new Map<string, number>();
  for (const [i, value] of values.entries()) {
    if (index.has(value)) return null;
    index.set(value, i);
  }
  const seen = values.map(() => 0);
  const slots = constants.map((constant): Slot => {
    const i = index.get(constant);
    if (i === undefined) return constant;
    seen[i]!++;
    return i;
  });
  return seen.every((count, i) => count === occurrences[i]) ? slots : null;
}

/** The constants a statement of the slots' text has, with these values. */
export const slotConstants = (slots: readonly Slot[], values: readonly string[]): string[] =>
  slots.map((slot) => (typeof slot === 'number' ? values[slot]! : slot));

/**
 * Another value of the same kind for each value, unlike any of them: the statement is parsed
 * again with these, to check that its constants follow the values and depend on nothing else.
 * Kinds: `i` int4, `f<digits>` or `f<digits>.<digits>` a numeral, `s` a string, `b` a boolean.
 */
export function variantValues(kinds: readonly string[], values: readonly string[]): string[] | null {
  const taken = new Set(values);
  const variants: string[] = [];
  const booleans = kinds.filter((k) => k === 'b').length;
  for (const [i, marker] of kinds.entries()) {
    let variant: string | null = null;
    if (marker === 'b') {
      // Two booleans at most can differ; each is turned over.
      if (booleans > 2) return null;
      variant = values[i] === 'true' ? 'false' : 'true';
    } else {
      for (let attempt = 0; attempt < 20 && variant === null; attempt++) {
        const candidate = candidateOf(marker, randomInt(1, 1_000_000_000));
        if (candidate !== null && !taken.has(candidate)) variant = candidate;
      }
    }
    if (variant === null) return null;
    taken.add(variant);
    variants.push(variant);
  }
  return new Set(variants).size === variants.length ? variants : null;
}

function candidateOf(marker: string, seed: number): string | null {
  // `count` digits of the seed; the first not 0 (007 would be read as 7), and the last not 0
  // where it ends a fraction (a parameter's 1.50 is the number 1.5).
  const digits = (count: number, first: boolean, last: boolean) => {
    let text = String(seed).padStart(count, '7').slice(-count);
    if (first && text[0] === '0') text = `7${text.slice(1)}`;
    if (last && text.endsWith('0')) text = `${text.slice(0, -1)}3`;
    return text;
  };
  if (marker === 'i') return String(seed);
  if (marker === 's') return `'vdb variant ${seed}'`;
  const numeral = /^f(\d+)(?:\.(\d+))?$/.exec(marker);
  if (!numeral) return null;
  const whole = Number(numeral[1]);
  if (numeral[2] !== undefined) return `${digits(whole, true, false)}.${digits(Number(numeral[2]), false, true)}`;
  // An integer beyond int4: as many digits, still beyond it.
  if (whole < INT4_MAX.length) return null;
  const text = `9${digits(whole - 1, false, false)}`;
  return integerKind(text) === marker ? text : null;
}

/** The kind of a constant as the deparser writes it (see `variantValues`); null for any other. */
export function kindOfText(text: string): string | null {
  if (text === 'true' || text === 'false') return 'b';
  if (/^\d+$/.test(text)) return integerKind(text);
  const decimal = /^(\d+)\.(\d+)$/.exec(text);
  if (decimal) return `f${decimal[1]!.length}.${decimal[2]!.length}`;
  return text.length >= 2 && text.startsWith("'") && text.endsWith("'") ? 's' : null;
}
