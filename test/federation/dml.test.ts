/**
 * Writes: INSERT, UPDATE and DELETE on PostgreSQL, MariaDB and SQLite tables through the query
 * endpoint, INSERT ... SELECT across sources, and what is refused.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';

const tag = `vdbt_${randomBytes(4).toString('hex')}`;
const PG = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' };
const MY = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
let server: TestServer;
let sqliteFile: string;

before(async () => {
  server = await startTestServer();
  const c = new pg.Client(PG);
  await c.connect();
  await c.query(`CREATE SCHEMA ${tag}; CREATE TABLE ${tag}.t (id int PRIMARY KEY, name text NOT NULL, amount numeric(10,2), d date)`);
  await c.end();
  const m = await mysql.createConnection(MY);
  await m.query(`CREATE DATABASE ${tag}`);
  await m.query(`CREATE TABLE ${tag}.t (id int PRIMARY KEY, name varchar(50) NOT NULL, amount decimal(10,2), d date)`);
  await m.end();
  sqliteFile = path.join(server.dataDir, 'files', `${tag}.sqlite`);
  const db = new Database(sqliteFile);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount DECIMAL(10,2), d DATE)');
  db.close();
  const add = (body: unknown) =>
    server.request('/rest/api/source', { body }).then(async (r) => assert.equal(r.status, 201, await r.text()));
  await add({
    name: 'pgw',
    template: 'postgresql',
    connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
    modelProps: `importer.schemaPattern=${tag}`,
  });
  await add({ name: 'myw', template: 'mysql', connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=root` });
  await add({ name: 'litew', template: 'sqlite', connectionProps: `path=${sqliteFile}` });
  await add({
    name: 'pgro',
    template: 'postgresql',
    connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
    modelProps: `importer.schemaPattern=${tag},readOnly=true`,
  });
});

after(async () => {
  await server?.close();
  const c = new pg.Client(PG);
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await c.end();
  const m = await mysql.createConnection(MY);
  await m.query(`DROP DATABASE IF EXISTS ${tag}`);
  await m.end();
});

async function sql(statement: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const response = await server.request('/rest/api/query', { body: { sql: statement }, headers });
  return { status: response.status, body: await response.json() };
}

async function ok(statement: string): Promise<unknown> {
  const { status, body } = await sql(statement);
  assert.equal(status, 200, `${statement}: ${JSON.stringify(body)}`);
  return body;
}

for (const source of ['pgw', 'myw', 'litew']) {
  test(`${source}: INSERT, UPDATE and DELETE run at the source and answer the row count`, async () => {
    assert.deepEqual(
      await ok(`INSERT INTO ${source}.t VALUES (1, 'O''Neil', 1.50, DATE '2025-01-02'), (2, 'b', NULL, NULL), (3, 'c', 3, NULL)`),
      [[3]],
    );
    assert.deepEqual(await ok(`UPDATE ${source}.t SET amount = amount * 2, name = name || '!' WHERE id IN (1, 3)`), [[2]]);
    assert.deepEqual(await ok(`DELETE FROM ${source}.t WHERE id = 2`), [[1]]);
    assert.deepEqual(await ok(`SELECT id, name, amount, d FROM ${source}.t ORDER BY id`), [
      [1, "O'Neil!", 3, '2025-01-02'],
      [3, 'c!', 6, null],
    ]);
    // A constraint the source enforces: 400 with the source's message; nothing changes.
    const dup = await sql(`INSERT INTO ${source}.t VALUES (1, 'again', 0, NULL)`);
    assert.equal(dup.status, 400);
    assert.match(JSON.stringify(dup.body), /refused the write/);
    assert.deepEqual(await ok(`SELECT count(*) FROM ${source}.t`), [[2]]);
  });
}

test('INSERT ... SELECT from other sources writes every row, in one transaction', async () => {
  assert.deepEqual(await ok('INSERT INTO pgw.t (id, name, amount) SELECT id + 1000, name, 1 FROM shop.customers WHERE id <= 50'), [[50]]);
  assert.deepEqual(await ok('SELECT count(*), sum(amount) FROM pgw.t WHERE id > 1000'), [[50, 50]]);
  assert.deepEqual(await ok('INSERT INTO myw.t SELECT id, name, amount, d FROM pgw.t WHERE id > 1000'), [[50]]);
  assert.deepEqual(await ok('SELECT count(*) FROM myw.t WHERE id > 1000'), [[50]]);
  // One row breaks a constraint: nothing of the statement remains.
  const failed = await sql(
    'INSERT INTO litew.t (id, name) SELECT id, CASE WHEN id = 40 THEN NULL ELSE name END FROM shop.customers WHERE id <= 60 AND id > 5',
  );
  assert.equal(failed.status, 400, JSON.stringify(failed.body));
  assert.deepEqual(await ok('SELECT count(*) FROM litew.t WHERE id > 5'), [[0]]);
  const mismatch = await sql('INSERT INTO pgw.t SELECT id FROM shop.customers');
  assert.equal(mismatch.status, 400);
});

test('what cannot be written is refused, and nothing is written', async () => {
  const readOnly = await sql(`INSERT INTO pgro.t VALUES (500, 'x', NULL, NULL)`);
  assert.equal(readOnly.status, 403);
  assert.match(JSON.stringify(readOnly.body), /read-only/);
  assert.equal((await sql("INSERT INTO files.regions VALUES ('x', 'y', 'z', 'w')")).status, 403);
  assert.equal((await sql('DELETE FROM SYS.Tables WHERE 1 = 1')).status, 403);
  assert.equal((await sql('UPDATE pgw.t SET name = 1 WHERE id IN (SELECT id FROM shop.customers)')).status, 400);
  assert.equal((await sql('DELETE FROM pgw.t RETURNING id')).status, 400);
  assert.equal((await sql('INSERT INTO pgw.nosuch VALUES (1)')).status, 400);
  // Nothing that reads files or settings runs at the source, whatever the statement.
  const fileRead = await sql("UPDATE pgw.t SET name = pg_read_file('/etc/hostname') WHERE id = 1");
  assert.equal(fileRead.status, 400, JSON.stringify(fileRead.body));
  const insertRead = await sql("INSERT INTO pgw.t (id, name) VALUES (900, current_setting('data_directory'))");
  assert.ok([400, 403, 404].includes(insertRead.status), JSON.stringify(insertRead.body));
  // Only administrators write (until permissions arrive).
  await server.services.users.addPasswordUser('writer', 'writer-password');
  const denied = await sql('DELETE FROM pgw.t', { authorization: server.basic('writer', 'writer-password') });
  assert.equal(denied.status, 403);
  assert.ok(((await ok('SELECT count(*) FROM pgw.t')) as number[][])[0]![0]! > 0, 'nothing deleted');
});
