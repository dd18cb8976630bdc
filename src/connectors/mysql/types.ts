/**
 * MySQL / MariaDB type mapping: engine type of each column type (information_schema
 * COLUMN_TYPE spelling) and the raw class its values are read in (text unless binary).
 */
import type { RawType } from '../types.js';

export function engineTypeOfMysql(columnType: string): string {
  const t = columnType.toLowerCase().trim();
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

export const rawTypeOfMysql = (engineType: string): RawType => (engineType === 'BLOB' ? 'BLOB' : 'VARCHAR');
