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
import { createFixture, type Fixture } from './fixtures.js';

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
  await registry.addSource({
    name: 'pg',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
    model: { 'importer.schemaPattern': fixture.pgSchema },
  });
  await registry.addSource({
    name: 'my',
    kind: 'mysql',
    connection: { host: '127.0.0.1', port: '3306', db: fixture.mysqlDatabase, 'user-name': 'root' },
  });
  await registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: fixture.sqliteFile } });
  await registry.addSource({ name: 'fs', kind: 'file', connection: { ParentDirectory: fixture.filesFolder } });
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

/** The corpus: each query over {s}, which is replaced by each source in turn. */
const PER_SOURCE = [
  "SELECT id FROM {s}.customers WHERE name = 'alice' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name = 'Bob' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name <> 'alice' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name < 'b' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name >= 'Bob' AND name < 'a' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name LIKE 'a%' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name LIKE '%b%' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name ILIKE 'ALI%' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name NOT LIKE 'A%' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name IN ('alice', 'bob') ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name NOT IN ('alice', 'bob') ORDER BY id",
  'SELECT id FROM {s}.customers WHERE country IS NULL ORDER BY id',
  'SELECT id FROM {s}.customers WHERE segment IS NOT NULL AND score > 5 ORDER BY id',
  "SELECT id FROM {s}.customers WHERE NOT (country = 'DE') ORDER BY id",
  "SELECT id FROM {s}.customers WHERE country = 'DE' OR score < 1 ORDER BY id",
  'SELECT id FROM {s}.customers WHERE score BETWEEN 0 AND 10.5 ORDER BY id',
  'SELECT id FROM {s}.customers WHERE score NOT BETWEEN 0 AND 10.5 ORDER BY id',
  "SELECT id FROM {s}.customers WHERE created >= DATE '2025-01-03' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE created = '2025-01-03'::date ORDER BY id",
  // Date arithmetic of constants, folded to dates for the sources (plan/date-folding.ts).
  "SELECT id FROM {s}.customers WHERE created >= DATE '2024-12-31' AND created < DATE '2024-12-31' + interval '1' month ORDER BY id",
  "SELECT id FROM {s}.customers WHERE created BETWEEN DATE '2025-03-30' - interval '3 months' AND DATE '2025-01-31' + interval '1 month' - interval '2 days' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE DATE '2024-06-30' + interval '6 months 1 day' <= created ORDER BY id",
  'SELECT id FROM {s}.customers WHERE created IS NULL ORDER BY id',
  'SELECT id, name FROM {s}.customers WHERE id IN (1, 3, 5) ORDER BY id',
  "SELECT count(*), sum(amount), min(created), max(status) FROM {s}.orders WHERE status = 'paid'",
  'SELECT status, count(*) FROM {s}.orders WHERE qty <> 1 GROUP BY status ORDER BY status NULLS FIRST',
  'SELECT id FROM {s}.orders WHERE amount > 50 AND amount <= 100 ORDER BY id',
  'SELECT id, amount / 2, qty / 2 FROM {s}.orders WHERE qty / 2 = 0 ORDER BY id',
  "SELECT c.name, o.id FROM {s}.customers c JOIN {s}.orders o ON o.customer_id = c.id AND o.status = 'paid' WHERE c.country = 'DE' ORDER BY o.id",
  'SELECT c.id, o.id FROM {s}.customers c LEFT JOIN {s}.orders o ON o.customer_id = c.id AND o.amount > 100 ORDER BY c.id, o.id',
  'SELECT c.id, o.id FROM {s}.customers c LEFT JOIN {s}.orders o ON o.customer_id = c.id WHERE o.amount > 100 OR o.id IS NULL ORDER BY c.id, o.id',
  "SELECT o.id FROM {s}.orders o RIGHT JOIN {s}.customers c ON c.id = o.customer_id AND c.segment = 'smb' ORDER BY o.id NULLS FIRST",
  "SELECT c.id FROM {s}.customers c WHERE c.score > 1 AND EXISTS (SELECT 1 FROM {s}.orders o WHERE o.customer_id = c.id AND o.status = 'new') ORDER BY c.id",
  "SELECT a.id, b.id FROM {s}.customers a JOIN {s}.customers b ON lower(a.name) = lower(b.name) AND a.id < b.id WHERE a.country = 'DE' ORDER BY 1, 2",
  "SELECT id FROM (SELECT id, name FROM {s}.customers WHERE segment = 'enterprise') x WHERE x.name LIKE '%e%' ORDER BY id",
  "SELECT name FROM {s}.customers WHERE name LIKE 'a\\_b%' ORDER BY 1",
  "SELECT id FROM {s}.customers WHERE name LIKE 'a%' ESCAPE '#' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name LIKE 'a#_%' ESCAPE '#' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name NOT ILIKE '%E' ESCAPE '' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name LIKE '%!%%' ESCAPE '!' OR name LIKE 'b%' ESCAPE '!' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name SIMILAR TO '(a|b)%' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE name NOT SIMILAR TO '%[aeiou]' ORDER BY id",
  "SELECT id FROM {s}.tags WHERE tag LIKE 'b%' ESCAPE 'b' ORDER BY id",
  'SELECT id FROM {s}.customers ORDER BY name, id LIMIT 3',
  'SELECT id FROM {s}.customers ORDER BY name DESC, id LIMIT 3 OFFSET 2',
  "SELECT id, amount FROM {s}.orders WHERE status = 'paid' ORDER BY amount DESC NULLS LAST, id LIMIT 5",
  'SELECT * FROM {s}.orders WHERE qty > 0 ORDER BY created, id LIMIT 4 OFFSET 3',
  'SELECT id, score FROM {s}.customers ORDER BY score NULLS FIRST, id LIMIT 4',
  'SELECT id, score FROM {s}.customers ORDER BY score DESC, id LIMIT 4',
  'SELECT id FROM {s}.customers ORDER BY 1 DESC LIMIT 2',
  'SELECT lower(name) FROM {s}.customers WHERE id > 2 ORDER BY id LIMIT 2',
  'SELECT count(*) FROM (SELECT id FROM {s}.orders ORDER BY id LIMIT 7) x',
  "SELECT id FROM {s}.tags WHERE tag <> 'b' ORDER BY id",
  "SELECT id FROM {s}.tags WHERE tag = 'b' ORDER BY id",
  "SELECT id FROM {s}.tags WHERE tag IN ('b', 'a') ORDER BY id",
  "SELECT id FROM {s}.tags WHERE tag < 'b' ORDER BY id",
  'SELECT id, tag FROM {s}.tags ORDER BY tag, id LIMIT 3',
  "SELECT id FROM {s}.tags WHERE tag ILIKE 'ä%' ORDER BY id",
  "SELECT id FROM {s}.tags WHERE tag ILIKE 'B%' ORDER BY id",
  "SELECT id FROM {s}.tags WHERE tag LIKE 'b%' ORDER BY id",
  'SELECT tag, count(*) FROM {s}.tags GROUP BY tag ORDER BY tag NULLS FIRST',
  'SELECT DISTINCT tag FROM {s}.tags ORDER BY tag',
  'SELECT min(tag), max(tag) FROM {s}.tags',
  'SELECT id, score AS created FROM {s}.customers ORDER BY created DESC NULLS LAST, id LIMIT 3',
  'SELECT c.id, sum(o.qty) AS qty FROM {s}.customers c JOIN {s}.orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY qty DESC, c.id LIMIT 3',
  'SELECT id, upper(name) AS name FROM {s}.customers ORDER BY name, id LIMIT 3',
  'SELECT segment, count(*), sum(score), min(name), max(created) FROM {s}.customers GROUP BY segment HAVING count(*) > 1 ORDER BY segment NULLS LAST',
  'SELECT DISTINCT country FROM {s}.customers ORDER BY country NULLS FIRST',
  "SELECT id, CASE WHEN score > 10 THEN 'high' WHEN score IS NULL THEN 'none' ELSE 'low' END, coalesce(segment, '-') FROM {s}.customers ORDER BY id",
  "SELECT id, lower(name), upper(name), length(name), substring(name, 2, 2), name || '!' FROM {s}.customers ORDER BY id",
  'SELECT id, row_number() OVER (PARTITION BY country ORDER BY id), sum(score) OVER (ORDER BY id) FROM {s}.customers ORDER BY id',
  'WITH big AS (SELECT customer_id, sum(amount) AS total FROM {s}.orders GROUP BY customer_id) SELECT c.name, b.total FROM big b JOIN {s}.customers c ON c.id = b.customer_id WHERE b.total > 100 ORDER BY 1',
  "SELECT id FROM {s}.customers WHERE country = 'DE' UNION SELECT customer_id FROM {s}.orders WHERE status = 'new' ORDER BY 1",
  'SELECT id FROM {s}.customers WHERE id NOT IN (SELECT customer_id FROM {s}.orders WHERE customer_id IS NOT NULL) ORDER BY 1',
  'SELECT count(*) FILTER (WHERE status IS NULL), count(DISTINCT status) FROM {s}.orders',
  "SELECT id, created + 1, created - DATE '2025-01-01' FROM {s}.customers WHERE created IS NOT NULL ORDER BY id",
  'SELECT id, round(amount, 1), abs(amount - 50), greatest(qty, 1), nullif(qty, 0) FROM {s}.orders ORDER BY id LIMIT 10',
  // Parts of text columns compared with constants (pushed to MySQL as a superset, to PostgreSQL exactly).
  "SELECT id FROM {s}.customers WHERE substring(name FROM 1 FOR 3) IN ('ali', 'Bob') ORDER BY id",
  "SELECT id FROM {s}.customers WHERE left(name, 2) = 'Zo' OR substring(name FROM 3 FOR 1) = 'ë' OR substring(name, 2) = 'oë' ORDER BY id",
  "SELECT id FROM {s}.customers WHERE NOT (substring(name, 1, 1) = 'a') AND substring(country FROM 1 FOR 1) < 'E' ORDER BY id",
];

