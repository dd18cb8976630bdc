/**
 * System tables: the catalog described as tables (SYS.Schemas, SYS.Tables, SYS.Columns,
 * SYSADMIN.DataSources), queryable with filters and joins like any table. Their rows are
 * computed from the catalog; no secret is ever part of them.
 */
import { writableKind } from '../connectors/kinds.js';
import type { QueryLogEntry } from '../catalog/query-log.js';
import type { AuditEntry } from '../catalog/audit-log.js';
import type { CatalogData, ColumnDef, ProcedureDef, SourceDef, TableDef } from '../catalog/types.js';
import { catalogViews } from '../catalog/materialized-views.js';
import { SYSTEM_PROCEDURES } from './system-procedures.js';
import { copyState, nextRefreshAt } from './copies.js';

/** A value of a system table: a scalar, or a list (PostgreSQL's catalogs have array columns). */
export type SystemValue = string | number | boolean | null | ReadonlyArray<string | number>;

/** What system tables are computed from. */
export interface SystemState {
  catalog: CatalogData;
  vdbName: string;
  queryLog: readonly QueryLogEntry[];
  auditLog: readonly AuditEntry[];
  /** Whether each source is available as vdb last found it (sources/source-health.ts); all are when absent. */
  sourceStatus?: (name: string) => { available: boolean; reason: string | null; since: string };
}

export interface SystemTable {
  schema: string;
  def: TableDef;
  /** Volatile tables change without catalog changes: rebuilt whenever a statement reads them. */
  volatile?: boolean;
  /** Computed from this instance's query log even where the logs are shared (what only it records). */
  localLog?: boolean;
  rows(state: SystemState): SystemValue[][];
}

export const SYSTEM_SCHEMAS = ['SYS', 'SYSADMIN', 'SYSLOG'] as const;

let nextSystemOid = 1;
/** A system table of `schema`, its columns as [name, engine type], its rows computed by `rows`. */
export function systemTable(
  schema: string,
  name: string,
  description: string,
  columns: Array<[string, string]>,
  rows: SystemTable['rows'],
  volatile = false,
): SystemTable {
  const columnDefs: ColumnDef[] = columns.map(([column, type], i) => ({
    name: column,
    nameInSource: column,
    type,
    nullable: true,
    position: i + 1,
  }));
  return {
    schema,
    def: {
      name,
      nameInSource: name,
      kind: 'Table',
      columns: columnDefs,
      primaryKey: [],
      cardinality: null,
      description,
      uid: `sys:${schema}.${name}`,
      oid: nextSystemOid++,
    },
    rows,
    volatile,
  };
}

export interface TableEntry {
  schema: string;
  table: TableDef;
  source: SourceDef | null;
}

/** Every table of the virtual database, system tables included, in a stable order. */
export function allTables(catalog: CatalogData): TableEntry[] {
  const user = catalog.sources.flatMap((source) => source.tables.map((table) => ({ schema: source.name, table, source })));
  const system = SYSTEM_TABLES.map((t) => ({ schema: t.schema, table: t.def, source: null }));
  const views = catalogViews(catalog).map((v) => ({ schema: v.schema, table: v as TableDef, source: null }));
  return [...system, ...user, ...views];
}

/** A procedure of the virtual database as the system tables show it: vdb's own (SYSADMIN) or a source's. */
export interface ProcedureEntry {
  schema: string;
  procedure: ProcedureDef;
}

/** vdb's own procedures, described as source procedures are (their arguments are text). */
export const SYSTEM_PROCEDURE_DEFS: readonly ProcedureDef[] = SYSTEM_PROCEDURES.map((p, i) => {
  const name = p.name.split('.')[1]!;
  return {
    name,
    nameInSource: name,
    sourceName: { schema: 'SYSADMIN', name },
    params: p.params.map((param, j) => ({
      name: param,
      type: 'VARCHAR',
      sourceType: 'VARCHAR',
      position: j + 1,
      optional: j >= p.required,
    })),
    columns: null,
    returnsSet: true,
    // They change the catalog (users, sources), never a source's data.
    modifiesData: false,
    description: null,
    uid: `sys:${p.name}()`,
    oid: 900 + i,
  };
});

