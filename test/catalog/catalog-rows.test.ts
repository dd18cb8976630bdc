/** The catalog as rows of the catalog database (catalog/catalog-rows.ts): a round trip, and a change writes only what changed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { catalogOf, diffRows, rowsOf } from '../../src/catalog/catalog-rows.js';
import type { CatalogData, UserDef } from '../../src/catalog/types.js';

const user = (name: string): UserDef => ({
  name,
  kind: 'password',
  passwordHash: 'scrypt$x',
  tokenSecret: `secret-${name}`,
  databaseUsername: name,
  rest: false,
  linkToken: `link-${name}`,
  roles: [],
  createdAt: '2026-01-01T00:00:00.000Z',
});

const sample = (): CatalogData => ({
  formatVersion: 1,
  sources: [],
  users: [user('admin'), user('bob'), user('carol')],
  roles: ['readers', 'writers'],
  permissions: [
    { role: 'readers', resource: 'shop', permissions: 'R', condition: null, mask: null, maskOrder: null },
    { role: 'readers', resource: 'shop.orders', permissions: 'R', condition: "region = 'EU'", mask: null, maskOrder: null },
  ],
  initialized: true,
  nextOid: 1234,
});

test('rows and back give the same catalog, in the same order', () => {
  const catalog = sample();
  const rows = [...rowsOf(catalog).values()].reverse();
  assert.deepEqual(catalogOf(rows, { nextOid: 1234, initialized: true }), catalog);
});

test('a change writes the rows it changed and deletes the rows it removed, nothing else', () => {
  const before = sample();
  const after = structuredClone(before);
  after.users[2]!.tokenSecret = 'revoked';
  after.roles = ['readers'];
  after.users.push(user('dave'));
  const { upserts, deletes } = diffRows(before, after);
  assert.deepEqual(
    upserts.map((r) => `${r.kind}:${r.key}`),
    ['users:carol', 'users:dave'],
  );
  assert.deepEqual(deletes, [{ kind: 'roles', key: 'writers' }]);
  assert.deepEqual(diffRows(after, structuredClone(after)), { upserts: [], deletes: [] });
});

test('items with the same key are kept apart, not merged', () => {
  const catalog = sample();
  catalog.permissions!.push({ ...catalog.permissions![0]!, permissions: 'CR' });
  const rows = [...rowsOf(catalog).values()].filter((r) => r.kind === 'permissions');
  assert.equal(rows.length, 3);
  assert.deepEqual(catalogOf(rows, { nextOid: 1, initialized: false }).permissions, catalog.permissions);
});
