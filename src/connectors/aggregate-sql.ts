/** The SELECT of a scan with partial aggregates: `SELECT keys, aggs FROM t WHERE ... GROUP BY keys`. */
import type { ScanRequest } from './types.js';

export function aggregateSelect(request: Omit<ScanRequest, 'signal'>, quote: (name: string) => string, where: string): string {
  const keys = request.columns.map((c) => quote(c.nameInSource));
  const aggregates = (request.aggregates ?? []).map((a) => `${a.fn}(${a.column ? quote(a.column.nameInSource) : '*'})`);
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.join(', ')}` : '';
  return `SELECT ${[...keys, ...aggregates].join(', ')} FROM ${request.table.nameInSource}${where}${groupBy}`;
}
