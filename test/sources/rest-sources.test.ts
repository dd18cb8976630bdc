/**
 * The REST door onto the catalog: POST /rest/api/source with Data Virtuality's body, GET of the
 * source list, a source's tables and a table's rows, DELETE, persistence across a restart,
 * sealed secrets, permissions and bad bodies. Uses the real PostgreSQL and MariaDB on loopback,
 * each with objects of this run only (vdbt_<random>), dropped at the end.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOkJson, mysqlConnection, pgClient, uniqueTag } from '../connectors/db.js';

const tag = uniqueTag();
const PG_SECRET = `pg-Secret-${tag}`;
/** MariaDB user of this run; its password holds a comma (escaped in the props) and an '='. */
const MY_USER = tag;
const MY_SECRET = `My,Secret=${tag}`;
const ITEMS = 25;

let pgAdmin: pg.Client;
let myAdmin: mysql.Connection;
let dataDir: string;
let outside: string;
let server: TestServer;

const dvBody = (name: string, extra: Record<string, string> = {}) => ({
  name,
  template: 'postgresql',
  translator: 'postgresql',
  connectionProps: `host=127.0.0.1,port=5432,db=test,user-name=postgres,password=${PG_SECRET}`,
  modelProps: `importer.schemaPattern=${tag}`,
  translatorProps: '',
  encryptedProperties: '',
  ...extra,
});

const post = (body: unknown, headers?: Record<string, string>) => server.request('/rest/api/source', { method: 'POST', body, headers });
const del = (name: string, headers?: Record<string, string>) =>
  server.request(`/rest/api/source/${encodeURIComponent(name)}`, { method: 'DELETE', headers });
const get = (pathAndQuery: string, headers?: Record<string, string>) => server.request(pathAndQuery, { headers });
const rows = async (sql: string) => expectOkJson<unknown[][]>(await server.request('/rest/api/query', { body: { sql } }), sql);
const catalogText = () => fs.readFileSync(path.join(dataDir, 'catalog.json'), 'utf8');

/** Adds the PostgreSQL source `pgrest` unless it exists. */
async function ensurePgSource(): Promise<void> {
  if (server.services.registry.findSource('pgrest')) return;
  const response = await post(dvBody('pgrest'));
  assert.equal(response.status, 201, await response.text());
}

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE TABLE ${tag}.items (id int PRIMARY KEY, name text);
    INSERT INTO ${tag}.items SELECT g, 'item ' || g FROM generate_series(1, ${ITEMS}) g;
    CREATE TABLE ${tag}."we""ird" (id int);
    INSERT INTO ${tag}."we""ird" VALUES (42);
    CREATE VIEW ${tag}.items_v AS SELECT id FROM ${tag}.items;
    CREATE SCHEMA ${tag}_b;
    CREATE TABLE ${tag}_b.other (x int);
    INSERT INTO ${tag}_b.other VALUES (1), (2), (3);
    ANALYZE ${tag}.items;`);
  myAdmin = await mysqlConnection();
  await myAdmin.query(
    `CREATE DATABASE ${tag} CHARACTER SET utf8mb4;
     CREATE TABLE ${tag}.m (id int PRIMARY KEY, v varchar(10));
     INSERT INTO ${tag}.m VALUES (1, 'one'), (2, 'two');
     CREATE USER '${MY_USER}'@'%' IDENTIFIED BY ?;
     GRANT SELECT ON ${tag}.* TO '${MY_USER}'@'%';`,
    [MY_SECRET],
  );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-rest-sources-'));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-outside-'));
  fs.writeFileSync(path.join(outside, 'secret.csv'), 'a,b\n1,2\n');
  server = await startTestServer({ dataDir });
  await server.services.users.addPasswordUser('reader', 'reader-pass-1');
});

after(async () => {
  await server?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
  try {
    await pgAdmin.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE; DROP SCHEMA IF EXISTS ${tag}_b CASCADE`);
    await pgAdmin.query(`DROP DATABASE IF EXISTS ${tag}_db WITH (FORCE)`);
  } finally {
    await pgAdmin.end();
  }
  try {
    await myAdmin.query(`DROP USER IF EXISTS '${MY_USER}'@'%'; DROP DATABASE IF EXISTS ${tag}`);
  } finally {
    await myAdmin.end();
  }
});

