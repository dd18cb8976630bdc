/**
 * Estimates of the plans of a join between a small table of one source and a big side at
 * another, from the catalog's statistics (row counts, distinct values and NULL shares of
 * columns, the share of rows each side's own conditions keep: selectivity.ts): the time each
 * plan spends per row at the sources, in transfer and in the engine. The figures are rough
 * costs per row and value measured with bench/federated-joins.ts on a 2-core machine; they rank
 * plans, they do not predict times. Pure: no I/O.
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
  /** A step of the engine's own: a load (its table, view and checks) or the statement over the loads (a rough figure, not measured alone). */
  engineStep: 2000,
};

/** Below this many rows at the big side every plan takes milliseconds: the dependent join stays. */
export const MIN_TARGET_ROWS = 10_000;

export type JoinPlan = 'shipped' | 'dependent' | 'parallel';

export interface JoinEstimates {
  /** Rows the small side reads (its table's estimate times the share its conditions keep). */
  smallRows: number;
  /** Distinct join keys among them. */
  keys: number;
  /** Rows of the big side that its own conditions keep, of `bigTableRows` it scans. */
  bigRows: number;
  bigTableRows: number;
  /** The share of the big side's rows whose key is among the small side's keys. */
  matching: number;
  /** Estimated microseconds of each plan (null: not a plan of this join). */
  shipped: number | null;
  dependent: number;
  parallel: number;
  choice: JoinPlan;
  /** Why the choice is not the cheapest estimate, where it is not. */
  overruledBy?: string;
}

export interface JoinInput {
  smallRows: number;
  smallColumns: number;
  /** Distinct values of the small side's join key in its whole table (before its conditions). */
  smallKeyDistinct: number | null;
  /** Rows of the big side its conditions keep; `bigTableRows` (default: the same) are scanned. */
  bigRows: number;
  bigTableRows?: number;
  /** Values per row the big side sends to the engine (grouping columns and aggregates, or columns). */
  bigColumns: number;
  bigKeyDistinct: number | null;
  /** Groups of a partial aggregation at the big side over all its rows; absent when it sends rows. */
  bigGroups?: number | null;
  /**
   * Groups the big side sends in the dependent plan where it groups by the numbers of the small
   * side's rows instead of the keys (plan/key-lookup.ts); absent otherwise.
   */
  lookupGroups?: number | null;
  /** Keys per statement of the dependent join (each batch scans the big side once more). */
  batchSize?: number;
  /** The plans to choose among (all three unless given). */
  plans?: readonly JoinPlan[];
}

/** Distinct values of a column: imported, or all rows for a one-column primary key, else unknown. */
export function distinctOf(table: TableDef, column: ColumnDef): number | null {
  if (column.distinct !== undefined && column.distinct !== null && column.distinct > 0) return column.distinct;
  if (table.primaryKey.length === 1 && table.primaryKey[0] === column.nameInSource && table.cardinality !== null) return table.cardinality;
  return null;
}

/**
 * The plans of a join of a small side (`smallRows` rows of `smallColumns` values, join key with
 * `smallKeyDistinct` distinct values when known) with a big side (`bigTableRows` scanned,
 * `bigRows` kept by its conditions, key with `bigKeyDistinct` distinct values when known):
 *  - shipped: the small side read, written as arrays; PostgreSQL scans and joins, sends the answer;
 *  - dependent: the small side read and loaded; then its keys go to the big side's source (in
 *    batches, each a scan), which probes them and sends the matching rows or groups, loaded and
 *    joined in the engine;
 *  - parallel: both sides read at once, the big one grouped at its source where a partial
 *    aggregation is planned, and loaded whole; the engine joins.
 */
export function estimateJoin(input: JoinInput): JoinEstimates {
  const { smallRows, smallColumns, bigRows, bigColumns } = input;
  const bigTableRows = Math.max(bigRows, input.bigTableRows ?? bigRows);
  const keys = Math.min(smallRows, input.smallKeyDistinct ?? smallRows);
  // Unknown distinct keys at the big side: as many as the small table has (a foreign key to it).
  const matching = Math.min(1, keys / Math.max(1, input.bigKeyDistinct ?? input.smallKeyDistinct ?? bigTableRows));
  const groups = input.bigGroups ?? null;
  const readSmall = smallRows * smallColumns * COST.readValue;
  const loadSmall = smallRows * smallColumns * COST.loadValue;
  const scanBig = bigTableRows * COST.scanRow;
  const transfer = (rows: number) => rows * bigColumns * (COST.sendValue + COST.loadValue);
  const engineJoin = (rows: number) => (smallRows + rows) * COST.hashRow;
  const shipped =
    readSmall + smallRows * smallColumns * COST.shipValue + scanBig + (smallRows + bigRows * matching) * COST.hashRow + COST.statement * 2;
  const batches = Math.max(1, Math.ceil(keys / Math.max(1, input.batchSize ?? Number.POSITIVE_INFINITY)));
  const fetched = input.lookupGroups ?? Math.min(bigRows, groups ?? bigRows) * matching;
  const dependent =
    readSmall +
    loadSmall +
    batches * scanBig +
    (keys + bigRows) * COST.hashRow +
    keys * COST.shipValue +
    transfer(fetched) +
    engineJoin(fetched) +
    COST.statement * (1 + batches) +
    COST.engineStep * 3;
  const all = Math.min(bigRows, groups ?? bigRows);
  const big = scanBig + (groups === null ? 0 : bigRows * COST.hashRow) + transfer(all);
  const parallel = Math.max(readSmall + loadSmall, big) + engineJoin(all) + COST.statement + COST.engineStep * 3;
  const plans = input.plans ?? (['shipped', 'dependent', 'parallel'] as const);
  const cost: Record<JoinPlan, number> = { shipped, dependent, parallel };
  const choice = plans.reduce((best, next) => (cost[next] < cost[best] ? next : best));
  return {
    smallRows,
    keys,
    bigRows,
    bigTableRows,
    matching,
    shipped: plans.includes('shipped') ? shipped : null,
    dependent,
    parallel,
    choice,
  };
}

/** Groups of a partial aggregation over `rows` rows by `columns`: the product of their distinct values, at most the rows. */
export function groupsOf(table: TableDef, columns: readonly ColumnDef[], rows: number): number {
  let groups = 1;
  for (const column of columns) groups *= distinctOf(table, column) ?? rows;
  return Math.max(1, Math.min(rows, groups));
}

/** The estimates as EXPLAIN shows them. */
export function describeEstimates(e: JoinEstimates): string {
  const ms = (us: number) => `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)} ms`;
  return (
    `estimates: ${e.smallRows} rows and ${e.keys} keys against ${e.bigRows} rows${e.bigRows < e.bigTableRows ? ` of ${e.bigTableRows}` : ''} ` +
    `(${(e.matching * 100).toFixed(0)} % matching); ` +
    `${e.shipped === null ? '' : `shipped ${ms(e.shipped)}, `}dependent ${ms(e.dependent)}, parallel ${ms(e.parallel)}: ${e.choice}${e.overruledBy ? ` (${e.overruledBy})` : ''}`
  );
}
