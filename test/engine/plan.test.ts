/**
 * The planners without a database or the service graph: statements bound and planned against a
 * catalog of plain definitions (test/helpers/plain-catalog.ts) of
 * a PostgreSQL, a MySQL and a SQLite source (their definitions only; nothing is contacted), and
 * the plan asserted: the columns each source is asked for, the condition pushed in its dialect,
 * LIMIT, dependent-join keys, joins at a source and partial aggregation.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bindStatement } from '../../src/engine/access/bind.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { planStatement } from '../../src/engine/plan/planner.js';
import { explainPlan } from '../../src/engine/plan/explain.js';
import { planFederated } from '../../src/engine/plan/federated.js';
import type { RowConnector } from '../../src/connectors/types.js';
import { PlainCatalog } from '../helpers/plain-catalog.js';
import { planSources } from './plan-sources.js';

let catalog: PlainCatalog;
let dataDir: string;

before(async () => {
  await initParser();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-plan-'));
  catalog = new PlainCatalog(planSources(dataDir), [path.join(dataDir, 'files')]);
});

after(async () => {
  await catalog?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function planOf(sql: string) {
  const policy = catalog.adminPolicy();
  const bound = bindStatement(parseStatement(sql), catalog, 'vdb', policy);
  const plan = planStatement(bound, catalog, true);
  const scanOf = (qualified: string) => {
    const found = [...plan.scans.values()].find((s) => `${s.bound.resolved.schema}.${s.bound.resolved.table.name}` === qualified);
    assert.ok(found, `${sql}: no scan of ${qualified}`);
    return found;
  };
  return { plan, scanOf };
}

/** The scan of `qualified` reads `columns` and pushes a filter matching `filter` (null: none). */
function assertPushed(
  sql: string,
  qualified: string,
  expected: { columns?: string[]; filter?: RegExp | null; limit?: number | null },
): void {
  const scan = planOf(sql).scanOf(qualified);
  if (expected.columns)
    assert.deepEqual(
      scan.columns.map((c) => c.name),
      expected.columns,
      `${sql}: columns`,
    );
  if (expected.filter === null) assert.equal(scan.filter, null, `${sql}: nothing pushed`);
  else if (expected.filter) assert.match(scan.filter ?? '', expected.filter, `${sql}: filter`);
  if (expected.limit !== undefined) assert.equal(scan.limit ?? null, expected.limit, `${sql}: limit`);
}

describe('PostgreSQL', () => {
  test('only the columns used are read, and conditions go in its dialect', () => {
    assertPushed("SELECT id FROM pg.orders WHERE amount > 10 AND created >= DATE '2025-01-01'", 'pg.orders', {
      columns: ['id', 'amount', 'created'],
      filter: /"amount" > 10.*"created" >= '2025-01-01'::date/,
    });
  });

  test('text is ordered bytewise there by COLLATE "C"; LIKE and ILIKE are exact', () => {
    assertPushed("SELECT id FROM pg.orders WHERE status < 'b'", 'pg.orders', { filter: /"status" COLLATE "C" < 'b'/ });
    assertPushed("SELECT id FROM pg.orders WHERE status ILIKE 'p%'", 'pg.orders', { filter: /"status" ILIKE 'p%'/ });
  });

  test('a table named twice gets no condition: its one load serves both', () => {
    assertPushed('SELECT a.id FROM pg.orders a JOIN pg.orders b ON a.id = b.customer_id WHERE a.amount > 1', 'pg.orders', { filter: null });
  });
});

