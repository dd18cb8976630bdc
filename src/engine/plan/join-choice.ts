/**
 * The federated plan of each join between loads, chosen when the statement is planned: the
 * dependent join (the bigger table waits for the smaller one's keys) or parallel (both read at
 * once), by the estimates of cost.ts. Pure: no I/O.
 */
import { distinctOf, estimateJoin, groupsOf, MIN_TARGET_ROWS, type JoinEstimates } from './cost.js';
import type { GroupLookup, ScanPlan } from './scans.js';
import { MAX_LOOKUP_CODE } from './key-lookup.js';
import { dialectOf } from '../../connectors/kinds.js';

/**
 * Whether a scan waits for the keys of an earlier load: of any smaller scan; of a join at a
 * source (loaded first, often big) only where the estimates chose its keys (chooseJoins).
 */
export function waitsFor(plan: ScanPlan, from: string, joins: ReadonlyArray<{ loadName: string }>): boolean {
  return !joins.some((g) => g.loadName === from) || plan.join?.from === from;
}

/** Rows a scan is estimated to read, for ordering loads (smaller first); unknown last. */
export function estimatedRows(plan: ScanPlan): number {
  return plan.rows ?? Number.MAX_SAFE_INTEGER;
}

/**
 * The groups a source grouping by the numbers of `small`'s rows sends (plan/key-lookup.ts): the
 * distinct rows of its other columns; null where they would be too many to number, or its keys
 * too few for a lookup.
 */
function lookupGroups(lookup: GroupLookup, small: ScanPlan): number | null {
  const table = small.bound.resolved.table;
  const keys = Math.min(small.rows ?? 0, distinctOf(table, lookup.fromColumn) ?? Number.POSITIVE_INFINITY);
  const others = small.columns.filter((c) => c.name !== lookup.fromColumn.name);
  const groups = groupsOf(table, others, small.rows ?? 0);
  return keys >= lookup.minKeys && groups <= MAX_LOOKUP_CODE ? groups : null;
}

/**
 * The federated plan of each join between loads: a scan that may take the keys of a smaller
 * load (its dependencies) gets the estimates of the dependent and the parallel plan, and its
 * choice (ScanPlan.join). Without row estimates on both sides, or with a small big side, the
 * dependent join stays (as before estimates). The dependency compared is the one with the
 * fewest estimated keys, the one execution would take. Mutates `scans`.
 */
export function chooseJoins(
  scans: Map<string, ScanPlan>,
  limits: { maxKeys: number; batchSize: number },
  /** Loads that are no scans (joins at a source, loaded first): their rows and columns. */
  given: ReadonlyMap<string, { rows: number | null; columns: number }> = new Map(),
): void {
  // Smaller scans first: one that takes keys itself loads only the rows matching them, and
  // that smaller count is what it hands on to the scans that take its keys in turn.
  const loaded = new Map<string, number>();
  const order = [...scans.entries()].sort(([, a], [, b]) => estimatedRows(a) - estimatedRows(b));
  const smallLoad = (dependency: ScanPlan['dependencies'][number]) => {
    const scan = scans.get(dependency.from);
    if (scan)
      return { rows: scan.rows, columns: scan.columns.length + (scan.aggregates?.length ?? 0), table: scan.bound.resolved.table, scan };
    const other = given.get(dependency.from);
    return other && dependency.fromTable ? { ...other, table: dependency.fromTable, scan: undefined } : null;
  };
  for (const [loadName, plan] of order) {
    const bigTable = plan.bound.resolved.table;
    let best: { from: string; estimates: JoinEstimates } | null = null;
    for (const dependency of plan.dependencies) {
      const small = smallLoad(dependency);
      if (!small || small.rows === null || plan.rows === null || bigTable.cardinality === null) continue;
      if (small.rows > estimatedRows(plan)) continue;
      const estimates = estimateJoin({
        smallRows: loaded.get(dependency.from) ?? small.rows,
        smallColumns: small.columns,
        smallKeyDistinct: distinctOf(small.table, dependency.fromColumn),
        bigRows: plan.rows,
        bigTableRows: bigTable.cardinality,
        bigColumns: plan.columns.length + (plan.aggregates?.length ?? 0),
        bigKeyDistinct: distinctOf(bigTable, dependency.column),
        bigGroups: plan.aggregates ? groupsOf(bigTable, plan.columns, plan.rows) : null,
        lookupGroups:
          small.scan && plan.groupLookup?.from === dependency.from && plan.groupLookup.fromColumn.name === dependency.fromColumn.name
            ? lookupGroups(plan.groupLookup, small.scan)
            : null,
        // A source that takes the keys as one array gets them in one statement; the others in batches.
        batchSize:
          plan.bound.resolved.origin === 'rows' && dialectOf(plan.bound.resolved.source)?.keysInOneStatement ? undefined : limits.batchSize,
        plans: ['dependent', 'parallel'],
      });
      if (best === null || estimates.keys < best.estimates.keys) best = { from: dependency.from, estimates };
    }
    if (!best) continue;
    const { estimates } = best;
    // More keys than a dependent join may send: it would fall back to a scan after waiting.
    const small = bigTable.cardinality! < MIN_TARGET_ROWS;
    const tooManyKeys = estimates.keys > limits.maxKeys;
    const parallel = !small && (estimates.choice === 'parallel' || tooManyKeys);
    const overruledBy =
      small && estimates.choice === 'parallel'
        ? `the bigger table has fewer than ${MIN_TARGET_ROWS} rows`
        : !small && tooManyKeys && estimates.choice === 'dependent'
          ? 'more keys than dependentJoin.maxKeys'
          : undefined;
    const choice = parallel ? 'parallel' : 'dependent';
    if (choice === 'dependent') loaded.set(loadName, Math.max(1, Math.round(estimates.bigRows * estimates.matching)));
    scans.set(loadName, {
      ...plan,
      join: { from: best.from, estimates: { ...estimates, choice, ...(overruledBy ? { overruledBy } : {}) } },
    });
  }
}
