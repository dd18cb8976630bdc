/**
 * The PostgreSQL connector against the real PostgreSQL 15 on loopback: metadata import (types,
 * keys, statistics, schemas), exact values through the REST API, pushdown as seen in
 * Execution.sourceQueries, a source that is down or goes away, and cancellation on timeout.
 * Everything lives in this run's own schemas (vdbt_<random>), dropped at the end.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import type { SourceDef, TableDef } from '../../src/catalog/types.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, expectError, expectOkJson, expectOkText, pgClient, scanQueriesOf, uniqueTag, waitUntil } from './db.js';

const tag = uniqueTag();
const schemaB = `${tag}_b`;
const tmpDb = `${tag}_db`;
const pubTable = `${tag}_pub`;
const BIG_ROWS = 2_000_000;
const TEXT_1 = 'tab\there\nnew line\r\nback\\slash é 日本 😀 "quoted" \'single\'';

let admin: pg.Client;
let server: TestServer;
/** Source over schema `tag` alone (plain table names). */
let main: SourceDef;

const connection = (db = 'test') => ({ host: '127.0.0.1', port: '5432', db, 'user-name': 'postgres' });

const table = (source: SourceDef, name: string): TableDef => {
  const found = source.tables.find((t) => t.name === name);
  assert.ok(found, `table ${name} imported into ${source.name}; have ${source.tables.map((t) => t.name).join(', ')}`);
  return found;
};

const query = (sql: string, params = '') => server.request(`/rest/api/query${params}`, { body: { sql } });
const rows = async (sql: string, params = '') => expectOkJson<unknown[][]>(await query(sql, params), sql);

before(async () => {
  admin = await pgClient();
  await admin.query(`
    CREATE SCHEMA ${tag};
    CREATE SCHEMA ${schemaB};
    CREATE TABLE ${tag}.types (
      id integer PRIMARY KEY, s smallint, i integer, b bigint, n12 numeric(12,2), n numeric, r real,
      d double precision, flag boolean, t text, vc varchar(20), dt date, ts timestamp, tstz timestamptz,
      bin bytea, u uuid, j jsonb, arr int[], nn text NOT NULL DEFAULT 'x');
    INSERT INTO ${tag}.types VALUES
      (1, -32768, 2147483647, 9007199254740993, 1234567890.12, 12345678901234567890.123456789, 1.5, 0.1,
       true, $t$${TEXT_1}$t$, 'héllo', '2024-02-29', '2024-02-29 13:45:30.123456',
       '2024-02-29 13:45:30+02', '\\xdeadbeef00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
       '{"a": [1, 2.5, "x"], "b": null, "c": "日本"}', '{1,2,3}', 'y');
    INSERT INTO ${tag}.types (id) VALUES (2);
    INSERT INTO ${tag}.types (id, s, b, n12, r, d, flag, t, vc, bin) VALUES
      (3, 32767, -9223372036854775808, -0.01, -0.25, -1e300, false, '', '\\N', '\\x');
    INSERT INTO ${tag}.types (id, b, n12, t) VALUES (4, 9223372036854775807, 9999999999.99, 'x');
    CREATE VIEW ${tag}.types_v AS SELECT id, t FROM ${tag}.types;
    CREATE TABLE ${tag}.nan_t (id int, n numeric);
    INSERT INTO ${tag}.nan_t VALUES (1, 1.5), (2, 'NaN'), (3, NULL);
    CREATE TABLE ${tag}."Odd ""Name"" T" ("Col A" int, "we""ird" text, "select" text);
    INSERT INTO ${tag}."Odd ""Name"" T" VALUES (1, 'one', 's1'), (2, 'two', 's2');
    CREATE TABLE ${tag}.coll (id int, ci text COLLATE "en-x-icu");
    INSERT INTO ${tag}.coll VALUES (1, 'B'), (2, 'a'), (3, 'c');
    CREATE TABLE ${tag}.unanalyzed (id int);
    INSERT INTO ${tag}.unanalyzed VALUES (1), (2), (3);
    CREATE TABLE ${tag}.big AS SELECT g AS id, g % 100 AS k FROM generate_series(1, ${BIG_ROWS}) g;
    CREATE VIEW ${tag}.slow AS SELECT g AS id FROM generate_series(1, 200) g, LATERAL (SELECT pg_sleep(0.05 + g * 0)) s;
    CREATE TABLE ${schemaB}.other (x int PRIMARY KEY, y text);
    INSERT INTO ${schemaB}.other VALUES (1, 'b-one'), (2, 'b-two');
    CREATE TABLE public.${pubTable} (id int PRIMARY KEY, name text);
    INSERT INTO public.${pubTable} VALUES (7, 'seven');
    ANALYZE ${tag}.types; ANALYZE ${tag}.nan_t; ANALYZE ${tag}."Odd ""Name"" T";
    ANALYZE ${tag}.coll; ANALYZE ${tag}.big; ANALYZE ${schemaB}.other; ANALYZE public.${pubTable};`);
  server = await startTestServer();
  main = await server.services.registry.addSource({
    name: 'pg',
    kind: 'postgresql',
    connection: connection(),
    model: { 'importer.schemaPattern': tag },
  });
});

