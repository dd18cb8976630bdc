/**
 * Access control inside statements. Before binding, every table a statement reads (in FROM, in
 * joins, in subqueries, in CTEs) is checked against the user's permissions, and where the user
 * sees less than the whole table it is replaced by a subquery that shows only what they may:
 *
 *     FROM hr.employees e   ->   FROM (SELECT id, name, (mask) AS salary
 *                                      FROM hr.employees AS employees
 *                                      WHERE (condition)) AS e
 *
 * Columns the user may not read are left out of that subquery (a statement naming one gets a
 * 403), row conditions become its WHERE and masks replace column values. Because the rewrite
 * happens on the syntax tree, everything downstream treats it like any subquery: the planner
 * pushes the condition to the source like any WHERE, and whole-statement pushdown sends it
 * along. System tables are filtered the same way, to the objects the user may see.
 *
 * A table limited only by a row condition (no hidden column, no mask) keeps its place instead,
 * and the condition joins the WHERE of the SELECT that reads it, where that means the same (not
 * on the null-extended side of an outer join): the planners then see a plain table.
 *
 * Views are expanded here too: reading one needs READ on the view, and the tables inside are
 * narrowed for the reader like any other. WITH names are resolved by scope, and every table
 * reference this rewrite checked is recorded: binding reads no other (it fails closed).
 *
 * Tables named inside a condition or mask are read as they are (no checks, no filters): the
 * administrator who wrote the condition chose them. Errors are explained in access-errors.ts.
 */
import type { CommonTableExpr, Node, RangeVar, SelectStmt, WithClause } from '@pgsql/types';
import type { BindCatalog } from './bind-catalog.js';
import type { ResolvedTable } from '../../sources/definitions.js';
import { SYSTEM_PROCEDURE_DEFS, SYSTEM_SCHEMAS } from '../../sources/system-tables.js';
import { PG_SCHEMAS } from '../../sources/pg-catalog.js';
import { catalogCondition } from './catalog-visibility.js';
import type { ColumnDef, TableDef, ViewDef } from '../../catalog/types.js';
import { badRequest, forbidden } from '../../errors.js';
import type { AccessPolicy } from '../../security/permissions.js';
import { asKind, contains, fieldNames, isObject, lower, nameNode, replaceNodesBelow, walk } from '../tree/ast.js';
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import { parseExpression, parseStatement } from '../front/parse.js';
import { LIVE_READING, type CopyReading, type CopyUse } from '../../sources/copies.js';
import { materializedCopyOf } from '../../catalog/materialized-views.js';

/** What the rewrite hid: column name (lower case) -> qualified name, to explain binder errors. */
export type HiddenColumns = Map<string, string>;

interface Restriction {
  /** Readable columns, each with its mask expression (null: the value itself). */
  columns: Array<{ column: ColumnDef; mask: string | null }>;
  /** Row conditions, of which a row must meet one; null when every row is visible. */
  conditions: string[] | null;
  hidden: ColumnDef[];
}

/**
 * Tables named by an administrator's row condition (in the rows an INSERT checks): read as they
 * are, as everywhere a condition reads them, even where the statement runs with a user's
 * permissions. Held by identity of the syntax node, so no statement text can claim it.
 */
const administratorsTables = new WeakSet<object>();

/** Marks the tables a condition reads as the administrator's (see administratorsTables). */
export function trustTablesOf(expression: Node): Node {
  walk(expression, (nodeType, node) => {
    if (nodeType === 'RangeVar') administratorsTables.add(node);
  });
  return expression;
}