test('POST /rest/api/source with the DV body creates a PostgreSQL source: 201, password never shown', async () => {
  const response = await post(dvBody('pgrest'));
  const text = await response.text();
  assert.equal(response.status, 201, text);
  assert.ok(!text.includes(PG_SECRET), `the answer shows no password: ${text}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.equal(body.name, 'pgrest');
  assert.equal(body.template, 'postgresql');
  assert.ok(!String(body.connectionProps).includes('password='), 'no password in connectionProps');
  assert.deepEqual((body.tables as string[]).slice().sort(), ['items', 'items_v', 'we"ird']);
  assert.equal(body.warnings, undefined, 'a source with tables has no warnings');
  // Live at once.
  assert.deepEqual(await rows('SELECT count(*) FROM pgrest.items'), [[ITEMS]]);
  // No system table shows the secret either.
  const listed = JSON.stringify(await rows('SELECT * FROM SYSADMIN.DataSources'));
  assert.ok(listed.includes('pgrest'));
  assert.ok(!listed.includes(PG_SECRET), listed);
});

test('the password is stored sealed in catalog.json', async () => {
  await ensurePgSource();
  const text = catalogText();
  assert.ok(!text.includes(PG_SECRET), 'the plain password is not in catalog.json');
  const catalog = JSON.parse(text) as {
    sources: Array<{ name: string; secrets: Record<string, string>; connection: Record<string, string> }>;
  };
  const source = catalog.sources.find((s) => s.name === 'pgrest');
  assert.ok(source);
  assert.match(source.secrets.password ?? '', /^v1:/);
  assert.equal(source.connection.password, undefined);
  assert.equal(source.connection['user-name'], 'postgres');
});

test('a source added or refreshed without tables is added with a warning that says what to check', async () => {
  const response = await post(dvBody('pgempty', { modelProps: `importer.schemaPattern=${tag}_nothing` }));
  const text = await response.text();
  assert.equal(response.status, 201, text);
  const body = JSON.parse(text) as { tables: string[]; warnings?: string[] };
  assert.deepEqual(body.tables, []);
  assert.equal(body.warnings?.length, 1, text);
  assert.match(
    body.warnings![0]!,
    /No tables were found in data source "pgempty" matching importer\.schemaPattern=.*refreshDataSource\('pgempty'\)/,
  );
  // The same through SQL: the procedure's result carries it in SQL-Warnings.
  const refreshed = await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.refreshDataSource('pgempty')" } });
  assert.equal(refreshed.status, 200);
  assert.match(refreshed.headers.get('sql-warnings') ?? '', /No tables were found in data source "pgempty"/);
  assert.equal((await del('pgempty')).status, 204);
});

test('GET /rest/api/source lists the new source; GET /rest/api/source/{name} lists its tables', async () => {
  await ensurePgSource();
  const list = await expectOkJson<Array<{ Name: string }>>(await get('/rest/api/source'));
  assert.ok(
    list.some((s) => s.Name === 'pgrest'),
    JSON.stringify(list),
  );
  assert.ok(list.some((s) => s.Name === 'shop'));
  const tables = await expectOkJson<Array<Record<string, unknown>>>(await get('/rest/api/source/pgrest'));
  assert.deepEqual(tables, [
    { Name: 'items', Type: 'Table', Description: null, SchemaName: 'pgrest' },
    { Name: 'items_v', Type: 'View', Description: null, SchemaName: 'pgrest' },
    { Name: 'we"ird', Type: 'Table', Description: null, SchemaName: 'pgrest' },
  ]);
  // Schema names are case-insensitive.
  assert.deepEqual(await expectOkJson(await get('/rest/api/source/PGREST')), tables);
});

test('GET /rest/api/source/{name}/{table}: rows as arrays by default, objects with array=false, a header row', async () => {
  await ensurePgSource();
  const arrays = await expectOkJson<Array<[number, string]>>(await get('/rest/api/source/pgrest/items'));
  assert.equal(arrays.length, ITEMS);
  assert.deepEqual(arrays.slice().sort((a, b) => a[0] - b[0])[0], [1, 'item 1']);
  const objects = await expectOkJson<Array<{ id: number; name: string }>>(await get('/rest/api/source/pgrest/items?array=false'));
  assert.equal(objects.length, ITEMS);
  assert.deepEqual(
    objects.find((o) => o.id === 7),
    { id: 7, name: 'item 7' },
  );
  const withHeader = await expectOkJson<unknown[][]>(await get('/rest/api/source/pgrest/items?headers=true&limit=2'));
  assert.deepEqual(withHeader[0], ['id', 'name']);
  assert.equal(withHeader.length, 3);
  const window = await expectOkJson<unknown[][]>(await get('/rest/api/source/pgrest/items?limit=5&offset=20'));
  assert.equal(window.length, 5);
  // Names from the URL are quoted: a table whose name holds a double quote, a mixed-case path.
  assert.deepEqual(await expectOkJson(await get(`/rest/api/source/pgrest/${encodeURIComponent('we"ird')}`)), [[42]]);
  assert.equal((await expectOkJson<unknown[]>(await get('/rest/api/source/PGREST/ITEMS'))).length, ITEMS);
});

test('GET /rest/api/source/{name}/{table} paginates; the links set array=false and headers=false', async () => {
  await ensurePgSource();
  for (const [params, shape] of [
    ['array=false', 'object'],
    ['headers=true', 'header'],
  ] as const) {
    let next: string | null = `/rest/api/source/pgrest/items?pagination=true&limit=10&${params}`;
    const ids: number[] = [];
    let pages = 0;
    while (next) {
      const response: Response = await get(next);
      const page: unknown[] = await expectOkJson<unknown[]>(response, next);
      pages++;
      assert.equal(response.headers.get('limit'), '10');
      assert.ok(response.headers.get('requestId'));
      let body = page;
      // The first page has the request's shape; the links ask for objects (spec 4.4).
      if (shape === 'header' && pages === 1) {
        assert.deepEqual(page[0], ['id', 'name'], 'the first page starts with the header row');
        body = page.slice(1);
        for (const row of body) ids.push((row as [number])[0]);
      } else {
        for (const row of body) ids.push((row as { id: number }).id);
      }
      const link = response.headers.get('nextPage');
      if (link) {
        const url = new URL(link);
        assert.equal(url.pathname, '/rest/api/source/pgrest/items');
        assert.equal(url.searchParams.get('array'), 'false');
        assert.equal(url.searchParams.get('headers'), 'false');
        next = url.pathname + url.search;
      } else next = null;
      assert.ok(pages <= 5, 'the walk ends');
    }
    assert.equal(pages, 3);
    assert.deepEqual(
      ids.sort((a, b) => a - b),
      Array.from({ length: ITEMS }, (_, i) => i + 1),
    );
  }
});

test('tables of a second schema (importer.schemaPattern) are read through GET as schema.table', async () => {
  const response = await post(dvBody('pgtwo', { modelProps: `importer.schemaPattern=${tag}|${tag}_b` }));
  assert.equal(response.status, 201, await response.text());
  try {
    const tables = await expectOkJson<Array<{ Name: string }>>(await get('/rest/api/source/pgtwo'));
    assert.ok(
      tables.some((t) => t.Name === `${tag}_b.other`),
      JSON.stringify(tables),
    );
    assert.deepEqual(await expectOkJson(await get(`/rest/api/source/pgtwo/${tag}_b.other?array=false`)), [{ x: 1 }, { x: 2 }, { x: 3 }]);
    await expectError(await get(`/rest/api/source/pgtwo/${tag}_b.nosuch`), 404, 'unknown qualified table');
  } finally {
    assert.equal((await del('pgtwo')).status, 204);
  }
});

test('unknown schema or table: 404 JSON; identifiers with quotes and odd characters break nothing', async () => {
  await ensurePgSource();
  const schema = await expectError(await get('/rest/api/source/nosuch'), 404, 'unknown schema');
  assert.match(schema.description, /nosuch/);
  await expectError(await get('/rest/api/source/nosuch/items'), 404, 'unknown schema with table');
  const tableError = await expectError(await get('/rest/api/source/pgrest/nosuch'), 404, 'unknown table');
  assert.match(tableError.description, /nosuch/);
  for (const odd of ['customers"; DROP', 'customers" --', "customers'", 'customers`x', 'cust%omers', '"', 'customers\\']) {
    await expectError(await get(`/rest/api/source/shop/${encodeURIComponent(odd)}`), 404, `odd table ${odd}`);
    await expectError(await get(`/rest/api/source/${encodeURIComponent(odd)}/customers`), 404, `odd schema ${odd}`);
    await expectError(await get(`/rest/api/source/${encodeURIComponent(odd)}`), 404, `odd schema list ${odd}`);
  }
  // Everything still works.
  assert.deepEqual(await rows('SELECT count(*) > 0 FROM shop.customers'), [[true]]);
  assert.ok((await expectOkJson<unknown[]>(await get('/rest/api/source/shop/customers'))).length > 0);
});

