/**
 * What the access rewrite and the binder may ask of the catalog: names resolved, the sources,
 * views and schemas a user may see, and which system tables change per statement. The service's
 * source registry is one; planner tests build one from plain definitions.
 */
import type { SourceDef, TableDef, ViewDef } from '../../catalog/types.js';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { CopyReading, CopyUse } from '../../sources/copies.js';

export interface BindCatalog {
  /** The table or view a (possibly unqualified) name means; throws a 404 for an unknown one. */
  resolve(schema: string | undefined, table: string): ResolvedTable;
  readonly sources: readonly SourceDef[];
  readonly views: readonly ViewDef[];
  /** Schemas that hold only views. */
  virtualSchemas(): string[];
  tablesOf(schema: string): readonly TableDef[];
  systemTables(): TableDef[];
  /** The local copy a statement reading `schema.table` with `reading` reads instead of the source (none: planner tests). */
  copyFor?(schema: string, table: TableDef, reading: CopyReading): CopyUse | null;
  /** Whether a system table's rows change from one statement to the next (the logs). */
  isVolatile(table: TableDef): boolean;
}
