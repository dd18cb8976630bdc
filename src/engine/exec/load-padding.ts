/**
 * PostgreSQL's char(n) (bpchar) holds its values padded with spaces ('5    ' for char(5)) and
 * compares, joins, measures (length) and concatenates them without the padding; the engine
 * loads the padded text as VARCHAR and would use it as it is. Where a statement uses such a
 * column beyond showing it (plan/padded-uses.ts) and a loaded value ends with a space, the load
 * refuses the statement: one pass over the loaded column, made only then. Values without
 * padding (a char(2) of two-letter codes) behave as text does and pass.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { badRequest } from '../../errors.js';
import { exclusive } from './connection-lock.js';

/** A loaded column that may hold padded char(n) values, and is used beyond showing it. */
export interface PaddedColumn {
  /** The expression of its value in the relation checked (c0, or its quoted name). */
  expr: string;
  /** How messages name it (schema.table.column). */
  label: string;
  /** A char(n); a column whose source type is not known (imported before vdb recorded it: it may be one); a varchar compared with a char(n). */
  kind: PaddedKind;
}

export type PaddedKind = 'char' | 'unknown' | 'varchar';

/** The refusal of a statement (also where a string constant ends with a space: PostgreSQL compares a char(n) with it without them) that uses a padded char(n) column in the engine. */
export function paddedRefusal(column: Pick<PaddedColumn, 'label' | 'kind'>): Error {
  switch (column.kind) {
    case 'varchar':
      return badRequest(
        `Comparing the PostgreSQL varchar column ${column.label}, whose values end with spaces, with a char(n) column is not supported by vdb's engine: PostgreSQL compares them without trailing spaces, the engine would not.`,
        'Read the char(n) column as text at PostgreSQL (a view with code::text), or query the tables so that the statement is sent whole to PostgreSQL (only its tables, pushdown on).',
        'char(n) column not supported here',
      );
    case 'unknown':
      return badRequest(
        `Comparing or computing with the column ${column.label} is not supported by vdb's engine: its values end with spaces, and its source was imported before vdb recorded which PostgreSQL columns are char(n), whose padding PostgreSQL ignores and the engine would not.`,
        'Refresh the data source (vdb then records the columns that are char(n)), or query the table so that the statement is sent whole to PostgreSQL.',
        'char(n) column not supported here',
      );
    case 'char':
      return badRequest(
        `Comparing or computing with the PostgreSQL char(n) column ${column.label} is not supported by vdb's engine: PostgreSQL ignores the spaces that pad its values, the engine would not, and the answer would differ from PostgreSQL's.`,
        'Read the column as text or varchar at PostgreSQL (a view with code::text, which drops the padding), or query the table so that the statement is sent whole to PostgreSQL (only its tables, pushdown on).',
        'char(n) column not supported here',
      );
  }
}

/** Fails with paddedRefusal for the first of `columns` of which a value of `relation` ends with a space. */
export async function refusePadded(connection: DuckDBConnection, relation: string, columns: readonly PaddedColumn[]): Promise<void> {
  if (columns.length === 0) return;
  const list = columns.map((c) => `coalesce(bool_or(suffix(${c.expr}, ' ')), false)`).join(', ');
  const reader = await exclusive(connection, () => connection.runAndReadAll(`SELECT ${list} FROM ${relation}`));
  const row = reader.getRows()[0] ?? [];
  const padded = columns.find((_, i) => row[i] === true);
  if (padded) throw paddedRefusal(padded);
}
