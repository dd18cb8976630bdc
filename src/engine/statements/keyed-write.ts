/**
 * UPDATE and DELETE whose rows the engine chooses: the writes of a user under a row condition,
 * on a source that may evaluate the condition otherwise than the engine does (MySQL/MariaDB
 * collations that ignore case, accents and trailing spaces; SQLite's NOCASE columns and values
 * of another storage class, which the engine reads as NULL or rounds). Sent to the source, the
 * condition would reach rows the user's SELECT never shows. Here the rows written are those of
 * that SELECT, by construction:
 *  1. The engine runs `SELECT DISTINCT <primary key> FROM target [USING ...] WHERE <the user's
 *     WHERE> AND <the condition>` for the user: the target read as it is with the condition of
 *     the write's letter, every other table narrowed as in any SELECT, and the conditions made
 *     exact as in any SELECT (supersets at the source, checked again in the engine).
 *  2. In one transaction of the source, those keys' rows are locked and the SELECT runs again,
 *     until it finds only locked keys (a source that holds off every other writer: once).
 *  3. The statement runs at the source for exactly those keys (the dialect's exactKeyMatch: a
 *     text key compares bytewise there, never by the collation), in batches, and must reach one
 *     row per key; anything else rolls back.
 * No primary key, or one the dialect cannot match exactly: refused (400).
 */
import type { Node, ParseResult } from '@pgsql/types';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { ColumnDef } from '../../catalog/types.js';
import type { SourceDialect } from '../../connectors/dialect.js';
import type { SourceTransaction } from '../../connectors/types.js';
import { ApiError, badRequest } from '../../errors.js';
import { requalify, trustTablesOf } from '../access/access.js';
import { allOf, type WriteBody } from '../access/write-access.js';
import { nameNode, walk } from '../tree/ast.js';

/** What runs a SELECT in the engine for the user and hands its rows over as text, in batches. */
export type SelectRows = (
  select: ParseResult,
  signal: AbortSignal,
) => Promise<{ columns: number; rows: AsyncIterable<Array<string | null>[]>; close(): void }>;

/** A source that can run a write's statements in one transaction. */
export interface TransactionalWriter {
  readonly dialect: SourceDialect;
  inTransaction<T>(signal: AbortSignal, work: (transaction: SourceTransaction) => Promise<T>): Promise<T>;
}

/** Keys per statement at the source. */
const KEYS_PER_STATEMENT = 500;

/** Rounds of locking the keys found and looking again before the write gives up (409). */
const MAX_ROUNDS = 3;

export interface ChosenRowsWrite {
  statementType: 'UpdateStmt' | 'DeleteStmt';
  /** The statement as the user wrote it (its target, WHERE and USING are read, never changed). */
  body: WriteBody;
  target: ResolvedTable;
  /** The condition of the write's letter over the target (its alias if any), user functions replaced. */
  condition: Node;
  /** The statement at the source without its WHERE (`UPDATE t SET ...`, `DELETE FROM t`). */
  statementSql: string;
  writer: TransactionalWriter;
  selectRows: SelectRows;
  signal: AbortSignal;
}

/** Runs the write for the rows the engine chose; answers the number of rows written. */
export async function writeChosenRows(write: ChosenRowsWrite): Promise<{ count: number; sql: string }> {
  const { target, writer, signal } = write;
  const keyColumns = primaryKeyOf(write);
  // Built anew for each run: the tables read as they are are marked by identity, and binding rewrites the tree.
  const select = () => keySelect(write.body, keyColumns, write.condition);
  const match = (keys: readonly string[][]) => {
    const sql = writer.dialect.exactKeyMatch(keyColumns, keys);
    if (sql === null) throw inexactKeys(write, keyColumns);
    return sql;
  };
  // Refused before anything runs when the key's type cannot be matched exactly at all.
  if (writer.dialect.exactKeyMatch(keyColumns, [keyColumns.map(() => '0')]) === null) throw inexactKeys(write, keyColumns);
  let firstSql = '';
  const count = await writer.inTransaction(signal, async (transaction) => {
    let keys = await chosenKeys(write, select);
    if (!transaction.excludesWriters) {
      const locked = new Set<string>();
      for (let round = 1; ; round++) {
        const unlocked = keys.filter((k) => !locked.has(JSON.stringify(k)));
        if (unlocked.length === 0) break;
        if (round > MAX_ROUNDS) throw conflict(target);
        for (let i = 0; i < unlocked.length; i += KEYS_PER_STATEMENT) {
          await transaction.lockRows(target.table, match(unlocked.slice(i, i + KEYS_PER_STATEMENT)));
        }
        for (const key of unlocked) locked.add(JSON.stringify(key));
        // Rows locked now stay as they are: the keys the SELECT finds among them are final.
        keys = await chosenKeys(write, select);
      }
    }
    let written = 0;
    for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
      const sql = `${write.statementSql} WHERE ${match(keys.slice(i, i + KEYS_PER_STATEMENT))}`;
      firstSql ||= sql;
      written += await transaction.execute(sql);
    }
    // One row per key, or the keys did not match exactly at the source: nothing is written.
    if (written !== keys.length) throw inexactKeys(write, keyColumns);
    return written;
  });
  return { count, sql: firstSql || `${write.statementSql} WHERE <no row chosen>` };
}

