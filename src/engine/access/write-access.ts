/**
 * The permission side of INSERT, UPDATE and DELETE: which letters a write needs on which
 * columns, which target columns it may read, what a row condition does to it, and the checks
 * that new rows of a conditioned INSERT must pass. The write itself is dml.ts's.
 */
import type { DeleteStmt, InsertStmt, Node, OnConflictClause, SelectStmt, UpdateStmt } from '@pgsql/types';
import { vdbOwn } from '../front/allow-list.js';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { BindCatalog } from './bind-catalog.js';
import type { ColumnDef } from '../../catalog/types.js';
import { forbidden } from '../../errors.js';
import type { AccessPolicy } from '../../security/permissions.js';
import { anyOfConditions, applyAccess, requalify, trustTablesOf, type AccessRewrite } from './access.js';
import { asKind, fieldNames, nameNode, walk } from '../tree/ast.js';
import { parseExpression } from '../front/parse.js';

/** The body of an INSERT, UPDATE or DELETE: the fields of all three, of which each statement has its own. */
export type WriteBody = InsertStmt & UpdateStmt & DeleteStmt;

/** The column names of an INSERT's column list or an UPDATE's SET list. */
export const targetNames = (items: Node[]): string[] => items.map((c) => String(asKind(c, 'ResTarget')!.name));

/**
 * The write permissions of a statement: CREATE on the columns an INSERT fills, UPDATE on the
 * columns an UPDATE sets, DELETE on the table. Returns the row conditions new rows must meet
 * (an INSERT through a conditioned grant), null when there are none.
 */
export function checkWritePermission(statementType: string, body: WriteBody, target: ResolvedTable, policy: AccessPolicy): string[] | null {
  const path = [target.schema, target.table.name];
  if (statementType === 'DeleteStmt') {
    policy.require('D', path);
    return null;
  }
  const action = statementType === 'InsertStmt' ? 'C' : 'U';
  const list = body.cols ?? body.targetList;
  const named = list ? targetNames(list) : [];
  // Unknown columns are the source's to report.
  const columns = (named.length > 0 ? named : target.table.columns.map((c) => c.name))
    .map((name) => target.table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase()))
    .filter((c): c is ColumnDef => c !== undefined);
  const denied = columns.filter((c) => !policy.allows(action, [...path, c.name]));
  if (denied.length > 0 && !policy.allows(action, path)) throw policy.denial(action, path, 'table');
  if (denied.length > 0) throw policy.denial(action, [...path, denied[0]!.name], 'column');
  const conditions = policy.rowConditions(action, target.schema, target.table);
  if (conditions === null) return null;
  const read = conditionColumns(conditions, target);
  if (action === 'U') {
    // A row must not leave the rows the user may change by the change itself.
    const moved = columns.filter((c) => read.has(c.name.toLowerCase()));
    if (moved.length > 0) {
      throw forbidden(
        `UPDATE may not set ${moved.map((c) => c.name).join(', ')}: the condition of your permission on ${target.schema}.${target.table.name} reads ${moved.length === 1 ? 'it' : 'them'}.`,
        'An administrator can make this change.',
      );
    }
    return null;
  }
  // New rows are checked against the condition, so it must see every column it reads.
  const missing = [...read].filter((name) => named.length > 0 && !columns.some((c) => c.name.toLowerCase() === name));
  if (missing.length > 0) {
    throw forbidden(
      `An INSERT into ${target.schema}.${target.table.name} must give the columns the condition of your permission reads (${missing.join(', ')}).`,
      'List those columns with their values.',
    );
  }
  return conditions;
}

/** The target's columns that row conditions read (lower case). */
function conditionColumns(conditions: string[], target: ResolvedTable): Set<string> {
  const names = new Set<string>();
  for (const condition of conditions) {
    walk(parseExpression(condition, 'condition'), (key, node) => {
      if (key !== 'ColumnRef') return;
      const name = fieldNames(node.fields).pop()?.toLowerCase() ?? '';
      if (target.table.columns.some((c) => c.name.toLowerCase() === name)) names.add(name);
    });
  }
  return names;
}

/**
 * INSERT ... ON CONFLICT DO UPDATE updates existing rows: UPDATE on the columns it sets, the
 * target's columns it reads readable unmasked, and no row condition on UPDATE (the existing
 * row could be outside it).
 */
