/**
 * Each planning rule, one test each, as EXPLAIN prints the plan that runs: statements bound and
 * planned against plain source definitions (test/engine/plan-sources.ts), with no database and no
 * service graph (only a PostgreSQL source's collation is asked, of a port where nothing listens).
 * A change of a rule shows here as a change of the text the user sees.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { bindStatement } from '../../src/engine/access/bind.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { choosePlan, type PlanOptions } from '../../src/engine/plan/choose.js';
import { explainPlan } from '../../src/engine/plan/explain.js';
import { PlainCatalog } from '../helpers/plain-catalog.js';
import { planSources } from './plan-sources.js';

let catalog: PlainCatalog;
let dataDir: string;

before(async () => {
  await initParser();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-rules-'));
  catalog = new PlainCatalog(planSources(dataDir), [path.join(dataDir, 'files')]);
});

after(async () => {
  await catalog?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const DEFAULTS: PlanOptions = { pushdown: true, dependentJoin: { maxKeys: 100_000, batchSize: 50_000 } };

/** The plan's kind and its EXPLAIN rows. */
async function explained(sql: string, options: Partial<PlanOptions> = {}) {
  const settings = { ...DEFAULTS, ...options, dependentJoin: { ...DEFAULTS.dependentJoin, ...options.dependentJoin } };
  const bound = bindStatement(parseStatement(sql), catalog, 'vdb', catalog.adminPolicy());
  const plan = await choosePlan(bound, catalog, settings);
  return { kind: plan.route, rows: explainPlan(plan, catalog, settings.dependentJoin).rows };
}

test('constant: a select list of constants needs no source and no engine', async () => {
  assert.deepEqual(await explained("SELECT 1, 'a'"), {
    kind: 'constant',
    rows: [[1, 'vdb', 'constant', 'the select list', 'everything', "1, 'a'"]],
  });
});

test('whole: a statement over one PostgreSQL source goes to it as written there', async () => {
  assert.deepEqual(await explained("SELECT id, name FROM pg.customers WHERE country = 'DE'"), {
    kind: 'whole',
    rows: [
      [
        1,
        'pg',
        'source statement',
        'the whole statement',
        'everything',
        "SELECT\n  id,\n  name\nFROM public.customers AS customers\nWHERE\n  country = 'DE'",
      ],
    ],
  });
});

test('scans: columns and conditions pushed in the dialect; a MySQL text condition is a superset, kept in the engine', async () => {
  assert.deepEqual(await explained("SELECT id, name FROM my.customers WHERE country = 'DE' ORDER BY id LIMIT 5"), {
    kind: 'federated',
    rows: [
      [
        1,
        'my',
        'source query',
        'my.customers -> __vdb_rows_1',
        'conditions, columns, estimate 500 of 100000 rows',
        "SELECT `id`, `name`, `country` FROM `none`.`customers` WHERE (`country` = 'DE')",
      ],
      [
        2,
        'vdb engine',
        'execute',
        'statement over the source results',
        null,
        "SELECT\n  id,\n  name\nFROM __vdb_rows_1 AS customers\nWHERE\n  country = 'DE'\nORDER BY\n  id\nLIMIT 5",
      ],
    ],
  });
});

test('shipped: the small side goes to PostgreSQL as arrays, with the estimates it was chosen on', async () => {
  const { kind, rows } = await explained("SELECT o.id FROM pg.orders o JOIN my.customers c ON o.customer_id = c.id WHERE c.country = 'DE'");
  assert.equal(kind, 'shipped');
  assert.deepEqual(
    rows.map((r) => r.slice(0, 4)),
    [
      [1, 'my', 'source query', 'my.customers'],
      [2, 'pg', 'source statement', 'the whole statement, with the rows of step 1 as arrays'],
    ],
  );
  assert.match(
    String(rows[0]![4]),
    /^shipped to PostgreSQL: 500 rows \(estimate\) against 1000000 rows there; federated instead if more than 100000 rows load;/,
  );
  assert.match(String(rows[0]![4]), /shipped \d+ ms, dependent \d+ ms, parallel \d+ ms: shipped$/);
  assert.equal(rows[0]![5], "SELECT `id`, `country` FROM `none`.`customers` WHERE (`country` = 'DE')");
  assert.match(String(rows[1]![5]), /customer_id = ANY \(<the distinct id of step 1 as an array>\)/);
  assert.match(String(rows[1]![5]), /unnest\(<the columns of step 1 as arrays>\) AS shipped\("id", "country"\)/);
});