const CROSS_SOURCE = [
  // A table named twice: its one load asked for the rows either reference may use (scans.ts loadFilter).
  "SELECT a.id, b.id FROM my.customers a JOIN my.customers b ON a.country = b.country WHERE a.segment = 'enterprise' AND b.segment = 'smb' ORDER BY 1, 2",
  "SELECT a.id, b.id FROM pg.orders a JOIN pg.orders b ON a.customer_id = b.customer_id JOIN my.customers c ON c.id = a.customer_id WHERE a.qty > 1 AND b.status = 'paid' ORDER BY 1, 2",
  'SELECT o.id FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE o.qty >= 2 AND o.amount > (SELECT avg(o2.amount) FROM pg.orders o2 WHERE o2.qty < 5) ORDER BY 1',
  'SELECT o.id FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE o.qty >= 2 AND o.amount > (SELECT avg(o2.amount) FROM pg.orders o2) ORDER BY 1',
  "SELECT l.id FROM lite.customers l WHERE l.score > 0 AND l.id IN (SELECT l2.id FROM lite.customers l2 WHERE l2.name LIKE 'a%') AND l.id IN (SELECT o.customer_id FROM pg.orders o) ORDER BY 1",
  // Semi-joins as key filters: the outer table depends on the subquery's load (plan/scans.ts noteSemiJoin).
  "SELECT o.id FROM pg.orders o WHERE o.customer_id IN (SELECT c.id FROM my.customers c WHERE c.segment = 'enterprise') ORDER BY o.id",
  'SELECT o.id FROM pg.orders o WHERE o.customer_id = ANY (SELECT l.id FROM lite.customers l WHERE l.score > 0) ORDER BY o.id',
  "SELECT c.name FROM my.customers c WHERE EXISTS (SELECT 1 FROM pg.orders o WHERE o.customer_id = c.id AND o.status = 'paid') ORDER BY 1",
  'SELECT c.id FROM my.customers c WHERE NOT EXISTS (SELECT 1 FROM pg.orders o WHERE o.customer_id = c.id) ORDER BY 1',
  'SELECT c.id FROM my.customers c WHERE EXISTS (SELECT * FROM pg.orders o WHERE o.customer_id = c.id) ORDER BY 1',
  "SELECT c.id FROM my.customers c WHERE EXISTS (SELECT o.*, o.status FROM pg.orders o WHERE o.customer_id = c.id AND o.status <> 'x') ORDER BY 1",
  "SELECT o.id FROM pg.orders o WHERE o.customer_id NOT IN (SELECT c.id FROM my.customers c WHERE c.segment = 'smb') ORDER BY o.id",
  'SELECT o.id FROM pg.orders o WHERE o.customer_id IN (SELECT c.id FROM my.customers c GROUP BY c.id HAVING count(*) > 0) OR o.qty > 3 ORDER BY o.id',
  'SELECT c.id FROM my.customers c WHERE c.created IN (SELECT o.created FROM pg.orders o) ORDER BY 1',
  // Correlated subqueries narrowed by the outer table's keys (scans.ts noteCorrelated); tables only
  // an EXISTS or IN reads asked for distinct rows (distinct-reads.ts), never for text MySQL groups by its collation.
  'SELECT c.id, (SELECT max(o.amount) FROM pg.orders o WHERE o.customer_id = c.id AND o.qty > 1) FROM my.customers c ORDER BY 1',
  "SELECT substring(c.name FROM 1 FOR 1) AS k, count(*) FROM my.customers c WHERE substring(c.name FROM 1 FOR 1) IN ('a', 'B', 'Z') AND NOT EXISTS (SELECT * FROM pg.orders WHERE customer_id = c.id AND status = 'paid') GROUP BY 1 ORDER BY 1",
  'SELECT c.id FROM lite.customers c WHERE c.id IN (SELECT o.customer_id FROM pg.orders o WHERE o.qty > 1) ORDER BY 1',
  'SELECT p.id FROM pg.customers p WHERE p.name IN (SELECT m.name FROM my.customers m) ORDER BY 1',
  'SELECT p.id FROM pg.customers p WHERE EXISTS (SELECT 1 FROM my.orders o WHERE o.customer_id = p.id AND o.status IN (SELECT t.tag FROM lite.tags t)) ORDER BY 1',
  // Conditions carried through equi-joins to the other side (plan/equivalences.ts).
  'SELECT o.id, c.name FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.id BETWEEN 2 AND 5 ORDER BY o.id',
  'SELECT o.id, c.name FROM pg.orders o, my.customers c, lite.customers l WHERE c.id = o.customer_id AND l.id = c.id AND l.id IN (1, 3, 7) ORDER BY o.id',
  "SELECT m.id, l.id FROM my.customers m JOIN lite.customers l ON l.name = m.name WHERE m.name = 'alice' ORDER BY 1, 2",
  "SELECT m.id, l.id FROM my.customers m JOIN lite.customers l ON l.name = m.name WHERE m.name >= 'Bob' ORDER BY 1, 2",
  'SELECT o.id, c.id FROM pg.orders o LEFT JOIN my.customers c ON c.id = o.customer_id WHERE o.customer_id < 4 ORDER BY 1, 2',
  'SELECT o.id, c.id FROM pg.orders o LEFT JOIN my.customers c ON c.id = o.customer_id AND c.id < 3 ORDER BY 1, 2',
  "SELECT o.id, c.id FROM my.orders o JOIN pg.customers c ON c.created = o.created WHERE o.created < DATE '2024-12-01' + interval '2 months' ORDER BY 1, 2",
  'SELECT c.name, o.id, f.segment FROM pg.customers c JOIN pg.orders o ON o.customer_id = c.id JOIN fs.customers f ON f.id = c.id ORDER BY 2',
  'SELECT r.tag, count(*) FROM my.tags r JOIN my.customers m ON m.id = r.id JOIN pg.customers p ON p.id = m.id GROUP BY r.tag ORDER BY 1 NULLS FIRST',
  'SELECT t.tag, sum(c.score) FROM pg.customers c JOIN my.tags t ON t.id = c.id GROUP BY t.tag ORDER BY 1 NULLS FIRST',
  // Joins among one source's own tables inside cross-source statements.
  "SELECT c.name, o.id, l.country FROM pg.customers c JOIN pg.orders o ON o.customer_id = c.id JOIN lite.customers l ON l.id = c.id WHERE o.status = 'paid' ORDER BY 2",
  'SELECT m.name, count(*), sum(o.amount) FROM my.customers m, my.orders o, pg.customers p WHERE o.customer_id = m.id AND p.id = m.id AND o.qty > 0 GROUP BY m.name ORDER BY 1',
  'SELECT l.name, o.amount FROM lite.customers l JOIN lite.orders o ON o.customer_id = l.id JOIN my.customers m ON m.name = l.name WHERE o.amount > 20 ORDER BY 1, 2',
  'SELECT a.id, b.id, f.name FROM pg.customers a JOIN pg.customers b ON b.country = a.country AND b.id <> a.id JOIN fs.customers f ON f.id = a.id ORDER BY 1, 2',
  // One statement over all four kinds of source.
  'SELECT p.id, m.name, l.country, f.segment, o.amount FROM pg.customers p JOIN my.customers m ON m.id = p.id JOIN lite.customers l ON l.id = m.id JOIN fs.customers f ON f.id = l.id LEFT JOIN my.orders o ON o.customer_id = f.id AND o.qty = 2 WHERE p.score > 0 AND f.country IS NOT NULL ORDER BY 1, 5',
  'SELECT f.country, count(*), sum(o.amount) FROM fs.customers f JOIN pg.orders o ON o.customer_id = f.id GROUP BY f.country ORDER BY 1 NULLS FIRST',
  "SELECT c.country, count(*), sum(o.amount), min(o.amount), max(o.created), count(o.status) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id WHERE c.segment = 'enterprise' AND o.created >= DATE '2025-03-01' GROUP BY c.country ORDER BY 1 NULLS FIRST",
  'SELECT c.segment, count(*), sum(o.qty) FROM my.orders o JOIN pg.customers c ON c.id = o.customer_id GROUP BY c.segment ORDER BY 1 NULLS LAST',
  "SELECT count(*), sum(o.amount) FROM pg.orders o JOIN lite.customers c ON c.id = o.customer_id WHERE c.country = 'XX'",
  'SELECT c.name, o.status, count(*) FROM pg.orders o JOIN lite.customers c ON c.id = o.customer_id GROUP BY c.name, o.status HAVING count(*) > 1 ORDER BY 1, 2 NULLS FIRST',
  "SELECT c.name, sum(o.amount) AS total FROM my.orders o, pg.customers c WHERE o.customer_id = c.id AND o.status = 'paid' GROUP BY c.name ORDER BY total DESC, 1",
  'SELECT c.country, max(c.name), sum(o.amount) FROM pg.orders o JOIN my.customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY 1 NULLS FIRST',
  "SELECT c.name, o.id, o.amount FROM lite.customers c JOIN pg.orders o ON o.customer_id = c.id WHERE c.country IN ('DE', 'de', 'US') ORDER BY o.id",
  "SELECT c.id, o.id FROM pg.customers c LEFT JOIN my.orders o ON o.customer_id = c.id AND o.status = 'paid' ORDER BY 1, 2",
  "SELECT c.id, o.id FROM my.orders o RIGHT JOIN lite.customers c ON c.id = o.customer_id WHERE c.segment = 'enterprise' ORDER BY 1, 2 NULLS FIRST",
  'SELECT a.name, b.name FROM pg.customers a JOIN my.customers b ON b.name = a.name JOIN lite.customers l ON l.name = b.name ORDER BY 1',
  'SELECT o.created, count(*) FROM my.orders o JOIN pg.customers c ON c.created = o.created GROUP BY o.created ORDER BY 1',
  "SELECT c.id, o.id FROM pg.customers c JOIN my.orders o ON o.customer_id = c.id WHERE c.name = 'alice' AND o.status = 'paid' ORDER BY 1, 2",
  "SELECT c.name, count(o.id) FROM my.customers c LEFT JOIN lite.orders o ON o.customer_id = c.id AND o.status = 'Paid' GROUP BY c.name ORDER BY c.name",
  "SELECT p.id FROM pg.customers p JOIN my.customers m ON m.name = p.name WHERE m.name <> 'alice' ORDER BY 1",
  "SELECT l.id FROM lite.customers l WHERE l.name IN (SELECT name FROM my.customers WHERE country = 'de') ORDER BY 1",
  "SELECT p.status, sum(p.amount) FROM pg.orders p JOIN lite.customers l ON l.id = p.customer_id JOIN my.customers m ON m.id = l.id WHERE m.segment = 'enterprise' AND p.created >= DATE '2025-03-01' GROUP BY p.status ORDER BY 1 NULLS LAST",
];

const SOURCES = ['pg', 'my', 'lite'];

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
