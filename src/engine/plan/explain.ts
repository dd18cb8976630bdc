/**
 * EXPLAIN <statement>: the plan as rows, one per step: what each source is asked (the exact
 * statement it receives) and what the engine runs over the results. Nothing is executed.
 */
import { engineSql } from '../translate/engine-dialect.js';
import type { ResolvedTable } from '../../sources/definitions.js';
import type { PlanCatalog } from './plan-catalog.js';
import type { ColumnDef } from '../../catalog/types.js';
import type { RowConnector } from '../../connectors/types.js';
import type { JoinLimits, StatementPlan } from './planner.js';
import type { Plan } from './choose.js';
import type { FederatedPlan } from './federated.js';
import type { WholePlan } from './whole.js';
import type { ShippedTable, ShippingPlan } from './ship.js';
import type { LookupKey } from './ship-lookup.js';
import { describeEstimates, distinctOf } from './cost.js';

import { lookupMinKeys, MAX_LOOKUP_CODE } from './key-lookup.js';
import type { ScanPlan } from './scans.js';
import { waitsFor } from './join-choice.js';

/** The plan as a result: columns and rows of plain values (the engine serves it as any static result). */
export interface ExplainResult {
  columns: string[];
  rows: Array<Array<string | number | null>>;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** How a dependent join's keys go as a lookup at the source (key-lookup.ts), where they may. */
function keyLookupText(plan: ScanPlan, dependency: ScanPlan['dependencies'][number], fromName: string): string {
  const minKeys = lookupMinKeys(plan.bound.resolved.table, dependency.column, dependency.fromColumn);
  if (minKeys === null) return '';
  const grouped =
    plan.groupLookup?.from === dependency.from
      ? `, and where ${fromName}'s rows turn out unique by key with at most ${MAX_LOOKUP_CODE} distinct rows of their other columns, grouped by their numbers instead of the key`
      : '';
  return `; at least ${minKeys} dense keys go as a lookup (a byte per key) instead of an IN list${grouped}`;
}

const COLUMNS = ['Step', 'Location', 'Operation', 'Object', 'Pushed', 'SQL'];

/** The plan that runs (choose.ts), one row per step. */
export function explainPlan(plan: Plan, registry: PlanCatalog, limits?: JoinLimits & { maxShippedRows?: number }): ExplainResult {
  switch (plan.route) {
    case 'constant':
      return {
        columns: COLUMNS,
        rows: [[1, 'vdb', 'constant', 'the select list', 'everything', plan.constants.map((c) => c.sql).join(', ')]],
      };
    case 'whole':
      return explainWhole(plan.whole);
    case 'source-select':
      return explainWhole({ source: plan.select.source, sql: plan.select.pushed.sql });
    case 'shipped':
      return explainShipped(plan.shipping, plan.whole, registry, plan.maxShippedRows);
    case 'federated':
      return explainFederated(plan, registry, limits);
  }
}

/** A federated plan: its narrowings' steps, each ending in the engine's table of its rows, then the statement's. */
function explainFederated(plan: FederatedPlan, registry: PlanCatalog, limits?: JoinLimits): ExplainResult {
  const rows: ExplainResult['rows'] = [];
  for (const narrowing of plan.narrowings) {
    explainStatement(narrowing.plan, registry, limits, rows);
    rows.push([
      rows.length + 1,
      'vdb engine',
      'narrowing',
      `your view of the data -> ${narrowing.table}`,
      null,
      engineSql(narrowing.plan.ast, narrowing.plan.paddedUses.stripped),
    ]);
  }
  explainStatement(plan.statement, registry, limits, rows);
  rows.push([
    rows.length + 1,
    'vdb engine',
    'execute',
    'statement over the source results',
    null,
    engineSql(plan.statement.ast, plan.statement.paddedUses.stripped),
  ]);
  return { columns: COLUMNS, rows };
}

/** The steps of one statement's loads: what each source is asked, and what the engine reads itself. */
function explainStatement(
  planned: StatementPlan,
  registry: PlanCatalog,
  limits: JoinLimits | undefined,
  rows: ExplainResult['rows'],
): void {
  let step = rows.length + 1;
  const bound = { tables: planned.tables };
  // Load names are the engine's; people know the tables as schema.table.
  const names = new Map(bound.tables.map((t) => [t.loadName, `${t.resolved.schema}.${t.resolved.table.name}`]));
  for (const group of planned.joins) {
    const tables = group.members.map((m) => names.get(m) ?? m).join(' + ');
    names.set(group.loadName, tables);
    rows.push([
      step++,
      group.source.name,
      'source query',
      `${tables} -> ${group.loadName}`,
      `join, conditions, columns${group.rows === null ? '' : `, estimate ${group.rows} rows`}`,
      group.sql,
    ]);
  }
  // In the order execution loads them: fewer estimated rows first.
  const order = planned.loadOrder.map((loadName) => [loadName, planned.scans.get(loadName)!] as const);
  // Joins at the sources load first; their keys are named by the member table's column.
  const position = new Map<string, number>([
    ...planned.joins.map((g) => [g.loadName, -1] as const),
    ...order.map(([loadName], i) => [loadName, i] as const),
  ]);
  for (const [loadName, plan] of order) {
    const resolved = plan.bound.resolved;
    if (resolved.origin !== 'rows') continue;
    const connector = registry.connectorOf(resolved.source) as RowConnector;
    const sql = connector.scanSql({
      table: resolved.table,
      columns: plan.columns,
      filter: plan.filter ?? undefined,
      aggregates: plan.aggregates,
      orderBy: plan.orderBy,
      limit: plan.limit,
    });
    const dependent = dependencyTexts(plan, loadName, { planned, position, names, connector, limits });
    const table = resolved.table.cardinality;
    const rowsEstimate =
      plan.rows === null
        ? 'no estimate of rows'
        : `estimate ${plan.rows === table || table === null ? plural(plan.rows, 'row') : `${plan.rows} of ${plural(table, 'row')}`}`;
    const pushed = [
      plan.filter ? 'conditions' : null,
      plan.columns.length < resolved.table.columns.length ? 'columns' : null,
      plan.aggregates
        ? plan.aggregates.length > 0
          ? 'partial aggregation'
          : plan.probe
            ? 'distinct rows (with keys: the keys that have a row, probed at the source)'
            : 'distinct rows'
        : null,
      plan.limit !== undefined ? 'order and limit' : null,
      ...dependent,
      rowsEstimate,
    ]
      .filter(Boolean)
      .join(', ');
    rows.push([
      step++,
      resolved.source.name,
      'source query',
      `${resolved.schema}.${resolved.table.name} -> ${loadName}`,
      pushed || 'nothing',
      sql,
    ]);
  }
  for (const { resolved } of bound.tables) {
    if (resolved.origin === 'native') rows.push([step++, ...engineRead(resolved, registry)]);
  }
}

/** The step of a table the engine reads itself: a local copy, or a file or DuckDB source. */
function engineRead(resolved: Extract<ResolvedTable, { origin: 'native' }>, registry: PlanCatalog): string[] {
  const object = `${resolved.schema}.${resolved.table.name}`;
  if (resolved.copy) {
    const { copy, version, ageSeconds } = resolved.copy;
    const read = resolved.source ? `read from ${resolved.source.name}` : 'its SELECT run';
    const age = `${read} at ${version.readAt}, ${Math.round(ageSeconds)} s old`;
    return [
      'vdb engine',
      'local copy',
      object,
      `columns, conditions (copy ${copy.name}, version ${version.id}, ${age})`,
      `${resolved.engineSchema}.${resolved.engineName}`,
    ];
  }
  const source = resolved.source!;
  const connector = registry.connectorOf(source);
  const relation = connector.delivery === 'engine' ? connector.relationSql(resolved.table) : resolved.engineName;
  return [source.name, 'engine scan', object, 'columns, conditions (engine reader)', relation];
}

/** What EXPLAIN says of the keys a scan may take: those of the smaller loads it waits for, with the estimates of the chosen join. */
function dependencyTexts(
  plan: ScanPlan,
  loadName: string,
  context: {
    planned: StatementPlan;
    position: ReadonlyMap<string, number>;
    names: ReadonlyMap<string | undefined, string>;
    connector: RowConnector;
    limits: JoinLimits | undefined;
  },
): string[] {
  const { planned, position, names, connector, limits } = context;
  // Keys of a join at a source are named by its member table's column.
  const keyName = (d: ScanPlan['dependencies'][number]) => {
    const group = planned.joins.find((g) => g.loadName === d.from);
    const column = group?.columns.find((c) => c.name === d.fromColumn.name);
    return column
      ? `${names.get(column.member) ?? column.member}.${column.column.name} (joined at ${group!.source.name})`
      : `${names.get(d.from) ?? d.from}.${d.fromColumn.name}`;
  };
  // Loads with fewer estimated rows go first; a bigger one takes their keys (dependent join)
  // unless the estimates chose to read both at once (parallel).
  const parallel = plan.join?.estimates.choice === 'parallel';
  return plan.dependencies
    .filter((d) => (position.get(d.from) ?? Infinity) < position.get(loadName)!)
    .filter((d) => waitsFor(plan, d.from, planned.joins))
    .filter((d) => !parallel || d.from === plan.join!.from)
    .map((d) => {
      const name = keyName(d);
      const lookup =
        connector.dialect.takesKeyLookups && limits?.keyLookups !== false ? keyLookupText(plan, d, names.get(d.from) ?? d.from) : '';
      if (plan.join?.from === d.from) {
        const estimates = describeEstimates(plan.join.estimates);
        return parallel
          ? `read at the same time as ${names.get(d.from) ?? d.from}, joined in the engine (parallel join; ${estimates})`
          : `keys of ${name} (dependent join, unless more keys than dependentJoin.maxKeys load${lookup}; ${estimates})`;
      }
      // At most the rows the other scan reads (its conditions applied).
      const from = planned.scans.get(d.from);
      const distinct = from ? distinctOf(from.bound.resolved.table, d.fromColumn) : null;
      const keys = from?.rows == null ? null : Math.min(from.rows, distinct ?? from.rows);
      return `keys of ${name} (dependent join, when few enough${lookup}; ${keys === null ? 'no estimate of keys' : `estimate ${plural(keys, 'key')}`})`;
    });
}

/** The plan of a statement that one source runs whole. */
export function explainWhole(plan: Pick<WholePlan, 'source' | 'sql'>): ExplainResult {
  return {
    columns: ['Step', 'Location', 'Operation', 'Object', 'Pushed', 'SQL'],
    rows: [[1, plan.source.name, 'source statement', 'the whole statement', 'everything', plan.sql]],
  };
}

/** The plan of a join whose small side goes to PostgreSQL as arrays (ship.ts), with the estimates it was chosen on. */
export function explainShipped(
  plan: ShippingPlan,
  whole: Pick<WholePlan, 'sql'>,
  registry: PlanCatalog,
  maxShippedRows: number,
): ExplainResult {
  // planShipping ships tables of row sources only.
  const sourceQuery = ({ table, scan }: Pick<ShippedTable, 'table' | 'scan'>) => {
    const resolved = table.resolved as Extract<ResolvedTable, { origin: 'rows' }>;
    const connector = registry.connectorOf(resolved.source) as RowConnector;
    const sql = connector.scanSql({ table: resolved.table, columns: scan.columns, filter: scan.filter ?? undefined });
    return { source: resolved.source.name, object: `${resolved.schema}.${resolved.table.name}`, sql };
  };
  const main = sourceQuery({ table: plan.shipped, scan: plan.scan });
  const { smallRows, bigRows } = plan.estimates;
  const lookupOf = (key: LookupKey | null | undefined, columns: readonly ColumnDef[] = []) => {
    if (!key) return '';
    const applied = [...new Set((key.conditions ?? []).map((c) => columns[c.columnIndex]!.name))];
    return `; where its keys turn out unique, dense and at least ${key.minKeys}, its distinct rows go with a lookup array indexed by ${key.alias}.${key.column.name} instead${applied.length > 0 ? ` (the conditions on ${applied.join(', ')} then applied by vdb to its rows, not sent)` : ''}`;
  };
  const lookup = lookupOf(plan.lookup, plan.scan.columns);
  const choice = `shipped to PostgreSQL: ${smallRows} rows (estimate) against ${bigRows} rows there; federated instead if more than ${maxShippedRows} rows load${lookup}; ${describeEstimates(plan.estimates)}`;
  // Step 1 is the main shipped table; then the other sources' tables shipped along, then the engine's.
  const moreSteps: ExplainResult['rows'] = plan.moreShipped.map((more, i) => {
    const { source, object, sql } = sourceQuery(more);
    return [
      2 + i,
      source,
      'source query',
      object,
      `shipped to PostgreSQL along with step 1, read at the same time; federated instead if more than ${maxShippedRows} rows load${lookupOf(more.lookup)}`,
      sql,
    ];
  });
  const engineStep = 2 + plan.moreShipped.length;
  const engineSteps: ExplainResult['rows'] = plan.engineTables.map(({ table }, i) => {
    const { source } = table.resolved;
    // A local copy (of a materialized view: no source) is a table of the engine.
    const connector = source ? registry.connectorOf(source) : null;
    const relation = connector?.delivery === 'engine' ? connector.relationSql(table.resolved.table) : table.resolved.engineName;
    return [
      engineStep + i,
      source?.name ?? 'vdb engine',
      'engine scan',
      `${table.resolved.schema}.${table.resolved.table.name}`,
      'shipped to PostgreSQL (every row and column)',
      relation,
    ];
  });
  const relationOf = (columns: readonly ColumnDef[], step: number) =>
    `(SELECT * FROM unnest(<the columns of step ${step} as arrays>) AS shipped(${columns.map((c) => `"${c.name.replace(/"/g, '""')}"`).join(', ')}))`;
  let sql = whole.sql.split(plan.placeholder).join(relationOf(plan.scan.columns, 1));
  for (const [i, { scan, placeholder }] of plan.moreShipped.entries()) sql = sql.split(placeholder).join(relationOf(scan.columns, 2 + i));
  for (const [i, { table, placeholder }] of plan.engineTables.entries())
    sql = sql.split(placeholder).join(relationOf(table.resolved.table.columns, engineStep + i));
  const steps = moreSteps.length + engineSteps.length + 1;
  return {
    columns: ['Step', 'Location', 'Operation', 'Object', 'Pushed', 'SQL'],
    rows: [
      [1, main.source, 'source query', main.object, choice, main.sql],
      ...moreSteps,
      ...engineSteps,
      [
        steps + 1,
        plan.target.name,
        'source statement',
        `the whole statement, with the rows of step${steps > 1 ? 's' : ''} ${Array.from({ length: steps }, (_, i) => i + 1).join(', ')} as arrays`,
        'everything',
        plan.keyed.reduce(
          (text, keyed) =>
            text.split(`'${keyed.placeholder}'`).join(`<the distinct ${plan.scan.columns[keyed.keyIndex]!.name} of step 1 as an array>`),
          sql,
        ),
      ],
    ],
  };
}
