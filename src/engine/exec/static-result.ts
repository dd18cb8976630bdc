/**
 * Results that vdb computes itself (procedure results, EXPLAIN plans) are handed to the engine
 * as a VALUES query, so they are encoded, streamed and paginated like any other result.
 */
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';

export type StaticValue = string | number | boolean | null;

export interface StaticResult {
  columns: string[];
  rows: StaticValue[][];
  /** Sent with the result (the SQL-Warnings header). */
  warnings?: string[];
}

const valueSql = (value: StaticValue) =>
  value === null
    ? 'NULL'
    : typeof value === 'string'
      ? sqlLiteral(value)
      : typeof value === 'boolean'
        ? String(value).toUpperCase()
        : String(value);

export function staticResultSql(result: StaticResult): string {
  const columns = result.columns.map(quoteIdent).join(', ');
  if (result.rows.length === 0) {
    return `SELECT ${result.columns.map((c) => `CAST(NULL AS VARCHAR) AS ${quoteIdent(c)}`).join(', ')} WHERE FALSE`;
  }
  const rows = result.rows.map((row) => `(${row.map(valueSql).join(', ')})`).join(', ');
  return `SELECT * FROM (VALUES ${rows}) AS result(${columns})`;
}
