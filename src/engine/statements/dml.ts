/**
 * INSERT, UPDATE and DELETE. The target must be a table of a writable source (PostgreSQL,
 * MySQL/MariaDB, SQLite) whose definition is not read-only (else 403).
 *  - A statement that touches only the target's source is translated to the source's names and
 *    run there whole (PostgreSQL: anything its allow-list permits; MySQL and SQLite: plain
 *    expressions only, no functions or casts, so the statement means the same there).
 *  - INSERT INTO src.t SELECT ... over other sources: the engine runs the SELECT and its rows
 *    are written to the target in batches, inside one transaction of the target.
 *  - UPDATE/DELETE under a row condition on a source that may evaluate it otherwise than the
 *    engine (a dialect that does not speak PostgreSQL: collations, storage classes): the engine
 *    chooses the rows, the source writes them by exact key (keyed-write.ts).
 *  - UPDATE/DELETE that read other sources are refused (400).
 * Permissions (the letters a write needs, row conditions, what it may read) are checked first,
 * by write-access.ts. The answer is one row: the number of rows written.
 */
import type { Node, ParseResult, RangeVar } from '@pgsql/types';
import { deparseSync } from 'pgsql-deparser';
import type { SourceRegistry } from '../../sources/registry.js';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { SourceDef } from '../../catalog/types.js';
import type { RowConnector, SourceWriter } from '../../connectors/types.js';
import { SourceUnreachableError } from '../../connectors/types.js';
import { ApiError, badRequest, forbidden, messageOf, sourceFailed } from '../../errors.js';
import { ownStorageFailure } from '../../runtime/storage-errors.js';
import type { AccessPolicy } from '../../security/permissions.js';
import { replaceUserFunctions, requalify } from '../access/access.js';
import { ownMessage, withholdDataErrors } from '../access/access-errors.js';
import {
  allOf,
  applyWriteAccess,
  checkConflictUpdate,
  checkedRows,
  checkTargetReads,
  checkWritePermission,
  outsideCondition,
  reachableRows,
  targetNames,
  type WriteBody,
} from '../access/write-access.js';
import type { StaticResult } from '../exec/static-result.js';
import { writeChosenRows, type SelectRows } from './keyed-write.js';
import { asKind, fieldNames, statementOf, walk } from '../tree/ast.js';
import { SAFE_TYPES } from '../plan/whole.js';
import { hasFact } from '../tree/functions.js';

/** A row source vdb writes to: its dialect and its writer. */
type WritableConnector = RowConnector & { readonly writer: SourceWriter };

const isWritable = (c: RowConnector): c is WritableConnector => c.writer !== undefined;

const DML = ['InsertStmt', 'UpdateStmt', 'DeleteStmt'] as const;

export function isDml(statement: Node | undefined): boolean {
  return statement !== undefined && DML.some((k) => k in statement);
}

/** The statement type and body of a write statement. */
function writeOf(statement: Node): [statementType: (typeof DML)[number], body: WriteBody] {
  if ('InsertStmt' in statement) return ['InsertStmt', statement.InsertStmt];
  if ('UpdateStmt' in statement) return ['UpdateStmt', statement.UpdateStmt];
  if ('DeleteStmt' in statement) return ['DeleteStmt', statement.DeleteStmt];
  throw new Error(`not a write statement: ${Object.keys(statement)[0]}`);
}

/** A write statement of `statementType` over `body`. */
const writeNode = (statementType: (typeof DML)[number], body: WriteBody): Node =>
  statementType === 'InsertStmt' ? { InsertStmt: body } : statementType === 'UpdateStmt' ? { UpdateStmt: body } : { DeleteStmt: body };

/** Node kinds that MySQL and SQLite may read differently from PostgreSQL: not sent to them. */
const PORTABLE_FORBIDDEN = new Set([
  'FuncCall',
  'TypeCast',
  'SubLink',
  'CaseExpr',
  'CoalesceExpr',
  'MinMaxExpr',
  'SQLValueFunction',
  'A_ArrayExpr',
  'RowExpr',
]);

