/**
 * POST /rest/api/query (spec 4.3, issue 2): row shapes (array, headers), limit/offset, the JSON
 * type mapping, joins across sources, system tables, name resolution, every error status, the
 * statements and functions that must never run, timeouts and SQL-Warnings.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, checkErrorText, okJson, okText, pageHeaders, queryRows, tokenRequester, type Requester } from './util.js';

let server: TestServer;
let req: Requester;
/** The demo SQLite file the server reads (its own copy in the data dir), opened read-only. */
let shop: Database.Database;

/** A second server: another VDB name, a small body limit, and a source with bad values. */
let other: TestServer;
let otherReq: Requester;

before(async () => {
  [server, other] = await Promise.all([startTestServer(), startTestServer({ vdbName: 'other', bodyLimit: 1000 })]);
  req = await tokenRequester(server);
  otherReq = await tokenRequester(other);
  shop = new Database(path.join(server.dataDir, 'files', 'demo', 'shop.sqlite'), { readonly: true });

  const file = path.join(other.dataDir, 'files', 'bad.sqlite');
  const db = new Database(file);
  db.exec(`
    CREATE TABLE t (id INTEGER PRIMARY KEY, d DATE, flag BOOLEAN, price DECIMAL(10,2), n INTEGER, r REAL, "größe" DATE);
    INSERT INTO t VALUES (1, '2024-01-02', 1, '1.25', 5, 1.5, '2024-03-04');
    INSERT INTO t VALUES (2, 'not a date', 'maybe', 'abc', 1.5, 'x', 'kaputt');
    INSERT INTO t VALUES (3, NULL, 0, 2.25, 9007199254740993, 2, NULL);
    CREATE TABLE clean (id INTEGER PRIMARY KEY, d DATE, label TEXT);
    INSERT INTO clean VALUES (1, '2024-05-06', 'one'), (2, NULL, 'two');
    CREATE TABLE regions (x TEXT);
  `);
  db.close();
  await other.services.registry.addSource({ name: 'bad', kind: 'sqlite', connection: { path: file } });
});
after(async () => {
  shop?.close();
  await Promise.all([server?.close(), other?.close()]);
});

const post = (sql: string, params = '') => req(`/rest/api/query${params}`, { body: { sql } });

describe('row shapes', () => {
  test('rows are arrays in column order by default, equal to the source', async () => {
    const rows = await queryRows(req, 'SELECT id, name, email, country, segment, created_at FROM shop.customers ORDER BY id');
    const expected = shop.prepare('SELECT id, name, email, country, segment, created_at FROM customers ORDER BY id').raw().all();
    assert.equal(rows.length, 200);
    assert.deepEqual(rows, expected);
    assert.ok(
      rows.some((r) => r[3] === null),
      'NULL countries come back as null',
    );
    assert.ok(
      rows.some((r) => /[üéí]/.test(String(r[1]))),
      'non-ASCII names survive',
    );
    assert.ok(
      rows.some((r) => String(r[1]).includes("'")),
      'names with apostrophes survive',
    );
  });

  test('array=false gives objects keyed by column name, in column order', async () => {
    const response = await post('SELECT id, name, country FROM shop.customers ORDER BY id LIMIT 3', '?array=false');
    const text = await okText(response);
    assert.ok(text.startsWith('[{"id":1,"name":'), text);
    const rows = JSON.parse(text) as Array<Record<string, unknown>>;
    assert.deepEqual(rows, shop.prepare('SELECT id, name, country FROM customers ORDER BY id LIMIT 3').all());
    for (const row of rows) assert.deepEqual(Object.keys(row), ['id', 'name', 'country']);
    assert.deepEqual(await queryRows(req, 'SELECT 1 AS b, 2 AS a', '?array=FALSE'), [{ b: 1, a: 2 }]);
    assert.deepEqual(await queryRows(req, 'SELECT 1 AS b, 2 AS a', '?array=true'), [[1, 2]]);
  });

  test('headers=true puts the column names first; without rows only the names', async () => {
    assert.deepEqual(
      await queryRows(req, 'SELECT id, name AS customer, 1 + 1 AS two FROM shop.customers ORDER BY id LIMIT 2', '?headers=true'),
      [
        ['id', 'customer', 'two'],
        [1, 'Lukas Müller', 2],
        [2, 'Chiara Ferrari', 2],
      ],
    );
    assert.deepEqual(await queryRows(req, 'SELECT id, name FROM shop.customers WHERE id < 0', '?headers=TRUE'), [['id', 'name']]);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id LIMIT 1', '?headers=true&array=true'), [['id'], [1]]);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id LIMIT 1', '?headers=false'), [[1]]);
  });

  test('with array=false the headers parameter is ignored', async () => {
    assert.deepEqual(await queryRows(req, 'SELECT id, country FROM shop.customers ORDER BY id LIMIT 2', '?array=false&headers=true'), [
      { id: 1, country: 'DE' },
      { id: 2, country: 'IT' },
    ]);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers WHERE id < 0', '?array=false&headers=true'), []);
  });

  test('an empty result is []', async () => {
    const response = await post('SELECT * FROM shop.orders WHERE id < 0');
    assert.equal(await okText(response), '[]');
  });

  test('limit and offset without pagination cut the result and add no pagination headers', async () => {
    const response = await post('SELECT id FROM shop.customers ORDER BY id', '?limit=5&offset=10');
    assert.deepEqual(await okJson(response), [[11], [12], [13], [14], [15]]);
    assert.deepEqual(pageHeaders(response), { limit: null, offset: null, requestId: null, nextPage: null, prevPage: null });
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id', '?limit=3'), [[1], [2], [3]]);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id', '?offset=197'), [[198], [199], [200]]);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id', '?limit=0'), []);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id', '?offset=500'), []);
    assert.deepEqual(
      await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id LIMIT 10', '?limit=3&offset=8'),
      [[9], [10]],
      'applies on top of the statement',
    );
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id', '?limit=2&offset=1&headers=true'), [
      ['id'],
      [2],
      [3],
    ]);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id', '?limit=2&offset=1&array=false'), [
      { id: 2 },
      { id: 3 },
    ]);
  });

  test('a large result (100k Parquet rows) arrives whole', async () => {
    const rows = await queryRows<[number, string]>(req, 'SELECT id, kind FROM files.events ORDER BY id');
    assert.equal(rows.length, 100_000);
    assert.equal(rows[0]![0], 1);
    assert.equal(rows[99_999]![0], 100_000);
    const kinds = new Set(rows.map((r) => r[1]));
    assert.deepEqual([...kinds].sort(), ['add_to_cart', 'checkout', 'page_view', 'search']);
  });
});

