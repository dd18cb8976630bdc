/**
 * Statements learned once: the result columns of a whole statement at PostgreSQL are described
 * once per shape (constants' values aside), and a change to the catalog is seen by the next
 * request.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { BoundedCache, shapeOf } from '../../src/engine/tree/statement-cache.js';
import type { WholeStatementConnector } from '../../src/connectors/types.js';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let postgres: pg.Client;
let describes = 0;
/** Statements read through a prepared statement at PostgreSQL, and those too large for it. */
let prepared = 0;
let preparedTooLarge = 0;

before(async () => {
  await initParser();
  server = await startTestServer();
  postgres = await pgClient();
  await postgres.query('DROP TABLE IF EXISTS cache_items');
  await postgres.query("CREATE TABLE cache_items AS SELECT g AS id, 'item ' || g AS name FROM generate_series(1, 100) g");
  const added = await server.request('/rest/api/source', {
    body: {
      name: 'pgc',
      template: 'postgresql',
      translator: 'postgresql',
      connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
    },
  });
  assert.equal(added.status, 201, await added.text());
  // Counts the questions to PostgreSQL about a statement's columns.
  const connector = server.services.registry.connectorOf(server.services.registry.findSource('pgc')!) as WholeStatementConnector;
  const original = connector.describeStatement.bind(connector);
  connector.describeStatement = (sql: string) => {
    describes++;
    return original(sql);
  };
  const originalPrepared = connector.preparedStatementJson!.bind(connector);
  connector.preparedStatementJson = async (...args) => {
    prepared++;
    const rows = await originalPrepared(...args);
    if (rows === null) preparedTooLarge++;
    return rows;
  };
});
after(async () => {
  await postgres?.query('DROP TABLE IF EXISTS cache_items');
  await postgres?.end();
  await server?.close();
});

const rows = async (sql: string) => {
  const response = await server.request('/rest/api/query', { body: { sql } });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text) as unknown[][];
};

test('constants of another value share a shape; another kind of constant does not', () => {
  const shape = (sql: string) => shapeOf(parseStatement(sql));
  assert.equal(shape('SELECT * FROM t WHERE id = 1'), shape('SELECT  *  FROM t WHERE id = 42'));
  assert.notEqual(shape('SELECT * FROM t WHERE id = 1'), shape("SELECT * FROM t WHERE id = '1'"));
  assert.notEqual(shape('SELECT * FROM t WHERE id = 1'), shape('SELECT * FROM t WHERE id = 1.5'));
  assert.notEqual(shape('SELECT a FROM t'), shape('SELECT b FROM t'));
});

test('the bounded cache drops the least recently used entry', () => {
  const cache = new BoundedCache<number>(2);
  cache.set('a', 1);
  cache.set('b', 2);
  assert.equal(cache.get('a'), 1);
  cache.set('c', 3);
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.size, 2);
});

test('point lookups of one shape ask PostgreSQL for the columns once', async () => {
  const before = describes;
  for (const id of [1, 2, 3, 50, 99])
    assert.deepEqual(await rows(`SELECT id, name FROM pgc.cache_items WHERE id = ${id}`), [[id, `item ${id}`]]);
  assert.equal(describes - before, 1);
  assert.deepEqual(await rows("SELECT id FROM pgc.cache_items WHERE name = 'item 7'"), [[7]]);
  assert.equal(describes - before, 2, 'another shape is described');
});

test('a change to the catalog is seen by the next request: a refreshed source is described again', async () => {
  await rows('SELECT * FROM pgc.cache_items WHERE id = 1');
  await postgres.query('ALTER TABLE cache_items ADD COLUMN price int DEFAULT 5');
  const refreshed = await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.refreshDataSource('pgc')" } });
  assert.equal(refreshed.status, 200, await refreshed.text());
  const before = describes;
  const response = await server.request('/rest/api/query?array=false', { body: { sql: 'SELECT * FROM pgc.cache_items WHERE id = 2' } });
  assert.deepEqual(await response.json(), [{ id: 2, name: 'item 2', price: 5 }]);
  assert.equal(describes - before, 1);
});

