/**
 * Loads what a plan reads from sources, each source query as soon as what it needs is loaded:
 * joins at a source and scans that depend on no other load start at once and run at the same
 * time (their rows appended into the engine while they arrive); a scan that can take the keys of
 * a smaller load (dependent join, where the estimates chose it) starts when that load is done. One failing load cancels the
 * others, and its error is the statement's.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceRegistry } from '../../sources/registry.js';
import type { StatementPlan } from '../plan/planner.js';
import { dependentKeys, loadJoinGroup, loadRows, type DependentJoinLimits, type SourceQuery } from './load.js';
import type { ScanPlan } from '../plan/scans.js';
import { EarlyKeys } from './early-keys.js';
import { waitsFor } from '../plan/join-choice.js';
import type { KeyLookup } from '../../connectors/types.js';

/**
 * The keys other scans of the plan may take from this load, collected while its rows arrive;
 * null when none may, or under a row condition (keys of hidden rows must not reach another source).
 */
function watchKeys(loadName: string, plan: ScanPlan, planned: StatementPlan, maxKeys: number): EarlyKeys | null {
  if (plan.bound.rowCondition || plan.aggregates) return null;
  const names = new Set<string>();
  const coded = new Set<string>();
  for (const other of planned.scans.values()) {
    // A scan the estimates read at the same time takes no keys.
    if (other.join?.estimates.choice === 'parallel') continue;
    for (const dependency of other.dependencies) if (dependency.from === loadName) names.add(dependency.fromColumn.name);
    if (other.groupLookup?.from === loadName) coded.add(other.groupLookup.fromColumn.name);
  }
  return names.size > 0 ? EarlyKeys.for(plan, names, maxKeys, coded) : null;
}

/** The lookup the scan groups by instead of its key (plan/key-lookup.ts), where its keys came with one and are enough. */
function groupLookupOf(
  plan: ScanPlan,
  smaller: readonly string[],
  early: ReadonlyMap<string, EarlyKeys>,
  known: ReadonlyMap<string, ReadonlyMap<string, string[] | null>>,
): KeyLookup | null {
  const wanted = plan.groupLookup;
  if (!wanted || !smaller.includes(wanted.from)) return null;
  const keys = known.get(wanted.from)?.get(wanted.fromColumn.name);
  if (!keys || keys.length < wanted.minKeys) return null;
  return early.get(wanted.from)?.lookups.get(wanted.fromColumn.name) ?? null;
}

export interface LoadOptions {
  signal: AbortSignal;
  pushdown: boolean;
  dependentJoin: DependentJoinLimits;
  /** A folder the engine may read: whole reads a source writes as CSV go through files there (a copy's refresh). */
  bulkDir?: string;
}

/**
 * Loads the plan's joins and scans; returns the relations made, and whether a column was loaded
 * with another type than the catalog's (its values' scale); warnings and queries in plan order.
 */
export async function loadPlanned(
  connection: DuckDBConnection,
  registry: SourceRegistry,
  planned: StatementPlan,
  options: LoadOptions,
  warnings: string[],
  sourceQueries: SourceQuery[],
): Promise<{ relations: string[]; rescaled: boolean }> {
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  const order = planned.loadOrder.map((loadName) => [loadName, planned.scans.get(loadName)!] as const);
  const done = new Map<string, Promise<unknown>>();
  const steps: Array<Promise<{ warnings: string[]; query: SourceQuery; rescaled: boolean }>> = [];
  const { scaleUses: uses, paddedUses: padding } = planned;
  const failed = (err: unknown) => {
    if (!stop.signal.aborted) stop.abort(err);
    throw err;
  };
  for (const group of planned.joins) {
    const settled = loadJoinGroup(connection, group, signal, uses, padding).then(
      (loaded) => ({ ...loaded, query: { source: group.source.name, sql: group.sql } }),
      failed,
    );
    // Scans may take the keys of a join's result (plan/planner.ts): they wait for it like for a scan.
    done.set(group.loadName, settled);
    steps.push(settled);
  }
  // Loads whose keys another scan may take are watched while their rows arrive (early-keys.ts),
  // so that the other scan starts when the source is done, not when the engine's load is.
  const early = new Map<string, EarlyKeys>();
  const known = new Map<string, Map<string, string[] | null>>();
  for (const [loadName, plan] of order) {
    // The smaller loads this one may take keys from (started before it): wait for them only,
    // unless the estimates chose to read both sides at once (plan/cost.ts).
    const dependent = options.pushdown && plan.join?.estimates.choice !== 'parallel';
    const smaller = dependent
      ? plan.dependencies.map((d) => d.from).filter((from) => done.has(from) && waitsFor(plan, from, planned.joins))
      : [];
    const watch = options.pushdown ? watchKeys(loadName, plan, planned, options.dependentJoin.maxKeys) : null;
    if (watch) early.set(loadName, watch);
    const keysOf = async (from: string) => {
      const keys = await early.get(from)?.ready;
      // Every key column this scan may take from that load collected; otherwise (a text column,
      // a value that kept them from being collected) the keys are read from the finished load.
      const columns = plan.dependencies.filter((d) => d.from === from).map((d) => d.fromColumn.name);
      if (keys && columns.every((name) => Array.isArray(keys.get(name)))) known.set(from, keys);
      else await done.get(from);
    };
    const step = Promise.allSettled(smaller.map(keysOf)).then(async () => {
      signal.throwIfAborted();
      const keyFilters =
        groupLookupOf(plan, smaller, early, known) ??
        (smaller.length > 0 ? await dependentKeys(connection, registry, plan, new Set(smaller), options.dependentJoin, known) : null);
      return loadRows(
        connection,
        registry,
        plan,
        loadName,
        signal,
        keyFilters,
        undefined,
        uses,
        watch ?? undefined,
        padding,
        options.bulkDir,
      );
    });
    const settled = step.catch(failed);
    done.set(loadName, settled);
    steps.push(settled);
  }
  const results = await Promise.allSettled(steps);
  options.signal.throwIfAborted();
  if (stop.signal.aborted) throw stop.signal.reason;
  let rescaled = false;
  for (const result of results) {
    if (result.status !== 'fulfilled') throw result.reason;
    warnings.push(...result.value.warnings);
    sourceQueries.push(result.value.query);
    rescaled ||= result.value.rescaled;
  }
  return { relations: [...planned.joins.map((g) => g.loadName), ...order.map(([loadName]) => loadName)], rescaled };
}