/** What rewriting a statement for its user found. */
export interface AccessRewrite {
  hidden: HiddenColumns;
  /** Tables and views (schema.name) the user sees only part of: fewer columns or rows, or masked values. */
  narrowed: Set<string>;
  /** Table references checked here: binding takes no other (it fails closed). */
  approved: WeakSet<object>;
  /** References that name a WITH query in scope, not a table. */
  cteReferences: WeakSet<object>;
  /** A user other than an administrator reads a view (its tables beyond their own grants). */
  readsViews: boolean;
  /**
   * Table references whose row condition joined the enclosing WHERE: the condition over the
   * table's own columns, so that what is loaded for them is filtered as well (execute.ts).
   */
  rowConditions: WeakMap<object, Node>;
  /** The narrowing subqueries (`{RangeSubselect}` entries) made here: computed before the statement (execute.ts). */
  narrowings: WeakSet<Node>;
  /** References to materialized views read from their copies (the others were expanded into their SELECT). */
  materialized: WeakMap<object, CopyUse>;
}

/**
 * Checks and rewrites, in place, the tables a statement reads for `policy`'s user; expands views.
 * `statement` is a statement node, or the reading parts of a write statement (write-access.ts).
 */
export function applyAccess(
  statement: object,
  registry: BindCatalog,
  policy: AccessPolicy,
  /** Whether materialized views are read from their copies when fresh enough (else their SELECT runs). */
  reading: CopyReading = LIVE_READING,
): AccessRewrite {
  const rewriter = new AccessRewriter(statement, registry, policy, reading);
  rewriter.rewrite(statement, new Set());
  replaceUserFunctions(statement, policy.user.name);
  return rewriter.result();
}

/** One statement's access rewrite: what it found so far, and the steps that find it. */
class AccessRewriter {
  readonly hidden: HiddenColumns = new Map();
  readonly narrowed = new Set<string>();
  readonly approved = new WeakSet<object>();
  readonly cteReferences = new WeakSet<object>();
  readonly rowConditions = new WeakMap<object, Node>();
  readonly narrowings = new WeakSet<Node>();
  readonly materialized = new WeakMap<object, CopyUse>();
  /** Which column names the statement may use (conservatively), to leave the others out of narrowings. */
  private readonly referenced: { all: boolean; names: Set<string> };
  /** Tables named inside views: the view's grant covers them (not checked, still filtered and masked). */
  private readonly insideViews = new WeakSet<object>();
  /** Views being expanded, to stop a view that reads itself. */
  private readonly expanding: string[] = [];
  private readsViews = false;

  constructor(
    statement: object,
    private readonly registry: BindCatalog,
    private readonly policy: AccessPolicy,
    private readonly reading: CopyReading,
  ) {
    this.referenced = referencedColumns(statement);
  }

  result(): AccessRewrite {
    const { hidden, narrowed, approved, cteReferences, readsViews, rowConditions, narrowings, materialized } = this;
    return { hidden, narrowed, approved, cteReferences, readsViews, rowConditions, narrowings, materialized };
  }

  /**
   * Rewrites the FROM lists below `value`; `scope` holds the CTE names visible there. A walk
   * over every field (not `walk`'s nodes): WITH and FROM are fields of the statements that
   * hold them, and a write statement's reading parts come here unwrapped.
   */
  rewrite(value: unknown, scope: ReadonlySet<string>): void {
    if (Array.isArray(value)) {
      for (const item of value) this.rewrite(item, scope);
      return;
    }
    if (!isObject(value)) return;
    const inner = isObject(value.withClause) ? this.withScope(value.withClause as WithClause, scope) : scope;
    for (const [key, child] of Object.entries(value)) {
      if (key === 'withClause') continue;
      if (key === 'fromClause' && Array.isArray(child)) {
        const conditions: Node[] = [];
        value[key] = (child as Node[]).map((item) => this.fromItem(item, { nullable: false, conditions }, inner));
        // Row conditions of tables that are not null-extended hold as well in this WHERE.
        if (conditions.length > 0) value.whereClause = allOf([value.whereClause as Node | undefined, ...conditions]);
      } else this.rewrite(child, inner);
    }
  }

