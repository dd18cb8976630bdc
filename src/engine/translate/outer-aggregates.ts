/**
 * An aggregate inside a subquery whose arguments use only an outer query's columns belongs to
 * that outer query in PostgreSQL (`SELECT (SELECT max(o.x)) FROM t o` is one row: the maximum
 * over t), while the engine computes it inside the subquery, once per outer row. PostgreSQL's
 * rule: the aggregate's level is that of the innermost query any column of its arguments comes
 * from (columns of a subquery within the arguments count only where they come from outside
 * it); with no column at all, its own query. The engine follows that rule for the columns the
 * arguments name themselves (`max(o.x)`), not for those only a subquery within the arguments
 * names (`max((SELECT i.x FROM t i WHERE i.k = o.k))`): such statements are refused.
 *
 * A qualified column belongs to the nearest query whose FROM names its qualifier; a qualifier
 * no query names (a table the engine reads under another name) is taken as the aggregate's own.
 * An unqualified column is taken from the nearest query between it and the aggregate that has
 * a FROM; where none has, from outside.
 */
import type { Node, SelectStmt } from '@pgsql/types';
import { asKind, fieldNames, lower } from '../tree/ast.js';
import { functionFacts } from '../tree/functions.js';
import { calledName, notAsPostgres } from '../tree/syntax-nodes.js';

interface Scope {
  aliases: Set<string>;
  hasFrom: boolean;
}

/** The names the FROM of `select` gives its relations (aliases, else the table's or CTE's name). */
function scopeOf(select: SelectStmt): Scope {
  const aliases = new Set<string>();
  const add = (item: Node | undefined): void => {
    const range = asKind(item, 'RangeVar');
    if (range) aliases.add(lower(range.alias?.aliasname ?? range.relname ?? ''));
    const sub = asKind(item, 'RangeSubselect') ?? asKind(item, 'RangeFunction');
    if (sub?.alias) aliases.add(lower(sub.alias.aliasname ?? ''));
    const join = asKind(item, 'JoinExpr');
    if (join) {
      if (join.alias) aliases.add(lower(join.alias.aliasname ?? ''));
      add(join.larg);
      add(join.rarg);
    }
  };
  for (const item of select.fromClause ?? []) add(item);
  return { aliases, hasFrom: (select.fromClause ?? []).length > 0 };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * Visits every node below `value` with the scopes of the SELECTs it lies in (innermost last);
 * `visit` answering false skips the node's children.
 */
function walkScoped(
  value: unknown,
  scopes: Scope[],
  visit: (kind: string, node: Record<string, unknown>, scopes: Scope[]) => boolean,
): void {
  if (Array.isArray(value)) {
    for (const item of value) walkScoped(item, scopes, visit);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (!isObject(child)) continue;
    if (!/^[A-Z]/.test(key)) {
      walkScoped(child, scopes, visit);
      continue;
    }
    if (!visit(key, child, scopes)) continue;
    const select = key === 'SelectStmt' ? (child as SelectStmt) : undefined;
    // A set operation's branches are queries of the same level as it.
    const inner = select && (!select.op || select.op === 'SETOP_NONE') ? [...scopes, scopeOf(select)] : scopes;
    walkScoped(child, inner, visit);
  }
}

/**
 * Whether the columns of `args` that count all come from queries outside the innermost of
 * `scopes`, and only from within subqueries of the arguments (none counted: false).
 */
function outerThroughSubqueries(args: unknown, scopes: Scope[]): boolean {
  const depth = scopes.length;
  let inside = false;
  let outside = false;
  let outsideDirectly = false;
  walkScoped(args, scopes, (kind, node, at) => {
    if (kind !== 'ColumnRef') return true;
    const fields = fieldNames((node as { fields?: Node[] }).fields);
    if (fields.length === 0 || fields[fields.length - 1] === '*') return false;
    // The scopes from the aggregate's query inwards, innermost first.
    const within = at.slice(depth - 1).reverse();
    const nested = at.length - depth;
    let level: number;
    if (fields.length >= 2) {
      const qualifier = lower(fields[fields.length - 2]!);
      const index = within.findIndex((scope) => scope.aliases.has(qualifier));
      const outer = at.slice(0, depth - 1).some((scope) => scope.aliases.has(qualifier));
      level = index >= 0 ? nested - index : outer ? -1 : 0;
    } else {
      const index = within.findIndex((scope) => scope.hasFrom);
      level = index >= 0 ? nested - index : -1;
    }
    // level: how deep below the aggregate's query the column's query is (-1: outside it). A
    // column of a subquery within the arguments, taken from that subquery, does not count.
    if (level < 0) outside = true;
    if (level < 0 && nested === 0) outsideDirectly = true;
    else if (level === 0) inside = true;
    return false;
  });
  return outside && !inside && !outsideDirectly;
}

/** Refuses the statement where an aggregate inside a subquery belongs to an outer query (see the module comment). */
export function refuseOuterAggregates(tree: unknown): void {
  walkScoped(tree, [], (kind, node, scopes) => {
    if (kind !== 'FuncCall' || scopes.length < 2) return true;
    const fc = node as { funcname?: Node[]; over?: unknown; args?: Node[]; agg_filter?: Node };
    if (fc.over || !functionFacts(calledName(fc as never))?.allowedAggregate) return true;
    if (outerThroughSubqueries([fc.args ?? [], fc.agg_filter ?? []], scopes)) {
      throw notAsPostgres(
        `The aggregate ${calledName(fc as never)}() inside a subquery over an outer query's columns named only in a subquery of its arguments (PostgreSQL computes it over the outer query's rows, the engine once per outer row)`,
        'Compute the aggregate in the outer query (SELECT max((SELECT ...)) FROM t o), or give it a column of the subquery itself.',
      );
    }
    return true;
  });
}