test('shipping decided before it runs: a small side estimated beyond maxShippedRows is not shipped, and EXPLAIN shows the plan that runs', async () => {
  const sql = "SELECT o.id FROM pg.orders o JOIN my.customers c ON o.customer_id = c.id WHERE c.country = 'DE'";
  // 500 rows estimated (the country's share of 100,000): shipped under a limit of 500, not under 499.
  assert.equal((await explained(sql, { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 500 } })).kind, 'shipped');
  const { kind, rows } = await explained(sql, { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 499 } });
  assert.equal(kind, 'federated');
  assert.ok(
    rows.every((row) => !String(row[5]).includes('unnest(')),
    JSON.stringify(rows),
  );
});

test('equivalences: a condition on one side of an equi-join is carried to the other side, its date arithmetic folded', async () => {
  const { kind, rows } = await explained(
    "SELECT o.id FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.id < 100 AND o.created < date '1994-01-01' + interval '3' month",
    { wholeStatements: false },
  );
  assert.equal(kind, 'federated');
  const sqlOf = (source: string) => String(rows.find((r) => r[1] === source)![5]);
  assert.equal(sqlOf('my'), 'SELECT `id` FROM `none`.`customers` WHERE (`id` < 100)');
  assert.equal(
    sqlOf('pg'),
    'COPY (SELECT "id", "customer_id", "created" FROM "public"."orders" WHERE ("created" < \'1994-04-01\'::date) AND ("customer_id" < 100)) TO STDOUT',
  );
  // Not into a table an outer join fills with NULLs.
  const outer = await explained('SELECT o.id FROM pg.orders o LEFT JOIN my.customers c ON c.id = o.customer_id WHERE o.customer_id < 100', {
    wholeStatements: false,
  });
  assert.equal(String(outer.rows.find((r) => r[1] === 'my')![5]), 'SELECT `id` FROM `none`.`customers`');
});

test('dependent join: the bigger scan takes the keys of the smaller one', async () => {
  const { kind, rows } = await explained(
    "SELECT i.label, c.name FROM lite.items i JOIN my.customers c ON c.id = i.id WHERE i.label LIKE 'a%'",
  );
  assert.equal(kind, 'federated');
  assert.deepEqual(rows[0], [
    1,
    'lite',
    'source query',
    'lite.items -> __vdb_rows_1',
    'conditions, columns, estimate 3 of 500 rows',
    'SELECT "id", "label" FROM "items" WHERE ("label" LIKE \'a%\')',
  ]);
  assert.deepEqual(rows[1]!.slice(0, 4), [2, 'my', 'source query', 'my.customers -> __vdb_rows_2']);
  assert.match(String(rows[1]![4]), /^columns, keys of lite\.items\.id \(dependent join, .*: dependent\), estimate 100000 rows$/);
  assert.equal(rows[2]![2], 'execute');
});

