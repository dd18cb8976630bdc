/**
 * Values a statement builds are bounded (configuration valueLimit): a user with no role cannot
 * make the engine build a giant value, whatever the function; the statement is a 400 that names
 * the limit, it comes at once (before the value is built), and the server keeps serving. Values
 * under the limit answer as PostgreSQL does.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { pgClient, uniqueTag } from '../connectors/db.js';

const LIMIT = 1024 * 1024;
let server: TestServer;
let nobody: string;

before(async () => {
  server = await startTestServer({ valueLimit: LIMIT, engineMemoryLimit: '1GB' });
  await server.services.users.addPasswordUser('nobody', 'nobody-password-1');
  nobody = server.basic('nobody', 'nobody-password-1');
});
after(() => server.close());

const query = (sql: string, params = '') =>
  fetch(`${server.url}/rest/api/query${params}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: nobody },
    body: JSON.stringify({ sql }),
  });

async function refused(sql: string, fn: string): Promise<void> {
  const started = Date.now();
  const response = await query(sql);
  const text = await response.text();
  assert.equal(response.status, 400, `${sql}: ${text}`);
  const body = JSON.parse(text) as { title: string; description: string; hint: string };
  assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title']);
  assert.equal(body.title, 'Value too large', sql);
  assert.ok(body.description.includes(`${fn}()`), `${sql}: ${body.description}`);
  assert.ok(body.description.includes(String(LIMIT)) && body.description.includes('valueLimit'), body.description);
  // Refused before the value is built: a giant value would take seconds (and gigabytes).
  assert.ok(Date.now() - started < 5000, `${sql} took ${Date.now() - started} ms`);
}

async function answer(sql: string): Promise<unknown[][]> {
  const response = await query(sql);
  const text = await response.text();
  assert.equal(response.status, 200, `${sql}: ${text}`);
  return JSON.parse(text) as unknown[][];
}

test('functions whose result size follows from their arguments are refused before they build it', async () => {
  await refused(`SELECT repeat('x', 600000000)`, 'repeat');
  await refused(`SELECT length(repeat('ab', 2000000000))`, 'repeat');
  await refused(`SELECT lpad('x', 1000000000)`, 'lpad');
  await refused(`SELECT rpad('x', 1000000000, 'yz')`, 'rpad');
  await refused(`SELECT replace(repeat('a', 1000), 'a', repeat('b', 100000))`, 'replace');
  await refused(`SELECT regexp_replace(repeat('a', 100000), '', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'g')`, 'regexp_replace');
  await refused(`SELECT cardinality(string_to_array(repeat('a', 500000), NULL))`, 'string_to_array');
  await refused(`SELECT cardinality(regexp_split_to_array(repeat('a', 500000), ''))`, 'regexp_split_to_array');
  await refused(`SELECT array_to_string(ARRAY[1,2,3,4,5,6,7,8,9,10], '${'-'.repeat(200000)}')`, 'array_to_string');
  await refused(`SELECT generate_series(1, 1000000000)`, 'generate_series');
  // The size comes from the rows: checked per row, whatever the statement's shape.
  await refused(`SELECT length(repeat('x', g * 100000)) FROM generate_series(1, 20) g`, 'repeat');
  await refused(`SELECT length(x) FROM (SELECT lpad('a', 2000000 + g) AS x FROM generate_series(1, 3) g) s`, 'lpad');
});

test("values under the limit that add up past the engine's share for one batch of rows are refused", async () => {
  // 2,048 rows of 100 KB: 200 MB at once, past a sixteenth of the engine's 1 GB.
  for (const sql of [
    `SELECT sum(length(repeat('x', 100000 + g % 2))) FROM generate_series(1, 5000) g`,
    `SELECT sum(length(lpad('x', 100000 + g % 2))) FROM generate_series(1, 5000) g`,
    `SELECT sum(length(v || v)) FROM (SELECT repeat('x', 30000 + g % 2) AS v FROM generate_series(1, 5000) g) s`,
  ]) {
    const response = await query(sql);
    const text = await response.text();
    assert.equal(response.status, 400, `${sql}: ${text}`);
    const body = JSON.parse(text) as { title: string; description: string };
    assert.equal(body.title, 'Values too large', sql);
    assert.match(body.description, /2,048 rows.*engineMemoryLimit/);
  }
  // Fewer at once is fine.
  assert.deepEqual(await answer(`SELECT sum(length(repeat('x', 1000 + g % 2))) FROM generate_series(1, 5000) g`), [[5002500]]);
});

test('chains that join or widen values are checked on their result, through subqueries and CTEs', async () => {
  // Each step doubles: 2^20 bytes after 20 steps, past the limit; never built beyond twice it.
  const steps = Array.from({ length: 21 }, (_, i) => `s${i + 1} AS (SELECT v || v AS v FROM s${i})`);
  await refused(`WITH s0 AS (SELECT 'x' AS v), ${steps.join(', ')} SELECT length(v) FROM s21`, '||');
  await refused(`SELECT length(concat(repeat('a', 600000), repeat('b', 600000)))`, 'concat');
  await refused(`SELECT length(concat_ws(',', repeat('a', 600000), repeat('b', 600000)))`, 'concat_ws');
  const hexes = Array.from({ length: 20 }).reduce<string>((inner) => `encode(CAST(${inner} AS bytea), 'hex')`, `'ab'`);
  await refused(`SELECT length(${hexes})`, 'hex');
  await refused(`SELECT length(translate(repeat('a', 600000), 'a', 'é'))`, 'translate');
});

test('values under the limit answer as PostgreSQL does', async () => {
  assert.deepEqual(await answer(`SELECT repeat('ab', 3), lpad('7', 3, '0'), rpad('x', 3), repeat('-', 0), repeat('x', -1)`), [
    ['ababab', '007', 'x  ', '', ''],
  ]);
  assert.deepEqual(await answer(`SELECT replace('banana', 'an', 'AN'), regexp_replace('banana', 'a', 'o', 'g')`), [['bANANa', 'bonono']]);
  assert.deepEqual(await answer(`SELECT string_to_array('a,b,c', ','), array_to_string(ARRAY['a','b'], '-')`), [[['a', 'b', 'c'], 'a-b']]);
  assert.deepEqual(await answer(`SELECT 'a' || 'b' || 'c', concat('x', 1, NULL, 'y'), concat_ws('-', 'a', 'b')`), [['abc', 'x1y', 'a-b']]);
  assert.deepEqual(await answer(`SELECT generate_series(1, 3) AS g`), [[1], [2], [3]]);
  assert.deepEqual(await answer(`SELECT count(*), sum(g) FROM generate_series(1, 3000000) g`), [[3000000, 4500001500000]]);
  assert.deepEqual(await answer(`SELECT length(repeat('x', ${LIMIT}))`), [[LIMIT]]);
  // Grouped by a bounded expression: the engine matches the select list to the GROUP BY.
  assert.deepEqual(await answer(`SELECT x || '!' AS r, count(*) FROM (VALUES ('a'), ('a'), ('b')) v(x) GROUP BY x || '!' ORDER BY 1`), [
    ['a!', 2],
    ['b!', 1],
  ]);
  assert.deepEqual(await answer(`SELECT string_agg(x, ',') FROM (VALUES ('a'), ('b')) v(x)`), [['a,b']]);
});

test('a value the checks do not see before it is built (an aggregate) is refused when it reaches the result', async () => {
  const response = await query(`SELECT string_agg(repeat('x', 1000), '') FROM generate_series(1, 2000)`);
  const text = await response.text();
  assert.equal(response.status, 400, text);
  const body = JSON.parse(text) as { title: string; description: string };
  assert.equal(body.title, 'Value too large');
  assert.match(body.description, /^A row of the result would give a value of more than 1048576 bytes/);
  // The same in pages.
  const paged = await query(`SELECT string_agg(repeat('x', 1000), '') FROM generate_series(1, 2000)`, '?pagination=true');
  assert.equal(paged.status, 400, await paged.text());
});

test('nested functions whose translation names their argument several times stay small', async () => {
  // concat() writes each argument's text by its type, round() corrects half-way values: both
  // name their argument several times, which nested used to multiply (five concat() took the
  // process to its heap limit).
  const concats = Array.from({ length: 30 }).reduce<string>((inner) => `concat(${inner}, 'a')`, 'g');
  const rounds = Array.from({ length: 30 }).reduce<string>((inner) => `round(${inner})`, 'g::float8 + 0.5');
  const started = Date.now();
  assert.deepEqual(await answer(`SELECT length(${concats}), ${rounds} FROM generate_series(1, 2) g`), [
    [31, 2],
    [31, 2],
  ]);
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
});

test('a timeout stops a statement that builds many bounded values', async () => {
  const started = Date.now();
  const response = await query(
    `SELECT count(*) FROM generate_series(1, 1000000000) g WHERE length(repeat('x', 1000 + g % 2)) > 0`,
    '?timeout=1000',
  );
  const text = await response.text();
  assert.equal(response.status, 504, text);
  assert.ok(Date.now() - started < 4000, `answered after ${Date.now() - started} ms`);
});

test('a user under a row condition meets the same limits', async () => {
  const { users } = server.services;
  await users.addPasswordUser('ruth', 'ruth-password-1');
  await users.addRole('europe');
  await users.addUserRole('europe', 'ruth');
  await users.setPermissions(
    { role: 'europe', resource: 'files.regions', permissions: 'R', condition: "region = 'Europe'", mask: null, maskOrder: null },
    (a, b) => a === b,
  );
  const ruth = (sql: string) =>
    fetch(`${server.url}/rest/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: server.basic('ruth', 'ruth-password-1') },
      body: JSON.stringify({ sql }),
    });
  const giant = await ruth(`SELECT length(repeat(region, 100000000)) FROM files.regions`);
  const text = await giant.text();
  assert.equal(giant.status, 400, text);
  assert.equal((JSON.parse(text) as { title: string }).title, 'Value too large');
  const small = await ruth(`SELECT DISTINCT repeat(region, 2) FROM files.regions`);
  assert.deepEqual(await small.json(), [['EuropeEurope']]);
});

test('the server keeps serving other users while giant values are refused', async () => {
  const flood = Array.from({ length: 6 }, () => query(`SELECT length(repeat('x', g * 1000000)) FROM generate_series(1, 100) g`));
  const status = await fetch(`${server.url}/rest/api/status`, { headers: { authorization: server.basic() } });
  assert.equal(status.status, 200);
  // Each is refused: for its values (400), or past the user's running statements (429).
  const statuses = await Promise.all((await Promise.all(flood)).map(async (response) => [response.status, await response.text()] as const));
  for (const [status, text] of statuses) assert.ok(status === 400 || status === 429, `${status} ${text}`);
  assert.ok(
    statuses.some(([status]) => status === 400),
    'some reached the engine',
  );
  assert.deepEqual(await answer(`SELECT 1`), [[1]]);
});

test('a statement sent whole to PostgreSQL answers rows within the limit, or the 400', async () => {
  const tag = uniqueTag();
  const pg = await pgClient();
  try {
    await pg.query(
      `CREATE SCHEMA ${tag}; CREATE TABLE ${tag}.t (id int PRIMARY KEY, name text); INSERT INTO ${tag}.t VALUES (1, 'ab'), (2, 'cd')`,
    );
    await server.services.registry.addSource({
      name: 'pgv',
      kind: 'postgresql',
      connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
      model: { 'importer.schemaPattern': tag },
    });
    const admin = (sql: string) => server.request('/rest/api/query', { body: { sql } });
    // One row (the prepared path) and many rows (COPY): PostgreSQL builds them, vdb refuses them.
    for (const sql of [
      `SELECT repeat(name, 1000000) FROM pgv.t WHERE id = 1`,
      `SELECT g, repeat(name, 1000000) FROM pgv.t, generate_series(1, 3000) g`,
    ]) {
      const response = await admin(sql);
      const text = await response.text();
      assert.equal(response.status, 400, `${sql}: ${text}`);
      assert.equal((JSON.parse(text) as { title: string }).title, 'Value too large', text);
    }
    const response = await admin(`SELECT repeat(name, 3) FROM pgv.t ORDER BY id`);
    assert.deepEqual(await response.json(), [['ababab'], ['cdcdcd']]);
  } finally {
    await server.services.registry.removeSource('pgv').catch(() => undefined);
    await pg.query(`DROP SCHEMA ${tag} CASCADE`);
    await pg.end();
  }
});
