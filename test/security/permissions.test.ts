/**
 * Permissions (SYSADMIN.setPermissions) over HTTP, as clients see them: a matrix of users ×
 * objects × actions with the exact status of each combination, then one block per rule: the
 * procedure's own checks, what the system tables show whom, reads without grants, hidden
 * columns, row conditions (CURRENT_USER included), masks, writes under grants and conditions,
 * the source procedures and endpoints, EXPLAIN, views, read-only API keys and cursors.
 *
 * Every refusal must be the JSON error body {title, description, hint}; a missing permission
 * names the permission, the object and the user.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, basicOf, okJson } from '../http/util.js';

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Every test user's password (the admin's is the harness's). */
const passwordOf = (user: string) => `${user}-pass-1`;

/** A SQL string literal, or NULL. */
const lit = (value: string | null | undefined) => (value === null || value === undefined ? 'NULL' : `'${value.replace(/'/g, "''")}'`);

/** The description of a missing permission, exactly as the server words it. */
const missing = (permission: string, object: string, user: string) =>
  `Permission ${permission} on ${object} is missing for user "${user}".`;

const adminOnly = (procedure: string) => `Only administrators may call ${procedure}.`;

interface Grant {
  condition?: string | null;
  mask?: string | null;
  maskOrder?: number | null;
}

/** One vdb server and the test's ways of talking to it as the different users. */
class Vdb {
  private constructor(readonly server: TestServer) {}

  static async start(): Promise<Vdb> {
    return new Vdb(await startTestServer());
  }

  close(): Promise<void> {
    return this.server.close();
  }

  authOf(user: string): string {
    return user === 'admin' ? this.server.basic() : basicOf(user, passwordOf(user));
  }

  /** Any request as `user` (JSON body; GET without a body). */
  request(
    user: string,
    pathAndQuery: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    return this.server.request(pathAndQuery, { ...init, headers: { authorization: this.authOf(user), ...init.headers } });
  }

  /** POST /rest/api/query as `user`. */
  query(user: string, sql: string, params = ''): Promise<Response> {
    return this.request(user, `/rest/api/query${params}`, { body: { sql } });
  }

  /** The rows of a statement that must succeed. */
  async rows<T = unknown[]>(user: string, sql: string, params = ''): Promise<T[]> {
    return okJson<T[]>(await this.query(user, sql, params), `${user}: ${sql}`);
  }

  admin<T = unknown[]>(sql: string, params = ''): Promise<T[]> {
    return this.rows<T>('admin', sql, params);
  }

  /** A statement that must fail with `status` and, where given, exactly this description. */
  async refused(user: string, sql: string, status: number, description?: string | RegExp): Promise<{ title: string; description: string }> {
    const body = await assertApiError(await this.query(user, sql), status, `${user}: ${sql}`);
    if (typeof description === 'string') assert.equal(body.description, description, `${user}: ${sql}`);
    else if (description) assert.match(body.description, description, `${user}: ${sql}`);
    return body;
  }

  /** A 403 naming the permission and the object ('table shop.orders', 'column shop.orders.id'). */
  denied(user: string, sql: string, permission: string, object: string) {
    return this.refused(user, sql, 403, missing(permission, object, user));
  }

  async addRole(role: string): Promise<void> {
    await this.admin(`CALL SYSADMIN.addRole(${lit(role)})`);
  }

  async addUser(user: string, ...roles: string[]): Promise<void> {
    await this.admin(`CALL SYSADMIN.addUser(${lit(user)}, ${lit(passwordOf(user))})`);
    for (const role of roles) await this.admin(`CALL SYSADMIN.addUserRole(${lit(role)}, ${lit(user)})`);
  }

  /** setPermissions as the admin; `permissions` null removes the entry. */
  async grant(role: string, resource: string, permissions: string | null, grant: Grant = {}): Promise<void> {
    const order = grant.maskOrder === undefined || grant.maskOrder === null ? 'NULL' : String(grant.maskOrder);
    await this.admin(
      `CALL SYSADMIN.setPermissions(${lit(role)}, ${lit(resource)}, ${lit(permissions)}, ${lit(grant.condition)}, ${lit(grant.mask)}, ${order})`,
    );
  }

  /** A role with these entries, and a user holding just that role (both named `name`). */
  async userWith(name: string, entries: Array<[resource: string, permissions: string, grant?: Grant]>): Promise<string> {
    await this.addRole(name);
    for (const [resource, permissions, grant] of entries) await this.grant(name, resource, permissions, grant);
    await this.addUser(name, name);
    return name;
  }

  /** How many rows a statement counts (as the admin unless another user is given). */
  async count(sql: string, user = 'admin'): Promise<number> {
    const rows = await this.rows<[number]>(user, sql);
    return Number(rows[0]![0]);
  }
}

/** Sorted copy, for order-free comparisons. */
const sorted = <T>(values: T[]) => [...values].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

/** The schemas GET /rest/api/source lists for `user`. */
async function sourceList(vdb: Vdb, user: string): Promise<string[]> {
  const list = await okJson<Array<{ Name: string }>>(await vdb.request(user, '/rest/api/source'), `${user}: GET /rest/api/source`);
  return list.map((s) => s.Name);
}

const SYSTEM_SCHEMAS = ['SYS', 'SYSADMIN', 'SYSLOG'];

// ---------------------------------------------------------------------------------------------
// The main server: the matrix users and the read-only rules. Tests that write or change
// sources have servers of their own.
// ---------------------------------------------------------------------------------------------

let vdb: Vdb;

const MATRIX_USERS = ['admin', 'reader', 'writer', 'executor', 'nobody'] as const;
type MatrixUser = (typeof MATRIX_USERS)[number];

before(async () => {
  vdb = await Vdb.start();
  // reader: R on shop. writer: R on shop and CRUD on shop.orders. executor: EXECUTE on
  // refreshDataSource and ALTER on shop (but no READ). nobody: no role at all.
  await vdb.userWith('reader', [['shop', 'R']]);
  await vdb.userWith('writer', [
    ['shop', 'R'],
    ['shop.orders', 'CRUD'],
  ]);
  await vdb.userWith('executor', [
    ['SYSADMIN.refreshDataSource', 'E'],
    ['shop', 'A'],
  ]);
  await vdb.addUser('nobody');
  // A role nobody holds, for the matrix's "grant on the object" action.
  await vdb.addRole('probe');
});
after(async () => vdb?.close());

// ---------------------------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------------------------

/** What one user must get: 200 (with these rows where given) or an error status and description. */
type Outcome = { status: 200; rows?: unknown[] } | { status: 400 | 403; description: string | RegExp };

const ok = (rows?: unknown[]): Outcome => ({ status: 200, rows });
const no =
  (permission: string, object: string) =>
  (user: string): Outcome => ({ status: 403, description: missing(permission, object, user) });
const onlyAdmins = (procedure: string): Outcome => ({ status: 403, description: adminOnly(procedure) });
const readOnlySystemTable = (table: string): Outcome => ({
  status: 403,
  description: `${table} cannot be written: system tables are read-only.`,
});
/** The parser lower-cases unquoted names, so the message may spell the name in lower case. */
const noProcedure = (name: string): Outcome => ({
  status: 400,
  description: new RegExp(`^Procedure "${name.replace('.', '\\.')}" does not exist\\.$`, 'i'),
});

interface Cell {
  object: string;
  action: 'read' | 'write' | 'execute' | 'admin';
  /** The statement (with `$user` replaced by the user's name). */
  sql: string;
  expect: Record<MatrixUser, Outcome | ((user: string) => Outcome)>;
}

/**
 * read: look at the object; write: change it; execute: CALL it; admin: administer it (grant on it,
 * or for user administration, add a user). Objects that cannot be changed or called say so the
 * same way to everyone, administrators included.
 */
