/**
 * `SELECT 1`, `SELECT 'ok' AS status`, `SELECT true, NULL`: a select list of constants only, with
 * no FROM or any other clause, is answered without the engine (health checks and connection
 * tests send these by the thousand). Names and types are the engine's own for such a statement
 * (INTEGER, VARCHAR, BOOLEAN; NULL as INTEGER); anything else goes the usual way.
 */
import { BOOLEAN, INTEGER, VARCHAR, type DuckDBType } from '@duckdb/node-api';
import type { A_Const, SelectStmt } from '@pgsql/types';
import type { ResultColumn } from '../../results/json.js';
import { sqlLiteral } from '../../runtime/duckdb.js';
import type { BoundStatement } from '../access/bind.js';
import { asKind, statementOf } from '../tree/ast.js';

export interface Constant {
  column: ResultColumn;
  /** The value as JSON text, and as the engine's SQL (for a cursor's table). */
  json: string;
  sql: string;
}

/** Clauses that make a SELECT more than its select list. */
const OTHER_CLAUSES: Array<keyof SelectStmt> = [
  'fromClause',
  'whereClause',
  'groupClause',
  'havingClause',
  'sortClause',
  'limitCount',
  'limitOffset',
  'distinctClause',
  'withClause',
  'windowClause',
  'valuesLists',
  'intoClause',
  'lockingClause',
];

function constantOf(value: A_Const, name: string): Constant | null {
  const column = (type: DuckDBType) => ({ name, type });
  // The engine's result of a bare NULL is an INTEGER column.
  if (value.isnull) return { column: column(INTEGER), json: 'null', sql: 'NULL' };
  if (value.ival) {
    const n = value.ival.ival ?? 0;
    return { column: column(INTEGER), json: String(n), sql: String(n) };
  }
  if (value.sval) {
    const text = value.sval.sval ?? '';
    return { column: column(VARCHAR), json: JSON.stringify(text), sql: sqlLiteral(text) };
  }
  if (value.boolval) {
    const flag = value.boolval.boolval ?? false;
    return { column: column(BOOLEAN), json: String(flag), sql: flag ? 'TRUE' : 'FALSE' };
  }
  return null; // decimals and bit strings: the engine types them by their digits
}

/** The constants of a statement that is nothing but a select list of constants, else null. */
export function constantSelect(bound: BoundStatement): Constant[] | null {
  if (bound.tables.length > 0) return null;
  const select = asKind(statementOf(bound.ast), 'SelectStmt');
  if (!select || (select.op && select.op !== 'SETOP_NONE') || OTHER_CLAUSES.some((clause) => select[clause] !== undefined)) return null;
  const constants: Constant[] = [];
  for (const item of select.targetList ?? []) {
    const target = asKind(item, 'ResTarget');
    const value = asKind(target?.val, 'A_Const');
    const constant = target && value ? constantOf(value, target.name ?? '?column?') : null;
    if (!constant) return null;
    constants.push(constant);
  }
  return constants.length > 0 ? constants : null;
}