  /**
   * A WITH clause: each CTE's query sees the CTEs before it (and itself when RECURSIVE) and
   * the enclosing ones; the statement sees all. Returns the statement's scope.
   */
  private withScope(withClause: WithClause, outer: ReadonlySet<string>): Set<string> {
    const ctes = (withClause.ctes ?? []).map((c) => asKind(c, 'CommonTableExpr')!);
    const names = ctes.map((c) => lower(String(c.ctename ?? '')));
    const reserved = names.find((n) => n.startsWith('__vdb_'));
    if (reserved)
      throw badRequest(`The name "${reserved}" is reserved for vdb's own use.`, 'Give the WITH query another name.', 'Reserved name');
    // RECURSIVE: a query sees itself too, but never a later one (the engine resolves names in order).
    ctes.forEach((cte, i) => {
      if (withClause.recursive) requireRecursiveForm(cte, names[i]!);
      this.rewrite(cte.ctequery, new Set([...outer, ...names.slice(0, withClause.recursive ? i + 1 : i)]));
      cte.ctename = cteEngineName(names[i]!);
    });
    return new Set([...outer, ...names]);
  }

  private fromItem<T extends Node | undefined>(item: T, context: FromContext, scope: ReadonlySet<string>): T | Node {
    if (!isObject(item)) return item;
    if ('RangeVar' in item) return this.restrictTable(item.RangeVar, context, scope) ?? item;
    if ('JoinExpr' in item) {
      const join = item.JoinExpr;
      const type = String(join.jointype);
      // Behind a join's own alias the tables' names are not visible to the WHERE: keep them narrowed in place.
      if (join.alias) context = { ...context, nullable: true };
      join.larg = this.fromItem(
        join.larg,
        { ...context, nullable: context.nullable || type === 'JOIN_RIGHT' || type === 'JOIN_FULL' },
        scope,
      );
      join.rarg = this.fromItem(
        join.rarg,
        { ...context, nullable: context.nullable || type === 'JOIN_LEFT' || type === 'JOIN_FULL' },
        scope,
      );
      this.rewrite(join.quals, scope);
      return item;
    }
    if ('RangeTableSample' in item) {
      // A sample is drawn from a table, never from a narrowing subquery: only from a table the
      // user sees whole or only row-limited (the condition then filters the sample).
      const sample = item.RangeTableSample;
      const relation = asKind(sample.relation, 'RangeVar') ?? null;
      const named =
        relation && !scope.has(String(relation.relname).toLowerCase())
          ? this.registry.resolve(typeof relation.schemaname === 'string' ? relation.schemaname : undefined, String(relation.relname))
          : null;
      if (named?.origin === 'view')
        throw badRequest(
          `TABLESAMPLE samples tables; ${named.schema}.${named.table.name} is a view.`,
          'Sample the tables the view reads, or filter the view with a WHERE on random().',
          'Unsupported statement',
        );
      if (!relation || this.restrictTable(relation, context, scope) !== null) {
        throw forbidden(
          'TABLESAMPLE cannot sample a table you see only part of (this.hidden columns or masks).',
          'Sample with a WHERE on random(), or ask an administrator.',
        );
      }
      this.rewrite(sample.args, scope);
      return item;
    }
    this.rewrite(item, scope);
    return item;
  }

