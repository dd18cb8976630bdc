/**
 * PostgreSQL's catalog over vdb's (pg_catalog, information_schema, the catalog functions) with
 * real clients: psql's \l, \dn, \dt, \d and \df; the `postgres` Node client (porsager);
 * psqlODBC through unixODBC's isql (SQLTables, SQLColumns), skipped where it is missing; and
 * REST, which reads the same relations. A user who may read only shop.customers sees no other
 * source table in any of them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { startWireServer, type WireServer } from './helpers.js';

const ODBC_DRIVER = '/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so';
const hasOdbc = fs.existsSync(ODBC_DRIVER) && fs.existsSync('/usr/bin/isql');

let wire: WireServer;
before(async () => {
  wire = await startWireServer();
  const { users } = wire.server.services;
  await users.addPasswordUser('pgcat_bob', 'bob-password-1');
  await users.addRole('pgcat_customers');
  await users.addUserRole('pgcat_customers', 'pgcat_bob');
  await users.setPermissions(
    { role: 'pgcat_customers', resource: 'shop.customers', permissions: 'R', condition: null, mask: null, maskOrder: null },
    (a, b) => a === b,
  );
  // All of shop.customers but its email.
  await users.setPermissions(
    { role: 'pgcat_customers', resource: 'shop.customers.email', permissions: '', condition: null, mask: null, maskOrder: null },
    (a, b) => a === b,
  );
});
after(async () => wire.close());

const BOB: [string, string] = ['pgcat_bob', 'bob-password-1'];

/** psql's output of a backslash command, aligned off, tuples only. */
async function psql(command: string, user = 'admin', password = ADMIN_PASSWORD): Promise<string[]> {
  const out = await wire.psql(command, ['-At', '-F', '|'], user, password);
  assert.equal(out.code, 0, out.stderr);
  return out.stdout.trim().split('\n');
}

describe('psql', () => {
  test('\\l lists the one database, \\dn the schemas', async () => {
    assert.deepEqual(await psql('\\l'), ['vdb|vdb|UTF8|C|C||libc|']);
    assert.deepEqual(await psql('\\dn'), ['SYS|vdb', 'SYSADMIN|vdb', 'SYSLOG|vdb', 'files|vdb', 'shop|vdb']);
  });

  test('\\dt lists the tables; a user sees only those they may read', async () => {
    const admin = await psql('\\dt');
    assert.ok(admin.includes('shop|orders|table|vdb'), admin.join('\n'));
    assert.ok(admin.includes('files|regions|table|vdb'), admin.join('\n'));
    const bob = (await psql('\\dt', ...BOB)).filter((line) => !line.startsWith('SYS'));
    assert.deepEqual(bob, ['shop|customers|table|vdb']);
    // \dt+ adds sizes (unknown to vdb) and descriptions (obj_description).
    assert.deepEqual(await psql('\\dt+ files.regions'), ['files|regions|table|vdb|permanent|heap||CSV file regions.csv']);
  });

  test('\\d describes a table with its types, nulls and primary key; a hidden table is not found', async () => {
    const out = await wire.psql('\\d shop.orders', [], 'admin', ADMIN_PASSWORD);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /Table "shop\.orders"/);
    assert.match(out.stdout, / id +\| bigint +\| +\| not null \|/);
    assert.match(out.stdout, / amount +\| double precision +\| +\| +\|/);
    assert.match(out.stdout, /"orders_pkey" PRIMARY KEY, btree \(id\)/);
    const hidden = await wire.psql('\\d shop.orders', [], ...BOB);
    assert.match(hidden.stderr, /Did not find any relation named "shop\.orders"/);
  });

  test('\\df lists the procedures with their arguments', async () => {
    const lines = await psql('\\df');
    assert.ok(lines.includes('SYSADMIN|addUser||name text, password text|proc'), lines.join('\n'));
  });
});

