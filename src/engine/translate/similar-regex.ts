/**
 * PostgreSQL's SQL regular expressions (SIMILAR TO, SUBSTRING ... SIMILAR ... ESCAPE) as regular
 * expressions of the engine (RE2) with the same meaning. PostgreSQL rewrites the pattern into its
 * own regular-expression dialect (similar_escape_internal in regexp.c: % is .*, _ is ., ( is a
 * non-capturing group, \ . ^ $ are literal, the rest passes through); this reads the pattern the
 * same way and writes each piece in RE2's terms, checking what PostgreSQL's dialect would reject.
 * What RE2 would read otherwise (escaped letters such as \d or \w, named classes such as
 * [[:alpha:]], collating elements) is refused: their meaning in PostgreSQL depends on its locale.
 */
import { badRequest } from '../../errors.js';
import { notAsPostgres } from '../tree/syntax-nodes.js';

/** The pattern in RE2's terms. */
export interface SimilarRegex {
  /**
   * The whole, built as PostgreSQL builds it (`^(?:` ... `)$`, the separators as its groups): a
   * search for it means what PostgreSQL's does, also where the pattern's own parentheses close
   * PostgreSQL's wrapping group (`')a('` is `^(?:)a(?:)$`).
   */
  whole: string;
  /** The pieces between the escape-double-quote separators (1 to 3), each of balanced parentheses; null where they are not. */
  parts: string[] | null;
}

const invalid = (why: string) => badRequest(`invalid regular expression: ${why}`);

/** RE2's text for one literal character. */
function literal(char: string): string {
  const code = char.codePointAt(0)!;
  if (/[A-Za-z0-9]/.test(char) || code > 0x7f) return char;
  return `\\x{${code.toString(16)}}`;
}

/** Whether a piece written so far ends with something a quantifier may follow. */
type Last = 'start' | 'atom' | 'quantifier' | 'lazy';

/**
 * The pattern `pattern` with escape character `escape` ('' for none) in RE2's terms; throws what
 * PostgreSQL throws for an invalid escape or pattern, and refuses what RE2 would read otherwise.
 */
export function similarRegex(pattern: string, escape: string): SimilarRegex {
  const escapeChars = [...escape];
  if (escapeChars.length > 1) throw badRequest('invalid escape string', 'Escape string must be empty or one character.');
  const esc = escapeChars[0];
  const chars = [...pattern];
  const parts: string[] = [''];
  let whole = '^(?:';
  // The depth of parentheses inside PostgreSQL's wrapping group (-1: the pattern closed it).
  let depth = 0;
  let balanced = true;
  let last: Last = 'start';
  const emit = (text: string, kind: Last) => {
    parts[parts.length - 1] += text;
    whole += text;
    last = kind;
  };
  const close = () => {
    if (depth === -1) throw invalid('parentheses () not balanced');
    depth--;
  };
  const quantifier = (text: string) => {
    // PostgreSQL's dialect: a quantifier needs an atom; one '?' after it makes it non-greedy.
    if (last === 'start' || last === 'lazy') throw invalid('quantifier operand invalid');
    if (last === 'quantifier') {
      if (text !== '?') throw invalid('quantifier operand invalid');
      emit('?', 'lazy');
      return;
    }
    emit(text, 'quantifier');
  };
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (esc !== undefined && c === esc) {
      const next = chars[++i];
      // A trailing escape character escapes nothing, and is dropped (as PostgreSQL does).
      if (next === undefined) break;
      if (next === '"') {
        if (parts.length === 3) throw badRequest('SQL regular expression may not contain more than two escape-double-quote separators');
        // PostgreSQL's groups around the parts: ^(?:part1){1,1}?(part2){1,1}(?:part3)$.
        close();
        if (depth !== -1) balanced = false;
        depth++;
        whole += parts.length === 1 ? '){1,1}?(' : '){1,1}(?:';
        parts.push('');
        last = 'start';
        continue;
      }
      emit(escapedLiteral(next), 'atom');
      continue;
    }
    if (c === '[') {
      const { regex, end } = bracket(chars, i, esc);
      emit(regex, 'atom');
      i = end;
    } else if (c === '%') emit('.*', 'atom');
    else if (c === '_') emit('.', 'atom');
    else if (c === '(') {
      depth++;
      emit('(?:', 'start');
    } else if (c === ')') {
      close();
      if (depth < 0) balanced = false;
      emit(')', 'atom');
    } else if (c === '|') emit('|', 'start');
    else if (c === '*' || c === '+' || c === '?') quantifier(c);
    else if (c === '{' && /[0-9]/.test(chars[i + 1] ?? '')) {
      const bound = /^\{(\d+)(,(\d*))?\}/.exec(chars.slice(i, i + 12).join(''));
      const low = bound ? Number(bound[1]) : NaN;
      const high = bound?.[2] === undefined ? low : bound[3] === '' ? Infinity : Number(bound[3]);
      if (!bound || low > 255 || (high !== Infinity && (high > 255 || high < low))) throw invalid('invalid repetition count(s)');
      quantifier(bound[0]);
      i += bound[0].length - 1;
    } else emit(literal(c), 'atom');
  }
  // PostgreSQL's closing ')' must close its wrapping group.
  close();
  if (depth !== -1) throw invalid('parentheses () not balanced');
  return { whole: `${whole})$`, parts: balanced ? parts : null };
}

