/**
 * What planners may ask of the catalog: the connectors' dialects, capabilities and the SQL they
 * write, and the catalog's generation. Nothing that connects or runs. The service's source
 * registry is one; planner tests build one from plain definitions (test/engine/planner-rules.test.ts).
 */
import type { SourceDef } from '../../catalog/types.js';
import type { Connector } from '../../connectors/types.js';

export interface PlanCatalog {
  /** Changes whenever sources, tables, views or permissions change. */
  readonly generation: number;
  /** A source's connector: asked how to write the source's SQL and what it can take, never to run anything while planning. */
  connectorOf(source: SourceDef): Connector;
}
