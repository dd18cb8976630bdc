/**
 * `COPY (SELECT ...) TO STDOUT` and `COPY table TO STDOUT` (psql's `\copy ... to`): the query
 * the copy reads, and each row as a line in COPY's text format (tab-separated, `\N` for NULL,
 * backslash escapes) or CSV (quoted where needed, NULL unquoted and empty, HEADER). Copies from
 * the client or to the server's files are refused: vdb writes no files for clients.
 */
import type { CopyStmt, DefElem, Node } from '@pgsql/types';
import { deparseSync } from 'pgsql-deparser';
import { WireError } from './errors.js';

export interface CopyPlan {
  /** The SELECT whose rows are copied. */
  query: string;
  csv: boolean;
  header: boolean;
  delimiter: string;
  nullText: string;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

const optionText = (option: DefElem): string => {
  const arg = option.arg;
  if (!arg) return 'true';
  if ('String' in arg) return arg.String.sval ?? '';
  if ('Boolean' in arg) return arg.Boolean.boolval ? 'true' : 'false';
  if ('Integer' in arg) return String(arg.Integer.ival ?? 0);
  return '';
};

/** What a COPY statement asks for; refused unless it copies rows out to the client. */
export function copyPlan(copy: CopyStmt): CopyPlan {
  if (copy.is_from) throw new WireError('0A000', 'vdb does not take COPY FROM; write rows with INSERT.');
  if (copy.filename !== undefined || copy.is_program) {
    throw new WireError('0A000', 'vdb copies only TO STDOUT (psql: \\copy ... to file).', "Use COPY ... TO STDOUT, or psql's \\copy.");
  }
  let query: string;
  if (copy.query) query = deparseSync(copy.query as Node);
  else if (copy.relation) {
    const { schemaname, relname } = copy.relation;
    const columns = (copy.attlist ?? []).map((n) => ('String' in n ? quoteIdent(n.String.sval ?? '') : '')).join(', ');
    query = `SELECT ${columns || '*'} FROM ${schemaname ? `${quoteIdent(schemaname)}.` : ''}${quoteIdent(relname ?? '')}`;
  } else throw new WireError('42601', 'COPY needs a table or a query.');
  const plan: CopyPlan = { query, csv: false, header: false, delimiter: '\t', nullText: '\\N' };
  let delimiter: string | null = null;
  let nullText: string | null = null;
  for (const node of copy.options ?? []) {
    if (!('DefElem' in node)) continue;
    const option = node.DefElem;
    const value = optionText(option);
    switch (option.defname) {
      case 'format':
        if (!/^(text|csv)$/i.test(value)) throw new WireError('0A000', `vdb copies in text or csv format, not ${value}.`);
        plan.csv = /^csv$/i.test(value);
        break;
      case 'header':
        plan.header = /^(true|on|1)$/i.test(value);
        break;
      case 'delimiter':
        if (value.length !== 1) throw new WireError('22023', 'COPY delimiter must be a single one-byte character');
        delimiter = value;
        break;
      case 'null':
        nullText = value;
        break;
      default:
        throw new WireError('0A000', `vdb does not take the COPY option ${option.defname}.`);
    }
  }
  plan.delimiter = delimiter ?? (plan.csv ? ',' : '\t');
  plan.nullText = nullText ?? (plan.csv ? '' : '\\N');
  return plan;
}

/** One value in COPY's text format. */
function textField(value: string, delimiter: string): string {
  let out = '';
  for (const ch of value) {
    if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === delimiter) out += `\\${ch}`;
    else out += ch;
  }
  return out;
}

/** One value in CSV: quoted when it holds the delimiter, a quote, CR or LF, or reads as the NULL text. */
function csvField(value: string, plan: CopyPlan): string {
  const quote = value === plan.nullText || value.includes(plan.delimiter) || /["\r\n]/.test(value) || value.startsWith('\\.');
  return quote ? `"${value.replace(/"/g, '""')}"` : value;
}

/** A row as one COPY line, newline-terminated. */
export function copyLine(row: ReadonlyArray<string | null>, plan: CopyPlan): string {
  const fields = row.map((value) => (value === null ? plan.nullText : plan.csv ? csvField(value, plan) : textField(value, plan.delimiter)));
  return `${fields.join(plan.delimiter)}\n`;
}

/** The header line (column names), in the copy's format. */
export const copyHeader = (names: readonly string[], plan: CopyPlan): string => copyLine(names, { ...plan, nullText: '\u0000' });
