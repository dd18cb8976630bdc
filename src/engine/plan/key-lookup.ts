/**
 * Dependent-join keys as a lookup at the big side's source (MySQL and MariaDB: one binary
 * literal with a byte per key, read at the key's offset). Where the big side's column and the
 * keys are integers and the keys are many, the source reads each row's byte instead of
 * searching an IN list: the keys' filter. And where the partial aggregation groups the scan by
 * that key alone, and the engine's statement uses the smaller load's key nowhere but in the
 * join, the smaller load's rows are numbered by their other columns while they arrive
 * (exec/early-keys.ts) and the source groups its rows by the number of their key instead of by
 * the key: a few groups instead of one per key. Each group keeps its least key, which joins the
 * one smaller row of that key; that row's other columns are those of every row of its number,
 * so the engine's statement gives the same answer. Planned here where valid; used at run time
 * where the keys turn out at least `minKeys`, dense enough, and (to group) unique with at most
 * 255 numbers. Pure: no I/O.
 */
import type { ParseResult } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { RowConnector } from '../../connectors/types.js';
import { asKind, fieldNames, lower, rangeAlias, walk, exprIs } from '../tree/ast.js';
import { distinctOf } from './cost.js';
import type { GroupLookup, ScanPlan } from './scans.js';
import { LOOKUP_MIN_SHARE } from './ship-lookup.js';

const INTEGER_TYPES = new Set(['SMALLINT', 'INTEGER', 'BIGINT']);

/** The most numbers a group lookup has: one byte each, 0 standing for no row. */
export const MAX_LOOKUP_CODE = 255;

/**
 * Fewer keys keep the IN list: measured at MariaDB (bench/README.md), 300 keys read faster as a
 * list, 1,000 a fifth slower than as a lookup.
 */
const MIN_KEYS = 1000;

/**
 * The fewest keys of a dependent join on the big side's `column` that go as a lookup; null where
 * they cannot (not integers on both sides). Where the column's statistics are known (MySQL keeps
 * them for indexed columns), also 5 % of its distinct values: fewer keys may be read through
 * the index, which a lookup never is.
 */
export function lookupMinKeys(table: TableDef, column: ColumnDef, keyColumn: ColumnDef): number | null {
  if (!INTEGER_TYPES.has(column.type) || !INTEGER_TYPES.has(keyColumn.type)) return null;
  const distinct = distinctOf(table, column);
  return Math.max(MIN_KEYS, distinct === null ? 0 : Math.ceil(distinct * LOOKUP_MIN_SHARE));
}

/** The group lookup the scan at `loadName` may use, where valid; null otherwise. */
export function planGroupLookup(
  ast: ParseResult,
  loadName: string,
  scans: ReadonlyMap<string, ScanPlan>,
  registry: PlanCatalog,
): GroupLookup | null {
  const scan = scans.get(loadName);
  const resolved = scan?.bound.resolved;
  if (!scan?.aggregates || scan.columns.length !== 1 || resolved?.origin !== 'rows') return null;
  if (!(registry.connectorOf(resolved.source) as RowConnector).dialect.takesKeyLookups) return null;
  const key = scan.columns[0]!;
  for (const dependency of scan.dependencies) {
    const from = scans.get(dependency.from);
    // Under a row condition the smaller load's keys come from the rows it lets through, after the load: not numbered.
    if (
      dependency.column.name !== key.name ||
      dependency.fromColumn.type !== key.type ||
      !from ||
      from.aggregates ||
      from.bound.rowCondition
    )
      continue;
    const minKeys = lookupMinKeys(resolved.table, key, dependency.fromColumn);
    if (minKeys === null || !usedOnlyToJoin(ast, loadName, key, dependency.from, dependency.fromColumn)) continue;
    return { from: dependency.from, fromColumn: dependency.fromColumn, minKeys };
  }
  return null;
}

/**
 * Whether the statement names both loads once and their key columns only in `a.key =
 * b.fromColumn`: no other reference to either, qualified or not, and no star that would show
 * one. Elsewhere the groups' least keys would show, or join a third table in place of the
 * others.
 */
function usedOnlyToJoin(ast: ParseResult, loadName: string, key: ColumnDef, from: string, fromColumn: ColumnDef): boolean {
  const aliases = new Map<string, string[]>();
  walk(ast, (nodeType, node) => {
    if (nodeType === 'RangeVar') {
      const relname = String(node.relname);
      aliases.set(relname, [...(aliases.get(relname) ?? []), rangeAlias(node)]);
    }
  });
  const own = aliases.get(loadName);
  const other = aliases.get(from);
  if (own?.length !== 1 || other?.length !== 1) return false;
  const names = (fields: string[]) => fields.map(lower);
  const isRef = (fields: string[], alias: string, column: ColumnDef) =>
    fields.length === 2 && fields[0] === alias && fields[1] === lower(column.name);
  /** References that may mean the column: qualified, unqualified, or within a star. */
  const mayMean = (fields: string[], alias: string, column: ColumnDef) => {
    const last = fields[fields.length - 1];
    if (last === '*') return fields.length === 1 || fields[0] === alias;
    return isRef(fields, alias, column) || (fields.length === 1 && last === lower(column.name));
  };
  let ownReferences = 0;
  let otherReferences = 0;
  let joined = false;
  walk(ast, (nodeType, node) => {
    if (nodeType === 'ColumnRef') {
      const fields = names(fieldNames(node.fields));
      if (mayMean(fields, own[0]!, key)) ownReferences++;
      if (mayMean(fields, other[0]!, fromColumn)) otherReferences++;
    }
    if (nodeType === 'A_Expr' && exprIs(node, 'AEXPR_OP') && fieldNames(node.name).join('.') === '=') {
      const sides = [node.lexpr, node.rexpr].map((side) => names(fieldNames(asKind(side, 'ColumnRef')?.fields)));
      if (sides.some((s) => isRef(s, own[0]!, key)) && sides.some((s) => isRef(s, other[0]!, fromColumn))) joined = true;
    }
  });
  return joined && ownReferences === 1 && otherReferences === 1;
}
