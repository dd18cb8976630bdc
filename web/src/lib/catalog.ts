/** The console's own statements and the catalog it reads for completion. */
import type { Api } from './api.js';

import { CONSOLE_MARK } from './mark.js';
import { sqlLiteral } from './sql.js';

export { CONSOLE_MARK };
export const consoleSql = (sql: string): string => `${CONSOLE_MARK} ${sql}`;

export interface ColumnInfo {
  name: string;
  type: string;
}

/** schema -> table -> columns, from SYS.Columns (only what the user may read). */
export type Catalog = Map<string, Map<string, ColumnInfo[]>>;

export async function loadCatalog(api: Api): Promise<Catalog> {
  const result = await api.query(
    consoleSql('SELECT "SchemaName", "TableName", "Name", "DataType" FROM SYS.Columns ORDER BY "SchemaName", "TableName", "Position"'),
  );
  const catalog: Catalog = new Map();
  for (const [schema, table, name, type] of result.rows) {
    const tables = catalog.get(String(schema)) ?? new Map<string, ColumnInfo[]>();
    catalog.set(String(schema), tables);
    const columns = tables.get(String(table)) ?? [];
    tables.set(String(table), columns);
    columns.push({ name: String(name), type: String(type) });
  }
  return catalog;
}

export interface ProcedureParam {
  name: string;
  type: string;
  /** In: an argument; ResultSet: a column of the answer. */
  kind: 'In' | 'ResultSet';
  optional: boolean;
}

/** A procedure's arguments and, where the source tells them, its answer's columns (SYS.ProcedureParams). */
export async function loadProcedureParams(api: Api, schema: string, procedure: string): Promise<ProcedureParam[]> {
  const result = await api.query(
    consoleSql(
      `SELECT "Name", "DataType", "Type", "Optional" FROM SYS."ProcedureParams" WHERE "SchemaName" = ${sqlLiteral(schema)} AND "ProcedureName" = ${sqlLiteral(procedure)} ORDER BY "Type", "Position"`,
    ),
  );
  return result.rows.map(([name, type, kind, optional]) => ({
    name: String(name),
    type: String(type),
    kind: kind === 'ResultSet' ? 'ResultSet' : 'In',
    optional: optional === true,
  }));
}
