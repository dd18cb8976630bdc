/**
 * What a user sees of pg_catalog and information_schema (sources/pg-catalog.ts,
 * information-schema.ts): the schemas, tables, columns and procedures REST shows them, as row
 * conditions over each relation, the same way the SYS tables are narrowed (access.ts). Types,
 * access methods, collations and the one database are everyone's; relations vdb leaves empty
 * need no condition.
 */
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { AccessPolicy } from '../../security/permissions.js';
import {
  INDEX_OID_BASE,
  OWNER_NAME,
  PG_CLASS,
  PG_NAMESPACE,
  PG_PROC,
  PG_SCHEMAS,
  SYSTEM_NAMESPACE_OIDS,
} from '../../sources/pg-catalog.js';
import { SYSTEM_PROCEDURE_DEFS, SYSTEM_SCHEMAS, SYSTEM_TABLES } from '../../sources/system-tables.js';
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import type { BindCatalog } from './bind-catalog.js';

interface Visible {
  /** Tables and views with the columns the user may read. */
  tables: Array<{ schema: string; table: TableDef; columns: readonly ColumnDef[] }>;
  schemas: Array<{ name: string; oid: number }>;
  procedures: Array<{ schema: string; name: string; oid: number }>;
}

/** The schemas, tables (with their readable columns) and procedures the policy's user sees. */
export function visibleObjects(registry: BindCatalog, policy: AccessPolicy): Visible {
  const sources = registry.sources.filter((s) => policy.seesSchema(s.name, s.tables));
  const virtual = registry.virtualSchemas().filter((v) => policy.seesSchema(v, registry.tablesOf(v)));
  const viewOid = (schema: string) => Math.min(...registry.views.filter((v) => v.schema === schema).map((v) => v.oid));
  return {
    tables: [
      ...SYSTEM_TABLES.map((t) => ({ schema: t.schema, table: t.def, columns: t.def.columns })),
      ...registry.sources.flatMap((s) =>
        s.tables
          .filter((t) => policy.canRead(s.name, t))
          .map((table) => ({ schema: s.name, table, columns: policy.readableColumns(s.name, table) })),
      ),
      ...registry.views
        .filter((v) => policy.canRead(v.schema, v))
        .map((v) => ({ schema: v.schema, table: v as TableDef, columns: v.columns })),
    ],
    schemas: [
      ...[...SYSTEM_SCHEMAS, ...PG_SCHEMAS].map((name) => ({ name: name as string, oid: SYSTEM_NAMESPACE_OIDS[name]! })),
      ...sources.map((s) => ({ name: s.name, oid: s.oid })),
      ...virtual.map((name) => ({ name, oid: viewOid(name) })),
    ],
    procedures: [
      ...SYSTEM_PROCEDURE_DEFS.map((p) => ({ schema: 'SYSADMIN', name: p.name, oid: p.oid })),
      ...registry.sources.flatMap((s) =>
        (s.procedures ?? []).filter((p) => policy.allows('E', [s.name, p.name])).map((p) => ({ schema: s.name, name: p.name, oid: p.oid })),
      ),
    ],
  };
}

const list = (values: ReadonlyArray<string | number>) => values.map((v) => (typeof v === 'number' ? String(v) : sqlLiteral(v))).join(', ');
/** `column IN (values)`, FALSE for none. */
const isIn = (column: string, values: ReadonlyArray<string | number>) =>
  values.length === 0 ? 'FALSE' : `${quoteIdent(column)} IN (${list(values)})`;
const anyOf = (parts: string[]) => (parts.length === 0 ? 'FALSE' : parts.map((p) => `(${p})`).join(' OR '));

/** Columns of visible tables: whole tables by id, partly readable ones column by column. */
function columnCondition(visible: Visible, relation: string, position: string): string {
  const whole = visible.tables.filter((t) => t.columns.length === t.table.columns.length).map((t) => t.table.oid);
  const partial = visible.tables.filter((t) => t.columns.length < t.table.columns.length);
  return anyOf([
    isIn(relation, whole),
    ...partial.map(
      (t) =>
        `${quoteIdent(relation)} = ${t.table.oid} AND ${isIn(
          position,
          t.columns.map((c) => c.position),
        )}`,
    ),
  ]);
}