test('a non-admin user gets 403 on POST and DELETE, and can still read', async () => {
  await ensurePgSource();
  const reader = { authorization: server.basic('reader', 'reader-pass-1') };
  await expectError(await post(dvBody('pg_reader'), reader), 403, 'non-admin POST');
  assert.equal(server.services.registry.findSource('pg_reader'), undefined);
  await expectError(await del('pgrest', reader), 403, 'non-admin DELETE');
  assert.ok(server.services.registry.findSource('pgrest'), 'still there');
  await expectOkJson(await get('/rest/api/source', reader));
});

test('bad bodies: 400; a duplicate name: 409', async () => {
  await ensurePgSource();
  const bad: Array<[string, unknown]> = [
    ['missing name', { ...dvBody('x'), name: undefined }],
    ['empty name', dvBody('')],
    ['invalid name', dvBody('bad name')],
    ['unknown template', dvBody('pg_bad', { template: 'oracle', translator: 'oracle' })],
    ['malformed connectionProps', dvBody('pg_bad', { connectionProps: 'host' })],
    ['malformed modelProps', dvBody('pg_bad', { modelProps: 'a=1,b' })],
    ['array body', [dvBody('pg_bad')]],
    ['string body', 'just text'],
    ['number as props', { ...dvBody('pg_bad'), connectionProps: 42 }],
  ];
  for (const [what, body] of bad) {
    await expectError(await post(body), 400, what);
  }
  assert.equal(server.services.registry.findSource('pg_bad'), undefined);
  assert.ok(!catalogText().includes('pg_bad'));
  await expectError(await post(dvBody('pgrest')), 409, 'duplicate');
  await expectError(await post(dvBody('PGREST')), 409, 'duplicate, other case');
  await expectError(await post(dvBody('SYS')), 409, 'system schema name');
});

