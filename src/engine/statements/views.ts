/**
 * CREATE [OR REPLACE] VIEW schema.name [(columns)] AS SELECT ... and DROP VIEW [IF EXISTS].
 *
 * Views live in virtual schemas (any schema name that is not a data source's or the system's;
 * the schema exists while it holds a view). Creating, replacing or dropping one needs ALTER on
 * its schema (ALTER on `*` for a schema that does not exist yet). The SELECT is checked by
 * running it, without rows, as its creator: a view can only show what its creator may read.
 * Reading a view then needs READ on the view (see access.ts).
 */
import { deparseSync } from 'pgsql-deparser';
import type { DropStmt, Node, ParseResult, ViewStmt } from '@pgsql/types';
import type { SourceRegistry } from '../../sources/registry.js';
import type { ColumnDef, ViewDef } from '../../catalog/types.js';
import { ApiError, badRequest, forbidden, notFound } from '../../errors.js';
import type { AccessPolicy } from '../../security/permissions.js';
import type { AuditLog } from '../../catalog/audit-log.js';
import { asKind, fieldNames, statementOf, walk } from '../tree/ast.js';
import type { Execution } from '../exec/execute.js';
import { parseStatement } from '../front/parse.js';
import type { StaticResult } from '../exec/static-result.js';
import { columnTypeName } from '../../results/json.js';
import { materializedCopyOf } from '../../catalog/materialized-views.js';

