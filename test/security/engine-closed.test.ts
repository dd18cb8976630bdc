/**
 * The engine is closed to user SQL (issue: "any signed-in user can read the server's secrets").
 * The outside review's attacks, as a user without any role and as one under a row condition,
 * then a walk over every function the engine has that vdb refuses: each is a 400 naming it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import Fastify from 'fastify';
import { registerErrorHandling } from '../../src/server/errors.js';
import { loadConfig } from '../../src/config.js';
import { ALLOWED_NAMES } from '../../src/engine/front/allow-list.js';
import { CATALOG_FUNCTION_ARGUMENTS } from '../../src/engine/access/catalog-functions.js';
import { loadOrCreateServerSecrets } from '../../src/catalog/server-secrets.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tokenRequester } from '../http/util.js';
import { admin, as, assertNoLeak, PASSWORD, refusedWithoutLeak, rows, run } from './attack-helpers.js';

let server: TestServer;
/** Values that must never reach a user: the server's secrets, the admin's token secret and hash. */
let secrets: string[];

before(async () => {
  server = await startTestServer();
  const keys = loadOrCreateServerSecrets(server.dataDir);
  const catalog = JSON.parse(fs.readFileSync(path.join(server.dataDir, 'catalog.json'), 'utf8')) as {
    users: Array<{ tokenSecret: string; passwordHash: string }>;
  };
  secrets = [keys.serverSecret.toString('base64'), keys.encryptionKey.toString('base64'), 'serverSecret', 'encryptionKey', 'tokenSecret'];
  for (const user of catalog.users) secrets.push(user.tokenSecret, user.passwordHash);
  as.admin = await tokenRequester(server);
  for (const statement of [
    "CALL SYSADMIN.addUser('nobody', 'nobody-pass-1')",
    "CALL SYSADMIN.addRole('de')",
    "CALL SYSADMIN.addUser('dora', 'dora-pass-1')",
    "CALL SYSADMIN.addUserRole('de', 'dora')",
    "CALL SYSADMIN.setPermissions('de', 'shop', 'R')",
    "CALL SYSADMIN.setPermissions('de', 'shop.customers', 'R', 'country = ''DE''')",
    "CALL SYSADMIN.setPermissions('de', 'files', 'R')",
    "CALL SYSADMIN.setPermissions('de', 'files.regions', 'R', 'country_code = ''DE''')",
    // Asian customers only (a condition reading another table), e-mails masked, segments hidden.
    "CALL SYSADMIN.addRole('asia')",
    "CALL SYSADMIN.addUser('mia', 'mia-pass-1')",
    "CALL SYSADMIN.addUserRole('asia', 'mia')",
    "CALL SYSADMIN.setPermissions('asia', 'shop', 'R')",
    "CALL SYSADMIN.setPermissions('asia', 'files', 'R')",
    "CALL SYSADMIN.setPermissions('asia', 'shop.customers', 'R', 'country IN (SELECT country_code FROM files.regions WHERE region = ''Asia'')')",
    "CALL SYSADMIN.setPermissions(role => 'asia', resourceName => 'shop.customers.email', permissions => 'R', mask => '''***@'' || split_part(email, ''@'', 2)')",
    "CALL SYSADMIN.setPermissions('asia', 'shop.customers.segment', '')",
  ]) {
    await admin(statement);
  }
  as.nobody = await tokenRequester(server, 'nobody', PASSWORD('nobody'));
  as.dora = await tokenRequester(server, 'dora', PASSWORD('dora'));
  as.mia = await tokenRequester(server, 'mia', PASSWORD('mia'));
});

after(async () => {
  await server?.close();
});