test('cached statements never outlive a permission: a row condition and a revoked grant are seen by the next request', async () => {
  const admin = async (sql: string) => {
    const response = await server.request('/rest/api/query', { body: { sql } });
    assert.ok(response.status < 300, `${sql}: ${await response.text()}`);
  };
  await admin("CALL SYSADMIN.addRole('cachers')");
  await admin("CALL SYSADMIN.setPermissions('cachers', 'pgc.cache_items', 'R')");
  await admin("CALL SYSADMIN.addUser('carla', 'carla-password-1')");
  await admin("CALL SYSADMIN.addUserRole('cachers', 'carla')");
  const asCarla = (sql: string) =>
    server.request('/rest/api/query', { body: { sql }, headers: { authorization: server.basic('carla', 'carla-password-1') } });
  const count = async () => {
    const response = await asCarla('SELECT count(*) FROM pgc.cache_items WHERE id > 0');
    return { status: response.status, body: await response.text() };
  };
  assert.deepEqual(await count(), { status: 200, body: '[[100]]' });
  assert.deepEqual(await count(), { status: 200, body: '[[100]]' }, 'the same statement again, from the cache');

  await admin("CALL SYSADMIN.setPermissions('cachers', 'pgc.cache_items', 'R', 'id <= 10')");
  assert.deepEqual(await count(), { status: 200, body: '[[10]]' }, 'the new row condition applies at once');

  await admin("CALL SYSADMIN.setPermissions('cachers', 'pgc.cache_items', NULL)");
  assert.equal((await count()).status, 403, 'the revoked grant applies at once');
  // The administrator's own cached statement of the same text still answers for the administrator.
  assert.deepEqual(await rows('SELECT count(*) FROM pgc.cache_items WHERE id > 0'), [[100]]);
});

test("a paginated result is not served once its owner's grants change", async () => {
  const admin = async (sql: string) => {
    const response = await server.request('/rest/api/query', { body: { sql } });
    assert.ok(response.status < 300, `${sql}: ${await response.text()}`);
  };
  await admin("CALL SYSADMIN.addRole('pagers')");
  await admin("CALL SYSADMIN.setPermissions('pagers', 'pgc.cache_items', 'R')");
  await admin("CALL SYSADMIN.addUser('paula', 'paula-password-1')");
  await admin("CALL SYSADMIN.addUserRole('pagers', 'paula')");
  const auth = { authorization: server.basic('paula', 'paula-password-1') };
  const first = await server.request('/rest/api/query?pagination=true&limit=10', {
    body: { sql: 'SELECT id FROM pgc.cache_items ORDER BY id' },
    headers: auth,
  });
  assert.equal(first.status, 200, await first.clone().text());
  const requestId = first.headers.get('requestId')!;
  const page = (offset: number) =>
    server.request(`/rest/api/query?requestId=${requestId}&limit=10&offset=${offset}`, { method: 'POST', headers: auth });
  assert.equal((await page(10)).status, 200, 'paging while the grant holds');

  await admin("CALL SYSADMIN.setPermissions('pagers', 'pgc.cache_items', 'R', 'id <= 5')");
  const after = await page(20);
  assert.equal(after.status, 404);
  assert.match(((await after.json()) as { description: string }).description, /permissions that have changed/);
  assert.equal((await page(30)).status, 404, 'and it is gone for good');
});

/** Statements planned once per shape (plan/whole-template.ts): used, and only where they hold. */
const templated = () => server.services.engine.templated;
const query = async (sql: string, init: { params?: unknown[]; headers?: Record<string, string>; objects?: boolean } = {}) => {
  const response = await server.request(`/rest/api/query${init.objects ? '?array=false' : ''}`, {
    body: init.params ? { sql, params: init.params } : { sql },
    headers: init.headers,
  });
  return { status: response.status, body: await response.text() };
};
const adminCall = async (sql: string) => {
  const response = await server.request('/rest/api/query', { body: { sql } });
  assert.ok(response.status < 300, `${sql}: ${await response.text()}`);
};
/** Any committed catalog change: every template of older generations is out of reach. */
const touchCatalog = () => adminCall("CALL SYSADMIN.setPermissions('odd-jobs', 'pgc', NULL)");

