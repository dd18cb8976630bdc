/**
 * CREATE MATERIALIZED VIEW schema.name [(columns)] [WITH (refresh_every = ..., max_staleness = ...)]
 * AS SELECT ... [WITH [NO] DATA], REFRESH MATERIALIZED VIEW and DROP MATERIALIZED VIEW
 * (docs/copies.md, "Materialized views").
 *
 * A materialized view is a local copy of kind 'view': its SELECT, its columns (learned as a
 * view's), its schedule; its refresh always runs the SELECT whole (copy-refresh.ts). It lives in
 * a virtual schema as views do, and the same rules hold: ALTER on the schema to create, refresh
 * or drop one; its SELECT checked by running it as its creator, who must read in full what it
 * reads; READ on it to read it (access.ts decides whether a statement reads its copy or its SELECT).
 */
import { deparseSync } from 'pgsql-deparser';
import type { CreateTableAsStmt, DropStmt, Node, RefreshMatViewStmt } from '@pgsql/types';
import type { CopyDef, ViewDef } from '../../catalog/types.js';
import { materializedCopyOf } from '../../catalog/materialized-views.js';
import { ApiError, badRequest, forbidden, notFound } from '../../errors.js';
import { CopyExistsError } from '../../sources/copies.js';
import { asKind, fieldNames, statementOf, walk } from '../tree/ast.js';
import { parseStatement } from '../front/parse.js';
import type { StaticResult } from '../exec/static-result.js';
import { durationSeconds, type CopyService } from './copies.js';
import { pathTo, readsView, viewColumns, type ViewContext } from './views.js';