describe('JSON values', () => {
  test('integers beyond 2^53 and 128-bit integers keep every digit', async () => {
    const text = await okText(
      await post(
        // Sums of bigints are 128-bit integers in the engine.
        'SELECT 9007199254740993::bigint AS b, (SELECT sum(x) FROM (VALUES (9223372036854775807), (9223372036854775807)) t(x)) AS h, ' +
          '(SELECT sum(x) FROM (VALUES (-9223372036854775807), (-9223372036854775807), (-9223372036854775807)) t(x)) AS hmin, (-9223372036854775807)::bigint AS bmin',
      ),
    );
    assert.equal(text, '[[9007199254740993,18446744073709551614,-27670116110564327421,-9223372036854775807]]');
  });

  test('small integers, doubles and reals are plain JSON numbers', async () => {
    const [row] = await queryRows(req, 'SELECT 42::smallint, -7, 0.1::real, 0.1::float8, 2.5e10::float8, 1e-7::double precision');
    assert.deepEqual(row, [42, -7, 0.1, 0.1, 2.5e10, 1e-7]);
  });

  test('decimals are JSON numbers of the right value', async () => {
    const [row] = await queryRows(req, 'SELECT 123.45::numeric(10,2), (-0.5)::numeric(4,1), 7::numeric(10,0)');
    assert.deepEqual(row, [123.45, -0.5, 7]);
    const amounts = await queryRows(req, 'SELECT amount FROM files.events WHERE amount IS NOT NULL ORDER BY id LIMIT 3');
    assert.deepEqual(amounts, [[173.28], [279.15], [139.11]]);
  });

  test('decimals keep every digit, whatever their width, in every row shape and in pagination', async () => {
    const sql =
      'SELECT 12345678901234567.123456789::numeric(38,9), 123456789012.345678::numeric(18,6), 99999999999999999999999999999999999999::numeric(38,0), ' +
      '1234567.891::numeric(10,3), 12.34::numeric(4,2), (-0.001)::numeric(10,3), 0.000001::numeric(18,6)';
    const digits =
      '12345678901234567.123456789,123456789012.345678,99999999999999999999999999999999999999,1234567.891,12.34,-0.001,0.000001';
    assert.equal(await okText(await post(sql)), `[[${digits}]]`);
    assert.equal(await okText(await post(sql, '?pagination=true&limit=5')), `[[${digits}]]`);
    assert.equal(
      await okText(await post('SELECT 12345678901234567.123456789::numeric(38,9) AS d', '?array=false')),
      '[{"d":12345678901234567.123456789}]',
    );
  });

  test('decimals keep their scale: 1.50 stays 1.50', async () => {
    assert.equal(await okText(await post('SELECT 1.50::numeric(10,2) AS d')), '[[1.50]]');
    assert.equal(await okText(await post("SELECT amount FROM files.events WHERE amount::varchar = '454.20' LIMIT 1")), '[[454.20]]');
  });

  test('dates are YYYY-MM-DD and timestamps ISO-8601 with T', async () => {
    const [row] = await queryRows(
      req,
      "SELECT DATE '2024-02-29', TIMESTAMP '2024-02-29 13:45:06.123456', TIMESTAMP '2024-03-01 00:00:00', '2024-02-29 13:45:06+02'::timestamptz",
    );
    assert.equal(row![0], '2024-02-29');
    assert.equal(row![1], '2024-02-29T13:45:06.123456');
    assert.match(String(row![2]), /^2024-03-01T00:00:00$/);
    assert.match(String(row![3]), /^2024-02-29T11:45:06(\.0+)?(\+00(:00)?|Z)$/);
    const [event] = await queryRows(req, 'SELECT occurred_at FROM files.events ORDER BY id LIMIT 1');
    assert.equal(event![0], '2025-01-01T00:28:53');
    assert.ok(!Number.isNaN(Date.parse(String(event![0]))));
  });

  test('timestamps with time zone are parseable ISO-8601 / RFC 3339 (offset as +00:00 or Z)', async () => {
    const [row] = await queryRows(req, "SELECT '2024-02-29 13:45:06+02'::timestamptz");
    assert.equal(Date.parse(String(row![0])), Date.UTC(2024, 1, 29, 11, 45, 6));
  });

  test('binary values are base64', async () => {
    const [row] = await queryRows(req, "SELECT 'hello world'::bytea, ''::bytea");
    assert.deepEqual(row, ['aGVsbG8gd29ybGQ=', '']);
  });

  test('booleans, nulls, NaN and infinities', async () => {
    const text = await okText(
      await post("SELECT true, false, NULL, NULL::integer, 'NaN'::float8, 'Infinity'::double precision, '-Infinity'::float8, 'NaN'::real"),
    );
    assert.equal(text, '[[true,false,null,null,"NaN","Infinity","-Infinity","NaN"]]');
  });

  test('strings keep quotes, backslashes, newlines and non-ASCII text', async () => {
    const value = 'O\'Brien "quoted" \\ back\nnew line – Müller 日本 😀';
    const [row] = await queryRows(req, `SELECT '${value.replace(/'/g, "''")}' AS s`);
    assert.deepEqual(row, [value]);
  });

  test('lists are JSON arrays; time and interval are text', async () => {
    const [row] = await queryRows(req, "SELECT ARRAY[1,2,3], '12:30:00'::time, INTERVAL '1 day'");
    assert.deepEqual(row, [[1, 2, 3], '12:30:00', '1 day']);
  });

  test('CSV, JSON and Parquet columns come typed', async () => {
    assert.deepEqual(await queryRows(req, "SELECT * FROM files.regions WHERE country_code = 'GB'"), [
      ['GB', 'United Kingdom', 'Europe', 'GBP'],
    ]);
    assert.deepEqual(
      await queryRows(req, "SELECT currency, date, rate_to_eur FROM files.exchange_rates WHERE currency = 'EUR' ORDER BY date LIMIT 1"),
      [['EUR', '2025-01-31', 1]],
    );
    assert.deepEqual(
      await queryRows(req, 'SELECT id, customer_id, kind, amount, occurred_at, session_id FROM files.events ORDER BY id LIMIT 1'),
      [[1, 116, 'page_view', null, '2025-01-01T00:28:53', 'sess_8c597df49bf3e380']],
    );
  });
});