/** The target's primary key columns; refused without one. */
function primaryKeyOf({ target, statementType }: ChosenRowsWrite): ColumnDef[] {
  const columns = target.table.primaryKey.map((name) =>
    target.table.columns.find((c) => c.nameInSource === name || c.name.toLowerCase() === name.toLowerCase()),
  );
  if (columns.length === 0 || columns.some((c) => c === undefined)) {
    throw badRequest(
      `This ${verb(statementType)} on ${target.schema}.${target.table.name} runs under the row condition of your permission, which ${target.schema} may evaluate otherwise than vdb (its collation or value types); vdb writes such rows by their primary key, and the table has none.`,
      'Ask an administrator to give the table a primary key (and refresh the source), or to make this change.',
      'Unsupported statement',
    );
  }
  return columns as ColumnDef[];
}

const verb = (statementType: ChosenRowsWrite['statementType']) => (statementType === 'UpdateStmt' ? 'UPDATE' : 'DELETE');

function inexactKeys({ target, statementType }: ChosenRowsWrite, keyColumns: readonly ColumnDef[]): ApiError {
  return badRequest(
    `This ${verb(statementType)} on ${target.schema}.${target.table.name} runs under the row condition of your permission, and ${target.schema} cannot be asked for exactly the rows it reaches by their primary key (${keyColumns.map((c) => `${c.name} ${c.type}`).join(', ')}): nothing was written.`,
    'Integer and text keys can be matched exactly (in SQLite, of the class the column declares). Ask an administrator to make this change.',
    'Unsupported statement',
  );
}

function conflict(target: ResolvedTable): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `The rows of ${target.schema}.${target.table.name} that this write reaches kept changing while it ran (other writers): nothing was written.`,
    'Run the statement again.',
  );
}

/** `SELECT DISTINCT key FROM target [, USING tables] WHERE <user's WHERE> AND <condition>`, the target read as it is. */
function keySelect(body: WriteBody, keyColumns: readonly ColumnDef[], condition: Node): ParseResult {
  const relation = structuredClone(body.relation!);
  const name = String(relation.alias?.aliasname ?? relation.relname);
  // The write's own target: its letter's condition is in the WHERE, not the reading one's.
  trustTablesOf({ RangeVar: relation });
  // Among the USING tables the condition must mean the target's columns: over its name, which
  // no USING entry may take (it would then mean that entry's).
  if (usingNames(body).has(name.toLowerCase())) {
    throw badRequest(
      `A USING entry is named like the target "${name}", which runs under the row condition of your permission.`,
      'Give the USING entry another alias.',
      'Unsupported statement',
    );
  }
  condition = requalify(structuredClone(condition), name);
  const select: Node = {
    SelectStmt: {
      distinctClause: [{} as Node],
      targetList: keyColumns.map((c) => ({ ResTarget: { val: { ColumnRef: { fields: [nameNode(name), nameNode(c.name)] } } } })),
      fromClause: [{ RangeVar: relation }, ...structuredClone(body.usingClause ?? [])],
      whereClause: allOf([structuredClone(body.whereClause), trustTablesOf(condition)]),
      limitOption: 'LIMIT_OPTION_DEFAULT',
      op: 'SETOP_NONE',
    },
  };
  return { version: 0, stmts: [{ stmt: select }] };
}

/** The names the entries of a DELETE's USING take (lower case); those of their subqueries too, to be safe. */
function usingNames(body: WriteBody): Set<string> {
  const names = new Set<string>();
  walk(body.usingClause, (nodeType, node) => {
    if (nodeType !== 'RangeVar' && nodeType !== 'RangeSubselect' && nodeType !== 'RangeFunction' && nodeType !== 'JoinExpr') return;
    const { alias } = node as { alias?: { aliasname?: string } };
    const named = alias?.aliasname ?? (nodeType === 'RangeVar' ? (node as { relname?: string }).relname : undefined);
    if (named) names.add(named.toLowerCase());
  });
  return names;
}

/** The keys the engine's SELECT finds now; a NULL key cannot be matched (refused). */
async function chosenKeys(write: ChosenRowsWrite, select: () => ParseResult): Promise<string[][]> {
  const rows = await write.selectRows(select(), write.signal);
  const keys: string[][] = [];
  try {
    for await (const batch of rows.rows) {
      for (const row of batch) {
        if (row.some((v) => v === null)) throw inexactKeys(write, primaryKeyOf(write));
        keys.push(row as string[]);
      }
    }
  } finally {
    rows.close();
  }
  return keys;
}