after(async () => {
  await server?.close();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE; DROP SCHEMA IF EXISTS ${schemaB} CASCADE;
      DROP TABLE IF EXISTS public.${pubTable}`);
    await admin.query(`DROP DATABASE IF EXISTS ${tmpDb} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
});

test('imports tables and views with their columns, engine types, nullability and primary keys', () => {
  const types = table(main, 'types');
  assert.equal(types.kind, 'Table');
  assert.equal(types.nameInSource, `"${tag}"."types"`);
  assert.deepEqual(
    types.columns.map((c) => [c.name, c.type, c.nullable, c.position]),
    [
      ['id', 'INTEGER', false, 1],
      ['s', 'SMALLINT', true, 2],
      ['i', 'INTEGER', true, 3],
      ['b', 'BIGINT', true, 4],
      ['n12', 'DECIMAL(12,2)', true, 5],
      ['n', 'DECIMAL(38,10)', true, 6],
      ['r', 'FLOAT', true, 7],
      ['d', 'DOUBLE', true, 8],
      ['flag', 'BOOLEAN', true, 9],
      ['t', 'VARCHAR', true, 10],
      ['vc', 'VARCHAR', true, 11],
      ['dt', 'DATE', true, 12],
      ['ts', 'TIMESTAMP', true, 13],
      ['tstz', 'TIMESTAMPTZ', true, 14],
      ['bin', 'BLOB', true, 15],
      ['u', 'UUID', true, 16],
      ['j', 'JSON', true, 17],
      ['arr', 'VARCHAR', true, 18],
      ['nn', 'VARCHAR', false, 19],
    ],
  );
  assert.deepEqual(types.primaryKey, ['id']);
  const view = table(main, 'types_v');
  assert.equal(view.kind, 'View');
  assert.deepEqual(
    view.columns.map((c) => [c.name, c.type]),
    [
      ['id', 'INTEGER'],
      ['t', 'VARCHAR'],
    ],
  );
  assert.deepEqual(view.primaryKey, []);
  const odd = table(main, 'Odd "Name" T');
  assert.deepEqual(
    odd.columns.map((c) => c.name),
    ['Col A', 'we"ird', 'select'],
  );
  // Only this run's schema: nothing of public or of the second schema.
  assert.ok(!main.tables.some((t) => t.name.includes(pubTable) || t.name.includes('other')));
});