export function checkConflictUpdate(
  conflict: OnConflictClause,
  insert: InsertStmt,
  target: ResolvedTable,
  policy: AccessPolicy,
  registry: BindCatalog,
): void {
  if (conflict.action !== 'ONCONFLICT_UPDATE' || policy.admin) return;
  const path = [target.schema, target.table.name];
  for (const name of targetNames(conflict.targetList ?? [])) {
    const column = target.table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (column && !policy.allows('U', [...path, column.name])) throw policy.denial('U', [...path, column.name], 'column');
    if (!column && !policy.allows('U', path)) throw policy.denial('U', path, 'table');
  }
  if (policy.rowConditions('U', target.schema, target.table) !== null) {
    throw forbidden(
      `ON CONFLICT DO UPDATE cannot be checked against the condition of your permission on ${path.join('.')}.`,
      'Update the rows with UPDATE.',
    );
  }
  checkTargetReads(
    'UpdateStmt',
    { relation: insert.relation, targetList: conflict.targetList, whereClause: conflict.whereClause },
    target,
    policy,
    registry,
  );
}

/**
 * UPDATE and DELETE read the target's columns (in SET values and WHERE): only those the user may
 * read as they are. A hidden or masked column there would let its values be copied or probed.
 * Inside a subquery, a bare name is the target's only where no table of the subquery (or of one
 * around it) has a column of that name, as SQL resolves it.
 */
export function checkTargetReads(
  statementType: string,
  body: WriteBody,
  target: ResolvedTable,
  policy: AccessPolicy,
  registry: BindCatalog,
): void {
  if (statementType === 'InsertStmt' || policy.admin) return;
  const relation = body.relation!;
  const alias = String(relation.alias?.aliasname ?? relation.relname).toLowerCase();
  const { relation: _target, ...reads } = body;
  const named = (name: string) => target.table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());

  const check = (fields: string[], scopes: Array<Set<string> | null>) => {
    const last = fields[fields.length - 1]!;
    if (fields.length > 1 && fields[fields.length - 2]!.toLowerCase() !== alias) return;
    if (fields.length === 1 && last !== '*' && scopes.some((columns) => columns?.has(last.toLowerCase()))) return;
    // `t`, `t.*` and `*` read the whole row: every column.
    const wholeRow = last === '*' || (fields.length === 1 && last.toLowerCase() === alias && !named(last));
    if (last === '*' && fields.length === 1 && scopes.length > 0) return; // a subquery's own *
    for (const column of wholeRow ? target.table.columns : [named(last)].filter((c): c is ColumnDef => c !== undefined)) {
      const path = [target.schema, target.table.name, column.name];
      if (!policy.allows('R', path)) throw policy.denial('R', path, 'column');
      if (policy.columnMask(target.schema, target.table, column) !== null) {
        throw forbidden(
          `Column ${path.join('.')} is masked for user "${policy.user.name}": a write may not read it.`,
          'Write without reading that column, or ask an administrator.',
        );
      }
    }
  };
  /** The column names of a subquery's FROM tables; null when one is not a plain table. */
  const columnsOfFrom = (select: SelectStmt): Set<string> | null => {
    const columns = new Set<string>();
    let known = true;
    const visit = (item: Node | undefined): void => {
      if (!item) return;
      if ('JoinExpr' in item) return [item.JoinExpr.larg, item.JoinExpr.rarg].forEach(visit);
      const range = asKind(item, 'RangeVar') ?? null;
      try {
        const resolved = range
          ? registry.resolve(typeof range.schemaname === 'string' ? range.schemaname : undefined, String(range.relname))
          : null;
        // Only the columns the user sees there: a hidden one is not in the subquery, so its name means the target's.
        const visible =
          resolved === null
            ? null
            : resolved.origin === 'system'
              ? resolved.table.columns
              : policy.readableColumns(resolved.schema, resolved.table);
        if (visible) for (const column of visible) columns.add(column.name.toLowerCase());
        else known = false;
      } catch {
        known = false; // a WITH query's name, or unknown: it may or may not shadow
      }
    };
    for (const item of select.fromClause ?? []) visit(item);
    return known ? columns : null;
  };
  // A subquery's column references are read in the scopes around it and its own.
  const visit = (value: unknown, scopes: Array<Set<string> | null>): void =>
    walk(value, (nodeType, node) => {
      if (nodeType === 'SelectStmt') {
        visit(node, [...scopes, columnsOfFrom(node)]);
        return 'skip';
      }
      if (nodeType === 'ColumnRef') check(fieldNames(node.fields), scopes);
    });
  visit(reads, []);
}

