/**
 * The plan of a statement the engine runs over source results: what each row source is asked
 * (scans with their pushed columns, conditions, order, limit and partial aggregates; joins
 * among one source's tables as one query), and the statement the engine then runs. Shared by
 * execution and EXPLAIN, so that EXPLAIN shows exactly what runs.
 */
import type { ParseResult } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import type { BoundStatement, BoundTable } from '../access/bind.js';
import { planJoinPushdown, type JoinGroup } from './join-pushdown.js';
import { planPartialAggregation } from './partial-aggregation.js';
import { planDistinctReads } from './distinct-reads.js';
import { planGroupLookup } from './key-lookup.js';
import { planScans, type ScanPlan } from './scans.js';
import { walk } from '../tree/ast.js';
import { chooseJoins, estimatedRows } from './join-choice.js';
import { paddedUses, usedWithChars, type PaddedUses } from './padded-uses.js';
import { scaleUses, type ScaleUses } from './scale-uses.js';

export interface StatementPlan {
  /** Scans of single tables, by load name. */
  scans: Map<string, ScanPlan>;
  /** Joins that sources compute (their tables are not among the scans). */
  joins: JoinGroup[];
  /** The statement the engine runs over the loaded results. */
  ast: ParseResult;
  /** The tables the statement reads. */
  tables: readonly BoundTable[];
  /** The scans' load names in the order they load: fewer estimated rows first, so that their keys can narrow the bigger ones (dependent join). */
  loadOrder: string[];
  /** Which columns the statement shows (a numeric of mixed scales is checked only then). */
  scaleUses: ScaleUses;
  /** Which columns it uses beyond showing them (a char(n) whose values are padded is refused then); worked out when asked. */
  paddedUses: PaddedUses;
}

/** The dependent join's limits (config `dependentJoin`): they enter the estimates of its plan. */
export interface JoinLimits {
  maxKeys: number;
  batchSize: number;
  /** Keys go as a lookup to sources that take one (default true; key-lookup.ts). */
  keyLookups?: boolean;
}

export function planStatement(
  bound: BoundStatement,
  registry: PlanCatalog,
  pushdown: boolean,
  limits: JoinLimits = { maxKeys: 100_000, batchSize: 100_000 },
  bytewise: ReadonlyMap<string, boolean> = new Map(),
): StatementPlan {
  const scans = planScans(bound, registry, { pushdown });
  if (pushdown) planDistinctReads(bound, scans, registry);
  const joins = pushdown ? planJoinPushdown(bound, scans, registry, bytewise) : null;
  if (joins) {
    const members = new Set(joins.groups.flatMap((g) => g.members));
    // Tables read only inside a subquery a source runs in its join are not loaded either.
    const read = new Set<string>();
    walk(joins.ast, (nodeType, node) => {
      if (nodeType === 'RangeVar' && typeof node.relname === 'string') read.add(node.relname);
    });
    const rest = new Map([...scans].filter(([loadName]) => !members.has(loadName) && read.has(loadName)));
    // Keys of a table joined at its source come from its join's result, where that has the column.
    for (const [loadName, scan] of rest)
      rest.set(loadName, {
        ...scan,
        dependencies: scan.dependencies.flatMap((d) => (members.has(d.from) ? viaGroup(d, joins.groups, scans) : [d])),
      });
    const given = new Map(joins.groups.map((g) => [g.loadName, { rows: g.rows, columns: g.columns.length }]));
    chooseJoins(rest, limits, given);
    const separate = new Map(scans);
    chooseJoins(separate, limits);
    // Joined at the sources unless reading the tables apart (each narrowed by the others' keys) loads fewer values.
    const joined = valuesLoaded(rest.values()) + joins.groups.reduce((sum, g) => sum + (g.rows ?? Number.NaN) * g.columns.length, 0);
    if (!(valuesLoaded(separate.values()) < joined)) return completed(bound, rest, joins.groups, joins.ast);
  }
  const partial = pushdown ? planPartialAggregation(bound, scans, registry) : null;
  if (partial) {
    const scan = scans.get(partial.loadName)!;
    scans.set(partial.loadName, { ...scan, columns: partial.keys, filter: partial.filter, aggregates: partial.aggregates });
    const groupLookup = limits.keyLookups === false ? null : planGroupLookup(partial.ast, partial.loadName, scans, registry);
    if (groupLookup) scans.set(partial.loadName, { ...scans.get(partial.loadName)!, groupLookup });
  }
  if (pushdown) chooseJoins(scans, limits);
  return completed(bound, scans, [], partial?.ast ?? bound.ast);
}

/** A dependency on a table joined at its source, as one on the join's result (none where the result lacks the column). */
function viaGroup(dependency: Dependency, groups: readonly JoinGroup[], scans: ReadonlyMap<string, ScanPlan>): Dependency[] {
  const group = groups.find((g) => g.members.includes(dependency.from));
  const column = group?.columns.find((c) => c.member === dependency.from && c.column.name === dependency.fromColumn.name);
  if (!group || !column) return [];
  return [
    {
      column: dependency.column,
      from: group.loadName,
      fromColumn: { ...column.column, name: column.name },
      fromTable: scans.get(dependency.from)!.bound.resolved.table,
    },
  ];
}

type Dependency = ScanPlan['dependencies'][number];

/** Values the scans are estimated to load into the engine (NaN where a scan has no estimate). */
function valuesLoaded(scans: Iterable<ScanPlan>): number {
  let values = 0;
  for (const scan of scans) {
    const estimates = scan.join?.estimates;
    const rows = estimates?.choice === 'dependent' ? estimates.bigRows * estimates.matching : (scan.rows ?? Number.NaN);
    values += rows * (scan.columns.length + (scan.aggregates?.length ?? 0));
  }
  return values;
}

/** The plan with what loading it needs to know of the statement: the load order and the uses of columns. */
function completed(bound: BoundStatement, scans: Map<string, ScanPlan>, joins: JoinGroup[], ast: ParseResult): StatementPlan {
  const loadOrder = [...scans.entries()].sort(([, a], [, b]) => estimatedRows(a) - estimatedRows(b)).map(([loadName]) => loadName);
  return {
    scans,
    joins,
    ast,
    tables: bound.tables,
    loadOrder,
    scaleUses: scaleUses(ast),
    paddedUses: usedWithChars(scans.values(), joins, paddedUses(ast), bound.tables),
  };
}