test('a second statement of a shape is answered from its template, with its own constants', async () => {
  await adminCall("CALL SYSADMIN.addRole('odd-jobs')");
  await postgres.query('DROP TABLE IF EXISTS cache_types');
  await postgres.query(`CREATE TABLE cache_types AS SELECT g AS id, g::bigint * 1000000007 AS big, (g * 1.25)::numeric(12,3) AS amount,
      'name ' || g AS label, date '2024-02-28' + g AS day, timestamp '2024-01-01 10:00:00.123456' + g * interval '1 hour' AS at,
      g % 2 = 0 AS even, NULL::text AS nothing FROM generate_series(1, 50) g`);
  await adminCall("CALL SYSADMIN.refreshDataSource('pgc')");
  const statements: Array<[string, unknown[][]]> = [
    ['SELECT * FROM pgc.cache_types WHERE id = $1', [[3], [4], [49]]],
    [
      'SELECT id, amount * $1 AS scaled, label FROM pgc.cache_types WHERE id BETWEEN $2 AND $3 ORDER BY id',
      [
        [2, 1, 3],
        [3, 10, 12],
      ],
    ],
    [
      'SELECT day, at, even FROM pgc.cache_types WHERE label = $1 OR big = $2',
      [
        ['name 7', 8000000056],
        ['name 9', 9000000063],
        ['x', 7000000049],
      ],
    ],
    [
      'SELECT id, big FROM pgc.cache_types WHERE big = $1 OR big > $2 ORDER BY id',
      [
        ['8000000056', '49000000343'],
        ['9007199254740993', '50000000000'],
        ['9000000063', '1'],
      ],
    ],
    [
      'SELECT count(*), sum(amount), max(day) FROM pgc.cache_types WHERE day > $1 AND even = $2',
      [
        ['2024-03-10', true],
        ['2024-03-30', false],
      ],
    ],
  ];
  for (const [sql, paramSets] of statements) {
    for (const objects of [false, true]) {
      // The first of a shape takes the ordinary path, the others the template.
      await touchCatalog();
      await query(sql, { params: paramSets[0], objects });
      const answers: string[] = [];
      for (const params of paramSets.slice(1)) {
        const before = templated();
        const answer = await query(sql, { params, objects });
        assert.equal(answer.status, 200, answer.body);
        assert.equal(templated() - before, 1, `${sql} ${JSON.stringify(params)}: from the template`);
        answers.push(answer.body);
      }
      // The same statements, each the first of its shape again: byte for byte the same answers.
      for (const [i, params] of paramSets.slice(1).entries()) {
        await touchCatalog();
        const before = templated();
        assert.equal((await query(sql, { params, objects })).body, answers[i], `${sql} ${JSON.stringify(params)}`);
        assert.equal(templated(), before, 'the ordinary path');
      }
    }
  }
  // Literal constants share the template of their shape as parameters do.
  await query('SELECT label FROM pgc.cache_types WHERE id = 1');
  const before = templated();
  assert.deepEqual(await query('SELECT label FROM pgc.cache_types WHERE id = 12'), { status: 200, body: '[["name 12"]]' });
  assert.equal(templated() - before, 1);
  // A constant that would need escaping takes the ordinary path, and means what it says.
  assert.deepEqual(await query("SELECT id FROM pgc.cache_types WHERE label = 'it''s'"), { status: 200, body: '[]' });
  assert.deepEqual(await query('SELECT id FROM pgc.cache_types WHERE label = $1', { params: ["name 5' OR '1'='1"] }), {
    status: 200,
    body: '[]',
  });
  assert.deepEqual(await query('SELECT id FROM pgc.cache_types WHERE label = $1', { params: ['name 5'] }), { status: 200, body: '[[5]]' });
  assert.equal(templated() - before, 1, 'strings with quotes are never filled in');
  // Negative numbers too.
  assert.deepEqual(await query('SELECT label FROM pgc.cache_types WHERE id = -1 OR id = 2'), { status: 200, body: '[["name 2"]]' });
  await postgres.query('DROP TABLE cache_types');
});

