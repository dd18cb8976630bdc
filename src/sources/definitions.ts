/**
 * The virtual database as the catalog defines it, read-only: its schemas (system, sources',
 * virtual ones of views), their tables, the permissions, and the resolution of names for the
 * binder. Nothing here connects or publishes (registry.ts brings the sources to life).
 */
import type { CatalogStore } from '../catalog/store.js';
import type { PermissionDef, ProcedureDef, SourceDef, TableDef, ViewDef } from '../catalog/types.js';
import type { CopyUse } from './copies.js';
import { catalogViews } from '../catalog/materialized-views.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { QUERYABLE_SYSTEM_SCHEMAS, QUERYABLE_SYSTEM_TABLES, UNQUALIFIED_SYSTEM_TABLES } from './catalog-relations.js';
import { allProcedures, SYSTEM_SCHEMAS, SYSTEM_TABLES, type ProcedureEntry, type SystemTable } from './system-tables.js';

/** Where a table of the virtual database lives, as the binder needs to know it. */
export type ResolvedTable =
  | { origin: 'system'; schema: string; table: TableDef; engineSchema: string; engineName: string }
  | {
      origin: 'native';
      schema: string;
      table: TableDef;
      /** None for a materialized view read from its copy. */
      source: SourceDef | null;
      engineSchema: string;
      engineName: string;
      /** Read from a local copy (copies.ts) instead of the source, or of a materialized view instead of its SELECT. */
      copy?: CopyUse;
    }
  | { origin: 'rows'; schema: string; table: TableDef; source: SourceDef }
  | { origin: 'view'; schema: string; table: ViewDef };

/** The engine schema of the system tables' copies (created in every engine generation). */
export const SYSTEM_ENGINE_SCHEMA = 'vdb_sys';

export const engineSchemaOf = (source: SourceDef) => `src_${source.oid}`;
export const systemEngineName = (t: SystemTable) => `${t.schema}_${t.def.name}`;
export const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Exact match first, then a unique case-insensitive one (names are case-insensitive). */
export function findByName<T>(items: readonly T[], name: string, nameOf: (item: T) => string): T | undefined {
  return items.find((i) => nameOf(i) === name) ?? items.find((i) => same(nameOf(i), name));
}

export abstract class SourceDefinitions {
  constructor(protected readonly store: CatalogStore) {}

  /** How a source's rows reach the engine: read by the engine itself, or delivered by its connector. */
  protected abstract deliveryOf(source: SourceDef): 'engine' | 'rows';

  /** Changes with every change to the catalog (sources, views, users, grants): cached plans key on it. */
  get generation(): number {
    return this.store.generation;
  }

  get sources(): readonly SourceDef[] {
    return this.store.current.sources;
  }

  /** Lists schema names: system schemas first, then sources in creation order, then virtual schemas. */
  schemaNames(): string[] {
    return [...SYSTEM_SCHEMAS, ...this.store.current.sources.map((s) => s.name), ...this.virtualSchemas()];
  }

  /** Schemas that hold views only (they exist while they hold one). */
  virtualSchemas(): string[] {
    return [...new Set(this.views.map((v) => v.schema))];
  }

  /** The views: those of CREATE VIEW, then the materialized views (catalog/materialized-views.ts). */
  get views(): readonly ViewDef[] {
    return catalogViews(this.store.current);
  }

  /** The tables (and views) of a schema that is not a system schema. */
  tablesOf(schema: string): readonly TableDef[] {
    const source = this.findSource(schema);
    return source ? source.tables : this.views.filter((v) => same(v.schema, schema));
  }

  /** The exact name of schema `name` (case-insensitive), or a 404. */
  requireSchema(name: string): string {
    const found = findByName(this.schemaNames(), name, (s) => s);
    if (!found) throw notFound(`Schema "${name}" does not exist.`, 'GET /rest/api/source lists the schemas.', 'Unknown schema');
    return found;
  }

  /** The definitions of the system tables (SYS, SYSADMIN, SYSLOG). */
  systemTables(): TableDef[] {
    return SYSTEM_TABLES.map((t) => t.def);
  }

