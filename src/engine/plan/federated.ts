/**
 * The plan of a statement the engine runs over what its sources send (the federated route):
 * first its narrowing subqueries (a table as its user may see it), innermost first, each planned
 * as a statement of its own whose result the engine keeps in a table, then the statement over
 * those tables. Everything is decided here, before anything runs; execution follows the plan
 * (exec/execute.ts) and EXPLAIN prints it (explain.ts).
 */
import type { Node, ParseResult } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import { scaleFromValues } from '../../connectors/kinds.js';
import type { BoundStatement, BoundTable } from '../access/bind.js';
import { asKind, becomes, isNode, walk } from '../tree/ast.js';
import { narrowingQuery } from './narrowing.js';
import { planStatement, type JoinLimits, type StatementPlan } from './planner.js';

export interface NarrowingStep {
  /** The engine table its rows go to, which the statement reads in its place. */
  table: string;
  plan: StatementPlan;
}

export interface FederatedPlan {
  route: 'federated';
  /** The narrowings, innermost first: each may read the tables of those before it. */
  narrowings: NarrowingStep[];
  /** The statement over the sources' results and the narrowings' tables. */
  statement: StatementPlan;
  /** The bound statement the plan was made for, its narrowings replaced by their tables. */
  bound: BoundStatement;
  /**
   * The statement as bound, before its narrowings were replaced, where a numeric it reads takes
   * its values' scale: its result types over the catalog's types come from it. Null otherwise.
   */
  asBound: ParseResult | null;
}

export interface FederatedOptions {
  pushdown: boolean;
  dependentJoin: JoinLimits;
  /** Whether each PostgreSQL source (by name) orders text bytewise; absent: not known, assumed not. */
  bytewise?: ReadonlyMap<string, boolean>;
}

/** Plans the statement and its narrowings. The bound tree's narrowings are replaced by their tables (in place). */
export function planFederated(bound: BoundStatement, registry: PlanCatalog, options: FederatedOptions): FederatedPlan {
  const asBound = readsScaledNumerics(bound) ? structuredClone(bound.ast) : null;
  const entries: Node[] = [];
  walk(bound.ast, (_kind, node) => {
    for (const value of Object.values(node)) {
      for (const item of Array.isArray(value) ? value : [value]) if (isNode(item) && bound.narrowings.has(item)) entries.push(item);
    }
  });
  // walk() visits outer nodes first: the innermost narrowings come last.
  const narrowings = entries.reverse().map((entry, i): NarrowingStep => {
    const subselect = asKind(entry, 'RangeSubselect')!;
    // The statement's simple conditions on the narrowing filter it at its source too (narrowing.ts).
    const inner: ParseResult = { version: 0, stmts: [{ stmt: narrowingQuery(bound.ast, entry) }] };
    const plan = planStatement(
      { ...bound, ast: inner, tables: tablesReadBy(inner, bound.tables) },
      registry,
      options.pushdown,
      options.dependentJoin,
      options.bytewise,
    );
    const table = `__vdb_narrowed_${i + 1}`;
    becomes(entry, { RangeVar: { relname: table, inh: true, relpersistence: 'p', alias: subselect.alias } });
    return { table, plan };
  });
  const statement = narrowings.length === 0 ? bound : { ...bound, tables: tablesReadBy(bound.ast, bound.tables) };
  return {
    route: 'federated',
    narrowings,
    statement: planStatement(statement, registry, options.pushdown, options.dependentJoin, options.bytewise),
    bound: statement,
    asBound,
  };
}

/** The bound tables whose load a tree still reads. */
function tablesReadBy(tree: unknown, tables: readonly BoundTable[]): BoundTable[] {
  const names = new Set<string>();
  walk(tree, (nodeType, node) => {
    if (nodeType === 'RangeVar' && typeof node.relname === 'string') names.add(node.relname);
  });
  return tables.filter((t) => !t.loadName || names.has(t.loadName));
}

/** Whether the statement reads a numeric whose values carry their own scale (exec/load-scale.ts). */
const readsScaledNumerics = (bound: BoundStatement) =>
  bound.tables.some(
    ({ resolved }) => resolved.origin === 'rows' && resolved.table.columns.some((c) => scaleFromValues(c, resolved.source)),
  );
