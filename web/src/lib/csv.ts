/** CSV as vdb writes it (Accept: text/csv): RFC 4180, a header line, CRLF line ends. */

/** The text after the header line: its first CRLF outside quotes (a column name may hold either). */
export function csvBody(text: string): string {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '\r' && text[i + 1] === '\n') return text.slice(i + 2);
  }
  return '';
}
