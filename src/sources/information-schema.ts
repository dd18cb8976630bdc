/**
 * The SQL standard's `information_schema` over vdb's catalog (schemata, tables, columns, views,
 * routines, and primary keys in table_constraints and key_column_usage), as PostgreSQL names and
 * fills it: what DBeaver's, Metabase's and most tools' basic introspection reads. Narrowed per
 * user by the access rewrite (engine/access/catalog-visibility.ts).
 */
import { writableKind } from '../connectors/kinds.js';
import { namespaces, OWNER_NAME, primaryKeyName } from './pg-catalog.js';
import { pgColumnType, sqlDataType, typeName } from './pg-types.js';
import { allProcedures, allTables as everyTable, systemTable, type SystemTable, type SystemValue } from './system-tables.js';
import { materializedCopyOf } from '../catalog/materialized-views.js';
import type { CatalogData } from '../catalog/types.js';

/** The tables and views information_schema shows: as in PostgreSQL, never a materialized view. */
const allTables = (catalog: CatalogData) => everyTable(catalog).filter(({ table }) => !materializedCopyOf(table));

const info = (name: string, columns: string, rows: SystemTable['rows']) =>
  systemTable(
    'information_schema',
    name,
    `The SQL standard's information_schema.${name}.`,
    columns
      .trim()
      .split(/\s+/)
      .map((entry): [string, string] => {
        const [column, type] = entry.split(':');
        return [column!, type === 'i' ? 'INTEGER' : 'VARCHAR'];
      }),
    rows,
  );

const yesNo = (value: boolean) => (value ? 'YES' : 'NO');

export const INFORMATION_SCHEMA_TABLES: SystemTable[] = [
  info(
    'schemata',
    `catalog_name schema_name schema_owner default_character_set_catalog default_character_set_schema
     default_character_set_name sql_path`,
    ({ catalog, vdbName }) => namespaces(catalog).map((n): SystemValue[] => [vdbName, n.name, OWNER_NAME, null, null, null, null]),
  ),
  info(
    'tables',
    `table_catalog table_schema table_name table_type self_referencing_column_name reference_generation
     user_defined_type_catalog user_defined_type_schema user_defined_type_name is_insertable_into is_typed commit_action`,
    ({ catalog, vdbName }) =>
      allTables(catalog).map(({ schema, table, source }): SystemValue[] => {
        const writable = source !== null && table.kind !== 'View' && !source.readOnly && writableKind(source.kind);
        return [
          vdbName,
          schema,
          table.name,
          table.kind === 'View' ? 'VIEW' : 'BASE TABLE',
          null,
          null,
          null,
          null,
          null,
          yesNo(writable),
          'NO',
          null,
        ];
      }),
  ),
  info(
    'columns',
    `table_catalog table_schema table_name column_name ordinal_position:i column_default is_nullable data_type
     character_maximum_length:i character_octet_length:i numeric_precision:i numeric_precision_radix:i numeric_scale:i
     datetime_precision:i interval_type interval_precision:i udt_catalog udt_schema udt_name is_identity is_generated
     is_updatable`,
    ({ catalog, vdbName }) =>
      allTables(catalog).flatMap(({ schema, table, source }) =>
        table.columns.map((c): SystemValue[] => {
          const type = pgColumnType(c.type);
          const numeric = numericFacts(type.oid, type.precision, type.scale);
          const datetime = [1082, 1083, 1114, 1184, 1186].includes(type.oid) ? (type.oid === 1082 ? 0 : 6) : null;
          const updatable = source !== null && table.kind !== 'View' && !source.readOnly && writableKind(source.kind);
          return [
            vdbName,
            schema,
            table.name,
            c.name,
            c.position,
            null,
            yesNo(c.nullable),
            sqlDataType(type.oid),
            null,
            type.oid === 25 ? 1073741824 : null,
            ...numeric,
            datetime,
            null,
            null,
            vdbName,
            'pg_catalog',
            typeName(type.oid),
            'NO',
            'NEVER',
            yesNo(updatable),
          ];
        }),
      ),
  ),
  info(
    'views',
    `table_catalog table_schema table_name view_definition check_option is_updatable is_insertable_into
     is_trigger_updatable is_trigger_deletable is_trigger_insertable_into`,
    ({ catalog, vdbName }) =>
      allTables(catalog)
        .filter(({ table }) => table.kind === 'View')
        .map(({ schema, table }): SystemValue[] => [
          vdbName,
          schema,
          table.name,
          'sql' in table ? String(table.sql) : null,
          'NONE',
          'NO',
          'NO',
          'NO',
          'NO',
          'NO',
        ]),
  ),
  info(
    'routines',
    `specific_catalog specific_schema specific_name routine_catalog routine_schema routine_name routine_type data_type
     type_udt_name routine_body routine_definition external_language parameter_style is_deterministic sql_data_access
     is_null_call`,
    ({ catalog, vdbName }) =>
      allProcedures(catalog).map(({ schema, procedure: p }): SystemValue[] => [
        vdbName,
        schema,
        `${p.name}_${p.oid}`,
        vdbName,
        schema,
        p.name,
        'PROCEDURE',
        null,
        null,
        'EXTERNAL',
        null,
        'SQL',
        'GENERAL',
        'NO',
        p.modifiesData ? 'MODIFIES SQL DATA' : 'READS SQL DATA',
        'NO',
      ]),
  ),
  info(
    'table_constraints',
    `constraint_catalog constraint_schema constraint_name table_catalog table_schema table_name constraint_type
     is_deferrable initially_deferred enforced nulls_distinct`,
    ({ catalog, vdbName }) =>
      allTables(catalog)
        .filter(({ table }) => table.primaryKey.length > 0)
        .map(({ schema, table }): SystemValue[] => [
          vdbName,
          schema,
          primaryKeyName(table),
          vdbName,
          schema,
          table.name,
          'PRIMARY KEY',
          'NO',
          'NO',
          'YES',
          null,
        ]),
  ),
  info(
    'key_column_usage',
    `constraint_catalog constraint_schema constraint_name table_catalog table_schema table_name column_name
     ordinal_position:i position_in_unique_constraint:i`,
    ({ catalog, vdbName }) =>
      allTables(catalog).flatMap(({ schema, table }) =>
        table.primaryKey.map((column, i): SystemValue[] => [
          vdbName,
          schema,
          primaryKeyName(table),
          vdbName,
          schema,
          table.name,
          column,
          i + 1,
          null,
        ]),
      ),
  ),
];

/** numeric_precision, numeric_precision_radix and numeric_scale of a column of type `oid`, as PostgreSQL gives them. */
function numericFacts(oid: number, precision: number | null, scale: number | null): Array<number | null> {
  const bits: Record<number, number> = { 21: 16, 23: 32, 20: 64, 700: 24, 701: 53 };
  if (bits[oid] !== undefined) return [bits[oid], 2, oid === 700 || oid === 701 ? null : 0];
  if (oid === 1700) return [precision, 10, scale];
  return [null, null, null];
}
