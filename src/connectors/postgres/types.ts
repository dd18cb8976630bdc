/**
 * PostgreSQL type mapping: the engine type of each PostgreSQL column type (format_type
 * spelling), and the class in which its COPY text is handed to the engine.
 */
import { UNCONSTRAINED_NUMERIC, type ColumnDef } from '../../catalog/types.js';
import type { RawType } from '../types.js';

export function engineTypeOfPostgres(formatted: string): string {
  const t = formatted.toLowerCase();
  if (t.endsWith('[]')) return 'VARCHAR';
  const numeric = /^numeric\((\d+),(\d+)\)$/.exec(t);
  if (numeric) {
    const precision = Number(numeric[1]);
    return precision <= 38 ? `DECIMAL(${precision},${numeric[2]})` : UNCONSTRAINED_NUMERIC;
  }
  if (t === 'numeric') return UNCONSTRAINED_NUMERIC;
  if (t.startsWith('timestamp') && t.includes('with time zone')) return 'TIMESTAMPTZ';
  if (t.startsWith('timestamp')) return 'TIMESTAMP';
  // time with time zone has no engine type that keeps the offset: text.
  if (t.startsWith('time') && t.includes('with time zone')) return 'VARCHAR';
  if (t.startsWith('time')) return 'TIME';
  if (t.startsWith('interval')) return 'INTERVAL';
  const simple: Record<string, string> = {
    smallint: 'SMALLINT',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    real: 'FLOAT',
    'double precision': 'DOUBLE',
    boolean: 'BOOLEAN',
    date: 'DATE',
    bytea: 'BLOB',
    uuid: 'UUID',
    text: 'VARCHAR',
    json: 'JSON',
    jsonb: 'JSON',
    oid: 'BIGINT',
  };
  return simple[t] ?? 'VARCHAR';
}

/** COPY text of every type is handed over as text, except bytea (decoded to bytes). */
export const rawTypeOfPostgres = (engineType: string): RawType => (engineType === 'BLOB' ? 'BLOB' : 'VARCHAR');

/** format_type's names of char(n) (bpchar): values padded with spaces, compared without them. */
const PADDED_CHAR = /^(character(\(\d+\))?|bpchar)$/;

/**
 * The type the importer records as a column's sourceType: PostgreSQL's own name of a column the
 * engine reads as VARCHAR (whether it is a char(n)); none for the others.
 */
export const sourceTypeOfPostgres = (formatted: string): string | undefined =>
  engineTypeOfPostgres(formatted) === 'VARCHAR' ? formatted : undefined;

/**
 * Whether a column may hold char(n) values (padded with spaces): one recorded as char(n), or a
 * VARCHAR one imported before vdb recorded its source type (a source refresh records it).
 */
export function paddedCharColumn(column: Pick<ColumnDef, 'type' | 'sourceType'>): boolean {
  if (column.type !== 'VARCHAR') return false;
  return column.sourceType === undefined || PADDED_CHAR.test(column.sourceType);
}

/** Whether a column is a varchar (compared with a char(n) as a char(n), without trailing spaces). */
export const varcharColumn = (column: Pick<ColumnDef, 'type' | 'sourceType'>): boolean =>
  column.type === 'VARCHAR' && /^character varying/.test(column.sourceType ?? '');