describe('MySQL', () => {
  test('text equality is pushed (a superset under its collation); ordering on text is not', () => {
    assertPushed("SELECT id FROM my.customers WHERE country = 'DE'", 'my.customers', { filter: /`country` = 'DE'/ });
    assertPushed("SELECT id FROM my.customers WHERE country < 'E'", 'my.customers', { filter: null });
    assertPushed("SELECT id FROM my.customers WHERE created < DATE '2025-01-01'", 'my.customers', {
      filter: /`created` < DATE '2025-01-01'/,
    });
  });

  test('LIMIT reaches it under a numeric order, not under a text order', () => {
    assertPushed('SELECT id, name FROM my.customers ORDER BY id LIMIT 5', 'my.customers', { limit: 5 });
    assertPushed('SELECT id, name FROM my.customers ORDER BY name LIMIT 5', 'my.customers', { limit: null });
  });

  test('dependent-join keys of text are loose there: one batch only', () => {
    const connector = catalog.connectorOf(catalog.findSource('my')!) as RowConnector;
    const country = catalog.findSource('my')!.tables[0]!.columns[2]!;
    assert.equal(connector.dialect.matchesKeysLoosely(country), true);
    assert.equal(connector.dialect.keyInList(country, ['DE', "O'Neil\\"]), "`country` IN ('DE', 'O''Neil\\\\')");
  });
});

describe('SQLite', () => {
  test('text compares bytewise with COLLATE BINARY; dates are text there and stay in the engine', () => {
    assertPushed("SELECT id FROM lite.items WHERE label = 'x'", 'lite.items', { filter: /"label" COLLATE BINARY = 'x'/ });
    assertPushed("SELECT id FROM lite.items WHERE made > DATE '2025-01-01'", 'lite.items', { filter: null });
  });

  test('LIMIT reaches it even under a text order', () => {
    assertPushed('SELECT id, label FROM lite.items ORDER BY label LIMIT 3', 'lite.items', { limit: 3 });
  });
});

describe('across sources', () => {
  test('the bigger table may depend on the keys of the smaller one', () => {
    const { scanOf } = planOf('SELECT o.id FROM pg.orders o JOIN my.customers c ON o.customer_id = c.id');
    const dependencies = scanOf('pg.orders').dependencies.map((d) => `${d.column.name}<-${d.fromColumn.name}`);
    assert.deepEqual(dependencies, ['customer_id<-id']);
  });

  test('tables of one source that join go to it as one query, where that loads fewer values', () => {
    const { plan } = planOf(
      "SELECT o.id, c.name, m.country FROM pg.orders o JOIN pg.customers c ON o.customer_id = c.id JOIN my.customers m ON m.id = c.id WHERE o.status = 'open'",
    );
    assert.equal(plan.joins.length, 1);
    assert.match(
      plan.joins[0]!.sql,
      /FROM "public"\."orders" AS "o", "public"\."customers" AS "c" WHERE \("o"\."status" = 'open'\) AND \("o"\."customer_id" = "c"\."id"\)/,
    );
    // Without the condition, the million joined rows would outweigh reading orders apart, narrowed by the customers' keys.
    const apart = planOf(
      'SELECT o.id, c.name, m.country FROM pg.orders o JOIN pg.customers c ON o.customer_id = c.id JOIN my.customers m ON m.id = c.id',
    );
    assert.equal(apart.plan.joins.length, 0);
  });

  test('an aggregate over a join is computed partly at the bigger source, grouped by the join key', () => {
    const { scanOf } = planOf(
      "SELECT c.country, sum(o.amount), count(*) FROM pg.orders o JOIN my.customers c ON o.customer_id = c.id WHERE o.created >= DATE '2025-01-01' GROUP BY c.country",
    );
    const orders = scanOf('pg.orders');
    assert.deepEqual(
      orders.columns.map((c) => c.name),
      ['customer_id'],
    );
    assert.deepEqual(
      orders.aggregates?.map((a) => a.fn),
      ['sum', 'count'],
    );
    assert.match(orders.filter ?? '', /"created" >= '2025-01-01'::date/);
  });

  test('MySQL does not group by text for a partial aggregation; PostgreSQL does', () => {
    const grouped = (schema: string) =>
      planOf(`SELECT c.country, count(*) FROM ${schema}.customers c JOIN lite.items i ON i.id = c.id GROUP BY c.country`).scanOf(
        `${schema}.customers`,
      ).aggregates;
    assert.deepEqual(
      grouped('pg')?.map((a) => a.fn),
      ['count'],
    );
    assert.equal(grouped('my'), undefined);
  });
});

