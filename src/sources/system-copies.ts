/**
 * The system tables (SYS, SYSADMIN, SYSLOG) as the engine reads them: the non-volatile ones
 * copied into each engine generation whenever the catalog or a source's status changed, the
 * logs computed per statement for the user who reads them.
 */
import type { AuditEntry } from '../catalog/audit-log.js';
import type { QueryLogEntry } from '../catalog/query-log.js';
import type { CatalogStore } from '../catalog/store.js';
import type { TableDef, UserDef } from '../catalog/types.js';
import { quoteIdent, sqlLiteral, type DuckRuntime, type EngineGeneration } from '../runtime/duckdb.js';
import { SYSTEM_ENGINE_SCHEMA, systemEngineName } from './definitions.js';
import type { SourceHealth } from './source-health.js';
import { QUERYABLE_SYSTEM_TABLES } from './catalog-relations.js';
import { SYSTEM_TABLES, type SystemValue } from './system-tables.js';

type SharedLogs = () => Promise<{ queries: readonly QueryLogEntry[]; audits: readonly AuditEntry[] }>;

export class SystemTableCopies {
  /** The catalog generation and sources' status each engine generation's copies were written at. */
  private readonly written = new WeakMap<EngineGeneration, string>();
  private refreshing: Promise<void> | null = null;
  /** Every instance's logs, when they are kept in a shared catalog database (useSharedLogs). */
  private sharedLogs: SharedLogs | null = null;

  constructor(
    private readonly store: CatalogStore,
    private readonly runtime: DuckRuntime,
    private readonly health: SourceHealth,
    private readonly vdbName: string,
    private readonly queryLog: () => readonly QueryLogEntry[],
    private readonly auditLog: () => readonly AuditEntry[],
  ) {}

  /** SYSLOG.QueryLog and SYSLOG.AuditLog read from `read` (every instance's entries) instead of this process's logs. */
  useSharedLogs(read: SharedLogs): void {
    this.sharedLogs = read;
  }

  /** Brings the current engine's copies of the (non-volatile) system tables up to date with the catalog. */
  async ensureCurrent(): Promise<void> {
    // Twice at most: a refresh under way may be for an engine generation just replaced.
    for (let attempt = 0; attempt < 2; attempt++) {
      const engine = this.runtime.current;
      if (this.written.get(engine) === this.stamp()) return;
      this.refreshing ??= this.write(engine).finally(() => {
        this.refreshing = null;
      });
      await this.refreshing;
    }
  }

  /**
   * The rows of a volatile system table as `viewer` may see them: administrators everything,
   * other users their own entries (their own statements, their own sign-ins).
   */
  async volatileRows(table: TableDef, viewer: UserDef): Promise<SystemValue[][]> {
    const system = SYSTEM_TABLES.find((t) => t.def === table);
    if (!system) return [];
    // With a shared catalog the logs are every instance's (the catalog database's), else this process's.
    const shared = this.sharedLogs ? await this.sharedLogs() : null;
    const queryLog = shared?.queries ?? this.queryLog();
    const rows = system.rows({ catalog: this.store.current, vdbName: this.vdbName, queryLog, auditLog: shared?.audits ?? this.auditLog() });
    if (viewer.roles.includes('admin')) return rows;
    const userColumn = table.columns.findIndex((c) => c.name === 'UserName');
    const own = userColumn < 0 ? [] : rows.filter((row) => row[userColumn] === viewer.name);
    // What sources were asked for a statement over narrowed data may name values beyond the user's view.
    const sourceQueries = table.columns.findIndex((c) => c.name === 'SourceQueries');
    if (sourceQueries < 0) return own;
    const withheld = new Set(queryLog.filter((e) => e.narrowed).map((e) => e.id));
    return own.map((row) =>
      withheld.has(Number(row[0]))
        ? row.map((v, i) => (i === sourceQueries && v !== null ? '(withheld: the statement read data narrowed by your permissions)' : v))
        : row,
    );
  }

  /** Writes the non-volatile system tables into `engine`, as the catalog is now. */
  async write(engine: EngineGeneration): Promise<void> {
    const stamp = this.stamp();
    const tables = QUERYABLE_SYSTEM_TABLES.filter((t) => !t.volatile);
    const state = {
      catalog: this.store.current,
      vdbName: this.vdbName,
      queryLog: this.queryLog(),
      auditLog: this.auditLog(),
      sourceStatus: (name: string) => this.health.status(name),
    };
    await engine.withConnection(async (connection) => {
      await connection.run('BEGIN TRANSACTION');
      for (const table of tables) {
        const name = `${SYSTEM_ENGINE_SCHEMA}.${quoteIdent(systemEngineName(table))}`;
        const columns = table.def.columns.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ');
        await connection.run(`CREATE OR REPLACE TABLE ${name} (${columns})`);
        const rows = table.rows(state);
        if (rows.length === 0) continue;
        const values = rows.map((row) => `(${row.map(literalOf).join(', ')})`).join(',\n');
        await connection.run(`INSERT INTO ${name} VALUES ${values}`);
      }
      await connection.run('COMMIT');
    });
    this.written.set(engine, stamp);
  }

  /** What the non-volatile system tables are computed from: the catalog and the sources' status. */
  private stamp(): string {
    return `${this.store.generation}:${this.health.version}`;
  }
}

/** A value of a system table as engine SQL. */
export function literalOf(value: SystemValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'string') return sqlLiteral(value);
  return `[${value.map((v) => literalOf(v)).join(', ')}]`;
}