const MATRIX: Cell[] = [
  // The table shop.orders.
  {
    object: 'shop.orders',
    action: 'read',
    sql: 'SELECT count(*) FROM shop.orders',
    expect: {
      admin: ok([[2000]]),
      reader: ok([[2000]]),
      writer: ok([[2000]]),
      executor: no('READ', 'table shop.orders'),
      nobody: no('READ', 'table shop.orders'),
    },
  },
  {
    object: 'shop.orders',
    action: 'write',
    sql: 'UPDATE shop.orders SET status = status WHERE id = 1',
    expect: {
      admin: ok([[1]]),
      reader: no('UPDATE', 'table shop.orders'),
      writer: ok([[1]]),
      executor: no('UPDATE', 'table shop.orders'),
      nobody: no('UPDATE', 'table shop.orders'),
    },
  },
  {
    object: 'shop.orders',
    action: 'execute',
    sql: 'CALL shop.orders()',
    expect: {
      admin: noProcedure('shop.orders'),
      reader: noProcedure('shop.orders'),
      writer: noProcedure('shop.orders'),
      executor: noProcedure('shop.orders'),
      nobody: noProcedure('shop.orders'),
    },
  },
  {
    object: 'shop.orders',
    action: 'admin',
    sql: "CALL SYSADMIN.setPermissions('probe', 'shop.orders', 'R')",
    expect: {
      admin: ok([['probe', 'shop.orders', 'R', 'set']]),
      reader: onlyAdmins('SYSADMIN.setPermissions'),
      writer: onlyAdmins('SYSADMIN.setPermissions'),
      executor: onlyAdmins('SYSADMIN.setPermissions'),
      nobody: onlyAdmins('SYSADMIN.setPermissions'),
    },
  },
  // The system table SYS.Tables: readable by everyone, showing what each may read.
  {
    object: 'SYS.Tables',
    action: 'read',
    sql: `SELECT count(*) FILTER (WHERE "SchemaName" IN ('SYS', 'SYSADMIN', 'SYSLOG')), count(*) FILTER (WHERE "SchemaName" = 'shop'), count(*) FILTER (WHERE "SchemaName" = 'files') FROM SYS.Tables`,
    expect: {
      admin: ok([[14, 4, 4]]),
      reader: ok([[14, 4, 0]]),
      writer: ok([[14, 4, 0]]),
      executor: ok([[14, 0, 0]]),
      nobody: ok([[14, 0, 0]]),
    },
  },
  {
    object: 'SYS.Tables',
    action: 'write',
    sql: `DELETE FROM SYS.Tables WHERE "Name" = 'orders'`,
    expect: {
      admin: readOnlySystemTable('SYS.Tables'),
      reader: readOnlySystemTable('SYS.Tables'),
      writer: readOnlySystemTable('SYS.Tables'),
      executor: readOnlySystemTable('SYS.Tables'),
      nobody: readOnlySystemTable('SYS.Tables'),
    },
  },
  {
    object: 'SYS.Tables',
    action: 'execute',
    sql: 'CALL SYS.Tables()',
    expect: {
      admin: noProcedure('SYS.Tables'),
      reader: noProcedure('SYS.Tables'),
      writer: noProcedure('SYS.Tables'),
      executor: noProcedure('SYS.Tables'),
      nobody: noProcedure('SYS.Tables'),
    },
  },
  {
    object: 'SYS.Tables',
    action: 'admin',
    sql: "CALL SYSADMIN.setPermissions('probe', 'SYS.Tables', 'R')",
    expect: {
      admin: ok([['probe', 'SYS.Tables', 'R', 'set']]),
      reader: onlyAdmins('SYSADMIN.setPermissions'),
      writer: onlyAdmins('SYSADMIN.setPermissions'),
      executor: onlyAdmins('SYSADMIN.setPermissions'),
      nobody: onlyAdmins('SYSADMIN.setPermissions'),
    },
  },
  // The procedure SYSADMIN.refreshDataSource: its grants are read in SYSADMIN.Permissions.
  {
    object: 'SYSADMIN.refreshDataSource',
    action: 'read',
    sql: `SELECT "RoleName", "Permissions" FROM SYSADMIN.Permissions WHERE "ResourceName" = 'SYSADMIN.refreshDataSource'`,
    expect: { admin: ok([['executor', 'E']]), reader: ok([]), writer: ok([]), executor: ok([['executor', 'E']]), nobody: ok([]) },
  },
  {
    object: 'SYSADMIN.refreshDataSource',
    action: 'write',
    sql: `DELETE FROM SYSADMIN.Permissions WHERE "ResourceName" = 'SYSADMIN.refreshDataSource'`,
    expect: {
      admin: readOnlySystemTable('SYSADMIN.Permissions'),
      reader: readOnlySystemTable('SYSADMIN.Permissions'),
      writer: readOnlySystemTable('SYSADMIN.Permissions'),
      executor: readOnlySystemTable('SYSADMIN.Permissions'),
      nobody: readOnlySystemTable('SYSADMIN.Permissions'),
    },
  },
  {
    object: 'SYSADMIN.refreshDataSource',
    action: 'execute',
    sql: "CALL SYSADMIN.refreshDataSource('shop')",
    expect: {
      admin: ok([['shop', 'sqlite', 4]]),
      reader: no('EXECUTE', 'procedure SYSADMIN.refreshDataSource'),
      writer: no('EXECUTE', 'procedure SYSADMIN.refreshDataSource'),
      executor: ok([['shop', 'sqlite', 4]]),
      nobody: no('EXECUTE', 'procedure SYSADMIN.refreshDataSource'),
    },
  },
  {
    object: 'SYSADMIN.refreshDataSource',
    action: 'admin',
    sql: "CALL SYSADMIN.setPermissions('probe', 'SYSADMIN.refreshDataSource', 'E')",
    expect: {
      admin: ok([['probe', 'SYSADMIN.refreshDataSource', 'E', 'set']]),
      reader: onlyAdmins('SYSADMIN.setPermissions'),
      writer: onlyAdmins('SYSADMIN.setPermissions'),
      executor: onlyAdmins('SYSADMIN.setPermissions'),
      nobody: onlyAdmins('SYSADMIN.setPermissions'),
    },
  },
  // User administration (SYSADMIN.addUser and SYSADMIN.Users).
  {
    object: 'SYSADMIN.addUser',
    action: 'read',
    sql: `SELECT "Name" FROM SYSADMIN.Users WHERE "Name" IN ('admin', 'reader', 'writer', 'executor', 'nobody') ORDER BY "Name"`,
    expect: {
      admin: ok([['admin'], ['executor'], ['nobody'], ['reader'], ['writer']]),
      reader: ok([['reader']]),
      writer: ok([['writer']]),
      executor: ok([['executor']]),
      nobody: ok([['nobody']]),
    },
  },
  {
    object: 'SYSADMIN.addUser',
    action: 'write',
    sql: `UPDATE SYSADMIN.Users SET "Rest" = true WHERE "Name" = '$user'`,
    expect: {
      admin: readOnlySystemTable('SYSADMIN.Users'),
      reader: readOnlySystemTable('SYSADMIN.Users'),
      writer: readOnlySystemTable('SYSADMIN.Users'),
      executor: readOnlySystemTable('SYSADMIN.Users'),
      nobody: readOnlySystemTable('SYSADMIN.Users'),
    },
  },
  {
    object: 'SYSADMIN.addUser',
    action: 'execute',
    sql: "CALL SYSADMIN.addUser('made_by_$user', 'made-pass-123')",
    expect: {
      admin: ok([['made_by_admin', 'added']]),
      reader: onlyAdmins('SYSADMIN.addUser'),
      writer: onlyAdmins('SYSADMIN.addUser'),
      executor: onlyAdmins('SYSADMIN.addUser'),
      nobody: onlyAdmins('SYSADMIN.addUser'),
    },
  },
  {
    object: 'SYSADMIN.addUser',
    action: 'admin',
    sql: "CALL SYSADMIN.setPermissions('probe', 'SYSADMIN.addUser', 'E')",
    expect: {
      admin: ok([['probe', 'SYSADMIN.addUser', 'E', 'set']]),
      reader: onlyAdmins('SYSADMIN.setPermissions'),
      writer: onlyAdmins('SYSADMIN.setPermissions'),
      executor: onlyAdmins('SYSADMIN.setPermissions'),
      nobody: onlyAdmins('SYSADMIN.setPermissions'),
    },
  },
];

describe('matrix: users × objects × actions', () => {
  for (const cell of MATRIX) {
    for (const user of MATRIX_USERS) {
      const expected = cell.expect[user];
      const outcome = typeof expected === 'function' ? expected(user) : expected;
      const sql = cell.sql.replaceAll('$user', user);
      test(`${cell.object} / ${cell.action} / ${user}: ${outcome.status}`, async () => {
        if (outcome.status === 200) {
          const rows = await vdb.rows(user, sql);
          if (outcome.rows) assert.deepEqual(rows, outcome.rows, `${user}: ${sql}`);
        } else {
          await vdb.refused(user, sql, outcome.status, outcome.description);
        }
      });
    }
  }

  test('the refusals changed nothing: the users added are only the admin’s', async () => {
    assert.deepEqual(await vdb.admin(`SELECT "Name" FROM SYSADMIN.Users WHERE "Name" LIKE 'made_by_%'`), [['made_by_admin']]);
  });
});

// ---------------------------------------------------------------------------------------------
// SYSADMIN.setPermissions itself
// ---------------------------------------------------------------------------------------------

describe('SYSADMIN.setPermissions', () => {
  const call = (args: string, user = 'admin') => vdb.query(user, `CALL SYSADMIN.setPermissions(${args})`);
  const entriesOf = (role: string) =>
    vdb.admin(
      `SELECT "ResourceName", "Permissions", "Condition", "Mask", "MaskOrder" FROM SYSADMIN.Permissions WHERE "RoleName" = ${lit(role)} ORDER BY "ResourceName"`,
    );

  before(async () => {
    await vdb.addRole('sp');
  });

  test('sets, canonicalises, replaces and removes an entry', async () => {
    assert.deepEqual(await vdb.admin("CALL SYSADMIN.setPermissions('sp', 'shop.products', 'dcru')", '?headers=true'), [
      ['Role', 'Resource', 'Permissions', 'Action'],
      ['sp', 'shop.products', 'CRUD', 'set'],
    ]);
    assert.deepEqual(await entriesOf('sp'), [['shop.products', 'CRUD', null, null, null]]);
    // The entry is replaced whole (letters and condition), also under another spelling of the name.
    await vdb.grant('sp', 'shop.products', 'R', { condition: "category = 'books'" });
    await vdb.grant('sp', 'SHOP.Products', 'RU');
    assert.deepEqual(await entriesOf('sp'), [['SHOP.Products', 'RU', null, null, null]]);
    // '' is an explicit "nothing", kept as an entry; NULL removes the entry.
    await vdb.grant('sp', 'shop.products', '');
    assert.deepEqual(await entriesOf('sp'), [['shop.products', '', null, null, null]]);
    assert.deepEqual(await vdb.admin("CALL SYSADMIN.setPermissions('sp', 'shop.products', NULL)"), [
      ['sp', 'shop.products', null, 'removed'],
    ]);
    assert.deepEqual(await entriesOf('sp'), []);
  });

  test('named arguments, a column mask with its condition and order', async () => {
    await vdb.admin(
      "CALL SYSADMIN.setPermissions(role => 'sp', resourceName => 'shop.customers.email', permissions => 'R', condition => 'country = ''DE''', mask => '''***''', maskOrder => 3)",
    );
    assert.deepEqual(await entriesOf('sp'), [['shop.customers.email', 'R', "country = 'DE'", "'***'", 3]]);
    await vdb.grant('sp', 'shop.customers.email', null);
  });

  test('the resources it accepts: *, schema, table, column, procedure', async () => {
    for (const resource of [
      '*',
      'shop',
      'files',
      'shop.customers',
      'files.regions',
      'shop.customers.email',
      'SYSADMIN.refreshDataSource',
      'SYSADMIN.createConnection',
      'SYS.Tables',
    ]) {
      await vdb.grant('sp', resource, 'R');
      await vdb.grant('sp', resource, null);
    }
    assert.deepEqual(await entriesOf('sp'), []);
  });

  test('an unknown role and the admin role are 400', async () => {
    const unknown = await assertApiError(await call("'no_such_role', 'shop', 'R'"), 400, 'unknown role');
    assert.equal(unknown.title, 'Invalid query');
    assert.match(unknown.description, /no_such_role/);
    const adminRole = await assertApiError(await call("'admin', 'shop', 'R'"), 400, 'admin role');
    assert.match(adminRole.description, /admin role/);
    assert.deepEqual(await vdb.admin(`SELECT count(*) FROM SYSADMIN.Permissions WHERE "RoleName" IN ('admin', 'no_such_role')`), [[0]]);
  });

  test('an unknown schema, table, column or procedure is 400', async () => {
    for (const resource of ['nowhere', 'nowhere.customers', 'shop.nothing', 'shop.customers.nothing', 'SYSADMIN.noSuchProcedure']) {
      await assertApiError(await call(`'sp', ${lit(resource)}, 'R'`), 400, resource);
    }
    assert.deepEqual(await entriesOf('sp'), []);
  });

  test('invalid letters and invalid resource names are 400', async () => {
    for (const letters of ['RX', 'R,W', 'all', '*']) {
      const body = await assertApiError(await call(`'sp', 'shop', ${lit(letters)}`), 400, letters);
      assert.equal(body.title, 'Invalid permissions', letters);
    }
    for (const resource of ['', 'shop..customers', 'a.b.c.d', '"shop']) {
      await assertApiError(await call(`'sp', ${lit(resource)}, 'R'`), 400, `resource ${resource}`);
    }
    assert.deepEqual(await entriesOf('sp'), []);
  });

  test('a mask only on a column; a condition on a table, or on a column with a mask', async () => {
    // Masks on anything but a column.
    for (const resource of ['*', 'shop', 'shop.customers']) {
      await assertApiError(await call(`'sp', ${lit(resource)}, 'R', NULL, '''x'''`), 400, `mask on ${resource}`);
    }
    // Conditions on '*' or a schema; a column condition without a mask.
    for (const resource of ['*', 'shop']) {
      await assertApiError(await call(`'sp', ${lit(resource)}, 'R', 'id = 1'`), 400, `condition on ${resource}`);
    }
    await assertApiError(await call("'sp', 'shop.customers.email', 'R', 'id = 1'"), 400, 'column condition without mask');
    assert.deepEqual(await entriesOf('sp'), []);
  });

  test('invalid SQL in a condition or mask is 400, and so is a bad maskOrder', async () => {
    for (const condition of ['country =', 'id = 1; DROP TABLE x', "country = 'DE' ORDER BY 1", 'id = = 1']) {
      await assertApiError(await call(`'sp', 'shop.customers', 'R', ${lit(condition)}`), 400, `condition ${condition}`);
    }
    for (const mask of ["'x", 'upper(', 'email email email']) {
      await assertApiError(await call(`'sp', 'shop.customers.email', 'R', NULL, ${lit(mask)}`), 400, `mask ${mask}`);
    }
    await assertApiError(await call("'sp', 'shop.customers.email', 'R', NULL, '''x''', 'first'"), 400, 'maskOrder');
    assert.deepEqual(await entriesOf('sp'), []);
  });

  test('a condition may read other tables, which must exist and not be views', async () => {
    await assertApiError(
      await call("'sp', 'shop.customers', 'R', 'id IN (SELECT customer_id FROM shop.nosuch)'"),
      400,
      'unknown table in a condition',
    );
    await vdb.admin('CREATE VIEW condviews.de AS SELECT id FROM shop.customers');
    const view = await assertApiError(
      await call("'sp', 'shop.customers', 'R', 'id IN (SELECT id FROM condviews.de)'"),
      400,
      'view in a condition',
    );
    assert.match(view.description, /cannot read a view \(condviews\.de\)/);
    await vdb.admin('DROP VIEW condviews.de');
    assert.deepEqual(await entriesOf('sp'), []);
  });

  test('only administrators may call it, even with every letter on everything', async () => {
    await vdb.userWith('almighty', [['*', 'CRUDEA']]);
    await vdb.refused('almighty', "CALL SYSADMIN.setPermissions('almighty', 'shop', 'R')", 403, adminOnly('SYSADMIN.setPermissions'));
    await vdb.refused('nobody', "CALL SYSADMIN.setPermissions('sp', 'shop', 'R')", 403, adminOnly('SYSADMIN.setPermissions'));
    assert.deepEqual(await entriesOf('sp'), []);
    assert.deepEqual(await entriesOf('almighty'), [['*', 'CRUDEA', null, null, null]]);
  });

  test('a change applies to the next statement of a signed-in user', async () => {
    await vdb.userWith('switching', []);
    await vdb.denied('switching', 'SELECT count(*) FROM shop.products', 'READ', 'table shop.products');
    await vdb.grant('switching', 'shop.products', 'R');
    assert.deepEqual(await vdb.rows('switching', 'SELECT count(*) FROM shop.products'), [[50]]);
    await vdb.grant('switching', 'shop.products', null);
    await vdb.denied('switching', 'SELECT count(*) FROM shop.products', 'READ', 'table shop.products');
    // Taking the role away works the same way.
    await vdb.grant('switching', 'shop.products', 'R');
    await vdb.admin("CALL SYSADMIN.removeUserRole('switching', 'switching')");
    await vdb.denied('switching', 'SELECT count(*) FROM shop.products', 'READ', 'table shop.products');
  });
});

