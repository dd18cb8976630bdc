/**
 * A script split into its statements, by PostgreSQL's lexical rules: a semicolon ends a statement
 * unless it is inside a string ('…', E'…' with backslash escapes), a quoted name ("…"), a
 * dollar-quoted string ($tag$…$tag$), or a comment (-- to the line end, /* … *\/ nested).
 * The API runs one statement per request; the console sends each in turn.
 */

export interface Statement {
  /** The statement's text, without the semicolon and the space around it. */
  sql: string;
  /** Its place in the script: from the first character to just after the last. */
  from: number;
  to: number;
}

const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z_0-9\u0080-\uffff]*)?\$/y;

/** Index just after the string, name, dollar quote or comment starting at `i`, or `i` when none starts there. */
function skipQuoted(text: string, i: number): number {
  const ch = text[i];
  const next = text[i + 1];
  if (ch === '-' && next === '-') {
    const end = text.indexOf('\n', i);
    return end < 0 ? text.length : end + 1;
  }
  if (ch === '/' && next === '*') {
    let depth = 1;
    let j = i + 2;
    while (j < text.length && depth > 0) {
      if (text.startsWith('/*', j)) depth++;
      else if (text.startsWith('*/', j)) depth--;
      else {
        j++;
        continue;
      }
      j += 2;
    }
    return j;
  }
  if (ch === "'" || ch === '"') {
    // E'…' strings take backslash escapes; in the others a quote is doubled.
    const escapes = ch === "'" && i > 0 && /[eE]/.test(text[i - 1]!) && !/[\w$]/.test(text[i - 2] ?? ' ');
    let j = i + 1;
    while (j < text.length) {
      if (escapes && text[j] === '\\') j += 2;
      else if (text[j] === ch) {
        if (text[j + 1] === ch) j += 2;
        else return j + 1;
      } else j++;
    }
    return text.length;
  }
  if (ch === '$' && !/[\w$]/.test(text[i - 1] ?? ' ')) {
    DOLLAR_TAG.lastIndex = i;
    const tag = DOLLAR_TAG.exec(text)?.[0];
    if (tag) {
      const end = text.indexOf(tag, i + tag.length);
      return end < 0 ? text.length : end + tag.length;
    }
  }
  return i;
}

/** True when the text holds nothing but space and comments. */
function blank(text: string): boolean {
  for (let i = 0; i < text.length;) {
    if (/\s/.test(text[i]!)) i++;
    else if (text.startsWith('--', i) || text.startsWith('/*', i)) i = skipQuoted(text, i);
    else return false;
  }
  return true;
}

/** The statements of a script, in order; empty ones (`;;`, only comments) are left out. */
export function splitStatements(text: string): Statement[] {
  const statements: Statement[] = [];
  let start = 0;
  const push = (end: number) => {
    const piece = text.slice(start, end);
    if (!blank(piece)) {
      const lead = piece.length - piece.trimStart().length;
      const sql = piece.trim();
      statements.push({ sql, from: start + lead, to: start + lead + sql.length });
    }
  };
  for (let i = 0; i < text.length;) {
    const after = skipQuoted(text, i);
    if (after > i) {
      i = after;
    } else if (text[i] === ';') {
      push(i);
      start = ++i;
    } else i++;
  }
  push(text.length);
  return statements;
}

/**
 * The statement at the cursor: the one the cursor is in or touches at its end (just after its
 * semicolon counts), else the nearest one before it, else the first one.
 */
export function statementAt(statements: readonly Statement[], cursor: number): Statement | undefined {
  let best: Statement | undefined;
  for (const s of statements) {
    if (s.from <= cursor && cursor <= s.to + 1) return s;
    if (s.to <= cursor) best = s;
  }
  return best ?? statements[0];
}