describe('joins and names', () => {
  test('a join of shop (SQLite) with files (CSV) gives the right counts', async () => {
    const byCountry = shop
      .prepare('SELECT country, count(*) AS n FROM customers WHERE country IS NOT NULL GROUP BY country')
      .all() as Array<{
      country: string;
      n: number;
    }>;
    const csv = fs
      .readFileSync(path.join(server.dataDir, 'files', 'demo', 'files', 'regions.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1);
    const regionOf = new Map(csv.map((line) => [line.split(',')[0]!, line.split(',')[2]!]));
    const expected = new Map<string, number>();
    for (const { country, n } of byCountry) expected.set(regionOf.get(country)!, (expected.get(regionOf.get(country)!) ?? 0) + n);
    const rows = await queryRows<[string, number]>(
      req,
      'SELECT r.region, count(*) FROM shop.customers c JOIN files.regions r ON r.country_code = c.country GROUP BY r.region ORDER BY r.region',
    );
    assert.deepEqual(
      rows,
      [...expected.entries()].sort(([a], [b]) => a.localeCompare(b)),
    );
  });

  test('a three-way join of SQLite tables with a Parquet file', async () => {
    const [row] = await queryRows<[number, number]>(
      req,
      "SELECT count(DISTINCT c.id), count(*) FROM shop.customers c JOIN files.events e ON e.customer_id = c.id WHERE e.kind = 'checkout' AND c.country = 'DE'",
    );
    const viaSeparate = await queryRows<[number]>(req, "SELECT id FROM shop.customers WHERE country = 'DE'");
    const ids = viaSeparate.map((r) => r[0]).join(',');
    const [direct] = await queryRows<[number, number]>(
      req,
      `SELECT count(DISTINCT customer_id), count(*) FROM files.events WHERE kind = 'checkout' AND customer_id IN (${ids})`,
    );
    assert.deepEqual(row, direct);
    assert.ok(row![1] > 0);
  });

  test('names are case-insensitive', async () => {
    assert.deepEqual(await queryRows(req, 'SELECT COUNT(*) FROM SHOP.CUSTOMERS'), [[200]]);
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM Files.Regions'), [[8]]);
    assert.deepEqual(await queryRows(req, 'SELECT ID, NAME FROM Shop.Customers WHERE Id = 1'), [[1, 'Lukas Müller']]);
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM sys.tables WHERE "SchemaName" = \'shop\''), [[4]]);
  });

  test('columns may be written schema.table.column and vdb.schema.table.column', async () => {
    assert.deepEqual(
      await queryRows(req, 'SELECT shop.customers.id, vdb.shop.customers.name FROM shop.customers ORDER BY shop.customers.id LIMIT 2'),
      [
        [1, 'Lukas Müller'],
        [2, 'Chiara Ferrari'],
      ],
    );
    assert.deepEqual(
      await queryRows(req, "SELECT customers.id FROM shop.customers WHERE shop.customers.country = 'JP' ORDER BY 1 LIMIT 1"),
      shop.prepare("SELECT id FROM customers WHERE country = 'JP' ORDER BY 1 LIMIT 1").raw().all(),
    );
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM vdb.shop.customers'), [[200]]);
  });

  test('a table name unique across schemas needs no schema; an ambiguous one is 400', async () => {
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM customers'), [[200]]);
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM events'), [[100000]]);
    const body = await assertApiError(await otherReq('/rest/api/query', { body: { sql: 'SELECT * FROM regions' } }), 400, 'ambiguous');
    assert.match(body.description, /regions/);
    assert.match(body.description, /files/);
    assert.match(body.description, /bad/);
  });

  test('views of a source are queryable', async () => {
    const expected = shop.prepare("SELECT count(*) FROM orders WHERE status = 'paid'").raw().get();
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM shop.paid_orders'), [expected]);
  });

  test('WITH, UNION, VALUES and subqueries work', async () => {
    assert.deepEqual(await queryRows(req, "WITH de AS (SELECT id FROM shop.customers WHERE country = 'DE') SELECT count(*) FROM de"), [
      shop.prepare("SELECT count(*) FROM customers WHERE country = 'DE'").raw().get(),
    ]);
    assert.deepEqual(await queryRows(req, 'SELECT 1 UNION ALL SELECT 2 ORDER BY 1'), [[1], [2]]);
    assert.deepEqual(await queryRows(req, "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s) ORDER BY n"), [
      [1, 'a'],
      [2, 'b'],
    ]);
    assert.deepEqual(
      await queryRows(req, 'SELECT count(*) FROM shop.orders WHERE customer_id IN (SELECT id FROM shop.customers WHERE id <= 3)'),
      [shop.prepare('SELECT count(*) FROM orders WHERE customer_id <= 3').raw().get()],
    );
  });
});