describe('estimates (plan/selectivity.ts, plan/cost.ts)', () => {
  const rowsOf = (sql: string, qualified: string) => planOf(sql).scanOf(qualified).rows;

  test("a table's own conditions: equality 1/n of the non-NULL rows, IN k/n, ranges 1/3, patterns, AND, OR, NOT, NULL tests", () => {
    const orders = (where: string) => rowsOf(`SELECT id FROM pg.orders WHERE ${where}`, 'pg.orders');
    // status: 4 distinct values, 20 % NULL.
    assert.equal(orders("status = 'open'"), 200_000);
    assert.equal(orders("'open' = status"), 200_000);
    assert.equal(orders("status IN ('open', 'paid')"), 400_000);
    assert.equal(orders("status <> 'open'"), 600_000);
    assert.equal(orders("created >= DATE '2025-01-01'"), 333_333);
    assert.equal(orders("created BETWEEN DATE '2025-01-01' AND DATE '2025-02-01'"), 111_111);
    assert.equal(orders("status = 'open' AND created >= DATE '2025-01-01'"), 66_667);
    assert.equal(orders("(status = 'open' OR created >= DATE '2025-01-01')"), 466_667);
    assert.equal(orders("NOT (status = 'open')"), 800_000);
    assert.equal(orders('status IS NULL'), 200_000);
    assert.equal(orders('status IS NOT NULL'), 800_000);
    assert.equal(orders("status LIKE 'op%'"), 5_000);
    // A one-column primary key: as many distinct values as rows.
    assert.equal(orders('id = 17'), 1);
    assert.equal(orders('id IN (1, 2, 3)'), 3);
    // Without conditions: the table's estimate.
    assert.equal(rowsOf('SELECT id FROM pg.orders', 'pg.orders'), 1_000_000);
  });

  test('without statistics: the defaults; without a row estimate (SQLite never analyzed): none', () => {
    // country has no distinct values imported: 0.5 % for equality.
    assert.equal(rowsOf("SELECT id FROM pg.customers WHERE country = 'DE'", 'pg.customers'), 500);
    assert.equal(rowsOf('SELECT id FROM pg.customers WHERE country IS NULL', 'pg.customers'), 500);
    assert.equal(rowsOf('SELECT id FROM lite.unanalyzed WHERE id > 3', 'lite.unanalyzed'), null);
    // A join with a table of unknown size keeps the dependent join, without estimates.
    const { scanOf } = planOf('SELECT o.id FROM pg.orders o JOIN lite.unanalyzed u ON u.id = o.customer_id');
    assert.equal(scanOf('pg.orders').join, undefined);
    assert.equal(scanOf('pg.orders').dependencies.length, 1);
  });

  test('dependent or parallel by the estimates; the choice flips when the statistics change', () => {
    const sql =
      "SELECT c.country, sum(o.amount) FROM pg.orders o JOIN my.customers c ON o.customer_id = c.id WHERE c.country = 'DE' GROUP BY c.country";
    const country = catalog
      .findSource('my')!
      .tables.find((t) => t.name === 'customers')!
      .columns.find((c) => c.name === 'country')!;
    try {
      // No statistics for country: 500 customers, 500 keys; PostgreSQL sends 500 groups.
      const few = planOf(sql).scanOf('pg.orders').join!;
      assert.equal(few.estimates.smallRows, 500);
      assert.equal(few.estimates.keys, 500);
      assert.equal(few.estimates.choice, 'dependent');
      assert.ok(few.estimates.dependent < few.estimates.parallel);
      // One country: every customer, every order matches; reading both at once wins.
      country.distinct = 1;
      country.nullFraction = 0;
      const many = planOf(sql).scanOf('pg.orders').join!;
      assert.equal(many.estimates.smallRows, 100_000);
      assert.equal(many.estimates.choice, 'parallel');
      assert.ok(many.estimates.parallel < many.estimates.dependent);
    } finally {
      delete country.distinct;
      delete country.nullFraction;
    }
  });

  test('EXPLAIN shows the rows a scan reads, both estimates of the join and the choice', () => {
    const policy = catalog.adminPolicy();
    const pushed = (sql: string, maxKeys = 100_000) => {
      const bound = bindStatement(parseStatement(sql), catalog, 'vdb', policy);
      const limits = { maxKeys, batchSize: 50_000 };
      const plan = planFederated(bound, catalog, { pushdown: true, dependentJoin: limits });
      return explainPlan(plan, catalog, limits).rows.map((r) => String(r[4]));
    };
    const sql = "SELECT o.id FROM pg.orders o JOIN my.customers c ON o.customer_id = c.id WHERE c.country = 'DE' AND o.status = 'open'";
    const [customers, orders] = pushed(sql);
    assert.match(customers!, /conditions, columns, estimate 500 of 100000 rows$/);
    assert.match(
      orders!,
      /keys of my\.customers\.id \(dependent join, unless more keys than dependentJoin\.maxKeys load; estimates: 500 rows and 500 keys against 200000 rows of 1000000 \(1 % matching\); dependent [\d.]+ ms, parallel [\d.]+ ms: dependent\), estimate 200000 of 1000000 rows$/,
    );
    const [, parallel] = pushed(sql, 10);
    assert.match(
      parallel!,
      /read at the same time as my\.customers, joined in the engine \(parallel join; estimates: .*: parallel \(more keys than dependentJoin\.maxKeys\)\)/,
    );
    assert.doesNotMatch(parallel!, /keys of/);
  });

  test('more estimated keys than dependentJoin.maxKeys: parallel at plan time', () => {
    const policy = catalog.adminPolicy();
    const sql = "SELECT o.id FROM pg.orders o JOIN my.customers c ON o.customer_id = c.id WHERE c.country = 'DE'";
    const bound = bindStatement(parseStatement(sql), catalog, 'vdb', policy);
    const scan = (maxKeys: number) =>
      [...planStatement(bound, catalog, true, { maxKeys, batchSize: 50_000 }).scans.values()].find(
        (s) => s.bound.resolved.table.name === 'orders',
      )!;
    assert.equal(scan(100_000).join?.estimates.choice, 'dependent');
    assert.equal(scan(100).join?.estimates.choice, 'parallel');
  });
});

describe('table names', () => {
  test('a table name is kept structured and quoted by its dialect; names imported before 0.2.0 are parsed', () => {
    const dialectOf = (name: string) => (catalog.connectorOf(catalog.findSource(name)!) as RowConnector).dialect;
    const pg = dialectOf('pg');
    assert.equal(pg.tableSql({ nameInSource: '"public"."we""ird"' }), '"public"."we""ird"');
    assert.equal(pg.tableSql({ nameInSource: 'x', sourceName: { schema: 'public', table: 'we"ird' } }), '"public"."we""ird"');
    assert.deepEqual(pg.tableName({ nameInSource: '"s"."t"' }), { schema: 's', table: 't' });
    const my = dialectOf('my');
    assert.equal(my.tableSql({ nameInSource: '`db`.`ti``ck`' }), '`db`.`ti``ck`');
    assert.deepEqual(my.tableName({ nameInSource: '`db`.`ti``ck`' }), { schema: 'db', table: 'ti`ck' });
    assert.equal(dialectOf('lite').tableSql({ nameInSource: 'odd "name"' }), '"odd ""name"""');
  });
});
