/**
 * The same answer whatever the plan: every query of the corpus runs with pushdown on and off over
 * the same PostgreSQL, MariaDB and SQLite data, and the answers must be identical: column names,
 * types and the JSON text of every value (1.5 and 1.50 differ). Over PostgreSQL the answer must
 * also be PostgreSQL's own. A plan may refuse what the engine cannot answer as PostgreSQL does
 * (a 400 saying it is not supported); it may never answer otherwise.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { UserDef } from '../../src/catalog/types.js';
import { columnTypeName } from '../../src/results/json.js';
import { loadConfig } from '../../src/config.js';
import { Engine } from '../../src/engine/engine.js';
import { createServices, type Services } from '../../src/services.js';
import type pg from 'pg';
import { pgClient } from '../connectors/db.js';
import { sameType } from '../engine/postgres-answers.js';
import { addFixtureSources, createFixture, type Fixture } from './fixtures.js';
import { CROSS_SOURCE, PER_SOURCE, SOURCES } from './corpus.js';

let services: Services;
let fixture: Fixture;
let dataDir: string;
let pushed: Engine;
let local: Engine;
let scansOnly: Engine;
let admin: UserDef;
let postgres: pg.Client;
let pgTypes: Map<number, string>;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-diff-'));
  // Files of sources live in the default file root, never in the data directory itself.
  const fileRoot = path.join(dataDir, 'files');
  fs.mkdirSync(fileRoot);
  fixture = await createFixture(fileRoot);
  services = await createServices(loadConfig({}, { dataDir, adminPassword: 'diff-test-pw', demo: false }), pino({ level: 'silent' }));
  const { registry, runtime } = services;
  await addFixtureSources(services, fixture, { lite: true, files: true });
  // Tiny key batches, so that dependent joins run in several statements here.
  pushed = new Engine(registry, runtime, 'vdb', { pushdown: true, dependentJoin: { maxKeys: 1000, batchSize: 3 } });
  local = new Engine(registry, runtime, 'vdb', { pushdown: false, dependentJoin: { maxKeys: 1000, batchSize: 3 } });
  scansOnly = new Engine(registry, runtime, 'vdb', {
    pushdown: true,
    wholeStatements: false,
    dependentJoin: { maxKeys: 1000, batchSize: 3 },
  });
  admin = services.users.find('admin')!;
  postgres = await pgClient();
  await postgres.query("SET TimeZone = 'UTC'");
  const types = await postgres.query<{ oid: number; name: string }>('SELECT oid::int AS oid, typname AS name FROM pg_type');
  pgTypes = new Map(types.rows.map((r) => [r.oid, r.name]));
});

after(async () => {
  await postgres?.end();
  await services?.close();
  await fixture?.cleanup();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Numbers in canonical form, only to compare one source with another: they hold the same rows in
 * their own types (SQLite's amounts are doubles: 1.5 where PostgreSQL's numeric(12,2) is 1.50).
 */
const canonicalNumbers = (json: string) =>
  json.replace(/([[,:])(-?\d+)\.(\d+)(?=[\],}])/g, (_, before: string, int: string, frac: string) => {
    const trimmed = frac.replace(/0+$/, '');
    return `${before}${int}${trimmed ? `.${trimmed}` : ''}`;
  });

interface Rows {
  json: string;
  sourceSql: string[];
  names: string;
  types: string[];
}

async function rows(engine: Engine, sql: string): Promise<Rows> {
  const execution = await engine.open(sql, admin, new AbortController().signal);
  try {
    const parts: string[] = [];
    try {
      for await (const part of execution.stream('array', {}, {})) parts.push(part);
    } catch (err) {
      // As the HTTP layer does: errors met while reading become API errors.
      throw execution.translateError(err);
    }
    return {
      json: `[${parts.join(',')}]`,
      sourceSql: execution.sourceQueries.map((q) => q.sql),
      names: execution.columns.map((c) => c.name).join(','),
      // As the SQL-Column-Types header names them.
      types: execution.columns.map((c) => columnTypeName(c.type)),
    };
  } finally {
    execution.close();
  }
}

/** The rows, or the refusal of a plan that cannot answer as PostgreSQL does (a 400 saying so). */
async function answer(engine: Engine, sql: string): Promise<Rows | { refused: string }> {
  try {
    return await rows(engine, sql);
  } catch (err) {
    const { status, message } = err as Error & { status?: number };
    if (status === 400 && /not (supported|available)/i.test(message)) return { refused: message };
    throw err;
  }
}