test("semi-joins: IN and EXISTS let the outer table take the keys of the subquery's table", async () => {
  for (const sql of [
    "SELECT o.id FROM pg.orders o WHERE o.customer_id IN (SELECT c.id FROM my.customers c WHERE c.country = 'DE')",
    "SELECT o.id FROM pg.orders o WHERE EXISTS (SELECT 1 FROM my.customers c WHERE c.id = o.customer_id AND c.country = 'DE')",
  ]) {
    const { rows } = await explained(sql, { wholeStatements: false });
    const orders = rows.find((r) => r[1] === 'pg')!;
    assert.match(String(orders[4]), /^columns, keys of my\.customers\.id \(dependent join/, sql);
  }
  const { rows } = await explained(
    "SELECT o.id FROM pg.orders o WHERE o.customer_id NOT IN (SELECT c.id FROM my.customers c WHERE c.country = 'DE')",
    { wholeStatements: false },
  );
  assert.doesNotMatch(String(rows.find((r) => r[1] === 'pg')![4]), /keys of/);
});

test('conditions: a prefix of a text column (substring, left) compared with constants goes to MySQL and PostgreSQL', async () => {
  const sourceSql = async (sql: string) => {
    const { rows } = await explained(sql, { wholeStatements: false });
    return String(rows[0]![5]);
  };
  // MySQL compares it under the column's collation (a superset): the engine applies it again.
  const my = await explained("SELECT id FROM my.customers WHERE substring(country FROM 1 FOR 1) IN ('D', 'F')", { wholeStatements: false });
  assert.equal(my.rows[0]![5], "SELECT `id`, `country` FROM `none`.`customers` WHERE (SUBSTRING(`country`, 1, 1) IN ('D', 'F'))");
  assert.match(String(my.rows.at(-1)![5]), /WHERE\s+substr\(country, /);
  assert.equal(
    await sourceSql("SELECT id FROM pg.customers WHERE left(name, 3) = 'Ann' AND substring(country, 2) = 'E'"),
    'COPY (SELECT "id", "name", "country" FROM "public"."customers" WHERE (substring("name" FROM 1 FOR 3) = \'Ann\') AND (substring("country" FROM 2) = \'E\')) TO STDOUT',
  );
  // Positions before the first character (counted otherwise by each source), counts not constant,
  // a column not declared as text (MySQL's date, a PostgreSQL column of unknown type): not pushed.
  for (const sql of [
    "SELECT id FROM my.customers WHERE substring(country FROM 0 FOR 2) = 'D'",
    "SELECT id FROM my.customers WHERE substring(country FROM 1 FOR id) = 'D'",
    "SELECT id FROM my.customers WHERE left(country, -1) = 'D'",
    "SELECT id FROM pg.orders WHERE substring(status FROM 1 FOR 1) = 'o'",
    "SELECT id FROM lite.items WHERE substring(label FROM 1 FOR 1) = 'x'",
  ])
    assert.doesNotMatch(await sourceSql(sql), /WHERE/, sql);
});

test('dependent join: a correlated subquery (also NOT EXISTS) takes the keys of the outer table it is correlated to; a table only EXISTS reads sends distinct rows', async () => {
  const options = { wholeStatements: false, dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 } };
  for (const sql of [
    "SELECT m.id FROM my.customers m WHERE m.country = 'DE' AND NOT EXISTS (SELECT * FROM pg.orders o WHERE o.customer_id = m.id)",
    "SELECT m.id, (SELECT max(o.amount) FROM pg.orders o WHERE m.id = o.customer_id AND o.status = 'open') FROM my.customers m WHERE m.country = 'DE'",
    // Columns named without their table: the subquery's own, or the outer table's where the subquery has none of that name.
    "SELECT m.id FROM my.customers m WHERE m.country = 'DE' AND NOT EXISTS (SELECT * FROM pg.orders WHERE customer_id = m.id)",
    'SELECT i.id FROM lite.items i WHERE NOT EXISTS (SELECT * FROM pg.orders o WHERE o.created = made)',
  ]) {
    const { rows } = await explained(sql, options);
    const orders = rows.find((r) => r[1] === 'pg')!;
    assert.match(String(orders[4]), /keys of (my\.customers\.id|lite\.items\.made) \(dependent join.*: dependent\)/, sql);
  }
  // Orders is read only by the NOT EXISTS: its distinct keys, each customer's key probed at PostgreSQL.
  const { rows: probed } = await explained(
    "SELECT m.id FROM my.customers m WHERE m.country = 'DE' AND NOT EXISTS (SELECT * FROM pg.orders o WHERE o.customer_id = m.id)",
    options,
  );
  const orders = probed.find((r) => r[1] === 'pg')!;
  assert.match(String(orders[4]), /^columns, distinct rows \(with keys: the keys that have a row, probed at the source\), keys of/);
  assert.equal(orders[5], 'COPY (SELECT "customer_id" FROM "public"."orders" GROUP BY "customer_id") TO STDOUT');
  // A subquery that counts its rows needs every one of them.
  const { rows: counted } = await explained(
    'SELECT m.id FROM my.customers m WHERE EXISTS (SELECT 1 FROM pg.orders o WHERE o.customer_id = m.id HAVING count(*) > 1)',
    options,
  );
  assert.doesNotMatch(String(counted.find((r) => r[1] === 'pg')![4]), /distinct rows/);
  // Correlated by an OR: a row of orders may be used without matching.
  const { rows } = await explained(
    "SELECT m.id FROM my.customers m WHERE m.country = 'DE' AND NOT EXISTS (SELECT * FROM pg.orders o WHERE o.customer_id = m.id OR o.status = 'x')",
    options,
  );
  assert.doesNotMatch(String(rows.find((r) => r[1] === 'pg')![4]), /keys of/);
});

test('a table named twice: one load, asked for the rows either reference may use', async () => {
  const { rows } = await explained(
    "SELECT a.id, b.id FROM my.customers a JOIN my.customers b ON a.name = b.name WHERE a.country = 'DE' AND b.country = 'FR'",
    { wholeStatements: false },
  );
  assert.equal(
    rows.find((r) => r[1] === 'my')![5],
    "SELECT `id`, `name`, `country` FROM `none`.`customers` WHERE ((`country` = 'DE')) OR ((`country` = 'FR'))",
  );
  // A reference without a condition of its own needs every row.
  const { rows: whole } = await explained(
    "SELECT a.id FROM my.customers a WHERE a.country = 'DE' AND a.id > (SELECT min(b.id) FROM my.customers b)",
    { wholeStatements: false },
  );
  assert.equal(whole.find((r) => r[1] === 'my')![5], 'SELECT `id`, `country` FROM `none`.`customers`');
});

test('join pushdown: tables of one source that join go to it as one query', async () => {
  const { kind, rows } = await explained(
    "SELECT o.id, c.name, m.name FROM pg.orders o JOIN pg.customers c ON c.id = o.customer_id JOIN my.customers m ON m.id = c.id WHERE o.status = 'open'",
    { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 } },
  );
  assert.equal(kind, 'federated');
  assert.deepEqual(rows[0], [
    1,
    'pg',
    'source query',
    'pg.orders + pg.customers -> __vdb_join_1',
    'join, conditions, columns, estimate 200000 rows',
    // The conditions it applies exactly stay there, with the columns only they read.
    'SELECT "o"."id", "c"."name", "c"."id" FROM "public"."orders" AS "o", "public"."customers" AS "c" WHERE ("o"."status" = \'open\') AND ("c"."id" = "o"."customer_id")',
  ]);
  assert.doesNotMatch(String(rows.at(-1)![5]), /status/);
  assert.deepEqual(rows[1], [
    2,
    'my',
    'source query',
    'my.customers -> __vdb_rows_3',
    'columns, estimate 100000 rows',
    'SELECT `id`, `name` FROM `none`.`customers`',
  ]);
});

