/**
 * The permission model on its own (src/security/permissions.ts): resource names, letters, the
 * deciding entry, readable columns, row conditions and mask composition. The HTTP behaviour
 * built on it is tested in permissions.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ColumnDef, PermissionDef, TableDef, UserDef } from '../../src/catalog/types.js';
import { ApiError } from '../../src/errors.js';
import { AccessPolicy, canonicalPermissions, parseResource } from '../../src/security/permissions.js';

const column = (name: string, position: number): ColumnDef => ({ name, nameInSource: name, type: 'VARCHAR', nullable: true, position });

const customers: TableDef = {
  name: 'customers',
  nameInSource: 'customers',
  kind: 'Table',
  columns: ['id', 'name', 'email', 'country'].map((name, i) => column(name, i + 1)),
  primaryKey: ['id'],
  cardinality: null,
  uid: 'shop.customers',
  oid: 1,
};

const user = (roles: string[]): UserDef => ({
  name: 'u',
  kind: 'password',
  passwordHash: null,
  tokenSecret: 'x',
  databaseUsername: 'u',
  rest: true,
  linkToken: 'l',
  roles,
  createdAt: '2026-01-01T00:00:00Z',
});

const entry = (role: string, resource: string, permissions: string, extra: Partial<PermissionDef> = {}): PermissionDef => ({
  role,
  resource,
  permissions,
  condition: null,
  mask: null,
  maskOrder: null,
  ...extra,
});

const names = (columns: ColumnDef[]) => columns.map((c) => c.name);

describe('resource names and letters', () => {
  test('resources are *, schema, schema.table, schema.table.column; quotes keep dots', () => {
    assert.deepEqual(parseResource('*'), []);
    assert.deepEqual(parseResource('shop'), ['shop']);
    assert.deepEqual(parseResource('shop.*'), ['shop']);
    assert.deepEqual(parseResource(' shop.customers '), ['shop', 'customers']);
    assert.deepEqual(parseResource('shop.customers.email'), ['shop', 'customers', 'email']);
    assert.deepEqual(parseResource('files."orders.csv"'), ['files', 'orders.csv']);
    assert.deepEqual(parseResource('files."a""b"'), ['files', 'a"b']);
    for (const bad of ['', '.', 'a..b', 'a.b.c.d', '"open', 'a."b"c']) assert.throws(() => parseResource(bad), ApiError, bad);
  });

  test('letters are stored in CRUDEA order; anything else, and the word read, is refused', () => {
    assert.equal(canonicalPermissions('rc'), 'CR');
    assert.equal(canonicalPermissions('A E D U R C'), 'CRUDEA');
    assert.equal(canonicalPermissions(''), '');
    for (const bad of ['read', 'READ', 'x', 'RW']) assert.throws(() => canonicalPermissions(bad), ApiError, bad);
  });
});

describe('the deciding entry', () => {
  const permissions = [
    entry('analyst', '*', 'R'),
    entry('analyst', 'shop.customers.email', ''),
    entry('writer', 'shop', 'CRUD'),
    entry('writer', 'shop.customers', 'R'),
  ];

  test('per role, the most specific entry decides', () => {
    const analyst = new AccessPolicy(user(['analyst']), permissions);
    assert.equal(analyst.allows('R', ['files', 'events']), true);
    assert.equal(analyst.allows('R', ['shop', 'customers', 'name']), true);
    assert.equal(analyst.allows('R', ['shop', 'customers', 'email']), false);
    assert.deepEqual(names(analyst.readableColumns('shop', customers)), ['id', 'name', 'country']);
    const writer = new AccessPolicy(user(['writer']), permissions);
    assert.equal(writer.allows('U', ['shop', 'orders']), true);
    // The table's entry (R) wins over the schema's (CRUD) for the table.
    assert.equal(writer.allows('U', ['shop', 'customers']), false);
    assert.equal(writer.allows('R', ['files', 'events']), false);
  });

  test('a user may do what any of their roles may', () => {
    const both = new AccessPolicy(user(['analyst', 'writer']), permissions);
    assert.deepEqual(names(both.readableColumns('shop', customers)), ['id', 'name', 'email', 'country']);
    assert.equal(both.allows('D', ['shop', 'orders']), true);
  });

  test('no role, nothing; the admin role, everything', () => {
    const nobody = new AccessPolicy(user([]), permissions);
    assert.equal(nobody.canRead('shop', customers), false);
    assert.equal(nobody.seesSchema('shop', [customers]), false);
    const denial = (() => {
      try {
        nobody.require('R', ['shop', 'customers']);
      } catch (err) {
        return err as ApiError;
      }
      return null;
    })();
    assert.equal(denial?.status, 403);
    assert.match(denial?.description ?? '', /^Permission READ on table shop\.customers is missing for user "u"\.$/);
    const admin = new AccessPolicy(user(['admin']), []);
    assert.equal(admin.allows('A', []), true);
    assert.equal(admin.rowConditions('R', 'shop', customers), null);
    assert.equal(admin.columnMask('shop', customers, customers.columns[2]!), null);
  });

  test('an entry on a schema shows the schema even without a readable table', () => {
    const alterer = new AccessPolicy(user(['ops']), [entry('ops', 'shop', 'A')]);
    assert.equal(alterer.seesSchema('shop', [customers]), true);
    assert.equal(alterer.canRead('shop', customers), false);
  });
});

describe('row conditions', () => {
  test('ORed across granting roles; a grant without condition sees every row', () => {
    const permissions = [
      entry('de', 'shop.customers', 'R', { condition: "country = 'DE'" }),
      entry('fr', 'shop.customers', 'R', { condition: "country = 'FR'" }),
      entry('all', 'shop', 'R'),
    ];
    assert.deepEqual(new AccessPolicy(user(['de', 'fr']), permissions).rowConditions('R', 'shop', customers), [
      "country = 'DE'",
      "country = 'FR'",
    ]);
    assert.equal(new AccessPolicy(user(['de', 'all']), permissions).rowConditions('R', 'shop', customers), null);
  });

  test('the letters count: a condition of a role that does not grant the action does not apply to it', () => {
    const permissions = [entry('reader', 'shop.customers', 'R', { condition: "country = 'DE'" }), entry('deleter', 'shop.customers', 'D')];
    const policy = new AccessPolicy(user(['reader', 'deleter']), permissions);
    assert.deepEqual(policy.rowConditions('R', 'shop', customers), ["country = 'DE'"]);
    assert.equal(policy.rowConditions('D', 'shop', customers), null);
  });

  test('through a view: the reader needs no grant on the table, but their conditions on it hold', () => {
    const permissions = [entry('viewer', 'views.v', 'R'), entry('limited', 'shop.customers', '', { condition: "country = 'DE'" })];
    assert.equal(new AccessPolicy(user(['viewer']), permissions).rowConditions('R', 'shop', customers, true), null);
    assert.deepEqual(new AccessPolicy(user(['viewer', 'limited']), permissions).rowConditions('R', 'shop', customers, true), [
      "country = 'DE'",
    ]);
  });
});

describe('masks', () => {
  const email = customers.columns[2]!;

  test('highest maskOrder first; the first whose condition holds wins; the value otherwise', () => {
    const permissions = [
      entry('a', 'shop.customers.email', 'R', { mask: "'a'", maskOrder: 1 }),
      entry('b', 'shop.customers.email', 'R', { mask: "'b'", condition: "country = 'DE'", maskOrder: 5 }),
    ];
    assert.equal(
      new AccessPolicy(user(['a', 'b']), permissions).columnMask('shop', customers, email),
      "CASE WHEN (country = 'DE') THEN ('b') ELSE ('a') END",
    );
    assert.equal(
      new AccessPolicy(user(['b']), permissions).columnMask('shop', customers, email),
      `CASE WHEN (country = 'DE') THEN ('b') ELSE "email" END`,
    );
    assert.equal(new AccessPolicy(user(['a']), permissions).columnMask('shop', customers, email), "('a')");
    assert.equal(new AccessPolicy(user(['c']), permissions).columnMask('shop', customers, email), null);
  });
});
