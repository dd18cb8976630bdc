/** SQL pieces shared by the scans of SQL sources: partial aggregates, order and limit. */
import type { SourceDialect } from './dialect.js';
import type { ScanRequest } from './types.js';

/**
 * The SELECT of a scan with partial aggregates: `SELECT keys, aggs FROM t WHERE ... GROUP BY
 * keys`; with a group lookup, `SELECT min(key), aggs FROM t WHERE ... AND <code> <> 0 GROUP BY <code>`.
 */
export function aggregateSelect(
  request: Omit<ScanRequest, 'signal'>,
  quote: (name: string) => string,
  where: string,
  dialect: SourceDialect,
): string {
  const keys = request.columns.map((c) => quote(c.nameInSource));
  const aggregates = (request.aggregates ?? []).map((a) => `${a.fn}(${a.column ? quote(a.column.nameInSource) : '*'})`);
  if (request.groupLookup) {
    if (keys.length !== 1) throw new Error('a group lookup needs exactly one grouping column');
    const code = dialect.lookupCode(keys[0]!, request.groupLookup);
    const conditions = `${where ? `${where} AND` : ' WHERE'} ${code} <> 0`;
    return `SELECT ${[`min(${keys[0]})`, ...aggregates].join(', ')} FROM ${request.table.nameInSource}${conditions} GROUP BY ${code}`;
  }
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.join(', ')}` : '';
  return `SELECT ${[...keys, ...aggregates].join(', ')} FROM ${request.table.nameInSource}${where}${groupBy}`;
}

/**
 * ` ORDER BY ... LIMIT n` of a scan. NULL placement is spelled out as a sort key of its own,
 * which every dialect reads the same way (MySQL and SQLite put NULLs first by default,
 * PostgreSQL last).
 */
export function orderAndLimit(request: Omit<ScanRequest, 'signal'>, quote: (name: string) => string, textCollation = ''): string {
  if (request.limit === undefined) return '';
  const keys = (request.orderBy ?? []).flatMap((k) => {
    const column = quote(k.column.nameInSource);
    const ordered = column + (k.column.type === 'VARCHAR' && textCollation ? ` ${textCollation}` : '');
    return [`(${column} IS NULL) ${k.nullsFirst ? 'DESC' : 'ASC'}`, `${ordered} ${k.descending ? 'DESC' : 'ASC'}`];
  });
  return `${keys.length > 0 ? ` ORDER BY ${keys.join(', ')}` : ''} LIMIT ${request.limit}`;
}
