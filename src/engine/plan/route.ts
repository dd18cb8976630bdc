/**
 * The route of a SELECT, decided in one place for execution and EXPLAIN alike:
 *  - `whole`: every table lives in one source that speaks PostgreSQL, which runs the statement
 *    whole and writes its rows as JSON (whole.ts);
 *  - `source-select`: every table lives in one source whose whole SELECTs vdb writes itself
 *    (MySQL/MariaDB, SQLite), and the statement means the same there (source-select.ts);
 *  - `federated`: the sources are asked for what they can compute, and the engine does the rest.
 * Falls back to `federated` whenever a narrower route declines.
 */
import type { SourceRegistry } from '../../catalog/sources.js';
import type { SourceDef } from '../../catalog/types.js';
import { CannotPushDown } from '../../connectors/sql/predicate.js';
import type { RowConnector } from '../../connectors/types.js';
import type { BoundStatement } from '../access/bind.js';
import { sourceSelect, type SourceSelect } from './source-select.js';
import { planWhole, type WholePlan } from './whole.js';

export interface SourceSelectPlan {
  source: SourceDef;
  connector: RowConnector;
  pushed: SourceSelect;
}

export type Route = { kind: 'whole'; plan: WholePlan } | { kind: 'source-select'; plan: SourceSelectPlan } | { kind: 'federated' };

export interface RouteOptions {
  pushdown: boolean;
  /** Send statements of one source whole (default true; off for diagnosis). */
  wholeStatements?: boolean;
}

export async function chooseRoute(bound: BoundStatement, registry: SourceRegistry, options: RouteOptions): Promise<Route> {
  if (!options.pushdown || options.wholeStatements === false) return { kind: 'federated' };
  const whole = await planWhole(bound, registry);
  if (whole) return { kind: 'whole', plan: whole };
  const select = planSourceSelect(bound, registry);
  return select ? { kind: 'source-select', plan: select } : { kind: 'federated' };
}

/** The statement in the dialect of the one MySQL/MariaDB or SQLite source it reads, if it can run there whole. */
export function planSourceSelect(bound: BoundStatement, registry: SourceRegistry): SourceSelectPlan | null {
  const first = bound.tables[0]?.resolved;
  if (!first || first.kind !== 'rows') return null;
  const source = first.source;
  if (!bound.tables.every((t) => t.resolved.kind === 'rows' && t.resolved.source === source)) return null;
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
