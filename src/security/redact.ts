/**
 * Secrets out of texts that are kept or shown (the query log): a `password=...` (or secret,
 * token) inside a statement, e.g. in CALL SYSADMIN.createConnection(..., 'password=x'), becomes
 * `password=***`.
 */
const SECRET_VALUE = /\b((?:[\w.-]*(?:password|secret|token))\s*=\s*)((?:\\.|[^,'\\])*)/gi;

/** A SQL string literal, with its doubled quotes. */
const STRING_LITERAL = /'(?:[^']|'')*'/g;

export function redactSecrets(text: string): string {
  // Procedure calls (addUser, changeUserPwd, createConnection...) may carry passwords in any
  // argument: every string argument but the first (the name) is hidden.
  if (/^\s*call\s/i.test(text)) {
    let index = 0;
    return text.replace(STRING_LITERAL, (literal) => (index++ === 0 ? literal : `'***'`));
  }
  return text.replace(SECRET_VALUE, (_, key: string, value: string) => (value.length > 0 ? `${key}***` : key));
}