describe('system tables', () => {
  test('SYS.Tables has the contract columns and lists every table with VDBName vdb', async () => {
    const [header] = await queryRows(req, 'SELECT * FROM SYS.Tables', '?headers=true&limit=0');
    assert.deepEqual(header, [
      'VDBName',
      'SchemaName',
      'Name',
      'Type',
      'NameInSource',
      'IsPhysical',
      'SupportsUpdates',
      'UID',
      'Cardinality',
      'Description',
      'IsSystem',
      'IsMaterialized',
      'OID',
    ]);
    const rows = await queryRows(
      req,
      'SELECT "SchemaName", "Name", "Type", "IsPhysical", "IsSystem", "Cardinality" FROM SYS.Tables WHERE "IsSystem" = false ORDER BY 1, 2',
    );
    assert.deepEqual(rows, [
      ['files', 'events', 'Table', true, false, 100000],
      ['files', 'exchange_rates', 'Table', true, false, null],
      ['files', 'product_reviews', 'Table', true, false, null],
      ['files', 'regions', 'Table', true, false, null],
      ['shop', 'customers', 'Table', true, false, 200],
      ['shop', 'orders', 'Table', true, false, 2000],
      ['shop', 'paid_orders', 'View', false, false, null],
      ['shop', 'products', 'Table', true, false, 50],
    ]);
    assert.deepEqual(await queryRows(req, 'SELECT DISTINCT "VDBName" FROM SYS.Tables'), [['vdb']]);
    const system = await queryRows(req, 'SELECT "SchemaName", "Name" FROM SYS.Tables WHERE "IsSystem" ORDER BY 1, 2');
    assert.deepEqual(system, [
      ['SYS', 'Columns'],
      ['SYS', 'Copies'],
      ['SYS', 'CopyRecommendations'],
      ['SYS', 'ProcedureParams'],
      ['SYS', 'Procedures'],
      ['SYS', 'Schemas'],
      ['SYS', 'Tables'],
      ['SYSADMIN', 'DataSources'],
      ['SYSADMIN', 'Permissions'],
      ['SYSADMIN', 'Roles'],
      ['SYSADMIN', 'Users'],
      ['SYSLOG', 'AuditLog'],
      ['SYSLOG', 'CopyRefreshes'],
      ['SYSLOG', 'QueryLog'],
    ]);
  });

  test('SYS.Schemas lists the system schemas and the sources', async () => {
    assert.deepEqual(await queryRows(req, 'SELECT "VDBName", "Name", "IsPhysical" FROM SYS.Schemas ORDER BY "OID"'), [
      ['vdb', 'SYS', false],
      ['vdb', 'SYSADMIN', false],
      ['vdb', 'SYSLOG', false],
      ['vdb', 'shop', true],
      ['vdb', 'files', true],
    ]);
  });

  test('SYS.Columns describes the columns, with types, positions and keys', async () => {
    assert.deepEqual(
      await queryRows(
        req,
        'SELECT "Name", "Position", "IsPrimaryKey" FROM SYS.Columns WHERE "SchemaName" = \'shop\' AND "TableName" = \'customers\' ORDER BY "Position"',
      ),
      [
        ['id', 1, true],
        ['name', 2, false],
        ['email', 3, false],
        ['country', 4, false],
        ['segment', 5, false],
        ['created_at', 6, false],
      ],
    );
    assert.deepEqual(
      await queryRows(
        req,
        'SELECT "DataType", "Precision", "Scale", "VDBName" FROM SYS.Columns WHERE "TableName" = \'events\' AND "Name" = \'amount\'',
      ),
      [['DECIMAL(12,2)', 12, 2, 'vdb']],
    );
  });

  test('system tables join with each other and with filters', async () => {
    assert.deepEqual(
      await queryRows(
        req,
        `SELECT t."Name", count(c."Name") FROM SYS.Tables t JOIN SYS.Columns c ON c."SchemaName" = t."SchemaName" AND c."TableName" = t."Name"
         WHERE t."SchemaName" = 'shop' GROUP BY t."Name" ORDER BY t."Name"`,
      ),
      [
        ['customers', 6],
        ['orders', 7],
        ['paid_orders', 7],
        ['products', 5],
      ],
    );
    assert.deepEqual(
      await queryRows(
        req,
        `SELECT d."Name", d."Type", d."Tables", count(t."Name") FROM SYSADMIN.DataSources d JOIN SYS.Tables t ON t."SchemaName" = d."Name"
         GROUP BY d."Name", d."Type", d."Tables" ORDER BY d."Name"`,
      ),
      [
        ['files', 'file', 4, 4],
        ['shop', 'sqlite', 4, 4],
      ],
    );
  });

  test('system tables join with source tables', async () => {
    assert.deepEqual(
      await queryRows(
        req,
        `SELECT t."Cardinality" = (SELECT count(*) FROM shop.customers) FROM SYS.Tables t WHERE t."SchemaName" = 'shop' AND t."Name" = 'customers'`,
      ),
      [[true]],
    );
  });

  test('SYSADMIN.DataSources lists the sources without secrets', async () => {
    const rows = await queryRows<Record<string, unknown>>(req, 'SELECT * FROM SYSADMIN.DataSources ORDER BY "Name"', '?array=false');
    assert.deepEqual(
      rows.map((r) => [r.Name, r.Type, r.Translator, r.Tables, typeof r.ReadOnly]),
      [
        ['files', 'file', 'file', 4, 'boolean'],
        ['shop', 'sqlite', 'sqlite', 4, 'boolean'],
      ],
    );
    assert.deepEqual(Object.keys(rows[0]!), [
      'Name',
      'Type',
      'Translator',
      'Connection',
      'ModelProperties',
      'ReadOnly',
      'Tables',
      'Description',
      'CreatedAt',
      'Status',
      'StatusReason',
      'StatusSince',
    ]);
    assert.deepEqual(
      rows.map((r) => [r.Status, r.StatusReason, r.StatusSince]),
      [
        ['available', null, null],
        ['available', null, null],
      ],
    );
    assert.doesNotMatch(JSON.stringify(rows), /password|secret/i);
    assert.match(String(rows[1]!.Connection), /shop\.sqlite/);
  });

  test('the VDB name is configurable and shown as VDBName everywhere', async () => {
    assert.deepEqual(await queryRows(otherReq, 'SELECT DISTINCT "VDBName" FROM SYS.Tables'), [['other']]);
    assert.deepEqual(await queryRows(otherReq, 'SELECT DISTINCT "VDBName" FROM SYS.Schemas'), [['other']]);
    assert.deepEqual(await queryRows(otherReq, 'SELECT DISTINCT "VDBName" FROM SYS.Columns'), [['other']]);
    assert.deepEqual(await queryRows(otherReq, 'SELECT count(*) FROM other.shop.customers'), [[200]]);
    assert.deepEqual(await queryRows(otherReq, 'SELECT other.shop.customers.id FROM shop.customers ORDER BY 1 LIMIT 1'), [[1]]);
    await assertApiError(
      await otherReq('/rest/api/query', { body: { sql: 'SELECT count(*) FROM vdb.shop.customers' } }),
      400,
      'the old name',
    );
    await assertApiError(
      await req('/rest/api/query', { body: { sql: 'SELECT count(*) FROM other.shop.customers' } }),
      400,
      'the other name on vdb',
    );
  });
});