test('cardinality comes from the statistics (reltuples), never from counting', async () => {
  const { rows: stats } = await admin.query<{ relname: string; reltuples: number }>(
    `SELECT c.relname, c.reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`,
    [tag],
  );
  const reltuples = new Map(stats.map((r) => [r.relname, Number(r.reltuples)]));
  assert.equal(table(main, 'types').cardinality, 4);
  assert.equal(table(main, 'types').cardinality, reltuples.get('types'));
  const big = table(main, 'big').cardinality;
  assert.ok(big !== null && Math.abs(big - BIG_ROWS) < BIG_ROWS * 0.05, `big estimate ${big}`);
  assert.equal(big, reltuples.get('big'));
  // Views have no statistics; a table never analyzed has none yet (and is not counted).
  assert.equal(table(main, 'types_v').cardinality, null);
  assert.equal(table(main, 'unanalyzed').cardinality, null);
  // The same estimates in SYS.Tables.
  const sys = await rows(
    `SELECT "Name", "Cardinality", "Type" FROM SYS.Tables WHERE "SchemaName" = 'pg' AND "Name" IN ('types', 'types_v', 'big') ORDER BY "Name"`,
  );
  assert.deepEqual(sys, [
    ['big', big, 'Table'],
    ['types', 4, 'Table'],
    ['types_v', null, 'View'],
  ]);
});

test('importer.schemaPattern: several schemas are imported as schema.table; without it, public', async () => {
  const both = await server.services.registry.addSource({
    name: 'pg_two',
    kind: 'postgresql',
    connection: connection(),
    model: { 'importer.schemaPattern': `${tag}|${schemaB}` },
  });
  try {
    const other = table(both, `${schemaB}.other`);
    assert.equal(other.nameInSource, `"${schemaB}"."other"`);
    assert.deepEqual(other.primaryKey, ['x']);
    assert.ok(
      both.tables.some((t) => t.name === `${tag}.types`),
      'the first schema too, qualified',
    );
    assert.deepEqual(await rows(`SELECT x, y FROM pg_two."${schemaB}.other" ORDER BY x`), [
      [1, 'b-one'],
      [2, 'b-two'],
    ]);
  } finally {
    await server.services.registry.removeSource('pg_two');
  }
  const pub = await server.services.registry.addSource({ name: 'pg_public', kind: 'postgresql', connection: connection() });
  try {
    const t = table(pub, pubTable);
    assert.deepEqual(t.primaryKey, ['id']);
    assert.equal(t.cardinality, 1);
    assert.ok(!pub.tables.some((x) => x.name.includes(tag + '.') || x.name === 'types'), 'only public');
    assert.deepEqual(await rows(`SELECT id, name FROM pg_public.${pubTable}`), [[7, 'seven']]);
  } finally {
    await server.services.registry.removeSource('pg_public');
  }
});

test('numbers, dates, timestamps, bytes and uuids arrive exact in the raw JSON text', async () => {
  const response = await query('SELECT id, s, i, b, n12, n, r, d, flag, dt, ts, tstz, bin, u, arr, nn FROM pg.types WHERE id = 1');
  const text = await expectOkText(response);
  assert.equal(response.headers.get('sql-warnings'), null, 'no warnings');
  const expected =
    String.raw`[[1,-32768,2147483647,9007199254740993,1234567890.12,12345678901234567890.123456789,1.5,0.1,true,` +
    String.raw`"2024-02-29","2024-02-29T13:45:30.123456","2024-02-29T11:45:30(\.0+)?(\+00|\+00:00|Z)","3q2\+7wA=",` +
    String.raw`"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","\{1,2,3\}","y"\]\]`;
  assert.match(text, new RegExp(`^${expected.replace(/\[/g, '\\[')}$`));
  // 64-bit extremes and small decimals.
  const extremes = await expectOkText(await query('SELECT id, s, b, n12, r, d, flag FROM pg.types WHERE id IN (3, 4) ORDER BY id'));
  assert.match(
    extremes,
    /^\[\[3,32767,-9223372036854775808,-0\.01,-0\.25,-1(\.0)?e\+?300,false\],\[4,null,9223372036854775807,9999999999\.99,null,null,null\]\]$/,
  );
});