/**
 * The rows an UPDATE or DELETE may reach, as a condition over the target; null for every row.
 * Those meeting a condition of a role granting the write's letter and, for a user who reads the
 * table, also one of the roles granting the read: the count of rows written never tells about
 * rows the user may not read, nor does a WHERE probe them (PostgreSQL applies SELECT policies to
 * writes that read their rows; this holds for every write of a reader). A user who may not read
 * the table at all writes by the letter's conditions alone, as in PostgreSQL.
 */
export function reachableRows(statementType: 'UpdateStmt' | 'DeleteStmt', target: ResolvedTable, policy: AccessPolicy): Node | null {
  const { table } = target;
  const write = policy.rowConditions(statementType === 'UpdateStmt' ? 'U' : 'D', target.schema, table);
  const read = policy.canRead(target.schema, table) ? policy.rowConditions('R', target.schema, table) : null;
  if (write === null && read === null) return null;
  return allOf([write === null ? undefined : anyOfConditions(write), read === null ? undefined : anyOfConditions(read)]);
}

/** Checks and narrows the tables a write statement reads (not its target), as for a SELECT. */
export function applyWriteAccess(body: WriteBody, registry: BindCatalog, policy: AccessPolicy): AccessRewrite {
  const { relation, usingClause, ...rest } = body;
  // DELETE ... USING lists tables like a FROM.
  const reads = usingClause === undefined ? rest : { ...rest, fromClause: usingClause };
  const access = applyAccess(reads, registry, policy);
  Object.assign(body, reads, { relation });
  if (usingClause !== undefined) {
    body.usingClause = reads.fromClause;
    delete body.fromClause;
  }
  return access;
}

export const allOf = (conditions: Array<Node | undefined>): Node => {
  const present = conditions.filter((c): c is Node => c !== undefined && c !== null);
  return present.length === 1 ? present[0]! : { BoolExpr: { boolop: 'AND_EXPR', args: present } };
};

export const outsideCondition = (target: ResolvedTable) =>
  `A new row of ${target.schema}.${target.table.name} is outside the rows you may insert (the condition of your permission).`;

/**
 * The rows of an INSERT whose grant carries row conditions, each checked: a row that meets none
 * fails the statement (the engine's error() stops it, and the target's transaction rolls back).
 */
export function checkedRows(select: Node, columns: readonly ColumnDef[], conditions: string[], message: string): Node {
  const check: Node = {
    CaseExpr: {
      args: [
        {
          CaseWhen: {
            expr: trustTablesOf(requalify(anyOfConditions(conditions), '__vdb_new')),
            result: { A_Const: { boolval: { boolval: true } } },
          },
        },
      ],
      defresult: {
        FuncCall: vdbOwn({
          funcname: [nameNode('error')],
          args: [{ A_Const: { sval: { sval: message } } }],
          funcformat: 'COERCE_EXPLICIT_CALL',
        }),
      },
    },
  };
  const colnames = columns.map((c) => nameNode(c.name));
  // The values as the target's column types hold them (rounded decimals, ...): what is checked is what is stored.
  const typed: Node = {
    SelectStmt: {
      targetList: columns.map((c) => ({ ResTarget: { name: c.name, val: storedValue(c) } })),
      fromClause: [{ RangeSubselect: { subquery: select, alias: { aliasname: '__vdb_raw', colnames } } }],
      limitOption: 'LIMIT_OPTION_DEFAULT',
      op: 'SETOP_NONE',
    },
  };
  return {
    SelectStmt: {
      targetList: [{ ResTarget: { val: { ColumnRef: { fields: [{ A_Star: {} }] } } } }],
      fromClause: [{ RangeSubselect: { subquery: typed, alias: { aliasname: '__vdb_new' } } }],
      whereClause: check,
      limitOption: 'LIMIT_OPTION_DEFAULT',
      op: 'SETOP_NONE',
    },
  };
}

/** `CAST(__vdb_raw.column AS type)`, or the plain value where the engine type is not a SQL type name. */
function storedValue(column: ColumnDef): Node {
  const value: Node = { ColumnRef: { fields: [nameNode('__vdb_raw'), nameNode(column.name)] } };
  try {
    const cast = asKind(parseExpression(`CAST(NULL AS ${column.type})`, 'type'), 'TypeCast');
    // The engine's type of the column, written by vdb: not a type the user chose.
    if (cast?.typeName) return { TypeCast: { ...cast, typeName: vdbOwn(cast.typeName), arg: value } };
  } catch {
    // Not a type name the parser reads (e.g. a nested type): the value as given.
  }
  return value;
}
