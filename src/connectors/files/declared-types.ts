/**
 * Column types a file source declares in a schema file beside the data (`sales.csv` and
 * `sales.schema.json`: `{"columns": {"amount": "numeric(10,2)"}}`), so that the engine reads
 * them as PostgreSQL would hold them instead of inferring (a numeric column read as DOUBLE
 * changes answers). Types are PostgreSQL's names, accepted from an allow-list.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SourceUnreachableError } from '../types.js';

/** The suffix of a schema file; such files are never tables themselves. */
export const SCHEMA_FILE_SUFFIX = '.schema.json';

/**
 * `numeric` without precision or scale: the import finds the scale of the values
 * (decimal-columns.ts); never handed to a reader as it is (the engine's NUMERIC is DECIMAL(18,3)).
 */
export const DECLARED_NUMERIC = 'numeric';

/** PostgreSQL type names a schema file may use, and the engine type each is read as. */
const DECLARABLE: Record<string, string> = {
  smallint: 'SMALLINT',
  int2: 'SMALLINT',
  integer: 'INTEGER',
  int: 'INTEGER',
  int4: 'INTEGER',
  bigint: 'BIGINT',
  int8: 'BIGINT',
  real: 'FLOAT',
  float4: 'FLOAT',
  'double precision': 'DOUBLE',
  float8: 'DOUBLE',
  boolean: 'BOOLEAN',
  bool: 'BOOLEAN',
  text: 'VARCHAR',
  varchar: 'VARCHAR',
  'character varying': 'VARCHAR',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
  'timestamp without time zone': 'TIMESTAMP',
  timestamptz: 'TIMESTAMPTZ',
  'timestamp with time zone': 'TIMESTAMPTZ',
  time: 'TIME',
  interval: 'INTERVAL',
  uuid: 'UUID',
  bytea: 'BLOB',
  json: 'JSON',
  numeric: DECLARED_NUMERIC,
  decimal: DECLARED_NUMERIC,
};

/** The engine type of one declared PostgreSQL type, or an error naming it. */
export function engineTypeOf(declared: string, where: string): string {
  const type = declared.trim().toLowerCase().replace(/\s+/g, ' ');
  const decimal = /^(?:numeric|decimal)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/.exec(type);
  if (decimal) {
    const precision = Number(decimal[1]);
    const scale = Number(decimal[2] ?? 0);
    if (precision >= 1 && precision <= 38 && scale <= precision) return `DECIMAL(${precision},${scale})`;
  }
  const varchar = /^(?:varchar|character varying)\s*\(\s*\d+\s*\)$/.exec(type);
  if (varchar) return 'VARCHAR';
  const engine = DECLARABLE[type];
  if (!engine) {
    throw new SourceUnreachableError(
      `${where}: type "${declared}" cannot be declared; use one of ${Object.keys(DECLARABLE).join(', ')}, numeric(p,s) with p up to 38, or varchar(n)`,
    );
  }
  return engine;
}

/** The declared column types of `file` (a name inside `folder`), or null without a schema file. */
export function declaredTypes(folder: string, file: string): Record<string, string> | null {
  const stem = file.replace(/(\.gz)?$/i, '').replace(/\.[^.]+$/, '');
  const schemaFile = path.join(folder, `${stem}${SCHEMA_FILE_SUFFIX}`);
  if (!fs.existsSync(schemaFile)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(schemaFile, 'utf8'));
  } catch (err) {
    throw new SourceUnreachableError(`${stem}${SCHEMA_FILE_SUFFIX} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const columns = (parsed as { columns?: unknown } | null)?.columns;
  if (!columns || typeof columns !== 'object' || Array.isArray(columns)) {
    throw new SourceUnreachableError(`${stem}${SCHEMA_FILE_SUFFIX} must be {"columns": {"name": "type", ...}}`);
  }
  const types: Record<string, string> = {};
  for (const [name, declared] of Object.entries(columns as Record<string, unknown>)) {
    if (typeof declared !== 'string')
      throw new SourceUnreachableError(`${stem}${SCHEMA_FILE_SUFFIX}: the type of "${name}" is not a string`);
    types[name] = engineTypeOf(declared, `${stem}${SCHEMA_FILE_SUFFIX}, column "${name}"`);
  }
  return types;
}