test('text keeps tabs, newlines, backslashes, quotes and unicode; "" and the text \\N are not NULL', async () => {
  const got = await rows('SELECT id, t, vc, j FROM pg.types ORDER BY id');
  assert.deepEqual(got[0], [1, TEXT_1, 'héllo', { a: [1, 2.5, 'x'], b: null, c: '日本' }]);
  assert.deepEqual(got[1], [2, null, null, null]);
  assert.deepEqual(got[2], [3, '', '\\N', null]);
  assert.deepEqual(got[3], [4, 'x', null, null]);
  // The empty bytea is an empty string, not NULL.
  assert.deepEqual(await rows('SELECT bin FROM pg.types WHERE id IN (2, 3) ORDER BY id'), [[null], ['']]);
});

test('every column of a NULL row is JSON null', async () => {
  const text = await expectOkText(await query('SELECT * FROM pg.types WHERE id = 2'));
  assert.equal(text, `[[2,${Array(17).fill('null').join(',')},"x"]]`);
});

test("numeric NaN: PostgreSQL's answer on every route where the engine does not read it, else a 400", async () => {
  // PostgreSQL answers NaN itself when it runs the statement whole...
  assert.equal(await expectOkText(await query('SELECT id, n FROM pg.nan_t ORDER BY id')), '[[1,1.5],[2,"NaN"],[3,null]]');
  // ...the engine cannot hold it (random() keeps the statement from being sent whole): a 400
  // naming the column, never NULL.
  const refused = await query('SELECT id, n FROM pg.nan_t WHERE random() >= 0 ORDER BY id');
  assert.equal(refused.status, 400);
  assert.match(await refused.text(), /numeric NaN or Infinity \(column pg\.nan_t\.n\) is not supported/);
  // A NaN row that the statement leaves out does not matter, whether the condition reaches
  // PostgreSQL (pushdown on) or only the engine (pushdown off), and no warning is given.
  const local = await startTestServer({ pushdown: false });
  try {
    await local.services.registry.addSource({
      name: 'pg',
      kind: 'postgresql',
      connection: connection(),
      model: { 'importer.schemaPattern': tag },
    });
    for (const [name, target] of [
      ['pushdown on', server],
      ['pushdown off', local],
    ] as const) {
      for (const sql of [
        'SELECT id, n FROM pg.nan_t WHERE id <> 2 AND random() >= 0 ORDER BY id',
        'SELECT count(*), max(id) FROM pg.nan_t WHERE random() >= 0',
      ]) {
        const response = await target.request('/rest/api/query', { body: { sql } });
        const text = await expectOkText(response);
        // PostgreSQL's text (1.5) on every route: the load takes the scale of the values it reads.
        assert.equal(text, sql.startsWith('SELECT id') ? '[[1,1.5],[3,null]]' : '[[3,3]]', `${name}: ${sql}`);
        assert.equal(response.headers.get('sql-warnings'), null, `${name}: ${sql}`);
      }
      const sum = await target.request('/rest/api/query', { body: { sql: 'SELECT sum(n) FROM pg.nan_t WHERE random() >= 0' } });
      assert.equal(sum.status, 400, `${name}: a sum over the NaN is refused`);
      await sum.text();
    }
  } finally {
    await local.close();
  }
  // A table without such values has no header.
  const clean = await query('SELECT id FROM pg.nan_t WHERE id = 1 AND random() >= 0');
  await clean.text();
  assert.equal(clean.headers.get('sql-warnings'), null);
});

test('identifiers with quotes, spaces and keywords are quoted in what the source receives', async () => {
  const sql = `SELECT "we""ird", "select" FROM pg."Odd ""Name"" T" WHERE "Col A" = 2`;
  assert.deepEqual(await rows(sql), [['two', 's2']]);
  const [sent] = await scanQueriesOf(server.services, sql);
  assert.equal(sent?.source, 'pg');
  assert.equal(sent?.sql, `COPY (SELECT "Col A", "we""ird", "select" FROM "${tag}"."Odd ""Name"" T" WHERE ("Col A" = 2)) TO STDOUT`);
});