/** An escaped character: itself, literally; escaped letters and digits are classes or other escapes in PostgreSQL's dialect. */
function escapedLiteral(char: string): string {
  if (/[A-Za-z0-9]/.test(char)) {
    throw notAsPostgres(
      `The escape sequence \\${char} in a SQL regular expression`,
      'Write the characters it stands for (a class such as [0-9] for \\d), or use the escape character only before % _ ( ) | * + ? { [ and the escape character.',
    );
  }
  return literal(char);
}

/**
 * A bracket expression starting at chars[start] ('['): its RE2 class and the index of its closing
 * ']'. As PostgreSQL reads it: a ']' right after '[' or '[^' is a member; ranges run by code point.
 */
function bracket(chars: string[], start: number, esc: string | undefined): { regex: string; end: number } {
  let i = start + 1;
  let negated = false;
  if (chars[i] === '^' && chars[i] !== esc) {
    negated = true;
    i++;
  }
  const members: Array<{ char: string; escaped: boolean }> = [];
  let end = -1;
  for (; i < chars.length; i++) {
    const c = chars[i]!;
    if (esc !== undefined && c === esc) {
      const next = chars[++i];
      if (next === undefined) throw invalid('invalid escape \\ sequence');
      if (/[A-Za-z0-9]/.test(next)) escapedLiteral(next);
      members.push({ char: next, escaped: true });
      continue;
    }
    if (c === ']' && members.length > 0) {
      end = i;
      break;
    }
    if (c === '[') {
      throw notAsPostgres(
        'A class name, equivalence class or collating element ([: :], [= =], [. .]) or a [ inside brackets of a SQL regular expression',
        'List the characters, or ranges of them (a-z); escape a [ that is meant literally.',
      );
    }
    members.push({ char: c, escaped: false });
  }
  if (end < 0) throw invalid('brackets [] not balanced');
  const pieces: string[] = [];
  for (let m = 0; m < members.length; m++) {
    const member = members[m]!;
    const dash = members[m + 1];
    const to = members[m + 2];
    if (dash && to && dash.char === '-' && !dash.escaped) {
      if (member.char.codePointAt(0)! > to.char.codePointAt(0)!) throw invalid('invalid character range');
      if ((member.char === '-' && !member.escaped) || (to.char === '-' && !to.escaped) || members[m + 3]?.char === '-') {
        throw notAsPostgres('A range that begins or ends with - in brackets of a SQL regular expression', 'Escape the -.');
      }
      pieces.push(`${literal(member.char)}-${literal(to.char)}`);
      m += 2;
      continue;
    }
    if (member.char === '-' && !member.escaped && m !== 0 && m !== members.length - 1) {
      throw notAsPostgres('A - between ranges in brackets of a SQL regular expression', 'Put the - first or last, or escape it.');
    }
    pieces.push(literal(member.char));
  }
  return { regex: `[${negated ? '^' : ''}${pieces.join('')}]`, end };
}