/** PostgreSQL's own answer, as vdb's JSON writes it: names, type names and the rows' JSON text. */
async function postgresAnswer(sql: string): Promise<{ json: string; names: string; types: string[] }> {
  const plain = await postgres.query({ text: sql, rowMode: 'array' });
  const names = plain.fields.map((f) => f.name);
  const types = plain.fields.map((f) => pgTypes.get(f.dataTypeID) ?? String(f.dataTypeID));
  const aliases = names.map((_, i) => `c${i}`);
  const json = await postgres.query({
    text: `SELECT ${aliases.map((a) => `to_json(q.${a})::text`).join(', ')} FROM (${sql}) AS q(${aliases.join(', ')})`,
    rowMode: 'array',
  });
  const rowsText = json.rows.map((row: Array<string | null>) => `[${row.map((v) => v ?? 'null').join(',')}]`);
  return { json: `[${rowsText.join(',')}]`, names: names.join(','), types };
}

/**
 * Statements whose column types still depend on the plan (the values and their JSON text do not).
 * Sent whole to PostgreSQL, a numeric without declared scale takes the engine's type for the
 * statement where it is a DECIMAL (source-execution.ts, describeWhole); a quotient of numeric
 * values is NUMERIC in the engine (a scale per value, engine/exec/numeric-values.ts) and stays
 * DECIMAL(38,10) whole. A statement listed here fails the test once its types agree.
 */
const ROUTE_DEPENDENT_TYPES = new Set<string>([]);

/** The answers of both plans are the same, exactly; either may be a refusal, never another answer. */
function assertSameAnswer(sql: string, a: Rows | { refused: string }, b: Rows | { refused: string }): void {
  if ('refused' in a || 'refused' in b) return;
  assert.equal(a.json, b.json, `pushed SQL: ${a.sourceSql.join(' | ')}`);
  assert.equal(a.names, b.names, 'column names');
  const sameTypes = JSON.stringify(a.types) === JSON.stringify(b.types);
  if (ROUTE_DEPENDENT_TYPES.has(sql))
    assert.ok(!sameTypes, 'the types no longer depend on the plan: remove the statement from ROUTE_DEPENDENT_TYPES');
  else assert.deepEqual(a.types, b.types, 'column types');
}

describe('pushdown gives the same answer as local evaluation, and over PostgreSQL its own', () => {
  for (const template of PER_SOURCE) {
    for (const source of SOURCES) {
      const sql = template.replaceAll('{s}', source);
      test(sql, async () => {
        const a = await answer(pushed, sql);
        const b = await answer(local, sql);
        assertSameAnswer(sql, a, b);
        if (source !== 'pg') return;
        const expected = await postgresAnswer(template.replaceAll('{s}', fixture.pgSchema));
        for (const plan of [a, b]) {
          if ('refused' in plan) continue;
          assert.equal(plan.json, expected.json, `PostgreSQL's answer; pushed SQL: ${plan.sourceSql.join(' | ')}`);
          assert.equal(plan.names, expected.names, "PostgreSQL's column names");
          if (ROUTE_DEPENDENT_TYPES.has(sql)) continue;
          const wrong = expected.types.filter((t, i) => !sameType(t, plan.types[i] ?? ''));
          assert.deepEqual(wrong, [], `PostgreSQL's types ${expected.types.join(',')}, vdb's ${plan.types.join(',')}`);
        }
      });
    }
  }
  for (const sql of CROSS_SOURCE) {
    test(sql, async () => {
      assertSameAnswer(sql, await answer(pushed, sql), await answer(local, sql));
    });
  }
});

test('the same query gives the same rows on every source (each in its own types)', async () => {
  for (const template of PER_SOURCE) {
    const answers = await Promise.all(
      SOURCES.map(async (s) => {
        const result = await answer(pushed, template.replaceAll('{s}', s));
        return 'refused' in result ? 'refused' : canonicalNumbers(result.json);
      }),
    );
    if (answers.includes('refused')) continue;
    assert.equal(answers[1], answers[0], `${template}: my differs from pg`);
    assert.equal(answers[2], answers[0], `${template}: lite differs from pg`);
  }
});

