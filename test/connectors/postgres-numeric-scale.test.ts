/**
 * PostgreSQL numeric columns without a declared scale (issue 10): the same values, JSON text and
 * column types on every route: sent whole to PostgreSQL, federated with a SQLite table, with
 * pushdown off, paginated. The engine loads a column of one scale with that scale; values of
 * different scales, NaN and values beyond 38 digits are refused with a 400 where a statement
 * shows or computes with them, never written differently. Everything lives in this run's own
 * schema, dropped at the end.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { adminOf, pgClient, uniqueTag } from './db.js';

const tag = `${uniqueTag()}_scale`;
const HUGE = `1${'0'.repeat(40)}`;
let admin: pg.Client;
/** Pushdown on (whole statements, shipped and dependent joins) and off (the engine reads whole tables). */
const servers: Array<{ name: string; server: TestServer }> = [];

before(async () => {
  admin = await pgClient();
  await admin.query(`
    CREATE SCHEMA ${tag};
    CREATE TABLE ${tag}.money (id int PRIMARY KEY, amount numeric, price numeric);
    INSERT INTO ${tag}.money VALUES (1, 1.50, 2.125), (2, 2.25, 0.500), (3, 3.00, 10.000), (4, NULL, NULL), (5, -0.10, 1.000);
    CREATE TABLE ${tag}.mixed (id int PRIMARY KEY, n numeric);
    INSERT INTO ${tag}.mixed VALUES (1, 1.5), (2, 2.25), (3, 3), (4, NULL), (5, 2.50);
    CREATE TABLE ${tag}.whole (id int PRIMARY KEY, n numeric);
    INSERT INTO ${tag}.whole VALUES (1, 1), (2, 20), (3, -300);
    CREATE TABLE ${tag}.huge (id int PRIMARY KEY, n numeric);
    INSERT INTO ${tag}.huge VALUES (1, ${HUGE}), (2, 7.5);
    CREATE TABLE ${tag}.ids (id int PRIMARY KEY, label text);
    INSERT INTO ${tag}.ids VALUES (1, 'one'), (2, 'two'), (3, 'three'), (5, 'five');
    CREATE TABLE ${tag}.big AS SELECT g AS id, 'row_' || g AS label FROM generate_series(1, 20000) g;
    CREATE TABLE ${tag}.nan (id int PRIMARY KEY, n numeric);
    INSERT INTO ${tag}.nan VALUES (1, 1.5), (2, 'NaN');
    ANALYZE ${tag}.money; ANALYZE ${tag}.mixed; ANALYZE ${tag}.whole; ANALYZE ${tag}.huge; ANALYZE ${tag}.nan; ANALYZE ${tag}.ids; ANALYZE ${tag}.big;`);
  for (const [name, pushdown] of [
    ['pushdown on', true],
    ['pushdown off', false],
  ] as const) {
    const server = await startTestServer({ pushdown });
    servers.push({ name, server });
    // The SQLite file in the server's allowed file root.
    const file = path.join(server.dataDir, 'files', 'lite.db');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const lite = new Database(file);
    lite.exec(
      `CREATE TABLE ids (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO ids VALUES (1, 'one'), (2, 'two'), (3, 'three'), (5, 'five');`,
    );
    lite.close();
    await server.services.registry.addSource({
      name: 'pg',
      kind: 'postgresql',
      connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
      model: { 'importer.schemaPattern': tag },
    });
    await server.services.registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: file } });
    // A second source over the same schema: its small tables are shipped to the first as arrays.
    await server.services.registry.addSource({
      name: 'pg2',
      kind: 'postgresql',
      connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
      model: { 'importer.schemaPattern': tag },
    });
  }
});

after(async () => {
  for (const { server } of servers) await server.close();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  } finally {
    await admin.end();
  }
});

/** What the sources were asked for a statement (executed, closed unread). */
async function sourceQueries(server: TestServer, sql: string) {
  const { services } = server;
  const execution = await services.engine.open(sql, adminOf(services), new AbortController().signal);
  execution.close();
  return execution.sourceQueries;
}

interface Answer {
  status: number;
  text: string;
  types: string | null;
}

async function ask(server: TestServer, sql: string, params = ''): Promise<Answer> {
  const response = await server.request(`/rest/api/query${params}`, { body: { sql } });
  return { status: response.status, text: await response.text(), types: response.headers.get('sql-column-types') };
}