test('pushdown: a WHERE on a pg table becomes a WHERE in the COPY, and only used columns are read', async () => {
  const sql = `SELECT vc FROM pg.types WHERE i > 5 AND b = 9007199254740993 AND dt = DATE '2024-02-29'`;
  assert.deepEqual(await rows(sql), [['héllo']]);
  const [sent] = await scanQueriesOf(server.services, sql);
  assert.ok(sent, 'one source query');
  assert.match(sent.sql, /^COPY \(SELECT .* FROM "vdbt_[0-9a-f]+"\."types" WHERE .*\) TO STDOUT$/);
  assert.match(sent.sql, /\("i" > 5\)/);
  assert.match(sent.sql, /\("b" = 9007199254740993\)/);
  assert.match(sent.sql, /"dt" = '2024-02-29'::date/);
  const list = /^COPY \(SELECT (.*) FROM /.exec(sent.sql)?.[1] ?? '';
  assert.deepEqual(list.split(', ').sort(), ['"b"', '"dt"', '"i"', '"vc"']);
  // count(*) reads one column, no filter.
  const [count] = await scanQueriesOf(server.services, 'SELECT count(*) FROM pg.types');
  assert.equal(count?.sql, `COPY (SELECT "id" FROM "${tag}"."types") TO STDOUT`);
  assert.deepEqual(await rows('SELECT count(*) FROM pg.types'), [[4]]);
});

test('pushdown keeps answers: bytewise text order even when the pg column has a locale collation', async () => {
  // The engine compares text bytewise: 'B' < 'a'. The pg column sorts by en-x-icu: 'a' < 'B'.
  const sql = `SELECT id FROM pg.coll WHERE ci < 'a' ORDER BY id`;
  const [sent] = await scanQueriesOf(server.services, sql);
  assert.ok(sent);
  assert.deepEqual(await rows(sql), [[1]], `pushed: ${sent.sql}`);
});

test('a source that is down cannot be added: 503 naming the source, nothing kept', async () => {
  const attempt = server.services.registry.addSource({
    name: 'pg_down',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '1', db: 'test', 'user-name': 'postgres' },
  });
  await assert.rejects(attempt, (err) => assertApiError(err, 503, 'pg_down'));
  assert.equal(server.services.registry.findSource('pg_down'), undefined);
  const body = await expectError(await query('SELECT 1 FROM pg_down.x'), 400, 'unknown schema');
  assert.match(body.description, /pg_down/);
});

test('a source whose database goes away fails with 502/503 naming it, others keep working, and it recovers', async () => {
  await admin.query(`CREATE DATABASE ${tmpDb}`);
  const setup = async () => {
    const client = await pgClient(tmpDb);
    try {
      await client.query('CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, $$one$$); ANALYZE t');
    } finally {
      await client.end();
    }
  };
  await setup();
  await server.services.registry.addSource({ name: 'pg_tmp', kind: 'postgresql', connection: connection(tmpDb) });
  try {
    assert.deepEqual(await rows('SELECT id, v FROM pg_tmp.t'), [[1, 'one']]);
    await admin.query(`DROP DATABASE ${tmpDb} WITH (FORCE)`);
    const body = await expectError(await query('SELECT id, v FROM pg_tmp.t'), [502, 503], 'source gone');
    assert.match(body.description, /pg_tmp/);
    // Again (a fresh connection attempt this time): still an error naming the source.
    const again = await expectError(await query('SELECT count(*) FROM pg_tmp.t'), [502, 503], 'source still gone');
    assert.match(again.description, /pg_tmp/);
    // The schema stays; the other sources answer.
    assert.deepEqual(await rows(`SELECT count(*) FROM SYS.Tables WHERE "SchemaName" = 'pg_tmp'`), [[1]]);
    const shop = await rows('SELECT count(*) > 0 FROM shop.customers');
    assert.deepEqual(shop, [[true]]);
    assert.deepEqual(await rows('SELECT count(*) FROM pg.types'), [[4]]);
    // Back again: it works without any action.
    await admin.query(`CREATE DATABASE ${tmpDb}`);
    await setup();
    assert.deepEqual(await rows('SELECT id, v FROM pg_tmp.t'), [[1, 'one']]);
  } finally {
    await server.services.registry.removeSource('pg_tmp');
  }
});

