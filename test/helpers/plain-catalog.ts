/**
 * A catalog made of plain source definitions, for planner tests: it resolves names, hands out
 * each source's connector (built, never connected) and answers what binding asks, with no
 * service graph, no engine and no database. Row sources only (PostgreSQL, MySQL, SQLite).
 */
import type { SourceDef, TableDef, UserDef, ViewDef } from '../../src/catalog/types.js';
import { createConnector } from '../../src/connectors/factory.js';
import type { Connector } from '../../src/connectors/types.js';
import type { BindCatalog } from '../../src/engine/access/bind-catalog.js';
import type { PlanCatalog } from '../../src/engine/plan/plan-catalog.js';
import { notFound } from '../../src/errors.js';
import { AccessPolicy } from '../../src/security/permissions.js';
import type { ResolvedTable } from '../../src/sources/definitions.js';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export class PlainCatalog implements BindCatalog, PlanCatalog {
  readonly generation = 1;
  readonly views: readonly ViewDef[] = [];
  private readonly connectors = new Map<string, Connector>();

  constructor(
    readonly sources: readonly SourceDef[],
    roots: readonly string[],
  ) {
    const context = {
      roots,
      openSecret: (sealed: string) => sealed,
      sealSecret: (plain: string) => plain,
      describe: async () => [],
      parquetRowCount: async () => 0,
      engineQuery: async () => [],
    };
    for (const source of sources) this.connectors.set(source.name, createConnector(source, context));
  }

  /** An administrator's policy: planner tests see every table as it is. */
  adminPolicy(): AccessPolicy {
    const admin: UserDef = {
      name: 'admin',
      kind: 'password',
      passwordHash: null,
      tokenSecret: '',
      databaseUsername: 'admin',
      rest: true,
      linkToken: '',
      roles: ['admin'],
      createdAt: '2026-11-23T00:00:00Z',
    };
    return new AccessPolicy(admin, []);
  }

  findSource(name: string): SourceDef | undefined {
    return this.sources.find((s) => same(s.name, name));
  }

  connectorOf(source: SourceDef): Connector {
    const connector = this.connectors.get(source.name);
    if (!connector) throw new Error(`no connector for source ${source.name}`);
    return connector;
  }

  resolve(schema: string | undefined, table: string): ResolvedTable {
    const source = schema === undefined ? this.sources.find((s) => s.tables.some((t) => same(t.name, table))) : this.findSource(schema);
    const def = source?.tables.find((t) => same(t.name, table));
    if (!source || !def) throw notFound(`Table ${schema ? `${schema}.` : ''}${table} does not exist.`);
    return { origin: 'rows', schema: source.name, table: def, source };
  }

  virtualSchemas(): string[] {
    return [];
  }

  tablesOf(schema: string): readonly TableDef[] {
    return this.findSource(schema)?.tables ?? [];
  }

  systemTables(): TableDef[] {
    return [];
  }

  isVolatile(): boolean {
    return false;
  }

  async close(): Promise<void> {
    for (const connector of this.connectors.values()) await connector.close();
  }
}