// ---------------------------------------------------------------------------------------------
// What the system tables show
// ---------------------------------------------------------------------------------------------

describe('system tables show each user only their part', () => {
  before(async () => {
    // A second member of reader's role: reader must not see them.
    await vdb.addUser('reader_two', 'reader');
    await vdb.userWith('colhidden', [
      ['shop.customers', 'R'],
      ['shop.customers.email', ''],
    ]);
  });

  test('SYSADMIN.Permissions: admins see every entry, others their roles’ entries only', async () => {
    const all = await vdb.admin<[string, string, string]>(`SELECT "RoleName", "ResourceName", "Permissions" FROM SYSADMIN.Permissions`);
    for (const entry of [
      ['reader', 'shop', 'R'],
      ['writer', 'shop', 'R'],
      ['writer', 'shop.orders', 'CRUD'],
      ['executor', 'SYSADMIN.refreshDataSource', 'E'],
      ['executor', 'shop', 'A'],
    ]) {
      assert.ok(
        all.some((row) => JSON.stringify(row) === JSON.stringify(entry)),
        `admin sees ${entry.join(' ')}`,
      );
    }
    assert.deepEqual(await vdb.rows('reader', 'SELECT * FROM SYSADMIN.Permissions'), [['reader', 'shop', 'R', null, null, null]]);
    assert.deepEqual(sorted(await vdb.rows('writer', `SELECT "RoleName", "ResourceName", "Permissions" FROM SYSADMIN.Permissions`)), [
      ['writer', 'shop', 'R'],
      ['writer', 'shop.orders', 'CRUD'],
    ]);
    assert.deepEqual(await vdb.rows('nobody', 'SELECT * FROM SYSADMIN.Permissions'), []);
  });

  test('SYSADMIN.Users: non-admins see only themselves', async () => {
    assert.deepEqual(await vdb.rows('reader', 'SELECT "Name", "Roles" FROM SYSADMIN.Users'), [['reader', 'reader']]);
    assert.deepEqual(await vdb.rows('nobody', 'SELECT "Name" FROM SYSADMIN.Users'), [['nobody']]);
    assert.deepEqual(await vdb.rows('nobody', `SELECT count(*) FROM SYSADMIN.Users WHERE "Name" = 'admin'`), [[0]]);
    const names = (await vdb.admin<[string]>('SELECT "Name" FROM SYSADMIN.Users')).map((r) => r[0]);
    for (const name of ['admin', 'reader', 'reader_two', 'nobody']) assert.ok(names.includes(name), name);
  });

  test('SYSADMIN.Roles: only the user’s roles, and of their members only the user', async () => {
    assert.deepEqual(await vdb.rows('reader', 'SELECT "Name", "Users" FROM SYSADMIN.Roles'), [['reader', 'reader']]);
    assert.deepEqual(await vdb.rows('reader_two', 'SELECT "Name", "Users" FROM SYSADMIN.Roles'), [['reader', 'reader_two']]);
    assert.deepEqual(await vdb.rows('nobody', 'SELECT * FROM SYSADMIN.Roles'), []);
    const adminView = await vdb.admin<[string, string]>(
      `SELECT "Name", "Users" FROM SYSADMIN.Roles WHERE "Name" IN ('admin', 'reader') ORDER BY "Name"`,
    );
    assert.equal(adminView[0]![0], 'admin');
    assert.match(adminView[1]![1], /reader.*reader_two|reader_two.*reader/, 'admins see every member');
  });

  test('SYS.Schemas and SYSADMIN.DataSources: system schemas and what the user may see', async () => {
    const schemas = (user: string) =>
      vdb.rows<[string]>(user, 'SELECT "Name" FROM SYS.Schemas ORDER BY "Name"').then((r) => r.map((x) => x[0]));
    assert.deepEqual(await schemas('nobody'), SYSTEM_SCHEMAS);
    assert.deepEqual(await schemas('reader'), [...SYSTEM_SCHEMAS, 'shop']);
    // An entry on the schema shows it, even without READ.
    assert.deepEqual(await schemas('executor'), [...SYSTEM_SCHEMAS, 'shop']);
    const adminSchemas = await schemas('admin');
    assert.ok(adminSchemas.includes('shop') && adminSchemas.includes('files'));
    assert.deepEqual(await vdb.rows('nobody', 'SELECT "Name" FROM SYSADMIN.DataSources'), []);
    assert.deepEqual(await vdb.rows('reader', 'SELECT "Name" FROM SYSADMIN.DataSources'), [['shop']]);
    assert.deepEqual(sorted(await vdb.admin('SELECT "Name" FROM SYSADMIN.DataSources')), [['files'], ['shop']]);
  });

  test('SYS.Tables and SYS.Columns: only readable tables and columns (system ones always)', async () => {
    assert.deepEqual(
      await vdb.rows('colhidden', `SELECT "SchemaName", "Name" FROM SYS.Tables WHERE "SchemaName" NOT IN ('SYS', 'SYSADMIN', 'SYSLOG')`),
      [['shop', 'customers']],
    );
    assert.deepEqual(await vdb.rows('colhidden', `SELECT "Name" FROM SYS.Columns WHERE "SchemaName" = 'shop' ORDER BY "Position"`), [
      ['id'],
      ['name'],
      ['country'],
      ['segment'],
      ['created_at'],
    ]);
    assert.deepEqual(await vdb.rows('nobody', `SELECT count(*) FROM SYS.Columns WHERE "SchemaName" NOT IN ('SYS', 'SYSADMIN', 'SYSLOG')`), [
      [0],
    ]);
    // System tables and their columns show to everyone.
    assert.deepEqual(
      await vdb.rows('nobody', `SELECT count(*) FROM SYS.Columns WHERE "SchemaName" = 'SYS' AND "TableName" = 'Tables'`),
      await vdb.admin(`SELECT count(*) FROM SYS.Columns WHERE "SchemaName" = 'SYS' AND "TableName" = 'Tables'`),
    );
    assert.deepEqual(
      await vdb.rows('reader', `SELECT count(*) FROM SYS.Columns WHERE "SchemaName" = 'shop' AND "TableName" = 'customers'`),
      [[6]],
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Reads without a grant, hidden columns
// ---------------------------------------------------------------------------------------------

describe('nothing is readable without a grant', () => {
  before(async () => {
    await vdb.userWith('custonly', [['shop.customers', 'R']]);
  });

  test('a table without a grant is 403 naming the table and READ', async () => {
    await vdb.denied('custonly', 'SELECT count(*) FROM shop.products', 'READ', 'table shop.products');
    await vdb.denied('custonly', 'SELECT * FROM files.regions', 'READ', 'table files.regions');
    // paid_orders is a view inside the SQLite file: named as a view.
    await vdb.denied('custonly', 'SELECT * FROM shop.paid_orders', 'READ', 'view shop.paid_orders');
    await vdb.denied('nobody', 'SELECT * FROM shop.customers', 'READ', 'table shop.customers');
    assert.deepEqual(await vdb.rows('custonly', 'SELECT count(*) FROM shop.customers'), [[200]]);
  });

  test('wherever the table is named: joins, subqueries, CTEs, set operations, EXPLAIN', async () => {
    const statements = [
      'SELECT c.name FROM shop.customers c JOIN shop.orders o ON o.customer_id = c.id',
      'SELECT c.name FROM shop.customers c LEFT JOIN shop.orders o ON o.customer_id = c.id WHERE o.id IS NULL',
      'SELECT name FROM shop.customers WHERE id IN (SELECT customer_id FROM shop.orders)',
      'SELECT name FROM shop.customers c WHERE EXISTS (SELECT 1 FROM shop.orders o WHERE o.customer_id = c.id)',
      'SELECT (SELECT count(*) FROM shop.orders)',
      'SELECT c.name FROM shop.customers c, LATERAL (SELECT count(*) AS n FROM shop.orders o WHERE o.customer_id = c.id) x',
      'WITH o AS (SELECT * FROM shop.orders) SELECT count(*) FROM o',
      'WITH c AS (SELECT id FROM shop.customers) SELECT count(*) FROM c JOIN shop.orders o ON o.customer_id = c.id',
      'SELECT id FROM shop.customers UNION ALL SELECT id FROM shop.orders',
      'SELECT count(*) FROM (SELECT * FROM (SELECT customer_id FROM shop.orders) a) b',
      'EXPLAIN SELECT * FROM shop.orders',
      'EXPLAIN SELECT c.name FROM shop.customers c JOIN shop.orders o ON o.customer_id = c.id',
    ];
    for (const sql of statements) await vdb.denied('custonly', sql, 'READ', 'table shop.orders');
  });

  test('a CTE named like a table is the CTE; a qualified name is the table', async () => {
    assert.deepEqual(await vdb.rows('custonly', 'WITH orders AS (SELECT 1 AS x) SELECT * FROM orders'), [[1]]);
    await vdb.denied('custonly', 'WITH orders AS (SELECT 1 AS x) SELECT count(*) FROM shop.orders', 'READ', 'table shop.orders');
  });

  test('EXPLAIN of a granted table works', async () => {
    const plan = await vdb.rows('custonly', 'EXPLAIN SELECT * FROM shop.customers');
    assert.ok(plan.length > 0);
  });

  test("R on '*' reads every source", async () => {
    await vdb.userWith('everything', [['*', 'R']]);
    assert.deepEqual(await vdb.rows('everything', 'SELECT count(*) FROM shop.products'), [[50]]);
    assert.ok((await vdb.count('SELECT count(*) FROM files.regions', 'everything')) > 0);
  });

  test('the most specific entry decides: column over table over schema over *', async () => {
    await vdb.userWith('specific', [
      ['*', 'R'],
      ['files', ''],
      ['shop.products', ''],
      ['shop.customers', ''],
      ['shop.customers.name', 'R'],
    ]);
    await vdb.denied('specific', 'SELECT * FROM files.regions', 'READ', 'table files.regions');
    await vdb.denied('specific', 'SELECT count(*) FROM shop.products', 'READ', 'table shop.products');
    assert.deepEqual(await vdb.rows('specific', 'SELECT count(*) FROM shop.orders'), [[2000]]);
    // Only the name of customers: SELECT * shows it alone.
    assert.deepEqual(await vdb.rows('specific', 'SELECT * FROM shop.customers ORDER BY name LIMIT 2', '?headers=true'), [
      ['name'],
      ...(await vdb.admin('SELECT name FROM shop.customers ORDER BY name LIMIT 2')),
    ]);
    await vdb.denied('specific', 'SELECT id FROM shop.customers', 'READ', 'column shop.customers.id');
  });

  test('a user may do what any of their roles allows', async () => {
    await vdb.addRole('any_a');
    await vdb.addRole('any_b');
    await vdb.grant('any_a', 'shop.customers', 'R');
    await vdb.grant('any_b', 'shop.products', 'R');
    // any_b says nothing about customers; any_a's '' on products does not take away any_b's R.
    await vdb.grant('any_a', 'shop.products', '');
    await vdb.addUser('both_roles', 'any_a', 'any_b');
    assert.deepEqual(await vdb.rows('both_roles', 'SELECT (SELECT count(*) FROM shop.customers), (SELECT count(*) FROM shop.products)'), [
      [200, 50],
    ]);
    await vdb.denied('both_roles', 'SELECT count(*) FROM shop.orders', 'READ', 'table shop.orders');
  });

  test('the admin role reads everything, unfiltered and unmasked', async () => {
    assert.deepEqual(
      await vdb.admin(
        'SELECT (SELECT count(*) FROM shop.customers), (SELECT count(*) FROM shop.orders), (SELECT count(*) FROM shop.products)',
      ),
      [[200, 2000, 50]],
    );
  });
});

describe('hidden columns', () => {
  // colhidden: R on shop.customers, '' on shop.customers.email.
  test('SELECT * leaves a hidden column out', async () => {
    const [header, first] = await vdb.rows<unknown[]>('colhidden', 'SELECT * FROM shop.customers ORDER BY id LIMIT 1', '?headers=true');
    assert.deepEqual(header, ['id', 'name', 'country', 'segment', 'created_at']);
    assert.deepEqual(first, [1, 'Lukas Müller', 'DE', 'enterprise', '2024-06-29']);
    const objects = await okJson<Array<Record<string, unknown>>>(
      await vdb.request('colhidden', '/rest/api/source/shop/customers?array=false&limit=1'),
    );
    assert.deepEqual(Object.keys(objects[0]!), ['id', 'name', 'country', 'segment', 'created_at']);
    // A whole-row reference holds no hidden column either.
    const [[row]] = await vdb.rows<[unknown]>('colhidden', 'SELECT c FROM shop.customers c WHERE id = 1');
    assert.doesNotMatch(JSON.stringify(row), /example\.com/);
  });

  test('naming a hidden column is 403 naming the column, wherever it is named', async () => {
    for (const sql of [
      'SELECT email FROM shop.customers',
      'SELECT c.email FROM shop.customers c',
      'SELECT id FROM shop.customers WHERE email LIKE $$lukas%$$',
      'SELECT count(*) FROM shop.customers WHERE email IS NULL',
      'SELECT id FROM shop.customers ORDER BY email',
      'SELECT count(DISTINCT email) FROM shop.customers',
      'SELECT id FROM shop.customers GROUP BY id, email',
      'SELECT (SELECT max(email) FROM shop.customers)',
      'WITH c AS (SELECT email FROM shop.customers) SELECT * FROM c',
      'SELECT id FROM shop.customers WHERE id IN (SELECT id FROM shop.customers WHERE email IS NOT NULL)',
    ]) {
      await vdb.denied('colhidden', sql, 'READ', 'column shop.customers.email');
    }
  });

  test('EXPLAIN of a statement naming a hidden column is 403 as well', async () => {
    await vdb.denied('colhidden', 'EXPLAIN SELECT email FROM shop.customers', 'READ', 'column shop.customers.email');
    await vdb.denied('colhidden', 'EXPLAIN SELECT id FROM shop.customers WHERE email IS NULL', 'READ', 'column shop.customers.email');
  });

  test('the readable columns still work, count(*) too', async () => {
    assert.deepEqual(await vdb.rows('colhidden', 'SELECT count(*), count(DISTINCT country) FROM shop.customers'), [[200, 8]]);
    assert.deepEqual(await vdb.rows('colhidden', `SELECT name FROM shop.customers WHERE id = 2`), [['Chiara Ferrari']]);
  });
});

// ---------------------------------------------------------------------------------------------
// Row conditions
// ---------------------------------------------------------------------------------------------

describe('row conditions', () => {
  before(async () => {
    await vdb.addRole('rc_de');
    await vdb.grant('rc_de', 'shop.customers', 'R', { condition: "country = 'DE'" });
    await vdb.grant('rc_de', 'shop.orders', 'R');
    await vdb.addRole('rc_fr');
    await vdb.grant('rc_fr', 'shop.customers', 'R', { condition: "country = 'FR'" });
    await vdb.addRole('rc_all');
    await vdb.grant('rc_all', 'shop.customers', 'R');
    await vdb.addUser('de_only', 'rc_de');
    await vdb.addUser('de_fr', 'rc_de', 'rc_fr');
    await vdb.addUser('de_all', 'rc_de', 'rc_all');
  });

  test('rows outside the condition are invisible in direct reads and aggregates', async () => {
    assert.deepEqual(await vdb.rows('de_only', 'SELECT count(*) FROM shop.customers'), [[34]]);
    assert.deepEqual(await vdb.rows('de_only', 'SELECT country, count(*) FROM shop.customers GROUP BY country'), [['DE', 34]]);
    assert.deepEqual(await vdb.rows('de_only', `SELECT count(*) FROM shop.customers WHERE country = 'FR' OR country IS NULL`), [[0]]);
    assert.deepEqual(await vdb.rows('de_only', 'SELECT max(id) FROM shop.customers'), [[196]]);
    assert.deepEqual(await vdb.rows('de_only', 'SELECT * FROM shop.customers WHERE id = 2'), []);
    assert.deepEqual(await vdb.rows('de_only', 'SELECT count(*) FROM (SELECT DISTINCT country FROM shop.customers) d'), [[1]]);
    assert.deepEqual(
      await vdb.rows('de_only', 'SELECT id FROM shop.customers ORDER BY id LIMIT 3 OFFSET 1'),
      await vdb.admin(`SELECT id FROM shop.customers WHERE country = 'DE' ORDER BY id LIMIT 3 OFFSET 1`),
    );
  });

  test('and in joins, subqueries, CTEs, set operations and window functions', async () => {
    const checks: Array<[string, unknown[]]> = [
      ['SELECT count(*) FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id', [[274]]],
      ['SELECT count(*) FROM shop.orders o LEFT JOIN shop.customers c ON c.id = o.customer_id WHERE c.id IS NOT NULL', [[274]]],
      ['SELECT count(*) FROM shop.orders WHERE customer_id IN (SELECT id FROM shop.customers)', [[274]]],
      ['SELECT count(*) FROM shop.orders o WHERE EXISTS (SELECT 1 FROM shop.customers c WHERE c.id = o.customer_id)', [[274]]],
      ['SELECT (SELECT count(*) FROM shop.customers)', [[34]]],
      ['WITH c AS (SELECT * FROM shop.customers) SELECT count(*) FROM c', [[34]]],
      ['WITH c AS (SELECT id FROM shop.customers) SELECT count(*) FROM shop.orders o JOIN c ON c.id = o.customer_id', [[274]]],
      ['SELECT count(*) FROM (SELECT id FROM shop.customers UNION ALL SELECT id FROM shop.customers) u', [[68]]],
      ['SELECT max(n) FROM (SELECT count(*) OVER () AS n FROM shop.customers) w', [[34]]],
      ['SELECT count(*) FROM shop.customers a JOIN shop.customers b ON a.id = b.id', [[34]]],
    ];
    for (const [sql, expected] of checks) assert.deepEqual(await vdb.rows('de_only', sql), expected, sql);
  });

  test('outer joins keep their null-extended rows; the answers equal the hand-written condition', async () => {
    // The condition moves into the WHERE only where that means the same; elsewhere the table is
    // narrowed in place. Each statement is compared with the admin's version over a narrowed table.
    const DE = "(SELECT * FROM shop.customers WHERE country = 'DE')";
    const pairs: Array<[string, string]> = [
      [
        'SELECT o.id, c.name FROM shop.orders o LEFT JOIN shop.customers c ON c.id = o.customer_id ORDER BY o.id',
        `SELECT o.id, c.name FROM shop.orders o LEFT JOIN ${DE} c ON c.id = o.customer_id ORDER BY o.id`,
      ],
      [
        'SELECT c.id, count(o.id) FROM shop.customers c LEFT JOIN shop.orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id',
        `SELECT c.id, count(o.id) FROM ${DE} c LEFT JOIN shop.orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id`,
      ],
      [
        'SELECT o.id, c.id FROM shop.customers c RIGHT JOIN shop.orders o ON o.customer_id = c.id ORDER BY o.id',
        `SELECT o.id, c.id FROM ${DE} c RIGHT JOIN shop.orders o ON o.customer_id = c.id ORDER BY o.id`,
      ],
      [
        'SELECT count(*), count(c.id), count(o.id) FROM shop.customers c FULL JOIN shop.orders o ON o.customer_id = c.id',
        `SELECT count(*), count(c.id), count(o.id) FROM ${DE} c FULL JOIN shop.orders o ON o.customer_id = c.id`,
      ],
      [
        'SELECT count(*) FROM (shop.customers c JOIN shop.orders o ON o.customer_id = c.id) AS j',
        `SELECT count(*) FROM (${DE} c JOIN shop.orders o ON o.customer_id = c.id) AS j`,
      ],
      [
        'SELECT c.country, sum(o.amount) FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id WHERE o.quantity > 1 OR c.segment = $$smb$$ GROUP BY 1',
        `SELECT c.country, sum(o.amount) FROM shop.orders o JOIN ${DE} c ON c.id = o.customer_id WHERE o.quantity > 1 OR c.segment = $$smb$$ GROUP BY 1`,
      ],
    ];
    for (const [mine, reference] of pairs) assert.deepEqual(await vdb.rows('de_only', mine), await vdb.admin(reference), mine);
  });

  test('GET /rest/api/source/shop/customers shows only the rows of the condition', async () => {
    const rows = await okJson<Array<Record<string, unknown>>>(await vdb.request('de_only', '/rest/api/source/shop/customers?array=false'));
    assert.equal(rows.length, 34);
    assert.ok(rows.every((r) => r.country === 'DE'));
  });

  test('several roles: conditions are ORed; a grant without condition sees every row', async () => {
    assert.deepEqual(await vdb.rows('de_fr', 'SELECT count(*) FROM shop.customers'), [[58]]);
    assert.deepEqual(await vdb.rows('de_fr', 'SELECT country, count(*) FROM shop.customers GROUP BY country ORDER BY country'), [
      ['DE', 34],
      ['FR', 24],
    ]);
    assert.deepEqual(await vdb.rows('de_all', 'SELECT count(*) FROM shop.customers'), [[200]]);
  });

  test('the admin is not filtered by conditions of roles they do not hold', async () => {
    assert.deepEqual(await vdb.admin('SELECT count(*) FROM shop.customers'), [[200]]);
  });

  describe('CURRENT_USER means the signed-in vdb user', () => {
    before(async () => {
      // Customer 1's email is lukas.muller1@example.com, customer 2's chiara.ferrari2@example.com.
      await vdb.addRole('self_service');
      await vdb.grant('self_service', 'shop.customers', 'R', { condition: "split_part(email, '@', 1) = CURRENT_USER" });
      // A lookup: the orders of the customer whose email names the user.
      await vdb.grant('self_service', 'shop.orders', 'R', {
        condition: "customer_id IN (SELECT id FROM shop.customers WHERE split_part(email, '@', 1) = CURRENT_USER)",
      });
      await vdb.addUser('lukas.muller1', 'self_service');
      await vdb.addUser('chiara.ferrari2', 'self_service');
    });

    test('SELECT CURRENT_USER is the vdb user', async () => {
      assert.deepEqual(await vdb.rows('lukas.muller1', 'SELECT CURRENT_USER, SESSION_USER'), [['lukas.muller1', 'lukas.muller1']]);
    });

    test('a condition with CURRENT_USER shows each user their own rows', async () => {
      assert.deepEqual(await vdb.rows('lukas.muller1', 'SELECT id, name FROM shop.customers'), [[1, 'Lukas Müller']]);
      assert.deepEqual(await vdb.rows('chiara.ferrari2', 'SELECT id, name FROM shop.customers'), [[2, 'Chiara Ferrari']]);
    });

    test('a lookup condition with CURRENT_USER (orders of the user’s customer)', async () => {
      assert.deepEqual(await vdb.rows('lukas.muller1', 'SELECT count(*), min(customer_id), max(customer_id) FROM shop.orders'), [
        [6, 1, 1],
      ]);
      assert.deepEqual(await vdb.rows('chiara.ferrari2', 'SELECT count(*), min(customer_id), max(customer_id) FROM shop.orders'), [
        [14, 2, 2],
      ]);
      assert.deepEqual(
        await vdb.rows('chiara.ferrari2', 'SELECT count(*) FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id'),
        [[14]],
      );
    });

    test('a user whose name matches no customer sees nothing', async () => {
      await vdb.addUser('stranger', 'self_service');
      assert.deepEqual(await vdb.rows('stranger', 'SELECT (SELECT count(*) FROM shop.customers), (SELECT count(*) FROM shop.orders)'), [
        [0, 0],
      ]);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Masks
// ---------------------------------------------------------------------------------------------

describe('column masks', () => {
  before(async () => {
    await vdb.userWith('masked', [
      ['shop.customers', 'R'],
      ['shop.customers.email', 'R', { mask: "'***'" }],
    ]);
    await vdb.userWith('masked_de', [
      ['shop.customers', 'R'],
      ['shop.customers.email', 'R', { mask: "left(email, 3) || '…'", condition: "country = 'DE'" }],
    ]);
    // Two roles with masks: the higher maskOrder comes first.
    await vdb.addRole('mask_a');
    await vdb.grant('mask_a', 'shop.customers', 'R');
    await vdb.grant('mask_a', 'shop.customers.email', 'R', { mask: "'A'", maskOrder: 1 });
    await vdb.addRole('mask_b');
    await vdb.grant('mask_b', 'shop.customers.email', 'R', { mask: "'B'", maskOrder: 2 });
    await vdb.addUser('masked_ab', 'mask_a', 'mask_b');
    // A conditional mask first, an unconditional one after it.
    await vdb.addRole('mask_c');
    await vdb.grant('mask_c', 'shop.customers.email', 'R', { mask: "'C'", condition: "country = 'DE'", maskOrder: 5 });
    await vdb.addUser('masked_ac', 'mask_a', 'mask_c');
  });

  test('a mask replaces every value of the column', async () => {
    assert.deepEqual(await vdb.rows('masked', 'SELECT DISTINCT email FROM shop.customers'), [['***']]);
    assert.deepEqual(await vdb.rows('masked', 'SELECT id, name, email FROM shop.customers WHERE id = 1'), [[1, 'Lukas Müller', '***']]);
    assert.deepEqual(await vdb.rows('masked', 'SELECT * FROM shop.customers WHERE id = 1'), [
      [1, 'Lukas Müller', '***', 'DE', 'enterprise', '2024-06-29'],
    ]);
    const viaSource = await okJson<Array<Record<string, unknown>>>(
      await vdb.request('masked', '/rest/api/source/shop/customers?array=false&limit=3'),
    );
    assert.ok(viaSource.every((r) => r.email === '***'));
  });

  test('conditions on a masked column see the mask, not the value', async () => {
    assert.deepEqual(await vdb.rows('masked', `SELECT count(*) FROM shop.customers WHERE email LIKE 'lukas%'`), [[0]]);
    assert.deepEqual(
      await vdb.rows('masked', `SELECT count(*) FROM shop.customers c JOIN shop.customers d ON c.email = d.email AND c.id <> d.id`),
      [[200 * 199]],
    );
  });

  test('a mask with a condition applies only where the condition holds', async () => {
    assert.deepEqual(await vdb.rows('masked_de', 'SELECT id, email FROM shop.customers WHERE id IN (1, 2) ORDER BY id'), [
      [1, 'luk…'],
      [2, 'chiara.ferrari2@example.com'],
    ]);
    assert.deepEqual(await vdb.rows('masked_de', `SELECT count(*) FROM shop.customers WHERE email LIKE '%…'`), [[34]]);
  });

  test('masks of several roles apply by descending maskOrder', async () => {
    assert.deepEqual(await vdb.rows('masked_ab', 'SELECT DISTINCT email FROM shop.customers'), [['B']]);
    // The conditional mask (order 5) where it holds, the next one (order 1) elsewhere.
    assert.deepEqual(await vdb.rows('masked_ac', 'SELECT id, email FROM shop.customers WHERE id IN (1, 2) ORDER BY id'), [
      [1, 'C'],
      [2, 'A'],
    ]);
    // Swap the orders: the unconditional 'A' now comes first and wins everywhere.
    await vdb.grant('mask_a', 'shop.customers.email', 'R', { mask: "'A'", maskOrder: 9 });
    assert.deepEqual(await vdb.rows('masked_ac', 'SELECT DISTINCT email FROM shop.customers'), [['A']]);
    assert.deepEqual(await vdb.rows('masked_ab', 'SELECT DISTINCT email FROM shop.customers'), [['A']]);
  });

  test('the admin sees the values', async () => {
    assert.deepEqual(await vdb.admin('SELECT email FROM shop.customers WHERE id = 1'), [['lukas.muller1@example.com']]);
  });
});

// ---------------------------------------------------------------------------------------------
// Writes (a server of their own: they change the demo data)
// ---------------------------------------------------------------------------------------------

describe('writes', () => {
  let w: Vdb;
  const orderCount = () => w.count('SELECT count(*) FROM shop.orders');
  const ROW = (id: number, customer: number) => `(${id}, ${customer}, 1, 1, 9.5, 'new', '2025-01-01')`;

  before(async () => {
    w = await Vdb.start();
    await w.userWith('w_reader', [['shop', 'R']]);
    await w.addUser('w_nobody');
    await w.userWith('w_writer', [
      ['shop', 'R'],
      ['shop.orders', 'CRUD'],
    ]);
    await w.userWith('w_cols', [
      ['shop', 'R'],
      ['shop.orders', 'CRU'],
      ['shop.orders.amount', 'R'],
    ]);
    await w.userWith('w_own', [
      ['shop', 'R'],
      ['shop.orders', 'CRUD', { condition: 'customer_id = 1' }],
    ]);
  });
  after(async () => w?.close());

  test('INSERT needs CREATE, UPDATE needs UPDATE, DELETE needs DELETE', async () => {
    const before = await orderCount();
    await w.denied('w_reader', `INSERT INTO shop.orders VALUES ${ROW(9001, 1)}`, 'CREATE', 'table shop.orders');
    await w.denied('w_reader', `INSERT INTO shop.orders (id, customer_id) VALUES (9001, 1)`, 'CREATE', 'table shop.orders');
    await w.denied('w_reader', `UPDATE shop.orders SET status = 'x' WHERE id = 1`, 'UPDATE', 'table shop.orders');
    await w.denied('w_reader', 'DELETE FROM shop.orders WHERE id = 1', 'DELETE', 'table shop.orders');
    await w.denied('w_nobody', 'DELETE FROM shop.orders WHERE id = 1', 'DELETE', 'table shop.orders');
    await w.denied('w_nobody', `INSERT INTO shop.orders VALUES ${ROW(9001, 1)}`, 'CREATE', 'table shop.orders');
    // The writer of shop.orders may not write products.
    await w.denied('w_writer', `UPDATE shop.products SET price = 0 WHERE id = 1`, 'UPDATE', 'table shop.products');
    await w.denied('w_writer', 'DELETE FROM shop.products WHERE id = 1', 'DELETE', 'table shop.products');
    assert.equal(await orderCount(), before);
    assert.deepEqual(await w.admin('SELECT status FROM shop.orders WHERE id = 1'), [['shipped']]);
  });

  test('a CRUD grant writes', async () => {
    const before = await orderCount();
    assert.deepEqual(await w.rows('w_writer', `INSERT INTO shop.orders VALUES ${ROW(9001, 3)}`), [[1]]);
    assert.deepEqual(await w.rows('w_writer', `UPDATE shop.orders SET status = 'paid' WHERE id = 9001`), [[1]]);
    assert.deepEqual(await w.admin('SELECT customer_id, status FROM shop.orders WHERE id = 9001'), [[3, 'paid']]);
    assert.deepEqual(await w.rows('w_writer', 'DELETE FROM shop.orders WHERE id = 9001'), [[1]]);
    assert.equal(await orderCount(), before);
  });

  test('column entries decide for the columns an INSERT fills and an UPDATE sets', async () => {
    const before = await orderCount();
    // amount is R only: neither inserted nor updated.
    await w.denied('w_cols', `UPDATE shop.orders SET amount = 1 WHERE id = 1`, 'UPDATE', 'column shop.orders.amount');
    await w.denied('w_cols', `UPDATE shop.orders SET status = 'x', amount = 1 WHERE id = 1`, 'UPDATE', 'column shop.orders.amount');
    await w.denied(
      'w_cols',
      `INSERT INTO shop.orders (id, customer_id, amount) VALUES (9002, 1, 5)`,
      'CREATE',
      'column shop.orders.amount',
    );
    // No column list means every column, amount included.
    await w.denied('w_cols', `INSERT INTO shop.orders VALUES ${ROW(9002, 1)}`, 'CREATE', 'column shop.orders.amount');
    assert.equal(await orderCount(), before);
    // The other columns may be written.
    assert.deepEqual(
      await w.rows('w_cols', `INSERT INTO shop.orders (id, customer_id, product_id, quantity, status) VALUES (9002, 1, 1, 2, 'new')`),
      [[1]],
    );
    assert.deepEqual(await w.rows('w_cols', `UPDATE shop.orders SET status = 'paid' WHERE id = 9002`), [[1]]);
    assert.deepEqual(await w.rows('w_cols', 'SELECT amount, status FROM shop.orders WHERE id = 9002'), [[null, 'paid']]);
    // No DELETE in CRU.
    await w.denied('w_cols', 'DELETE FROM shop.orders WHERE id = 9002', 'DELETE', 'table shop.orders');
    await w.admin('DELETE FROM shop.orders WHERE id = 9002');
  });

  describe('a write cannot read a column hidden from the user (own server)', () => {
    // w_hidden may read shop, update and delete orders, but not see orders.amount. Copying the
    // hidden value into a readable column, or counting the rows a WHERE on it reaches, would
    // reveal it.
    let h: Vdb;
    before(async () => {
      h = await Vdb.start();
      await h.userWith('w_hidden', [
        ['shop', 'R'],
        ['shop.orders', 'RUD'],
        ['shop.orders.amount', ''],
      ]);
      await h.denied('w_hidden', 'SELECT amount FROM shop.orders WHERE id = 1', 'READ', 'column shop.orders.amount');
    });
    after(async () => h?.close());

    test('UPDATE ... SET readable = hidden', async () => {
      await h.denied('w_hidden', 'UPDATE shop.orders SET quantity = amount WHERE id = 1', 'READ', 'column shop.orders.amount');
      assert.deepEqual(await h.rows('w_hidden', 'SELECT quantity FROM shop.orders WHERE id = 1'), [[1]]);
    });

    test('UPDATE ... WHERE hidden', async () => {
      await h.denied('w_hidden', 'UPDATE shop.orders SET status = status WHERE amount > 300', 'READ', 'column shop.orders.amount');
    });

    test('DELETE ... WHERE hidden', async () => {
      await h.denied('w_hidden', 'DELETE FROM shop.orders WHERE amount > 300', 'READ', 'column shop.orders.amount');
      assert.equal(await h.count('SELECT count(*) FROM shop.orders'), 2000);
    });
  });

  test('a write cannot read tables the user may not read', async () => {
    await w.userWith('w_blind', [['shop.orders', 'CRUD']]);
    await w.denied(
      'w_blind',
      'INSERT INTO shop.orders SELECT id + 10000, customer_id, product_id, quantity, amount, status, ordered_at FROM shop.paid_orders',
      'READ',
      'view shop.paid_orders',
    );
    await w.denied(
      'w_blind',
      'INSERT INTO shop.orders (id, customer_id) SELECT id + 10000, id FROM shop.customers',
      'READ',
      'table shop.customers',
    );
    assert.equal(await orderCount(), 2000);
  });

  describe('under a row condition (customer_id = 1)', () => {
    let own: unknown[][];
    before(async () => {
      own = await w.admin('SELECT * FROM shop.orders WHERE customer_id = 1 ORDER BY id');
      assert.equal(own.length, 6);
    });

    test('reads, UPDATEs and DELETEs reach only the rows of the condition', async () => {
      assert.deepEqual(await w.rows('w_own', 'SELECT count(*) FROM shop.orders'), [[6]]);
      // Without WHERE: only customer 1's orders.
      assert.deepEqual(await w.rows('w_own', `UPDATE shop.orders SET status = 'audited'`), [[6]]);
      assert.deepEqual(await w.admin(`SELECT DISTINCT customer_id FROM shop.orders WHERE status = 'audited'`), [[1]]);
      // A row of customer 2 is out of reach.
      const other = await w.admin<[number]>('SELECT id FROM shop.orders WHERE customer_id = 2 ORDER BY id LIMIT 1');
      assert.deepEqual(await w.rows('w_own', `UPDATE shop.orders SET status = 'audited' WHERE id = ${other[0]![0]}`), [[0]]);
      assert.deepEqual(await w.rows('w_own', 'DELETE FROM shop.orders WHERE customer_id = 2'), [[0]]);
      assert.equal(await orderCount(), 2000);
      assert.deepEqual(await w.rows('w_own', 'DELETE FROM shop.orders'), [[6]]);
      assert.equal(await orderCount(), 1994);
      assert.deepEqual(await w.admin('SELECT count(*) FROM shop.orders WHERE customer_id = 1'), [[0]]);
      // Put them back as they were.
      const values = own.map((row) => `(${row.map((v) => (typeof v === 'string' ? lit(v) : v === null ? 'NULL' : String(v))).join(', ')})`);
      await w.admin(`INSERT INTO shop.orders VALUES ${values.join(', ')}`);
      assert.deepEqual(await w.admin('SELECT * FROM shop.orders WHERE customer_id = 1 ORDER BY id'), own);
    });

    test('an INSERT inside the condition works', async () => {
      assert.deepEqual(await w.rows('w_own', `INSERT INTO shop.orders VALUES ${ROW(9101, 1)}`), [[1]]);
      assert.deepEqual(await w.rows('w_own', `INSERT INTO shop.orders VALUES ${ROW(9102, 1)}, ${ROW(9103, 1)}`), [[2]]);
      assert.deepEqual(await w.admin('SELECT count(*) FROM shop.orders WHERE id BETWEEN 9101 AND 9103'), [[3]]);
      await w.admin('DELETE FROM shop.orders WHERE id BETWEEN 9101 AND 9103');
    });

    test('an INSERT of a row outside the condition fails and inserts nothing', async () => {
      const before = await orderCount();
      const body = await w.refused('w_own', `INSERT INTO shop.orders VALUES ${ROW(9201, 2)}`, 403);
      assert.match(body.description, /outside the rows you may insert/);
      assert.equal(await orderCount(), before);
    });

    test('a multi-row INSERT whose last row is outside fails whole', async () => {
      const before = await orderCount();
      await w.refused(
        'w_own',
        `INSERT INTO shop.orders VALUES ${ROW(9301, 1)}, ${ROW(9302, 1)}, ${ROW(9303, 2)}`,
        403,
        /outside the rows you may insert/,
      );
      assert.equal(await orderCount(), before);
      assert.deepEqual(await w.admin('SELECT count(*) FROM shop.orders WHERE id BETWEEN 9301 AND 9303'), [[0]]);
    });

    test('an INSERT ... SELECT with rows outside fails whole', async () => {
      const before = await orderCount();
      // 6 rows of customer 1 and then customer 2's: all or nothing.
      await w.refused(
        'w_own',
        'INSERT INTO shop.orders SELECT id + 50000, customer_id, product_id, quantity, amount, status, ordered_at FROM (SELECT * FROM shop.orders UNION ALL SELECT 60000, 2, 1, 1, 1, $$new$$, $$2025-01-01$$) x',
        403,
        /outside the rows you may insert/,
      );
      assert.equal(await orderCount(), before);
    });

    test('a large INSERT ... SELECT (several batches) whose very last row is outside fails whole', async () => {
      const before = await orderCount();
      await w.refused(
        'w_own',
        `INSERT INTO shop.orders (id, customer_id, product_id, quantity, status)
         SELECT 100000 + i, CASE WHEN i = 10000 THEN 2 ELSE 1 END, 1, 1, 'new' FROM generate_series(1, 10000) AS t(i)`,
        403,
        /outside the rows you may insert/,
      );
      assert.equal(await orderCount(), before);
      assert.deepEqual(await w.admin('SELECT count(*) FROM shop.orders WHERE id > 100000'), [[0]]);
    });

    test('a column list that leaves out a column the condition reads: 403 naming it', async () => {
      const before = await orderCount();
      await w.refused(
        'w_own',
        'INSERT INTO shop.orders (id, status) VALUES (9401, $$new$$)',
        403,
        /must give the columns the condition of your permission reads \(customer_id\)/,
      );
      assert.equal(await orderCount(), before);
    });
  });

  describe('under a row condition with CURRENT_USER', () => {
    // A plain condition (no function), so that SQLite can take the UPDATE and DELETE whole.
    const LUKAS = 'lukas.muller1@example.com';
    before(async () => {
      await w.addRole('self_edit');
      await w.grant('self_edit', 'shop.customers', 'CRUD', { condition: 'email = CURRENT_USER' });
      await w.addUser(LUKAS, 'self_edit');
      assert.deepEqual(await w.rows(LUKAS, 'SELECT id FROM shop.customers'), [[1]]);
    });

    test('an UPDATE reaches only the signed-in user’s row', async () => {
      assert.deepEqual(await w.rows(LUKAS, `UPDATE shop.customers SET segment = 'smb'`), [[1]]);
      assert.deepEqual(await w.admin(`SELECT id FROM shop.customers WHERE segment = 'smb' AND id IN (1, 3)`), [[1]]);
      assert.deepEqual(await w.admin(`SELECT count(*) FROM shop.customers WHERE segment = 'smb'`), [[61]]);
      await w.admin(`UPDATE shop.customers SET segment = 'enterprise' WHERE id = 1`);
    });

    test('a DELETE reaches only the signed-in user’s row', async () => {
      assert.deepEqual(await w.rows(LUKAS, `DELETE FROM shop.customers WHERE id = 2`), [[0]]);
      assert.deepEqual(await w.admin('SELECT count(*) FROM shop.customers'), [[200]]);
      assert.deepEqual(await w.rows(LUKAS, `DELETE FROM shop.customers WHERE id IN (1, 2) AND segment = 'none'`), [[0]]);
    });

    test('an INSERT is checked against CURRENT_USER', async () => {
      assert.deepEqual(await w.rows(LUKAS, `INSERT INTO shop.customers (id, name, email) VALUES (9001, 'Lukas Two', ${lit(LUKAS)})`), [
        [1],
      ]);
      await w.refused(
        LUKAS,
        `INSERT INTO shop.customers (id, name, email) VALUES (9002, 'Someone', 'someone@example.org')`,
        403,
        /outside the rows you may insert/,
      );
      assert.deepEqual(await w.admin('SELECT id FROM shop.customers WHERE id > 9000'), [[9001]]);
      await w.admin('DELETE FROM shop.customers WHERE id > 9000');
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Procedures
// ---------------------------------------------------------------------------------------------

describe('procedures', () => {
  test('user, role and permission procedures are for administrators only, whatever is granted', async () => {
    await vdb.userWith('granted_all', [
      ['*', 'CRUDEA'],
      ['SYSADMIN.addUser', 'E'],
      ['SYSADMIN.addRole', 'E'],
      ['SYSADMIN.setPermissions', 'E'],
    ]);
    const calls: Array<[string, string]> = [
      ["CALL SYSADMIN.addUser('sneaky', 'sneaky-pass-1')", 'SYSADMIN.addUser'],
      ["CALL SYSADMIN.addExternalUser('sneaky', 'oidc')", 'SYSADMIN.addExternalUser'],
      ["CALL SYSADMIN.inviteUser('sneaky')", 'SYSADMIN.inviteUser'],
      ["CALL SYSADMIN.addRole('sneaky')", 'SYSADMIN.addRole'],
      ["CALL SYSADMIN.removeRole('reader')", 'SYSADMIN.removeRole'],
      ["CALL SYSADMIN.addUserRole('admin', 'granted_all')", 'SYSADMIN.addUserRole'],
      ["CALL SYSADMIN.removeUserRole('reader', 'reader')", 'SYSADMIN.removeUserRole'],
      ["CALL SYSADMIN.setPermissions('granted_all', 'shop', 'R')", 'SYSADMIN.setPermissions'],
      ["CALL SYSADMIN.removeUser('nobody')", 'SYSADMIN.removeUser'],
    ];
    for (const [sql, procedure] of calls) {
      await vdb.refused('granted_all', sql, 403, adminOnly(procedure));
      await vdb.refused('reader', sql, 403, adminOnly(procedure));
    }
    // Nothing happened.
    assert.deepEqual(await vdb.admin(`SELECT count(*) FROM SYSADMIN.Users WHERE "Name" = 'sneaky'`), [[0]]);
    assert.deepEqual(await vdb.admin(`SELECT "Roles" FROM SYSADMIN.Users WHERE "Name" = 'granted_all'`), [['granted_all']]);
    assert.deepEqual(await vdb.rows('reader', 'SELECT count(*) FROM shop.customers'), [[200]]);
    // Their own password stays theirs to change; another's is not.
    await vdb.refused('granted_all', "CALL SYSADMIN.changeUserPwd('reader', 'taken-over-1')", 403);
  });

  test('refreshDataSource needs EXECUTE on it and ALTER on the schema', async () => {
    await vdb.userWith('refresh_e', [['SYSADMIN.refreshDataSource', 'E']]);
    await vdb.userWith('refresh_a', [['shop', 'RA']]);
    await vdb.userWith('refresh_star', [
      ['SYSADMIN.refreshDataSource', 'E'],
      ['*', 'A'],
    ]);
    await vdb.denied('refresh_e', "CALL SYSADMIN.refreshDataSource('shop')", 'ALTER', 'schema shop');
    await vdb.denied('refresh_a', "CALL SYSADMIN.refreshDataSource('shop')", 'EXECUTE', 'procedure SYSADMIN.refreshDataSource');
    // The executor of the matrix: EXECUTE, and ALTER on shop but not on files.
    assert.deepEqual(await vdb.rows('executor', "CALL SYSADMIN.refreshDataSource('shop')"), [['shop', 'sqlite', 4]]);
    await vdb.denied('executor', "CALL SYSADMIN.refreshDataSource('files')", 'ALTER', 'schema files');
    // ALTER on '*' covers every schema.
    assert.deepEqual(await vdb.rows('refresh_star', "CALL SYSADMIN.refreshDataSource('files')"), [['files', 'file', 4]]);
    // Named arguments and any spelling of the procedure are the same procedure.
    await vdb.denied('refresh_e', "CALL sysadmin.REFRESHDATASOURCE(name => 'shop')", 'ALTER', 'schema shop');
  });

  test('EXECUTE on one procedure is not EXECUTE on another', async () => {
    await vdb.denied('executor', "CALL SYSADMIN.removeDataSource('shop')", 'EXECUTE', 'procedure SYSADMIN.removeDataSource');
    await vdb.denied(
      'executor',
      "CALL SYSADMIN.createConnection('x', 'sqlite', 'path=/nonexistent.sqlite', '')",
      'EXECUTE',
      'procedure SYSADMIN.createConnection',
    );
    assert.deepEqual(sorted(await vdb.admin('SELECT "Name" FROM SYSADMIN.DataSources')), [['files'], ['shop']]);
  });
});

// ---------------------------------------------------------------------------------------------
// Sources: procedures and REST endpoints that change them, and the source listing
// ---------------------------------------------------------------------------------------------

describe('source changes (own server)', () => {
  let s: Vdb;
  let sqliteCopy: string;
  let folder: string;

  before(async () => {
    s = await Vdb.start();
    sqliteCopy = path.join(s.server.dataDir, 'files', 'copy.sqlite');
    fs.copyFileSync(path.join(s.server.dataDir, 'files', 'demo', 'shop.sqlite'), sqliteCopy);
    folder = path.join(s.server.dataDir, 'files', 'more-files');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'nums.csv'), 'n,label\n1,one\n2,two\n');
    await s.userWith('alter_shop', [
      ['shop', 'A'],
      ['SYSADMIN.createConnection', 'E'],
      ['SYSADMIN.createDataSource', 'E'],
      ['SYSADMIN.removeDataSource', 'E'],
    ]);
    await s.userWith('alter_all', [
      ['*', 'A'],
      ['SYSADMIN.createConnection', 'E'],
      ['SYSADMIN.createDataSource', 'E'],
    ]);
    await s.userWith('alter_all_no_e', [['*', 'A']]);
    await s.userWith('alter_files', [['files', 'A']]);
  });
  after(async () => s?.close());

  const sources = () => s.admin<[string]>('SELECT "Name" FROM SYSADMIN.DataSources ORDER BY "Name"').then((r) => r.map((x) => x[0]));

  test("createConnection and createDataSource need ALTER on '*' (and EXECUTE on them)", async () => {
    const connect = `CALL SYSADMIN.createConnection('lite', 'sqlite', ${lit(`path=${sqliteCopy}`)}, '')`;
    await s.denied('alter_shop', connect, 'ALTER', 'everything (*)');
    await s.denied('alter_all_no_e', connect, 'EXECUTE', 'procedure SYSADMIN.createConnection');
    assert.deepEqual(await s.rows('alter_all', connect), [['lite', 'sqlite']]);
    await s.denied('alter_shop', "CALL SYSADMIN.createDataSource('lite', 'sqlite', '', '')", 'ALTER', 'everything (*)');
    await s.denied(
      'alter_all_no_e',
      "CALL SYSADMIN.createDataSource('lite', 'sqlite', '', '')",
      'EXECUTE',
      'procedure SYSADMIN.createDataSource',
    );
    assert.deepEqual(await s.rows('alter_all', "CALL SYSADMIN.createDataSource('lite', 'sqlite', '', '')"), [['lite', 'sqlite', 4]]);
    assert.deepEqual(await sources(), ['files', 'lite', 'shop']);
    // Creating a source grants nothing to read in it.
    await s.denied('alter_all', 'SELECT count(*) FROM lite.customers', 'READ', 'table lite.customers');
  });

  test("POST /rest/api/source needs ALTER on '*'", async () => {
    const body = { name: 'more', template: 'file', connectionProps: `ParentDirectory=${folder}` };
    for (const user of ['alter_shop', 'alter_files']) {
      const refused = await assertApiError(await s.request(user, '/rest/api/source', { body }), 403, `POST as ${user}`);
      assert.equal(refused.description, missing('ALTER', 'everything (*)', user));
    }
    assert.ok(!(await sources()).includes('more'));
    const created = await s.request('alter_all_no_e', '/rest/api/source', { body });
    assert.equal(created.status, 201, await created.text());
    assert.ok((await sources()).includes('more'));
  });

  test('DELETE /rest/api/source/{s} needs ALTER on s', async () => {
    const refused = await assertApiError(
      await s.request('alter_shop', '/rest/api/source/files', { method: 'DELETE' }),
      403,
      'DELETE files as alter_shop',
    );
    assert.equal(refused.description, missing('ALTER', 'schema files', 'alter_shop'));
    assert.ok((await sources()).includes('files'));
    const removed = await s.request('alter_files', '/rest/api/source/files', { method: 'DELETE' });
    assert.equal(removed.status, 204, await removed.text());
    assert.ok(!(await sources()).includes('files'));
  });

  test('removeDataSource needs EXECUTE on it and ALTER on the schema', async () => {
    await s.denied('alter_shop', "CALL SYSADMIN.removeDataSource('more')", 'ALTER', 'schema more');
    await s.denied('alter_all_no_e', "CALL SYSADMIN.removeDataSource('more')", 'EXECUTE', 'procedure SYSADMIN.removeDataSource');
    await s.denied('alter_shop', "CALL SYSADMIN.removeDataSource('lite')", 'ALTER', 'schema lite');
    assert.deepEqual(await sources(), ['lite', 'more', 'shop']);
    // EXECUTE on it and ALTER on shop: shop may go.
    assert.deepEqual(await s.rows('alter_shop', "CALL SYSADMIN.removeDataSource('shop')"), [['shop', 'sqlite', 4]]);
    assert.deepEqual(await sources(), ['lite', 'more']);
  });
});

describe('entries go with their object (own server)', () => {
  let s: Vdb;
  let folder: string;

  before(async () => {
    s = await Vdb.start();
    folder = path.join(s.server.dataDir, 'files', 'gone-files');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'nums.csv'), 'n\n1\n2\n');
  });
  after(async () => s?.close());

  const entriesOn = async (prefix: string) =>
    (
      await s.admin<[string]>(
        `SELECT "ResourceName" FROM SYSADMIN.Permissions WHERE lower("ResourceName") LIKE ${lit(`${prefix}%`)} ORDER BY 1`,
      )
    ).map((r) => r[0]);

  test('removing a source removes the entries on it: a new source of that name starts without grants', async () => {
    const body = { name: 'gone', template: 'file', connectionProps: `ParentDirectory=${folder}` };
    assert.equal((await s.request('admin', '/rest/api/source', { body })).status, 201);
    await s.userWith('gone_reader', [['gone', 'R']]);
    assert.deepEqual(await s.rows('gone_reader', 'SELECT count(*) FROM gone.nums'), [[2]]);
    assert.deepEqual(await entriesOn('gone'), ['gone']);
    assert.equal((await s.request('admin', '/rest/api/source/gone', { method: 'DELETE' })).status, 204);
    assert.deepEqual(await entriesOn('gone'), []);
    assert.equal((await s.request('admin', '/rest/api/source', { body })).status, 201);
    await s.denied('gone_reader', 'SELECT count(*) FROM gone.nums', 'READ', 'table gone.nums');
  });

  test('dropping a view removes the entries on it; replacing it keeps them', async () => {
    await s.admin('CREATE VIEW goneviews.v AS SELECT id FROM shop.products');
    await s.admin("CALL SYSADMIN.addRole('view_reader')");
    await s.admin("CALL SYSADMIN.setPermissions('view_reader', 'goneviews.v', 'R')");
    await s.admin('CREATE OR REPLACE VIEW goneviews.v AS SELECT id, name FROM shop.products');
    assert.deepEqual(await entriesOn('goneviews'), ['goneviews.v']);
    await s.admin('DROP VIEW goneviews.v');
    assert.deepEqual(await entriesOn('goneviews'), []);
  });
});

// Uses the users of the blocks above (custonly: READ on shop.customers only).
describe('source listing and source endpoints', () => {
  test('GET /rest/api/source lists the sources the user sees (the system schemas are not sources)', async () => {
    assert.deepEqual(await sourceList(vdb, 'nobody'), []);
    assert.deepEqual(await sourceList(vdb, 'reader'), ['shop']);
    assert.deepEqual(await sourceList(vdb, 'writer'), ['shop']);
    assert.deepEqual(await sourceList(vdb, 'executor'), ['shop']);
    const adminList = await sourceList(vdb, 'admin');
    assert.ok(
      ['shop', 'files'].every((name) => adminList.includes(name)),
      adminList.join(),
    );
    assert.ok(!adminList.some((name) => SYSTEM_SCHEMAS.includes(name)), adminList.join());
  });

  test('GET /rest/api/source/{s}: 403 for a schema the user sees nothing of; only readable tables', async () => {
    const nobody = await assertApiError(await vdb.request('nobody', '/rest/api/source/shop'), 403, 'nobody shop');
    assert.equal(nobody.description, missing('READ', 'schema shop', 'nobody'));
    const files = await assertApiError(await vdb.request('reader', '/rest/api/source/files'), 403, 'reader files');
    assert.equal(files.description, missing('READ', 'schema files', 'reader'));
    const tables = async (user: string) =>
      (await okJson<Array<{ Name: string }>>(await vdb.request(user, '/rest/api/source/shop'), `${user} shop`)).map((t) => t.Name).sort();
    assert.deepEqual(await tables('reader'), ['customers', 'orders', 'paid_orders', 'products']);
    assert.deepEqual(await tables('custonly'), ['customers']);
    assert.deepEqual(await tables('executor'), []);
    // System schemas show to everyone.
    const sys = await okJson<Array<{ Name: string }>>(await vdb.request('nobody', '/rest/api/source/SYS'), 'nobody SYS');
    assert.deepEqual(sys.map((t) => t.Name).sort(), [
      'Columns',
      'Copies',
      'CopyRecommendations',
      'ProcedureParams',
      'Procedures',
      'Schemas',
      'Tables',
    ]);
  });

  test('GET /rest/api/source/{s}/{t}: 403 without READ on the table', async () => {
    const refused = await assertApiError(await vdb.request('custonly', '/rest/api/source/shop/orders'), 403, 'custonly orders');
    assert.equal(refused.description, missing('READ', 'table shop.orders', 'custonly'));
    const rows = await okJson<unknown[][]>(await vdb.request('custonly', '/rest/api/source/shop/customers?limit=2'));
    assert.equal(rows.length, 2);
  });
});

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

describe('views', () => {
  // Grants name existing objects only, so the users who need a grant on the view schema pv or
  // on the view pv.people are made once they exist.
  before(async () => {
    await vdb.userWith('architect', [
      ['*', 'A'],
      ['shop.customers', 'R'],
    ]);
  });

  test("CREATE VIEW in a new schema needs ALTER on '*'", async () => {
    await vdb.denied('reader', 'CREATE VIEW pv.people AS SELECT id, name, email, country FROM shop.customers', 'ALTER', 'everything (*)');
    assert.deepEqual(await vdb.rows('architect', 'CREATE VIEW pv.people AS SELECT id, name, email, country FROM shop.customers'), [
      ['pv.people', 4, 'created'],
    ]);
    // Now the schema and the view exist and can be granted on.
    await vdb.userWith('pv_keeper', [
      ['pv', 'A'],
      ['shop.customers', 'R'],
    ]);
    // Reads the view only; customers not at all.
    await vdb.userWith('view_reader', [['pv.people', 'R']]);
    // Reads the view; on customers, a condition without READ and a mask.
    await vdb.userWith('view_de', [
      ['pv.people', 'R'],
      ['shop.customers', '', { condition: "country = 'DE'" }],
      ['shop.customers.email', '', { mask: "'hidden'" }],
    ]);
    // Reads the view and customers under a condition.
    await vdb.userWith('view_fr', [
      ['pv.people', 'R'],
      ['shop.customers', 'R', { condition: "country = 'FR'" }],
    ]);
  });

  test('CREATE VIEW in an existing schema needs ALTER on that schema', async () => {
    assert.deepEqual(await vdb.rows('pv_keeper', `CREATE VIEW pv.germans AS SELECT id, name FROM shop.customers WHERE country = 'DE'`), [
      ['pv.germans', 2, 'created'],
    ]);
    await vdb.denied('reader', 'CREATE VIEW pv.other AS SELECT 1 AS one', 'ALTER', 'schema pv');
    await vdb.denied('pv_keeper', 'CREATE OR REPLACE VIEW pv2.other AS SELECT 1 AS one', 'ALTER', 'everything (*)');
    // The SELECT of a view is checked as its creator: no view over what they may not read.
    await vdb.denied('pv_keeper', 'CREATE VIEW pv.orders AS SELECT * FROM shop.orders', 'READ', 'table shop.orders');
    // DROP VIEW needs ALTER on the schema too.
    await vdb.denied('reader', 'DROP VIEW pv.germans', 'ALTER', 'schema pv');
    assert.deepEqual(await vdb.rows('pv_keeper', 'DROP VIEW pv.germans'), [['pv.germans', 'dropped']]);
  });

  test('reading a view needs READ on the view, not on its tables', async () => {
    await vdb.denied('custonly', 'SELECT count(*) FROM pv.people', 'READ', 'view pv.people');
    await vdb.denied('nobody', 'SELECT * FROM pv.people', 'READ', 'view pv.people');
    assert.deepEqual(await vdb.rows('view_reader', 'SELECT count(*) FROM pv.people'), [[200]]);
    assert.deepEqual(await vdb.rows('view_reader', 'SELECT email FROM pv.people WHERE id = 1'), [['lukas.muller1@example.com']]);
    await vdb.denied('view_reader', 'SELECT count(*) FROM shop.customers', 'READ', 'table shop.customers');
  });

  test('row conditions and masks of the user’s roles on the tables inside still apply', async () => {
    assert.deepEqual(await vdb.rows('view_de', 'SELECT count(*) FROM pv.people'), [[34]]);
    assert.deepEqual(await vdb.rows('view_de', 'SELECT DISTINCT email FROM pv.people'), [['hidden']]);
    await vdb.denied('view_de', 'SELECT count(*) FROM shop.customers', 'READ', 'table shop.customers');
    assert.deepEqual(await vdb.rows('view_fr', 'SELECT count(*), min(country), max(country) FROM pv.people'), [[24, 'FR', 'FR']]);
    assert.deepEqual(await vdb.rows('view_fr', 'SELECT count(*) FROM shop.customers'), [[24]]);
    // The admin sees the view whole.
    assert.deepEqual(await vdb.admin('SELECT count(*) FROM pv.people'), [[200]]);
  });

  test('views show in the system tables only to those who may read them', async () => {
    const q = `SELECT count(*) FROM SYS.Tables WHERE "SchemaName" = 'pv' AND "Name" = 'people'`;
    assert.deepEqual(await vdb.rows('view_reader', q), [[1]]);
    assert.deepEqual(await vdb.rows('reader', q), [[0]]);
    assert.deepEqual(await sourceList(vdb, 'view_reader'), ['pv']);
  });

  test('a read-only API key cannot create or drop a view, even an administrator’s', async () => {
    const keyOf = async (user: string) => {
      const response = await vdb.request(user, '/rest/api/keys', { body: { name: `ro-${user}`, readOnly: true } });
      assert.equal(response.status, 201);
      return String(((await response.json()) as { key: string }).key);
    };
    for (const user of ['admin', 'architect']) {
      const key = await keyOf(user);
      const bearer = { authorization: `Bearer ${key}` };
      for (const sql of ['CREATE VIEW pv.by_key AS SELECT 1 AS one', 'CREATE VIEW keyviews.v AS SELECT 1 AS one', 'DROP VIEW pv.people']) {
        await assertApiError(await vdb.server.request('/rest/api/query', { body: { sql }, headers: bearer }), 403, `${user} key: ${sql}`);
      }
      // It still reads.
      assert.deepEqual(
        await okJson(
          await vdb.server.request('/rest/api/query', { body: { sql: 'SELECT count(*) FROM shop.customers' }, headers: bearer }),
        ),
        [[200]],
      );
    }
    assert.deepEqual(await vdb.admin(`SELECT count(*) FROM SYS.Tables WHERE "Name" IN ('by_key', 'v') OR "SchemaName" = 'keyviews'`), [
      [0],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Cursors
// ---------------------------------------------------------------------------------------------

describe('conditions that read other tables, and writes under them (own server)', () => {
  let s: Vdb;
  before(async () => {
    s = await Vdb.start();
    // Orders of German customers only, decided by a lookup in shop.customers (no grant on it).
    await s.userWith('de_orders', [
      ['shop.orders', 'CRUD', { condition: "customer_id IN (SELECT id FROM shop.customers WHERE country = 'DE')" }],
    ]);
    await s.userWith('upper_paid', [['shop.orders', 'RUD', { condition: "upper(status) = 'PAID'" }]]);
    await s.userWith('masked_names', [
      ['shop', 'RU'],
      ['shop.customers.name', 'R', { mask: "'***'" }],
    ]);
  });
  after(async () => s?.close());

  const german = "SELECT count(*) FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id WHERE c.country = 'DE'";

  test('reads and writes under a condition with a subquery reach only its rows', async () => {
    const [[count]] = await s.admin<[number]>(german);
    assert.deepEqual(await s.rows('de_orders', 'SELECT count(*) FROM shop.orders'), [[count]]);
    // Subqueries are never sent to SQLite in writes: the engine chooses the rows (by the condition), SQLite writes them by key.
    const [[de]] = await s.admin<[number]>(`${german.replace('count(*)', 'min(o.id)')}`);
    const [[other]] = await s.admin<[number]>(german.replace('count(*)', 'min(o.id)').replace("= 'DE'", "<> 'DE'"));
    assert.deepEqual(await s.rows('de_orders', `UPDATE shop.orders SET quantity = quantity WHERE id = ${de}`), [[1]]);
    assert.deepEqual(await s.rows('de_orders', `UPDATE shop.orders SET quantity = quantity WHERE id = ${other}`), [[0]]);
    assert.deepEqual(await s.rows('de_orders', `DELETE FROM shop.orders WHERE id = ${other}`), [[0]]);
    assert.deepEqual(await s.admin(`SELECT count(*) FROM shop.orders WHERE id = ${other}`), [[1]]);
  });

  test('INSERT checks new rows with the condition reading its tables as they are', async () => {
    const [[de]] = await s.admin<[number]>("SELECT min(id) FROM shop.customers WHERE country = 'DE'");
    const [[fr]] = await s.admin<[number]>("SELECT min(id) FROM shop.customers WHERE country = 'FR'");
    const columns = '(id, customer_id, product_id, quantity, amount, status, ordered_at)';
    assert.deepEqual(await s.rows('de_orders', `INSERT INTO shop.orders ${columns} VALUES (990001, ${de}, 1, 1, 1, 'new', '2025-01-01')`), [
      [1],
    ]);
    await s.refused(
      'de_orders',
      `INSERT INTO shop.orders ${columns} VALUES (990002, ${fr}, 1, 1, 1, 'new', '2025-01-01')`,
      403,
      /outside the rows you may insert/,
    );
    assert.deepEqual(await s.admin('SELECT count(*) FROM shop.orders WHERE id IN (990001, 990002)'), [[1]]);
  });

  test('a condition the source cannot take is evaluated by vdb for writes', async () => {
    const [[paid]] = await s.admin<[number]>("SELECT count(*) FROM shop.orders WHERE upper(status) = 'PAID'");
    assert.ok(paid > 0);
    assert.deepEqual(await s.rows('upper_paid', 'UPDATE shop.orders SET quantity = quantity'), [[paid]]);
    assert.deepEqual(await s.rows('upper_paid', 'DELETE FROM shop.orders WHERE id = -1'), [[0]]);
  });

  test("a bare name inside a subquery is its own table's, not the masked target column", async () => {
    // Past the permission check (SQLite then refuses the subquery: 400, not 403).
    await s.refused(
      'masked_names',
      "UPDATE shop.customers SET segment = segment WHERE id IN (SELECT id FROM shop.products WHERE name = 'zzz')",
      400,
      /cannot be sent to shop as written/,
    );
    // Qualified with the target, or bare where no inner table has it, it is the target's.
    await s.refused(
      'masked_names',
      'UPDATE shop.customers c SET segment = segment WHERE id IN (SELECT id FROM shop.products p WHERE p.name = c.name)',
      403,
      /is masked/,
    );
    await s.refused(
      'masked_names',
      "UPDATE shop.customers SET segment = segment WHERE id IN (SELECT customer_id FROM shop.orders WHERE name = 'x')",
      403,
      /is masked/,
    );
  });

  test('conditions and masks are checked against their object when set', async () => {
    await s.refused(
      'admin',
      "CALL SYSADMIN.setPermissions('de_orders', 'shop.orders', 'R', 'nosuch = 1')",
      400,
      /cannot be evaluated on shop\.orders/,
    );
    await s.refused(
      'admin',
      "CALL SYSADMIN.setPermissions('de_orders', 'shop.orders.status', 'R', NULL, 'nosuch(status)')",
      400,
      /cannot be evaluated on shop\.orders/,
    );
  });

  test('TABLESAMPLE samples tables, not views', async () => {
    await s.admin('CREATE VIEW sampled.v AS SELECT id FROM shop.orders');
    await s.refused(
      'admin',
      'SELECT count(*) FROM sampled.v TABLESAMPLE SYSTEM (50)',
      400,
      /TABLESAMPLE samples tables; sampled\.v is a view/,
    );
  });
});

describe('cursors', () => {
  test("another user's requestId is 404, even for a user with the same grants", async () => {
    const first = await vdb.query('reader', 'SELECT id FROM shop.customers ORDER BY id', '?pagination=true&limit=5');
    assert.deepEqual(await okJson(first), [[1], [2], [3], [4], [5]]);
    const id = first.headers.get('requestId');
    assert.ok(id);
    const other = await vdb.request('writer', `/rest/api/query?requestId=${id}&limit=5&offset=5`, { method: 'POST' });
    const body = await assertApiError(other, 404, 'writer reads reader’s cursor');
    assert.equal(body.title, 'Unknown requestId');
    const own = await vdb.request('reader', `/rest/api/query?requestId=${id}&limit=5&offset=5`, { method: 'POST' });
    assert.deepEqual(await okJson(own), [[6], [7], [8], [9], [10]]);
  });
});
