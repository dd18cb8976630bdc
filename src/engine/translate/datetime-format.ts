/**
 * PostgreSQL's date/time template patterns (to_char, to_date, to_timestamp) in the engine's
 * terms: each pattern of a constant template becomes a piece written with the engine's strftime
 * (or read with its strptime). A template with a pattern not listed here is refused by the
 * caller rather than read otherwise. PostgreSQL's documentation, "Template Patterns for
 * Date/Time Formatting", is the reference.
 */
import type { Node } from '@pgsql/types';
import { call, cast, int, op, stringConst } from '../tree/syntax-nodes.js';

/** How one pattern is written: a strftime format, or an expression over the value. */
type Piece = { strftime: string } | { build: (value: Node) => Node };

const strf = (format: string): Piece => ({ strftime: format });
const padded = (format: string, width: number, change?: 'upper' | 'lower'): Piece => ({
  build: (value) => cased(call('rpad', [call('strftime', [value, stringConst(format)]), int(width), stringConst(' ')]), change),
});
const named = (format: string, change?: 'upper' | 'lower'): Piece => ({
  build: (value) => cased(call('strftime', [value, stringConst(format)]), change),
});
const cased = (node: Node, change?: 'upper' | 'lower'): Node => (change ? call(change, [node]) : node);
const part = (field: string, width: number): Piece => ({
  build: (value) => call('lpad', [cast(call('date_part', [stringConst(field), value]), 'varchar'), int(width), stringConst('0')]),
});

/** Patterns, longest first where one begins another (HH24 before HH, DDD before DD before D). */
const PATTERNS: Array<[string, Piece]> = [
  ['HH24', strf('%H')],
  ['HH12', strf('%I')],
  ['HH', strf('%I')],
  ['MI', strf('%M')],
  ['SS', strf('%S')],
  ['MS', strf('%g')],
  ['US', strf('%f')],
  ['AM', named('%p')],
  ['PM', named('%p')],
  ['am', named('%p', 'lower')],
  ['pm', named('%p', 'lower')],
  ['YYYY', strf('%Y')],
  ['YYY', { build: (value) => call('right', [call('strftime', [value, stringConst('%Y')]), int(3)]) }],
  ['YY', strf('%y')],
  ['Y', { build: (value) => call('right', [call('strftime', [value, stringConst('%Y')]), int(1)]) }],
  ['MONTH', padded('%B', 9, 'upper')],
  ['Month', padded('%B', 9)],
  ['month', padded('%B', 9, 'lower')],
  ['MON', named('%b', 'upper')],
  ['Mon', strf('%b')],
  ['mon', named('%b', 'lower')],
  ['MM', strf('%m')],
  ['DAY', padded('%A', 9, 'upper')],
  ['Day', padded('%A', 9)],
  ['day', padded('%A', 9, 'lower')],
  ['DY', named('%a', 'upper')],
  ['Dy', strf('%a')],
  ['dy', named('%a', 'lower')],
  ['DDD', strf('%j')],
  ['DD', strf('%d')],
  ['D', { build: (value) => cast(op('+', call('date_part', [stringConst('dow'), value]), int(1)), 'varchar') }],
  ['IYYY', strf('%G')],
  ['IW', strf('%V')],
  ['ID', strf('%u')],
  ['CC', part('century', 2)],
  ['Q', part('quarter', 1)],
];

/** Patterns of numbers, which take an ordinal suffix (DDth). */
const NUMBERS = new Set(['HH24', 'HH12', 'HH', 'MI', 'SS', 'YYYY', 'YYY', 'YY', 'Y', 'MM', 'DDD', 'DD', 'D', 'IW', 'ID', 'CC', 'Q']);

/** st, nd, rd or th for n (11th to 13th), upper case for TH. */
function ordinalSuffix(n: Node, suffix: 'th' | 'TH'): Node {
  const lastTwo = call('mod', [n, int(100)]);
  const last = call('mod', [n, int(10)]);
  const when = (condition: Node, text: string): Node => ({
    CaseWhen: { expr: condition, result: stringConst(suffix === 'TH' ? text.toUpperCase() : text) },
  });
  const teens: Node = {
    A_Expr: {
      kind: 'AEXPR_BETWEEN',
      name: [{ String: { sval: 'BETWEEN' } }],
      lexpr: lastTwo,
      rexpr: { List: { items: [int(11), int(13)] } },
    },
  };
  return {
    CaseExpr: {
      args: [when(teens, 'th'), when(op('=', last, int(1)), 'st'), when(op('=', last, int(2)), 'nd'), when(op('=', last, int(3)), 'rd')],
      defresult: stringConst(suffix === 'TH' ? 'TH' : 'th'),
    },
  };
}

/** Month and day names: FM drops their padding, as it drops leading zeros of numbers. */
const FILL_MODE_NAMES: Record<string, Piece> = {
  MONTH: named('%B', 'upper'),
  Month: strf('%B'),
  month: named('%B', 'lower'),
  DAY: named('%A', 'upper'),
  Day: strf('%A'),
  day: named('%A', 'lower'),
};

