/**
 * Joins among one source's own tables inside a statement over several sources: the tables of
 * such a source that the statement joins (inner joins, directly or through conditions) are
 * sent to it as one query (`SELECT needed columns FROM t1 a, t2 b WHERE the conditions on them`),
 * and the engine joins that one result with the rest. The source does its own join, with its
 * own indexes, and sends only joined rows.
 *
 * The engine keeps every condition of the statement (rewritten onto the joined result) that the
 * source does not apply exactly, so those sent to the source only need to keep every row the
 * statement keeps (a superset); the exact ones, and the columns only they read, stay there. Inner joins only, no subqueries; column references are qualified first (qualify.ts).
 */
import type { Node, ParseResult, SelectStmt } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import type { ColumnDef, SourceDef, TableDef } from '../../catalog/types.js';
import { wholeStatementConnector, type RawType, type RowConnector } from '../../connectors/types.js';
import { deparseSync } from 'pgsql-deparser';
import { sameAtPostgres, withSourceNames } from './whole.js';
import { asKind, conjuncts, fieldNames, lower, nameNode, rangeAlias, statementOf, walk } from '../tree/ast.js';
import type { BoundStatement } from '../access/bind.js';
import type { ScanPlan } from './scans.js';
import { foldDateArithmetic } from './date-folding.js';
import { qualifyColumns, sortsByOutputName } from './qualify.js';

export interface JoinGroup {
  /** The engine relation the joined rows are loaded into. */
  loadName: string;
  source: SourceDef;
  connector: RowConnector;
  /** The load names of the tables the group replaces. */
  members: string[];
  /** The query in the source's dialect. */
  sql: string;
  /** The result's columns: `<alias>__<column>`, the table alias and column, the member's load name, and the raw class of its values. */
  columns: Array<{ name: string; alias: string; member: string; column: ColumnDef; raw: RawType }>;
  /** The statement's conditions the source applies exactly: the engine does not apply them again. */
  appliedExactly: Node[];
  /**
   * Rows the join is estimated to send (null: a member has no estimate): the biggest member's
   * rows times the share of rows each other member's conditions keep, as each joins by its key.
   */
  rows: number | null;
}

export interface JoinPushdown {
  /** The statement over the joined results. */
  ast: ParseResult;
  groups: JoinGroup[];
}

class Abort extends Error {}

interface Range {
  alias: string;
  relname: string;
  /** The FROM entry as written (kept for the tables that are not joined at a source). */
  node: Node;
}

export function planJoinPushdown(
  bound: BoundStatement,
  plans: Map<string, ScanPlan>,
  registry: PlanCatalog,
  bytewise: ReadonlyMap<string, boolean> = new Map(),
): JoinPushdown | null {
  // No source with two tables to join: nothing to look at (and the statement is not copied).
  const perSource = new Map<string, number>();
  for (const scan of plans.values()) {
    const resolved = scan.bound.resolved;
    if (resolved.origin !== 'rows' || scan.bound.rowCondition) continue;
    perSource.set(resolved.source.name, (perSource.get(resolved.source.name) ?? 0) + 1);
  }
  if (![...perSource.values()].some((count) => count >= 2)) return null;
  try {
    return plan(bound, plans, registry, bytewise);
  } catch (err) {
    if (err instanceof Abort) return null;
    throw err;
  }
}