test('constants sent as parameters of a prepared statement answer byte for byte as written out', async () => {
  await postgres.query('DROP TABLE IF EXISTS cache_numbers');
  await postgres.query(`CREATE TABLE cache_numbers AS SELECT g AS id, g::bigint * 3000000019 AS big, (g / 7.0)::numeric(14,4) AS ratio,
      g % 3 = 0 AS third, date '2024-01-01' + g AS day FROM generate_series(1, 3000) g`);
  await adminCall("CALL SYSADMIN.refreshDataSource('pgc')");
  const statements: Array<[string, unknown[][]]> = [
    ['SELECT * FROM pgc.cache_numbers WHERE id = $1', [[3], [2999], [4000]]],
    [
      'SELECT id, big * $1, ratio + $2, round(ratio, $3) FROM pgc.cache_numbers WHERE third = $4 AND id < $5',
      [
        [2, 1.5, 2, true, 10],
        [3, 2.25, 1, false, 9],
      ],
    ],
    [
      'SELECT id, big FROM pgc.cache_numbers WHERE big > $1 AND big < $2 ORDER BY 2 DESC LIMIT $3',
      [
        [3000000019, 30000000190, 3],
        [6000000038, 9000000057, 2],
      ],
    ],
    ['SELECT third, count(*), sum(ratio) FROM pgc.cache_numbers WHERE id <= $1 GROUP BY 1 ORDER BY 1', [[10], [20]]],
    [
      'SELECT CAST(ratio * $1 AS numeric(10,1)), day + $2 FROM pgc.cache_numbers WHERE id = $3',
      [
        [10, 1, 7],
        [100, 30, 8],
      ],
    ],
    ['SELECT id, 1 AS one, 2.50 AS two FROM pgc.cache_numbers WHERE id >= $1 ORDER BY id', [[1], [2], [2999]]],
    ['SELECT id / $1 FROM pgc.cache_numbers WHERE id = 1', [[1], [0], [2]]],
  ];
  for (const [sql, paramSets] of statements) {
    await touchCatalog();
    await query(sql, { params: paramSets[0] });
    const answers = [];
    for (const params of paramSets.slice(1)) answers.push(await query(sql, { params }));
    for (const [i, params] of paramSets.slice(1).entries()) {
      await touchCatalog();
      assert.deepEqual(await query(sql, { params }), answers[i], `${sql} ${JSON.stringify(params)}`);
    }
  }
  // Results of more rows than a prepared statement reads were streamed with COPY instead.
  assert.ok(prepared >= 10, `prepared statements used: ${prepared}`);
  assert.ok(preparedTooLarge >= 1, 'a large result went to COPY');
  const large = await query('SELECT id, 1 AS one, 2.50 AS two FROM pgc.cache_numbers WHERE id >= $1 ORDER BY id', { params: [5] });
  assert.equal((JSON.parse(large.body) as unknown[]).length, 2996);
  await postgres.query('DROP TABLE cache_numbers');
});

test('strings sent as untyped parameters of a prepared statement answer as written out, typed by where they stand', async () => {
  await postgres.query('DROP TABLE IF EXISTS cache_strings');
  await postgres.query(`CREATE TABLE cache_strings AS SELECT g AS id, 'item ' || g AS label, (g / 4.0)::numeric(10,2) AS ratio,
      date '2024-01-01' + g AS day, timestamptz '2024-01-01 00:00:00+00' + g * interval '5 hours' AS at FROM generate_series(1, 200) g`);
  await adminCall("CALL SYSADMIN.refreshDataSource('pgc')");
  const statements: Array<[string, unknown[][]]> = [
    ['SELECT * FROM pgc.cache_strings WHERE id = $1', [['3'], ['150'], ['999']]],
    [
      'SELECT id, label FROM pgc.cache_strings WHERE label = $1 OR label LIKE $2 ORDER BY id',
      [
        ['item 7', 'item 19%'],
        ['x', 'item 2_'],
      ],
    ],
    [
      'SELECT id FROM pgc.cache_strings WHERE day BETWEEN $1 AND $2 AND ratio > $3 ORDER BY id',
      [
        ['2024-02-01', '2024-02-20', '8.5'],
        ['2024-05-01', '2024-06-01', '35'],
      ],
    ],
    [
      'SELECT id, at FROM pgc.cache_strings WHERE at >= $1 AND id < $2 ORDER BY id',
      [
        ['2024-01-03 12:00:00+00', '20'],
        ['2024-01-02', '9'],
      ],
    ],
    [
      'SELECT id, $1 AS tag, ratio * $2 FROM pgc.cache_strings WHERE id = $3',
      [
        ['a', '2', '4'],
        ['b', '0.5', '5'],
      ],
    ],
  ];
  const preparedBefore = prepared;
  for (const [sql, paramSets] of statements) {
    await touchCatalog();
    await query(sql, { params: paramSets[0] });
    const answers = [];
    for (const params of paramSets.slice(1)) answers.push(await query(sql, { params }));
    for (const [i, params] of paramSets.slice(1).entries()) {
      await touchCatalog();
      assert.deepEqual(await query(sql, { params }), answers[i], `${sql} ${JSON.stringify(params)}`);
      assert.equal(answers[i]!.status, 200, answers[i]!.body);
    }
  }
  assert.ok(prepared - preparedBefore >= 5, `prepared statements used: ${prepared - preparedBefore}`);
  // An invalid value is the statement's error either way.
  await query('SELECT id FROM pgc.cache_strings WHERE id = $1', { params: ['4'] });
  const invalid = await query('SELECT id FROM pgc.cache_strings WHERE id = $1', { params: ['four'] });
  assert.equal(invalid.status, 400, invalid.body);
  assert.match(invalid.body, /invalid input syntax for type integer/);
  await postgres.query('DROP TABLE cache_strings');
});

