/**
 * PostgreSQL's regular expressions (ARE) where the engine's (RE2) finds the same matches: for the
 * functions whose answer depends on which match is found (regexp_replace, regexp_split_to_array).
 * PostgreSQL takes the longest match at the leftmost position (for greedy expressions), RE2 the
 * first its preferences reach (`'ab'` with `a|ab`: PostgreSQL `ab`, RE2 `a`). They agree when,
 * from any start, the match is determined character by character: no alternation, quantifiers
 * only on single characters or classes, and each quantified one disjoint from whatever may follow
 * it. Escapes are written with PostgreSQL's meaning (its \s holds U+1680, U+2000..., \v; its \d
 * only 0-9); \w (letters of its locale), word boundaries, back-references, lookarounds, named
 * classes and lazy quantifiers are refused. The result is RE2's text of the same expression.
 */
import { notAsPostgres } from '../tree/syntax-nodes.js';

type Ranges = Array<[number, number]>;

/** A set of characters: the ranges, or (negated) everything but them. */
interface CharSet {
  negated: boolean;
  ranges: Ranges;
}

interface Atom {
  set: CharSet;
  min: number;
  max: number;
}

/** What PostgreSQL's \s matches (iswspace of its C.UTF-8 locale). */
const SPACES: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0x1680, 0x1680],
  [0x2000, 0x2006],
  [0x2008, 0x200a],
  [0x2028, 0x2029],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];
const DIGITS: Ranges = [[0x30, 0x39]];

const refuse = (what: string) =>
  notAsPostgres(
    `${what} in a regular expression of regexp_replace or regexp_split_to_array`,
    'The engine chooses among matches otherwise than PostgreSQL there: write the expression without alternatives (|), with quantifiers on single characters or classes only, each distinct from what follows it (as in \\s*,\\s*), and without \\w, \\b, back-references or lookarounds.',
  );

const hex = (code: number) => `\\x{${code.toString(16)}}`;
const classText = (set: CharSet) =>
  `[${set.negated ? '^' : ''}${set.ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('')}]`;

/** The ranges merged and sorted. */
function merged(ranges: Ranges): Ranges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** With the other case of ASCII letters too (the 'i' flag). */
function caseClosed(set: CharSet): CharSet {
  const extra: Ranges = [];
  for (const [a, b] of set.ranges) {
    for (const [lo, hi, shift] of [
      [0x41, 0x5a, 0x20],
      [0x61, 0x7a, -0x20],
    ] as const) {
      const from = Math.max(a, lo);
      const to = Math.min(b, hi);
      if (from <= to) extra.push([from + shift, to + shift]);
    }
  }
  // A negated set keeps its case partners out only if both are out: treated as everything.
  return set.negated ? { negated: true, ranges: [] } : { negated: false, ranges: merged([...set.ranges, ...extra]) };
}

const covered = (ranges: Ranges, [a, b]: [number, number]): boolean => {
  let next = a;
  for (const [lo, hi] of merged(ranges)) {
    if (lo > next) break;
    if (hi >= next) next = hi + 1;
    if (next > b) return true;
  }
  return next > b;
};

/** Whether two sets share a character. */
function overlap(x: CharSet, y: CharSet): boolean {
  if (x.negated && y.negated) return true;
  if (!x.negated && !y.negated) return x.ranges.some(([a, b]) => y.ranges.some(([c, d]) => a <= d && c <= b));
  const [negative, positive] = x.negated ? [x, y] : [y, x];
  return positive.ranges.some((range) => !covered(negative.ranges, range));
}

/** A bracket expression from chars[start] ('['): its set and the index of its ']'. */
function bracket(chars: string[], start: number): { set: CharSet; end: number } {
  let i = start + 1;
  const negated = chars[i] === '^';
  if (negated) i++;
  const members: number[] = [];
  const ranges: Ranges = [];
  for (; i < chars.length; i++) {
    let c = chars[i]!;
    if (c === ']' && (members.length > 0 || ranges.length > 0))
      return { set: { negated, ranges: merged([...ranges, ...members.map((m): [number, number] => [m, m])]) }, end: i };
    if (c === '[') throw refuse('A class name, equivalence class or [ inside brackets');
    if (c === '\\') {
      c = chars[++i] ?? '';
      if (!/^[^A-Za-z0-9]$/.test(c)) throw refuse(`The escape \\${c} inside brackets`);
    }
    const code = c.codePointAt(0)!;
    if (chars[i + 1] === '-' && chars[i + 2] !== undefined && chars[i + 2] !== ']') {
      const to = chars[i + 2]!;
      if (to === '\\' || to === '[') throw refuse('A range ending in an escape');
      if (to.codePointAt(0)! < code) throw refuse('An invalid range');
      ranges.push([code, to.codePointAt(0)!]);
      i += 2;
      continue;
    }
    members.push(code);
  }
  throw refuse('An unbalanced [');
}