/** A write checked against the user's permissions: its statement narrowed, and what it reaches. */
interface CheckedWrite {
  statementType: (typeof DML)[number];
  body: WriteBody;
  /** The statement with what it reads narrowed to the user's view and the target's row condition in its WHERE. */
  checked: WriteBody;
  target: ResolvedTable;
  source: SourceDef;
  connector: WritableConnector;
  /** The row conditions new rows of an INSERT must meet; null when none. */
  insertCondition: string[] | null;
  /** The row condition of an UPDATE's or DELETE's letter, over the target; null when none. */
  targetCondition: Node | null;
  /** It reads data narrowed for the user: errors that may quote values are withheld. */
  narrowed: boolean;
  /** Every table it reads is in the target's source. */
  sameSource: boolean;
  /** The statement as the user wrote it (before the row condition joined its WHERE) can go to the source. */
  asWritten: boolean;
  cteReferences: WeakSet<object>;
}

export async function executeDml(
  tree: ParseResult,
  policy: AccessPolicy,
  registry: SourceRegistry,
  vdbName: string,
  selectRows: SelectRows,
  signal: AbortSignal,
): Promise<StaticResult & { sourceQueries: Array<{ source: string; sql: string }> }> {
  const write = checkWrite(tree, policy, registry);
  const { statementType, body, checked, target, source, connector, insertCondition, targetCondition, narrowed, sameSource } = write;
  // A source that may evaluate the condition otherwise than the engine: the engine chooses the rows.
  if (targetCondition !== null && sameSource && !connector.dialect.speaksPostgres) {
    return chosenRowsWrite(statementType as 'UpdateStmt' | 'DeleteStmt', tree, body, checked, targetCondition, {
      target,
      source,
      connector,
      registry,
      vdbName,
      selectRows,
      signal,
      cteReferences: write.cteReferences,
    });
  }
  if (sameSource && insertCondition === null && translatable(checked, connector)) {
    const sql = sourceStatement(
      { ...tree, stmts: [{ stmt: writeNode(statementType, checked) }] },
      registry,
      source,
      connector,
      vdbName,
      write.cteReferences,
    );
    const count = await connector.writer.executeWrite(sql, signal).catch((err: unknown) => {
      const error = writeError(source.name, err, signal);
      return Promise.reject(narrowed ? withholdDataErrors(error) : error);
    });
    return { ...countResult(count), sourceQueries: [{ source: source.name, sql }] };
  }
  refuseUnsent(write);
  const count = await insertSelect(body, target, connector, selectRows, signal, insertCondition).catch((err: unknown) =>
    Promise.reject(writeError(source.name, err, signal)),
  );
  return {
    ...countResult(count),
    sourceQueries: [
      { source: source.name, sql: `INSERT INTO ${connector.dialect.tableSql(target.table)} ... (${count} row(s) in batches)` },
    ],
  };
}