/** Every procedure: vdb's own, then each source's. */
export function allProcedures(catalog: CatalogData): ProcedureEntry[] {
  return [
    ...SYSTEM_PROCEDURE_DEFS.map((procedure) => ({ schema: 'SYSADMIN', procedure })),
    ...catalog.sources.flatMap((source) => (source.procedures ?? []).map((procedure) => ({ schema: source.name, procedure }))),
  ];
}

const precisionAndScale = (type: string): [number | null, number | null] => {
  const m = /^DECIMAL\((\d+),(\d+)\)$/i.exec(type.replace(/\s+/g, ''));
  return m ? [Number(m[1]), Number(m[2])] : [null, null];
};

const sourceDescription = (source: SourceDef) => source.description;

/**
 * The tables statements read live, ranked by the time of those statements (each statement's time
 * counts for every table it read live: what a copy of it could save at most).
 */
function copyRecommendations(catalog: CatalogData, queryLog: readonly QueryLogEntry[]): SystemValue[][] {
  const tables = new Map<string, { statements: number; ms: number; last: string }>();
  for (const entry of queryLog) {
    if (entry.status !== 'ok') continue;
    for (const name of new Set(entry.tables ?? [])) {
      const seen = tables.get(name) ?? { statements: 0, ms: 0, last: entry.start };
      seen.statements += 1;
      seen.ms += entry.durationMs;
      if (entry.start > seen.last) seen.last = entry.start;
      tables.set(name, seen);
    }
  }
  return [...tables]
    .sort((a, b) => b[1].ms - a[1].ms || b[1].statements - a[1].statements || a[0].localeCompare(b[0]))
    .map(([name, seen], i): SystemValue[] => {
      const dot = name.indexOf('.');
      const copy = (catalog.copies ?? []).find((c) => c.name === name);
      const suggestion = copy
        ? `a copy is kept; statements read the source when it is older than they accept (maxStaleness ${copy.maxStaleness ?? 'none'})`
        : `CALL SYSADMIN.accelerateTable('${name.replace(/'/g, "''")}', 'full', '1 hour')`;
      return [i + 1, name.slice(dot + 1), name.slice(0, dot), seen.statements, seen.ms, seen.last, copy !== undefined, suggestion];
    });
}

/** One row per virtual schema (views only), with the lowest object id of its views. */
function virtualSchemaRows(catalog: CatalogData, vdb: string): SystemValue[][] {
  const schemas = new Map<string, number>();
  for (const view of catalogViews(catalog)) schemas.set(view.schema, Math.min(schemas.get(view.schema) ?? view.oid, view.oid));
  return [...schemas].map(([name, oid]): SystemValue[] => [vdb, name, false, `virtual:${name}`, 'Virtual schema (views)', oid]);
}