test('a result beyond the rows a prepared statement reads is streamed with COPY, the same rows as written out', async () => {
  await postgres.query('DROP TABLE IF EXISTS cache_spill');
  await postgres.query(`CREATE TABLE cache_spill AS SELECT g AS id, 'row ' || g AS label, (g * 0.5)::numeric(8,1) AS half
      FROM generate_series(1, 2500) g`);
  await adminCall("CALL SYSADMIN.refreshDataSource('pgc')");
  const sql = 'SELECT id, label, half FROM pgc.cache_spill WHERE id <= $1 ORDER BY id';
  // numeric(8,1) keeps its scale: 1.0, not 1.
  const expected = (n: number, objects: boolean) =>
    `[${Array.from({ length: n }, (_, i) => {
      const id = i + 1;
      const half = (id * 0.5).toFixed(1);
      return objects ? `{"id":${id},"label":"row ${id}","half":${half}}` : `[${id},"row ${id}",${half}]`;
    }).join(',')}]`;
  await query(sql, { params: [1] });
  for (const objects of [false, true]) {
    // 1,000 rows: read by the prepared statement; 1,001 and 2,500: more than it reads, streamed with COPY.
    for (const n of [1000, 1001, 2500]) {
      const [preparedBefore, largeBefore, templatedBefore] = [prepared, preparedTooLarge, templated()];
      const answer = await query(sql, { params: [n], objects });
      assert.equal(answer.status, 200, answer.body);
      assert.ok(answer.body === expected(n, objects), `${n} rows, objects: ${objects}: ${answer.body.slice(0, 200)}`);
      assert.equal(templated() - templatedBefore, 1, 'from the template');
      assert.equal(prepared - preparedBefore, 1, 'the prepared statement was tried');
      assert.equal(preparedTooLarge - largeBefore, n > 1000 ? 1 : 0, `${n} rows: ${n > 1000 ? 'COPY' : 'prepared'}`);
    }
  }
  // A window (limit, offset) of a large result.
  const response = await server.request('/rest/api/query?limit=3&offset=1200', { body: { sql, params: [2500] } });
  assert.equal(await response.text(), '[[1201,"row 1201",600.5],[1202,"row 1202",601.0],[1203,"row 1203",601.5]]');
  await postgres.query('DROP TABLE cache_spill');
});

test("a template is one user's: another user's row condition and grants apply to the same statement", async () => {
  await adminCall("CALL SYSADMIN.addRole('narrow')");
  await adminCall("CALL SYSADMIN.setPermissions('narrow', 'pgc.cache_items', 'R', 'id <= 3')");
  await adminCall("CALL SYSADMIN.addUser('nina', 'nina-password-1')");
  await adminCall("CALL SYSADMIN.addUserRole('narrow', 'nina')");
  const nina = { authorization: server.basic('nina', 'nina-password-1') };
  const sql = 'SELECT count(*) FROM pgc.cache_items WHERE id < $1';
  // The administrator's template exists...
  await query(sql, { params: [50] });
  const before = templated();
  assert.deepEqual(await query(sql, { params: [60] }), { status: 200, body: '[[59]]' });
  assert.equal(templated() - before, 1);
  // ...and never answers for nina, whose own statements see her rows only, from her own template.
  assert.deepEqual(await query(sql, { params: [60], headers: nina }), { status: 200, body: '[[3]]' });
  assert.deepEqual(await query(sql, { params: [2], headers: nina }), { status: 200, body: '[[1]]' });
  assert.equal(templated() - before, 2, "nina's second statement used her own template");
  // A role taken away is seen by the next request.
  await adminCall("CALL SYSADMIN.removeUserRole('narrow', 'nina')");
  assert.equal((await query(sql, { params: [60], headers: nina })).status, 403);
});