  /**
   * What stands for a table the user sees only part of: null for all of it; the table itself
   * when only its rows are limited and the condition can join the enclosing WHERE (the planners
   * then see a plain table: partial aggregation, join pushdown); else a narrowing subquery.
   */
  private restrictTable(range: RangeVar, context: FromContext, scope: ReadonlySet<string>): Node | null {
    const relname = String(range.relname ?? '');
    const schemaname = typeof range.schemaname === 'string' ? range.schemaname : undefined;
    if (administratorsTables.has(range)) {
      this.approved.add(range);
      return null;
    }
    if (schemaname === undefined && scope.has(relname.toLowerCase())) {
      this.cteReferences.add(range);
      // Renamed with its WITH query: should the engine not see that query here, the name
      // reaches nothing of the engine's own (its catalog has no such name), never a table.
      range.alias ??= { aliasname: relname };
      range.relname = cteEngineName(relname.toLowerCase());
      return null;
    }
    const resolved = this.registry.resolve(schemaname, relname);
    this.approved.add(range);
    const viaView = this.insideViews.has(range);
    if (resolved.origin === 'view') {
      // A materialized view read from its copy stands as a table; else it is a view.
      const copy = this.materializedRead(resolved.table);
      if (!copy) return this.expandView(range, resolved.table, viaView);
      this.materialized.set(range, copy);
      if (!this.policy.admin) this.readsViews = true;
    }
    if (this.policy.admin) return null;
    const restriction =
      resolved.origin === 'system'
        ? this.systemRestriction(resolved.schema, resolved.table)
        : this.tableRestriction(resolved.schema, resolved.table, viaView);
    if (!restriction) return null;
    const flat = this.flatCondition(range, restriction, context);
    if (flat) {
      this.narrowed.add(`${resolved.schema}.${resolved.table.name}`);
      context.conditions.push(markRowCondition(flat));
      const own = anyOfConditions(restriction.conditions!);
      replaceUserFunctions({ own }, this.policy.user.name);
      this.rowConditions.set(range, own);
      return null;
    }
    const table: RangeVar = { ...range, alias: { aliasname: relname } };
    this.approved.add(table);
    const copy = this.materialized.get(range);
    if (copy) this.materialized.set(table, copy);
    return this.restrict(range, { RangeVar: table }, resolved.schema, resolved.table, restriction);
  }

  /**
   * The row condition of a table as a condition of the enclosing SELECT, over the table's alias:
   * only when nothing else narrows it (no hidden column, no mask), it is not on the
   * null-extended side of an outer join, and the condition has no subquery (whose names would
   * belong to other scopes).
   */
  private flatCondition(range: RangeVar, restriction: Restriction, context: FromContext): Node | null {
    if (context.nullable || restriction.conditions === null || restriction.hidden.length > 0) return null;
    if (restriction.columns.some((c) => c.mask !== null)) return null;
    if (range.alias?.colnames) return null;
    const condition = anyOfConditions(restriction.conditions);
    if (contains(condition, 'SubLink')) return null;
    return requalify(condition, range.alias ? String(range.alias.aliasname) : String(range.relname));
  }

  /**
   * A view, replaced by its SELECT. Reading it needs READ on the view, not on what it reads;
   * the tables inside are still filtered and masked for the user (their conditions and masks
   * apply wherever the table is reached).
   */
  private expandView(range: RangeVar, view: ViewDef, viaView: boolean): Node {
    const qualified = `${view.schema}.${view.name}`;
    if (this.expanding.includes(qualified)) {
      throw badRequest(
        `View ${qualified} reads itself (${[...this.expanding, qualified].join(' -> ')}).`,
        'Replace one of these views so that they do not read each other in a circle.',
        'Invalid view',
      );
    }
    const restriction = this.policy.admin ? null : this.tableRestriction(view.schema, view, viaView);
    // A view shows its reader what the view's tables hold beyond the reader's own grants.
    if (!this.policy.admin) this.readsViews = true;
    const body = viewBody(view);
    // The view's own column references decide which columns of its tables it needs.
    const inside = referencedColumns(body);
    this.referenced.all ||= inside.all;
    for (const name of inside.names) this.referenced.names.add(name);
    walk(body, (nodeType, node) => {
      if (nodeType === 'RangeVar') this.insideViews.add(node);
    });
    this.expanding.push(qualified);
    // A view's SELECT sees its own WITH queries, never those of the statement reading it.
    this.rewrite(body, new Set());
    this.expanding.pop();
    const colnames = view.columns.map((c) => nameNode(c.name));
    const inner: Node = { RangeSubselect: { subquery: body, alias: { aliasname: view.name, colnames } } };
    if (restriction) return this.restrict(range, inner, view.schema, view, restriction);
    const alias = range.alias ? { colnames, ...range.alias } : { aliasname: view.name, colnames };
    return { RangeSubselect: { subquery: body, alias } };
  }