describe('errors', () => {
  test('malformed SQL is 400 "SQL syntax error" with the parser message, line and column', async () => {
    const body = await assertApiError(await post('SELEC id FROM shop.customers'), 400, 'SELEC');
    assert.equal(body.title, 'SQL syntax error');
    assert.match(body.description, /syntax error at or near "SELEC"/);
    assert.match(body.description, /line 1, column 1\b/);
    const second = await assertApiError(await post('SELECT id\nFROM shop.customers\nWHERE WHERE'), 400, 'line 3');
    assert.equal(second.title, 'SQL syntax error');
    assert.match(second.description, /line 3, column 7\b/);
    const end = await assertApiError(await post('SELECT id FROM'), 400, 'end of input');
    assert.equal(end.title, 'SQL syntax error');
    assert.match(end.description, /end of input/);
    assert.ok(end.hint === null || end.hint.length > 10);
    const quote = await assertApiError(await post("SELECT 'abc"), 400, 'unterminated');
    assert.equal(quote.title, 'SQL syntax error');
    assert.match(quote.description, /unterminated/);
  });

  test('two statements are 400; so is an empty one', async () => {
    const two = await assertApiError(await post('SELECT 1; SELECT 2'), 400, 'two statements');
    assert.match(two.description, /2 statements|one/);
    await assertApiError(await post(''), 400, 'empty sql');
    await assertApiError(await post('   '), 400, 'blank sql');
    await assertApiError(await post(';'), 400, 'only a semicolon');
  });

  test('a statement with a trailing semicolon is one statement', async () => {
    assert.deepEqual(await queryRows(req, 'SELECT 1;'), [[1]]);
    assert.deepEqual(await queryRows(req, 'SELECT id FROM shop.customers ORDER BY id LIMIT 2 ;\n'), [[1], [2]]);
  });

  test('a missing sql, a sql that is not a string or a body that is not an object is 400 JSON', async () => {
    const bodies: unknown[] = [
      {},
      { query: 'SELECT 1' },
      { sql: 5 },
      { sql: null },
      { sql: ['SELECT 1'] },
      { sql: { text: 'SELECT 1' } },
      '[{"sql":"SELECT 1"}]',
      '"SELECT 1"',
      '42',
      'null',
      'true',
    ];
    for (const body of bodies) await assertApiError(await req('/rest/api/query', { body }), 400, `body ${JSON.stringify(body)}`);
    await assertApiError(await req('/rest/api/query', { method: 'POST' }), 400, 'no body');
  });

  test('invalid JSON is 400', async () => {
    for (const body of ['{"sql":', '{sql: "SELECT 1"}', "{'sql': 'SELECT 1'}", '{"sql":"SELECT 1"}}', 'SELECT 1']) {
      await assertApiError(await req('/rest/api/query', { body }), 400, `body ${body}`);
    }
  });

  test('a body that is not JSON is 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'text/csv']) {
      const body = await assertApiError(
        await req('/rest/api/query', { body: '{"sql":"SELECT 1"}', headers: { 'content-type': type } }),
        415,
        type,
      );
      assert.match(body.description, /JSON/);
    }
    // The JSON media type with parameters and +json suffixes is accepted.
    assert.deepEqual(
      await okJson(
        await req('/rest/api/query', { body: { sql: 'SELECT 1' }, headers: { 'content-type': 'application/json; charset=utf-8' } }),
      ),
      [[1]],
    );
  });

  test('a body larger than bodyLimit is 413', async () => {
    const sql = `SELECT '${'x'.repeat(2000)}'`;
    const body = await assertApiError(await otherReq('/rest/api/query', { body: { sql } }), 413, 'too large');
    assert.ok(body.hint === null || /bodyLimit|smaller/i.test(body.hint));
    assert.deepEqual(await queryRows(otherReq, `SELECT '${'x'.repeat(500)}' = repeat('x', 500)`), [[true]], 'below the limit is fine');
  });

  test('an unknown schema or table in a statement is 400 Invalid query naming it (404 is for REST resources)', async () => {
    const schema = await assertApiError(await post('SELECT * FROM nosuchschema.customers'), 400, 'schema');
    assert.match(schema.description, /nosuchschema/);
    assert.equal(schema.title, 'Invalid query');
    const table = await assertApiError(await post('SELECT * FROM shop.nosuchtable'), 400, 'table');
    assert.match(table.description, /nosuchtable/);
    assert.equal(table.title, 'Invalid query');
    const bare = await assertApiError(await post('SELECT * FROM nosuchtable'), 400, 'bare table');
    assert.match(bare.description, /nosuchtable/);
    await assertApiError(await post('SELECT * FROM SYS.NoSuchTable'), 400, 'system table');
    await assertApiError(await post('SELECT c.id FROM shop.customers c JOIN files.nope n ON n.id = c.id'), 400, 'in a join');
    await assertApiError(await post('SELECT * FROM shop.customers WHERE id IN (SELECT id FROM shop.nope)'), 400, 'in a subquery');
    await assertApiError(await post('SELECT nope.lower(1)'), 400, 'function of an unknown schema');
    await assertApiError(await post('CALL SYSADMIN.noSuchProcedure()'), 400, 'unknown procedure');
  });

  test('a $1 placeholder without a value is 400 naming it', async () => {
    const one = await assertApiError(await post('SELECT $1'), 400, '$1');
    assert.match(one.description, /\$1\b/);
    const two = await assertApiError(await post('SELECT * FROM shop.customers WHERE id = $2 AND name = $1'), 400, '$1, $2');
    assert.match(two.description, /\$1, \$2/);
  });

  test('an unknown column is 400 naming it, without engine-internal names', async () => {
    const body = await assertApiError(await post('SELECT nosuchcolumn FROM shop.customers'), 400, 'column');
    assert.match(body.description, /nosuchcolumn/);
    assert.doesNotMatch(body.description, /__vdb_rows|src_\d+|vdb_sys/, 'no internal relation names');
    const qualified = await assertApiError(await post('SELECT c.nosuch FROM files.regions c'), 400, 'qualified column');
    assert.doesNotMatch(qualified.description, /__vdb_rows|src_\d+|vdb_sys/);
  });

  test('other statement errors are 400 with a message: unknown function, bad cast, type mismatch', async () => {
    const fn = await assertApiError(await post('SELECT nosuchfunction(1)'), 400, 'function');
    assert.match(fn.description, /nosuchfunction/);
    await assertApiError(await post("SELECT 'abc'::integer"), 400, 'cast');
    await assertApiError(await post("SELECT id FROM shop.customers WHERE id = 'abc'"), 400, 'comparison');
  });

  test('bad parameter values are 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=1e3', 'limit'],
      ['limit=99999999999999999999', 'limit'],
      ['offset=x', 'offset'],
      ['offset=-3', 'offset'],
      ['array=maybe', 'array'],
      ['array=1', 'array'],
      ['headers=yes', 'headers'],
      ['pagination=on', 'pagination'],
      ['timeout=0', 'timeout'],
      ['timeout=-5', 'timeout'],
      ['timeout=soon', 'timeout'],
      // Node's timers hold at most 2^31 - 1 ms; a longer timeout would fire at once.
      ['timeout=2147483648', 'timeout'],
      ['timeout=99999999999999999999', 'timeout'],
    ];
    for (const [query, name] of cases) {
      const body = await assertApiError(await post('SELECT 1', `?${query}`), 400, query);
      assert.ok(body.description.includes(name), `${query}: the description names "${name}": ${body.description}`);
    }
  });

  test('unknown endpoints are 404 JSON; a known path with another method is 405 with Allow', async () => {
    for (const [method, p, allow] of [
      ['GET', '/rest/api/query', 'POST'],
      ['DELETE', '/rest/api/query', 'GET, HEAD, POST'],
      ['PUT', '/rest/api/source/shop', 'GET, HEAD, PATCH, DELETE'],
      ['DELETE', '/rest/api/keys', 'GET, HEAD, POST'],
    ] as const) {
      const response = await req(p, { method });
      assert.equal(response.headers.get('allow'), allow, `${method} ${p}: Allow`);
      await assertApiError(response, 405, `${method} ${p}`);
    }
    for (const [method, p] of [
      ['GET', '/nope'],
      ['GET', '/rest/api/nope'],
      ['POST', '/rest/api/queries'],
      ['GET', '/rest/api/source/shop/customers/extra/deep'],
      // GET / is the web console (docs/console.md); a file it does not have is still the API's 404.
      ['GET', '/console.html'],
    ] as const) {
      await assertApiError(await req(p, { method, ...(method === 'POST' ? { body: { sql: 'SELECT 1' } } : {}) }), 404, `${method} ${p}`);
    }
  });
});