test('a source that cannot be reached is not added: 503 naming it', async () => {
  const body = await expectError(
    await post(dvBody('pg_unreachable', { connectionProps: 'host=127.0.0.1,port=1,db=test,user-name=postgres' })),
    503,
    'unreachable',
  );
  assert.match(body.description, /pg_unreachable/);
  await expectError(await get('/rest/api/source/pg_unreachable'), 404, 'not attached');
});

test('sqlite and file templates; a ParentDirectory outside the data directory is refused', async () => {
  const sqliteFile = path.join(dataDir, 'files', 'copy.sqlite');
  fs.copyFileSync(path.join(dataDir, 'files', 'demo', 'shop.sqlite'), sqliteFile);
  const sqlite = await post({
    name: 'lite',
    template: 'sqlite',
    translator: 'sqlite',
    connectionProps: `path=${sqliteFile}`,
    modelProps: '',
    translatorProps: '',
    encryptedProperties: '',
  });
  assert.equal(sqlite.status, 201, await sqlite.text());
  assert.deepEqual(await rows('SELECT (SELECT count(*) FROM lite.customers) = (SELECT count(*) FROM shop.customers)'), [[true]]);

  const missing = await post({
    name: 'lite_missing',
    template: 'sqlite',
    connectionProps: `path=${path.join(dataDir, 'files', 'none.sqlite')}`,
  });
  await expectError(missing, [502, 503], 'missing sqlite file');
  assert.ok(!fs.existsSync(path.join(dataDir, 'files', 'none.sqlite')), 'the file is not created');

  const folder = path.join(dataDir, 'files', 'myfiles');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'nums.csv'), 'n,label\n1,one\n2,two\n');
  const files = await post({ name: 'myfiles', template: 'file', translator: 'file', connectionProps: `ParentDirectory=${folder}` });
  assert.equal(files.status, 201, await files.text());
  assert.deepEqual(await rows('SELECT n, label FROM myfiles.nums ORDER BY n'), [
    [1, 'one'],
    [2, 'two'],
  ]);

  const escape = await post({ name: 'outside', template: 'file', connectionProps: `ParentDirectory=${outside}` });
  const error = await expectError(escape, [400, 403, 503], 'folder outside the roots');
  assert.ok(!JSON.stringify(error).includes('1,2'), 'no file content leaks');
  assert.equal(server.services.registry.findSource('outside'), undefined);
  await expectError(await get('/rest/api/source/outside'), 404, 'not attached');
  const dotdot = await post({
    name: 'outside2',
    template: 'file',
    connectionProps: `ParentDirectory=${path.join(dataDir, '..', path.basename(outside))}`,
  });
  await expectError(dotdot, [400, 403, 503], 'folder outside the roots via ..');
  assert.equal(server.services.registry.findSource('outside2'), undefined);
});