describe('the postgres client (porsager)', () => {
  const connect = (user = 'admin', password = ADMIN_PASSWORD) =>
    postgres({ host: '127.0.0.1', port: wire.listener.port, database: 'vdb', username: user, password, max: 1, onnotice: () => undefined });

  test('information_schema and the catalog functions', async () => {
    const sql = connect();
    try {
      const columns = await sql`SELECT column_name, data_type, is_nullable, numeric_precision FROM information_schema.columns
        WHERE table_schema = 'shop' AND table_name = 'orders' ORDER BY ordinal_position`;
      assert.deepEqual(
        columns.slice(0, 2).map((c) => ({ ...c })),
        [
          { column_name: 'id', data_type: 'bigint', is_nullable: 'NO', numeric_precision: 64 },
          { column_name: 'customer_id', data_type: 'bigint', is_nullable: 'YES', numeric_precision: 64 },
        ],
      );
      const [facts] = await sql`SELECT version() AS v, current_database() AS db, format_type(1700, 786438) AS t,
        has_table_privilege('shop.orders', 'SELECT') AS can, pg_get_userbyid(10) AS owner`;
      assert.deepEqual(
        { ...facts },
        { v: 'PostgreSQL 15.0 (vdb data virtualization server)', db: 'vdb', t: 'numeric(12,2)', can: true, owner: 'vdb' },
      );
      const [oid] =
        await sql`SELECT 'shop.orders'::regclass AS id, (SELECT relname FROM pg_catalog.pg_class WHERE oid = 'shop.orders'::regclass) AS name`;
      assert.equal(oid!.name, 'orders');
      const settings =
        await sql`SELECT name, setting FROM pg_catalog.pg_settings WHERE name IN ('max_index_keys', 'server_version') ORDER BY name`;
      assert.deepEqual(
        settings.map((r) => [r.name, r.setting]),
        [
          ['max_index_keys', '32'],
          ['server_version', '15.0'],
        ],
      );
    } finally {
      await sql.end();
    }
  });

  test('a user sees only the tables they may read, and no other table exists for them', async () => {
    const sql = connect(...BOB);
    try {
      const tables = await sql`SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
        WHERE table_schema IN ('shop', 'files') ORDER BY 1`;
      assert.deepEqual(
        tables.map((t) => t.name),
        ['shop.customers'],
      );
      const [counts] =
        await sql`SELECT count(*)::int AS n FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'shop'`;
      assert.equal(counts!.n, 2, 'shop.customers and its primary key');
      await assert.rejects(sql`SELECT has_table_privilege('shop.orders', 'SELECT')`, (err: { code?: string }) => err.code === '42P01');
      const columns =
        await sql`SELECT column_name FROM information_schema.columns WHERE table_name = 'customers' ORDER BY ordinal_position`;
      assert.deepEqual(
        columns.map((c) => c.column_name),
        ['id', 'name', 'country', 'segment', 'created_at'],
      );
      const attributes =
        await sql`SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'shop.customers'::regclass ORDER BY a.attnum`;
      assert.deepEqual(
        attributes.map((a) => a.attname),
        ['id', 'name', 'country', 'segment', 'created_at'],
      );
      const [own] =
        await sql`SELECT has_table_privilege('shop.customers', 'SELECT') AS r, has_table_privilege('shop.customers', 'INSERT') AS w`;
      assert.deepEqual({ ...own }, { r: true, w: false });
    } finally {
      await sql.end();
    }
  });
});

describe('schema browsers', () => {
  const connect = () =>
    postgres({ host: '127.0.0.1', port: wire.listener.port, database: 'vdb', username: 'admin', password: ADMIN_PASSWORD, max: 1 });

  test("DBeaver's schemas, tables and columns (pg_catalog with descriptions, prepared with parameters)", async () => {
    const sql = connect();
    try {
      const schemas = await sql`SELECT n.oid, n.*, d.description FROM pg_catalog.pg_namespace n
        LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid = n.oid AND d.objsubid = 0 AND d.classoid = 'pg_namespace'::regclass
        ORDER BY nspname`;
      const shop = schemas.find((n) => n.nspname === 'shop')!;
      assert.ok(shop, JSON.stringify(schemas));
      const tables = await sql`SELECT c.oid, c.*, d.description, pg_catalog.pg_get_expr(c.relpartbound, c.oid) AS partition_expr,
          pg_catalog.pg_get_partkeydef(c.oid) AS partition_key
        FROM pg_catalog.pg_class c
        LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid = c.oid AND d.objsubid = 0 AND d.classoid = 'pg_class'::regclass
        WHERE c.relnamespace = ${shop.oid} AND c.relkind NOT IN ('i', 'I', 'c') ORDER BY c.relname`;
      assert.deepEqual(
        tables.map((t) => `${t.relname} ${t.relkind}`),
        ['customers r', 'orders r', 'paid_orders v', 'products r'],
      );
      const orders = tables.find((t) => t.relname === 'orders')!;
      const columns =
        await sql`SELECT c.relname, a.*, pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) AS def_value, dsc.description, dep.objid
        FROM pg_catalog.pg_attribute a
        INNER JOIN pg_catalog.pg_class c ON (a.attrelid = c.oid)
        LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid = ad.adrelid AND a.attnum = ad.adnum)
        LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid = dsc.objoid AND a.attnum = dsc.objsubid)
        LEFT OUTER JOIN pg_depend dep ON dep.refobjid = a.attrelid AND dep.deptype = 'i' AND dep.refobjsubid = a.attnum AND dep.classid = dep.refclassid
        WHERE NOT a.attisdropped AND c.relkind NOT IN ('i', 'I', 'c') AND c.oid = ${orders.oid}
        ORDER BY a.attnum`;
      assert.deepEqual(
        columns.slice(0, 2).map((c) => [c.attname, c.atttypid, c.attnotnull]),
        [
          ['id', 20, true],
          ['customer_id', 20, false],
        ],
      );
    } finally {
      await sql.end();
    }
  });

  test("Metabase's columns with primary keys and comments (information_schema, format('%I.%I')::regclass)", async () => {
    const sql = connect();
    try {
      const fields = await sql`SELECT c.column_name AS name, c.udt_name AS database_type, c.ordinal_position - 1 AS position,
          pk.column_name IS NOT NULL AS pk,
          col_description(CAST(CAST(format('%I.%I', CAST(c.table_schema AS TEXT), CAST(c.table_name AS TEXT)) AS regclass) AS oid), c.ordinal_position) AS comment
        FROM information_schema.columns AS c
        LEFT JOIN (SELECT tc.table_schema, tc.table_name, kc.column_name FROM information_schema.table_constraints AS tc
          INNER JOIN information_schema.key_column_usage AS kc
            ON tc.constraint_name = kc.constraint_name AND tc.table_schema = kc.table_schema AND tc.table_name = kc.table_name
          WHERE tc.constraint_type = 'PRIMARY KEY') AS pk
          ON c.table_schema = pk.table_schema AND c.table_name = pk.table_name AND c.column_name = pk.column_name
        WHERE c.table_schema !~ '^information_schema|catalog_history|pg_' AND c.table_schema = 'shop' AND c.table_name = 'customers'
        ORDER BY c.ordinal_position`;
      assert.deepEqual(
        fields.slice(0, 2).map((f) => ({ ...f })),
        [
          { name: 'id', database_type: 'int8', position: 0, pk: true, comment: null },
          { name: 'name', database_type: 'text', position: 1, pk: false, comment: null },
        ],
      );
      await assert.rejects(sql`SELECT format('%I.%I', 'shop', 'nothing')::regclass::oid AS id`, /relation does not exist/);
      const [described] =
        await sql`SELECT obj_description(CAST(CAST(format('%I.%I', 'files', 'regions') AS regclass) AS oid), 'pg_class') AS d,
        CAST(-1 AS oid) AS wrapped, CAST('7' AS oid) AS seven`;
      assert.deepEqual({ ...described }, { d: 'CSV file regions.csv', wrapped: '4294967295', seven: '7' });
      await assert.rejects(sql`SELECT CAST(4294967296 AS oid)`, /out of range for type oid/);
    } finally {
      await sql.end();
    }
  });
});

