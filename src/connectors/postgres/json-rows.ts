/**
 * Rows as JSON, written by PostgreSQL itself (whole-statement pushdown): each row one compact
 * JSON text, with the same value forms the engine writes (see src/results/json.ts), so a result
 * reads the same whichever side computed it.
 */

import type { StatementColumn } from '../types.js';

/** PostgreSQL's integer types: their text is their JSON (to_json writes them with their output function). */
const INTEGERS = new Set(['smallint', 'integer', 'bigint']);

/** The JSON value of column `c<i>`, as an expression whose text (`::text`) is the value's JSON text. */
export function jsonValueSql(column: StatementColumn, i: number): string {
  const c = `q.c${i}`;
  // The same text without a JSON value in between: less work for PostgreSQL (a fifth of a million rows' time with two integer columns).
  if (INTEGERS.has(column.sourceType)) return c;
  switch (column.type) {
    case 'BLOB':
      return `to_json(replace(encode(${c}, 'base64'), E'\\n', ''))`;
    case 'VARCHAR':
      // Text, arrays and other types the engine shows as text: the type's own output (what COPY
      // writes: char(n) keeps its padding, inet its short form), as a JSON string.
      return `to_json(CASE WHEN ${c} IS NULL THEN NULL ELSE format('%s', ${c}) END)`;
    default:
      return `to_json(${c})`;
  }
}

/** Written once per described statement and shape: a known statement's columns are the same list each time. */
const written = new WeakMap<readonly StatementColumn[], Partial<Record<'array' | 'object', string>>>();

/** The SQL of one row's JSON text: `[v0,v1]` or `{"name":v0}`, compact like the engine's. */
export function jsonRowSql(columns: readonly StatementColumn[], shape: 'array' | 'object'): string {
  let byShape = written.get(columns);
  if (!byShape) written.set(columns, (byShape = {}));
  return (byShape[shape] ??= writeJsonRowSql(columns, shape));
}

function writeJsonRowSql(columns: readonly StatementColumn[], shape: 'array' | 'object'): string {
  const values = columns.map((column, i) => `coalesce(${jsonValueSql(column, i)}::text, 'null')`);
  if (values.length === 0) return shape === 'array' ? `'[]'` : `'{}'`;
  const items = shape === 'array' ? values : values.map((v, i) => `${pgLiteral(`${JSON.stringify(columns[i]!.name)}:`)} || ${v}`);
  const open = shape === 'array' ? '[' : '{';
  const close = shape === 'array' ? ']' : '}';
  return `'${open}' || ${items.join(` || ',' || `)} || '${close}'`;
}

const pgLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;