function plan(
  bound: BoundStatement,
  plans: Map<string, ScanPlan>,
  registry: PlanCatalog,
  bytewise: ReadonlyMap<string, boolean>,
): JoinPushdown | null {
  const ast = structuredClone(bound.ast);
  const select = asKind(statementOf(ast), 'SelectStmt');
  if (!select || select.op !== 'SETOP_NONE' || select.withClause) return null;
  qualifyColumns(select, (relname) => plans.get(relname)?.bound.resolved.table.columns.map((c) => c.name) ?? null);
  // Subqueries: only those a source may run inside the join (sourceSubqueries); any other stops here.
  const subqueries = sourceSubqueries(select, plans, registry, bytewise);
  walk(select, (key, node) => {
    if (key === 'SubLink' && subqueries.has(node)) return 'skip';
    if (key === 'SubLink' || key === 'RangeSubselect' || key === 'RangeFunction') throw new Abort();
  });

  // FROM, flattened: table references under inner joins, their ON conditions.
  const ranges: Range[] = [];
  const conditions: Node[] = [...conjuncts(select.whereClause)];
  const flatten = (item: Node | undefined): void => {
    if (!item) throw new Abort();
    if ('RangeVar' in item) {
      const rv = item.RangeVar;
      ranges.push({ alias: rangeAlias(rv), relname: String(rv.relname), node: item });
      return;
    }
    const join = asKind(item, 'JoinExpr');
    if (!join || join.jointype !== 'JOIN_INNER' || join.usingClause || join.isNatural) throw new Abort();
    flatten(join.larg);
    flatten(join.rarg);
    conditions.push(...conjuncts(join.quals));
  };
  for (const item of select.fromClause ?? []) flatten(item);

  // Tables per SQL source (each referenced once), two or more to be worth a join there.
  const bySource = new Map<string, Range[]>();
  for (const range of ranges) {
    const scan = plans.get(range.relname);
    // A table under a row condition is loaded filtered on its own (load.ts), never inside a join's result.
    if (
      !scan ||
      scan.bound.resolved.origin !== 'rows' ||
      scan.bound.rowCondition ||
      ranges.filter((r) => r.relname === range.relname).length !== 1
    )
      continue;
    const key = scan.bound.resolved.source.name;
    bySource.set(key, [...(bySource.get(key) ?? []), range]);
  }
  const tableOf = (range: Range) => plans.get(range.relname)!.bound.resolved.table;
  const candidates = [...bySource.values()].flatMap((members) => keyJoined(members, conditions, tableOf));
  // One source holding every table: its statement runs there whole or not at all (choose.ts).
  if (candidates.length === 0 || (candidates.length === 1 && candidates[0]!.length === ranges.length)) return null;

  // Every reference to a member's column must name its table (alias.column).
  const memberAliases = new Set(candidates.flat().map((r) => r.alias));
  // (A bare ORDER BY name of an output column means that column: the engine's statement keeps it.)
  const outputSorts = new Set(
    (select.sortClause ?? []).filter((item) => sortsByOutputName(select, item)).map((item) => asKind(item, 'SortBy')),
  );
  walk(select, (key, node) => {
    if ((key === 'SortBy' && outputSorts.has(node)) || (key === 'SubLink' && subqueries.has(node))) return 'skip';
    if (key !== 'ColumnRef') return;
    const fields = fieldNames(node.fields);
    if (
      fields.length === 1 &&
      (fields[0] === '*' || candidates.flat().some((r) => tableOf(r).columns.some((c) => lower(c.name) === lower(fields[0]!))))
    ) {
      throw new Abort();
    }
    if (fields.length === 2 && memberAliases.has(lower(fields[0]!)) && fields[1] === '*') throw new Abort();
  });

  const groups: JoinGroup[] = [];
  const renamed = new Map<string, { groupAlias: string; prefix: string }>();
  for (const members of candidates) {
    const group = groupQuery(members, conditions, subqueries, select, plans, registry, groups.length + 1);
    if (!group) continue;
    groups.push(group);
    for (const member of members) renamed.set(member.alias, { groupAlias: group.loadName, prefix: `${member.alias}__` });
  }
  if (groups.length === 0) return null;
  // A subquery a group does not run would stay in the engine's statement, over tables no longer loaded.
  const applied = new Set(groups.flatMap((g) => g.appliedExactly));
  if (conditions.some((c) => asKind(c, 'SubLink') && !applied.has(c))) return null;

  // Output columns keep the names they had: `c.name` stays "name", not the group's column name.
  for (const item of select.targetList ?? []) {
    const target = asKind(item, 'ResTarget')!;
    const fields = fieldNames(asKind(target.val, 'ColumnRef')?.fields);
    if (target.name === undefined && fields.length === 2 && renamed.has(lower(fields[0]!))) target.name = fields[1];
  }
  // The statement over the joined results: members' references point into their group.
  walk(select, (key, node) => {
    if (key === 'SubLink' && subqueries.has(node)) return 'skip';
    if (key !== 'ColumnRef') return;
    const fields = fieldNames(node.fields);
    const target = fields.length === 2 ? renamed.get(lower(fields[0]!)) : undefined;
    if (target) node.fields = [nameNode(target.groupAlias), nameNode(`${target.prefix}${lower(fields[1]!)}`)];
  });
  const from: Node[] = ranges.filter((r) => !renamed.has(r.alias)).map((r) => r.node);
  for (const group of groups)
    from.push({ RangeVar: { relname: group.loadName, alias: { aliasname: group.loadName }, inh: true, relpersistence: 'p' } });
  select.fromClause = from;
  // Inner joins: every ON condition is a WHERE condition, kept (rewritten) here unless a source applies it exactly.
  const rewrittenConditions = conditions.filter((c) => !applied.has(c));
  select.whereClause =
    rewrittenConditions.length === 0
      ? undefined
      : rewrittenConditions.length === 1
        ? rewrittenConditions[0]
        : { BoolExpr: { boolop: 'AND_EXPR', args: rewrittenConditions } };
  if (select.whereClause === undefined) delete select.whereClause;
  return { ast, groups };
}

