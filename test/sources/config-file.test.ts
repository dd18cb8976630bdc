/**
 * The config-file door onto the catalog: sources listed under `sources` in vdb.config.json (or
 * the file named by VDB_CONFIG) are created at start when the catalog lacks them, with secrets
 * taken from environment variables through ${env:NAME} and stored sealed. Uses the real
 * PostgreSQL and MariaDB on loopback, with objects of this run only (vdbt_<random>).
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
const PG_SECRET = `cfg-pg-${tag}`;
const MY_USER = tag;
const MY_SECRET = `cfg,My=${tag}`;
const lateDb = `${tag}_late`;

let pgAdmin: pg.Client;
let myAdmin: mysql.Connection;
const dirs: string[] = [];
const servers: TestServer[] = [];

const pgSpec = (name: string, extra: Record<string, string> = {}) => ({
  name,
  template: 'postgresql',
  translator: 'postgresql',
  connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres,password=${env:VDB_TEST_PG_PW}',
  modelProps: `importer.schemaPattern=${tag}`,
  translatorProps: '',
  encryptedProperties: '',
  ...extra,
});

const mySpec = (name: string, passwordRef = '${env:VDB_TEST_MY_PW}') => ({
  name,
  template: 'mysql',
  translator: 'mysql',
  connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=${MY_USER}`,
  modelProps: '',
  translatorProps: '',
  encryptedProperties: `password=${passwordRef}`,
});

const ENV = { VDB_TEST_PG_PW: PG_SECRET, VDB_TEST_MY_PW: MY_SECRET };

function newDataDir(config?: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-config-'));
  dirs.push(dir);
  if (config !== undefined) fs.writeFileSync(path.join(dir, 'vdb.config.json'), JSON.stringify(config, null, 2));
  return dir;
}

async function start(dataDir: string, env: NodeJS.ProcessEnv = ENV): Promise<TestServer> {
  const server = await startTestServer({ dataDir }, env);
  servers.push(server);
  return server;
}

async function stop(server: TestServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

const rows = async (server: TestServer, sql: string) =>
  expectOkJson<unknown[][]>(await server.request('/rest/api/query', { body: { sql } }), sql);
const catalogOf = (dataDir: string) => fs.readFileSync(path.join(dataDir, 'catalog.json'), 'utf8');
const sourceNames = async (server: TestServer) =>
  (await expectOkJson<Array<{ Name: string }>>(await server.request('/rest/api/source'))).map((s) => s.Name);

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE TABLE ${tag}.items (id int PRIMARY KEY, name text);
    INSERT INTO ${tag}.items VALUES (1, 'one'), (2, 'two'), (3, 'three');`);
  myAdmin = await mysqlConnection();
  await myAdmin.query(
    `CREATE DATABASE ${tag};
     CREATE TABLE ${tag}.m (id int PRIMARY KEY);
     INSERT INTO ${tag}.m VALUES (1), (2);
     CREATE USER '${MY_USER}'@'%' IDENTIFIED BY ?;
     GRANT SELECT ON ${tag}.* TO '${MY_USER}'@'%';`,
    [MY_SECRET],
  );
});

after(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  try {
    await pgAdmin.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
    await pgAdmin.query(`DROP DATABASE IF EXISTS ${lateDb} WITH (FORCE)`);
  } finally {
    await pgAdmin.end();
  }
  try {
    await myAdmin.query(`DROP USER IF EXISTS '${MY_USER}'@'%'; DROP DATABASE IF EXISTS ${tag}`);
  } finally {
    await myAdmin.end();
  }
});

test('config sources exist after start, are queryable, and their secrets are sealed in catalog.json', async () => {
  const dataDir = newDataDir({ sources: [pgSpec('cfgpg'), mySpec('cfgmy')] });
  const server = await start(dataDir);
  try {
    const names = await sourceNames(server);
    assert.ok(names.includes('cfgpg') && names.includes('cfgmy'), names.join(', '));
    assert.ok(names.includes('shop'), 'the demo is there too');
    assert.deepEqual(await rows(server, 'SELECT id, name FROM cfgpg.items ORDER BY id'), [
      [1, 'one'],
      [2, 'two'],
      [3, 'three'],
    ]);
    // MariaDB checks this password: the value from the environment was used.
    assert.deepEqual(await rows(server, 'SELECT count(*) FROM cfgmy.m'), [[2]]);
    const catalog = catalogOf(dataDir);
    assert.ok(!catalog.includes(PG_SECRET), 'no plain pg password');
    assert.ok(!catalog.includes(MY_SECRET) && !catalog.includes(ENV.VDB_TEST_MY_PW), 'no plain MariaDB password');
    assert.ok(!catalog.includes('${env:'), 'no unresolved reference stored');
    const parsed = JSON.parse(catalog) as { sources: Array<{ name: string; secrets: Record<string, string> }> };
    assert.match(parsed.sources.find((s) => s.name === 'cfgpg')?.secrets.password ?? '', /^v1:/);
    assert.match(parsed.sources.find((s) => s.name === 'cfgmy')?.secrets.password ?? '', /^v1:/);
    // The config file itself is left as it was.
    assert.ok(fs.readFileSync(path.join(dataDir, 'vdb.config.json'), 'utf8').includes('${env:VDB_TEST_PG_PW}'));
    const listed = JSON.stringify(await rows(server, 'SELECT * FROM SYSADMIN.DataSources'));
    assert.ok(!listed.includes(PG_SECRET) && !listed.includes(MY_SECRET));
  } finally {
    await stop(server);
  }
  // A restart: the catalog has them already; nothing is duplicated, everything works.
  const again = await start(dataDir);
  try {
    const names = await sourceNames(again);
    assert.equal(names.filter((n) => n === 'cfgpg').length, 1);
    assert.deepEqual(await rows(again, 'SELECT count(*) FROM cfgpg.items'), [[3]]);
    assert.deepEqual(await rows(again, 'SELECT count(*) FROM cfgmy.m'), [[2]]);
  } finally {
    await stop(again);
  }
});

test('a config source that cannot be reached does not stop the server; it is created once reachable', async () => {
  const dataDir = newDataDir({
    sources: [
      pgSpec('cfgdown', { connectionProps: 'host=127.0.0.1,port=1,db=test,user-name=postgres' }),
      pgSpec('cfglate', { connectionProps: `host=127.0.0.1,port=5432,db=${lateDb},user-name=postgres`, modelProps: '' }),
      mySpec('cfgwrongpw', 'not-the-password'),
      pgSpec('cfgok'),
    ],
  });
  const server = await start(dataDir);
  try {
    const names = await sourceNames(server);
    assert.ok(names.includes('cfgok'), names.join(', '));
    assert.deepEqual(await rows(server, 'SELECT count(*) FROM cfgok.items'), [[3]]);
    assert.deepEqual(await rows(server, 'SELECT count(*) > 0 FROM shop.customers'), [[true]]);
    // The unreachable ones answer with an error naming them (400 when not created, or 502/503).
    for (const name of ['cfgdown', 'cfglate', 'cfgwrongpw']) {
      const body = await expectError(
        await server.request('/rest/api/query', { body: { sql: `SELECT * FROM ${name}.items` } }),
        [400, 502, 503],
        name,
      );
      assert.match(body.description, new RegExp(name));
    }
  } finally {
    await stop(server);
  }
  // The database appears; the next start creates the source.
  await pgAdmin.query(`CREATE DATABASE ${lateDb}`);
  const client = await pgClient(lateDb);
  try {
    await client.query('CREATE TABLE t (id int); INSERT INTO t VALUES (1)');
  } finally {
    await client.end();
  }
  const again = await start(dataDir);
  try {
    assert.ok((await sourceNames(again)).includes('cfglate'));
    assert.deepEqual(await rows(again, 'SELECT id FROM cfglate.t'), [[1]]);
  } finally {
    await stop(again);
  }
});

test('VDB_CONFIG names a config file elsewhere', async () => {
  const configDir = newDataDir();
  const configFile = path.join(configDir, 'elsewhere.json');
  fs.writeFileSync(configFile, JSON.stringify({ sources: [pgSpec('cfgelsewhere')] }));
  const dataDir = newDataDir();
  const server = await start(dataDir, { ...ENV, VDB_CONFIG: configFile });
  try {
    assert.deepEqual(await rows(server, 'SELECT count(*) FROM cfgelsewhere.items'), [[3]]);
    assert.ok(!catalogOf(dataDir).includes(PG_SECRET));
  } finally {
    await stop(server);
  }
});

test('a reference to an environment variable that is not set stops the start, naming the variable', async () => {
  const dataDir = newDataDir({ sources: [pgSpec('cfgnoenv')] });
  await assert.rejects(start(dataDir, {}), (err: Error) => {
    assert.match(err.message, /VDB_TEST_PG_PW/);
    assert.ok(!err.message.includes(PG_SECRET));
    return true;
  });
});

test('a secret from the environment is used verbatim, even with a comma in it', async () => {
  const dataDir = newDataDir({ sources: [mySpec('cfgcomma')] });
  const server = await start(dataDir, { ...ENV, VDB_TEST_MY_PW: MY_SECRET });
  try {
    assert.deepEqual(await rows(server, 'SELECT count(*) FROM cfgcomma.m'), [[2]]);
  } finally {
    await stop(server);
  }
});
