/**
 * Parsing with libpg-query: the real PostgreSQL grammar (WASM, no native build). Errors become
 * 400s whose description carries the parser's message with line and column.
 */
import { loadModule, parseSync } from 'libpg-query';
import type { Node, ParseResult } from '@pgsql/types';
import { ApiError, isStackOverflow, statementTooComplex } from '../../errors.js';
import { asKind, statementOf, walk } from '../tree/ast.js';
import { checkStatementBytes, checkTreeSize, DEFAULT_STATEMENT_SIZE, type StatementSizeLimits } from './statement-size.js';

export const SYNTAX_ERROR_TITLE = 'SQL syntax error';

let loaded: Promise<void> | null = null;

/** Loads the WASM parser once; call before the first parse (start-up does). */
export function initParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

interface SqlErrorDetails {
  message: string;
  cursorPosition?: number;
}

/** Line and column (1-based) of a 0-based character offset. */
export function lineAndColumn(sql: string, offset: number): { line: number; column: number } {
  const before = sql.slice(0, Math.max(0, Math.min(offset, sql.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1]?.length ?? 0) + 1 };
}

function hintFor(message: string, sql: string): string | null {
  if (message.includes('at end of input')) {
    return 'The statement ends too early: check for a missing table name, expression or closing parenthesis.';
  }
  if (message.includes('unterminated quoted string')) return "Close the string literal with a single quote (').";
  if (message.includes('unterminated quoted identifier')) return 'Close the quoted identifier with a double quote (").';
  if (/syntax error at or near "(select|from|where|group|order)"/i.test(message) && /,\s*(from|where|group|order)\b/i.test(sql)) {
    return 'There may be a trailing comma before this keyword.';
  }
  return null;
}

/** The 400 of the parser's error `err` for `sql` (a syntax error with line and column). */
export function syntaxError(err: unknown, sql: string): unknown {
  if (isStackOverflow(err) || (err as { stackOverflow?: boolean }).stackOverflow) return statementTooComplex();
  const details = (err as { sqlDetails?: SqlErrorDetails }).sqlDetails;
  const message = details?.message ?? (err instanceof Error ? err.message : String((err as { message?: unknown }).message ?? err));
  const where = details?.cursorPosition !== undefined ? lineAndColumn(sql, details.cursorPosition) : null;
  const description = where ? `${message} (line ${where.line}, column ${where.column})` : message;
  return new ApiError(400, SYNTAX_ERROR_TITLE, description, hintFor(message, sql));
}

/** Exactly one statement, else a 400. */
export function requireOneStatement(tree: ParseResult): ParseResult {
  const count = tree.stmts?.length ?? 0;
  if (count === 0) {
    throw new ApiError(400, SYNTAX_ERROR_TITLE, 'The request contains no SQL statement.', 'Send one statement in "sql".');
  }
  if (count > 1) {
    throw new ApiError(
      400,
      SYNTAX_ERROR_TITLE,
      `The request contains ${count} statements; exactly one is allowed.`,
      'Send one statement per request.',
    );
  }
  return tree;
}

/**
 * Parses one statement on this thread, refusing it (400) beyond `limits` (statement-size.ts).
 * Long statements from users go through `parseInWorker` (parse-pool.ts) instead.
 */
export function parseStatement(sql: string, limits: StatementSizeLimits = DEFAULT_STATEMENT_SIZE): ParseResult {
  checkStatementBytes(sql, limits);
  let tree: ParseResult;
  try {
    tree = parseSync(sql) as ParseResult;
  } catch (err) {
    throw syntaxError(err, sql);
  }
  checkTreeSize(tree, limits);
  return requireOneStatement(tree);
}

/**
 * One SQL expression (a row condition, a column mask) as a syntax tree: exactly one
 * expression, nothing around it (no FROM, no second statement). 400 otherwise.
 */
export function parseExpression(text: string, what: string): Node {
  let tree: ParseResult;
  try {
    tree = parseStatement(`SELECT (${text}\n)`);
  } catch (err) {
    if (err instanceof ApiError)
      throw new ApiError(400, `Invalid ${what}`, `The ${what} "${text}" is not a SQL expression: ${err.description}`, null);
    throw err;
  }
  requireFaithful(tree);
  const select = asKind(statementOf(tree), 'SelectStmt');
  const targets = select?.targetList;
  const value = targets?.length === 1 ? asKind(targets[0], 'ResTarget')?.val : undefined;
  const extra = select ? Object.keys(select).filter((k) => k !== 'targetList' && k !== 'limitOption' && k !== 'op') : ['statement'];
  if (!value || extra.length > 0) {
    throw new ApiError(400, `Invalid ${what}`, `The ${what} "${text}" must be one SQL expression.`, null);
  }
  return value;
}

/** Names the SQL writer leaves unquoted must need no quotes: lower case letters, digits, _ and $. */
const PLAIN_NAME = /^[a-z_][a-z0-9_$]*$/;

/**
 * Refuses a statement with a name that vdb could not write back as it was given. vdb rewrites
 * statements as syntax trees and writes them as SQL for the engine and the sources; the writer
 * (pgsql-deparser) leaves some names unquoted: WITH query names, join aliases, window names
 * and named arguments. Such a name with spaces, quotes or capitals would be read back as other
 * SQL, so there only plain names are taken.
 */
export function requireFaithful(tree: unknown): void {
  const check = (name: unknown, what: string) => {
    if (typeof name === 'string' && !PLAIN_NAME.test(name)) {
      throw new ApiError(
        400,
        'Unsupported statement',
        `The ${what} name "${name}" needs quoting, which vdb does not keep for ${what} names.`,
        `Use a plain lower-case name (letters, digits, _) for the ${what}.`,
      );
    }
  };
  walk(tree, (nodeType, node) => {
    if (nodeType === 'CommonTableExpr') check(node.ctename, 'WITH query');
    else if (nodeType === 'JoinExpr') {
      check(node.alias?.aliasname, 'join alias');
      check(node.join_using_alias?.aliasname, 'join alias');
    } else if (nodeType === 'WindowDef') {
      check(node.name, 'window');
      check(node.refname, 'window');
    } else if (nodeType === 'NamedArgExpr') check(node.name, 'named argument');
  });
}