/** RE2's text of PostgreSQL's `pattern`, which both match alike; refuses the others. */
export function sameMatchRegex(pattern: string, caseInsensitive: boolean): string {
  return sameMatches(pattern, caseInsensitive).regex;
}

/** Whether `pattern` (one sameMatchRegex takes) may match the empty text, and also more. */
export function matchesEmptyAndMore(pattern: string, caseInsensitive: boolean): boolean {
  return sameMatches(pattern, caseInsensitive).empty;
}

/**
 * What regexp_matches needs of `pattern` (one sameMatchRegex takes): RE2's text, whether it may
 * match the empty text, and its number of capturing groups.
 */
export function matchShape(pattern: string, caseInsensitive: boolean): { regex: string; mayBeEmpty: boolean; groups: number } {
  const { regex, empty, atoms, groups } = sameMatches(pattern, caseInsensitive);
  return { regex, mayBeEmpty: empty || atoms.every((atom) => atom.min === 0), groups };
}

function sameMatches(pattern: string, caseInsensitive: boolean): { regex: string; empty: boolean; atoms: Atom[]; groups: number } {
  const chars = [...pattern];
  if (caseInsensitive && chars.some((ch) => ch.codePointAt(0)! > 0x7f)) throw refuse('A character other than ASCII under the i flag');
  const atoms: Atom[] = [];
  let out = '';
  let depth = 0;
  let groups = 0;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    let set: CharSet | null = null;
    let text = '';
    if (c === '\\') {
      const e = chars[++i] ?? '';
      const escapes: Record<string, CharSet> = {
        d: { negated: false, ranges: DIGITS },
        D: { negated: true, ranges: DIGITS },
        s: { negated: false, ranges: SPACES },
        S: { negated: true, ranges: SPACES },
      };
      const controls: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
      if (escapes[e]) set = escapes[e]!;
      else if (controls[e] !== undefined) set = { negated: false, ranges: [[controls[e]!, controls[e]!]] };
      else if (/^[^A-Za-z0-9]$/.test(e)) set = { negated: false, ranges: [[e.codePointAt(0)!, e.codePointAt(0)!]] };
      else throw refuse(`The escape \\${e}`);
      text = classText(set);
    } else if (c === '.') {
      set = { negated: true, ranges: [] };
      text = '.';
    } else if (c === '[') {
      const parsed = bracket(chars, i);
      set = parsed.set;
      text = classText(set);
      i = parsed.end;
    } else if (c === '(') {
      if (chars[i + 1] === '?') {
        if (chars[i + 2] !== ':') throw refuse('A lookaround or option group');
        i += 2;
        out += '(?:';
      } else {
        out += '(';
        groups++;
      }
      depth++;
      continue;
    } else if (c === ')') {
      if (depth === 0) throw refuse('An unbalanced )');
      depth--;
      if (/^[*+?{]$/.test(chars[i + 1] ?? '')) throw refuse('A quantified group');
      out += ')';
      continue;
    } else if (c === '|') throw refuse('An alternative (|)');
    else if (c === '^') {
      if (i !== 0) throw refuse('A ^ after the start');
      out += '^';
      continue;
    } else if (c === '$') {
      if (i !== chars.length - 1) throw refuse('A $ before the end');
      out += '$';
      continue;
    } else if (c === '*' || c === '+' || c === '?' || (c === '{' && /[0-9]/.test(chars[i + 1] ?? ''))) {
      throw refuse('A quantifier without a character before it');
    } else {
      set = { negated: false, ranges: [[c.codePointAt(0)!, c.codePointAt(0)!]] };
      text = /[A-Za-z0-9]/.test(c) || c.codePointAt(0)! > 0x7f ? c : hex(c.codePointAt(0)!);
    }
    // Its quantifier, if any.
    let min = 1;
    let max = 1;
    const next = chars[i + 1];
    if (next === '*' || next === '+' || next === '?') {
      [min, max] = next === '*' ? [0, Infinity] : next === '+' ? [1, Infinity] : [0, 1];
      text += next;
      i++;
    } else if (next === '{' && /[0-9]/.test(chars[i + 2] ?? '')) {
      const bound = /^\{(\d{1,3})(,(\d{0,3}))?\}/.exec(chars.slice(i + 1, i + 10).join(''));
      if (!bound) throw refuse('A malformed bound {m,n}');
      min = Number(bound[1]);
      max = bound[2] === undefined ? min : bound[3] === '' ? Infinity : Number(bound[3]);
      if (min > 255 || max < min || (max !== Infinity && max > 255)) throw refuse('A bound over 255 or reversed');
      text += bound[0];
      i += bound[0].length;
    }
    if (/^[*+?{]$/.test(chars[i + 1] ?? '') && min !== max) throw refuse('A lazy or repeated quantifier');
    if (/^[*+?]$/.test(chars[i + 1] ?? '')) throw refuse('A repeated quantifier');
    atoms.push({ set: caseInsensitive ? caseClosed(set) : set, min, max });
    out += text;
  }
  if (depth !== 0) throw refuse('An unbalanced (');
  // Each quantified atom distinct from what may come next (up to the first atom that must).
  atoms.forEach((atom, i) => {
    if (atom.min === atom.max) return;
    for (const later of atoms.slice(i + 1)) {
      if (overlap(atom.set, later.set)) throw refuse('A quantified character that may also be the next one');
      if (later.min > 0) break;
    }
  });
  return { regex: out, empty: atoms.every((atom) => atom.min === 0) && atoms.some((atom) => atom.max > 0), atoms, groups };
}

const refuseOperator = (what: string) =>
  notAsPostgres(
    `${what} in a regular expression of ~, ~*, !~ or !~*`,
    'PostgreSQL reads it otherwise than the engine (RE2): write the characters it stands for, as a class ([0-9], [a-z]), or escape the character.',
  );

/**
 * RE2's text of PostgreSQL's `pattern` for a match test (`~` and kin), where only whether a match
 * exists counts: alternatives and quantifiers of any kind read alike. The escapes are written
 * with PostgreSQL's meaning (\s, \d; \b is a backspace there, a word boundary in RE2);
 * escapes RE2 reads otherwise or lacks (\w, \y, \m, \M, \A, \Z, back-references), lookarounds,
 * named classes and malformed bounds are refused.
 */
export function matchTestRegex(pattern: string): string {
  const chars = [...pattern];
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\') {
      const e = chars[++i] ?? '';
      const escapes: Record<string, CharSet> = {
        d: { negated: false, ranges: DIGITS },
        D: { negated: true, ranges: DIGITS },
        s: { negated: false, ranges: SPACES },
        S: { negated: true, ranges: SPACES },
      };
      const controls: Record<string, number> = { b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };
      if (escapes[e]) out += classText(escapes[e]!);
      else if (controls[e] !== undefined) out += hex(controls[e]!);
      else if (/^[^A-Za-z0-9]$/.test(e)) out += hex(e.codePointAt(0)!);
      else throw refuseOperator(`The escape \\${e}`);
    } else if (c === '[') {
      let parsed: { set: CharSet; end: number };
      try {
        parsed = bracket(chars, i);
      } catch {
        throw refuseOperator('A bracket expression with a class name, an escape of a letter or an invalid range');
      }
      out += classText(parsed.set);
      i = parsed.end;
    } else if (c === '(' && chars[i + 1] === '?') {
      if (chars[i + 2] !== ':') throw refuseOperator('A lookaround or option group');
      out += '(?:';
      i += 2;
    } else if (c === '{' && /[0-9]/.test(chars[i + 1] ?? '')) {
      const bound = /^\{(\d{1,3})(,(\d{0,3}))?\}/.exec(chars.slice(i, i + 9).join(''));
      const min = bound ? Number(bound[1]) : NaN;
      const max = bound?.[2] === undefined ? min : bound[3] === '' ? Infinity : Number(bound[3]);
      if (!bound || min > 255 || max < min || (max !== Infinity && max > 255)) throw refuseOperator('A malformed bound {m,n}');
      out += bound[0];
      i += bound[0].length - 1;
    } else if ('().|*+?^$'.includes(c)) out += c;
    else out += /[A-Za-z0-9]/.test(c) || c.codePointAt(0)! > 0x7f ? c : hex(c.codePointAt(0)!);
  }
  return out;
}
