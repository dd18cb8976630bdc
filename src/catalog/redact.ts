/**
 * Secrets out of texts that are kept or shown (the query log): a `password=...` (or secret,
 * token) inside a statement, e.g. in CALL SYSADMIN.createConnection(..., 'password=x'), becomes
 * `password=***`.
 */
const SECRET_VALUE = /\b((?:[\w.-]*(?:password|secret|token))\s*=\s*)((?:\\.|[^,'\\])*)/gi;

const SECRET_WORD = /password|secret|token/i;

/** A CALL statement, after any leading comments. */
const STARTS_WITH_CALL = /^\s*(?:(?:\/\*[\s\S]*?\*\/|--[^\n]*(?:\n|$))\s*)*call\b/i;

/** A SQL string literal: quoted (with doubled quotes, E'' escapes) or dollar-quoted. */
const STRING_LITERAL = /[eE]?'(?:[^'\\]|''|\\.)*'|\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$/g;

export function redactSecrets(text: string): string {
  // Procedure calls (addUser, changeUserPwd, createConnection...) may carry passwords in any
  // argument, named or not: every string in such a statement is hidden (the audit log keeps
  // the target's name).
  if (STARTS_WITH_CALL.test(text)) return text.replace(STRING_LITERAL, `'***'`);
  // Most statements name no secret: one quick scan for the words first.
  if (!SECRET_WORD.test(text)) return text;
  return text.replace(SECRET_VALUE, (_, key: string, value: string) => (value.length > 0 ? `${key}***` : key));
}
