import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { deparseSync } from 'pgsql-deparser';
import { loadConfig } from '../../src/config.js';
import { bindStatement } from '../../src/engine/access/bind.js';
import { AccessPolicy } from '../../src/security/permissions.js';
import { parseStatement } from '../../src/engine/front/parse.js';
import { ApiError } from '../../src/errors.js';
import { createServices, type Services } from '../../src/services.js';

let services: Services;
let dataDir: string;
before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bind-'));
  services = await createServices(loadConfig({}, { dataDir, adminPassword: 'bind-test-pw' }), pino({ level: 'silent' }));
});
after(async () => {
  await services.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const administrator = () => new AccessPolicy(services.users.find('admin')!, services.registry.permissions);
const bind = (sql: string) => bindStatement(parseStatement(sql), services.registry, 'vdb', administrator());
const bindError = (sql: string): ApiError => {
  try {
    bind(sql);
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return err;
  }
  assert.fail(`expected ${sql} to be refused`);
};

test('file tables are rewritten to their engine views, keeping the written name as alias', () => {
  const bound = bind('SELECT regions.region FROM files.regions');
  const sql = deparseSync(bound.ast);
  assert.match(sql, /FROM src_\d+\.regions AS regions/);
  assert.equal(bound.tables.length, 1);
  assert.equal(bound.tables[0]?.resolved.origin, 'native');
});

test('SQLite tables are loaded under a temporary name', () => {
  const bound = bind('SELECT o.id FROM shop.orders o JOIN shop.orders p ON p.id = o.id');
  assert.equal(bound.tables.length, 1, 'one load per table, however often it is referenced');
  assert.equal(bound.tables[0]?.resolved.origin, 'rows');
  assert.match(deparseSync(bound.ast), /__vdb_rows_1 AS o/);
});

test('names are case-insensitive, and unique bare table names resolve', () => {
  assert.equal(bind('SELECT * FROM SHOP.Customers').tables[0]?.resolved.table.name, 'customers');
  assert.equal(bind('SELECT * FROM customers').tables[0]?.resolved.schema, 'shop');
  assert.equal(bind('SELECT * FROM sys.tables').tables[0]?.resolved.origin, 'system');
});

test('schema-qualified column references drop the schema', () => {
  const sql = deparseSync(bind('SELECT shop.customers.id, vdb.shop.customers.name FROM shop.customers').ast);
  assert.match(sql, /customers\.id/);
  assert.doesNotMatch(sql, /shop\./);
});

test('CTE names are not looked up in the catalog', () => {
  const bound = bind('WITH c AS (SELECT 1 AS x) SELECT * FROM c');
  assert.equal(bound.tables.length, 0);
});

test('unknown schema and table are 404, another database name too', () => {
  assert.equal(bindError('SELECT * FROM nope.t').status, 404);
  assert.equal(bindError('SELECT * FROM shop.nope').status, 404);
  assert.equal(bindError('SELECT * FROM otherdb.shop.customers').status, 404);
});

test('only SELECT statements are accepted', () => {
  for (const sql of [
    'INSERT INTO shop.orders VALUES (1)',
    'DROP TABLE shop.orders',
    "COPY shop.orders TO '/tmp/x'",
    'SET x = 1',
    'SELECT 1 INTO t',
  ]) {
    assert.equal(bindError(sql).status, 400, sql);
  }
});

test('engine functions that reach files or settings are refused', () => {
  for (const sql of [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT read_text('/etc/passwd')",
    'SELECT * FROM duckdb_settings()',
    "SELECT current_setting('memory_limit')",
    "SELECT * FROM glob('/*')",
    "SELECT x.read_blob('a')",
  ]) {
    const err = bindError(sql);
    assert.ok(err.status === 400 || err.status === 404, `${sql}: ${err.status}`);
  }
  assert.equal(bind('SELECT * FROM generate_series(1, 3)').tables.length, 0);
  assert.equal(bind("SELECT pg_catalog.lower('A')").tables.length, 0);
});
