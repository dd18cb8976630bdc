/**
 * Binding: every table name of a statement is resolved against the catalog and rewritten to
 * where the engine finds it; every function is checked, so a statement can reach nothing of the
 * engine's own (files, settings, internals) that the catalog does not expose.
 *
 * The AST is libpg-query's JSON; we walk it generically and act on the node kinds that carry
 * names (RangeVar, ColumnRef, FuncCall, RangeFunction).
 */
import type { FuncCall, Node, ParseResult, RangeVar, SelectStmt, TypeName } from '@pgsql/types';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { BindCatalog } from './bind-catalog.js';
import { DEFAULT_READING, type CopyReading } from '../../sources/copies.js';
import { badRequest, notFound } from '../../errors.js';
import type { AccessPolicy } from '../../security/permissions.js';
import { applyAccess, type HiddenColumns } from './access.js';
import { checkAllowed } from '../front/allow-list.js';
import { fieldNames, nodeKind, statementOf, walk, exprIs } from '../tree/ast.js';

export interface BoundTable {
  /** Views never get here: they are expanded into their SELECT before binding (access.ts). */
  resolved: Exclude<ResolvedTable, { origin: 'view' }>;
  /** For row-delivered tables: the temporary relation the rows are loaded into. */
  loadName?: string;
  /**
   * The user's row condition (access.ts) when it joined the WHERE instead of a narrowing
   * subquery: the load holds only the rows that meet it, whatever else the statement does.
   */
  rowCondition?: Node;
}

