/**
 * vdb's errors as PostgreSQL's ErrorResponse: the SQLSTATE code clients branch on (psql, JDBC
 * and the BI tools read the code, not the text), the message (the REST body's description),
 * the hint, and the position of a syntax error. Anything that is not an ApiError is a bug:
 * the client gets XX000 without internals, as REST gives a 500.
 */
import { ApiError } from '../errors.js';
import { SYNTAX_ERROR_TITLE } from '../engine/front/parse.js';
import { MessageWriter, ProtocolViolation } from './codec.js';

/** An error of this front door itself (a protocol fault, an unsupported message). */
export class WireError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string | null = null,
    readonly severity: 'ERROR' | 'FATAL' = 'ERROR',
  ) {
    super(message);
  }
}

export interface ErrorFields {
  severity: 'ERROR' | 'FATAL';
  code: string;
  message: string;
  hint: string | null;
  /** 1-based character position in the statement, for syntax errors. */
  position: number | null;
}

/** Codes by what the description says, for the 400s of the statement's own content. */
const BY_DESCRIPTION: ReadonlyArray<[RegExp, string]> = [
  [/\b(relation|table|view)\b.*\b(does not exist|not found)/i, '42P01'],
  [/\bschema\b.*\bdoes not exist/i, '3F000'],
  [/\bcolumn\b.*\b(does not exist|not found)|referenced column|does not have a column|not found in FROM clause/i, '42703'],
  [/\bfunction\b.*\b(does not exist|not found)|no function matches/i, '42883'],
  [/ambiguous/i, '42702'],
  [/must appear in the GROUP BY/i, '42803'],
  [/division by zero/i, '22012'],
  [/out of range/i, '22003'],
  [/invalid input syntax|could not convert|Could not convert/i, '22P02'],
];

/** The SQLSTATE code of an ApiError. */
function codeOf(err: ApiError): string {
  if (err.title === SYNTAX_ERROR_TITLE) return '42601';
  if (err.status === 401) return '28000';
  if (err.status === 403) return '42501';
  if (err.status === 499 || err.status === 504) return '57014';
  if (err.title === 'Shutting down') return '57P01';
  if (err.status === 429 || err.title === 'Too many rows' || err.title === 'Values too large' || err.title === 'Too many columns')
    return '53400';
  if (err.title === 'Statement too complex') return '54001';
  if (err.status === 503) return '08006';
  if (err.status === 502) return '58000';
  if (err.status === 507) return '53100';
  for (const [pattern, code] of BY_DESCRIPTION) if (pattern.test(err.description)) return code;
  if (/unsupported|not supported/i.test(err.title)) return '0A000';
  if (err.status === 404) return '42704';
  if (err.status >= 500) return 'XX000';
  return '42000';
}

/** The 1-based character position of "(line L, column C)" in a syntax error's description. */
function positionOf(description: string, sql: string | undefined): number | null {
  const match = /\(line (\d+), column (\d+)\)$/.exec(description);
  if (!match || sql === undefined) return null;
  const lines = sql.split('\n');
  const line = Number(match[1]);
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i]!.length + 1;
  return offset + Number(match[2]);
}

/** What the client is told of `err`. */
export function errorFields(err: unknown, sql?: string): ErrorFields {
  if (err instanceof ProtocolViolation) return { severity: 'ERROR', code: '08P01', message: err.message, hint: null, position: null };
  if (err instanceof WireError) return { severity: err.severity, code: err.code, message: err.message, hint: err.hint, position: null };
  if (err instanceof ApiError) {
    const code = codeOf(err);
    const position = code === '42601' ? positionOf(err.description, sql) : null;
    const message = position === null ? err.description : err.description.replace(/ \(line \d+, column \d+\)$/, '');
    return { severity: 'ERROR', code, message, hint: err.hint, position };
  }
  return { severity: 'ERROR', code: 'XX000', message: 'Internal error; the server log has the details.', hint: null, position: null };
}

export function errorResponse(fields: ErrorFields): Buffer {
  const writer = new MessageWriter('E');
  const field = (type: string, value: string) => writer.byte(type.charCodeAt(0)).cstring(value);
  field('S', fields.severity);
  field('V', fields.severity);
  field('C', fields.code);
  field('M', fields.message);
  if (fields.hint) field('H', fields.hint);
  if (fields.position !== null) field('P', String(fields.position));
  writer.byte(0);
  return writer.end();
}

/** A NoticeResponse (a warning the statement met: a lossy conversion while loading). */
export function noticeResponse(message: string): Buffer {
  const writer = new MessageWriter('N');
  const field = (type: string, value: string) => writer.byte(type.charCodeAt(0)).cstring(value);
  field('S', 'WARNING');
  field('V', 'WARNING');
  field('C', '01000');
  field('M', message);
  writer.byte(0);
  return writer.end();
}
