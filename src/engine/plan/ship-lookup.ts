/**
 * The lookup form of a shipped join (exec/ship-lookup.ts writes it): where the shipped table is
 * tied to a PostgreSQL table by an integer equi-join, its rows can go as a lookup array indexed
 * by the key instead of rows PostgreSQL must hash-join. The shipped relation becomes
 *
 *   LATERAL (SELECT o.customer_id AS id, d.country FROM unnest(<codes>, <distinct countries>)
 *            AS d(code, country) WHERE d.code = ('[lo:hi]={...}'::int4[])[o.customer_id]) AS c
 *
 * For each row of `o` that relation holds exactly the shipped rows whose key equals
 * `o.customer_id` (the statement's own join condition keeps no other row), and PostgreSQL joins
 * a few distinct rows instead of one per key. Planned here where it is valid: integer keys of
 * the same type on both sides (`c.id` keeps its type), and a place in the statement where a
 * LATERAL subquery may name the PostgreSQL table (after it in FROM, or the right side of an
 * inner or left join whose left side holds it). Pure: no I/O.
 */
import type { ParseResult } from '@pgsql/types';
import type { ColumnDef } from '../../catalog/types.js';
import type { BoundTable } from '../front/bind.js';
import { everyNode, isObject } from '../front/ast.js';
import type { ScanPlan } from './scans.js';
import { distinctOf } from './cost.js';

/** How one shipped table's rows may go as a lookup. */
export interface LookupKey {
  /** The alias of the PostgreSQL table the lookup is indexed by, and its join column. */
  alias: string;
  column: ColumnDef;
  /** The key's position among the shipped columns. */
  keyIndex: number;
  /**
   * Fewer distinct keys than this keep the plain form: they match a small share of the
   * PostgreSQL column's values (by its statistics), which PostgreSQL may read through an index,
   * while a lookup is evaluated on every row.
   */
  minKeys: number;
}

/** The main shipped table's lookup, with the statement it runs in. */
export interface LookupPlan extends LookupKey {
  /** A copy of the statement with the shipped placeholders, without the keyed wrappers (the lookup filters by key itself). */
  ast: ParseResult;
}

/** The share of the PostgreSQL column's distinct values the keys must reach for the lookup form. */
export const LOOKUP_MIN_SHARE = 0.05;

const INTEGER_TYPES = new Set(['SMALLINT', 'INTEGER', 'BIGINT']);

/** Whether `node` holds a reference to the relation `name`. */
const holds = (node: unknown, name: string): boolean =>
  !everyNode(node, (kind, child) => !(kind === 'RangeVar' && (child as { relname?: string }).relname === name));

/** Whether `placeholder` stands where a LATERAL subquery in its place sees `target`. */
function lateralSees(ast: ParseResult, placeholder: string, target: string): boolean {
  const isPlaceholder = (node: unknown) => isObject(node) && (node.RangeVar as { relname?: string } | undefined)?.relname === placeholder;
  let seen = false;
  everyNode(ast, (kind, node) => {
    if (kind === 'JoinExpr') {
      const join = node as { jointype?: string; larg?: unknown; rarg?: unknown };
      if (isPlaceholder(join.rarg) && (join.jointype === 'JOIN_INNER' || join.jointype === 'JOIN_LEFT') && holds(join.larg, target))
        seen = true;
    }
    if (kind === 'SelectStmt') {
      const from = ((node as { fromClause?: unknown[] }).fromClause ?? []) as unknown[];
      const at = from.findIndex(isPlaceholder);
      if (at > 0 && from.slice(0, at).some((item) => holds(item, target))) seen = true;
    }
    return !seen;
  });
  return seen;
}

/** How the shipped table at `placeholder` may go as a lookup, where its join allows one; null otherwise. */
export function planLookup(
  ast: ParseResult,
  placeholder: string,
  shipped: { loadName: string; scan: ScanPlan },
  targetTables: BoundTable[],
  scans: Map<string, ScanPlan>,
): LookupKey | null {
  if (shipped.scan.columns.some((c) => c.name === LOOKUP_CODE)) return null;
  for (const table of targetTables) {
    const dependency = scans
      .get(table.loadName ?? '')
      ?.dependencies.find((d) => d.from === shipped.loadName && INTEGER_TYPES.has(d.column.type) && d.fromColumn.type === d.column.type);
    if (!dependency) continue;
    const keyIndex = shipped.scan.columns.findIndex((c) => c.name === dependency.fromColumn.name);
    if (keyIndex < 0) continue;
    // The PostgreSQL table: read once, under an alias that keeps its column names.
    const aliases: string[] = [];
    everyNode(ast, (kind, node) => {
      const range = node as { relname?: string; alias?: { aliasname?: string; colnames?: unknown } };
      if (kind === 'RangeVar' && range.relname === table.loadName)
        aliases.push(range.alias && !range.alias.colnames ? String(range.alias.aliasname) : '');
      return true;
    });
    if (aliases.length !== 1 || !aliases[0] || !lateralSees(ast, placeholder, table.loadName!)) continue;
    // Without statistics of the column, the plain form (an index on it may serve better).
    const distinct = table.resolved.kind === 'rows' ? distinctOf(table.resolved.table, dependency.column) : null;
    if (distinct === null) continue;
    return {
      alias: aliases[0],
      column: dependency.column,
      keyIndex,
      minKeys: Math.ceil(distinct * LOOKUP_MIN_SHARE),
    };
  }
  return null;
}

/** The code column of the lookup's distinct rows (a shipped column of this name keeps the plain form). */
export const LOOKUP_CODE = '__vdb_code';
