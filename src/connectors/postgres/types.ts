/**
 * PostgreSQL type mapping: the engine type of each PostgreSQL column type (format_type
 * spelling), and the class in which its COPY text is handed to the engine.
 */
import type { RawType } from '../types.js';

/** Unconstrained numeric has no fixed scale; the engine gives it 38 digits, 10 after the point. */
export const UNCONSTRAINED_NUMERIC = 'DECIMAL(38,10)';

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