/** PostgreSQL's own rows of a statement as JSON arrays, spaces left out (the values hold none). */
async function postgresRows(sql: string): Promise<string> {
  const own = sql.replace(/\bpg\./g, `${tag}.`);
  const result = await admin.query(
    `SELECT coalesce(json_agg((SELECT json_agg(value) FROM json_each(row_to_json(q)))), '[]')::text AS j FROM (${own}) q`,
  );
  return String(result.rows[0].j).replace(/\s+/g, '');
}

/**
 * The routes of a statement over `{ids}`: the PostgreSQL table (sent whole with pushdown on),
 * the SQLite table (federated), and the PostgreSQL table with random() in the condition (the
 * engine evaluates it over scans); each on the server with pushdown on and off.
 */
function routes(sql: string): Array<{ route: string; server: TestServer; sql: string }> {
  const variants = [
    ['whole', sql.replace('{ids}', 'pg.ids')],
    ['federated', sql.replace('{ids}', 'lite.ids')],
    ['engine', sql.replace('{ids}', 'pg.ids').replace(/\bON\b/, 'ON random() >= 0 AND')],
  ];
  return servers.flatMap(({ name, server }) => variants.map(([route, text]) => ({ route: `${route}, ${name}`, server, sql: text! })));
}

/** Statements whose values, JSON text and column types are PostgreSQL's on every route. */
const SAME = [
  // One scale: as stored, and what add, subtract, multiply, sum, min and max make of it.
  'SELECT m.id, m.amount, m.price FROM pg.money m JOIN {ids} l ON l.id = m.id ORDER BY m.id',
  'SELECT m.amount + m.price, m.amount - m.price, m.amount * m.price, m.amount - 1, m.price * 3, -m.amount, abs(m.amount) FROM pg.money m JOIN {ids} l ON l.id = m.id ORDER BY m.id',
  'SELECT sum(m.amount), sum(m.price), min(m.amount), max(m.price), count(m.amount) FROM pg.money m JOIN {ids} l ON l.id = m.id',
  'SELECT l.label, sum(m.amount), max(m.price) FROM pg.money m JOIN {ids} l ON l.id = m.id GROUP BY l.label ORDER BY l.label',
  'SELECT m.amount, sum(m.price) OVER (ORDER BY m.id) FROM pg.money m JOIN {ids} l ON l.id = m.id ORDER BY m.id',
  'SELECT array_agg(m.amount ORDER BY m.id) FROM pg.money m JOIN {ids} l ON l.id = m.id',
  // Integers only: scale 0.
  'SELECT w.n, w.n * 2, w.n + 0.5, sum(w.n) OVER () FROM pg.whole w JOIN {ids} l ON l.id = w.id ORDER BY w.id',
  // Different scales, only compared, counted, ordered or cast to a scale.
  'SELECT m.id FROM pg.mixed m JOIN {ids} l ON l.id = m.id WHERE m.n > 2 ORDER BY m.n, m.id',
  'SELECT count(m.n), count(DISTINCT m.n) FROM pg.mixed m JOIN {ids} l ON l.id = m.id WHERE m.n BETWEEN 1 AND 3 AND m.n IS NOT NULL',
  'SELECT m.n::numeric(10,2), m.n::float8 FROM pg.mixed m JOIN {ids} l ON l.id = m.id ORDER BY m.id',
  'SELECT l.label FROM pg.mixed m JOIN {ids} l ON l.id = m.id AND m.n IN (1.5, 3) ORDER BY 1',
  // Different scales, but the rows read have one.
  'SELECT m.n FROM pg.mixed m JOIN {ids} l ON l.id = m.id WHERE m.id IN (2, 5) ORDER BY m.id',
  // Beyond 38 digits, where the statement does not read the value.
  'SELECT h.id FROM pg.huge h JOIN {ids} l ON l.id = h.id ORDER BY h.id',
  'SELECT h.n FROM pg.huge h JOIN {ids} l ON l.id = h.id WHERE h.id = 2',
  'SELECT x.n FROM pg.nan x JOIN {ids} l ON l.id = x.id WHERE x.id = 1',
];