export interface ViewContext {
  registry: SourceRegistry;
  policy: AccessPolicy;
  auditLog?: AuditLog;
  /** Opens a SELECT as the creator (to check it and learn its columns). */
  openSelect(tree: ParseResult): Promise<Execution>;
  /** The tables a SELECT reads that the creator sees only part of. */
  narrowedFor(tree: ParseResult): Set<string>;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export async function createView(statement: ViewStmt, context: ViewContext): Promise<StaticResult> {
  const { registry, policy } = context;
  const target = statement.view!;
  const schema = typeof target.schemaname === 'string' ? target.schemaname : undefined;
  const name = String(target.relname ?? '');
  if (!schema)
    throw badRequest(
      'A view needs a schema: CREATE VIEW views.name AS SELECT ...',
      'Views live in virtual schemas, e.g. views.',
      'Invalid view',
    );
  if (target.relpersistence === 't') throw badRequest('Temporary views are not supported.', null, 'Unsupported statement');
  if (statement.withCheckOption && statement.withCheckOption !== 'NO_CHECK_OPTION')
    throw badRequest('WITH CHECK OPTION is not supported: views are read-only.', null, 'Unsupported statement');
  if (Array.isArray(statement.options) && statement.options.length > 0)
    throw badRequest('View options (WITH (...)) are not supported.', null, 'Unsupported statement');
  const existingSchema = registry.virtualSchemas().find((v) => same(v, schema));
  policy.require('A', existingSchema ? [existingSchema] : [], 'schema');

  const query = statement.query;
  if (!query || !('SelectStmt' in query)) throw badRequest('A view is defined by a SELECT.', null, 'Invalid view');
  const circle = pathTo(query, registry, schema, name, []);
  if (circle)
    throw badRequest(
      `View ${schema}.${name} would read itself (${[`${schema}.${name}`, ...circle, `${schema}.${name}`].join(' -> ')}).`,
      'Views may not read each other in a circle.',
      'Invalid view',
    );
  const sql = deparseSync({ version: 0, stmts: [{ stmt: query }] }).replace(/;\s*$/, '');
  // Readers of a view see its tables with their own permissions: a view must not show more
  // than its creator may read, so it is made only over what the creator reads in full.
  if (!policy.admin) {
    const narrowed = context.narrowedFor(parseStatement(sql));
    if (narrowed.size > 0) {
      throw forbidden(
        `You see only part of ${[...narrowed].join(', ')} (hidden columns, row conditions or masks); a view over ${narrowed.size === 1 ? 'it' : 'them'} would show its readers more.`,
        'Ask an administrator to create this view.',
      );
    }
  }
  const columns = await viewColumns(sql, statement.aliases, context);
  const view = await registry.saveView(
    {
      schema,
      name,
      nameInSource: name,
      kind: 'View',
      sql,
      columns,
      primaryKey: [],
      cardinality: null,
      description: null,
      owner: policy.user.name,
      createdAt: new Date().toISOString(),
    },
    statement.replace === true,
  );
  context.auditLog?.record({
    user: policy.user.name,
    action: statement.replace ? 'create or replace view' : 'create view',
    target: `${view.schema}.${view.name}`,
    outcome: 'ok',
    address: null,
  });
  return { columns: ['Name', 'Columns', 'Action'], rows: [[`${view.schema}.${view.name}`, columns.length, 'created']] };
}

/** DROP VIEW a, b, ...: all of them or, on any error, none. */
export async function dropViews(statement: DropStmt, context: Omit<ViewContext, 'openSelect' | 'narrowedFor'>): Promise<StaticResult> {
  const { registry, policy } = context;
  const dropping: ViewDef[] = [];
  for (const object of statement.objects ?? []) {
    const parts = fieldNames(asKind(object, 'List')?.items);
    if (parts.length !== 2) throw badRequest('Name the view with its schema: DROP VIEW views.name.', null, 'Invalid view');
    const [schema, name] = parts as [string, string];
    const view = registry.views.find((v) => same(v.schema, schema) && same(v.name, name));
    if (!view) {
      if (statement.missing_ok) continue;
      throw notFound(`View ${schema}.${name} does not exist.`, 'SYS.Tables lists the views (Type View).', 'Unknown view');
    }
    if (materializedCopyOf(view))
      throw badRequest(
        `${view.schema}.${view.name} is a materialized view.`,
        'Use DROP MATERIALIZED VIEW to remove it.',
        'Wrong object type',
      );
    policy.require('A', [view.schema], 'schema');
    if (!dropping.includes(view)) dropping.push(view);
  }
  for (const view of dropping) {
    // Views dropped by the same statement do not hold it.
    const dependents = registry.views.filter(
      (v) => !dropping.includes(v) && readsView(statementOf(parseStatement(v.sql)), registry, view.schema, view.name),
    );
    if (dependents.length > 0) {
      throw new ApiError(
        409,
        'Conflict',
        `View ${view.schema}.${view.name} is read by ${dependents.map((v) => `${v.schema}.${v.name}`).join(', ')}.`,
        'Drop or replace those views first (or in the same statement).',
      );
    }
  }
  await registry.removeViews(dropping);
  for (const view of dropping) {
    context.auditLog?.record({
      user: policy.user.name,
      action: 'drop view',
      target: `${view.schema}.${view.name}`,
      outcome: 'ok',
      address: null,
    });
  }
  return { columns: ['Name', 'Action'], rows: dropping.map((v) => [`${v.schema}.${v.name}`, 'dropped']) };
}

/**
 * The views through which a SELECT reaches view schema.name (its names, in order), or null
 * when it does not: a new definition must not make views read each other in a circle.
 */
export function pathTo(select: Node | undefined, registry: SourceRegistry, schema: string, name: string, seen: string[]): string[] | null {
  const named: ViewDef[] = [];
  let direct = false;
  walk(select, (nodeType, node) => {
    if (nodeType !== 'RangeVar') return;
    const relname = String(node.relname ?? '');
    const written = typeof node.schemaname === 'string' ? node.schemaname : undefined;
    if (same(relname, name) && (written === undefined || same(written, schema))) direct = true;
    const view = registry.views.find((v) => same(v.name, relname) && (written === undefined || same(v.schema, written)));
    if (view && !named.includes(view)) named.push(view);
  });
  if (direct) return [];
  for (const view of named) {
    const key = `${view.schema}.${view.name}`;
    if (seen.includes(key)) continue;
    const rest = pathTo(statementOf(parseStatement(view.sql)), registry, schema, name, [...seen, key]);
    if (rest) return [key, ...rest];
  }
  return null;
}

/** Whether a SELECT names the view schema.name (directly). */
export function readsView(select: Node | undefined, registry: SourceRegistry, schema: string, name: string): boolean {
  let found = false;
  walk(select, (nodeType, node) => {
    if (nodeType !== 'RangeVar' || !same(String(node.relname ?? ''), name)) return;
    const named = typeof node.schemaname === 'string' ? node.schemaname : undefined;
    if (named !== undefined ? same(named, schema) : registry.views.some((v) => same(v.schema, schema) && same(v.name, name))) found = true;
  });
  return found;
}

/** The view's columns: its SELECT run without rows, as the creator (a materialized view's too). */
export async function viewColumns(sql: string, aliases: Node[] | undefined, context: ViewContext): Promise<ColumnDef[]> {
  // Parenthesised, the SELECT keeps its own column names, repeated ones included.
  const probe = parseStatement(`(${sql}) LIMIT 0`);
  const execution = await context.openSelect(probe);
  let described: Array<{ name: string; type: string }>;
  try {
    described = execution.columns.map((c) => ({ name: c.name, type: c.type.alias === 'JSON' ? 'JSON' : columnTypeName(c.type) }));
  } finally {
    execution.close();
  }
  const names = fieldNames(aliases);
  if (names.length > described.length)
    throw badRequest(`The view names ${names.length} columns; its SELECT gives ${described.length}.`, null, 'Invalid view');
  const columns = described.map((c, i): ColumnDef => ({
    name: names[i] ?? c.name,
    nameInSource: names[i] ?? c.name,
    type: c.type,
    nullable: true,
    position: i + 1,
  }));
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column.name.toLowerCase())) {
      throw badRequest(
        `The view would have two columns named "${column.name}".`,
        'Give the columns distinct names with AS.',
        'Invalid view',
      );
    }
    seen.add(column.name.toLowerCase());
  }
  return columns;
}
