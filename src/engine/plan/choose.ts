/**
 * A SELECT's plan, decided before anything runs: execution follows it (engine.ts) and EXPLAIN
 * prints it (explain.ts). In the order they are tried:
 *  - `constant`: a select list of constants, answered without a source or the engine;
 *  - `whole`: every table in one source that speaks PostgreSQL, which runs the statement (whole.ts);
 *  - `source-select`: every table in one MySQL/MariaDB or SQLite source, the statement written in
 *    its dialect (source-select.ts);
 *  - `shipped`: a join whose small side goes to PostgreSQL as arrays, run whole there (ship.ts);
 *  - `federated`: the sources asked for what they can compute, the engine doing the rest (federated.ts).
 * A route a source may still refuse at its door (it declines the statement, or the small side
 * turns out larger than planned) carries `otherwise`: the plan that runs then, planned only if needed.
 */
import type { PlanCatalog } from './plan-catalog.js';
import type { SourceDef } from '../../catalog/types.js';
import { CannotPushDown } from '../../connectors/sql/predicate.js';
import { wholeStatementConnector, type RowConnector } from '../../connectors/types.js';
import type { BoundStatement } from '../access/bind.js';
import { shapeOf } from '../tree/statement-cache.js';
import { constantSelect, type Constant } from './constant-select.js';
import { planFederated, type FederatedPlan } from './federated.js';
import type { JoinLimits } from './planner.js';
import { sourceSelect, type SourceSelect } from './source-select.js';
import { DEFAULT_MAX_SHIPPED_ROWS, planShipping, type ShippingPlan } from './ship.js';
import { planWhole, type WholePlan } from './whole.js';

export type Plan = ConstantPlan | WholeRoute | SourceSelectRoute | ShippedRoute | FederatedPlan;

export interface ConstantPlan {
  route: 'constant';
  constants: Constant[];
}

export interface WholeRoute {
  route: 'whole';
  whole: WholePlan;
  /** Where the result columns of statements of this shape are learned (per source and catalog generation). */
  columnsKey: string;
  /** The plan when the source refuses the statement as such (an unknown function, ...). */
  otherwise(): Promise<Plan>;
}

export interface SourceSelectRoute {
  route: 'source-select';
  select: SourceSelectPlan;
  columnsKey: string;
  otherwise(): Promise<Plan>;
}

export interface ShippedRoute {
  route: 'shipped';
  shipping: ShippingPlan;
  /** The statement PostgreSQL runs over the shipped arrays. */
  whole: WholePlan;
  /** The same statement over a lookup array of the small side's dense keys (ship-lookup.ts); null when it has none. */
  lookupWhole: WholePlan | null;
  maxShippedRows: number;
  columnsKey: string;
  /** The plan when the small side turns out larger than planned, or PostgreSQL refuses the statement. */
  otherwise(): FederatedPlan;
}

export interface SourceSelectPlan {
  source: SourceDef;
  connector: RowConnector;
  pushed: SourceSelect;
}

export interface PlanOptions {
  /** Push projections and conditions to the sources (off: read whole tables, federated). */
  pushdown: boolean;
  /** Send statements of one source whole (default true; off for diagnosis). */
  wholeStatements?: boolean;
  dependentJoin: JoinLimits & { maxShippedRows?: number };
  /** A long statement's wait for a turn of the event loop before each expensive stage (engine/cpu-lane.ts). */
  turn?: () => Promise<void>;
}

export async function choosePlan(bound: BoundStatement, registry: PlanCatalog, options: PlanOptions): Promise<Plan> {
  const constants = constantSelect(bound);
  if (constants) return { route: 'constant', constants };
  const otherwise = () => planAcrossSources(bound, registry, options);
  if (!options.pushdown || options.wholeStatements === false) return otherwise();
  const shape = () => `${registry.generation}:${shapeOf(bound.ast)}`;
  const whole = await planWhole(bound, registry);
  if (whole) return { route: 'whole', whole, columnsKey: `${whole.source.oid}:${shape()}`, otherwise };
  const select = planSourceSelect(bound, registry);
  if (select) return { route: 'source-select', select, columnsKey: `${select.source.oid}:${shape()}`, otherwise };
  return otherwise();
}

/** A statement no one source runs as such: shipped where that plan is chosen, else federated. */
async function planAcrossSources(bound: BoundStatement, registry: PlanCatalog, options: PlanOptions): Promise<Plan> {
  await options.turn?.();
  const bytewise = options.pushdown ? await bytewiseSources(bound, registry) : new Map<string, boolean>();
  const federated = () => planFederated(bound, registry, { ...options, bytewise });
  if (!options.pushdown || options.wholeStatements === false) return federated();
  const maxShippedRows = options.dependentJoin.maxShippedRows ?? DEFAULT_MAX_SHIPPED_ROWS;
  const shipping = planShipping(bound, registry, maxShippedRows);
  const whole = shipping && (await planWhole({ ...bound, ast: shipping.ast, tables: shipping.targetTables }, registry));
  if (!shipping || !whole) return federated();
  const lookupWhole = shipping.lookup
    ? await planWhole({ ...bound, ast: shipping.lookup.ast, tables: shipping.targetTables }, registry)
    : null;
  return {
    route: 'shipped',
    shipping,
    whole,
    lookupWhole,
    maxShippedRows,
    columnsKey: `shipped:${shipping.target.oid}:${registry.generation}:${shapeOf(bound.ast)}`,
    otherwise: federated,
  };
}

/** Whether each PostgreSQL source the statement reads orders text bytewise (subqueries sent to it: join-pushdown.ts). */
async function bytewiseSources(bound: BoundStatement, registry: PlanCatalog): Promise<Map<string, boolean>> {
  const bytewise = new Map<string, boolean>();
  for (const { resolved } of bound.tables) {
    if (resolved.origin !== 'rows' || bytewise.has(resolved.source.name)) continue;
    const connector = wholeStatementConnector(registry.connectorOf(resolved.source));
    if (connector) bytewise.set(resolved.source.name, await connector.bytewiseCollation());
  }
  return bytewise;
}

/** The statement in the dialect of the one MySQL/MariaDB or SQLite source it reads, if it can run there whole. */
export function planSourceSelect(bound: BoundStatement, registry: PlanCatalog): SourceSelectPlan | null {
  const first = bound.tables[0]?.resolved;
  if (!first || first.origin !== 'rows') return null;
  const source = first.source;
  if (!bound.tables.every((t) => t.resolved.origin === 'rows' && t.resolved.source === source)) return null;
  const connector = registry.connectorOf(source) as RowConnector;
  if (!connector.dialect.writesWholeSelects) return null;
  const select = (bound.ast.stmts?.[0]?.stmt as Record<string, unknown> | undefined)?.SelectStmt as Record<string, unknown> | undefined;
  if (!select) return null;
  const tables = new Map(
    bound.tables.map((t) => [t.loadName, { ...t.resolved.table, label: `${t.resolved.schema}.${t.resolved.table.name}` }]),
  );
  try {
    return { source, connector, pushed: sourceSelect(select, connector, (relname) => tables.get(relname)) };
  } catch (err) {
    if (err instanceof CannotPushDown) return null;
    throw err;
  }
}