describe("the review's attacks", () => {
  test('no SQL-text function plans a file read: json_serialize_plan and its kind are 400', async () => {
    for (const file of ['secrets.json', 'catalog.json']) {
      const target = path.join(server.dataDir, file).replace(/'/g, "''");
      for (const sql of [
        `SELECT json_serialize_plan('SELECT * FROM read_csv(''${target}'', max_line_size=2, skip=1)')`,
        `SELECT json_serialize_sql('SELECT * FROM read_csv(''${target}'')')`,
        `SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))`,
        `SELECT json_serialize_plan('SELECT current_setting(''temp_directory'')', optimize := true)`,
        `SELECT * FROM query('SELECT * FROM read_text(''${target}'')')`,
      ]) {
        const answer = await refusedWithoutLeak('nobody', sql, secrets);
        assert.equal(answer.status, 400, `${sql}: ${answer.text}`);
        assert.match(JSON.parse(answer.text).description, /is not available in vdb/);
      }
    }
  });

  test('the engine itself cannot read the data directory: it is outside every directory the engine may read', async () => {
    assert.deepEqual(server.services.config.fileRoots, [path.join(server.dataDir, 'files')]);
    await server.services.runtime.withConnection(async (connection) => {
      for (const file of ['secrets.json', 'catalog.json']) {
        await assert.rejects(
          connection.run(`SELECT * FROM read_text('${path.join(server.dataDir, file)}')`),
          /[Pp]ermission|not allowed|disabled/,
        );
      }
    });
  });

  test("a table named twice under a row condition is loaded with that condition's rows only", async () => {
    // The answers are the same whatever the plan; what the engine held is checked by the loads it ran.
    const answer = await rows('dora', 'SELECT count(*), min(a.id), max(b.id) FROM shop.customers a JOIN shop.customers b ON a.id = b.id');
    const expected = await admin("SELECT count(*), min(id), max(id) FROM shop.customers WHERE country = 'DE'");
    assert.deepEqual(answer, expected);
    const files = await rows('dora', 'SELECT count(*) FROM files.regions a, files.regions b');
    assert.deepEqual(files, [[1]]);
    for (const sql of ['SELECT stats(name) FROM shop.customers', 'SELECT stats(a.name) FROM shop.customers a, shop.customers b']) {
      const refused = await run('dora', sql);
      assert.equal(refused.status, 400, refused.text);
    }
  });

  test('what the engine holds for a narrowed statement is only what its user may see', async () => {
    const customers = await admin<[string, string, string | null, string | null]>(
      'SELECT name, email, country, segment FROM shop.customers',
    );
    const cases = [
      {
        user: 'dora',
        // Named twice, with a file under its own row condition: loads filtered at load time.
        sql: 'SELECT a.name, b.email, r.country_name FROM shop.customers a JOIN shop.customers b ON a.id = b.id JOIN files.regions r ON r.country_code = a.country',
        visible: (c: (typeof customers)[number]) => c[2] === 'DE',
        hidden: ['United States', 'Italy'],
      },
      {
        user: 'mia',
        // Masked, a hidden column, and a condition with a subquery: computed before the statement.
        sql: 'SELECT c.name, c.email, r.country_name FROM shop.customers c JOIN files.regions r ON r.country_code = c.country',
        visible: (c: (typeof customers)[number]) => c[2] === 'JP',
        hidden: ['enterprise', 'smb', 'consumer'],
      },
    ];
    for (const { user, sql, visible, hidden } of cases) {
      const account = server.services.store.current.users.find((u) => u.name === user)!;
      const execution = await server.services.engine.open(sql, account, new AbortController().signal);
      try {
        assert.ok(execution.engineRelations, `${user}: the statement runs in the engine`);
        const held = new Set((await execution.engineRelations()).flatMap((r) => r.rows.flat()).map(String));
        const shown = customers.filter(visible);
        assert.ok(shown.length > 0 && shown.every((c) => held.has(c[0])), `${user}: the visible customers are loaded`);
        // Names repeat across countries: only those of no visible customer tell a hidden row.
        const visibleNames = new Set(shown.map((c) => c[0]));
        for (const c of customers.filter((c) => !visible(c) && !visibleNames.has(c[0])))
          assert.ok(!held.has(c[0]), `${user}: the engine holds ${c[0]}, outside the condition`);
        if (user === 'mia') for (const c of customers) assert.ok(!held.has(c[1]), `${user}: the engine holds the unmasked e-mail ${c[1]}`);
        for (const value of hidden) assert.ok(!held.has(value), `${user}: the engine holds ${value}`);
      } finally {
        execution.close();
      }
    }
  });

  test("a narrowed table's plain columns take the statement's conditions to its source; masked ones do not", async () => {
    const mia = server.services.store.current.users.find((u) => u.name === 'mia')!;
    const sourceSql = async (sql: string) => {
      const execution = await server.services.engine.open(sql, mia, new AbortController().signal);
      try {
        return execution.sourceQueries.filter((q) => q.source === 'shop').map((q) => q.sql);
      } finally {
        execution.close();
      }
    };
    // Haruto Takahashi, customer 163, lives in JP (Asia): visible to mia, and read alone.
    assert.deepEqual(await rows('mia', 'SELECT c.name FROM shop.customers c WHERE c.id = 163'), [['Haruto Takahashi']]);
    assert.ok((await sourceSql('SELECT c.name FROM shop.customers c WHERE c.id = 163')).some((q) => /"id" = 163/.test(q)));
    // The e-mail is masked: a condition on it is about the masked value and stays in the engine.
    const masked = await sourceSql("SELECT c.name FROM shop.customers c WHERE c.email = '***@example.com'");
    assert.ok(
      masked.every((q) => !/email" =/.test(q)),
      masked.join('\n'),
    );
    // Every masked e-mail starts with ***@: the condition saw masked values (Asia is JP in the demo).
    assert.deepEqual(
      await rows('mia', "SELECT count(*) FROM shop.customers c WHERE c.email LIKE '***@%'"),
      await admin("SELECT count(*) FROM shop.customers WHERE country = 'JP' AND email IS NOT NULL"),
    );
    // Outside the condition stays outside, whatever the statement asks for.
    assert.deepEqual(await rows('mia', 'SELECT c.name FROM shop.customers c WHERE c.id = 1'), []);
  });

  test("WITH queries resolve to themselves or fail, never to the engine's catalog", async () => {
    for (const sql of [
      'WITH RECURSIVE duckdb_views AS (SELECT * FROM duckdb_views) SELECT * FROM duckdb_views',
      'WITH RECURSIVE pg_settings AS (SELECT * FROM pg_settings) SELECT * FROM pg_settings',
      'WITH RECURSIVE duckdb_tables AS (SELECT 1 AS a FROM duckdb_tables) SELECT * FROM duckdb_tables',
      'WITH duckdb_views AS (SELECT * FROM duckdb_views) SELECT * FROM duckdb_views',
      'SELECT * FROM duckdb_views',
      'SELECT * FROM "__vdb_cte_x"',
      'SELECT * FROM temp.main.__vdb_rows_1',
    ]) {
      const answer = await refusedWithoutLeak('nobody', sql, [...secrets, 'allowed_directories', 'vdb_sys', path.basename(server.dataDir)]);
      assert.ok([400, 403, 404].includes(answer.status), `${sql}: ${answer.status}`);
    }
    // information_schema and pg_catalog are vdb's own relations (docs/pgwire.md#catalog): never the engine's.
    for (const sql of ['SELECT * FROM information_schema.tables', 'SELECT * FROM pg_catalog.pg_settings']) {
      const answer = await run('nobody', sql);
      assert.equal(answer.status, 200, answer.text);
      for (const leak of [...secrets, 'allowed_directories', 'vdb_sys', 'temp_directory', path.basename(server.dataDir)])
        assert.ok(!answer.text.includes(leak), `${sql} shows ${leak}`);
    }
    const recursive = await run('nobody', 'WITH RECURSIVE duckdb_views AS (SELECT * FROM duckdb_views) SELECT * FROM duckdb_views');
    assert.match(JSON.parse(recursive.text).description, /does not have the form non-recursive-term UNION/);
    // A real recursive query still works, and its name never reaches the engine's catalog.
    assert.deepEqual(
      await rows(
        'nobody',
        'WITH RECURSIVE duckdb_views(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM duckdb_views WHERE n < 3) SELECT n FROM duckdb_views ORDER BY n',
      ),
      [[1], [2], [3]],
    );
  });

  test('current_query() is refused; a deep expression is a 400 with the error body, a long one still runs', async () => {
    const current = await run('dora', 'SELECT current_query()');
    assert.equal(current.status, 400);
    for (const sql of [
      `SELECT ${Array(5000).fill('1').join(' + ')}`,
      `SELECT ${'NOT '.repeat(3000)}true`,
      `SELECT ${'(SELECT '.repeat(800)}1${')'.repeat(800)}`,
    ]) {
      const answer = await run('nobody', sql);
      assert.equal(answer.status, 400, answer.text.slice(0, 300));
      const body = JSON.parse(answer.text) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title']);
    }
    assert.deepEqual(await rows('nobody', `SELECT ${Array(300).fill('1').join(' + ')}`), [[300]]);
  });

  test('date_part of a field computed per row is a 400, and the engine stays open for everyone', async () => {
    // The engine's date_part('epoch', timestamptz) with a field it reads per row failed inside
    // the engine, which then refused every statement until the server restarted.
    for (const field of ['epoch', 'julian', 'timezone', 'year']) {
      const answer = await run('nobody', `SELECT date_part(f, now()) FROM (VALUES ('${field}')) AS v(f)`);
      assert.equal(answer.status, 400, answer.text.slice(0, 300));
      assert.match(answer.text, /date_part of a field given by an expression/);
    }
    assert.deepEqual(await rows('nobody', "SELECT date_part('epoch', TIMESTAMPTZ '2020-01-01 00:00:00+00')"), [[1577836800]]);
    // A field written as a cast constant is that constant.
    assert.deepEqual(await rows('nobody', "SELECT date_part('year'::text, DATE '2025-03-01')"), [[2025]]);
    assert.deepEqual(await rows('nobody', 'SELECT 1 + 1'), [[2]]);
  });
});

test('a recursion that runs out of stack on a request is a 400 with the error body, not a 500', async () => {
  const app = Fastify();
  registerErrorHandling(app);
  const recurse = (n: number): number => recurse(n + 1) + 1;
  app.get('/deep', async () => recurse(0));
  try {
    const response = await app.inject({ method: 'GET', url: '/deep' });
    assert.equal(response.statusCode, 400);
    assert.equal(JSON.parse(response.body).title, 'Statement too complex');
  } finally {
    await app.close();
  }
});

describe('file roots', () => {
  test('a file root may not be the data directory or a folder above it', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-roots-'));
    try {
      for (const root of [dataDir, path.dirname(dataDir)]) {
        assert.throws(() => loadConfig({}, { dataDir, fileRoots: [root] }), /holds the data directory/);
      }
      assert.deepEqual(loadConfig({}, { dataDir }).fileRoots, [path.join(dataDir, 'files')]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a data directory of an earlier version gets its demo moved into the file root, sources following', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-move-'));
    try {
      // An earlier version's layout: the demo in <data>/demo, its sources pointing there.
      const first = await startTestServer({ dataDir });
      await first.close();
      fs.renameSync(path.join(dataDir, 'files', 'demo'), path.join(dataDir, 'demo'));
      const catalogFile = path.join(dataDir, 'catalog.json');
      fs.writeFileSync(
        catalogFile,
        fs
          .readFileSync(catalogFile, 'utf8')
          .split(path.join(dataDir, 'files', 'demo'))
          .join(path.join(dataDir, 'demo')),
      );
      const again = await startTestServer({ dataDir });
      try {
        assert.ok(!fs.existsSync(path.join(dataDir, 'demo')));
        assert.ok(!fs.readFileSync(catalogFile, 'utf8').includes(`${path.join(dataDir, 'demo')}${path.sep}`));
        const response = await again.request('/rest/api/query', {
          body: { sql: 'SELECT count(*) FROM shop.customers, (SELECT count(*) FROM files.regions) r' },
        });
        assert.equal(response.status, 200, await response.clone().text());
      } finally {
        await again.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
  test("the engine reads only the file sources' own folders; a change of them keeps running cursors", async () => {
    const srv = await startTestServer();
    try {
      const root = path.join(srv.dataDir, 'files');
      const folder = path.join(root, 'later');
      fs.mkdirSync(folder);
      fs.writeFileSync(path.join(folder, 'nums.csv'), 'n\n1\n2\n3\n');
      const readable = async () =>
        srv.services.runtime.withConnection(async (connection) => {
          try {
            await connection.run(`SELECT * FROM read_csv('${path.join(folder, 'nums.csv')}')`);
            return true;
          } catch (err) {
            assert.match(String(err), /[Pp]ermission|not allowed|disabled/);
            return false;
          }
        });
      // The demo's folder, and the local copies' (docs/copies.md).
      const copies = fs.realpathSync(path.join(srv.dataDir, 'copies'));
      assert.deepEqual(srv.services.runtime.current.folders, [fs.realpathSync(path.join(root, 'demo', 'files')), copies].sort());
      assert.equal(await readable(), false, 'a folder of the root that no source uses is closed');

      // A cursor made now is still paged after the engine changes generation.
      const first = await srv.request('/rest/api/query?pagination=true&limit=50', {
        body: { sql: 'SELECT id FROM shop.customers ORDER BY id' },
      });
      assert.equal(first.status, 200, await first.clone().text());
      const requestId = first.headers.get('requestId') ?? '';
      const before = srv.services.runtime.current;

      const added = await srv.request('/rest/api/source', {
        body: { name: 'later', template: 'file', translator: 'file', connectionProps: `ParentDirectory=${folder}` },
      });
      assert.equal(added.status, 201, await added.text());
      assert.notEqual(srv.services.runtime.current, before, 'a new engine generation');
      assert.equal(await readable(), true);
      const sum = await srv.request('/rest/api/query', {
        body: { sql: 'SELECT sum(n) FROM later.nums, (SELECT count(*) FROM files.regions) r' },
      });
      assert.deepEqual(await sum.json(), [[6]]);
      const page = await srv.request(`/rest/api/query?requestId=${requestId}&limit=50&offset=150`, { method: 'POST' });
      assert.equal(page.status, 200, await page.clone().text());
      assert.equal(((await page.json()) as unknown[]).length, 50);

      const removed = await srv.request('/rest/api/source/later', { method: 'DELETE' });
      assert.ok(removed.status < 300, await removed.text());
      assert.equal(await readable(), false, 'closed again once its source is gone');
      const still = await srv.request('/rest/api/query', { body: { sql: 'SELECT count(*) FROM files.regions' } });
      assert.equal(still.status, 200, await still.text());
    } finally {
      await srv.close();
    }
  });

  test('a file source whose folder is missing at start is readable once the folder is back', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-missing-'));
    const first = await startTestServer({ dataDir });
    await first.close();
    const demo = path.join(dataDir, 'files', 'demo', 'files');
    fs.renameSync(demo, `${demo}-away`);
    const srv = await startTestServer({ dataDir });
    try {
      const copies = fs.realpathSync(path.join(dataDir, 'copies'));
      assert.deepEqual(srv.services.runtime.current.folders, [copies]);
      const count = () => srv.request('/rest/api/query', { body: { sql: 'SELECT count(*) FROM files.regions' } });
      const missing = await count();
      assert.equal(missing.status, 503, await missing.text());
      fs.renameSync(`${demo}-away`, demo);
      const back = await count();
      assert.equal(back.status, 200, await back.text());
      assert.deepEqual(srv.services.runtime.current.folders, [fs.realpathSync(demo), copies].sort());
    } finally {
      await srv.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("the allow-list's complement", () => {
  test('every function the engine has that vdb refuses is a 400 naming it, for a user without a role', async () => {
    const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll(
      "SELECT DISTINCT function_name, function_type IN ('table', 'table_macro') FROM duckdb_functions() ORDER BY 1",
    );
    const functions = reader.getRows().map(([name, table]) => ({ name: String(name), table: Boolean(table) }));
    connection.closeSync();
    instance.closeSync();
    let walked = 0;
    for (const { name, table } of functions) {
      if (ALLOWED_NAMES.has(name)) continue;
      // The catalog functions clients call (docs/pgwire.md) answer vdb's own values when called as PostgreSQL takes them.
      if (CATALOG_FUNCTION_ARGUMENTS[name]?.includes(0)) continue;
      const word = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
      if (!word && !/^[-+*/<>=~!@#%^&|`?]+$/.test(name)) continue; // internal names no syntax can spell
      const quoted = `"${name}"`;
      const sql = !word ? `SELECT 1 ${name} 2` : table ? `SELECT * FROM ${quoted}()` : `SELECT ${quoted}()`;
      const answer = await run('nobody', sql);
      assertNoLeak(answer, secrets, sql);
      assert.equal(answer.status, 400, `${sql}: ${answer.status} ${answer.text.slice(0, 200)}`);
      assert.ok(answer.text.includes(name.replace(/"/g, '\\"')), `${sql}: the answer names ${name}: ${answer.text.slice(0, 200)}`);
      walked++;
    }
    assert.ok(walked > 700, `walked ${walked} refused functions`);
  });
});