test('join pushdown: columns named without their table are qualified first, output names kept', async () => {
  const { kind, rows } = await explained(
    "SELECT status, amount AS country, label FROM pg.orders o JOIN pg.customers c ON c.id = customer_id JOIN lite.items i ON i.id = o.id WHERE c.country = 'DE' ORDER BY country",
    { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 } },
  );
  assert.equal(kind, 'federated');
  const joined = rows.find((r) => r[3] === 'pg.orders + pg.customers -> __vdb_join_1');
  assert.equal(
    joined?.[5],
    'SELECT "o"."status", "o"."amount", "o"."id" FROM "public"."orders" AS "o", "public"."customers" AS "c" WHERE ("c"."country" = \'DE\') AND ("c"."id" = "o"."customer_id")',
  );
  // ORDER BY country is the output column (amount), as in PostgreSQL: left as written.
  assert.match(String(rows.at(-1)![5]), /ORDER BY\s+country$/);
  assert.match(String(rows.at(-1)![5]), /__vdb_join_1\.o__status AS status/);
});

test('dependent join: a table named twice takes the keys every reference joins it by', async () => {
  const options = { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 } };
  const same = await explained(
    "SELECT o.id FROM pg.orders o JOIN lite.items i ON i.id = o.customer_id WHERE o.id > (SELECT min(o2.id) FROM pg.orders o2 JOIN lite.items i2 ON i2.id = o2.customer_id WHERE i2.label = 'x')",
    options,
  );
  assert.match(String(same.rows.find((r) => r[3] === 'pg.orders -> __vdb_rows_1')![4]), /keys of lite\.items\.id \(dependent join/);
  // The second reference joins by another column: a row it uses may match no key of the first's.
  const other = await explained(
    'SELECT o.id FROM pg.orders o JOIN lite.items i ON i.id = o.customer_id WHERE o.id > (SELECT min(o2.id) FROM pg.orders o2 JOIN lite.items i2 ON i2.id = o2.id)',
    options,
  );
  assert.doesNotMatch(String(other.rows.find((r) => r[3] === 'pg.orders -> __vdb_rows_1')![4]), /keys of/);
});