/**
 * Statements of this run's COPY on `relation` that PostgreSQL is still running: the scans name it
 * quoted ("tag"."big"), whole statements as written (tag.big); both count.
 */
const activeCopies = async (relation: string) => {
  const { rows: found } = await admin.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity
      WHERE query LIKE 'COPY%' AND query ~ ('"?' || $1 || '"?\\."?' || $2 || '"?([^A-Za-z0-9_]|$)')
        AND state = 'active' AND pid <> pg_backend_pid()`,
    [tag, relation],
  );
  return Number(found[0]?.n);
};

test('timeout on a long scan: 504, and PostgreSQL stops the COPY', async () => {
  // A join of 2M rows with themselves: about a second at PostgreSQL, far beyond the timeout.
  const started = Date.now();
  const body = await expectError(await query('SELECT count(*) FROM pg.big a JOIN pg.big b ON b.id = a.id', '?timeout=50'), 504, 'timeout');
  assert.match(body.description, /50 ms/);
  assert.ok(Date.now() - started < 5000, 'answered promptly');
  assert.ok(await waitUntil(async () => (await activeCopies('big')) === 0, 3000), 'no COPY of big left running');
});

test('timeout while PostgreSQL is still computing: the backend is cancelled (pg_cancel_backend)', async () => {
  // slow takes 10 s at the source and sends nothing before; only a cancel ends it early.
  // The timeout leaves the COPY running long enough to be seen, even on a loaded machine.
  const pending = query('SELECT count(*) FROM pg.slow WHERE random() >= 0', '?timeout=2000');
  assert.ok(await waitUntil(async () => (await activeCopies('slow')) === 1, 2000, 25), 'the COPY of slow runs');
  const response = await pending;
  await response.text();
  assert.ok(response.status >= 400, `an error, got ${response.status}`);
  assert.ok(await waitUntil(async () => (await activeCopies('slow')) === 0, 2000), 'the COPY of slow was cancelled');
});

test('timeout of a statement PostgreSQL runs whole: its COPY is cancelled too', async () => {
  // No random() here: the whole statement goes to PostgreSQL, which names the view unquoted.
  const pending = query('SELECT count(*) FROM pg.slow', '?timeout=2000');
  assert.ok(await waitUntil(async () => (await activeCopies('slow')) === 1, 2000, 25), 'the whole statement runs at PostgreSQL');
  const response = await pending;
  await response.text();
  assert.equal(response.status, 504);
  assert.ok(await waitUntil(async () => (await activeCopies('slow')) === 0, 2000), 'and was cancelled there');
});

test('timeout while PostgreSQL is still computing answers 504, not 500', async () => {
  const body = await expectError(await query('SELECT count(*) FROM pg.slow WHERE random() >= 0', '?timeout=300'), 504, 'timeout');
  assert.match(body.description, /300 ms/);
  assert.ok(await waitUntil(async () => (await activeCopies('slow')) === 0, 2000));
});

test('a paginated result of many rows keeps its order (decimals loaded as text, several engine row groups)', async () => {
  // 400,000 rows are more than three of the engine's row groups (122,880 rows each).
  const sql = 'SELECT id, k::numeric(5,2) AS n FROM pg.big WHERE id <= 400000 ORDER BY id';
  for (let round = 0; round < 3; round++) {
    const first = await query(sql, '?pagination=true&limit=2');
    assert.equal(first.status, 200);
    assert.equal(await first.text(), '[[1,1.00],[2,2.00]]');
    const requestId = first.headers.get('requestid')!;
    const later = await server.request(`/rest/api/query?requestId=${requestId}&limit=2&offset=250000`, { method: 'GET' });
    assert.equal(await later.text(), '[[250001,1.00],[250002,2.00]]');
  }
});