export const SYSTEM_TABLES: SystemTable[] = [
  systemTable(
    'SYS',
    'Schemas',
    'Schemas of the virtual database: one per data source, plus the system schemas.',
    [
      ['VDBName', 'VARCHAR'],
      ['Name', 'VARCHAR'],
      ['IsPhysical', 'BOOLEAN'],
      ['UID', 'VARCHAR'],
      ['Description', 'VARCHAR'],
      ['OID', 'INTEGER'],
    ],
    ({ catalog, vdbName: vdb }) => [
      ...SYSTEM_SCHEMAS.map((name, i): SystemValue[] => [vdb, name, false, `sys:${name}`, 'System schema', i + 1]),
      ...catalog.sources.map((s): SystemValue[] => [vdb, s.name, true, `source:${s.name}`, sourceDescription(s), s.oid]),
      ...virtualSchemaRows(catalog, vdb),
    ],
  ),
  systemTable(
    'SYS',
    'Tables',
    'Tables and views of every schema.',
    [
      ['VDBName', 'VARCHAR'],
      ['SchemaName', 'VARCHAR'],
      ['Name', 'VARCHAR'],
      ['Type', 'VARCHAR'],
      ['NameInSource', 'VARCHAR'],
      ['IsPhysical', 'BOOLEAN'],
      ['SupportsUpdates', 'BOOLEAN'],
      ['UID', 'VARCHAR'],
      ['Cardinality', 'BIGINT'],
      ['Description', 'VARCHAR'],
      ['IsSystem', 'BOOLEAN'],
      ['IsMaterialized', 'BOOLEAN'],
      ['OID', 'INTEGER'],
    ],
    ({ catalog, vdbName: vdb }) =>
      allTables(catalog).map(({ schema, table, source }): SystemValue[] => [
        vdb,
        schema,
        table.name,
        table.kind,
        table.nameInSource,
        source !== null && table.kind !== 'View',
        // Writable: tables of database sources (not files) whose definition is not read-only.
        source !== null && table.kind !== 'View' && !source.readOnly && writableKind(source.kind),
        table.uid,
        table.cardinality,
        table.description ?? null,
        source === null && !isView(table),
        (catalog.copies ?? []).some((c) => c.schema === schema && c.table === table.name),
        table.oid,
      ]),
  ),
  systemTable(
    'SYS',
    'Columns',
    'Columns of every table and view.',
    [
      ['VDBName', 'VARCHAR'],
      ['SchemaName', 'VARCHAR'],
      ['TableName', 'VARCHAR'],
      ['Name', 'VARCHAR'],
      ['Position', 'INTEGER'],
      ['NameInSource', 'VARCHAR'],
      ['DataType', 'VARCHAR'],
      ['Precision', 'INTEGER'],
      ['Scale', 'INTEGER'],
      ['NullType', 'VARCHAR'],
      ['IsPrimaryKey', 'BOOLEAN'],
      ['UID', 'VARCHAR'],
      ['Description', 'VARCHAR'],
    ],
    ({ catalog, vdbName: vdb }) =>
      allTables(catalog).flatMap(({ schema, table }) =>
        table.columns.map((column): SystemValue[] => {
          const [precision, scale] = precisionAndScale(column.type);
          return [
            vdb,
            schema,
            table.name,
            column.name,
            column.position,
            column.nameInSource,
            column.type,
            precision,
            scale,
            column.nullable ? 'Nullable' : 'No Nulls',
            table.primaryKey.includes(column.name),
            `${table.uid}#${column.position}`,
            column.description ?? null,
          ];
        }),
      ),
  ),
  systemTable(
    'SYS',
    'Procedures',
    "Procedures: vdb's own in SYSADMIN, and each source's (PostgreSQL functions, MariaDB stored procedures).",
    [
      ['VDBName', 'VARCHAR'],
      ['SchemaName', 'VARCHAR'],
      ['Name', 'VARCHAR'],
      ['NameInSource', 'VARCHAR'],
      ['ReturnsResults', 'BOOLEAN'],
      ['ModifiesData', 'BOOLEAN'],
      ['UID', 'VARCHAR'],
      ['Description', 'VARCHAR'],
      ['OID', 'INTEGER'],
    ],
    ({ catalog, vdbName: vdb }) =>
      allProcedures(catalog).map(({ schema, procedure: p }): SystemValue[] => [
        vdb,
        schema,
        p.name,
        p.nameInSource,
        true,
        p.modifiesData,
        p.uid,
        p.description,
        p.oid,
      ]),
  ),
  systemTable(
    'SYS',
    'ProcedureParams',
    "Procedures' parameters (Type In) and, where known before a call, their result's columns (Type ResultSet).",
    [
      ['VDBName', 'VARCHAR'],
      ['SchemaName', 'VARCHAR'],
      ['ProcedureName', 'VARCHAR'],
      ['Name', 'VARCHAR'],
      ['DataType', 'VARCHAR'],
      ['NameInSource', 'VARCHAR'],
      ['Position', 'INTEGER'],
      ['Type', 'VARCHAR'],
      ['Optional', 'BOOLEAN'],
      ['ProcedureUID', 'VARCHAR'],
    ],
    ({ catalog, vdbName: vdb }) =>
      allProcedures(catalog).flatMap(({ schema, procedure: p }) => [
        ...p.params.map((param): SystemValue[] => [
          vdb,
          schema,
          p.name,
          param.name,
          param.type,
          param.sourceType,
          param.position,
          'In',
          param.optional,
          p.uid,
        ]),
        ...(p.columns ?? []).map((column, i): SystemValue[] => [
          vdb,
          schema,
          p.name,
          column.name,
          column.type,
          column.sourceType,
          i + 1,
          'ResultSet',
          false,
          p.uid,
        ]),
      ]),
  ),
  systemTable(
    'SYSADMIN',
    'DataSources',
    'Data sources of the virtual database, without their secrets.',
    [
      ['Name', 'VARCHAR'],
      ['Type', 'VARCHAR'],
      ['Translator', 'VARCHAR'],
      ['Connection', 'VARCHAR'],
      ['ModelProperties', 'VARCHAR'],
      ['ReadOnly', 'BOOLEAN'],
      ['Tables', 'INTEGER'],
      ['Description', 'VARCHAR'],
      ['CreatedAt', 'VARCHAR'],
      ['Status', 'VARCHAR'],
      ['StatusReason', 'VARCHAR'],
      ['StatusSince', 'VARCHAR'],
    ],
    ({ catalog, sourceStatus }) =>
      catalog.sources.map((s): SystemValue[] => {
        const status = sourceStatus?.(s.name) ?? null;
        const available = status?.available ?? true;
        return [
          s.name,
          s.kind,
          s.kind,
          formatProps(s.connection),
          formatProps(s.model),
          s.readOnly,
          s.tables.length,
          s.description,
          s.createdAt,
          available ? 'available' : 'unavailable',
          available ? null : (status?.reason ?? null),
          available ? null : (status?.since ?? null),
        ];
      }),
  ),
  systemTable(
    'SYSADMIN',
    'Users',
    'Users of the virtual database, without any secret.',
    [
      ['Name', 'VARCHAR'],
      ['Kind', 'VARCHAR'],
      ['Provider', 'VARCHAR'],
      ['DatabaseUsername', 'VARCHAR'],
      ['Rest', 'BOOLEAN'],
      ['Roles', 'VARCHAR'],
      ['CreatedAt', 'VARCHAR'],
    ],
    ({ catalog }) =>
      catalog.users.map((u): SystemValue[] => [
        u.name,
        u.kind,
        u.provider ?? null,
        u.databaseUsername,
        u.rest,
        u.roles.join(','),
        u.createdAt,
      ]),
  ),
  systemTable(
    'SYSADMIN',
    'Roles',
    'Roles, with the users who have them.',
    [
      ['Name', 'VARCHAR'],
      ['Users', 'VARCHAR'],
    ],
    ({ catalog }) =>
      ['admin', ...(catalog.roles ?? [])].map((role): SystemValue[] => [
        role,
        catalog.users
          .filter((u) => u.roles.includes(role))
          .map((u) => u.name)
          .join(','),
      ]),
  ),
  systemTable(
    'SYSADMIN',
    'Permissions',
    'What each role may do with each resource (SYSADMIN.setPermissions): letters of CRUDEA, row condition, column mask.',
    [
      ['RoleName', 'VARCHAR'],
      ['ResourceName', 'VARCHAR'],
      ['Permissions', 'VARCHAR'],
      ['Condition', 'VARCHAR'],
      ['Mask', 'VARCHAR'],
      ['MaskOrder', 'INTEGER'],
    ],
    ({ catalog }) =>
      (catalog.permissions ?? []).map((p): SystemValue[] => [p.role, p.resource, p.permissions, p.condition, p.mask, p.maskOrder]),
  ),
  systemTable(
    'SYSLOG',
    'QueryLog',
    'Recent statements: user, statement, start, duration, rows, status, error and the statements sent to sources.',
    [
      ['ID', 'BIGINT'],
      ['UserName', 'VARCHAR'],
      ['Statement', 'VARCHAR'],
      ['StartTime', 'TIMESTAMP'],
      ['DurationMs', 'BIGINT'],
      ['RowCount', 'BIGINT'],
      ['Status', 'VARCHAR'],
      ['Error', 'VARCHAR'],
      ['SourceQueries', 'VARCHAR'],
    ],
    ({ queryLog }) =>
      queryLog.map((e): SystemValue[] => [e.id, e.user, e.statement, e.start, e.durationMs, e.rows, e.status, e.error, e.sourceQueries]),
    true,
  ),
  systemTable(
    'SYSLOG',
    'AuditLog',
    'Sign-ins and their failures, and changes to users, sources, API keys and preferences.',
    [
      ['ID', 'BIGINT'],
      ['Time', 'TIMESTAMP'],
      ['UserName', 'VARCHAR'],
      ['Action', 'VARCHAR'],
      ['Target', 'VARCHAR'],
      ['Outcome', 'VARCHAR'],
      ['Address', 'VARCHAR'],
    ],
    ({ auditLog }) => auditLog.map((e): SystemValue[] => [e.id, e.time, e.user, e.action, e.target, e.outcome, e.address]),
    true,
  ),
  systemTable(
    'SYS',
    'Copies',
    'Local copies of source tables (accelerated tables, Kind table) and materialized views (Kind view): how they are refreshed, their state, size and last refresh (docs/copies.md).',
    [
      ['Name', 'VARCHAR'],
      ['SchemaName', 'VARCHAR'],
      ['TableName', 'VARCHAR'],
      ['Kind', 'VARCHAR'],
      ['Mode', 'VARCHAR'],
      ['ChangeColumn', 'VARCHAR'],
      ['KeyColumns', 'VARCHAR'],
      ['RefreshEverySeconds', 'BIGINT'],
      ['FullRefreshEverySeconds', 'BIGINT'],
      ['MaxStalenessSeconds', 'BIGINT'],
      ['State', 'VARCHAR'],
      ['Version', 'BIGINT'],
      ['RowCount', 'BIGINT'],
      ['Bytes', 'BIGINT'],
      ['RefreshedAt', 'TIMESTAMP'],
      ['LastRefreshMs', 'BIGINT'],
      ['NextRefreshAt', 'TIMESTAMP'],
      ['Failures', 'INTEGER'],
      ['LastError', 'VARCHAR'],
      ['Owner', 'VARCHAR'],
      ['CreatedAt', 'TIMESTAMP'],
      ['OID', 'INTEGER'],
    ],
    ({ catalog }) =>
      (catalog.copies ?? []).map((c): SystemValue[] => {
        const next = nextRefreshAt(c);
        const last = [...c.history].reverse().find((h) => h.status === 'ok');
        return [
          c.name,
          c.schema,
          c.table,
          c.kind,
          c.mode,
          c.changeColumn,
          c.keyColumns.join(', ') || null,
          c.refreshEvery,
          c.fullRefreshEvery,
          c.maxStaleness,
          copyState(c),
          c.current?.id ?? null,
          c.current?.rows ?? null,
          c.current?.bytes ?? null,
          c.current?.readAt ?? null,
          last?.durationMs ?? null,
          next === null ? null : new Date(next).toISOString(),
          c.failures,
          c.lastError,
          c.owner,
          c.createdAt,
          c.oid,
        ];
      }),
  ),
  systemTable(
    'SYSLOG',
    'CopyRefreshes',
    'The last refreshes of each local copy: when, how long, what kind, rows read from the source, and their outcome.',
    [
      ['CopyName', 'VARCHAR'],
      ['StartTime', 'TIMESTAMP'],
      ['DurationMs', 'BIGINT'],
      ['Kind', 'VARCHAR'],
      ['RowCount', 'BIGINT'],
      ['Status', 'VARCHAR'],
      ['Error', 'VARCHAR'],
      ['Instance', 'VARCHAR'],
    ],
    ({ catalog }) =>
      (catalog.copies ?? []).flatMap((c) =>
        c.history.map((h): SystemValue[] => [c.name, h.startedAt, h.durationMs, h.kind, h.rows, h.status, h.error, h.instance]),
      ),
  ),
  {
    ...systemTable(
      'SYS',
      'CopyRecommendations',
      "Source tables worth a local copy, from this instance's query log: the tables statements read live from their sources, most source time first (administrators only).",
      [
        ['Rank', 'INTEGER'],
        ['TableName', 'VARCHAR'],
        ['SchemaName', 'VARCHAR'],
        ['Statements', 'BIGINT'],
        ['LiveTimeMs', 'BIGINT'],
        ['LastReadAt', 'TIMESTAMP'],
        ['HasCopy', 'BOOLEAN'],
        ['Suggestion', 'VARCHAR'],
      ],
      ({ catalog, queryLog }) => copyRecommendations(catalog, queryLog),
      true,
    ),
    localLog: true,
  },
];

/** `key=value,key=value`, the format of the *Props strings of the REST API. */
export function formatProps(props: Record<string, string>): string {
  // Escaped as parseProps reads them back: a backslash before \, comma and equals sign.
  const escape = (text: string) => text.replace(/[\\,=]/g, (ch) => `\\${ch}`);
  return Object.entries(props)
    .map(([k, v]) => `${escape(k)}=${escape(v)}`)
    .join(',');
}

const isView = (table: TableDef) => 'sql' in table;
