/**
 * Virtual views: CREATE [OR REPLACE] VIEW schema.name [(columns)] AS SELECT ... in virtual
 * schemas, DROP VIEW [IF EXISTS], views over views, the rules (schema, duplicate columns,
 * dependents, self-reference, read-only), the catalog (SYS.Schemas, SYS.Tables, SYS.Columns,
 * GET /rest/api/source...), pushdown of views over PostgreSQL, permissions and persistence
 * across a restart. Everything goes through the REST API of a real server.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, okJson, tokenRequester, type Requester } from '../http/util.js';

const TAG = `vdbt_views_${randomBytes(4).toString('hex')}`;
const PG_SOURCE = {
  name: 'pg',
  template: 'postgresql',
  connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
  modelProps: `importer.schemaPattern=${TAG}`,
};

// id, name, price, category
const ITEMS: Array<[number, string, string, string | null]> = [
  [1, 'Apple', '0.50', 'fruit'],
  [2, 'Bread', '2.50', 'bakery'],
  [3, 'Cheese', '12.00', 'dairy'],
  [4, 'Avocado', '1.75', 'fruit'],
  [5, 'Wine', '25.00', null],
];

let dataDir: string;
let server: TestServer;
let admin: Requester;
let vera: Requester;

before(async () => {
  const pg = await pgClient();
  try {
    await pg.query(`CREATE SCHEMA ${TAG}`);
    await pg.query(`CREATE TABLE ${TAG}.items (id int PRIMARY KEY, name text, price numeric(10,2), category text)`);
    for (const row of ITEMS) await pg.query(`INSERT INTO ${TAG}.items VALUES ($1, $2, $3, $4)`, row);
  } finally {
    await pg.end();
  }
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-views-'));
  server = await startTestServer({ dataDir });
  admin = await tokenRequester(server);
  const response = await admin('/rest/api/source', { body: PG_SOURCE });
  assert.equal(response.status, 201, await response.text());
  await rows(admin, "CALL SYSADMIN.addUser('vera', 'vera-password-1')");
  await rows(admin, "CALL SYSADMIN.addRole('viewers')");
  await rows(admin, "CALL SYSADMIN.addUserRole('viewers', 'vera')");
  vera = await tokenRequester(server, 'vera', 'vera-password-1');
});

after(async () => {
  await server?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  const pg = await pgClient();
  await pg.query(`DROP SCHEMA IF EXISTS ${TAG} CASCADE`);
  await pg.end();
});

async function rows(request: Requester, sql: string, params = ''): Promise<unknown[][]> {
  return okJson<unknown[][]>(await request(`/rest/api/query${params}`, { body: { sql } }), sql);
}

async function fails(request: Requester, sql: string, status: number) {
  return assertApiError(await request('/rest/api/query', { body: { sql } }), status, sql);
}

const views = async (schema: string) =>
  rows(admin, `SELECT "Name" FROM SYS.Tables WHERE "SchemaName" = '${schema}' ORDER BY "Name"`).then((r) => r.map((x) => x[0]));
const schemaNames = async () => (await rows(admin, 'SELECT "Name" FROM SYS.Schemas ORDER BY "OID"')).map((r) => r[0]);
const restSchemas = async () => (await okJson<Array<{ Name: string }>>(await admin('/rest/api/source'))).map((r) => r.Name);

describe('creating and reading views', () => {
  test('CREATE VIEW answers the view and its column count; the view reads like a table', async () => {
    assert.deepEqual(await rows(admin, 'CREATE VIEW views.cheap AS SELECT id, name, price FROM pg.items WHERE price < 10'), [
      ['views.cheap', 3, 'created'],
    ]);
    assert.deepEqual(await rows(admin, 'SELECT * FROM views.cheap ORDER BY id'), [
      [1, 'Apple', 0.5],
      [2, 'Bread', 2.5],
      [4, 'Avocado', 1.75],
    ]);
    assert.deepEqual(
      await rows(admin, "SELECT c.name FROM views.cheap c JOIN pg.items i ON i.id = c.id WHERE i.category = 'fruit' ORDER BY 1"),
      [['Apple'], ['Avocado']],
    );
    assert.deepEqual(await rows(admin, 'SELECT count(*), sum(price) FROM VIEWS.CHEAP'), [[3, 4.75]]);
    assert.deepEqual(
      await rows(admin, 'SELECT name FROM "views"."cheap" WHERE id IN (SELECT id FROM views.cheap WHERE price > 1) ORDER BY 1'),
      [['Avocado'], ['Bread']],
    );
  });

  test('the catalog lists the view and its virtual schema', async () => {
    const tables = await rows(
      admin,
      `SELECT "SchemaName", "Name", "Type", "IsPhysical", "SupportsUpdates", "IsSystem" FROM SYS.Tables WHERE "SchemaName" = 'views' AND "Name" = 'cheap'`,
    );
    assert.deepEqual(tables, [['views', 'cheap', 'View', false, false, false]]);
    const columns = await rows(
      admin,
      `SELECT "Name", "Position", "DataType" FROM SYS.Columns WHERE "SchemaName" = 'views' AND "TableName" = 'cheap' ORDER BY "Position"`,
    );
    assert.deepEqual(
      columns.map((c) => [c[0], c[1]]),
      [
        ['id', 1],
        ['name', 2],
        ['price', 3],
      ],
    );
    assert.match(String(columns[0]![2]), /INT/);
    assert.equal(columns[1]![2], 'VARCHAR');
    assert.match(String(columns[2]![2]), /^DECIMAL/);
    const schema = await rows(admin, `SELECT "Name", "IsPhysical" FROM SYS.Schemas WHERE "Name" = 'views'`);
    assert.deepEqual(schema, [['views', false]]);
    const listed = await restSchemas();
    assert.ok(listed.includes('views'), JSON.stringify(listed));
    assert.equal(listed.indexOf('views'), listed.length - 1, 'virtual schemas come after the sources');
    const inSchema = await okJson<Array<Record<string, unknown>>>(await admin('/rest/api/source/views'));
    assert.deepEqual(
      inSchema.find((t) => t.Name === 'cheap'),
      { Name: 'cheap', Type: 'View', Description: null, SchemaName: 'views' },
    );
  });

  test('GET /rest/api/source/{schema}/{view} returns its rows', async () => {
    const all = await okJson<unknown[][]>(await admin('/rest/api/source/views/cheap'));
    assert.deepEqual(
      all.sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [1, 'Apple', 0.5],
        [2, 'Bread', 2.5],
        [4, 'Avocado', 1.75],
      ],
    );
    const objects = await okJson<Array<Record<string, unknown>>>(await admin('/rest/api/source/views/cheap?array=false'));
    assert.deepEqual(Object.keys(objects[0]!), ['id', 'name', 'price']);
    assert.equal(objects.length, 3);
    const headed = await okJson<unknown[][]>(await admin('/rest/api/source/views/cheap?headers=true&limit=1'));
    assert.deepEqual(headed[0], ['id', 'name', 'price']);
    assert.equal(headed.length, 2);
    await assertApiError(await admin('/rest/api/source/views/nosuch'), 404, 'unknown view');
  });

  test('creating an existing view is 409; OR REPLACE replaces its definition and columns', async () => {
    await fails(admin, 'CREATE VIEW views.cheap AS SELECT 1 AS one', 409);
    assert.deepEqual(await rows(admin, 'SELECT count(*) FROM views.cheap'), [[3]], 'unchanged');
    assert.deepEqual(
      await rows(
        admin,
        "CREATE OR REPLACE VIEW views.cheap AS SELECT id, name, price, category FROM pg.items WHERE price < 2 OR category = 'dairy'",
      ),
      [['views.cheap', 4, 'created']],
    );
    assert.deepEqual(await rows(admin, 'SELECT * FROM views.cheap ORDER BY id'), [
      [1, 'Apple', 0.5, 'fruit'],
      [3, 'Cheese', 12, 'dairy'],
      [4, 'Avocado', 1.75, 'fruit'],
    ]);
    const columns = await rows(
      admin,
      `SELECT "Name" FROM SYS.Columns WHERE "SchemaName" = 'views' AND "TableName" = 'cheap' ORDER BY "Position"`,
    );
    assert.deepEqual(columns, [['id'], ['name'], ['price'], ['category']]);
    // Back to the first definition, for the tests below.
    await rows(admin, 'CREATE OR REPLACE VIEW views.cheap AS SELECT id, name, price FROM pg.items WHERE price < 10');
    assert.deepEqual(await views('views'), ['cheap']);
  });

  test('column aliases name the columns; the rest keep their names; too many aliases is 400', async () => {
    assert.deepEqual(await rows(admin, 'CREATE VIEW views.labels (item_id, label) AS SELECT id, name FROM pg.items'), [
      ['views.labels', 2, 'created'],
    ]);
    assert.deepEqual(await rows(admin, 'SELECT label FROM views.labels WHERE item_id = 3'), [['Cheese']]);
    assert.deepEqual(await rows(admin, 'SELECT * FROM views.labels WHERE item_id = 3', '?headers=true'), [
      ['item_id', 'label'],
      [3, 'Cheese'],
    ]);
    await fails(admin, 'SELECT name FROM views.labels', 400);
    assert.deepEqual(await rows(admin, 'CREATE VIEW views.partly (item_id) AS SELECT id, name FROM pg.items'), [
      ['views.partly', 2, 'created'],
    ]);
    assert.deepEqual(await rows(admin, 'SELECT * FROM views.partly WHERE item_id = 2', '?headers=true'), [
      ['item_id', 'name'],
      [2, 'Bread'],
    ]);
    await fails(admin, 'CREATE VIEW views.toomany (a, b, c) AS SELECT id, name FROM pg.items', 400);
    assert.deepEqual(await views('views'), ['cheap', 'labels', 'partly']);
    await rows(admin, 'DROP VIEW views.partly');
  });

  test('two columns of the same name are 400, and nothing is stored', async () => {
    for (const sql of [
      'CREATE VIEW views.dup AS SELECT id, id FROM pg.items',
      'CREATE VIEW views.dup AS SELECT id, name AS ID FROM pg.items',
      'CREATE VIEW views.dup AS SELECT i.name, c.name FROM pg.items i JOIN views.cheap c ON c.id = i.id',
      'CREATE VIEW views.dup (a, a) AS SELECT id, name FROM pg.items',
      'CREATE VIEW views.dup (name) AS SELECT id, name FROM pg.items',
    ]) {
      const body = await fails(admin, sql, 400);
      assert.match(body.description, /two columns named/i, sql);
    }
    assert.deepEqual(await views('views'), ['cheap', 'labels']);
  });

  test('a SELECT that fails stores nothing', async () => {
    await fails(admin, 'CREATE VIEW views.broken AS SELECT * FROM pg.nosuch', 400);
    await fails(admin, 'CREATE VIEW views.broken AS SELECT nosuch FROM pg.items', 400);
    await fails(admin, 'CREATE VIEW views.broken AS SELEC 1', 400);
    assert.deepEqual(await views('views'), ['cheap', 'labels']);
  });
});

describe('where views may live', () => {
  test('not in a source schema (409), nor a system schema (409), nor without a schema (400)', async () => {
    await fails(admin, 'CREATE VIEW pg.v AS SELECT 1 AS one', 409);
    await fails(admin, 'CREATE VIEW shop.v AS SELECT 1 AS one', 409);
    await fails(admin, 'CREATE VIEW "PG".v AS SELECT 1 AS one', 409);
    for (const schema of ['SYS', 'SYSADMIN', 'SYSLOG']) await fails(admin, `CREATE VIEW ${schema}.v AS SELECT 1 AS one`, 409);
    await fails(admin, 'CREATE VIEW v AS SELECT 1 AS one', 400);
    await fails(admin, 'CREATE TEMP VIEW views.t AS SELECT 1 AS one', 400);
    assert.deepEqual(await views('pg'), ['items']);
  });

  test('a virtual schema appears with its first view and disappears with its last', async () => {
    assert.ok(!(await schemaNames()).includes('scratch'));
    await rows(admin, 'CREATE VIEW scratch.one AS SELECT 1 AS n');
    await rows(admin, 'CREATE VIEW scratch.two AS SELECT n + 1 AS n FROM scratch.one');
    assert.deepEqual(await rows(admin, `SELECT "Name", "IsPhysical" FROM SYS.Schemas WHERE "Name" = 'scratch'`), [['scratch', false]]);
    assert.ok((await restSchemas()).includes('scratch'));
    assert.deepEqual(
      (await okJson<Array<{ Name: string; Type: string }>>(await admin('/rest/api/source/scratch'))).map((t) => [t.Name, t.Type]),
      [
        ['one', 'View'],
        ['two', 'View'],
      ],
    );
    assert.deepEqual(await okJson(await admin('/rest/api/source/scratch/two')), [[2]]);
    // A data source cannot take the name of a virtual schema.
    await assertApiError(
      await admin('/rest/api/source', { body: { ...PG_SOURCE, name: 'scratch' } }),
      409,
      'source named like a virtual schema',
    );
    await rows(admin, 'DROP VIEW scratch.two');
    assert.ok((await schemaNames()).includes('scratch'), 'one view is left');
    await rows(admin, 'DROP VIEW scratch.one');
    assert.ok(!(await schemaNames()).includes('scratch'));
    assert.ok(!(await restSchemas()).includes('scratch'));
    await assertApiError(await admin('/rest/api/source/scratch'), 404, 'the schema is gone');
    await fails(admin, 'SELECT * FROM scratch.one', 400);
  });
});

describe('views over views', () => {
  test('a chain of views reads through', async () => {
    await rows(admin, "CREATE VIEW views.fruit AS SELECT id, name, price FROM views.cheap WHERE name LIKE 'A%'");
    await rows(admin, 'CREATE VIEW views.fruit_names (fruit) AS SELECT upper(name) FROM views.fruit');
    assert.deepEqual(await rows(admin, 'SELECT * FROM views.fruit ORDER BY id'), [
      [1, 'Apple', 0.5],
      [4, 'Avocado', 1.75],
    ]);
    assert.deepEqual(await rows(admin, 'SELECT fruit FROM views.fruit_names ORDER BY 1'), [['APPLE'], ['AVOCADO']]);
    assert.deepEqual(
      await rows(admin, 'SELECT f.fruit, l.label FROM views.fruit_names f JOIN views.labels l ON upper(l.label) = f.fruit ORDER BY 1'),
      [
        ['APPLE', 'Apple'],
        ['AVOCADO', 'Avocado'],
      ],
    );
  });

  test('a view that reads itself is 400', async () => {
    const body = await fails(admin, 'CREATE VIEW views.selfish AS SELECT * FROM views.selfish', 400);
    assert.match(body.description, /itself/);
    await fails(admin, 'CREATE VIEW views.selfish AS SELECT 1 AS n UNION ALL SELECT n FROM (SELECT * FROM views.selfish) s', 400);
    await fails(admin, 'CREATE OR REPLACE VIEW views.fruit AS SELECT * FROM views.fruit', 400);
    assert.deepEqual(await rows(admin, 'SELECT count(*) FROM views.fruit'), [[2]], 'the view is unchanged');
  });

  test('a view cannot be replaced so that views read each other in a circle', async () => {
    // views.fruit_names reads views.fruit: replacing views.fruit to read views.fruit_names closes a circle.
    const response = await admin('/rest/api/query', {
      body: { sql: 'CREATE OR REPLACE VIEW views.fruit AS SELECT * FROM views.fruit_names' },
    });
    const text = await response.text();
    if (response.status === 200) {
      // Undo it so that the other tests keep working, then fail.
      await rows(admin, "CREATE OR REPLACE VIEW views.fruit AS SELECT id, name, price FROM views.cheap WHERE name LIKE 'A%'");
    }
    assert.equal(response.status, 400, `a circle of views is refused: ${text}`);
    assert.deepEqual(await rows(admin, 'SELECT fruit FROM views.fruit_names ORDER BY 1'), [['APPLE'], ['AVOCADO']]);
  });

  test('DROP VIEW: 409 while another view reads it; IF EXISTS; unknown views and bad names 400', async () => {
    const conflict = await fails(admin, 'DROP VIEW views.fruit', 409);
    assert.match(conflict.description, /views\.fruit_names/);
    const base = await fails(admin, 'DROP VIEW views.cheap', 409);
    assert.match(base.description, /views\.fruit\b/);
    await fails(admin, 'DROP VIEW views.nosuch', 400);
    assert.deepEqual(await rows(admin, 'DROP VIEW IF EXISTS views.nosuch'), []);
    await fails(admin, 'DROP VIEW nosuch', 400);
    await rows(admin, 'CREATE VIEW views.temp AS SELECT 1 AS n');
    assert.deepEqual(await rows(admin, 'DROP VIEW IF EXISTS views.temp'), [['views.temp', 'dropped']]);
    assert.deepEqual(await views('views'), ['cheap', 'fruit', 'fruit_names', 'labels']);
  });

  test('DROP VIEW of several views: readers first works; a failing statement drops nothing', async () => {
    await rows(admin, 'CREATE VIEW several.a AS SELECT 1 AS n');
    await rows(admin, 'CREATE VIEW several.b AS SELECT n FROM several.a');
    await rows(admin, 'CREATE VIEW several.c AS SELECT 2 AS n');
    // An unknown view in the list: 400, and the statement should have no effect.
    await fails(admin, 'DROP VIEW several.c, several.nosuch', 400);
    const afterFailure = await views('several');
    await rows(admin, 'DROP VIEW IF EXISTS several.c, several.nosuch');
    assert.deepEqual(await views('several'), ['a', 'b']);
    assert.deepEqual(await rows(admin, 'DROP VIEW several.b, several.a'), [
      ['several.b', 'dropped'],
      ['several.a', 'dropped'],
    ]);
    assert.deepEqual(await views('several'), []);
    assert.ok(!(await schemaNames()).includes('several'));
    assert.deepEqual(afterFailure, ['a', 'b', 'c'], 'a DROP VIEW that failed (400) dropped nothing');
  });
});

describe('views and sources', () => {
  test('a view over a PostgreSQL table goes to PostgreSQL whole, views over views too', async () => {
    const statement = 'SELECT name FROM views.fruit WHERE price > 1 ORDER BY name';
    const plan = await rows(admin, `EXPLAIN ${statement}`);
    assert.equal(plan.length, 1, JSON.stringify(plan));
    const [step] = plan as [unknown[]];
    assert.deepEqual(step.slice(1, 5), ['pg', 'source statement', 'the whole statement', 'everything']);
    assert.match(String(step[5]), /price < 10/);
    assert.match(String(step[5]), /LIKE 'A%'/);
    assert.deepEqual(await rows(admin, statement), [['Avocado']]);
    const [[sent]] = (await rows(
      admin,
      `SELECT "SourceQueries" FROM SYSLOG.QueryLog WHERE "Statement" = '${statement.replace(/'/g, "''")}' ORDER BY "ID" DESC LIMIT 1`,
    )) as [[string]];
    assert.match(sent, /^pg: /);
    assert.match(sent, new RegExp(`${TAG}\\.items`));
    assert.match(sent, /price < 10/);
  });

  test('a view over PostgreSQL and SQLite reads both sources', async () => {
    await rows(
      admin,
      'CREATE VIEW mixed.pairs AS SELECT i.id, i.name AS item, c.name AS customer FROM pg.items i JOIN shop.customers c ON c.id = i.id',
    );
    const [[first]] = (await rows(admin, 'SELECT name FROM shop.customers WHERE id = 1')) as [[string]];
    assert.deepEqual(await rows(admin, 'SELECT item, customer FROM mixed.pairs WHERE id = 1'), [['Apple', first]]);
    assert.deepEqual(await rows(admin, 'SELECT count(*) FROM mixed.pairs'), [[5]]);
    const plan = await rows(admin, 'EXPLAIN SELECT * FROM mixed.pairs');
    assert.deepEqual(
      plan
        .filter((r) => r[2] === 'source query')
        .map((r) => r[1])
        .sort(),
      ['pg', 'shop'],
    );
    // SELECT * over the view reads only the columns the view selects, not whole tables.
    const shopQuery = String(plan.find((r) => r[1] === 'shop')?.[5]);
    assert.match(shopQuery, /^SELECT "id", "name" FROM "customers"/);
    await rows(admin, 'DROP VIEW mixed.pairs');
  });

  test('views are read-only: INSERT, UPDATE and DELETE are 403', async () => {
    await fails(admin, "INSERT INTO views.cheap VALUES (9, 'x', 1)", 403);
    await fails(admin, "UPDATE views.cheap SET name = 'x'", 403);
    await fails(admin, 'DELETE FROM views.cheap', 403);
    assert.deepEqual(await rows(admin, 'SELECT count(*) FROM pg.items'), [[5]]);
  });
});

describe('permissions on views', () => {
  test('reading a view needs READ on the view, not on its tables', async () => {
    await fails(vera, 'SELECT * FROM views.cheap', 403);
    await rows(admin, "CALL SYSADMIN.setPermissions('viewers', 'views.cheap', 'R')");
    assert.deepEqual(await rows(vera, 'SELECT count(*) FROM views.cheap'), [[3]]);
    assert.deepEqual(await okJson(await vera('/rest/api/source/views/cheap')).then((r) => (r as unknown[]).length), 3);
    await fails(vera, 'SELECT * FROM pg.items', 403);
    await fails(vera, 'SELECT * FROM views.labels', 403);
    // Views over views: READ on the outer view suffices.
    await rows(admin, "CALL SYSADMIN.setPermissions('viewers', 'views.fruit_names', 'R')");
    assert.deepEqual(await rows(vera, 'SELECT fruit FROM views.fruit_names ORDER BY 1'), [['APPLE'], ['AVOCADO']]);
    // Vera sees the views she may read in the catalog, not the others.
    const listed = await rows(vera, `SELECT "Name" FROM SYS.Tables WHERE "SchemaName" = 'views' ORDER BY "Name"`);
    assert.deepEqual(listed, [['cheap'], ['fruit_names']]);
  });

  test('creating and dropping a view needs ALTER; its SELECT is checked as its creator', async () => {
    await fails(vera, 'CREATE VIEW veras.v AS SELECT 1 AS n', 403);
    await fails(vera, 'CREATE VIEW views.v AS SELECT 1 AS n', 403);
    await fails(vera, 'DROP VIEW views.cheap', 403);
    await rows(admin, "CALL SYSADMIN.setPermissions('viewers', 'views', 'RA')");
    // ALTER on the schema, but no READ on pg.items.
    await fails(vera, 'CREATE VIEW views.v AS SELECT id FROM pg.items', 403);
    assert.deepEqual(await rows(vera, 'CREATE VIEW views.v AS SELECT fruit FROM views.fruit_names'), [['views.v', 1, 'created']]);
    assert.deepEqual(await rows(vera, 'SELECT count(*) FROM views.v'), [[2]]);
    assert.deepEqual(await rows(vera, 'DROP VIEW views.v'), [['views.v', 'dropped']]);
    await rows(admin, "CALL SYSADMIN.setPermissions('viewers', 'views', NULL)");
  });
});

describe('persistence', () => {
  test('views survive a restart on the same data directory', async () => {
    await server.close();
    server = await startTestServer({ dataDir });
    admin = await tokenRequester(server);
    assert.deepEqual(await views('views'), ['cheap', 'fruit', 'fruit_names', 'labels']);
    assert.deepEqual(await rows(admin, 'SELECT * FROM views.cheap ORDER BY id'), [
      [1, 'Apple', 0.5],
      [2, 'Bread', 2.5],
      [4, 'Avocado', 1.75],
    ]);
    assert.deepEqual(await rows(admin, 'SELECT fruit FROM views.fruit_names ORDER BY 1'), [['APPLE'], ['AVOCADO']]);
    assert.deepEqual(await rows(admin, `SELECT "Name", "IsPhysical" FROM SYS.Schemas WHERE "Name" = 'views'`), [['views', false]]);
    assert.deepEqual((await okJson<unknown[]>(await admin('/rest/api/source/views/labels'))).length, 5);
    await fails(admin, 'DROP VIEW views.fruit', 409);
    // Grants on views are kept too.
    vera = await tokenRequester(server, 'vera', 'vera-password-1');
    assert.deepEqual(await rows(vera, 'SELECT count(*) FROM views.cheap'), [[3]]);
  });
});
