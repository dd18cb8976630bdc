/**
 * The SQL door onto the catalog: CALL SYSADMIN.createConnection / createDataSource /
 * refreshDataSource / removeDataSource / removeConnection through POST /rest/api/query, against
 * the real PostgreSQL on loopback (this run's own schema vdbt_<random>, dropped at the end).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOkJson, pgClient, uniqueTag } from '../connectors/db.js';

const tag = uniqueTag();
const SECRET = `proc-Secret-${tag}`;
const PG_PROPS = 'host=127.0.0.1,port=5432,db=test,user-name=postgres';

let pgAdmin: pg.Client;
let server: TestServer;

const query = (sql: string, params = '', headers?: Record<string, string>) =>
  server.request(`/rest/api/query${params}`, { body: { sql }, headers });
const rows = async (sql: string, params = '') => expectOkJson<unknown[][]>(await query(sql, params), sql);
const catalogText = () => fs.readFileSync(path.join(server.dataDir, 'catalog.json'), 'utf8');
const lit = (text: string) => `'${text.replace(/'/g, "''")}'`;

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE TABLE ${tag}.items (id int PRIMARY KEY, name text);
    INSERT INTO ${tag}.items VALUES (1, 'one'), (2, 'two');
    CREATE TABLE ${tag}.doomed (id int);
    ANALYZE ${tag}.items;`);
  server = await startTestServer();
  await server.services.users.addPasswordUser('reader', 'reader-pass-1');
});

after(async () => {
  await server?.close();
  try {
    await pgAdmin.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  } finally {
    await pgAdmin.end();
  }
});

test('createConnection then createDataSource: the source is queryable at once', async () => {
  const connection = await query(
    `CALL SYSADMIN.createConnection('pgc', 'postgresql', ${lit(`${PG_PROPS},password=${SECRET}`)}, '')`,
    '?headers=true',
  );
  const connText = await connection.text();
  assert.equal(connection.status, 200, connText);
  assert.deepEqual(JSON.parse(connText), [
    ['Name', 'Type'],
    ['pgc', 'postgresql'],
  ]);
  assert.ok(!connText.includes(SECRET));
  const created = await rows(`CALL SYSADMIN.createDataSource('pgc', 'postgresql', 'importer.schemaPattern=${tag}', '')`, '?headers=true');
  assert.deepEqual(created, [
    ['Name', 'Type', 'Tables'],
    ['pgc', 'postgresql', 2],
  ]);
  assert.deepEqual(await rows('SELECT id, name FROM pgc.items ORDER BY id'), [
    [1, 'one'],
    [2, 'two'],
  ]);
  // Listed like any source; the password is sealed in the catalog, shown nowhere.
  const list = await expectOkJson<Array<{ Name: string }>>(await server.request('/rest/api/source'));
  assert.ok(list.some((s) => s.Name === 'pgc'));
  const catalog = catalogText();
  assert.ok(!catalog.includes(SECRET), 'no plain password in catalog.json');
  const parsed = JSON.parse(catalog) as {
    sources: Array<{ name: string; secrets: Record<string, string> }>;
    connections?: Array<{ name: string; secrets: Record<string, string> }>;
  };
  assert.match(parsed.sources.find((s) => s.name === 'pgc')?.secrets.password ?? '', /^v1:/);
  assert.match(parsed.connections?.find((c) => c.name === 'pgc')?.secrets.password ?? '', /^v1:/);
  assert.ok(!JSON.stringify(await rows('SELECT * FROM SYSADMIN.DataSources')).includes(SECRET));
});

test('named arguments (name => ...) and case-insensitive procedure names', async () => {
  await rows(
    `CALL sysadmin.CREATECONNECTION(name => 'pgn', jbosscliTemplateName => 'postgresql',
       connectionOrResourceAdapterProperties => ${lit(PG_PROPS)}, encryptedProperties => ${lit(`password=${SECRET}`)})`,
  );
  const created = await rows(
    `CALL SYSADMIN.createDataSource(name => 'pgn', translator => 'postgresql', modelProperties => 'importer.schemaPattern=${tag}')`,
  );
  assert.deepEqual(created, [['pgn', 'postgresql', 2]]);
  assert.deepEqual(await rows('SELECT count(*) FROM pgn.items'), [[2]]);
  // Positional first, then named.
  assert.deepEqual(await rows(`CALL SYSADMIN.removeDataSource(name => 'pgn')`), [['pgn', 'postgresql', 2]]);
  assert.ok(!catalogText().includes(SECRET));
  await rows(`CALL SYSADMIN.removeConnection('pgn')`);
});

test('refreshDataSource picks up tables created and dropped at the source since', async () => {
  if (!server.services.registry.findSource('pgc')) {
    await rows(`CALL SYSADMIN.createConnection('pgc', 'postgresql', ${lit(PG_PROPS)}, '')`);
    await rows(`CALL SYSADMIN.createDataSource('pgc', 'postgresql', 'importer.schemaPattern=${tag}', '')`);
  }
  await pgAdmin.query(`CREATE TABLE ${tag}.later (id int PRIMARY KEY, v text); INSERT INTO ${tag}.later VALUES (9, 'nine');
    DROP TABLE ${tag}.doomed; ALTER TABLE ${tag}.items ADD COLUMN extra int DEFAULT 5;`);
  await expectError(await query('SELECT * FROM pgc.later'), 400, 'not imported yet');
  assert.deepEqual(await rows(`CALL SYSADMIN.refreshDataSource('pgc')`), [['pgc', 'postgresql', 2]]);
  assert.deepEqual(await rows('SELECT id, v FROM pgc.later'), [[9, 'nine']]);
  await expectError(await query('SELECT * FROM pgc.doomed'), 400, 'dropped at the source');
  assert.deepEqual(await rows('SELECT id, extra FROM pgc.items ORDER BY id'), [
    [1, 5],
    [2, 5],
  ]);
  const tables = await expectOkJson<Array<{ Name: string }>>(await server.request('/rest/api/source/pgc'));
  assert.deepEqual(
    tables.map((t) => t.Name),
    ['items', 'later'],
  );
});

test('refreshDataSource on a file source picks up a new file', async () => {
  const folder = path.join(server.dataDir, 'files', 'demo', 'files');
  fs.writeFileSync(path.join(folder, `${tag}.csv`), 'k,v\n1,a\n2,b\n');
  try {
    await expectError(await query(`SELECT * FROM files.${tag}`), 400, 'not imported yet');
    await rows(`CALL SYSADMIN.refreshDataSource('files')`);
    assert.deepEqual(await rows(`SELECT k, v FROM files.${tag} ORDER BY k`), [
      [1, 'a'],
      [2, 'b'],
    ]);
    assert.deepEqual(await rows(`SELECT count(*) FROM SYS.Tables WHERE "SchemaName" = 'files' AND "Name" = '${tag}'`), [[1]]);
    // The tables that were there keep working.
    assert.deepEqual(await rows('SELECT count(*) > 0 FROM files.regions'), [[true]]);
  } finally {
    fs.rmSync(path.join(folder, `${tag}.csv`), { force: true });
  }
});

test('removeDataSource removes the source; removeConnection the connection', async () => {
  if (!server.services.registry.findSource('pgc')) {
    await rows(`CALL SYSADMIN.createConnection('pgc', 'postgresql', ${lit(PG_PROPS)}, '')`);
    await rows(`CALL SYSADMIN.createDataSource('pgc', 'postgresql', 'importer.schemaPattern=${tag}', '')`);
  }
  const removed = await rows(`CALL SYSADMIN.removeDataSource('pgc')`);
  assert.equal(removed[0]?.[0], 'pgc');
  await expectError(await query('SELECT * FROM pgc.items'), 400, 'gone');
  await expectError(await server.request('/rest/api/source/pgc'), 404, 'gone from the list');
  await expectError(await query(`CALL SYSADMIN.removeDataSource('pgc')`), 400, 'removed twice');
  await expectError(await query(`CALL SYSADMIN.refreshDataSource('pgc')`), 400, 'refresh of an unknown source');
  // The connection is still there: the source can be created again from it.
  assert.deepEqual(await rows(`CALL SYSADMIN.createDataSource('pgc', 'postgresql', 'importer.schemaPattern=${tag}', '')`), [
    ['pgc', 'postgresql', 2],
  ]);
  await rows(`CALL SYSADMIN.removeDataSource('pgc')`);
  assert.deepEqual(await rows(`CALL SYSADMIN.removeConnection('pgc')`), [['pgc']]);
  await expectError(await query(`CALL SYSADMIN.createDataSource('pgc', 'postgresql', '', '')`), 400, 'unknown connection');
  await expectError(await query(`CALL SYSADMIN.removeConnection('pgc')`), 400, 'connection removed twice');
  const catalog = JSON.parse(catalogText()) as { connections?: Array<{ name: string }> };
  assert.ok(!(catalog.connections ?? []).some((c) => c.name === 'pgc'));
});

test('wrong calls: unknown procedure, wrong argument count or names, non-constants: all 400', async () => {
  await expectError(await query(`CALL SYSADMIN.noSuchProcedure('x')`), 400, 'unknown procedure');
  await expectError(await query(`CALL noschema.createConnection('x', 'postgresql')`), 400, 'unknown schema of a procedure');
  await expectError(await query(`CALL SYSADMIN.createConnection('x', 'postgresql', 'host=a', '', 'extra')`), 400, 'too many');
  await expectError(await query(`CALL SYSADMIN.createConnection('x')`), 400, 'too few');
  await expectError(await query(`CALL SYSADMIN.removeDataSource()`), 400, 'none');
  await expectError(await query(`CALL SYSADMIN.removeDataSource(nosuch => 'x')`), 400, 'unknown named argument');
  await expectError(await query(`CALL SYSADMIN.removeDataSource(upper('x'))`), 400, 'not a constant');
  await expectError(await query(`CALL SYSADMIN.createConnection('x', 'oracle', 'host=a', '')`), 400, 'unknown template');
  await expectError(await query(`CALL SYSADMIN.createConnection('x', 'postgresql', 'host', '')`), 400, 'malformed props');
  await expectError(await query(`CALL SYSADMIN.createConnection('bad name', 'postgresql', 'host=a', '')`), 400, 'invalid name');
  // Nothing was stored by the failed calls.
  const catalog = JSON.parse(catalogText()) as { connections?: Array<{ name: string }> };
  assert.deepEqual(
    (catalog.connections ?? []).map((c) => c.name).filter((n) => n === 'x'),
    [],
  );
});

test('createDataSource of a connection that cannot be reached: 503 naming the source, nothing kept', async () => {
  await rows(`CALL SYSADMIN.createConnection('pgdown', 'postgresql', 'host=127.0.0.1,port=1,db=test,user-name=postgres', '')`);
  const body = await expectError(await query(`CALL SYSADMIN.createDataSource('pgdown', 'postgresql', '', '')`), 503, 'unreachable');
  assert.match(body.description, /pgdown/);
  assert.equal(server.services.registry.findSource('pgdown'), undefined);
  await rows(`CALL SYSADMIN.removeConnection('pgdown')`);
});

test('a non-admin user gets 403 from every SYSADMIN procedure', async () => {
  const reader = { authorization: server.basic('reader', 'reader-pass-1') };
  for (const call of [
    `CALL SYSADMIN.createConnection('r1', 'postgresql', ${lit(PG_PROPS)}, '')`,
    `CALL SYSADMIN.createDataSource('r1', 'postgresql', '', '')`,
    `CALL SYSADMIN.refreshDataSource('shop')`,
    `CALL SYSADMIN.removeDataSource('shop')`,
    `CALL SYSADMIN.removeConnection('r1')`,
  ]) {
    await expectError(await query(call, '', reader), 403, call);
  }
  assert.ok(server.services.registry.findSource('shop'), 'shop is still there');
  const catalog = JSON.parse(catalogText()) as { connections?: Array<{ name: string }> };
  assert.ok(!(catalog.connections ?? []).some((c) => c.name === 'r1'));
});
