import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import path from 'node:path';
import type { SourceDef, TableDef } from '../../catalog/types.js';
import { confineDatabaseFile } from '../files/paths.js';
import { NO_PUSHDOWN, SourceUnreachableError } from '../types.js';
import type { Capabilities, EngineNativeConnector, ImportedTable } from '../types.js';

/** Runs an internal statement on the engine and returns its rows as objects. */
export type EngineQuery = (sql: string) => Promise<Array<Record<string, unknown>>>;

export interface DuckdbConnectorContext {
  roots: readonly string[];
  engineQuery: EngineQuery;
}

/**
 * A DuckDB database file, attached to the engine read-only,
 * so the engine reads it natively. The file must lie inside the configured file roots.
 * Tables of its `main` schema are named as they are, other schemas' as `schema.table`.
 */
export class DuckdbConnector implements EngineNativeConnector {
  readonly kind = 'duckdb' as const;
  readonly delivery = 'engine' as const;
  readonly capabilities: Capabilities = {
    ...NO_PUSHDOWN,
    projection: true,
    filters: true,
    limit: true,
    orderBy: true,
    aggregates: true,
    joins: true,
  };

  constructor(
    readonly source: SourceDef,
    private readonly context: DuckdbConnectorContext,
  ) {}

  /** The name the file is attached under in the engine. */
  get alias(): string {
    return `vdb_duck_${this.source.name}`;
  }

  private file(): string {
    const file = this.source.connection.path;
    if (!file) throw new Error(`DuckDB source "${this.source.name}" has no path`);
    // The roots first: a path outside them gets one answer, whatever is there.
    return confineDatabaseFile(file, this.context.roots, 'DuckDB');
  }

  // Read-only always: vdb never writes to DuckDB files, and a read-write attach would lock
  // every other process out of the file.
  setupSql(): string[] {
    return [`ATTACH IF NOT EXISTS ${sqlLiteral(this.file())} AS ${quoteIdent(this.alias)} (READ_ONLY)`];
  }

  engineFolder(): string | null {
    try {
      return path.dirname(this.file());
    } catch {
      return null;
    }
  }

  /** Attaches the file to the current engine (a no-op when it is attached already). */
  private async attach(): Promise<void> {
    try {
      for (const statement of this.setupSql()) await this.context.engineQuery(statement);
    } catch (err) {
      throw new SourceUnreachableError(err instanceof Error ? err.message : String(err));
    }
  }

  async healthCheck(): Promise<void> {
    await this.attach();
  }

  async importMetadata(): Promise<ImportedTable[]> {
    await this.attach();
    const db = sqlLiteral(this.alias);
    const objects = await this.context.engineQuery(
      `SELECT schema_name, table_name AS name, 'Table' AS kind, estimated_size AS estimate, comment FROM duckdb_tables() WHERE database_name = ${db}
       UNION ALL
       SELECT schema_name, view_name, 'View', NULL, comment FROM duckdb_views() WHERE database_name = ${db} AND NOT internal
       ORDER BY 1, 2`,
    );
    const columns = await this.context.engineQuery(
      `SELECT schema_name, table_name, column_name, data_type, is_nullable, column_index FROM duckdb_columns()
       WHERE database_name = ${db} ORDER BY schema_name, table_name, column_index`,
    );
    const keys = await this.context.engineQuery(
      `SELECT schema_name, table_name, constraint_column_names FROM duckdb_constraints()
       WHERE database_name = ${db} AND constraint_type = 'PRIMARY KEY'`,
    );
    return objects.map((o) => {
      const schema = String(o.schema_name);
      const name = String(o.name);
      const own = columns.filter((c) => c.schema_name === schema && c.table_name === name);
      const key = keys.find((k) => k.schema_name === schema && k.table_name === name);
      return {
        name: schema === 'main' ? name : `${schema}.${name}`,
        nameInSource: `${quoteIdent(schema)}.${quoteIdent(name)}`,
        kind: o.kind === 'View' ? 'View' : 'Table',
        columns: own.map((c, i) => ({
          name: String(c.column_name),
          nameInSource: String(c.column_name),
          type: String(c.data_type),
          nullable: c.is_nullable !== false,
          position: i + 1,
        })),
        primaryKey: Array.isArray(key?.constraint_column_names) ? key.constraint_column_names.map(String) : [],
        cardinality: o.estimate === null || o.estimate === undefined ? null : Number(o.estimate),
        description: o.comment ? String(o.comment) : null,
      };
    });
  }

  relationSql(table: TableDef): string {
    return `${quoteIdent(this.alias)}.${table.nameInSource}`;
  }

  async close(): Promise<void> {
    await this.context.engineQuery(`DETACH DATABASE IF EXISTS ${quoteIdent(this.alias)}`).catch(() => undefined);
  }
}