export interface MaterializedViewContext extends ViewContext {
  copies: CopyService;
  signal: AbortSignal;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The options of WITH (...): the schedule, as SYSADMIN.accelerateTable takes it. */
const OPTIONS: Record<string, 'refreshEvery' | 'maxStaleness'> = { refresh_every: 'refreshEvery', max_staleness: 'maxStaleness' };

/** The schedule options of WITH (...), each a duration in seconds. */
function scheduleOf(options: Node[] | undefined): { refreshEvery: number | null; maxStaleness: number | null } {
  const schedule = { refreshEvery: null as number | null, maxStaleness: null as number | null };
  for (const option of options ?? []) {
    const element = asKind(option, 'DefElem');
    const key = OPTIONS[String(element?.defname ?? '').toLowerCase()];
    if (!element || !key)
      throw badRequest(
        `Option "${String(element?.defname ?? '')}" of a materialized view is not known.`,
        `Options: ${Object.keys(OPTIONS).join(', ')}.`,
        'Invalid materialized view',
      );
    const arg = element.arg;
    const text = !arg
      ? null
      : 'String' in arg
        ? String(arg.String.sval ?? '')
        : 'Integer' in arg
          ? String(arg.Integer.ival ?? 0)
          : 'Float' in arg
            ? String(arg.Float.fval ?? '')
            : null;
    if (text === null)
      throw badRequest(`Option ${element.defname} takes a duration, e.g. '10 minutes'.`, null, 'Invalid materialized view');
    schedule[key] = durationSeconds(text, String(element.defname));
  }
  return schedule;
}

/** The materialized view named `parts` (schema, name), or undefined; 400 for a name without its schema. */
function findMaterialized(parts: string[], registry: ViewContext['registry']): { view: ViewDef; copy: CopyDef } | undefined {
  if (parts.length !== 2)
    throw badRequest('Name the materialized view with its schema, e.g. views.name.', null, 'Invalid materialized view');
  const [schema, name] = parts as [string, string];
  const view = registry.views.find((v) => same(v.schema, schema) && same(v.name, name));
  if (!view) return undefined;
  const copy = materializedCopyOf(view);
  if (!copy)
    throw badRequest(`${view.schema}.${view.name} is a view, not a materialized view.`, 'DROP VIEW removes views.', 'Wrong object type');
  return { view, copy };
}

const unknown = (parts: string[]) =>
  notFound(
    `Materialized view ${parts.join('.')} does not exist.`,
    'SYS.Tables lists the materialized views (Type View, IsMaterialized true).',
    'Unknown materialized view',
  );

/** CURRENT_USER and its kind in a SELECT or the views it reads: a copy is the same for every reader. */
function readsUserName(select: Node | undefined, registry: ViewContext['registry'], seen: string[] = []): boolean {
  let found = false;
  walk(select, (nodeType, node) => {
    if (nodeType === 'SQLValueFunction' && /USER|ROLE/.test(String(node.op))) found = true;
    if (nodeType !== 'RangeVar' || found) return;
    const written = typeof node.schemaname === 'string' ? node.schemaname : undefined;
    const view = registry.views.find((v) => same(v.name, String(node.relname ?? '')) && (written === undefined || same(v.schema, written)));
    const key = view ? `${view.schema}.${view.name}` : '';
    if (view && !seen.includes(key)) found = readsUserName(statementOf(parseStatement(view.sql)), registry, [...seen, key]);
  });
  return found;
}

/** Checks the definition as CREATE VIEW does; returns the SELECT's text. */
function checkedSelect(statement: CreateTableAsStmt, schema: string, name: string, context: MaterializedViewContext): string {
  const { registry, policy } = context;
  const query = statement.query;
  if (!query || !('SelectStmt' in query))
    throw badRequest('A materialized view is defined by a SELECT.', null, 'Invalid materialized view');
  const circle = pathTo(query, registry, schema, name, []);
  if (circle)
    throw badRequest(
      `Materialized view ${schema}.${name} would read itself (${[`${schema}.${name}`, ...circle, `${schema}.${name}`].join(' -> ')}).`,
      'Views may not read each other in a circle.',
      'Invalid materialized view',
    );
  if (readsUserName(query, registry))
    throw badRequest(
      'A materialized view cannot depend on who reads it (CURRENT_USER, SESSION_USER, USER, CURRENT_ROLE).',
      'Use a view (CREATE VIEW): it runs for each reader.',
      'Invalid materialized view',
    );
  const sql = deparseSync({ version: 0, stmts: [{ stmt: query }] }).replace(/;\s*$/, '');
  // Its copy holds every row the SELECT gives: made only over what the creator reads in full.
  if (!policy.admin) {
    const narrowed = context.narrowedFor(parseStatement(sql));
    if (narrowed.size > 0) {
      throw forbidden(
        `You see only part of ${[...narrowed].join(', ')} (hidden columns, row conditions or masks); a materialized view over ${narrowed.size === 1 ? 'it' : 'them'} would show its readers more.`,
        'Ask an administrator to create this materialized view.',
      );
    }
  }
  return sql;
}

const RESULT_COLUMNS = ['Name', 'Columns', 'RowCount', 'Action'];

/** CREATE MATERIALIZED VIEW: defined, then (unless WITH NO DATA) refreshed before the statement answers. */
export async function createMaterializedView(statement: CreateTableAsStmt, context: MaterializedViewContext): Promise<StaticResult> {
  const { registry, policy } = context;
  const into = statement.into!;
  const target = into.rel!;
  const written = typeof target.schemaname === 'string' ? target.schemaname : undefined;
  const name = String(target.relname ?? '');
  if (!written)
    throw badRequest(
      'A materialized view needs a schema: CREATE MATERIALIZED VIEW views.name AS SELECT ...',
      'Materialized views live in virtual schemas, as views do.',
      'Invalid materialized view',
    );
  if (into.accessMethod || into.tableSpaceName)
    throw badRequest('USING and TABLESPACE are not supported: vdb keeps the copy in its copies folder.', null, 'Unsupported statement');
  const schedule = scheduleOf(into.options);
  const schema = registry.viewSchema(written);
  const existingSchema = registry.virtualSchemas().find((v) => same(v, schema));
  policy.require('A', existingSchema ? [existingSchema] : [], 'schema');
  const taken = registry.views.find((v) => same(v.schema, schema) && same(v.name, name));
  if (taken && statement.if_not_exists) return { columns: RESULT_COLUMNS, rows: [[`${taken.schema}.${taken.name}`, null, null, 'exists']] };
  if (taken) throw new ApiError(409, 'Conflict', `${taken.schema}.${taken.name} already exists.`, 'Choose another name, or drop it first.');
  const sql = checkedSelect(statement, schema, name, context);
  const columns = await viewColumns(sql, into.colNames, context);
  let copy: CopyDef;
  try {
    copy = await registry.copies.define({
      ...{ name: `${schema}.${name}`, schema, table: name, kind: 'view', sql, columns, mode: 'full', changeColumn: null, keyColumns: [] },
      ...{ refreshEvery: schedule.refreshEvery, fullRefreshEvery: null, maxStaleness: schedule.maxStaleness, paused: false },
      ...{ current: null, lastError: null, failures: 0, lastAttemptAt: null, lastFullAt: null, history: [] },
      ...{ owner: policy.user.name, createdAt: new Date().toISOString() },
    });
  } catch (err) {
    if (!(err instanceof CopyExistsError)) throw err;
    if (statement.if_not_exists) return { columns: RESULT_COLUMNS, rows: [[err.copyName, null, null, 'exists']] };
    throw new ApiError(409, 'Conflict', `${err.copyName} already exists.`, 'Choose another name, or drop it first.');
  }
  let rows: number | null = null;
  if (!into.skipData) {
    try {
      rows = (await context.copies.refresh(copy.name, 'full', context.signal))?.current?.rows ?? null;
    } catch (err) {
      // As PostgreSQL's: a SELECT that fails leaves nothing behind.
      await context.copies.drop(copy.name).catch(() => undefined);
      throw err;
    }
  }
  context.auditLog?.record({ user: policy.user.name, action: 'create materialized view', target: copy.name, outcome: 'ok', address: null });
  return { columns: RESULT_COLUMNS, rows: [[copy.name, columns.length, rows, 'created']] };
}

/** REFRESH MATERIALIZED VIEW [CONCURRENTLY]: a full refresh now (readers keep the last copy until it is swapped in). */
export async function refreshMaterializedView(statement: RefreshMatViewStmt, context: MaterializedViewContext): Promise<StaticResult> {
  const relation = statement.relation!;
  const parts = [typeof relation.schemaname === 'string' ? relation.schemaname : '', String(relation.relname ?? '')].filter(Boolean);
  const found = findMaterialized(parts, context.registry);
  if (!found) throw unknown(parts);
  context.policy.require('A', [found.view.schema], 'schema');
  if (statement.skipData)
    throw badRequest(
      'REFRESH MATERIALIZED VIEW ... WITH NO DATA is not supported.',
      'SYSADMIN.pauseCopy stops its scheduled refreshes; DROP MATERIALIZED VIEW removes it.',
      'Unsupported statement',
    );
  const refreshed = await context.copies.refresh(found.copy.name, 'full', context.signal);
  const columns = ['Name', 'RowCount', 'RefreshedAt', 'Action'];
  if (!refreshed) return { columns, rows: [[found.copy.name, null, null, 'refreshing on another instance']] };
  context.auditLog?.record({
    user: context.policy.user.name,
    action: 'refresh materialized view',
    target: refreshed.name,
    outcome: 'ok',
    address: null,
  });
  return { columns, rows: [[refreshed.name, refreshed.current?.rows ?? null, refreshed.current?.readAt ?? null, 'refreshed']] };
}

/** DROP MATERIALIZED VIEW a, b, ...: all of them or, on any error, none; never one a view still reads. */
export async function dropMaterializedViews(
  statement: DropStmt,
  context: Omit<MaterializedViewContext, 'openSelect' | 'narrowedFor'>,
): Promise<StaticResult> {
  const { registry, policy } = context;
  const dropping: Array<{ view: ViewDef; copy: CopyDef }> = [];
  for (const object of statement.objects ?? []) {
    const parts = fieldNames(asKind(object, 'List')?.items);
    const found = findMaterialized(parts, registry);
    if (!found) {
      if (statement.missing_ok) continue;
      throw unknown(parts);
    }
    policy.require('A', [found.view.schema], 'schema');
    if (!dropping.some((d) => d.copy.oid === found.copy.oid)) dropping.push(found);
  }
  for (const { view } of dropping) {
    // Views dropped by the same statement do not hold it.
    const dependents = registry.views.filter(
      (v) => !dropping.some((d) => d.view === v) && readsView(statementOf(parseStatement(v.sql)), registry, view.schema, view.name),
    );
    if (dependents.length > 0) {
      throw new ApiError(
        409,
        'Conflict',
        `Materialized view ${view.schema}.${view.name} is read by ${dependents.map((v) => `${v.schema}.${v.name}`).join(', ')}.`,
        'Drop or replace those views first (or in the same statement).',
      );
    }
  }
  for (const { view, copy } of dropping) {
    // Its grants first: a new materialized view of its name starts without them.
    await registry.removePermissionsOn(view.schema, view.name);
    await context.copies.drop(copy.name);
    context.auditLog?.record({ user: policy.user.name, action: 'drop materialized view', target: copy.name, outcome: 'ok', address: null });
  }
  return { columns: ['Name', 'Action'], rows: dropping.map(({ copy }) => [copy.name, 'dropped']) };
}
