/**
 * MySQL / MariaDB type mapping: engine type of each column type (information_schema
 * COLUMN_TYPE spelling) and the raw class its values are read in (text unless binary).
 */
import type { RawType } from '../types.js';

/**
 * `booleans`: MySQL's BOOLEAN is `tinyint(1)`, so (as its own connectors do) that column type is
 * read as BOOLEAN, with MySQL's truth: any value but 0 is true. Off, it is a SMALLINT.
 */
export function engineTypeOfMysql(columnType: string, booleans = true): string {
  const t = columnType.toLowerCase().trim();
  if (booleans && t === 'tinyint(1)') return 'BOOLEAN';
  const unsigned = t.includes('unsigned');
  const base = t
    .replace(/\(.*$/, '')
    .replace(/\s+unsigned.*$/, '')
    .trim();
  const decimal = /^(decimal|numeric)\((\d+),(\d+)\)/.exec(t);
  if (decimal) {
    const precision = Number(decimal[2]);
    return precision <= 38 ? `DECIMAL(${precision},${decimal[3]})` : 'DOUBLE';
  }
  switch (base) {
    case 'tinyint':
    case 'smallint':
      return unsigned ? 'INTEGER' : 'SMALLINT';
    case 'mediumint':
    case 'int':
    case 'integer':
      return unsigned ? 'BIGINT' : 'INTEGER';
    case 'bigint':
      return unsigned ? 'UBIGINT' : 'BIGINT';
    case 'year':
      return 'INTEGER';
    case 'bit':
      return 'BIGINT';
    case 'decimal':
    case 'numeric':
      return 'DECIMAL(10,0)';
    case 'float':
      return 'FLOAT';
    case 'double':
    case 'real':
      return 'DOUBLE';
    case 'date':
      return 'DATE';
    case 'datetime':
    case 'timestamp':
      return 'TIMESTAMP';
    case 'time':
      return 'INTERVAL';
    case 'binary':
    case 'varbinary':
    case 'tinyblob':
    case 'blob':
    case 'mediumblob':
    case 'longblob':
      return 'BLOB';
    case 'json':
      return 'JSON';
    default:
      // char, varchar, text kinds, enum, set, and anything unknown: text.
      return 'VARCHAR';
  }
}

/** Booleans are read as their integer, which the load turns into true (not 0) or false (0). */
export const rawTypeOfMysql = (engineType: string): RawType =>
  engineType === 'BLOB' ? 'BLOB' : engineType === 'BOOLEAN' ? 'BIGINT' : 'VARCHAR';
