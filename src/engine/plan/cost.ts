/**
 * Estimates of the plans of a join between a small table of one source and the tables of a
 * PostgreSQL source, from the catalog's statistics (row counts, and distinct values of the join
 * keys where the source keeps them): the time each plan spends per row at the sources, in
 * transfer and in the engine. The figures are rough costs per row and value measured with
 * bench/federated-joins.ts on a 2-core machine; they rank plans, they do not predict times.
 * Pure: no I/O.
 */
import type { ColumnDef, TableDef } from '../../catalog/types.js';

/** Microseconds per row or value, measured (bench/README.md, federated-joins.ts). */
const COST = {
  /** A source reads a row and the driver hands it over, per value. */
  readValue: 0.25,
  /** A value appended to the engine and cast there (a load). */
  loadValue: 1.3,
  /** A value written into a shipped array and parsed by PostgreSQL. */
  shipValue: 0.3,
  /** PostgreSQL scans a row of its table (conditions applied). */
  scanRow: 0.1,
  /** PostgreSQL hashes (or probes with) a row in a join or a key array. */
  hashRow: 0.15,
  /** A row PostgreSQL sends as COPY text, per value. */
  sendValue: 0.5,
  /** A statement's fixed cost (round trip, planning). */
  statement: 1000,
};

export interface JoinEstimates {
  /** Rows of the small side (its table's estimate; its own conditions are not estimated). */
  smallRows: number;
  /** Distinct join keys of the small side. */
  keys: number;
  /** Rows of PostgreSQL's side, and the share of them whose key is among the small side's. */
  bigRows: number;
  matching: number;
  /** Estimated microseconds of each plan. */
  shipped: number;
  dependent: number;
  parallel: number;
  choice: 'shipped' | 'dependent' | 'parallel';
}

/** Distinct values of a column: imported, or all rows for a one-column primary key, else unknown. */
export function distinctOf(table: TableDef, column: ColumnDef): number | null {
  if (column.distinct !== undefined && column.distinct !== null && column.distinct > 0) return column.distinct;
  if (table.primaryKey.length === 1 && table.primaryKey[0] === column.nameInSource && table.cardinality !== null) return table.cardinality;
  return null;
}

/**
 * The three plans of a join of `small` (loaded columns `smallColumns`, key `smallKey`) with
 * PostgreSQL's tables (`bigRows` rows, `bigColumns` values read per row by a plan that loads
 * them, key `bigKey` with `bigDistinct` distinct values when known):
 *  - shipped: the small side read, written as arrays; PostgreSQL scans and joins, sends the answer;
 *  - dependent: the small side read and loaded; its keys go to PostgreSQL, which scans, probes
 *    the key array and sends the matching rows, loaded and joined in the engine;
 *  - parallel: both sides read at once and loaded whole; the engine joins.
 */
export function estimateJoin(input: {
  smallRows: number;
  smallColumns: number;
  smallKeyDistinct: number | null;
  bigRows: number;
  bigColumns: number;
  bigKeyDistinct: number | null;
}): JoinEstimates {
  const { smallRows, smallColumns, bigRows, bigColumns } = input;
  const keys = Math.min(smallRows, input.smallKeyDistinct ?? smallRows);
  const matching = Math.min(1, keys / Math.max(1, input.bigKeyDistinct ?? bigRows));
  const readSmall = smallRows * smallColumns * COST.readValue;
  const scanBig = bigRows * COST.scanRow;
  const shipped =
    readSmall + smallRows * smallColumns * COST.shipValue + scanBig + (smallRows + bigRows * matching) * COST.hashRow + COST.statement * 2;
  const fetched = bigRows * matching * bigColumns;
  const dependent =
    readSmall +
    smallRows * smallColumns * COST.loadValue +
    scanBig +
    (keys + bigRows) * COST.hashRow +
    fetched * (COST.sendValue + COST.loadValue) +
    COST.statement * 2;
  const small = readSmall + smallRows * smallColumns * COST.loadValue;
  const big = scanBig + bigRows * bigColumns * (COST.sendValue + COST.loadValue);
  const parallel = Math.max(small, big) + COST.statement;
  const ranked = (
    [
      ['shipped', shipped],
      ['dependent', dependent],
      ['parallel', parallel],
    ] as const
  ).reduce((best, next) => (next[1] < best[1] ? next : best));
  return { smallRows, keys, bigRows, matching, shipped, dependent, parallel, choice: ranked[0] };
}

/** The estimates as EXPLAIN shows them. */
export function describeEstimates(e: JoinEstimates): string {
  const ms = (us: number) => `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)} ms`;
  return (
    `estimates: ${e.smallRows} rows and ${e.keys} keys against ${e.bigRows} rows (${(e.matching * 100).toFixed(0)} % matching); ` +
    `shipped ${ms(e.shipped)}, dependent ${ms(e.dependent)}, parallel ${ms(e.parallel)}: ${e.choice}`
  );
}