  /**
   * The copy a materialized view is read from: one fresh enough for the request, read by a user
   * who sees whole every table and view its SELECT reads (the copy holds all their rows,
   * unmasked); null when its SELECT must run instead, as a view's.
   */
  private materializedRead(view: ViewDef): CopyUse | null {
    if (!materializedCopyOf(view)) return null;
    const copy = this.registry.copyFor?.(view.schema, view, this.reading) ?? null;
    return copy && (this.policy.admin || this.seesWhole(view, [])) ? copy : null;
  }

  /**
   * Whether no row condition or mask of the user's holds on what a view reads (through views,
   * as they apply there), nor any system table (shown filtered): the view's rows are then the
   * same for them as for an administrator.
   */
  private seesWhole(view: ViewDef, seen: string[]): boolean {
    const body = viewBody(view);
    const withNames = new Set<string>();
    walk(body, (nodeType, node) => {
      if (nodeType === 'CommonTableExpr') withNames.add(lower(String(node.ctename ?? '')));
    });
    let whole = true;
    walk(body, (nodeType, node) => {
      if (nodeType !== 'RangeVar' || !whole) return;
      const schema = typeof node.schemaname === 'string' ? node.schemaname : undefined;
      let resolved: ResolvedTable;
      try {
        resolved = this.registry.resolve(schema, String(node.relname ?? ''));
      } catch {
        // A WITH query's name, or a table gone: the SELECT itself decides (and reports it).
        if (schema === undefined && withNames.has(lower(String(node.relname ?? '')))) return;
        whole = false;
        return;
      }
      if (resolved.origin === 'system' || !this.unrestricted(resolved.schema, resolved.table)) whole = false;
      else if (resolved.origin === 'view') {
        const key = `${resolved.schema}.${resolved.table.name}`;
        if (!seen.includes(key)) whole = this.seesWhole(resolved.table, [...seen, key]);
      }
    });
    return whole;
  }

  /** No row condition or mask of the user's on a table or view reached through a view. */
  private unrestricted(schema: string, table: TableDef): boolean {
    return (
      this.policy.rowConditions('R', schema, table, true) === null &&
      table.columns.every((column) => this.policy.columnMask(schema, table, column) === null)
    );
  }

  /** Tables read by a condition or mask are read as they are (the administrator chose them). */
  private approveTables(expression: Node): Node {
    walk(expression, (nodeType, node) => {
      if (nodeType === 'RangeVar') this.approved.add(node);
    });
    return expression;
  }

  /** `(SELECT shown columns FROM inner WHERE conditions) AS alias`: a table as the user sees it. */
  private restrict(range: RangeVar, inner: Node, schema: string, table: TableDef, restriction: Restriction): Node {
    const relname = String(range.relname ?? '');
    for (const column of restriction.hidden) this.hidden.set(lower(column.name), `${schema}.${table.name}.${column.name}`);
    if (!SYSTEM_SCHEMAS.includes(schema as never) && !PG_SCHEMAS.includes(schema as never)) this.narrowed.add(`${schema}.${table.name}`);

    const used = restriction.columns.filter((c) => this.referenced.all || this.referenced.names.has(lower(c.column.name)));
    // A subquery needs one column even when none is named (count(*)).
    const shown = used.length > 0 ? used : restriction.columns.slice(0, 1);
    const targetList = shown.map(({ column, mask }): Node => ({
      ResTarget: {
        name: column.name,
        val: mask === null ? { ColumnRef: { fields: [nameNode(column.name)] } } : this.approveTables(parseExpression(mask, 'mask')),
      },
    }));
    const select: SelectStmt = { targetList, fromClause: [inner], limitOption: 'LIMIT_OPTION_DEFAULT', op: 'SETOP_NONE' };
    if (restriction.conditions !== null) select.whereClause = this.approveTables(anyOfConditions(restriction.conditions));
    const alias = range.alias ?? { aliasname: relname };
    const narrowing: Node = { RangeSubselect: { subquery: { SelectStmt: select }, alias } };
    this.narrowings.add(narrowing);
    return narrowing;
  }