test('LIKE ... ESCAPE reaches the sources only where the escape character plays no part', async () => {
  for (const source of ['pg', 'my', 'lite']) {
    const plain = await rows(pushed, `SELECT id FROM ${source}.customers WHERE name LIKE 'a%' ESCAPE '#' ORDER BY id`);
    assert.match(plain.sourceSql.join(' | '), /LIKE/, `${source}: ${plain.sourceSql.join(' | ')}`);
    const escaped = await rows(pushed, `SELECT id FROM ${source}.customers WHERE name LIKE 'a#_%' ESCAPE '#' ORDER BY id`);
    assert.doesNotMatch(escaped.sourceSql.join(' | '), /LIKE|GLOB/, `${source}: ${escaped.sourceSql.join(' | ')}`);
    const similar = await rows(pushed, `SELECT id FROM ${source}.customers WHERE name SIMILAR TO 'a%' ORDER BY id`);
    assert.doesNotMatch(similar.sourceSql.join(' | '), /SIMILAR|LIKE|GLOB/, `${source}: ${similar.sourceSql.join(' | ')}`);
  }
});

test('a dependent join sends the keys of the smaller side to the other source', async () => {
  const sql = "SELECT c.name, o.id FROM my.customers c JOIN pg.orders o ON o.customer_id = c.id WHERE c.segment = 'smb' ORDER BY o.id";
  const a = await rows(pushed, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  const pgScan = a.sourceSql.find((q) => q.startsWith('COPY')) ?? '';
  assert.match(pgScan, /"customer_id" IN \(2, 7\)/, pgScan);
  // No key at all: the other side is not even asked for rows.
  const none = await rows(pushed, "SELECT o.id FROM my.customers c JOIN pg.orders o ON o.customer_id = c.id WHERE c.segment = 'nobody'");
  assert.equal(none.json, '[]');
  assert.match(none.sourceSql.find((q) => q.startsWith('COPY')) ?? '', /1 = 0/);
});

test('LIMIT and its ORDER BY reach MySQL and SQLite scans, NULLs placed as the engine places them', async () => {
  const my = await rows(scansOnly, 'SELECT id, amount FROM my.orders WHERE qty > 0 ORDER BY amount DESC, id LIMIT 2 OFFSET 1');
  assert.equal(
    my.json,
    (await rows(local, 'SELECT id, amount FROM my.orders WHERE qty > 0 ORDER BY amount DESC, id LIMIT 2 OFFSET 1')).json,
  );
  assert.match(my.sourceSql[0] ?? '', /ORDER BY \(`amount` IS NULL\) DESC, `amount` DESC, \(`id` IS NULL\) ASC, `id` ASC LIMIT 3$/);
  const lite = await rows(scansOnly, 'SELECT id FROM lite.customers ORDER BY name LIMIT 2');
  assert.match(lite.sourceSql[0] ?? '', /ORDER BY \("name" IS NULL\) ASC, "name" COLLATE BINARY ASC LIMIT 2$/);
  // A condition MySQL can only approximate keeps the limit in the engine.
  const loose = await rows(scansOnly, "SELECT id FROM my.customers WHERE name = 'alice' ORDER BY id LIMIT 1");
  assert.doesNotMatch(loose.sourceSql[0] ?? '', /LIMIT/);
  assert.equal(loose.json, '[[2]]');
});

test('a statement over one MySQL or SQLite source is sent whole where it means the same there', async () => {
  const mySql =
    'SELECT o.customer_id, count(*), sum(o.qty), max(o.amount) FROM my.orders o JOIN my.customers c ON c.id = o.customer_id WHERE o.qty > 0 GROUP BY o.customer_id ORDER BY o.customer_id LIMIT 5';
  const my = await rows(pushed, mySql);
  assert.equal(my.json, (await rows(local, mySql)).json);
  assert.equal(my.sourceSql.length, 1);
  assert.match(
    my.sourceSql[0]!,
    /^SELECT .* FROM `vdbt_\w+`\.`orders` AS `o` JOIN `vdbt_\w+`\.`customers` AS `c` ON .* GROUP BY `o`\.`customer_id` ORDER BY .* LIMIT 5$/,
  );
  // SQLite types values one by one: only text (which takes any value) is compared there.
  const liteSql =
    'SELECT c.country, count(*), count(c.segment) FROM lite.customers c LEFT JOIN lite.customers d ON d.name = c.name GROUP BY c.country ORDER BY c.country';
  const lite = await rows(pushed, liteSql);
  assert.equal(lite.json, (await rows(local, liteSql)).json);
  assert.match(lite.sourceSql[0] ?? '', /LEFT JOIN "customers" AS "d" ON .* GROUP BY "c"\."country"/);
  // Text compared loosely in MySQL: not sent whole, the engine decides.
  const loose = await rows(pushed, "SELECT count(*) FROM my.customers WHERE name = 'alice'");
  assert.equal(loose.json, '[[1]]');
  assert.doesNotMatch(loose.sourceSql[0] ?? '', /count/);
});

test("joins among one source's own tables go to it as one query", async () => {
  const sql =
    "SELECT c.name, o.id, l.country FROM pg.customers c JOIN pg.orders o ON o.customer_id = c.id JOIN lite.customers l ON l.id = c.id WHERE o.status = 'paid' ORDER BY 2";
  const a = await rows(pushed, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  const pgQuery = a.sourceSql.find((q) => q.includes('"orders"')) ?? '';
  assert.match(pgQuery, /FROM "vdbt_\w+"\."customers" AS "c", "vdbt_\w+"\."orders" AS "o" WHERE .*"o"\."customer_id" = "c"\."id"/, pgQuery);
  assert.equal(a.sourceSql.filter((q) => q.includes('vdbt_')).length, 1, 'one query for both PostgreSQL tables');
});

test('partial aggregation: the bigger side is grouped at its source by the join key', async () => {
  const sql =
    "SELECT c.country, count(*), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.segment = 'enterprise' AND o.created >= DATE '2025-01-01' GROUP BY c.country ORDER BY 1";
  const a = await rows(pushed, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  const pgScan = a.sourceSql.find((q) => q.startsWith('COPY')) ?? '';
  assert.match(
    pgScan,
    /SELECT "customer_id", count\(\*\), sum\("amount"\) FROM .* WHERE .*"created" >= '2025-01-01'::date.* GROUP BY "customer_id"/,
    pgScan,
  );
});

test('types shown as text read the same whether PostgreSQL or the engine writes them', async () => {
  const sql = 'SELECT id, c, ip, tz, arr, v FROM pg.oddtypes ORDER BY id';
  const a = await rows(pushed, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  assert.equal(a.json, '[[1,"ab   ","10.0.0.1","10:00:00+02","{1,2}","x"],[2,null,"10.1.0.0/16",null,"{}",null]]');
});

test('division by zero fails on both paths, as in PostgreSQL', async () => {
  for (const source of SOURCES) {
    for (const engine of [pushed, local]) {
      await assert.rejects(rows(engine, `SELECT id, qty / (qty - qty) FROM ${source}.orders`), (err: Error & { status?: number }) => {
        assert.equal(err.status, 400, `${source}: ${err.message}`);
        assert.match(err.message, /division by zero/);
        return true;
      });
    }
  }
});

test('text order in a locale-collated PostgreSQL column follows the engine, not the locale', async () => {
  for (const sql of [
    "SELECT id FROM pg.labels WHERE label < 'b' ORDER BY id",
    "SELECT id FROM pg.labels WHERE label BETWEEN 'B' AND 'a' ORDER BY id",
  ]) {
    const a = await rows(pushed, sql);
    const b = await rows(local, sql);
    assert.equal(a.json, b.json, `pushed SQL: ${a.sourceSql.join(' | ')}`);
    assert.match(a.sourceSql[0] ?? '', /COLLATE "C"/);
  }
});

test('both bounds of a range with date arithmetic reach the sources, as dates', async () => {
  const sql =
    "SELECT id FROM my.customers WHERE created >= DATE '2024-12-31' AND created < DATE '2024-12-31' + interval '1' month ORDER BY id";
  const a = await rows(scansOnly, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  assert.ok(
    a.sourceSql.some((q) => q.includes("`created` >= DATE '2024-12-31'") && q.includes("`created` < DATE '2025-01-31'")),
    a.sourceSql.join(' | '),
  );
});

test('a semi-join (IN, EXISTS) sends the outer table only the keys the subquery may match', async () => {
  const sql = "SELECT o.id FROM pg.orders o WHERE o.customer_id IN (SELECT c.id FROM my.customers c WHERE c.segment = 'smb') ORDER BY o.id";
  const a = await rows(scansOnly, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  assert.match(a.sourceSql.find((q) => q.startsWith('COPY')) ?? '', /"customer_id" IN \(2, 7\)/, a.sourceSql.join(' | '));
});

test('NOT EXISTS over another source: the subquery reads the distinct keys of the outer rows only', async () => {
  const sql =
    "SELECT c.id FROM my.customers c WHERE substring(c.name FROM 1 FOR 1) IN ('a', 'B') AND NOT EXISTS (SELECT * FROM pg.orders o WHERE o.customer_id = c.id) ORDER BY 1";
  const a = await rows(scansOnly, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  assert.ok(
    a.sourceSql.some((q) => q.includes("WHERE (SUBSTRING(`name`, 1, 1) IN ('a', 'B'))")),
    a.sourceSql.join(' | '),
  );
  // Which of the customers' keys have an order: a probe each, not every order's key.
  assert.match(
    a.sourceSql.find((q) => q.startsWith('COPY')) ?? '',
    /FROM unnest\('\{[\d,]+\}'::int8\[\]\) AS __vdb_probe\(key\) WHERE EXISTS \(SELECT FROM "\w+"\."orders" WHERE "customer_id" = __vdb_probe\.key\)/,
    a.sourceSql.join(' | '),
  );
  // Without keys to probe, the distinct rows of the columns the subquery uses.
  const semi = 'SELECT count(*) FROM lite.customers l WHERE l.id IN (SELECT o.customer_id FROM pg.orders o)';
  const b = await rows(scansOnly, semi);
  assert.equal(b.json, (await rows(local, semi)).json);
  assert.match(
    b.sourceSql.find((q) => q.startsWith('COPY')) ?? '',
    /SELECT "customer_id" FROM "\w+"\."orders" GROUP BY "customer_id"/,
    b.sourceSql.join(' | '),
  );
});

test("a join at one source hands its result's keys to another source's table", async () => {
  const sql =
    "SELECT m.name, o.id FROM pg.orders o JOIN pg.customers c ON c.id = o.customer_id JOIN my.customers m ON m.id = c.id WHERE o.status = 'paid' AND o.qty > 1 ORDER BY 2";
  const a = await rows(scansOnly, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  assert.ok(
    a.sourceSql.some((q) => / AS "o", .* AS "c" WHERE /.test(q)),
    a.sourceSql.join(' | '),
  );
  assert.match(a.sourceSql.find((q) => q.includes('`customers`')) ?? '', /WHERE \(`id` IN \([\d, ]+\)\)/, a.sourceSql.join(' | '));
});

test("a condition on one side of an equi-join reaches the other side's source too", async () => {
  const sql = 'SELECT o.id, c.name FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.id BETWEEN 2 AND 5 ORDER BY o.id';
  const a = await rows(scansOnly, sql);
  assert.equal(a.json, (await rows(local, sql)).json);
  assert.ok(
    a.sourceSql.some((q) => q.startsWith('COPY') && q.includes('("customer_id" >= 2 AND "customer_id" <= 5)')),
    a.sourceSql.join(' | '),
  );
});

test('pushdown actually happens: conditions and columns reach the sources', async () => {
  const crossSql = "SELECT p.id FROM pg.customers p JOIN lite.customers l ON l.id = p.id WHERE p.name = 'alice' AND p.score > 1";
  const pgScan = (await rows(pushed, crossSql)).sourceSql.find((q) => q.startsWith('COPY')) ?? '';
  assert.match(pgScan, /COPY \(SELECT "id", "name", "score" FROM .* WHERE \("name" = 'alice'\) AND \("score" > 1\)\) TO STDOUT/);
  const whole = (await rows(pushed, "SELECT id FROM pg.customers WHERE name = 'alice' AND score > 1")).sourceSql[0] ?? '';
  assert.match(
    whole,
    /FROM \(SELECT id\s+FROM vdbt_\w+\.customers AS customers\s+WHERE\s+name = 'alice'\s+AND score > 1\) AS q\(c0\)/,
    'a one-source statement goes whole',
  );
  const myScan = (await rows(pushed, "SELECT id FROM my.customers WHERE name = 'alice' AND name < 'b'")).sourceSql[0] ?? '';
  assert.match(myScan, /WHERE \(`name` = 'alice'\)$/, 'MySQL gets the equality (a superset), not the ordering');
  const off = (await rows(local, "SELECT id FROM pg.customers WHERE name = 'alice'")).sourceSql[0] ?? '';
  assert.doesNotMatch(off, /WHERE/);
});
