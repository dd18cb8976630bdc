/**
 * Pushdown as a negotiation (connectors/types.ts ScanPushdown): what each SQL source answers when
 * a planner offers it a filter, a top-N, an aggregation, a join or a dependent join's keys, and
 * that the planners keep in the engine whatever a source declines. The connectors are built from
 * plain definitions and never connect (test/engine/plan-sources.ts): the answers are the
 * sources' rules, not their data.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Node } from '@pgsql/types';
import type { ColumnDef, SourceDef, TableDef } from '../../src/catalog/types.js';
import type { Connector, RowConnector, ScanPushdown } from '../../src/connectors/types.js';
import { bindStatement } from '../../src/engine/access/bind.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { choosePlan } from '../../src/engine/plan/choose.js';
import { explainPlan } from '../../src/engine/plan/explain.js';
import { asKind, statementOf } from '../../src/engine/tree/ast.js';
import { PlainCatalog } from '../helpers/plain-catalog.js';
import { planSources } from './plan-sources.js';

let catalog: PlainCatalog;
let dataDir: string;

before(async () => {
  await initParser();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-negotiation-'));
  catalog = new PlainCatalog(planSources(dataDir), [path.join(dataDir, 'files')]);
});

after(async () => {
  await catalog?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const connector = (name: string) => catalog.connectorOf(catalog.findSource(name)!) as RowConnector;
const tableOf = (source: string, name: string): TableDef => catalog.findSource(source)!.tables.find((t) => t.name === name)!;
const columnOf = (source: string, table: string, name: string): ColumnDef => tableOf(source, table).columns.find((c) => c.name === name)!;

/** The WHERE of `SELECT * FROM t WHERE <condition>`, as the planners offer it. */
function condition(text: string): Node {
  return asKind(statementOf(parseStatement(`SELECT * FROM t WHERE ${text}`)), 'SelectStmt')!.whereClause!;
}

/** Resolves bare column names (and `alias.name`) to the columns of one table. */
const scopeOf = (table: TableDef) => ({
  column: (fields: string[]) => table.columns.find((c) => c.name === fields[fields.length - 1]),
});

describe('what each SQL source answers', () => {
  test('a filter: taken exactly by PostgreSQL; a MySQL text comparison only as a superset (its collation); a function none writes is declined', () => {
    const pg = connector('pg').pushdown.applyFilter(condition("country = 'DE'"), scopeOf(tableOf('pg', 'customers')));
    assert.deepEqual(pg, { sql: `"country" = 'DE'`, exact: true });
    const my = connector('my').pushdown.applyFilter(condition("country = 'DE'"), scopeOf(tableOf('my', 'customers')));
    assert.equal(my?.exact, false);
    assert.match(my?.sql ?? '', /`country` = 'DE'/);
    assert.equal(connector('pg').pushdown.applyFilter(condition("md5(name) = 'x'"), scopeOf(tableOf('pg', 'customers'))), null);
  });

  test('a top-N: taken on numbers; text declined where the collation orders otherwise than the engine (PostgreSQL, MySQL), taken by SQLite (binary)', () => {
    const byId = [{ column: columnOf('pg', 'customers', 'id'), descending: false, nullsFirst: false }];
    assert.deepEqual(connector('pg').pushdown.applyTopN(byId, 5), { orderBy: byId, limit: 5 });
    const byName = (source: string, table: string, name: string) => [
      { column: columnOf(source, table, name), descending: true, nullsFirst: true },
    ];
    assert.equal(connector('pg').pushdown.applyTopN(byName('pg', 'customers', 'name'), 5), null);
    assert.equal(connector('my').pushdown.applyTopN(byName('my', 'customers', 'name'), 5), null);
    assert.deepEqual(connector('lite').pushdown.applyTopN(byName('lite', 'items', 'label'), 3)?.limit, 3);
  });

  test('an aggregation: PostgreSQL takes it; MySQL declines text keys (grouped by its collation); SQLite declines every one', () => {
    const count = [{ fn: 'count' as const, column: null }];
    assert.ok(connector('pg').pushdown.applyAggregation([columnOf('pg', 'orders', 'customer_id')], count));
    assert.ok(connector('my').pushdown.applyAggregation([columnOf('my', 'customers', 'id')], count));
    assert.equal(connector('my').pushdown.applyAggregation([columnOf('my', 'customers', 'country')], count), null);
    assert.equal(connector('lite').pushdown.applyAggregation([columnOf('lite', 'items', 'id')], count), null);
  });

  test('a join: the query in the dialect with the conditions it can write; the others are left to the engine', () => {
    const customers = tableOf('pg', 'customers');
    const orders = tableOf('pg', 'orders');
    const joined = connector('pg').pushdown.applyJoin({
      tables: [
        { alias: 'c', table: customers },
        { alias: 'o', table: orders },
      ],
      conditions: [condition('o.customer_id = c.id'), condition("md5(c.name) = 'x'")],
      columns: [
        { alias: 'c', column: columnOf('pg', 'customers', 'name') },
        { alias: 'o', column: columnOf('pg', 'orders', 'amount') },
      ],
    });
    assert.deepEqual(joined?.taken, [true, false]);
    assert.equal(
      joined?.sql,
      `SELECT "c"."name", "o"."amount" FROM "public"."customers" AS "c", "public"."orders" AS "o" WHERE ("o"."customer_id" = "c"."id")`,
    );
  });

  test("a dependent join's keys: in batches; MySQL text keys only in one batch (IN matches case-insensitively, batches could overlap)", () => {
    const keys = ['a', 'b', 'c'];
    assert.equal(connector('pg').pushdown.applyKeyFilter(columnOf('pg', 'customers', 'name'), keys, { batchSize: 2 })?.length, 2);
    assert.equal(connector('my').pushdown.applyKeyFilter(columnOf('my', 'customers', 'name'), keys, { batchSize: 2 }), null);
    assert.equal(connector('my').pushdown.applyKeyFilter(columnOf('my', 'customers', 'name'), keys, { batchSize: 3 })?.length, 1);
  });
});

