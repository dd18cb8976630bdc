/**
 * SQLite type mapping. SQLite columns have a declared type and an affinity; values may still be
 * of any storage class. We map the declared type to an engine type (following SQLite's affinity
 * rules, plus the common DATE/TIMESTAMP/BOOLEAN/DECIMAL conventions), and load values in their
 * raw storage class so the engine can cast them with TRY_CAST and report what did not fit.
 */
import type { RawType } from '../types.js';

export function engineTypeOfSqlite(declared: string): string {
  const t = declared.trim().toUpperCase();
  const decimal = /^(DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/.exec(t);
  if (decimal) {
    const precision = Math.min(Number(decimal[2]), 38);
    const scale = Math.min(Number(decimal[3] ?? 0), precision);
    return `DECIMAL(${precision},${scale})`;
  }
  if (t === 'DATE') return 'DATE';
  if (t === 'DATETIME' || t.startsWith('TIMESTAMP')) return 'TIMESTAMP';
  if (t === 'BOOLEAN' || t === 'BOOL') return 'BOOLEAN';
  // SQLite's own affinity rules, in their documented order.
  if (t.includes('INT')) return 'BIGINT';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'VARCHAR';
  if (t.includes('BLOB')) return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'DOUBLE';
  if (t.includes('NUMERIC') || t.includes('DECIMAL')) return 'DOUBLE';
  // No declared type (expressions in views): values are shown as text.
  return 'VARCHAR';
}

/** The storage class values of an engine type are loaded in before the engine casts them. */
export function rawTypeOf(engineType: string): RawType {
  if (engineType === 'BIGINT') return 'BIGINT';
  if (engineType === 'DOUBLE') return 'DOUBLE';
  if (engineType === 'BLOB') return 'BLOB';
  if (engineType === 'BOOLEAN') return 'BIGINT';
  if (engineType.startsWith('DECIMAL')) return 'VARCHAR';
  return 'VARCHAR';
}