test('REST reads the same relations, narrowed the same way', async () => {
  const query = async (user: string, password: string, sql: string) => {
    const res = await wire.server.request('/rest/api/query', {
      body: { sql },
      headers: { authorization: wire.server.basic(user, password) },
    });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as unknown;
  };
  const sql =
    "SELECT relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'shop' AND c.relkind = 'r' ORDER BY 1";
  assert.match(JSON.stringify(await query('admin', ADMIN_PASSWORD, sql)), /"orders"/);
  assert.doesNotMatch(JSON.stringify(await query(...BOB, sql)), /"orders"/);
});

describe('psqlODBC through isql', { skip: !hasOdbc && 'odbc-postgresql or unixodbc is missing' }, () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-odbc-'));
    fs.writeFileSync(path.join(dir, 'odbcinst.ini'), `[PostgreSQL Unicode]\nDriver=${ODBC_DRIVER}\n`);
    fs.writeFileSync(
      path.join(dir, 'odbc.ini'),
      `[vdb]\nDriver=PostgreSQL Unicode\nServername=127.0.0.1\nPort=${wire.listener.port}\nDatabase=vdb\nSSLMode=disable\n`,
    );
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const isql = (input: string, user = 'admin', password = ADMIN_PASSWORD) =>
    new Promise<string[]>((resolve, reject) => {
      const child = execFile(
        'isql',
        ['-b', '-v', '-d|', 'vdb', user, password],
        { env: { ...process.env, ODBCSYSINI: dir, ODBCINI: path.join(dir, 'odbc.ini') }, timeout: 30_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${stderr}\n${stdout}`)) : resolve(stdout.trim().split('\n'))),
      );
      child.stdin!.end(`${input}\n`);
    });

  test('a query, the tables (SQLTables) and the columns (SQLColumns)', async () => {
    assert.deepEqual(await isql('SELECT id, name FROM shop.customers WHERE id <= 2 ORDER BY id'), ['1|Lukas Müller', '2|Chiara Ferrari']);
    const tables = await isql('help');
    assert.ok(tables.includes('vdb|shop|orders|TABLE|'), tables.join('\n'));
    const columns = (await isql('help customers')).map((line) => line.split('|').slice(3, 6).join('|'));
    assert.deepEqual(columns.slice(0, 2), ['id|-5|int8', 'name|-1|text']);
  });

  test('a user sees only the tables they may read', async () => {
    const tables = (await isql('help', ...BOB)).filter((line) => !line.startsWith('vdb|SYS'));
    assert.deepEqual(tables, ['vdb|shop|customers|TABLE|']);
  });
});