describe('what must never run', () => {
  test('statements other than SELECT are 400/403 and not executed', async () => {
    const target = path.join(server.dataDir, 'copied.csv');
    const attached = path.join(server.dataDir, 'attached.db');
    const statements = [
      // (INSERT, UPDATE and DELETE are writes to sources: test/federation/dml.test.ts.)
      "INSERT INTO files.regions VALUES ('x', 'y', 'z', 'w')",
      'UPDATE SYS.Tables SET "Name" = \'x\'',
      'DROP TABLE shop.customers',
      'DROP SCHEMA shop CASCADE',
      'CREATE TABLE shop.evil (id int)',
      'CREATE VIEW evil AS SELECT 1',
      'ALTER TABLE shop.customers ADD COLUMN evil int',
      'TRUNCATE shop.orders',
      `COPY (SELECT * FROM shop.customers) TO '${target}'`,
      `COPY shop.customers TO '${target}'`,
      `COPY shop.customers FROM '${target}'`,
      'SET threads = 1',
      "SET memory_limit = '1GB'",
      'RESET ALL',
      `ATTACH '${attached}' AS evil`,
      'DETACH shop',
      "LOAD 'httpfs'",
      'INSTALL httpfs',
      'PRAGMA database_list',
      'CALL duckdb_settings()',
      'BEGIN',
      'CHECKPOINT',
      'VACUUM',
      `SELECT * INTO evil FROM shop.customers`,
      "CREATE SECRET s (TYPE S3, KEY_ID 'x')",
      "EXPORT DATABASE '/tmp/x'",
    ];
    for (const sql of statements) {
      const response = await post(sql);
      const text = await response.text();
      // CALL names a procedure of the virtual database: an engine function is an unknown one (404).
      const allowed = sql.startsWith('CALL') ? [400, 403, 404] : [400, 403];
      assert.ok(allowed.includes(response.status), `${sql}: expected ${allowed.join('/')}, got ${response.status} ${text}`);
      checkErrorText(text, sql);
    }
    assert.ok(!fs.existsSync(target), 'COPY wrote no file');
    assert.ok(!fs.existsSync(attached), 'ATTACH created no database');
    assert.deepEqual(await queryRows(req, 'SELECT count(*), max(id) FROM shop.customers'), [[200, 200]]);
    assert.deepEqual(await queryRows(req, 'SELECT name FROM shop.customers WHERE id = 1'), [['Lukas Müller']]);
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM shop.orders'), [[2000]]);
    assert.deepEqual(shop.prepare('SELECT count(*) FROM customers').raw().get(), [200]);
    assert.deepEqual(await queryRows(req, 'SELECT "Name" FROM SYS.Schemas ORDER BY "OID"'), [
      ['SYS'],
      ['SYSADMIN'],
      ['SYSLOG'],
      ['shop'],
      ['files'],
    ]);
  });

  test('functions that read files, settings or the environment are 400, naming the function', async () => {
    const demoCsv = path.join(server.dataDir, 'files', 'demo', 'files', 'regions.csv');
    const statements = [
      "SELECT * FROM read_csv('/etc/passwd')",
      `SELECT * FROM read_csv('${demoCsv}')`,
      "SELECT * FROM read_csv_auto('/etc/passwd')",
      "SELECT * FROM read_text('/etc/passwd')",
      "SELECT read_text('/etc/passwd')",
      "SELECT * FROM read_blob('/etc/passwd')",
      "SELECT * FROM read_json('/etc/passwd')",
      "SELECT * FROM read_parquet('/etc/passwd')",
      "SELECT * FROM parquet_metadata('/etc/passwd')",
      "SELECT * FROM glob('/*')",
      'SELECT * FROM duckdb_settings()',
      'SELECT * FROM duckdb_tables()',
      'SELECT * FROM duckdb_secrets()',
      "SELECT current_setting('threads')",
      "SELECT getenv('HOME')",
      "SELECT * FROM query('SELECT 1')",
      'SELECT * FROM pragma_database_list()',
      "WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x",
      "SELECT (SELECT count(*) FROM read_text('/etc/passwd'))",
      "SELECT id FROM shop.customers WHERE name IN (SELECT content FROM read_text('/etc/passwd'))",
      "SELECT * FROM pg_catalog.read_csv('/etc/passwd')",
    ];
    for (const sql of statements) {
      const response = await post(sql);
      const text = await response.text();
      assert.equal(response.status, 400, `${sql}: expected 400, got ${response.status} ${text}`);
      assert.match(text, /is not available in vdb/);
      checkErrorText(text, sql);
      assert.doesNotMatch(text, /root:|nologin/, `${sql}: no file content`);
    }
  });

  test('file paths and engine internals are not reachable as table names', async () => {
    const demoCsv = path.join(server.dataDir, 'files', 'demo', 'files', 'regions.csv');
    for (const sql of [
      'SELECT * FROM "/etc/passwd"',
      `SELECT * FROM "${demoCsv}"`,
      'SELECT * FROM pg_catalog.pg_tables',
      'SELECT * FROM duckdb_settings',
      'SELECT * FROM vdb_sys."SYS_Tables"',
      'SELECT * FROM vdb_cursors.anything',
      'SELECT * FROM main.anything',
      'SELECT * FROM temp.anything',
      'SELECT * FROM src_1000.customers',
      'SELECT * FROM system.main.duckdb_tables',
    ]) {
      const response = await post(sql);
      const text = await response.text();
      assert.ok([400, 403, 404].includes(response.status), `${sql}: expected 400/403/404, got ${response.status} ${text}`);
      checkErrorText(text, sql);
      assert.doesNotMatch(text, /root:|North America/, `${sql}: no file content`);
    }
    // information_schema is vdb's catalog as PostgreSQL names it (docs/pgwire.md), never the engine's.
    assert.deepEqual(await queryRows(req, 'SELECT DISTINCT table_schema FROM information_schema.tables ORDER BY 1'), [
      ['SYS'],
      ['SYSADMIN'],
      ['SYSLOG'],
      ['files'],
      ['shop'],
    ]);
  });
});