/** The query one source runs for its joined tables, or null when they do not join there. */
function groupQuery(
  members: Range[],
  conditions: Node[],
  subqueries: ReadonlyMap<object, SourceSubquery>,
  select: SelectStmt,
  plans: Map<string, ScanPlan>,
  registry: PlanCatalog,
  index: number,
): JoinGroup | null {
  const first = plans.get(members[0]!.relname)!.bound.resolved;
  if (first.origin !== 'rows') return null;
  const connector = registry.connectorOf(first.source) as RowConnector;
  const aliases = new Map(members.map((m) => [m.alias, plans.get(m.relname)!.bound.resolved.table]));
  const resolve = (fields: string[]) => {
    if (fields.length !== 2) return undefined;
    return aliases.get(lower(fields[0]!))?.columns.find((c) => lower(c.name) === lower(fields[1]!));
  };
  // The conditions on these tables alone, offered to the source with the columns the statement uses.
  const offered = conditions.filter((condition) => {
    const used = aliasesUsed(condition);
    return !asKind(condition, 'SubLink') && used.size > 0 && [...used].every((a) => aliases.has(a));
  });
  // Subqueries of this source whose outer column is one of these tables', written in its SQL.
  const quote = (name: string) => connector.dialect.quoteIdentifier(name);
  const ran = conditions.filter((c) => {
    const subquery = subqueries.get(asKind(c, 'SubLink') ?? {});
    return subquery?.source === first.source && aliases.has(subquery.alias);
  });
  const written = ran.map((c) => {
    const subquery = subqueries.get(asKind(c, 'SubLink')!)!;
    return `${quote(subquery.alias)}.${quote(subquery.column.nameInSource)} IN (${subquery.sql})`;
  });
  // The columns the statement reads of these tables, leaving out the conditions in `skipped`.
  const columnsUsed = (skipped: ReadonlySet<object>) => {
    const columns: JoinGroup['columns'] = [];
    walk(select, (key, node) => {
      if (skipped.has(node)) return 'skip';
      if (key !== 'ColumnRef') return;
      const fields = fieldNames(node.fields);
      const column = resolve(fields);
      const alias = lower(fields[0] ?? '');
      const name = `${alias}__${lower(fields[1] ?? '')}`;
      const member = members.find((m) => m.alias === alias)?.relname;
      if (column && member && !columns.some((c) => c.name === name))
        columns.push({ name, alias, member, column, raw: connector.rawType(column) });
    });
    return columns;
  };
  const tables = members.map((m) => ({ alias: m.alias, table: aliases.get(m.alias)! }));
  const folded = offered.map((condition) => foldDateArithmetic(condition, resolve));
  let columns = columnsUsed(new Set());
  let taken = connector.pushdown.applyJoin({ tables, conditions: folded, written, columns });
  if (!taken) return null;
  // Conditions the source applies exactly leave the engine's statement, and so do the columns
  // only they read (a join key, a date range's column), unless nothing would be left to send.
  const applied = offered.filter((_, i) => taken!.exact[i]);
  const left = [...applied, ...ran];
  const fewer = left.length > 0 ? columnsUsed(new Set(left.map((c) => Object.values(c)[0] as object))) : columns;
  if (fewer.length > 0 && fewer.length < columns.length) {
    const again = connector.pushdown.applyJoin({ tables, conditions: folded, written, columns: fewer });
    if (again) [taken, columns] = [again, fewer];
  }
  const appliedExactly = [...offered.filter((_, i) => taken!.exact[i]), ...ran];
  // Joined through the conditions the source applies, or it would be a cross product there.
  const links = new Map(members.map((m) => [m.alias, m.alias]));
  const rootOf = (a: string): string => (links.get(a) === a ? a : rootOf(links.get(a)!));
  offered.forEach((condition, i) => {
    if (!taken.taken[i]) return;
    const [head, ...rest] = [...aliasesUsed(condition)];
    for (const a of rest) links.set(rootOf(a), rootOf(head!));
  });
  if (new Set(members.map((m) => rootOf(m.alias))).size !== 1) return null;
  const sql = taken.sql;
  const estimated = joinedRows(members.map((m) => plans.get(m.relname)!));
  return {
    loadName: `__vdb_join_${index}`,
    source: first.source,
    connector,
    members: members.map((m) => m.relname),
    sql,
    columns,
    appliedExactly,
    // A subquery's condition keeps a third of the rows (PostgreSQL's default for a range).
    rows:
      estimated === null
        ? null
        : Math.max(1, Math.round(estimated * (1 / 3) ** ran.filter((c) => subqueries.get(asKind(c, 'SubLink')!)!.narrows).length)),
  };
}

