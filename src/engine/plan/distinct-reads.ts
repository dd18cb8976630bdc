/**
 * Distinct rows of a table that only an EXISTS or IN subquery reads: `EXISTS (SELECT * FROM
 * orders o WHERE o.o_custkey = c.c_custkey)` asks whether a row exists, `x IN (SELECT y ...)`
 * which values there are; neither depends on how often a row of the columns they use comes.
 * Such a table's source is asked for each distinct row of those columns once (`GROUP BY` every
 * column, no aggregate), where that makes far fewer rows (TPC-H Q22: the customers' keys among
 * 1.5 million orders). The engine's statement is unchanged: it applies every condition again
 * over rows that hold every column it reads.
 *
 * Only where nothing counts rows: the subquery has no aggregate, window or set-returning
 * function, no GROUP BY, HAVING, LIMIT or set operation, and no subquery of its own; the table
 * is named once in the statement, without a row condition; the source groups the columns as
 * the engine compares them (text under a collation stays as it is). Pure: no I/O.
 */
import type { Node, SelectStmt } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import type { RowConnector } from '../../connectors/types.js';
import type { BoundStatement } from '../access/bind.js';
import type { ScanPlan } from './scans.js';
import { asKind, fieldNames, lower, walk } from '../tree/ast.js';
import { hasFact } from '../tree/functions.js';
import { distinctOf, groupsOf } from './cost.js';

/** Distinct rows are asked for only when the estimates expect at most this share of the rows (grouping costs the source a pass). */
const MAX_GROUP_SHARE = 0.5;

/** Sets `aggregates: []` (distinct rows) on the scans read only by such subqueries. Mutates `scans`. */
export function planDistinctReads(bound: BoundStatement, scans: Map<string, ScanPlan>, registry: PlanCatalog): void {
  const references = new Map<string, number>();
  const semiJoined = new Set<string>();
  walk(bound.ast, (key, node) => {
    if (key === 'RangeVar' && typeof node.relname === 'string') references.set(node.relname, (references.get(node.relname) ?? 0) + 1);
    if (key !== 'SubLink' || (node.subLinkType !== 'EXISTS_SUBLINK' && node.subLinkType !== 'ANY_SUBLINK')) return;
    const select = asKind(node.subselect, 'SelectStmt');
    if (select && countsNoRows(select)) for (const name of fromTables(select)) semiJoined.add(name);
  });
  for (const loadName of semiJoined) {
    const scan = scans.get(loadName);
    if (!scan || references.get(loadName) !== 1 || scan.aggregates || scan.limit !== undefined || scan.bound.rowCondition) continue;
    const resolved = scan.bound.resolved;
    if (resolved.origin !== 'rows' || scan.rows === null) continue;
    // Groups are known only where every column's distinct values are.
    if (scan.columns.some((c) => distinctOf(resolved.table, c) === null)) continue;
    if (groupsOf(resolved.table, scan.columns, scan.rows) > scan.rows * MAX_GROUP_SHARE) continue;
    const connector = registry.connectorOf(resolved.source) as RowConnector;
    const taken = connector.pushdown.applyAggregation(scan.columns, []);
    if (!taken || taken.keys.length !== scan.columns.length) continue;
    // One key column that takes another load's keys: which of those keys have a row, a probe each.
    const [only] = scan.columns;
    const probe =
      scan.columns.length === 1 &&
      scan.dependencies.length > 0 &&
      scan.dependencies.every((d) => d.column.name === only!.name) &&
      connector.dialect.probesKeys(only!);
    scans.set(loadName, { ...scan, aggregates: [], ...(probe ? { probe } : {}) });
  }
}

/** Whether the rows a SELECT makes do not depend on how many times a row of its tables comes. */
function countsNoRows(select: SelectStmt): boolean {
  if (select.op !== 'SETOP_NONE' || select.groupClause || select.havingClause || select.windowClause) return false;
  if (select.limitCount || select.limitOffset || select.withClause || select.valuesLists) return false;
  let plain = true;
  walk(select, (key, node) => {
    if (key === 'SubLink' || key === 'RangeSubselect' || key === 'RangeFunction' || key === 'GroupingSet') plain = false;
    if (key === 'FuncCall' && (node.over || !hasFact(lower(fieldNames(node.funcname).pop() ?? ''), 'keepsRows'))) plain = false;
  });
  return plain;
}

/** The relations a SELECT's FROM names directly (through joins). */
function fromTables(select: SelectStmt): string[] {
  const names: string[] = [];
  const visit = (item: Node | undefined): void => {
    const range = asKind(item, 'RangeVar');
    if (range && typeof range.relname === 'string') names.push(range.relname);
    const join = asKind(item, 'JoinExpr');
    if (join) [join.larg, join.rarg].forEach(visit);
  };
  (select.fromClause ?? []).forEach(visit);
  return names;
}