/** Statement texts linked to their templates (statement-text.ts): answered without parsing. */
test('a known statement text is answered without parsing, with its own values, for its own user only', async () => {
  const byText = () => server.services.engine.byText;
  await touchCatalog();
  // The first of its shape learns the template and links its text to it.
  await query('SELECT id, name FROM pgc.cache_items WHERE id = 1');
  const before = byText();
  for (const id of [3, 47, 100, 101])
    assert.deepEqual(await query(`SELECT id, name FROM pgc.cache_items WHERE id = ${id}`), {
      status: 200,
      body: id <= 100 ? `[[${id},"item ${id}"]]` : '[]',
    });
  assert.deepEqual(await query('SELECT id, name FROM pgc.cache_items WHERE id = 2147483648'), { status: 200, body: '[]' });
  assert.deepEqual(await query("SELECT id FROM pgc.cache_items WHERE name = 'item 9'"), { status: 200, body: '[[9]]' });
  assert.deepEqual(await query("SELECT id FROM pgc.cache_items WHERE name = 'item 10'"), { status: 200, body: '[[10]]' });
  assert.deepEqual(await query("SELECT id FROM pgc.cache_items WHERE name = 'item 11'"), { status: 200, body: '[[11]]' });
  assert.equal(byText() - before, 6, 'four lookups by id (the larger integer is another kind), two by name');
  // Parameters: one text, the values linked.
  for (const id of [5, 6, 7]) {
    assert.deepEqual(await query('SELECT name FROM pgc.cache_items WHERE id = $1 OR id = $2', { params: [id, id + 10] }), {
      status: 200,
      body: `[["item ${id}"],["item ${id + 10}"]]`,
    });
  }
  assert.equal(byText() - before, 8);
  // A constant the grammar makes (FETCH FIRST ROW ONLY is a 1) never follows a literal of the same value:
  // linked by the second statement (the first's 1 could be either), then used by the third and on.
  const fetched = byText();
  for (const from of [1, 3, 5, 1, 8]) {
    assert.deepEqual(await query(`SELECT id FROM pgc.cache_items WHERE id >= ${from} ORDER BY id FETCH FIRST ROW ONLY`), {
      status: 200,
      body: `[[${from}]]`,
    });
  }
  assert.equal(byText() - fetched, 3);
  // Two literals alike cannot be told apart: linked by the next statement whose literals differ.
  const pairs = byText();
  for (const [a, b] of [
    [1, 1],
    [2, 3],
    [4, 4],
    [5, 6],
  ]) {
    assert.deepEqual(await query(`SELECT id FROM pgc.cache_items WHERE id = ${a} OR id = ${b} ORDER BY id`), {
      status: 200,
      body: a === b ? `[[${a}]]` : `[[${a}],[${b}]]`,
    });
  }
  assert.equal(byText() - pairs, 2);
  // A literal that is an ORDER BY position or a type modifier: such texts are parsed each time.
  const [positions, planned] = [byText(), templated()];
  for (const [position, scale] of [
    [1, 1],
    [2, 2],
    [1, 3],
  ]) {
    const answer = await query(
      `SELECT CAST(id AS numeric(6, ${scale})) AS n, 10 - id AS m FROM pgc.cache_items WHERE id < 3 ORDER BY ${position}`,
    );
    const rows = [`[1.${'0'.repeat(scale)},9]`, `[2.${'0'.repeat(scale)},8]`];
    assert.equal(answer.body, `[${(position === 1 ? rows : rows.reverse()).join(',')}]`, `ORDER BY ${position}, scale ${scale}`);
  }
  assert.equal(byText() - positions, 0);
  assert.equal(templated() - planned, 2, 'the second and third from the template of their shape, parsed');
  // Another user's statement of the same text: her own permissions.
  await adminCall("CALL SYSADMIN.addRole('texts')");
  await adminCall("CALL SYSADMIN.setPermissions('texts', 'pgc.cache_items', 'R', 'id <= 3')");
  await adminCall("CALL SYSADMIN.addUser('tess', 'tess-password-1')");
  await adminCall("CALL SYSADMIN.addUserRole('texts', 'tess')");
  const tess = { authorization: server.basic('tess', 'tess-password-1') };
  await query('SELECT id, name FROM pgc.cache_items WHERE id = 1');
  await query('SELECT id, name FROM pgc.cache_items WHERE id = 2');
  assert.equal((await query('SELECT id, name FROM pgc.cache_items WHERE id = 50')).body, '[[50,"item 50"]]');
  for (const id of [50, 2, 60, 3])
    assert.equal(
      (await query(`SELECT id, name FROM pgc.cache_items WHERE id = ${id}`, { headers: tess })).body,
      id <= 3 ? `[[${id},"item ${id}"]]` : '[]',
    );
  // A row condition changed and a grant revoked: the next request sees them.
  await adminCall("CALL SYSADMIN.setPermissions('texts', 'pgc.cache_items', 'R', 'id <= 60')");
  assert.equal((await query('SELECT id, name FROM pgc.cache_items WHERE id = 60', { headers: tess })).body, '[[60,"item 60"]]');
  await adminCall("CALL SYSADMIN.setPermissions('texts', 'pgc.cache_items', NULL)");
  assert.equal((await query('SELECT id, name FROM pgc.cache_items WHERE id = 60', { headers: tess })).status, 403);
});