interface SourceSubquery {
  /** The source that runs it, and the outer column it is compared with (`alias.column IN (...)`). */
  source: SourceDef;
  alias: string;
  column: ColumnDef;
  /** The subquery in the source's SQL, its own table names. */
  sql: string;
  /** Whether it has a condition (WHERE or HAVING) that may keep fewer than all keys. */
  narrows: boolean;
}

/**
 * `alias.column IN (SELECT ...)` conjuncts of WHERE that the source of the outer table can run
 * inside its join as written: every table of the subquery at that same source (PostgreSQL, whose
 * SQL it is), none under a row condition or read through a narrowing, no reference to the outer
 * query, and PostgreSQL's meaning (whole.ts's allow-list, text ordered as the engine orders it).
 * The condition then leaves the engine's statement; its tables are read there, not loaded.
 */
function sourceSubqueries(
  select: SelectStmt,
  plans: Map<string, ScanPlan>,
  registry: PlanCatalog,
  bytewise: ReadonlyMap<string, boolean>,
): Map<object, SourceSubquery> {
  const found = new Map<object, SourceSubquery>();
  const outer = new Map<string, string>();
  for (const item of select.fromClause ?? []) {
    walk([item], (key, node) => {
      if (key === 'SelectStmt') return 'skip';
      if (key === 'RangeVar' && typeof node.relname === 'string') outer.set(rangeAlias(node), node.relname);
    });
  }
  for (const condition of conjuncts(select.whereClause)) {
    const sublink = asKind(condition, 'SubLink');
    const subselect = asKind(sublink?.subselect, 'SelectStmt');
    if (!sublink || !subselect || sublink.subLinkType !== 'ANY_SUBLINK' || fieldNames(sublink.operName).join('.') !== '') continue;
    const testFields = fieldNames(asKind(sublink.testexpr, 'ColumnRef')?.fields);
    const outerLoad = testFields.length === 2 ? outer.get(lower(testFields[0]!)) : undefined;
    const outerScan = outerLoad ? plans.get(outerLoad) : undefined;
    if (!outerScan || outerScan.bound.resolved.origin !== 'rows') continue;
    const source = outerScan.bound.resolved.source;
    const connector = wholeStatementConnector(registry.connectorOf(source));
    const column = outerScan.bound.resolved.table.columns.find((c) => lower(c.name) === lower(testFields[1]!));
    if (!connector || !column) continue;
    // Its tables: loads of the same source, none narrowed; its column references: its own.
    const inner = new Map<string, TableDef>();
    let own = true;
    walk(subselect, (key, node) => {
      if (key === 'RangeSubselect' || key === 'RangeFunction') own = false;
      if (key !== 'RangeVar') return;
      const scan = typeof node.relname === 'string' ? plans.get(node.relname) : undefined;
      if (!scan || scan.bound.resolved.origin !== 'rows' || scan.bound.resolved.source !== source || scan.bound.rowCondition) own = false;
      else inner.set(rangeAlias(node), scan.bound.resolved.table);
    });
    walk(subselect, (key, node) => {
      if (key !== 'ColumnRef') return;
      const fields = fieldNames(node.fields);
      const known =
        fields.length === 1
          ? [...inner.values()].some((t) => t.columns.some((c) => lower(c.name) === lower(fields[0]!)))
          : fields.length === 2 && inner.has(lower(fields[0]!));
      if (!known) own = false;
    });
    const ordersLikeEngine = (bytewise.get(source.name) ?? false) && [...inner.values()].every((t) => t.columns.every((c) => !c.collation));
    if (!own || inner.size === 0 || !sameAtPostgres(subselect, ordersLikeEngine)) continue;
    const tree = structuredClone(subselect);
    withSourceNames(tree, new Map([...plans].map(([loadName, scan]) => [loadName, scan.bound.resolved.table])), connector);
    const sql = deparseSync({ version: 0, stmts: [{ stmt: { SelectStmt: tree } }] } as ParseResult).replace(/;\s*$/, '');
    found.set(sublink, { source, alias: lower(testFields[0]!), column, sql, narrows: !!(subselect.whereClause || subselect.havingClause) });
  }
  return found;
}