/** A catalog whose sources decline the offers named, and answer the others as they do. */
class DecliningCatalog extends PlainCatalog {
  constructor(
    sources: readonly SourceDef[],
    roots: readonly string[],
    private readonly declined: ReadonlySet<keyof ScanPushdown>,
  ) {
    super(sources, roots);
  }

  override connectorOf(source: SourceDef): Connector {
    const real = super.connectorOf(source);
    if (real.delivery !== 'rows') return real;
    const pushdown = new Proxy(real.pushdown, {
      get: (target, key, receiver) => (this.declined.has(key as keyof ScanPushdown) ? () => null : Reflect.get(target, key, receiver)),
    });
    return Object.assign(Object.create(real) as RowConnector, { pushdown });
  }
}

/** The statement each source is sent for `sql`, as EXPLAIN prints it. */
async function sourceQueries(planCatalog: PlainCatalog, sql: string): Promise<string[]> {
  const bound = bindStatement(parseStatement(sql), planCatalog, 'vdb', planCatalog.adminPolicy());
  // Not whole at one source: the federated planners make the offers.
  const plan = await choosePlan(bound, planCatalog, {
    pushdown: true,
    wholeStatements: false,
    dependentJoin: { maxKeys: 100_000, batchSize: 50_000 },
  });
  return explainPlan(plan, planCatalog, { maxKeys: 100_000, batchSize: 50_000 })
    .rows.filter((row) => row[2] === 'source query')
    .map((row) => String(row[5]));
}

/** The source queries of `sql` when the sources decline the offers named. */
async function declinedQueries(sql: string, declined: ReadonlyArray<keyof ScanPushdown>): Promise<string[]> {
  const declining = new DecliningCatalog(catalog.sources, [path.join(dataDir, 'files')], new Set(declined));
  try {
    return await sourceQueries(declining, sql);
  } finally {
    await declining.close();
  }
}

describe('the planners keep in the engine what a source declines', () => {
  const statement = 'SELECT id, name FROM my.customers WHERE id > 10 ORDER BY id LIMIT 5';

  test('offers taken: the condition and the top-N go to the source', async () => {
    assert.deepEqual(await sourceQueries(catalog, statement), [
      'SELECT `id`, `name` FROM `none`.`customers` WHERE (`id` > 10) ORDER BY (`id` IS NULL) ASC, `id` ASC LIMIT 5',
    ]);
  });

  test('a declined filter: the source sends every row, and with a condition kept in the engine, no top-N either', async () => {
    assert.deepEqual(await declinedQueries(statement, ['applyFilter']), ['SELECT `id`, `name` FROM `none`.`customers`']);
  });

  test('a declined top-N: the condition still goes, the order and limit stay in the engine', async () => {
    assert.deepEqual(await declinedQueries(statement, ['applyTopN']), ['SELECT `id`, `name` FROM `none`.`customers` WHERE (`id` > 10)']);
  });

  test('a declined join: the tables of one source are read one by one', async () => {
    const sql = 'SELECT i.label, u.id, m.name FROM lite.items i JOIN lite.unanalyzed u ON u.id = i.id JOIN my.customers m ON m.id = i.id';
    const joined = await sourceQueries(catalog, sql);
    assert.equal(joined.length, 2, joined.join('\n'));
    assert.match(joined[0]!, /FROM "items" AS "i", "unanalyzed" AS "u" WHERE/);
    const separate = await declinedQueries(sql, ['applyJoin']);
    assert.equal(separate.length, 3, separate.join('\n'));
    assert.ok(separate.every((q) => !q.includes(' AS "i"')));
  });
});