export interface BoundStatement {
  ast: ParseResult;
  tables: BoundTable[];
  /** Columns left out for the user (permissions): a binder error naming one is a 403. */
  hiddenColumns: HiddenColumns;
  /** Tables the user sees only part of (access.ts). */
  narrowed: Set<string>;
  /** The user reads data through views (access.ts): what failed is not shown to them either. */
  readsViews: boolean;
  /** Narrowing subqueries (access.ts): the engine computes each before the statement (execute.ts). */
  narrowings: WeakSet<Node>;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const unsupported = (what: string) =>
  badRequest(
    `${what} is not supported.`,
    'Send one SELECT (WITH, UNION and VALUES included), INSERT, UPDATE, DELETE, EXPLAIN, CALL, CREATE [MATERIALIZED] VIEW, REFRESH MATERIALIZED VIEW or DROP [MATERIALIZED] VIEW statement.',
    'Unsupported statement',
  );

/**
 * Binds a SELECT. The tables it reads are first checked and narrowed to what the policy's user
 * may see, and views are expanded (access.ts).
 */
export function bindStatement(
  tree: ParseResult,
  registry: BindCatalog,
  vdbName: string,
  policy: AccessPolicy,
  /** Whether tables with a local copy fresh enough are read from it (sources/copies.ts). */
  reading: CopyReading = DEFAULT_READING,
): BoundStatement {
  const raw = statementOf(tree);
  if (!raw || !('SelectStmt' in raw)) {
    const kind = raw ? nodeKind(raw) : 'An empty statement';
    throw unsupported(describeStatement(kind ?? 'This statement'));
  }
  if (raw.SelectStmt.intoClause) throw unsupported('SELECT ... INTO');

  const {
    hidden: hiddenColumns,
    narrowed,
    approved,
    cteReferences,
    readsViews,
    rowConditions,
    narrowings,
    materialized,
  } = applyAccess(raw, registry, policy, reading);
  // Again after the rewrite: expanded views, row conditions and masks call functions too.
  checkAllowed(raw);

  const tables = new Map<string, BoundTable>();
  const schemasUsed = new Set<string>();
  walk(raw, (key, node) => {
    if (key === 'RangeVar') bindRangeVar(node);
    else if (key === 'FuncCall') dropPgCatalog(node);
    else if (key === 'TypeCast' && node.typeName) dropTypeSchema(node.typeName);
  });
  // Column references written schema.table.column (or vdb.schema.table.column): the table part
  // is the range's alias after rewriting, so drop the qualifiers in front of it.
  walk(raw, (key, node) => {
    if (key !== 'ColumnRef' || !Array.isArray(node.fields)) return;
    const parts = fieldNames(node.fields);
    if (parts.length >= 4 && same(parts[0] ?? '', vdbName)) node.fields = node.fields.slice(2);
    else if (parts.length >= 3 && [...schemasUsed].some((s) => same(s, parts[0] ?? ''))) node.fields = node.fields.slice(1);
  });

  nameOutputColumns(raw.SelectStmt);
  return { ast: tree, tables: [...tables.values()], hiddenColumns, narrowed, readsViews, narrowings };

  /**
   * A source's table with a copy fresh enough for the request is read by the engine from the
   * copy; so is a materialized view the access rewrite left in place (it chose its copy).
   */
  function readFrom(node: RangeVar, resolved: ResolvedTable): ResolvedTable {
    const view = resolved.origin === 'view' ? materialized.get(node) : undefined;
    if (view)
      return { ...resolved, origin: 'native', source: null, engineSchema: view.engineSchema, engineName: view.engineName, copy: view };
    if (resolved.origin !== 'rows') return resolved;
    const copy = registry.copyFor?.(resolved.schema, resolved.table, reading);
    return copy ? { ...resolved, origin: 'native', engineSchema: copy.engineSchema, engineName: copy.engineName, copy } : resolved;
  }

  function bindRangeVar(node: RangeVar): void {
    const relname = String(node.relname ?? '');
    const schemaname = typeof node.schemaname === 'string' ? node.schemaname : undefined;
    if (cteReferences.has(node)) return;
    // Fail closed: a table named where the access rewrite did not look is not read.
    if (!approved.has(node)) {
      throw badRequest(
        `Table "${schemaname ? `${schemaname}.` : ''}${relname}" is named where vdb does not read tables.`,
        'Name tables in FROM, JOIN and subqueries.',
        'Unsupported statement',
      );
    }
    if (typeof node.catalogname === 'string' && !same(node.catalogname, vdbName)) {
      throw notFound(`Virtual database "${node.catalogname}" does not exist; this one is "${vdbName}".`, null, 'Unknown database');
    }
    const resolved = readFrom(node, registry.resolve(schemaname, relname));
    // Views are expanded before; one that is left sits in a row condition or mask.
    if (resolved.origin === 'view')
      throw badRequest(
        `View ${resolved.schema}.${resolved.table.name} cannot be read by a row condition or mask.`,
        'Conditions and masks read tables.',
        'Invalid condition',
      );
    schemasUsed.add(resolved.schema);
    // Keep the name the statement used visible to column references (orders.id).
    node.alias ??= { aliasname: relname };
    delete node.catalogname;
    // A reference under a row condition gets a load of its own: a condition's or mask's
    // reference to the same table (read whole, as the administrator chose) must not share it.
    const rowCondition = rowConditions.get(node);
    const key = `${resolved.schema}\u0000${resolved.table.name}${rowCondition ? '\u0000narrowed' : ''}`;
    let bound = tables.get(key);
    if (!bound) {
      // Rows of sources, the volatile system tables (logs, filtered per user) and tables under
      // a row condition are loaded per statement.
      const loaded =
        resolved.origin === 'rows' || rowCondition !== undefined || (resolved.origin === 'system' && registry.isVolatile(resolved.table));
      bound = loaded
        ? { resolved, loadName: `__vdb_${resolved.origin === 'system' ? 'sys' : 'rows'}_${tables.size + 1}`, rowCondition }
        : { resolved };
      tables.set(key, bound);
    }
    if (bound.loadName) {
      delete node.schemaname;
      node.relname = bound.loadName;
    } else if (resolved.origin !== 'rows') {
      node.schemaname = resolved.engineSchema;
      node.relname = resolved.engineName;
    }
  }
}

/**
 * PostgreSQL's names for unnamed output columns (FigureColname): a column's name, a function's
 * name, `?column?` for other expressions. The engine would name them after their text, and the
 * rewritten text at that; naming them here makes results read the same wherever they are computed.
 */
function outputName(node: Node | undefined): string | null {
  if (!node) return null;
  if ('ColumnRef' in node) {
    const last = fieldNames(node.ColumnRef.fields).pop();
    return last === '*' ? null : (last ?? null);
  }
  if ('FuncCall' in node) return fieldNames(node.FuncCall.funcname).pop() ?? null;
  if ('TypeCast' in node) {
    // The operand's name where it has a strong one (a column, a call, through other casts:
    // x::text::int is x), else the type's name.
    const type = fieldNames(node.TypeCast.typeName?.names).filter((n) => n !== 'pg_catalog');
    return strongName(node.TypeCast.arg) ?? type.pop() ?? '?column?';
  }
  if ('A_Indirection' in node) return outputName(node.A_Indirection.arg);
  if ('A_ArrayExpr' in node) return 'array';
  if ('GroupingFunc' in node) return 'grouping';
  if ('RowExpr' in node) return 'row';
  if ('CaseExpr' in node) return 'case';
  if ('CoalesceExpr' in node) return 'coalesce';
  if ('MinMaxExpr' in node) return node.MinMaxExpr.op === 'IS_GREATEST' ? 'greatest' : 'least';
  if ('NullIfExpr' in node || ('A_Expr' in node && exprIs(node.A_Expr, 'AEXPR_NULLIF'))) return 'nullif';
  if ('SubLink' in node) {
    const { subLinkType, subselect } = node.SubLink;
    if (subLinkType === 'EXISTS_SUBLINK') return 'exists';
    if (subLinkType === 'ARRAY_SUBLINK') return 'array';
    // A scalar subquery is named after its own first column.
    const first = subselect && 'SelectStmt' in subselect ? subselect.SelectStmt.targetList?.[0] : undefined;
    return outputName(first && 'ResTarget' in first ? first.ResTarget.val : undefined);
  }
  return '?column?';
}

/** The name FigureColname gives `node` with strength 2 (a CASE and a cast's type name are weaker), else null. */
function strongName(node: Node | undefined): string | null {
  if (!node || 'CaseExpr' in node) return null;
  if ('TypeCast' in node) return strongName(node.TypeCast.arg);
  const name = outputName(node);
  return name === '?column?' ? null : name;
}

function nameOutputColumns(select: SelectStmt | undefined): void {
  if (!select) return;
  if (select.op && select.op !== 'SETOP_NONE') {
    // A set operation takes its names from its first branch.
    nameOutputColumns(select.larg);
    return;
  }
  for (const item of select.targetList ?? []) {
    const target = 'ResTarget' in item ? item.ResTarget : undefined;
    if (!target || target.name !== undefined) continue;
    const name = outputName(target.val);
    if (name !== null && !(target.val && 'ColumnRef' in target.val)) target.name = name;
  }
}

/** `pg_catalog.lower(x)` is the engine's `lower(x)` (checkAllowed let only such qualified names pass). */
function dropPgCatalog(node: FuncCall): void {
  if (fieldNames(node.funcname).length === 2) node.funcname = node.funcname!.slice(1);
}

/** Types the deparser writes by their SQL names (`pg_catalog.int4` as `int`); the engine reads no other qualified type. */
const SQL_NAMED_TYPES = new Set([
  'int2',
  'int4',
  'int8',
  'float4',
  'float8',
  'bool',
  'bpchar',
  'varchar',
  'numeric',
  'timestamp',
  'timestamptz',
  'time',
  'timetz',
  'interval',
  'bit',
  'varbit',
]);

/** `x::pg_catalog.text` (as clients write casts) is the engine's `x::text`. */
function dropTypeSchema(node: TypeName): void {
  const names = fieldNames(node.names);
  if (names.length === 2 && names[0]!.toLowerCase() === 'pg_catalog' && !SQL_NAMED_TYPES.has(names[1]!.toLowerCase()))
    node.names = node.names!.slice(1);
}

function describeStatement(kind: string): string {
  const readable: Record<string, string> = {
    InsertStmt: 'INSERT',
    UpdateStmt: 'UPDATE',
    DeleteStmt: 'DELETE',
    CallStmt: 'CALL',
    ExplainStmt: 'EXPLAIN',
    CreateStmt: 'CREATE TABLE',
    ViewStmt: 'CREATE VIEW',
    CreateTableAsStmt: 'CREATE TABLE AS',
    RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
    DropStmt: 'DROP',
    VariableSetStmt: 'SET',
    CopyStmt: 'COPY',
    TransactionStmt: 'Transaction control',
  };
  return readable[kind] ?? kind.replace(/Stmt$/, ' statement');
}
