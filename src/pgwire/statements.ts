/**
 * The statements of a client's text: split where PostgreSQL splits them (a simple Query may
 * hold several), each with its kind, which decides its command tag (SELECT n, INSERT 0 n, ...)
 * and whether the session answers it itself (SET, SHOW, BEGIN, ...) or the engine runs it.
 */
import { parseSync } from 'libpg-query';
import type { Node, ParseResult } from '@pgsql/types';

export type StatementKind = 'select' | 'insert' | 'update' | 'delete' | 'session' | 'copy' | 'other';

export interface Statement {
  text: string;
  kind: StatementKind;
  /** The statement's tree for the session's own statements (SET, SHOW, BEGIN, ...) and COPY. */
  node: Node | null;
  /** The first keyword, upper case: the command tag of statements without a count. */
  keyword: string;
}

/** Statements the session answers without the engine. */
const SESSION_NODES = ['VariableSetStmt', 'VariableShowStmt', 'TransactionStmt', 'DiscardStmt', 'DeallocateStmt'];

function kindOf(node: Node | undefined): StatementKind {
  if (!node) return 'other';
  const [name] = Object.keys(node);
  if (name === 'SelectStmt') return 'select';
  if (name === 'InsertStmt') return 'insert';
  if (name === 'UpdateStmt') return 'update';
  if (name === 'DeleteStmt') return 'delete';
  if (name && SESSION_NODES.includes(name)) return 'session';
  if (name === 'CopyStmt') return 'copy';
  return 'other';
}

const keywordOf = (text: string) => /^\s*(\w+)/.exec(text.replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*/, ''))?.[1]?.toUpperCase() ?? '';

/**
 * The statements of `sql`, in order; none for a text of only spaces and comments. A text the
 * parser refuses is one statement: the engine reports its syntax error with the position.
 */
export function splitStatements(sql: string): Statement[] {
  let tree: ParseResult;
  try {
    tree = parseSync(sql) as ParseResult;
  } catch {
    return [{ text: sql, kind: 'other', node: null, keyword: keywordOf(sql) }];
  }
  const stmts = tree.stmts ?? [];
  if (stmts.length <= 1) {
    const node = stmts[0]?.stmt;
    if (!node) return [];
    return [
      { text: sql, kind: kindOf(node), node: kindOf(node) === 'session' || kindOf(node) === 'copy' ? node : null, keyword: keywordOf(sql) },
    ];
  }
  // Locations count bytes of the UTF-8 text.
  const bytes = Buffer.from(sql, 'utf8');
  return stmts.map((raw) => {
    const start = raw.stmt_location ?? 0;
    const text = bytes.toString('utf8', start, raw.stmt_len ? start + raw.stmt_len : bytes.length);
    const kind = kindOf(raw.stmt);
    return { text, kind, node: kind === 'session' || kind === 'copy' ? (raw.stmt ?? null) : null, keyword: keywordOf(text) };
  });
}