/** Checks the write against the user's permissions and narrows what it reads (access/write-access.ts). */
function checkWrite(tree: ParseResult, policy: AccessPolicy, registry: SourceRegistry): CheckedWrite {
  const [statementType, body] = writeOf(statementOf(tree)!);
  if ('returningList' in body || body.returningClause)
    throw badRequest('RETURNING is not supported.', 'Run a SELECT after the write.', 'Unsupported statement');
  if (body.withClause) throw badRequest('WITH on a write statement is not supported.', null, 'Unsupported statement');
  const relation = body.relation!;
  const target = registry.resolve(typeof relation.schemaname === 'string' ? relation.schemaname : undefined, String(relation.relname));
  const source = writableSource(target, registry);
  const connector = registry.connectorOf(source) as WritableConnector;
  const insertCondition = checkWritePermission(statementType, body, target, policy);
  checkTargetReads(statementType, body, target, policy, registry);
  if (body.onConflictClause) checkConflictUpdate(body.onConflictClause, body, target, policy, registry);

  // What the statement reads besides its target, narrowed to what the user may see, and the
  // target's row conditions: an UPDATE or DELETE reaches only the rows the user may change.
  const checked = structuredClone(body);
  const access = applyWriteAccess(checked, registry, policy);
  // Errors of a write over narrowed data may quote values beyond the user's view: withheld.
  let narrowed = access.narrowed.size > 0 || access.hidden.size > 0 || access.readsViews;
  const asWritten = translatable(checked, connector);
  /** The row condition of an UPDATE's or DELETE's letter, over the target; null when none. */
  let targetCondition: Node | null = null;
  if (statementType !== 'InsertStmt') {
    const reachable = reachableRows(statementType, target, policy);
    if (reachable !== null) {
      narrowed = true;
      // Over the target's alias, if it has one: never over a FROM entry that took the table's name.
      const targetAlias = body.relation!.alias;
      const condition = targetAlias ? requalify(reachable, String(targetAlias.aliasname)) : reachable;
      replaceUserFunctions({ condition }, policy.user.name);
      targetCondition = structuredClone(condition);
      // The tables the condition reads are the administrator's: read as they are.
      walk(condition, (key, node) => {
        if (key === 'RangeVar') access.approved.add(node);
      });
      checked.whereClause = allOf([checked.whereClause, condition]);
      replaceUserFunctions(checked.whereClause, policy.user.name);
    }
  }

  // Every other table the statement reads, and whether all of them are in the target's source.
  let sameSource = true;
  walk(checked, (key, node) => {
    if (key !== 'RangeVar' || node === checked.relation || access.cteReferences.has(node)) return;
    // Fail closed: a table named where the access rewrite did not look is not read.
    if (!access.approved.has(node)) {
      throw badRequest(
        `Table "${String(node.relname)}" is named where vdb does not read tables.`,
        'Name tables in FROM, JOIN and subqueries.',
        'Unsupported statement',
      );
    }
    const other = registry.resolve(typeof node.schemaname === 'string' ? node.schemaname : undefined, String(node.relname));
    if (other.origin !== 'rows' || other.source.name !== source.name) sameSource = false;
  });

  return {
    statementType,
    body,
    checked,
    target,
    source,
    connector,
    insertCondition,
    targetCondition,
    narrowed,
    sameSource,
    asWritten,
    cteReferences: access.cteReferences,
  };
}

/** A write that can go to its source neither as written nor chosen by the engine: refused, unless an INSERT ... SELECT the engine feeds. */
function refuseUnsent({ statementType, body, target, source, sameSource, asWritten }: CheckedWrite): void {
  if (sameSource && asWritten && (statementType !== 'InsertStmt' || !body.selectStmt)) {
    throw badRequest(
      `The row condition of your permission on ${target.schema}.${target.table.name} cannot be sent to ${source.name} (it uses functions, casts or CASE), so this ${statementType === 'UpdateStmt' ? 'UPDATE' : 'DELETE'} cannot run there.`,
      'Ask an administrator to write the condition with plain columns, values and operators, or to make this change.',
      'Unsupported statement',
    );
  }
  if (statementType !== 'InsertStmt' || !body.selectStmt) {
    throw badRequest(
      sameSource
        ? `This ${statementType === 'UpdateStmt' ? 'UPDATE' : 'DELETE'} cannot be sent to ${source.name} as written: only plain values, columns and operators are (no functions, casts, CASE or backslashes in strings).`
        : `${statementType === 'UpdateStmt' ? 'UPDATE' : 'DELETE'} can only read the target's own source (${source.name}).`,
      sameSource
        ? 'Compute the new values with a SELECT first, then write them as plain values.'
        : 'Compute the keys with a SELECT first, then write with their values.',
      'Unsupported statement',
    );
  }
  if (body.onConflictClause) {
    throw badRequest(
      'ON CONFLICT is supported only where the INSERT is sent to its source whole.',
      'Insert the rows of other sources without ON CONFLICT, or into a staging table first.',
      'Unsupported statement',
    );
  }
}

/**
 * An UPDATE or DELETE under a row condition on a source that may evaluate the condition otherwise
 * than the engine (keyed-write.ts): the engine chooses the rows, the source writes them by key.
 * Only the SET values go to the source as written, so only they must be plain there.
 */
