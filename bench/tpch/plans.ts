/**
 * What vdb's EXPLAIN says a TPC-H query asks its sources, and which of those statements read a
 * large table whole: a source query (rows loaded into vdb's engine) over a table of more than
 * `100,000 x SF` rows with no WHERE and no dependent-join keys. Statements a source runs whole
 * (the answer comes from the source) are listed, never flagged: the source reads what it must.
 */
import { rowCount, scale, type TableName } from './generate.js';

export interface SourceStatement {
  source: string;
  operation: string;
  /** EXPLAIN's Object and Pushed columns. */
  object: string;
  pushed: string;
  sql: string;
  /** Tables of the data set the statement names. */
  tables: TableName[];
  /** Tables over the threshold it reads with no condition; empty when none. */
  unconditioned: TableName[];
}

/** The rows of a table at a scale (lineitem: 4 lines an order on average, as a bound). */
function tableRows(table: TableName, sf: number): number {
  const s = scale(sf);
  return table === 'lineitem' ? s.orders * 4 : rowCount(table, s);
}

/** 100,000 rows at scale 1, proportional at other scales. */
export const fullReadThreshold = (sf: number) => 100_000 * sf;

const TABLE_NAMES: TableName[] = ['region', 'nation', 'supplier', 'part', 'partsupp', 'customer', 'orders', 'lineitem'];

/** Source statements of EXPLAIN rows (Step, Location, Operation, Object, Pushed, SQL). */
export function sourceStatements(explain: unknown[][], prefix: string, sf: number): SourceStatement[] {
  const out: SourceStatement[] = [];
  const reference = new RegExp(`["\`]?${prefix}["\`]?\\.["\`]?(${TABLE_NAMES.join('|')})["\`]?(?![\\w])`, 'gi');
  for (const row of explain) {
    const [, location, operation, object, pushed, sql] = row.map((v) => (v === null || v === undefined ? '' : String(v)));
    if (!operation!.startsWith('source')) continue;
    const tables = [...new Set([...sql!.matchAll(reference)].map((m) => m[1]!.toLowerCase() as TableName))];
    const conditioned = /\bWHERE\b/i.test(sql!) || /\bkeys of\b/.test(pushed!);
    const unconditioned =
      operation === 'source query' && !conditioned ? tables.filter((t) => tableRows(t, sf) > fullReadThreshold(sf)) : [];
    out.push({ source: location!, operation: operation!, object: object!, pushed: pushed!, sql: sql!, tables, unconditioned });
  }
  return out;
}

/** The statements one a line, the unconditioned reads marked. */
export function formatStatements(statements: SourceStatement[]): string {
  return statements
    .map((s) => {
      const flag = s.unconditioned.length > 0 ? `  <-- reads ${s.unconditioned.join(', ')} whole` : '';
      const sql = s.sql.replace(/\s+/g, ' ').trim();
      return `    ${s.source} ${s.operation}${s.pushed ? ` [${s.pushed}]` : ''}${flag}\n      ${sql.length > 600 ? `${sql.slice(0, 600)} ...` : sql}`;
    })
    .join('\n');
}