/** Tables whose primary key the user sees whole: their index and constraint are visible. */
const keyedTables = (visible: Visible) =>
  visible.tables
    .filter((t) => t.table.primaryKey.length > 0 && t.table.primaryKey.every((k) => t.columns.some((c) => c.name === k)))
    .map((t) => t.table.oid);

/** Per schema, `schema = s AND name IN (...)`. */
function bySchema(schemaColumn: string, nameColumn: string, entries: Array<{ schema: string; name: string }>): string {
  const schemas = new Map<string, string[]>();
  for (const e of entries) schemas.set(e.schema, [...(schemas.get(e.schema) ?? []), e.name]);
  return anyOf([...schemas].map(([schema, names]) => `${quoteIdent(schemaColumn)} = ${sqlLiteral(schema)} AND ${isIn(nameColumn, names)}`));
}

/**
 * The row condition of `schema.table` (a relation of PostgreSQL's catalog) for the policy's
 * user, or null where every row is everyone's.
 */
export function catalogCondition(schema: string, table: string, registry: BindCatalog, policy: AccessPolicy): string | null {
  const visible = visibleObjects(registry, policy);
  const tableOids = visible.tables.map((t) => t.table.oid);
  switch (`${schema}.${table}`) {
    case 'pg_catalog.pg_namespace':
      return isIn(
        'nspname',
        visible.schemas.map((s) => s.name),
      );
    case 'pg_catalog.pg_class':
      return isIn('oid', [...tableOids, ...keyedTables(visible).map((oid) => oid + INDEX_OID_BASE)]);
    case 'pg_catalog.pg_attribute':
      return columnCondition(visible, 'attrelid', 'attnum');
    case 'pg_catalog.pg_index':
      return isIn('indrelid', keyedTables(visible));
    case 'pg_catalog.pg_constraint':
      return isIn('conrelid', keyedTables(visible));
    case 'pg_catalog.pg_proc':
      return isIn(
        'oid',
        visible.procedures.map((p) => p.oid),
      );
    case 'pg_catalog.pg_description':
      return anyOf([
        `classoid = ${PG_CLASS.def.oid} AND objsubid = 0 AND ${isIn('objoid', tableOids)}`,
        `classoid = ${PG_CLASS.def.oid} AND (${columnCondition(visible, 'objoid', 'objsubid')})`,
        `classoid = ${PG_NAMESPACE.def.oid} AND ${isIn(
          'objoid',
          visible.schemas.map((s) => s.oid),
        )}`,
        `classoid = ${PG_PROC.def.oid} AND ${isIn(
          'objoid',
          visible.procedures.map((p) => p.oid),
        )}`,
      ]);
    case 'pg_catalog.pg_roles':
      return isIn('rolname', [OWNER_NAME, policy.user.name, ...policy.user.roles]);
    case 'information_schema.schemata':
      return isIn(
        'schema_name',
        visible.schemas.map((s) => s.name),
      );
    case 'information_schema.tables':
    case 'information_schema.views':
      return bySchema(
        'table_schema',
        'table_name',
        visible.tables.map((t) => ({ schema: t.schema, name: t.table.name })),
      );
    case 'information_schema.columns':
      return anyOf(
        visible.tables.map(
          (t) =>
            `table_schema = ${sqlLiteral(t.schema)} AND table_name = ${sqlLiteral(t.table.name)} AND ${isIn(
              'column_name',
              t.columns.map((c) => c.name),
            )}`,
        ),
      );
    case 'information_schema.table_constraints':
    case 'information_schema.key_column_usage': {
      const keyed = new Set(keyedTables(visible));
      const tables = visible.tables.filter((t) => keyed.has(t.table.oid));
      return bySchema(
        'table_schema',
        'table_name',
        tables.map((t) => ({ schema: t.schema, name: t.table.name })),
      );
    }
    case 'information_schema.routines':
      return bySchema('routine_schema', 'routine_name', visible.procedures);
    default:
      return null;
  }
}
