/** catalog.url and catalog.schema (config.ts): from the environment, checked before anything starts. */
import assert from 'node:assert/strict';
import os from 'node:os';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';

const dataDir = os.tmpdir();

test('the data directory by default; the catalog database from VDB_CATALOG_URL and VDB_CATALOG_SCHEMA', () => {
  assert.deepEqual(loadConfig({}, { dataDir }).catalog, { url: null, schema: 'vdb' });
  const env = { VDB_CATALOG_URL: 'postgres://vdb@db:5432/vdb', VDB_CATALOG_SCHEMA: 'vdb_prod' };
  assert.deepEqual(loadConfig(env, { dataDir }).catalog, { url: 'postgres://vdb@db:5432/vdb', schema: 'vdb_prod' });
});

test('a URL of another database kind, or a schema name that is not a plain identifier, stops the start', () => {
  assert.throws(() => loadConfig({ VDB_CATALOG_URL: 'mysql://root@db/vdb' }, { dataDir }), /catalog\.url must be a postgres:\/\//);
  assert.throws(() => loadConfig({ VDB_CATALOG_SCHEMA: 'Vdb; DROP' }, { dataDir }), /catalog\.schema must be a lower-case identifier/);
});