test('dependent join: a scan narrowed by keys hands on its narrowed estimate to the scans that take its keys', async () => {
  const { rows } = await explained(
    'SELECT o.id, m.name FROM lite.items i JOIN my.customers m ON m.id = i.id JOIN pg.orders o ON o.customer_id = m.id',
    {
      dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 },
    },
  );
  // customers (100,000 rows) takes the 500 keys of items: orders expects 500 keys, not 100,000.
  assert.match(
    String(rows.find((r) => r[3] === 'pg.orders -> __vdb_rows_3')![4]),
    /keys of my\.customers\.id .*estimates: 500 rows and 500 keys .*: dependent\)/,
  );
});

test("dependent join: a join at a source hands its result's keys on where the estimates choose them", async () => {
  const { rows } = await explained(
    "SELECT o.id, m.name FROM pg.orders o JOIN pg.customers c ON c.id = o.customer_id JOIN my.customers m ON m.id = c.id WHERE o.status = 'open' AND o.created >= DATE '2025-01-01'",
    { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 } },
  );
  assert.equal(rows[0]![3], 'pg.orders + pg.customers -> __vdb_join_1', JSON.stringify(rows));
  assert.match(
    String(rows.find((r) => r[1] === 'my')![4]),
    /^columns, keys of pg\.customers\.id \(joined at pg\) \(dependent join, .*estimates: 6667 rows and 6667 keys against 100000 rows .*: dependent\), estimate 100000 rows$/,
  );
});