  /** The permission entries of every role. */
  get permissions(): readonly PermissionDef[] {
    return this.store.current.permissions ?? [];
  }

  findSource(name: string): SourceDef | undefined {
    return findByName(this.store.current.sources, name, (s) => s.name);
  }

  /** Resolves `schema.table` (or a bare table name that is unique across schemas). */
  resolve(schema: string | undefined, table: string): ResolvedTable {
    if (schema === undefined) return this.resolveUnqualified(table);
    const systemSchema = QUERYABLE_SYSTEM_SCHEMAS.find((s) => same(s, schema));
    if (systemSchema) {
      const found = findByName(
        QUERYABLE_SYSTEM_TABLES.filter((t) => t.schema === systemSchema),
        table,
        (t) => t.def.name,
      );
      if (!found) throw this.unknownTable(systemSchema, table);
      return {
        origin: 'system',
        schema: systemSchema,
        table: found.def,
        engineSchema: SYSTEM_ENGINE_SCHEMA,
        engineName: systemEngineName(found),
      };
    }
    const schemaName = this.requireSchema(schema);
    const source = this.findSource(schemaName);
    if (!source) {
      const view = findByName(this.tablesOf(schemaName) as ViewDef[], table, (v) => v.name);
      if (!view) throw this.unknownTable(schemaName, table);
      return { origin: 'view', schema: view.schema, table: view };
    }
    const def = findByName(source.tables, table, (t) => t.name);
    if (!def) throw this.unknownTable(source.name, table);
    if (this.deliveryOf(source) === 'engine') {
      return {
        origin: 'native',
        schema: source.name,
        table: def,
        source,
        engineSchema: engineSchemaOf(source),
        engineName: def.name,
      };
    }
    return { origin: 'rows', schema: source.name, table: def, source };
  }

  private resolveUnqualified(table: string): ResolvedTable {
    const candidates = [
      ...UNQUALIFIED_SYSTEM_TABLES.filter((t) => same(t.def.name, table)).map((t) => t.schema),
      ...this.store.current.sources.filter((s) => s.tables.some((t) => same(t.name, table))).map((s) => s.name),
      ...this.virtualSchemas().filter((schema) => this.tablesOf(schema).some((t) => same(t.name, table))),
    ];
    if (candidates.length === 1) return this.resolve(candidates[0], table);
    if (candidates.length === 0) throw this.unknownTable(undefined, table);
    throw badRequest(
      `Table name "${table}" is ambiguous: it exists in schemas ${candidates.join(', ')}.`,
      'Qualify the table with its schema, e.g. schema.table.',
      'Ambiguous name',
    );
  }

  protected unknownTable(schema: string | undefined, table: string): ApiError {
    const name = schema ? `${schema}.${table}` : table;
    return notFound(
      `Table "${name}" does not exist.`,
      schema ? `GET /rest/api/source/${schema} lists its tables.` : 'Qualify the table with its schema, e.g. schema.table.',
      'Unknown table',
    );
  }

  /** Every procedure: vdb's own (SYSADMIN), then each source's. */
  procedures(): ProcedureEntry[] {
    return allProcedures(this.store.current);
  }

  /** The procedures of one schema (SYSADMIN's or a source's). */
  proceduresOf(schema: string): readonly ProcedureDef[] {
    return this.procedures()
      .filter((p) => same(p.schema, schema))
      .map((p) => p.procedure);
  }

  /** A source's procedure by name (case-insensitive), or undefined; SYSADMIN's are not a source's. */
  findSourceProcedure(schema: string, name: string): { source: SourceDef; procedure: ProcedureDef } | undefined {
    const source = this.findSource(schema);
    const procedure = source ? findByName(source.procedures ?? [], name, (p) => p.name) : undefined;
    return source && procedure ? { source, procedure } : undefined;
  }

  /** Whether a system table changes without catalog changes (the logs): loaded per statement. */
  isVolatile(table: TableDef): boolean {
    return SYSTEM_TABLES.some((t) => t.def === table && t.volatile);
  }
}