  private tableRestriction(schema: string, table: TableDef, viaView: boolean): Restriction | null {
    if (!viaView && !this.policy.canRead(schema, table))
      throw this.policy.denial('R', [schema, table.name], 'kind' in table && table.kind !== 'Table' ? 'view' : 'table');
    const readable = viaView ? table.columns : this.policy.readableColumns(schema, table);
    const columns = readable.map((column) => ({ column, mask: this.policy.columnMask(schema, table, column) }));
    const conditions = this.policy.rowConditions('R', schema, table, viaView);
    const hiddenColumns = table.columns.filter((c) => !readable.includes(c));
    if (hiddenColumns.length === 0 && conditions === null && columns.every((c) => c.mask === null)) return null;
    return { columns, conditions, hidden: hiddenColumns };
  }

  /** System tables: readable by everyone, showing only the objects the user may see. */
  private systemRestriction(schema: string, table: TableDef): Restriction | null {
    const user = this.policy.user;
    const plain = table.columns.map((column) => ({ column, mask: null as string | null }));
    const only = (column: string, values: readonly string[]): Restriction => ({
      columns: plain,
      conditions: [values.length === 0 ? 'FALSE' : `${quoteIdent(column)} IN (${values.map(sqlLiteral).join(', ')})`],
      hidden: [],
    });
    if (PG_SCHEMAS.includes(schema as never)) {
      const condition = catalogCondition(schema, table.name, this.registry, this.policy);
      return condition === null ? null : { columns: plain, conditions: [condition], hidden: [] };
    }
    const sources = this.registry.sources.filter((s) => this.policy.seesSchema(s.name, s.tables));
    switch (`${schema}.${table.name}`) {
      case 'SYS.Schemas': {
        const virtual = this.registry.virtualSchemas().filter((v) => this.policy.seesSchema(v, this.registry.tablesOf(v)));
        return only('Name', [...SYSTEM_SCHEMAS, ...sources.map((s) => s.name), ...virtual]);
      }
      case 'SYS.Tables':
        return only(
          'UID',
          this.visibleTables().map(({ table: t }) => t.uid),
        );
      case 'SYS.Columns':
        return only(
          'UID',
          this.visibleTables().flatMap(({ schema: s, table: t }) =>
            (s === null ? t.columns : this.policy.readableColumns(s, t)).map((c) => `${t.uid}#${c.position}`),
          ),
        );
      case 'SYS.Procedures':
        return only('UID', this.visibleProcedures());
      case 'SYS.ProcedureParams':
        return only('ProcedureUID', this.visibleProcedures());
      case 'SYSADMIN.DataSources':
        return only(
          'Name',
          sources.map((s) => s.name),
        );
      case 'SYSADMIN.Users':
        return only('Name', [user.name]);
      case 'SYSADMIN.Roles':
        // Their own roles, and of each role's members only themselves.
        return {
          columns: plain.map((c) => (c.column.name === 'Users' ? { ...c, mask: sqlLiteral(user.name) } : c)),
          conditions: only('Name', user.roles).conditions,
          hidden: [],
        };
      case 'SYS.Copies':
        return only('Name', this.visibleCopies());
      case 'SYSLOG.CopyRefreshes':
        return only('CopyName', this.visibleCopies());
      case 'SYSADMIN.Permissions':
        return only('RoleName', user.roles);
      default:
        return null; // the logs: filtered to the user's own entries where they are loaded
    }
  }

