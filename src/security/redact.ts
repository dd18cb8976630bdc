/**
 * Secrets out of texts that are kept or shown (the query log): a `password=...` (or secret,
 * token) inside a statement, e.g. in CALL SYSADMIN.createConnection(..., 'password=x'), becomes
 * `password=***`.
 */
const SECRET_VALUE = /\b((?:[\w.-]*(?:password|secret|token))\s*=\s*)((?:\\.|[^,'\\])*)/gi;

export function redactSecrets(text: string): string {
  return text.replace(SECRET_VALUE, (_, key: string, value: string) => (value.length > 0 ? `${key}***` : key));
}