async function chosenRowsWrite(
  statementType: 'UpdateStmt' | 'DeleteStmt',
  tree: ParseResult,
  body: WriteBody,
  checked: WriteBody,
  condition: Node,
  context: {
    target: ResolvedTable;
    source: SourceDef;
    connector: WritableConnector;
    registry: SourceRegistry;
    vdbName: string;
    selectRows: SelectRows;
    signal: AbortSignal;
    cteReferences: WeakSet<object>;
  },
): Promise<StaticResult & { sourceQueries: Array<{ source: string; sql: string }> }> {
  const { target, source, connector, signal } = context;
  if (body.fromClause && body.fromClause.length > 0) {
    throw badRequest(
      `UPDATE ... FROM cannot run under the row condition of your permission on ${target.schema}.${target.table.name}.`,
      'Compute the values with a SELECT first, then write them as plain values.',
      'Unsupported statement',
    );
  }
  const set: WriteBody = { relation: checked.relation, targetList: checked.targetList };
  if (!translatable(set, connector)) {
    throw badRequest(
      `This UPDATE cannot be sent to ${source.name} as written: only plain values, columns and operators are (no functions, casts, CASE or backslashes in strings).`,
      'Compute the new values with a SELECT first, then write them as plain values.',
      'Unsupported statement',
    );
  }
  const inTransaction = connector.writer.inTransaction?.bind(connector.writer);
  if (!inTransaction) throw forbidden(`Data source "${source.name}" cannot be written under a row condition.`);
  // The statement without its WHERE; a DELETE without the alias (MySQL takes none there), which nothing else reads.
  const relation = structuredClone(body.relation!);
  if (statementType === 'DeleteStmt') delete relation.alias;
  const written = statementType === 'UpdateStmt' ? { relation, targetList: structuredClone(checked.targetList) } : { relation };
  const statementSql = sourceStatement(
    { ...tree, stmts: [{ stmt: writeNode(statementType, written) }] },
    context.registry,
    source,
    connector,
    context.vdbName,
    context.cteReferences,
  );
  const { count, sql } = await writeChosenRows({
    statementType,
    body,
    target,
    condition,
    statementSql,
    writer: { dialect: connector.dialect, inTransaction },
    selectRows: context.selectRows,
    signal,
  }).catch((err: unknown) => Promise.reject(withholdDataErrors(writeError(source.name, err, signal))));
  return { ...countResult(count), sourceQueries: [{ source: source.name, sql }] };
}

/**
 * A failed write in the terms of the API: the statement's or the data's fault (constraint,
 * syntax, value) is a 400 with the source's message; the source's own trouble a 502/503.
 */
function writeError(source: string, err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ApiError) return err;
  if (err instanceof SourceUnreachableError) return sourceFailed(source, err.message, true);
  const { code, sqlState } = err as { code?: string; sqlState?: string };
  const state = sqlState ?? code ?? '';
  const refused = /^(22|23|42|0A|HY)/.test(state) || /^SQLITE_(CONSTRAINT|ERROR|MISMATCH|RANGE|TOOBIG)/.test(code ?? '');
  if (refused) return new ApiError(400, 'Write refused', `Data source "${source}" refused the write: ${messageOf(err)}`, null);
  return ownStorageFailure(err) ?? sourceFailed(source, messageOf(err), false);
}

function writableSource(target: ResolvedTable, registry: SourceRegistry): SourceDef {
  if (target.origin === 'view')
    throw forbidden(`${target.schema}.${target.table.name} is a view and cannot be written.`, 'Write to the tables it reads.');
  if (target.origin !== 'rows') {
    // Sources the engine reads itself (files, DuckDB files) are never written.
    const why =
      target.origin === 'system' ? 'system tables are read-only' : `${target.source?.kind ?? 'local copies'} sources are read-only`;
    throw forbidden(`${target.schema}.${target.table.name} cannot be written: ${why}.`);
  }
  if (target.table.kind !== 'Table') throw forbidden(`${target.schema}.${target.table.name} is a view and cannot be written.`);
  if (target.source.readOnly) {
    throw forbidden(`Data source "${target.source.name}" is read-only.`, 'Its definition has readOnly=true (modelProps).');
  }
  const connector = registry.connectorOf(target.source);
  if (connector.delivery !== 'rows' || !isWritable(connector)) throw forbidden(`Data source "${target.source.name}" cannot be written.`);
  return target.source;
}