test('join pushdown: an IN subquery over the same PostgreSQL source runs inside its join; a correlated one stays in the engine', async () => {
  const options = { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 } };
  const inside = await explained(
    "SELECT o.id, m.name FROM pg.orders o JOIN pg.customers c ON c.id = o.customer_id JOIN my.customers m ON m.id = c.id WHERE o.status = 'open' AND o.customer_id IN (SELECT c2.id FROM pg.customers c2 WHERE c2.country = 'DE')",
    options,
  );
  const joined = inside.rows.find((r) => r[3] === 'pg.orders + pg.customers -> __vdb_join_1')!;
  assert.match(
    String(joined[5]),
    /AND \("o"\."customer_id" IN \(SELECT c2\.id\s+FROM public\.customers AS c2\s+WHERE\s+c2\.country = 'DE'\)\)$/,
  );
  // A third of the joined rows: the subquery's estimate.
  assert.equal(joined[4], 'join, conditions, columns, estimate 66667 rows');
  assert.doesNotMatch(String(inside.rows.at(-1)![5]), /IN \(SELECT/);
  const correlated = await explained(
    "SELECT o.id, m.name FROM pg.orders o JOIN pg.customers c ON c.id = o.customer_id JOIN my.customers m ON m.id = c.id WHERE o.status = 'open' AND o.customer_id IN (SELECT c2.id FROM pg.customers c2 WHERE c2.name = o.status)",
    options,
  );
  assert.ok(correlated.rows.every((r) => !String(r[3]).includes('__vdb_join')));
  assert.match(String(correlated.rows.at(-1)![5]), /IN \(SELECT c2\.id/);
});

test('conditions: an OR over two tables narrows each table that every alternative names', async () => {
  const { rows } = await explained(
    "SELECT o.id FROM pg.orders o JOIN lite.items i ON i.id = o.customer_id WHERE (o.status = 'a' AND i.label = 'x') OR (o.status = 'b' AND i.label = 'y')",
    { dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 } },
  );
  assert.match(
    String(rows.find((r) => r[3] === 'lite.items -> __vdb_rows_2')![5]),
    /WHERE \(\("label" COLLATE BINARY = 'x'\) OR \("label" COLLATE BINARY = 'y'\)\)$/,
  );
  assert.match(String(rows.find((r) => r[3] === 'pg.orders -> __vdb_rows_1')![5]), /WHERE \(\("status" = 'a'\) OR \("status" = 'b'\)\)/);
  // The engine still applies the whole OR.
  assert.match(String(rows.at(-1)![5]), /\(o\.status = 'a'\s+AND i\.label = 'x'\)\s+OR \(o\.status = 'b'\s+AND i\.label = 'y'\)/);
});

test('partial aggregation: the bigger source groups by the join key', async () => {
  const { rows } = await explained(
    'SELECT m.country, sum(o.amount) FROM pg.orders o JOIN my.customers m ON m.id = o.customer_id GROUP BY m.country',
    {
      dependentJoin: { maxKeys: 100_000, batchSize: 50_000, maxShippedRows: 0 },
    },
  );
  const pg = rows.find((r) => r[1] === 'pg')!;
  assert.match(String(pg[4]), /^columns, partial aggregation, /);
  assert.equal(pg[5], 'COPY (SELECT "customer_id", sum("amount") FROM "public"."orders" GROUP BY "customer_id") TO STDOUT');
  assert.equal(
    rows.at(-1)![5],
    'SELECT\n  m.country,\n  sum(o.__agg_0) AS sum\nFROM __vdb_rows_1 AS o\nJOIN __vdb_rows_2 AS m ON m.id = o.customer_id\nGROUP BY\n  m.country',
  );
});

test('pushdown off: no whole statement, no conditions at the source; the engine does the rest', async () => {
  assert.deepEqual(await explained("SELECT id, name FROM pg.customers WHERE country = 'DE'", { pushdown: false }), {
    kind: 'federated',
    rows: [
      [
        1,
        'pg',
        'source query',
        'pg.customers -> __vdb_rows_1',
        'estimate 100000 rows',
        'COPY (SELECT "id", "name", "country" FROM "public"."customers") TO STDOUT',
      ],
      [
        2,
        'vdb engine',
        'execute',
        'statement over the source results',
        null,
        "SELECT\n  id,\n  name\nFROM __vdb_rows_1 AS customers\nWHERE\n  country = 'DE'",
      ],
    ],
  });
});

test('whole statements off: the same statement runs federated, its condition pushed', async () => {
  const { kind, rows } = await explained("SELECT id, name FROM pg.customers WHERE country = 'DE'", { wholeStatements: false });
  assert.equal(kind, 'federated');
  assert.deepEqual(rows[0]!.slice(0, 5), [
    1,
    'pg',
    'source query',
    'pg.customers -> __vdb_rows_1',
    'conditions, estimate 500 of 100000 rows',
  ]);
});