test("numeric without scale: the same values, JSON text and types on every route, and PostgreSQL's own", async () => {
  for (const sql of SAME) {
    const expected = await postgresRows(sql.replace('{ids}', 'pg.ids'));
    let types: string | null = null;
    for (const route of routes(sql)) {
      const answer = await ask(route.server, route.sql);
      assert.equal(answer.status, 200, `${route.route}: ${route.sql}: ${answer.text}`);
      assert.equal(answer.text, expected, `${route.route}: ${route.sql}`);
      types ??= answer.types;
      assert.equal(answer.types, types, `${route.route}: ${route.sql}: column types`);
      // Paginated, the same (all rows on the first page).
      const page = await ask(route.server, route.sql, '?pagination=true&limit=100');
      assert.equal(page.status, 200, `${route.route} paginated: ${route.sql}: ${page.text}`);
      assert.equal(page.text, expected, `${route.route} paginated: ${route.sql}`);
      assert.equal(page.types, types, `${route.route} paginated: ${route.sql}: column types`);
    }
  }
});

test('numeric without scale: values of different scales, or beyond 38 digits, refused where the engine shows them', async () => {
  const refused: Array<[string, RegExp]> = [
    [
      'SELECT m.n FROM pg.mixed m JOIN {ids} l ON l.id = m.id ORDER BY m.id',
      /column pg\.mixed\.n holds values with 0 to 2 digits after the point.*n::numeric\(12,2\)/,
    ],
    // Summed at the source per join key (partial aggregation), the sums have different scales too.
    ['SELECT sum(m.n) FROM pg.mixed m JOIN {ids} l ON l.id = m.id', /column (sum\()?pg\.mixed\.n\)? holds values with 0 to 2 digits/],
    ['SELECT m.n + 1 FROM pg.mixed m JOIN {ids} l ON l.id = m.id WHERE m.n > 2', /pg\.mixed\.n holds values with 0 to 2 digits/],
    ['SELECT * FROM pg.mixed m JOIN {ids} l ON l.id = m.id', /pg\.mixed\.n holds values with 0 to 2 digits/],
    ['SELECT h.n FROM pg.huge h JOIN {ids} l ON l.id = h.id ORDER BY h.id', /column pg\.huge\.n has more than 38 digits/],
  ];
  for (const [sql, message] of refused) {
    // Sent whole, PostgreSQL answers it; where the engine computes it, a 400 naming the column.
    const whole = await ask(servers[0]!.server, sql.replace('{ids}', 'pg.ids'));
    assert.equal(whole.status, 200, `whole: ${sql}: ${whole.text}`);
    assert.equal(whole.text, await postgresRows(sql.replace('{ids}', 'pg.ids')), `whole: ${sql}`);
    for (const route of routes(sql).filter((r) => r.route !== 'whole, pushdown on')) {
      const answer = await ask(route.server, route.sql);
      assert.equal(answer.status, 400, `${route.route}: ${route.sql}: ${answer.text}`);
      const body = JSON.parse(answer.text) as { title: string; description: string };
      assert.equal(body.title, 'Invalid query');
      assert.match(body.description, message, `${route.route}: ${route.sql}`);
    }
  }
});