describe('timeouts', () => {
  test('past ?timeout the statement is cancelled with 504 JSON, quickly', async () => {
    // Warm up (first use of the Parquet file), so that the timeout falls inside the execution.
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM files.events'), [[100000]]);
    for (const sql of ['SELECT count(*) FROM generate_series(1, 100000000000) a', 'SELECT count(*) FROM files.events a, files.events b']) {
      const started = Date.now();
      const body = await assertApiError(await post(sql, '?timeout=300'), 504, sql);
      const elapsed = Date.now() - started;
      assert.ok(elapsed < 5000, `${sql}: answered after ${elapsed} ms`);
      assert.equal(body.title, 'Query timeout');
      assert.match(body.description, /300 ms/);
    }
  });

  test('a timeout that expires before the statement starts running still cancels it', async () => {
    // About a second of work each; a lost cancel shows as a 200 after that second.
    const sql = 'SELECT count(*) FROM generate_series(1, 3000000000) a';
    const statuses: number[] = [];
    for (const timeout of [1, 2, 3, 4, 5, 6]) {
      const response = await post(sql, `?timeout=${timeout}`);
      await response.text();
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [504, 504, 504, 504, 504, 504]);
  });

  test('a paginated statement past its timeout is 504 too, and leaves no cursor', async () => {
    const cursors = server.services.cursors.stats().count;
    const started = Date.now();
    await assertApiError(
      await post('SELECT count(*) FROM files.events a, files.events b', '?timeout=300&pagination=true&limit=10'),
      504,
      'paginated',
    );
    assert.ok(Date.now() - started < 5000);
    assert.equal(server.services.cursors.stats().count, cursors);
  });

  test('the server keeps working after a timeout; a generous timeout lets a query finish', async () => {
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM shop.orders', '?timeout=60000'), [[2000]]);
    assert.deepEqual(await queryRows(req, 'SELECT count(*) FROM files.events'), [[100000]]);
  });
});