test('a constant select is answered from its text', async () => {
  const byText = () => server.services.engine.byText;
  await query('SELECT 1');
  const before = byText();
  assert.deepEqual(await query('SELECT 1'), { status: 200, body: '[[1]]' });
  assert.deepEqual(await query('SELECT 2'), { status: 200, body: '[[2]]' });
  assert.deepEqual(await query("SELECT 'ok' AS status", { objects: true }), { status: 200, body: '[{"status":"ok"}]' });
  assert.deepEqual(await query("SELECT 'ok' AS status", { objects: true }), { status: 200, body: '[{"status":"ok"}]' });
  assert.deepEqual(await query('SELECT 2'), { status: 200, body: '[[2]]' });
  assert.equal(byText() - before, 3);
  assert.deepEqual(await query('SELECT $1', { params: [5] }), { status: 200, body: '[[5]]' });
  assert.deepEqual(await query('SELECT $1', { params: [6] }), { status: 200, body: '[[6]]' });
});

test('a replaced view and a removed source are seen by the very next request', async () => {
  await adminCall('CREATE VIEW views.small_items AS SELECT id, name FROM pgc.cache_items WHERE id <= 5');
  const sql = 'SELECT * FROM views.small_items WHERE id >= $1 ORDER BY id';
  assert.equal((await query(sql, { params: [4] })).body, '[[4,"item 4"],[5,"item 5"]]');
  const before = templated();
  assert.equal((await query(sql, { params: [5] })).body, '[[5,"item 5"]]');
  assert.equal(templated() - before, 1, 'the view is read through its template');
  await adminCall('CREATE OR REPLACE VIEW views.small_items AS SELECT id, upper(name) AS name FROM pgc.cache_items WHERE id <= 6');
  assert.equal((await query(sql, { params: [5] })).body, '[[5,"ITEM 5"],[6,"ITEM 6"]]');
  await adminCall('DROP VIEW views.small_items');

  await query('SELECT name FROM pgc.cache_items WHERE id = $1', { params: [1] });
  assert.equal((await query('SELECT name FROM pgc.cache_items WHERE id = $1', { params: [2] })).body, '[["item 2"]]');
  await adminCall("CALL SYSADMIN.removeDataSource('pgc')");
  const gone = await query('SELECT name FROM pgc.cache_items WHERE id = $1', { params: [3] });
  assert.ok(gone.status === 404 || gone.status === 400, `${gone.status} ${gone.body}`);
  assert.match(gone.body, /pgc/);
});