test('numeric without scale under a row condition: the scales of the rows the user may read decide', async () => {
  const call = async (server: TestServer, statement: string) => {
    const answer = await ask(server, statement);
    assert.equal(answer.status, 200, `${statement}: ${answer.text}`);
  };
  for (const { name, server } of servers) {
    for (const statement of [
      "CALL SYSADMIN.addUser('scale_rita', 'scale-rita-secret-1')",
      "CALL SYSADMIN.addUser('scale_sam', 'scale-sam-secret-1')",
      "CALL SYSADMIN.addRole('scale_two')",
      "CALL SYSADMIN.addRole('scale_mixed')",
      "CALL SYSADMIN.addUserRole('scale_two', 'scale_rita')",
      "CALL SYSADMIN.addUserRole('scale_mixed', 'scale_sam')",
      // rita reads the rows of scale 2 only (2.25, 2.50); sam rows of scales 1 and 2.
      "CALL SYSADMIN.setPermissions('scale_two', 'pg.mixed', 'R', 'id IN (2, 5)')",
      "CALL SYSADMIN.setPermissions('scale_mixed', 'pg.mixed', 'R', 'id IN (1, 2)')",
    ])
      await call(server, statement);
    const as = async (user: string, password: string, sql: string) => {
      const response = await server.request('/rest/api/query', { body: { sql }, headers: { authorization: server.basic(user, password) } });
      return { status: response.status, text: await response.text() };
    };
    for (const sql of ['SELECT id, n FROM pg.mixed ORDER BY id', 'SELECT id, n FROM pg.mixed WHERE random() >= 0 ORDER BY id']) {
      // The hidden rows' other scales neither show nor refuse anything.
      const rita = await as('scale_rita', 'scale-rita-secret-1', sql);
      assert.equal(rita.status, 200, `${name}: ${sql}: ${rita.text}`);
      assert.equal(rita.text, '[[2,2.25],[5,2.50]]', `${name}: ${sql}`);
      const sam = await as('scale_sam', 'scale-sam-secret-1', sql);
      if (sam.status === 200) assert.equal(sam.text, '[[1,1.5],[2,2.25]]', `${name}: ${sql}`);
      else {
        assert.equal(sam.status, 400, `${name}: ${sql}: ${sam.text}`);
        // What failed over narrowed data is withheld (security.md).
        assert.match(sam.text, /details are withheld/, `${name}: ${sql}`);
      }
    }
  }
});

test('numeric without scale in joins computed by PostgreSQL and in tables shipped to it', async () => {
  // A status, or one per server (pushdown on, off) where the routes may differ: refused, never another answer.
  const cases: Array<[string, number | readonly [number, number]]> = [
    // Joined at PostgreSQL (one source, the engine evaluates the rest).
    [
      'SELECT m.id, m.amount, m.price * 2, l.label FROM pg.money m JOIN pg.ids l ON l.id = m.id JOIN {ids} x ON x.id = m.id ORDER BY m.id',
      200,
    ],
    ['SELECT m.id, l.label FROM pg.mixed m JOIN pg.ids l ON l.id = m.id JOIN {ids} x ON x.id = m.id WHERE m.n > 2 ORDER BY m.id', 200],
    ['SELECT m.id, m.n FROM pg.mixed m JOIN pg.ids l ON l.id = m.id JOIN {ids} x ON x.id = m.id ORDER BY m.id', 400],
    // The small table of another source shipped to PostgreSQL as its own text, each value with its
    // scale (PostgreSQL's answer); without pushdown the engine refuses values of mixed scales.
    ['SELECT m.id, m.amount, m.price, b.label FROM pg2.money m JOIN pg.big b ON b.id = m.id ORDER BY m.id', 200],
    ['SELECT m.id, b.label FROM pg2.mixed m JOIN pg.big b ON b.id = m.id WHERE m.n > 2 ORDER BY m.id', 200],
    ['SELECT m.id, m.n FROM pg2.mixed m JOIN pg.big b ON b.id = m.id ORDER BY m.id', [200, 400]],
  ];
  // The routes taken, as the source queries show them (pushdown on).
  const grouped = await sourceQueries(servers[0]!.server, cases[0]![0].replace('{ids}', 'lite.ids'));
  assert.ok(
    grouped.some((q) => q.source === 'pg' && /"money" AS "m", .*"ids" AS "l"/.test(q.sql)),
    `the join goes to PostgreSQL as one query: ${JSON.stringify(grouped)}`,
  );
  const shipped = await sourceQueries(servers[0]!.server, cases[3]![0]);
  assert.ok(
    shipped.some((q) => q.source === 'pg' && /unnest\(/.test(q.sql)),
    `money shipped to pg as arrays: ${JSON.stringify(shipped)}`,
  );
  for (const [sql, statuses] of cases) {
    const expected = await postgresRows(sql.replace(/\bpg2\./g, 'pg.').replace('{ids}', 'pg.ids'));
    for (const [i, { name, server }] of servers.entries()) {
      const status = typeof statuses === 'number' ? statuses : statuses[i]!;
      const answer = await ask(server, sql.replace('{ids}', 'lite.ids'));
      assert.equal(answer.status, status, `${name}: ${sql}: ${answer.text}`);
      if (status === 200) assert.equal(answer.text, expected, `${name}: ${sql}`);
      else assert.match(answer.text, /column (pg2?\.mixed|m)\.n holds values with 0 to 2 digits after the point/, `${name}: ${sql}`);
    }
  }
});
