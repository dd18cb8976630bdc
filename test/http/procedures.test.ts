/**
 * Procedures through the source endpoints (issue 28, section 1), against the real PostgreSQL and
 * MariaDB on loopback: functions and stored procedures created in this run's own schema and
 * database (dropped at the end) are imported with their sources, listed beside the tables and in
 * SYS.Procedures / SYS.ProcedureParams, called by GET (query parameters), POST (an object, or an
 * array answered in order), CALL and SELECT * FROM src.fn(...), paginated like tables, and
 * compared with what PostgreSQL answers for the same call. Arguments travel bound (a quote in one
 * is a value), bad ones are 400s naming the parameter, and the permissions hold: E to call, and
 * for procedures that change data U on the source and a key that may write.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import type mysql from 'mysql2/promise';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOkJson, expectOkText, mysqlConnection, PG, pgClient, uniqueTag } from '../connectors/db.js';
import { basicOf } from './util.js';

const tag = uniqueTag();
let server: TestServer;
let pgAdmin: pg.Client;
let my: mysql.Connection;

const get = (path: string, headers?: Record<string, string>) => server.request(path, { method: 'GET', headers });
const post = (path: string, body: unknown, headers?: Record<string, string>) => server.request(path, { body, headers });
const sql = (text: string, params = '', headers?: Record<string, string>) =>
  server.request(`/rest/api/query${params}`, { body: { sql: text }, headers });

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE TABLE ${tag}.items (id int PRIMARY KEY, name text, price numeric(10,2));
    INSERT INTO ${tag}.items VALUES (1, 'one', 1.50), (2, 'two', 2.25), (3, 'three', NULL), (4, 'four', 4.00);
    CREATE FUNCTION ${tag}.items_above(min_id int) RETURNS TABLE(id int, name text, price numeric(10,2))
      LANGUAGE sql STABLE AS $$ SELECT i.id, i.name, i.price FROM ${tag}.items i WHERE i.id > min_id ORDER BY i.id $$;
    CREATE FUNCTION ${tag}.add_tax(amount numeric, rate numeric DEFAULT 0.2) RETURNS numeric
      LANGUAGE sql IMMUTABLE AS $$ SELECT amount * (1 + rate) $$;
    CREATE FUNCTION ${tag}.greeting(who text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'hello, ' || who $$;
    CREATE FUNCTION ${tag}.checked(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS
      $$ BEGIN IF x < 0 THEN RAISE EXCEPTION 'x must not be negative'; END IF; RETURN x * 2; END $$;
    CREATE FUNCTION ${tag}.add_item(item_id int, item_name text) RETURNS int LANGUAGE sql VOLATILE AS
      $$ INSERT INTO ${tag}.items VALUES (item_id, item_name, NULL) RETURNING id $$;
    CREATE TABLE ${tag}.kinds_t (d date, ts timestamp, tz timestamptz, b boolean, bytes bytea, j jsonb, big bigint, n numeric,
      r real, f float8, t time, iv interval, u uuid, c char(3), arr int[]);
    INSERT INTO ${tag}.kinds_t VALUES
      ('2024-02-29', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+02', true, '\xdeadbeef', '{"a": [1, 2.50]}', -9223372036854775808,
       12345678901234567890.123456789, 1.1, 0.1, '13:14:15', '1 day 02:03:04', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'ab', '{1,2}'),
      (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CREATE FUNCTION ${tag}.kinds() RETURNS SETOF ${tag}.kinds_t LANGUAGE sql STABLE AS $$ SELECT * FROM ${tag}.kinds_t $$;
    CREATE FUNCTION ${tag}."Mixed"(a int DEFAULT 1, "B" int DEFAULT 2) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT a * 10 + "B" $$;
    CREATE FUNCTION ${tag}.dup(x int) RETURNS int LANGUAGE sql AS $$ SELECT x $$;
    CREATE FUNCTION ${tag}.dup(x text) RETURNS text LANGUAGE sql AS $$ SELECT x $$;
    CREATE FUNCTION ${tag}.writer() RETURNS int LANGUAGE sql VOLATILE AS $$ INSERT INTO ${tag}.items VALUES (99, 'sneaky', NULL) RETURNING id $$;
    CREATE FUNCTION ${tag}.sneaky() RETURNS int LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN ${tag}.writer(); END $$;
    CREATE FUNCTION ${tag}.nothing() RETURNS void LANGUAGE sql AS $$ SELECT $$;
    COMMENT ON FUNCTION ${tag}.items_above(int) IS 'Items after an id';
  `);
  my = await mysqlConnection();
  await my.query(`CREATE DATABASE ${tag}`);
  await my.query(`
    CREATE TABLE ${tag}.items (id INT PRIMARY KEY, name VARCHAR(50), price DECIMAL(10,2));
    INSERT INTO ${tag}.items VALUES (1, 'one', 1.50), (2, 'two', 2.25), (3, 'three', NULL);
    CREATE PROCEDURE ${tag}.items_above(IN min_id INT) READS SQL DATA
      SELECT id, name, price FROM ${tag}.items WHERE id > min_id ORDER BY id;
    CREATE PROCEDURE ${tag}.add_item(IN item_id INT, IN item_name VARCHAR(50)) MODIFIES SQL DATA
      BEGIN INSERT INTO ${tag}.items VALUES (item_id, item_name, NULL); SELECT item_id AS id; END;
    CREATE PROCEDURE ${tag}.sneaky() READS SQL DATA
      BEGIN INSERT INTO ${tag}.items VALUES (99, 'sneaky', NULL); SELECT 99 AS id; END;
    CREATE PROCEDURE ${tag}.flagged(IN on_sale BOOLEAN) SELECT on_sale + 0 AS v;
    CREATE PROCEDURE ${tag}.with_out(IN a INT, OUT b INT) SET b = a;
    CREATE PROCEDURE ${tag}.many(IN n INT) READS SQL DATA
      BEGIN SELECT seq AS id, CONCAT('row ', seq) AS label FROM seq_1_to_1000000 WHERE seq <= n; SELECT 'second' AS other; END;
  `);
  server = await startTestServer({ demo: false });
  for (const body of [
    {
      name: 'pgp',
      template: 'postgresql',
      connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=postgres`,
      modelProps: `importer.schemaPattern=${tag}`,
    },
    { name: 'myp', template: 'mariadb', connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=root` },
  ]) {
    const added = await post('/rest/api/source', body);
    assert.equal(added.status, 201, await added.text());
  }
  await server.services.users.addPasswordUser('carol', 'carol-pass-1');
  await server.services.users.addRole('callers');
  await server.services.users.addUserRole('callers', 'carol');
});

after(async () => {
  await server?.close();
  await pgAdmin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await pgAdmin?.end();
  await my?.query(`DROP DATABASE IF EXISTS ${tag}`);
  await my?.end();
});

describe('listing', () => {
  test("a source's procedures are listed beside its tables; overloaded, void and OUT ones are not imported", async () => {
    const pgList = await expectOkJson<Array<{ Name: string; Type: string; Description: string | null }>>(await get('/rest/api/source/pgp'));
    assert.deepEqual(
      pgList.map((o) => [o.Name, o.Type]),
      [
        ['items', 'Table'],
        ['kinds_t', 'Table'],
        ['Mixed', 'Procedure'],
        ['add_item', 'Procedure'],
        ['add_tax', 'Procedure'],
        ['checked', 'Procedure'],
        ['greeting', 'Procedure'],
        ['items_above', 'Procedure'],
        ['kinds', 'Procedure'],
        ['sneaky', 'Procedure'],
        ['writer', 'Procedure'],
      ],
    );
    assert.equal(pgList.find((o) => o.Name === 'items_above')?.Description, 'Items after an id');
    const myList = await expectOkJson<Array<{ Name: string; Type: string }>>(await get('/rest/api/source/myp'));
    assert.deepEqual(
      myList.map((o) => [o.Name, o.Type]),
      [
        ['items', 'Table'],
        ['add_item', 'Procedure'],
        ['flagged', 'Procedure'],
        ['items_above', 'Procedure'],
        ['many', 'Procedure'],
        ['sneaky', 'Procedure'],
      ],
    );
    const sysadmin = await expectOkJson<Array<{ Name: string; Type: string }>>(await get('/rest/api/source/SYSADMIN'));
    assert.ok(sysadmin.some((o) => o.Name === 'inviteUser' && o.Type === 'Procedure'));
    assert.ok(sysadmin.some((o) => o.Name === 'DataSources' && o.Type === 'Table'));
  });

  test('SYS.Procedures and SYS.ProcedureParams describe them', async () => {
    const procedures = await expectOkJson<unknown[][]>(
      await sql(`SELECT "SchemaName", "Name", "ModifiesData" FROM SYS."Procedures" WHERE "SchemaName" IN ('pgp', 'myp') ORDER BY 1, 2`),
    );
    assert.deepEqual(procedures, [
      ['myp', 'add_item', true],
      ['myp', 'flagged', false],
      ['myp', 'items_above', false],
      ['myp', 'many', false],
      ['myp', 'sneaky', false],
      ['pgp', 'Mixed', false],
      ['pgp', 'add_item', true],
      ['pgp', 'add_tax', false],
      ['pgp', 'checked', false],
      ['pgp', 'greeting', false],
      ['pgp', 'items_above', false],
      ['pgp', 'kinds', false],
      ['pgp', 'sneaky', false],
      ['pgp', 'writer', true],
    ]);
    const params = await expectOkJson<unknown[][]>(
      await sql(
        `SELECT "ProcedureName", "Name", "DataType", "NameInSource", "Position", "Type", "Optional" FROM SYS."ProcedureParams"
          WHERE "SchemaName" = 'pgp' AND "ProcedureName" IN ('add_tax', 'items_above') ORDER BY 1, "Type", 5`,
      ),
    );
    assert.deepEqual(params, [
      ['add_tax', 'amount', 'DECIMAL(38,10)', 'numeric', 1, 'In', false],
      ['add_tax', 'rate', 'DECIMAL(38,10)', 'numeric', 2, 'In', true],
      ['add_tax', 'add_tax', 'DECIMAL(38,10)', 'numeric', 1, 'ResultSet', false],
      ['items_above', 'min_id', 'INTEGER', 'integer', 1, 'In', false],
      ['items_above', 'id', 'INTEGER', 'integer', 1, 'ResultSet', false],
      ['items_above', 'name', 'VARCHAR', 'text', 2, 'ResultSet', false],
      // PostgreSQL keeps no typmod for a function's columns: numeric(10,2) is numeric there.
      ['items_above', 'price', 'DECIMAL(38,10)', 'numeric', 3, 'ResultSet', false],
    ]);
    const sysadmin = await expectOkJson<unknown[][]>(
      await sql(`SELECT "Name", "Position", "Optional" FROM SYS."ProcedureParams" WHERE "ProcedureName" = 'inviteUser'`),
    );
    assert.deepEqual(sysadmin, [['name', 1, false]]);
  });
});

describe('calls of PostgreSQL functions', () => {
  test('GET with query parameters answers the rows PostgreSQL answers, as the table endpoint does', async () => {
    const expected = (await pgAdmin.query({ text: `SELECT * FROM ${tag}.items_above(1)`, rowMode: 'array' })).rows as unknown[][];
    const answer = await expectOkJson<unknown[][]>(await get('/rest/api/source/pgp/items_above?min_id=1'));
    assert.deepEqual(
      answer,
      expected.map(([id, name, price]) => [id, name, price === null ? null : Number(price)]),
    );
    assert.deepEqual(answer, [
      [2, 'two', 2.25],
      [3, 'three', null],
      [4, 'four', 4],
    ]);
    // Numbers keep their scale as written in JSON (2.25, 4.00).
    assert.equal(await expectOkText(await get('/rest/api/source/pgp/items_above?min_id=3')), '[[4,"four",4.00]]');
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/items_above?min_id=2&array=false')), [
      { id: 3, name: 'three', price: null },
      { id: 4, name: 'four', price: 4 },
    ]);
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/items_above?min_id=3&headers=true')), [
      ['id', 'name', 'price'],
      [4, 'four', 4],
    ]);
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/items_above?min_id=0&limit=1&offset=1')), [[2, 'two', 2.25]]);
  });

  test('a scalar function: its one column is named after it; a parameter with a default may be left out', async () => {
    const [pgRow] = (await pgAdmin.query(`SELECT ${tag}.add_tax(100)::text AS a, ${tag}.add_tax(100, 0.5)::text AS b`)).rows as Array<{
      a: string;
      b: string;
    }>;
    assert.equal(await expectOkText(await get('/rest/api/source/pgp/add_tax?amount=100')), `[[${pgRow!.a}]]`);
    assert.equal(await expectOkText(await get('/rest/api/source/pgp/add_tax?amount=100&rate=0.5')), `[[${pgRow!.b}]]`);
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/add_tax?amount=2&array=false')), [{ add_tax: 2.4 }]);
    // Left out before one given: the rest go by name, quoted ("B" => $1), and names are case-insensitive.
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/Mixed?B=5&array=false')), [{ Mixed: 15 }]);
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/mixed?b=5')), [[15]]);
    assert.deepEqual(await expectOkJson(await sql('CALL pgp."Mixed"(3)')), [[32]]);
  });

  test('POST: an object of arguments, or an array of them answered in order', async () => {
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/pgp/items_above', { min_id: 3 })), [[4, 'four', 4]]);
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/pgp/greeting', [{ who: 'b' }, { who: 'a' }, { who: 'c' }])), [
      ['hello, b'],
      ['hello, a'],
      ['hello, c'],
    ]);
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/pgp/items_above?array=false', [{ min_id: 3 }, { min_id: 2 }])), [
      { id: 4, name: 'four', price: 4 },
      { id: 3, name: 'three', price: null },
      { id: 4, name: 'four', price: 4 },
    ]);
  });

  test('pagination: pages from the cursor, page links on the path', async () => {
    const first = await get('/rest/api/source/pgp/items_above?min_id=0&pagination=true&limit=2');
    assert.deepEqual(await expectOkJson(first), [
      [1, 'one', 1.5],
      [2, 'two', 2.25],
    ]);
    const requestId = first.headers.get('requestId')!;
    assert.match(requestId, /^[0-9a-f]{32}$/);
    assert.equal(first.headers.get('limit'), '2');
    assert.equal(first.headers.get('offset'), '0');
    const next = first.headers.get('nextPage')!;
    assert.equal(next, `${server.url}/rest/api/source/pgp/items_above?requestId=${requestId}&limit=2&offset=2&array=false&headers=false`);
    const second = await server.request(next.slice(server.url.length), { method: 'GET' });
    assert.deepEqual(await expectOkJson(second), [
      { id: 3, name: 'three', price: null },
      { id: 4, name: 'four', price: 4 },
    ]);
    assert.equal(second.headers.get('nextPage'), null);
    // A POST's later pages need no body.
    const posted = await post('/rest/api/source/pgp/greeting?pagination=true&limit=1', [{ who: 'x' }, { who: 'y' }]);
    assert.deepEqual(await expectOkJson(posted), [['hello, x']]);
    const page = await server.request(`/rest/api/source/pgp/greeting?requestId=${posted.headers.get('requestId')}&limit=1&offset=1`, {
      method: 'POST',
    });
    assert.deepEqual(await expectOkJson(page), [['hello, y']]);
  });

  test('CALL src.fn(...) and SELECT * FROM src.fn(...) in SQL; other statements over a procedure are refused', async () => {
    assert.deepEqual(await expectOkJson(await sql('CALL pgp.items_above(2)')), [
      [3, 'three', null],
      [4, 'four', 4],
    ]);
    assert.deepEqual(await expectOkJson(await sql('SELECT * FROM pgp.items_above(min_id => 3)', '?headers=true')), [
      ['id', 'name', 'price'],
      [4, 'four', 4],
    ]);
    assert.deepEqual(await expectOkJson(await sql("CALL pgp.add_tax(10, rate => '0.5')")), [[15]]);
    for (const statement of [
      'SELECT id FROM pgp.items_above(1) WHERE id > 2',
      'SELECT * FROM pgp.items_above(1) JOIN pgp.items USING (id)',
      'EXPLAIN SELECT * FROM pgp.items_above(1)',
      'CREATE VIEW v.above AS SELECT * FROM pgp.items_above(1)',
      'SELECT * FROM pgp.items_above(1) ORDER BY 1',
    ]) {
      assert.equal((await expectError(await sql(statement), 400, statement)).title, 'Unsupported statement', statement);
    }
    // A procedure's rows as an alias reads them: allowed.
    assert.deepEqual(await expectOkJson(await sql('SELECT * FROM pgp.items_above(3) AS a')), [[4, 'four', 4]]);
    // A statement's errors are never 404.
    const unknown = await expectError(await sql('CALL pgp.no_such_fn(1)'), 400);
    assert.equal(unknown.title, 'Invalid query');
    assert.match(unknown.description, /Procedure "pgp.no_such_fn" does not exist/);
  });

  test('arguments are values, never SQL: quotes and semicolons arrive as they are', async () => {
    const hostile = "x'); DROP TABLE items; --";
    assert.deepEqual(await expectOkJson(await get(`/rest/api/source/pgp/greeting?who=${encodeURIComponent(hostile)}`)), [
      [`hello, ${hostile}`],
    ]);
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/pgp/greeting', { who: '$1 "q" \\' })), [['hello, $1 "q" \\']]);
    const count = (await pgAdmin.query(`SELECT count(*)::int AS n FROM ${tag}.items`)).rows[0] as { n: number };
    assert.ok(count.n >= 4);
  });

  test('bad arguments: a 400 naming the parameter', async () => {
    const cases: Array<[Promise<Response>, RegExp]> = [
      [get('/rest/api/source/pgp/items_above?min_id=abc'), /"min_id".*integer/],
      [get('/rest/api/source/pgp/items_above'), /needs min_id/],
      [get('/rest/api/source/pgp/items_above?min_id=1&max_id=2'), /no parameter "max_id"/],
      [post('/rest/api/source/pgp/items_above', { min_id: { nested: 1 } }), /"min_id".*string, number, boolean or null/],
      [post('/rest/api/source/pgp/items_above', [1, 2]), /JSON object of arguments/],
      [post('/rest/api/source/pgp/items_above', []), /at least one call/],
      [get('/rest/api/source/pgp/checked?x=-1'), /x must not be negative/],
      [sql('CALL pgp.items_above(1, 2)'), /at most 1 arguments/],
    ];
    for (const [response, message] of cases) {
      const error = await expectError(await response, 400);
      assert.equal(error.title, 'Invalid procedure call');
      assert.match(error.description, message);
    }
    assert.equal((await expectError(await get('/rest/api/source/pgp/nothing'), 404)).title, 'Unknown table');
    // A table takes GET only: 405 with Allow, as any resource asked with a method it does not serve.
    assert.equal((await expectError(await post('/rest/api/source/pgp/items', {}), 405)).title, 'Method not allowed');
  });

  test("a function's values of every kind are the values the table endpoint answers for the same rows", async () => {
    for (const params of ['', '?array=false', '?headers=true']) {
      const table = await expectOkText(await get(`/rest/api/source/pgp/kinds_t${params}`));
      assert.equal(await expectOkText(await get(`/rest/api/source/pgp/kinds${params}`)), table, params);
    }
    // The char(3) keeps its padding as PostgreSQL writes it and as the JSON answers show it; the
    // table's CSV, which PostgreSQL writes for a statement sent whole (q.c::text), drops it.
    const table = await expectOkText(await get('/rest/api/source/pgp/kinds_t', { accept: 'text/csv' }));
    assert.equal(await expectOkText(await get('/rest/api/source/pgp/kinds', { accept: 'text/csv' })), table.replace(',ab,', ',ab ,'));
    assert.match(await expectOkText(await get('/rest/api/source/pgp/kinds_t?array=false')), /"c":"ab "/);
  });

  test('import patterns: importer.procedureNamePattern and importer.importProcedures', async () => {
    for (const [name, model, expected] of [
      ['pgnamed', `importer.schemaPattern=${tag},importer.procedureNamePattern=items%`, ['items_above']],
      ['pgnone', `importer.schemaPattern=${tag},importer.importProcedures=false`, []],
    ] as const) {
      const added = await post('/rest/api/source', {
        name,
        template: 'postgresql',
        connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=postgres`,
        modelProps: model,
      });
      assert.equal(added.status, 201, await added.text());
      const listed = await expectOkJson<Array<{ Name: string; Type: string }>>(await get(`/rest/api/source/${name}`));
      assert.deepEqual(
        listed.filter((o) => o.Type === 'Procedure').map((o) => o.Name),
        expected,
      );
      assert.equal((await server.request(`/rest/api/source/${name}`, { method: 'DELETE' })).status, 204);
    }
  });

  test('results in the formats the Accept header asks for', async () => {
    const csv = await expectOkText(await get('/rest/api/source/pgp/items_above?min_id=2', { Accept: 'text/csv' }));
    assert.equal(csv, 'id,name,price\r\n3,three,\r\n4,four,4.00\r\n');
  });
});

describe('calls of MariaDB stored procedures', () => {
  test('GET, POST and CALL answer the first result set', async () => {
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/myp/items_above?min_id=1&headers=true')), [
      ['id', 'name', 'price'],
      [2, 'two', 2.25],
      [3, 'three', null],
    ]);
    assert.equal(await expectOkText(await get('/rest/api/source/myp/items_above?min_id=1')), '[[2,"two",2.25],[3,"three",null]]');
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/myp/items_above', [{ min_id: 2 }, { min_id: 1 }])), [
      [3, 'three', null],
      [2, 'two', 2.25],
      [3, 'three', null],
    ]);
    assert.deepEqual(await expectOkJson(await sql('CALL myp.items_above(2)')), [[3, 'three', null]]);
    // A BOOLEAN (tinyint(1)) parameter takes true and false.
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/myp/flagged?on_sale=true')), [[1]]);
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/myp/flagged', { on_sale: false })), [[0]]);
    const bad = await expectError(await get('/rest/api/source/myp/items_above?min_id=x'), 400);
    assert.match(bad.description, /"min_id"/);
  });

  test('a large answer streams (the second result set dropped), and the connection serves the next call', async () => {
    const rows = (await expectOkJson(await sql('CALL myp.many(150000)'))) as unknown[][];
    assert.equal(rows.length, 150000);
    assert.deepEqual(
      [rows[0], rows[149999]],
      [
        [1, 'row 1'],
        [150000, 'row 150000'],
      ],
    );
    // A caller that stops reading early (a first page): the connection is not reused mid-call.
    for (let i = 0; i < 12; i++) {
      const page = await get('/rest/api/source/myp/many?n=100000&pagination=true&limit=5');
      assert.equal(page.status, 200, await page.clone().text());
    }
    assert.deepEqual(await expectOkJson(await sql('CALL myp.items_above(2)')), [[3, 'three', null]]);
  });

  test('a procedure that modifies data: written by a caller that may write', async () => {
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/myp/add_item', { item_id: 10, item_name: "it's" })), [[10]]);
    const [rows] = await my.query(`SELECT name FROM ${tag}.items WHERE id = 10`);
    assert.deepEqual(rows, [{ name: "it's" }]);
  });
});

test('a procedure declared as only reading runs in a read-only transaction: its write is refused', async () => {
  for (const path of ['/rest/api/source/pgp/sneaky', '/rest/api/source/myp/sneaky']) {
    const refused = await expectError(await get(path), 403);
    assert.match(refused.description, /refused a write of a procedure declared as only reading/);
  }
  const pgCount = (await pgAdmin.query(`SELECT count(*)::int AS n FROM ${tag}.items WHERE id = 99`)).rows[0] as { n: number };
  assert.equal(pgCount.n, 0);
  const [myRows] = await my.query(`SELECT count(*) AS n FROM ${tag}.items WHERE id = 99`);
  assert.deepEqual(myRows, [{ n: 0 }]);
});

describe('permissions', () => {
  const carol = { authorization: basicOf('carol', 'carol-pass-1') };

  test('EXECUTE on the procedure; a procedure that changes data also needs UPDATE on its source', async () => {
    assert.equal((await expectError(await get('/rest/api/source/pgp/greeting?who=c', carol), 403)).title, 'Forbidden');
    await expectOkJson(await sql("CALL SYSADMIN.setPermissions('callers', 'pgp.greeting', 'E')"));
    await expectOkJson(await sql("CALL SYSADMIN.setPermissions('callers', 'pgp.add_item', 'E')"));
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/greeting?who=c', carol)), [['hello, c']]);
    // Listed for her: the procedures she may call, not the others.
    const listed = await expectOkJson<Array<{ Name: string }>>(await get('/rest/api/source/pgp', carol));
    assert.deepEqual(
      listed.map((o) => o.Name),
      ['add_item', 'greeting'],
    );
    const write = await expectError(await post('/rest/api/source/pgp/add_item', { item_id: 20, item_name: 'x' }, carol), 403);
    assert.match(write.description, /UPDATE on schema pgp/);
    await expectOkJson(await sql("CALL SYSADMIN.setPermissions('callers', 'pgp', 'U')"));
    assert.deepEqual(await expectOkJson(await post('/rest/api/source/pgp/add_item', { item_id: 20, item_name: 'x' }, carol)), [[20]]);
  });

  test('a read-only API key calls procedures that only read, not those that change data', async () => {
    const response = await post('/rest/api/keys', { name: 'ro', readOnly: true });
    assert.equal(response.status, 201);
    const created = (await response.json()) as { key: string };
    const key = { authorization: `Bearer ${created.key}` };
    assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/greeting?who=k', key)), [['hello, k']]);
    assert.deepEqual(await expectOkJson(await sql('CALL myp.items_above(1)', '', key)), [
      [2, 'two', 2.25],
      [3, 'three', null],
      [10, "it's", null],
    ]);
    for (const response of [
      post('/rest/api/source/pgp/add_item', { item_id: 30, item_name: 'k' }, key),
      post('/rest/api/source/myp/add_item', { item_id: 30, item_name: 'k' }, key),
      sql("CALL pgp.add_item(30, 'k')", '', key),
      get('/rest/api/source/SYSADMIN/addRole?name=k', key),
    ]) {
      assert.match((await expectError(await response, 403)).description, /read-only API key/);
    }
    const count = (await pgAdmin.query(`SELECT count(*)::int AS n FROM ${tag}.items WHERE id = 30`)).rows[0] as { n: number };
    assert.equal(count.n, 0);
  });
});

test("vdb's own procedures through the source endpoints", async () => {
  const invited = await expectOkJson<Array<{ Name: string; Token: string }>>(
    await get('/rest/api/source/SYSADMIN/inviteUser?name=erin&array=false'),
  );
  assert.equal(invited[0]!.Name, 'erin');
  assert.ok(invited[0]!.Token.length > 20);
  assert.deepEqual(await expectOkJson(await post('/rest/api/source/SYSADMIN/addRole', [{ name: 'r1' }, { name: 'r2' }])), [
    ['r1', 'added'],
    ['r2', 'added'],
  ]);
  const missing = await expectError(await post('/rest/api/source/SYSADMIN/addRole', {}), 400);
  assert.match(missing.description, /needs name/);
});

test('a refresh imports new functions and drops removed ones', async () => {
  await pgAdmin.query(
    `CREATE FUNCTION ${tag}.later() RETURNS int LANGUAGE sql STABLE AS $$ SELECT 42 $$; DROP FUNCTION ${tag}.checked(int)`,
  );
  await expectOkJson(await sql("CALL SYSADMIN.refreshDataSource('pgp')"));
  assert.deepEqual(await expectOkJson(await get('/rest/api/source/pgp/later')), [[42]]);
  assert.equal((await expectError(await get('/rest/api/source/pgp/checked?x=1'), 404)).title, 'Unknown table');
});
