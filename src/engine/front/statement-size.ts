/**
 * How large a statement may be. Every stage after parsing (allow-list, permission rewrite,
 * binding, planning, writing SQL for the sources and the engine) walks the syntax tree on the
 * process's one JavaScript thread, at about 2-3 µs per node of the tree all stages together; so a
 * statement's size is bounded before those stages, in bytes of text and in nodes of its tree,
 * breadth as well as depth. The tree is measured once, in one walk, right after parsing (in the
 * parsing worker for long statements: parse-pool.ts), and the statement refused with a 400 that
 * names the limit. A select list is also bounded: the engine's description of a result costs time
 * quadratic in its columns, and PostgreSQL itself refuses more than 1664.
 */
import { ApiError, statementTooComplex } from '../../errors.js';

export interface StatementSizeLimits {
  /** Most bytes (UTF-8) of a statement's text. */
  maxBytes: number;
  /** Most nodes of its syntax tree (objects and lists of libpg-query's tree: about 3 to 5 per term). */
  maxSyntaxNodes: number;
  /** Most terms of any one select list (or VALUES row). */
  maxSelectListTerms: number;
}

/**
 * Defaults no real application meets, measured so that the largest statement allowed costs a few
 * tens of ms of the JavaScript thread (bench/status-under-flood.ts): 20,000 nodes are an IN list
 * of about 6,000 values, 1,700 conditions joined by AND, or 4,000 select-list terms.
 */
export const DEFAULT_STATEMENT_SIZE: StatementSizeLimits = {
  maxBytes: 1_000_000,
  maxSyntaxNodes: 20_000,
  maxSelectListTerms: 1664,
};

/**
 * How deeply a statement's syntax tree may nest. vdb's rewriters walk trees recursively; a
 * statement nested deeper (an expression of thousands of terms) is refused up front with a 400
 * instead of overflowing the stack somewhere later.
 */
export const MAX_TREE_DEPTH = 1000;

export interface TreeSize {
  nodes: number;
  depth: number;
  /** Terms of the longest select list (targetList) or VALUES row. */
  widest: number;
}

/**
 * The size of a syntax tree, in one walk without recursion. Stops counting once past
 * `stopAfter` nodes: the statement is refused then, and its size need not be exact.
 */
export function treeSize(tree: unknown, stopAfter = Infinity): TreeSize {
  let nodes = 0;
  let depth = 0;
  let widest = 0;
  const values: unknown[] = [tree];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop();
    const at = depths.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (++nodes > stopAfter) break;
    if (at > depth) depth = at;
    if (Array.isArray(value)) {
      for (const child of value) {
        if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(at + 1);
        }
      }
      continue;
    }
    for (const key in value) {
      const child = (value as Record<string, unknown>)[key];
      if (typeof child !== 'object' || child === null) continue;
      if (key === 'targetList' && Array.isArray(child) && child.length > widest) widest = child.length;
      if (key === 'valuesLists' && Array.isArray(child)) {
        for (const row of child as Array<{ List?: { items?: unknown[] } }>) widest = Math.max(widest, row?.List?.items?.length ?? 0);
      }
      values.push(child);
      depths.push(at + 1);
    }
  }
  return { nodes, depth, widest };
}

const tooLarge = (description: string, hint: string) => new ApiError(400, 'Statement too large', description, hint);

/** Refuses a statement text of more than `maxBytes` bytes (before parsing it). */
export function checkStatementBytes(sql: string, limits: StatementSizeLimits): void {
  // Each character is 1 to 3 bytes of UTF-8 (a surrogate pair, 2 characters, is 4): measure only when it may matter.
  if (sql.length * 3 <= limits.maxBytes) return;
  const bytes = Buffer.byteLength(sql, 'utf8');
  if (bytes > limits.maxBytes) {
    throw tooLarge(
      `The statement has ${bytes} bytes; vdb accepts at most ${limits.maxBytes} bytes of SQL in one statement (statements.maxBytes).`,
      'Send long lists of values as a table (a file source, or rows written to a source) or in several statements.',
    );
  }
}

/** The 400 for a tree of this size, or null when it is within the limits. */
export function sizeRefusal(size: TreeSize, limits: StatementSizeLimits): ApiError | null {
  if (size.nodes > limits.maxSyntaxNodes) {
    return tooLarge(
      `The statement has more than ${limits.maxSyntaxNodes} syntax nodes, the most vdb accepts in one statement (statements.maxSyntaxNodes); each value, name, operator and list counts.`,
      'Shorten long IN lists, CASE expressions, select lists or chains of conditions; join a table of the values instead, or split the statement.',
    );
  }
  if (size.widest > limits.maxSelectListTerms) {
    return tooLarge(
      `A select list of the statement has ${size.widest} terms; vdb accepts at most ${limits.maxSelectListTerms} (statements.maxSelectListTerms), as PostgreSQL accepts at most 1664.`,
      'Select fewer columns per statement.',
    );
  }
  if (size.depth > MAX_TREE_DEPTH) return statementTooComplex();
  return null;
}

/** Refuses a parsed statement beyond the limits (400). */
export function checkTreeSize(tree: unknown, limits: StatementSizeLimits): void {
  const refusal = sizeRefusal(treeSize(tree, limits.maxSyntaxNodes), limits);
  if (refusal) throw refusal;
}