/** Patterns PostgreSQL has that are not translated: a template using one is refused. */
const UNTRANSLATED =
  /^(Y,YYY|IYY|IY|I|TZH|TZM|TZ|tz|OF|SSSSS?|FF[1-6]|J|W|WW|RM|rm|BC|bc|B\.C\.|b\.c\.|AD|ad|A\.D\.|a\.d\.|A\.M\.|a\.m\.|P\.M\.|p\.m\.|TH|th|FX|SP|TM)/;

type Token = { literal: string } | { pattern: string; fill: boolean; suffix?: 'th' | 'TH' };

/** The template split into patterns and literal text, or null when it uses an untranslated pattern. */
function tokenize(template: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < template.length) {
    const rest = template.slice(i);
    if (rest.startsWith('"')) {
      const end = rest.indexOf('"', 1);
      if (end < 0) return null;
      tokens.push({ literal: rest.slice(1, end) });
      i += end + 1;
      continue;
    }
    const fill = rest.startsWith('FM');
    const body = fill ? rest.slice(2) : rest;
    const found = PATTERNS.find(([name]) => body.startsWith(name));
    // A longer pattern that is not translated (YYY beside YY, SSSS beside SS): refused.
    const untranslated = UNTRANSLATED.exec(body)?.[0].length ?? 0;
    if (untranslated > (found?.[0].length ?? 0)) return null;
    if (found) {
      // TH/th after a number: its ordinal suffix (5th, 1ST).
      const after = body.slice(found[0].length, found[0].length + 2);
      const suffix = after === 'th' || after === 'TH' ? after : undefined;
      tokens.push({ pattern: found[0], fill, suffix });
      i += (fill ? 2 : 0) + found[0].length + (suffix ? 2 : 0);
      continue;
    }
    tokens.push({ literal: rest[0]! });
    i += 1;
  }
  return tokens;
}

/**
 * to_char(value, template) for a date or timestamp value and a constant template: the text
 * PostgreSQL writes, as one concatenation; null when the template has a pattern not translated.
 */
export function dateTimeText(value: Node, template: string): Node | null {
  const tokens = tokenize(template);
  if (!tokens) return null;
  const pieces: Node[] = [];
  let format = '';
  const flush = () => {
    if (format) pieces.push(call('strftime', [value, stringConst(format)]));
    format = '';
  };
  for (const token of tokens) {
    if ('literal' in token) {
      format += token.literal.replace(/%/g, '%%');
      continue;
    }
    const piece = (token.fill && FILL_MODE_NAMES[token.pattern]) || PATTERNS.find(([name]) => name === token.pattern)![1];
    if (token.suffix) {
      if (!NUMBERS.has(token.pattern)) return null;
      flush();
      const digits = 'strftime' in piece ? call('strftime', [value, stringConst(piece.strftime)]) : piece.build(value);
      const shown = token.fill ? cast(cast(digits, 'int8'), 'varchar') : digits;
      pieces.push(shown, ordinalSuffix(cast(digits, 'int8'), token.suffix));
      continue;
    }
    if (token.fill && !FILL_MODE_NAMES[token.pattern]) {
      // FM on a number: no leading zeros.
      flush();
      const digits = 'strftime' in piece ? call('strftime', [value, stringConst(piece.strftime)]) : piece.build(value);
      pieces.push(cast(cast(digits, 'int8'), 'varchar'));
      continue;
    }
    if ('strftime' in piece) {
      format += piece.strftime;
      continue;
    }
    flush();
    pieces.push(piece.build(value));
  }
  flush();
  if (pieces.length === 0) return stringConst('');
  return pieces.length === 1 ? pieces[0]! : call('concat', pieces);
}

/** strptime's format for to_date/to_timestamp's template, or null when it cannot be read alike. */
export function dateTimeParse(template: string): string | null {
  const tokens = tokenize(template);
  if (!tokens) return null;
  let format = '';
  for (const token of tokens) {
    if ('literal' in token) {
      format += token.literal.replace(/%/g, '%%');
      continue;
    }
    const name = token.pattern;
    if (token.suffix) return null;
    const piece = PATTERNS.find(([p]) => p === name)![1];
    // Names are read whatever their case; numbers with or without leading zeros.
    const reading: Record<string, string> = {
      MONTH: '%B',
      Month: '%B',
      month: '%B',
      MON: '%b',
      Mon: '%b',
      mon: '%b',
      DAY: '%A',
      Day: '%A',
      day: '%A',
      DY: '%a',
      Dy: '%a',
      dy: '%a',
      AM: '%p',
      PM: '%p',
      am: '%p',
      pm: '%p',
    };
    if (reading[name]) format += reading[name];
    else if ('strftime' in piece && !['%G', '%V', '%u'].includes(piece.strftime)) format += piece.strftime;
    else return null;
  }
  return format;
}