describe('SQL-Warnings', () => {
  test('values that do not fit their column type are NULL or rounded, and named in SQL-Warnings', async () => {
    const response = await otherReq('/rest/api/query', {
      body: { sql: 'SELECT id, d, flag, price, n, r, "größe" FROM bad.t ORDER BY id' },
    });
    const rows = await okJson<unknown[][]>(response);
    assert.deepEqual(rows, [
      [1, '2024-01-02', true, 1.25, 5, 1.5, '2024-03-04'],
      [2, null, null, null, 2, null, null],
      // The source's 9007199254740993 as JSON.parse reads it (the nearest double).
      [3, null, false, 2.25, 9007199254740992, 2, null],
    ]);
    const warnings = response.headers.get('SQL-Warnings');
    assert.ok(warnings, 'SQL-Warnings header present');
    assert.match(warnings, /^[\x20-\x7e]+$/, 'header-safe text');
    for (const column of ['bad.t.d', 'bad.t.flag', 'bad.t.price', 'bad.t.n', 'bad.t.r', 'bad.t.gr\\u00f6\\u00dfe']) {
      assert.ok(warnings.includes(column), `${column} named in ${warnings}`);
    }
    assert.match(warnings, /bad\.t\.d: 1 value\(s\) are not valid DATE/);
  });

  test('the raw text of a big SQLite integer is exact', async () => {
    const text = await okText(await otherReq('/rest/api/query', { body: { sql: 'SELECT n FROM bad.t WHERE id = 3' } }));
    assert.equal(text, '[[9007199254740993]]');
  });

  test('clean data has no SQL-Warnings header', async () => {
    const response = await otherReq('/rest/api/query', { body: { sql: 'SELECT * FROM bad.clean ORDER BY id' } });
    assert.deepEqual(await okJson(response), [
      [1, '2024-05-06', 'one'],
      [2, null, 'two'],
    ]);
    assert.equal(response.headers.get('SQL-Warnings'), null);
    const demo = await post('SELECT * FROM shop.orders LIMIT 5');
    await okJson(demo);
    assert.equal(demo.headers.get('SQL-Warnings'), null);
  });

  test('SQL-Warnings also comes with a paginated result, on every chunk', async () => {
    const first = await otherReq('/rest/api/query?pagination=true&limit=2', { body: { sql: 'SELECT id, d FROM bad.t ORDER BY id' } });
    assert.deepEqual(await okJson(first), [
      [1, '2024-01-02'],
      [2, null],
    ]);
    assert.match(first.headers.get('SQL-Warnings') ?? '', /bad\.t\.d/);
    const second = await otherReq(`/rest/api/query?requestId=${first.headers.get('requestId')}&limit=2&offset=2`, { method: 'POST' });
    assert.deepEqual(await okJson(second), [[3, null]]);
    assert.match(second.headers.get('SQL-Warnings') ?? '', /bad\.t\.d/);
  });
});