/**
 * The members, in groups of two or more that equi-joins on a unique column link (a key: the
 * table's one-column primary key, or a column with as many distinct values as rows). A join on
 * columns unique on neither side multiplies rows (customers and suppliers of the same nation):
 * its tables are not joined at the source, the engine joins their results.
 */
function keyJoined(members: Range[], conditions: Node[], tableOf: (range: Range) => TableDef): Range[][] {
  const byAlias = new Map(members.map((m) => [m.alias, m]));
  const unique = (fields: string[]): boolean => {
    const member = fields.length === 2 ? byAlias.get(lower(fields[0]!)) : undefined;
    if (!member) return false;
    const table = tableOf(member);
    const column = table.columns.find((c) => lower(c.name) === lower(fields[1]!));
    if (!column) return false;
    if (table.primaryKey.length === 1 && table.primaryKey[0] === column.nameInSource) return true;
    return (
      column.distinct !== undefined && column.distinct !== null && table.cardinality !== null && column.distinct >= 0.95 * table.cardinality
    );
  };
  const links = new Map(members.map((m) => [m.alias, m.alias]));
  const rootOf = (a: string): string => (links.get(a) === a ? a : rootOf(links.get(a)!));
  for (const condition of conditions) {
    const expr = asKind(condition, 'A_Expr');
    if (!expr || expr.kind !== 'AEXPR_OP' || fieldNames(expr.name).join('.') !== '=') continue;
    const left = fieldNames(asKind(expr.lexpr, 'ColumnRef')?.fields);
    const right = fieldNames(asKind(expr.rexpr, 'ColumnRef')?.fields);
    const [a, b] = [lower(left[0] ?? ''), lower(right[0] ?? '')];
    if (left.length !== 2 || right.length !== 2 || a === b || !byAlias.has(a) || !byAlias.has(b)) continue;
    if (unique(left) || unique(right)) links.set(rootOf(a), rootOf(b));
  }
  const components = new Map<string, Range[]>();
  for (const m of members) components.set(rootOf(m.alias), [...(components.get(rootOf(m.alias)) ?? []), m]);
  return [...components.values()].filter((component) => component.length >= 2);
}

function joinedRows(members: ScanPlan[]): number | null {
  const sizes = members.map((m) => ({ rows: m.rows, table: m.bound.resolved.table.cardinality }));
  if (sizes.some((s) => s.rows === null || s.table === null || s.table === 0)) return null;
  const biggest = sizes.reduce((a, b) => (b.rows! > a.rows! ? b : a));
  const kept = sizes.filter((s) => s !== biggest).reduce((share, s) => share * Math.min(1, s.rows! / s.table!), 1);
  return Math.max(1, Math.round(biggest.rows! * kept));
}

/** The aliases a condition's column references name (their first field). */
function aliasesUsed(condition: Node): Set<string> {
  const used = new Set<string>();
  walk(condition, (key, node) => {
    if (key === 'ColumnRef') used.add(lower(fieldNames(node.fields)[0] ?? ''));
  });
  return used;
}