  /** The names of the copies of tables the user may read (a copy is named `schema.table`). */
  private visibleCopies(): string[] {
    return this.visibleTables()
      .filter(({ schema }) => schema !== null)
      .map(({ schema, table }) => `${schema}.${table.name}`);
  }

  /** The UIDs of the procedures the user may call: vdb's own (each checks its caller), and the sources' they have E on. */
  private visibleProcedures(): string[] {
    return [
      ...SYSTEM_PROCEDURE_DEFS.map((p) => p.uid),
      ...this.registry.sources.flatMap((s) =>
        (s.procedures ?? []).filter((p) => this.policy.allows('E', [s.name, p.name])).map((p) => p.uid),
      ),
    ];
  }

  /** Source tables the user may read (schema set) and every system table (schema null). */
  private visibleTables(): Array<{ schema: string | null; table: TableDef }> {
    return [
      ...this.registry.systemTables().map((table) => ({ schema: null, table })),
      ...this.registry.sources.flatMap((s) =>
        s.tables.filter((t) => this.policy.canRead(s.name, t)).map((table) => ({ schema: s.name as string | null, table })),
      ),
      ...this.registry.views
        .filter((v) => this.policy.canRead(v.schema, v))
        .map((table) => ({ schema: table.schema as string | null, table })),
    ];
  }
}

/** The engine's name of a WITH query: a name no table, view or function of the engine has. */
const cteEngineName = (name: string) => `__vdb_cte_${name}`;

/**
 * PostgreSQL's rule for a query of WITH RECURSIVE that names itself: it must be
 * `non-recursive term UNION [ALL] recursive term`. The engine reads any other form as not
 * recursive, and its inner name as something else: refused, as PostgreSQL refuses it.
 */
function requireRecursiveForm(cte: CommonTableExpr, name: string): void {
  const query = asKind(cte.ctequery, 'SelectStmt');
  let namesItself = false;
  walk(cte.ctequery, (nodeType, node) => {
    if (nodeType === 'RangeVar' && node.schemaname === undefined && lower(String(node.relname ?? '')) === name) namesItself = true;
  });
  if (!namesItself || query?.op === 'SETOP_UNION') return;
  throw badRequest(
    `recursive query "${name}" does not have the form non-recursive-term UNION [ALL] recursive-term`,
    'Write the recursive query as a UNION or UNION ALL of a starting query and one that reads the WITH query.',
    'Invalid recursive query',
  );
}

/** Where a FROM entry stands: `nullable` when null-extended by an outer join or behind a join alias (its conditions stay with it). */
interface FromContext {
  nullable: boolean;
  /** Row conditions for the enclosing SELECT's WHERE. */
  conditions: Node[];
}

/**
 * A key on a row condition's node where it joins a WHERE: a plan that filters the table's rows
 * by the condition itself (plan/ship.ts) finds it there and takes it out of what a source runs.
 * A field of the node (it survives copies of the tree); deparsers read only the fields they know.
 */
const ROW_CONDITION_MARK = 'vdbRowCondition';

function markRowCondition(node: Node): Node {
  (Object.values(node)[0] as Record<string, unknown>)[ROW_CONDITION_MARK] = true;
  return node;
}

/** Whether `node` is a row condition where it joined a WHERE (markRowCondition). */
export const isRowCondition = (node: unknown): boolean =>
  isObject(node) && isObject(Object.values(node)[0]) && (Object.values(node)[0] as Record<string, unknown>)[ROW_CONDITION_MARK] === true;

const allOf = (parts: Array<Node | undefined>): Node => {
  const present = parts.filter((p): p is Node => isObject(p));
  return present.length === 1 ? present[0]! : { BoolExpr: { boolop: 'AND_EXPR', args: present } };
};