test('a MySQL (MariaDB) source via REST, with a password that holds a comma', async () => {
  const escaped = MY_SECRET.replace(/,/g, '\\,');
  const response = await post({
    name: 'myrest',
    template: 'mysql',
    translator: 'mysql',
    connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=${MY_USER},password=${escaped}`,
    modelProps: '',
    translatorProps: '',
    encryptedProperties: '',
  });
  const text = await response.text();
  assert.equal(response.status, 201, text);
  assert.ok(!text.includes(MY_SECRET) && !text.includes(escaped), text);
  assert.deepEqual(await rows('SELECT id, v FROM myrest.m ORDER BY id'), [
    [1, 'one'],
    [2, 'two'],
  ]);
  assert.deepEqual(await expectOkJson(await get('/rest/api/source/myrest/m?array=false')), [
    { id: 1, v: 'one' },
    { id: 2, v: 'two' },
  ]);
  assert.ok(!catalogText().includes(MY_SECRET));
  // The password really is used: a wrong one is refused by MariaDB.
  const wrong = await post({
    name: 'myrest_wrong',
    template: 'mysql',
    connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=${MY_USER},password=wrong`,
  });
  const body = await expectError(wrong, [502, 503], 'wrong password');
  assert.match(body.description, /myrest_wrong/);
  assert.ok(!body.description.includes(MY_SECRET));
  // The password may also come in encryptedProperties.
  const viaEncrypted = await post({
    name: 'myrest_enc',
    template: 'mysql',
    connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=${MY_USER}`,
    encryptedProperties: `password=${escaped}`,
  });
  assert.equal(viaEncrypted.status, 201, await viaEncrypted.text());
  assert.deepEqual(await rows('SELECT count(*) FROM myrest_enc.m'), [[2]]);
  assert.equal((await del('myrest_enc')).status, 204);
});

test('the catalog survives a restart: the sources come back, queryable, secrets still open', async () => {
  await ensurePgSource();
  assert.ok(server.services.registry.findSource('myrest'), 'the MySQL source of the previous test');
  await server.close();
  server = await startTestServer({ dataDir });
  const list = await expectOkJson<Array<{ Name: string }>>(await get('/rest/api/source'));
  for (const name of ['pgrest', 'myrest', 'lite', 'myfiles'])
    assert.ok(
      list.some((s) => s.Name === name),
      `${name} after restart`,
    );
  assert.deepEqual(await rows('SELECT count(*) FROM pgrest.items'), [[ITEMS]]);
  // MariaDB checks the password: the sealed secret was opened again.
  assert.deepEqual(await rows('SELECT count(*) FROM myrest.m'), [[2]]);
  assert.deepEqual(await rows('SELECT count(*) FROM myfiles.nums'), [[2]]);
  assert.ok(!catalogText().includes(MY_SECRET));
});

test('a source that is down at start keeps its schema, fails with 503 naming it, and recovers', async () => {
  const db = `${tag}_db`;
  const createDb = async () => {
    await pgAdmin.query(`CREATE DATABASE ${db}`);
    const client = await pgClient(db);
    try {
      await client.query('CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)');
    } finally {
      await client.end();
    }
  };
  await createDb();
  const added = await post(dvBody('pgdown', { connectionProps: `host=127.0.0.1,port=5432,db=${db},user-name=postgres`, modelProps: '' }));
  assert.equal(added.status, 201, await added.text());
  await server.close();
  await pgAdmin.query(`DROP DATABASE ${db} WITH (FORCE)`);
  server = await startTestServer({ dataDir });
  const tables = await expectOkJson<Array<{ Name: string }>>(await get('/rest/api/source/pgdown'));
  assert.deepEqual(
    tables.map((t) => t.Name),
    ['t'],
  );
  const body = await expectError(await get('/rest/api/source/pgdown/t'), [502, 503], 'down at start');
  assert.match(body.description, /pgdown/);
  assert.deepEqual(await rows('SELECT count(*) FROM myrest.m'), [[2]], 'the others work');
  await createDb();
  assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgdown/t?array=false')), [{ id: 1 }, { id: 2 }]);
  assert.equal((await del('pgdown')).status, 204);
});

test('DELETE /rest/api/source/{name}: 204, then 404 for DELETE and GET; the schema is gone', async () => {
  await ensurePgSource();
  const response = await del('pgrest');
  assert.equal(response.status, 204, await response.text());
  await expectError(await del('pgrest'), 404, 'second DELETE');
  await expectError(await get('/rest/api/source/pgrest'), 404, 'GET after DELETE');
  await expectError(await get('/rest/api/source/pgrest/items'), 404, 'GET table after DELETE');
  await expectError(await server.request('/rest/api/query', { body: { sql: 'SELECT * FROM pgrest.items' } }), 400, 'query after DELETE');
  const list = await expectOkJson<Array<{ Name: string }>>(await get('/rest/api/source'));
  assert.ok(!list.some((s) => s.Name === 'pgrest'));
  assert.ok(!catalogText().includes('"pgrest"'));
  // The name is free again.
  const again = await post(dvBody('pgrest'));
  assert.equal(again.status, 201, await again.text());
  assert.equal((await del('PGREST')).status, 204, 'names are case-insensitive');
  await expectError(await del('nosuch'), 404, 'unknown source');
});