/** A source that speaks PostgreSQL takes what our own dialect says; others (MySQL, SQLite) only plain expressions. */
function translatable(body: WriteBody, connector: WritableConnector): boolean {
  if (connector.dialect.speaksPostgres) {
    // Functions and casts of the same allow-list as whole SELECTs: nothing that reads files,
    // settings or other databases runs at the source.
    let safe = true;
    walk(body, (key, node) => {
      if (key === 'FuncCall') {
        const parts = fieldNames(node.funcname);
        if (parts.length !== 1 || !hasFact(parts[0]!.toLowerCase(), 'sameAtPostgres')) safe = false;
      }
      if (key === 'TypeCast') {
        const parts = fieldNames(node.typeName?.names).filter((n) => n !== 'pg_catalog');
        if (parts.length !== 1 || !SAFE_TYPES.has(parts[0]!.toLowerCase())) safe = false;
      }
      if (key === 'SQLValueFunction' || key === 'XmlExpr') safe = false;
    });
    return safe;
  }
  let plain = true;
  walk(body, (key, node) => {
    if (PORTABLE_FORBIDDEN.has(key)) plain = false;
    // PostgreSQL's spelling of such strings (E'...') is not theirs.
    if (key === 'A_Const' && node.sval && String(node.sval.sval ?? '').includes('\\')) plain = false;
  });
  return plain;
}

/** The statement with every table written as the source knows it (renamed in place). */
function sourceStatement(
  tree: ParseResult,
  registry: SourceRegistry,
  source: SourceDef,
  connector: WritableConnector,
  vdbName: string,
  cteReferences: WeakSet<object>,
): string {
  const copy = tree;
  const rename = (node: RangeVar) => {
    const resolved = registry.resolve(typeof node.schemaname === 'string' ? node.schemaname : undefined, String(node.relname));
    const { schema, table: name } = connector.dialect.tableName(resolved.table);
    delete node.catalogname;
    if (schema === undefined) delete node.schemaname;
    else node.schemaname = schema;
    node.relname = name;
  };
  const [, body] = writeOf(statementOf(copy)!);
  rename(body.relation!);
  walk(body, (key, node) => {
    if (key === 'RangeVar' && !cteReferences.has(node)) rename(node);
    if (key === 'ColumnRef' && Array.isArray(node.fields) && node.fields.length >= 3) {
      const first = asKind(node.fields[0], 'String');
      const name = String(first?.sval ?? '').toLowerCase();
      if (name === source.name.toLowerCase() || name === vdbName.toLowerCase())
        node.fields = node.fields.slice(name === vdbName.toLowerCase() ? 2 : 1);
    }
  });
  return deparseSync(copy).replace(/;\s*$/, '');
}

/** INSERT INTO target SELECT ...: the engine computes the rows; the target stores them. */
async function insertSelect(
  body: WriteBody,
  target: ResolvedTable,
  connector: WritableConnector,
  selectRows: SelectRows,
  signal: AbortSignal,
  conditions: string[] | null,
): Promise<number> {
  const named = Array.isArray(body.cols) ? targetNames(body.cols) : null;
  const columns = named
    ? named.map((name) => {
        const column = target.table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
        if (!column) throw new ApiError(404, 'Unknown column', `${target.schema}.${target.table.name} has no column "${name}".`, null);
        return column;
      })
    : target.table.columns;
  // The check's message is vdb's own: it passes where errors over narrowed data are withheld.
  const outside = ownMessage(outsideCondition(target));
  const rowsSelect = conditions === null ? body.selectStmt! : checkedRows(body.selectStmt!, columns, conditions, outside.text);
  const select: ParseResult = { version: 0, stmts: [{ stmt: rowsSelect }] };
  let rows: Awaited<ReturnType<SelectRows>>;
  try {
    rows = await selectRows(select, signal);
  } catch (err) {
    outside.release();
    throw err;
  }
  try {
    if (rows.columns !== columns.length) {
      throw badRequest(
        `The SELECT gives ${rows.columns} column(s); ${columns.length} are written.`,
        'List the target columns: INSERT INTO t (a, b) SELECT ...',
        'Column count mismatch',
      );
    }
    return await connector.writer.insertRows(target.table, columns, rows.rows, signal);
  } catch (err) {
    if (conditions !== null && err instanceof ApiError && err.description.includes(outside.text)) {
      throw forbidden(outsideCondition(target), 'Nothing was inserted. Insert only rows your permission covers.');
    }
    throw err;
  } finally {
    rows.close();
    outside.release();
  }
}

const countResult = (count: number): StaticResult => ({ columns: ['Count'], rows: [[count]] });