/** Parsed view bodies by their text (a fresh copy each time: expansion rewrites it). */
const parsedViews = new Map<string, Node>();

function viewBody(view: ViewDef): Node {
  let parsed = parsedViews.get(view.sql);
  if (!parsed) {
    parsed = parseStatement(view.sql).stmts![0]!.stmt!;
    if (parsedViews.size > 1000) parsedViews.clear();
    parsedViews.set(view.sql, parsed);
  }
  return structuredClone(parsed);
}

/**
 * A row condition's column references over `alias`, whatever the administrator qualified them
 * with: among other tables of a statement, the condition must mean its own table's columns.
 * References inside the condition's subqueries keep their own scope.
 */
export function requalify(condition: Node, alias: string): Node {
  walk(condition, (nodeType, node) => {
    if (nodeType === 'SelectStmt') return 'skip';
    if (nodeType !== 'ColumnRef') return;
    const fields = node.fields!;
    node.fields = [nameNode(alias), fields[fields.length - 1]!];
    return 'skip';
  });
  return condition;
}

/** `a OR b OR ...` of row conditions (none: no row). */
export function anyOfConditions(conditions: readonly string[]): Node {
  const parsed = conditions.map((c) => parseExpression(c, 'condition'));
  if (parsed.length === 0) return { A_Const: { boolval: { boolval: false } } };
  return parsed.length === 1 ? parsed[0]! : { BoolExpr: { boolop: 'OR_EXPR', args: parsed } };
}

/**
 * Which column names a statement may use: every name of a column reference (in any table,
 * conservatively), or all when it uses `*`, a whole-row reference or NATURAL JOIN.
 */
function referencedColumns(statement: unknown): { all: boolean; names: Set<string> } {
  const names = new Set<string>();
  const aliases = new Set<string>();
  let all = false;
  walk(statement, (nodeType, node) => {
    if (nodeType === 'RangeVar') {
      aliases.add(lower(String(node.relname ?? '')));
      if (node.alias) aliases.add(lower(String(node.alias.aliasname ?? '')));
    } else if (nodeType === 'ColumnRef') {
      const fields = fieldNames(node.fields);
      const last = fields[fields.length - 1] ?? '*';
      if (last === '*') all = true;
      else names.add(lower(last));
    } else if (nodeType === 'JoinExpr') {
      if (node.isNatural) all = true;
      for (const name of fieldNames(node.usingClause)) names.add(lower(name));
    }
  });
  // A bare name that is also a table's name or alias may be a whole-row reference.
  if ([...names].some((n) => aliases.has(n))) all = true;
  return { all, names };
}

const USER_FUNCTIONS = new Set(['SVFOP_CURRENT_USER', 'SVFOP_SESSION_USER', 'SVFOP_USER', 'SVFOP_CURRENT_ROLE']);

/** CURRENT_USER and its kin's operation (SVFOP_CURRENT_USER, ...), else undefined. */
const userFunction = (node: Node | undefined): string | undefined => {
  const op = asKind(node, 'SQLValueFunction')?.op;
  return op !== undefined && USER_FUNCTIONS.has(String(op)) ? String(op) : undefined;
};

/** CURRENT_USER, SESSION_USER, USER and CURRENT_ROLE mean the signed-in user of vdb (below `value`, not `value` itself). */
export function replaceUserFunctions(value: unknown, userName: string): void {
  // An output column keeps PostgreSQL's name for it (current_user), not that of a constant.
  walk(value, (nodeType, node) => {
    const op = nodeType === 'ResTarget' ? userFunction(node.val) : undefined;
    if (nodeType === 'ResTarget' && op && node.name === undefined && 'location' in node) node.name = op.slice(6).toLowerCase();
  });
  replaceNodesBelow(value, (node) => (userFunction(node) ? userConstant(userName) : undefined));
}

const userConstant = (name: string): Node => ({ A_Const: { sval: { sval: name } } });
