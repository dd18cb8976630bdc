/**
 * Materialized views (docs/copies.md, "Materialized views") over the real PostgreSQL and
 * MariaDB of the federation fixture: a materialized view answers as its SELECT does live, a
 * refresh brings in what changed at the sources, it is read live before its first refresh and
 * past its staleness bound, it obeys permissions as a view does, and what cannot be done is
 * refused with the right status.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import pg from 'pg';
import pino from 'pino';
import type { UserDef } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import type { CopyReading } from '../../src/sources/copies.js';
import {
  addFixtureSources,
  createFixture,
  engineRows,
  MY,
  PG,
  restrictedReader,
  type EngineRows,
  type Fixture,
} from '../federation/fixtures.js';

let services: Services;
let fixture: Fixture;
let dataDir: string;
let admin: UserDef;
let postgres: pg.Client;
let maria: mysql.Connection;

const LIVE: CopyReading = { live: true, maxStaleness: null };

const rows = (sql: string, user = admin, reading?: CopyReading): Promise<EngineRows> => engineRows(services.engine, user, sql, reading);

const values = async (sql: string, user = admin) => JSON.parse((await rows(sql, user)).json) as unknown[][];

async function refused(sql: string, status: number, pattern: RegExp, user = admin): Promise<void> {
  await assert.rejects(rows(sql, user), (err: Error & { status?: number; description?: string; hint?: string | null }) => {
    assert.equal(err.status, status, `${sql}: ${err.message}`);
    assert.match(`${err.message} ${err.description ?? ''} ${err.hint ?? ''}`, pattern);
    return true;
  });
}

/** The SELECT of the materialized views below: PostgreSQL's customers joined with MariaDB's orders. */
const BY_COUNTRY =
  'SELECT c.country, count(*) AS orders, sum(o.amount) AS total, min(o.created) AS first FROM pg.customers c JOIN my.orders o ON o.customer_id = c.id GROUP BY c.country';

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-matviews-'));
  const fileRoot = path.join(dataDir, 'files');
  fs.mkdirSync(fileRoot);
  fixture = await createFixture(fileRoot);
  services = await createServices(loadConfig({}, { dataDir, adminPassword: 'matviews-test-pw', demo: false }), pino({ level: 'silent' }));
  await addFixtureSources(services, fixture);
  admin = services.users.find('admin')!;
  postgres = new pg.Client(PG);
  await postgres.connect();
  maria = await mysql.createConnection({ ...MY, database: fixture.mysqlDatabase });
});

after(async () => {
  await postgres?.end();
  await maria?.end();
  await services?.close();
  await fixture?.cleanup();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a materialized view answers as its SELECT does', () => {
  before(async () => {
    await rows(`CREATE MATERIALIZED VIEW mvt.by_country AS ${BY_COUNTRY}`);
  });
  after(async () => {
    await rows('DROP MATERIALIZED VIEW IF EXISTS mvt.by_country');
  });

  const statements = [
    ['SELECT * FROM mvt.by_country ORDER BY country NULLS FIRST', `${BY_COUNTRY} ORDER BY country NULLS FIRST`],
    [
      "SELECT country, total FROM mvt.by_country WHERE orders > 3 AND country <> 'DE' ORDER BY total DESC, country",
      `SELECT country, total FROM (${BY_COUNTRY}) v WHERE orders > 3 AND country <> 'DE' ORDER BY total DESC, country`,
    ],
    ['SELECT count(*), sum(total), max(first) FROM mvt.by_country', `SELECT count(*), sum(total), max(first) FROM (${BY_COUNTRY}) v`],
    [
      // Joined with a live table of another source.
      'SELECT m.country, m.orders, count(t.id) FROM mvt.by_country m LEFT JOIN my.customers t ON t.country = m.country GROUP BY 1, 2 ORDER BY 1',
      `SELECT m.country, m.orders, count(t.id) FROM (${BY_COUNTRY}) m LEFT JOIN my.customers t ON t.country = m.country GROUP BY 1, 2 ORDER BY 1`,
    ],
  ];
  for (const [sql, live] of statements) {
    test(sql!, async () => {
      const copied = await rows(sql!);
      const expected = await rows(live!, admin, LIVE);
      assert.equal(copied.json, expected.json);
      assert.deepEqual(copied.types, expected.types);
      assert.deepEqual(copied.columns, expected.columns);
      assert.ok(!copied.sources.includes('pg'), 'PostgreSQL is not asked: the copy answers');
      // Read live on request, it is its SELECT again.
      const asked = await rows(sql!, admin, LIVE);
      assert.equal(asked.json, expected.json);
      assert.ok(asked.sources.includes('pg') && asked.sources.includes('my'), 'read live, its SELECT reads the sources');
    });
  }

  test('a refresh brings in what changed at the sources; until then the copy answers as it was read', async () => {
    const sql = 'SELECT * FROM mvt.by_country ORDER BY country NULLS FIRST';
    const before = (await rows(sql)).json;
    await postgres.query(`INSERT INTO ${fixture.pgSchema}.customers VALUES (90, 'Nina', 'NO', 'smb', 1.00, '2025-04-01')`);
    await maria.query(`INSERT INTO orders VALUES (900, 90, 12.34, 'paid', '2025-04-02', 1), (901, 1, 100.00, 'new', '2024-01-01', 2)`);
    try {
      assert.equal((await rows(sql)).json, before, 'the copy, until its next refresh');
      const live = (await rows(`${BY_COUNTRY} ORDER BY country NULLS FIRST`, admin, LIVE)).json;
      assert.notEqual(live, before);
      const [[name, count, , action]] = (await values('REFRESH MATERIALIZED VIEW mvt.by_country')) as [[string, number, string, string]];
      assert.deepEqual([name, action], ['mvt.by_country', 'refreshed']);
      assert.equal(count, (JSON.parse(live) as unknown[]).length);
      assert.equal((await rows(sql)).json, live);
      assert.deepEqual((await rows(sql)).sources, []);
    } finally {
      await postgres.query(`DELETE FROM ${fixture.pgSchema}.customers WHERE id = 90`);
      await maria.query('DELETE FROM orders WHERE id IN (900, 901)');
    }
    await rows('REFRESH MATERIALIZED VIEW CONCURRENTLY mvt.by_country');
    assert.equal((await rows(sql)).json, before);
  });

  test('SYS.Tables, SYS.Columns, SYS.Copies and EXPLAIN show it', async () => {
    assert.deepEqual(
      await values(
        `SELECT "Type", "IsPhysical", "IsMaterialized", "IsSystem" FROM SYS.Tables WHERE "SchemaName" = 'mvt' AND "Name" = 'by_country'`,
      ),
      [['View', false, true, false]],
    );
    assert.deepEqual(
      await values(`SELECT "Name" FROM SYS.Columns WHERE "SchemaName" = 'mvt' AND "TableName" = 'by_country' ORDER BY "Position"`),
      [['country'], ['orders'], ['total'], ['first']],
    );
    assert.deepEqual(await values(`SELECT "IsPhysical" FROM SYS.Schemas WHERE "Name" = 'mvt'`), [[false]]);
    // PostgreSQL's catalog: a relation of kind m in its schema (which holds only materialized views here).
    assert.deepEqual(
      await values(
        `SELECT c.relkind, n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'by_country'`,
      ),
      [['m', 'mvt']],
    );
    // As in PostgreSQL, information_schema shows no materialized view.
    assert.deepEqual(await values(`SELECT count(*) FROM information_schema.tables WHERE table_name = 'by_country'`), [[0]]);
    assert.deepEqual(await values(`SELECT count(*) FROM information_schema.columns WHERE table_name = 'by_country'`), [[0]]);
    const [copy] = await values(
      `SELECT "Kind", "Mode", "State", "RowCount", "SchemaName", "TableName", "Owner" FROM SYS.Copies WHERE "Name" = 'mvt.by_country'`,
    );
    assert.deepEqual(copy!.slice(0, 3), ['view', 'full', 'ready']);
    assert.ok(Number(copy![3]) > 0);
    assert.deepEqual(copy!.slice(4), ['mvt', 'by_country', 'admin']);
    const plan = (await rows('EXPLAIN SELECT * FROM mvt.by_country')).json;
    assert.match(plan, /local copy/);
    assert.match(plan, /copy mvt\.by_country, version \d+, its SELECT run at /);
    assert.doesNotMatch(plan, /source query/);
  });
});

test('created WITH NO DATA it is read as its SELECT until its first refresh; past its staleness bound too', async () => {
  await rows(`CREATE MATERIALIZED VIEW mvt.stale WITH (max_staleness = '3 s') AS ${BY_COUNTRY} WITH NO DATA`);
  try {
    const sql = 'SELECT * FROM mvt.stale ORDER BY country NULLS FIRST';
    const live = await rows(`${BY_COUNTRY} ORDER BY country NULLS FIRST`, admin, LIVE);
    const unrefreshed = await rows(sql);
    assert.equal(unrefreshed.json, live.json);
    assert.ok(unrefreshed.sources.includes('pg'), 'no copy yet: its SELECT runs');
    assert.deepEqual(await values(`SELECT "State", "MaxStalenessSeconds" FROM SYS.Copies WHERE "Name" = 'mvt.stale'`), [['building', 3]]);
    await rows('REFRESH MATERIALIZED VIEW mvt.stale');
    assert.deepEqual((await rows(sql)).sources, [], 'refreshed: the copy answers');
    await new Promise((resolve) => setTimeout(resolve, 3200));
    const stale = await rows(sql);
    assert.ok(stale.sources.includes('pg'), 'past its bound: its SELECT runs');
    assert.equal(stale.json, live.json);
    assert.deepEqual((await rows(sql, admin, { live: false, maxStaleness: 3600 })).sources, [], "a request's own bound");
  } finally {
    await rows('DROP MATERIALIZED VIEW mvt.stale');
  }
});

test('refresh_every refreshes it by the schedule', async () => {
  await rows(`CREATE MATERIALIZED VIEW mvt.ticking WITH (refresh_every = 1) AS SELECT id, name FROM pg.customers`);
  try {
    const [[every, first]] = (await values(`SELECT "RefreshEverySeconds", "Version" FROM SYS.Copies WHERE "Name" = 'mvt.ticking'`)) as [
      [number, number],
    ];
    assert.equal(every, 1);
    assert.ok(first >= 1, 'refreshed before CREATE answered');
    const deadline = Date.now() + 8000;
    let version = first;
    while (Date.now() < deadline && version < first + 2) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      version = Number((await values(`SELECT "Version" FROM SYS.Copies WHERE "Name" = 'mvt.ticking'`))[0]![0]);
    }
    assert.ok(version >= first + 2, `refreshed by the schedule (version ${version})`);
  } finally {
    await rows('DROP MATERIALIZED VIEW mvt.ticking');
  }
});

test('permissions: READ on it as on a view; its copy only for readers who see its tables whole; its creator reads what it reads', async () => {
  await rows(`CREATE MATERIALIZED VIEW mvt.people AS SELECT id, name, country FROM pg.customers`);
  await rows('CREATE VIEW mvt.people_view AS SELECT id, name, country FROM pg.customers');
  try {
    const rita = await restrictedReader(services, admin, 'mvperm', []);
    const sql = 'SELECT * FROM mvt.people ORDER BY id';
    await refused(sql, 403, /people/, rita);
    assert.deepEqual(await values(`SELECT "Name" FROM SYS.Copies WHERE "Name" = 'mvt.people'`, rita), []);
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'mvt.people', 'R')");
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'mvt.people_view', 'R')");
    const whole = await rows(sql, rita);
    assert.equal(whole.json, (await rows(sql)).json);
    assert.deepEqual(whole.sources, [], 'a reader who sees pg.customers whole reads the copy');
    assert.deepEqual(await values(`SELECT "Name" FROM SYS.Copies WHERE "Name" = 'mvt.people'`, rita), [['mvt.people']]);

    // A row condition and a mask on what it reads: its SELECT runs for her, as a view's would.
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'pg.customers', 'R', 'country = ''DE''')");
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'pg.customers.name', 'R', null, 'upper(name)')");
    const narrowed = await rows(sql, rita);
    assert.equal(narrowed.json, (await rows('SELECT * FROM mvt.people_view ORDER BY id', rita)).json);
    assert.ok(narrowed.sources.includes('pg'), 'not from the copy');
    const seen = JSON.parse(narrowed.json) as Array<[number, string, string]>;
    assert.ok(seen.length > 0 && seen.every(([, name, country]) => country === 'DE' && name === name.toUpperCase()));

    // A condition on the materialized view itself applies over its copy.
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'pg.customers', 'R', null)");
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'pg.customers.name', 'R', null, null)");
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'mvt.people', 'R', 'id < 4')");
    const own = await rows(sql, rita);
    assert.deepEqual(own.sources, [], 'the copy, narrowed by its own condition');
    assert.deepEqual(
      (JSON.parse(own.json) as number[][]).map((r) => r[0]),
      [1, 2, 3],
    );

    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'mvt.people.name', 'R', null, 'upper(name)')");
    const masked = await rows(sql, rita);
    assert.deepEqual(masked.sources, [], 'the copy, masked by its own mask');
    assert.deepEqual(
      (JSON.parse(masked.json) as Array<[number, string]>).map((r) => r[1]),
      (await values('SELECT upper(name) FROM pg.customers WHERE id < 4 ORDER BY id')).map((r) => r[0]),
    );
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'mvt.people.name', 'R', null, null)");

    // Creating, refreshing and dropping one takes ALTER on its schema; its creator must see what it reads whole.
    await refused('CREATE MATERIALIZED VIEW mvt.mine AS SELECT id FROM pg.customers', 403, /mvt/, rita);
    await refused('REFRESH MATERIALIZED VIEW mvt.people', 403, /mvt/, rita);
    await refused('DROP MATERIALIZED VIEW mvt.people', 403, /mvt/, rita);
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'mvt', 'RA')");
    await rows("CALL SYSADMIN.setPermissions('mvperm_analyst', 'pg.customers', 'R', 'country = ''DE''')");
    await refused('CREATE MATERIALIZED VIEW mvt.mine AS SELECT id FROM pg.customers', 403, /only part of pg\.customers/, rita);
    await rows('CREATE MATERIALIZED VIEW mvt.mine AS SELECT id, status FROM pg.orders', rita);
    assert.equal((await rows('SELECT count(*) FROM mvt.mine', rita)).json, '[[40]]');
    await rows('REFRESH MATERIALIZED VIEW mvt.mine', rita);
    await rows('DROP MATERIALIZED VIEW mvt.mine', rita);
    assert.deepEqual(await values(`SELECT count(*) FROM SYSADMIN.Permissions WHERE "ResourceName" = 'mvt.people'`), [[1]]);
  } finally {
    await rows('DROP VIEW IF EXISTS mvt.people_view');
    await rows('DROP MATERIALIZED VIEW IF EXISTS mvt.people');
  }
  // Its grants went with it: a new one of its name starts without them.
  await rows('CREATE MATERIALIZED VIEW mvt.people AS SELECT id FROM pg.customers');
  assert.deepEqual(await values(`SELECT count(*) FROM SYSADMIN.Permissions WHERE "ResourceName" = 'mvt.people'`), [[0]]);
  await rows('DROP MATERIALIZED VIEW mvt.people');
});

test('a failed refresh keeps the last good copy; materialized views over materialized views and system tables', async () => {
  const t = fixture.pgSchema;
  await rows('CREATE MATERIALIZED VIEW mvt.tagged AS SELECT id, tag FROM pg.tags');
  await rows('CREATE MATERIALIZED VIEW mvt.tag_count AS SELECT count(*) AS n, count(tag) AS tagged FROM mvt.tagged');
  await rows('CREATE VIEW mvhidden.v AS SELECT 1 AS one');
  await rows(`CREATE MATERIALIZED VIEW mvt.schemas AS SELECT "Name" FROM SYS.Schemas`);
  try {
    const before = (await rows('SELECT * FROM mvt.tagged ORDER BY id')).json;
    await postgres.query(`ALTER TABLE ${t}.tags RENAME TO tags_away`);
    try {
      await assert.rejects(rows('REFRESH MATERIALIZED VIEW mvt.tagged'), (err: Error & { status?: number }) => {
        assert.ok(err.status !== undefined && err.status >= 400, `an API error, got ${err.message}`);
        return true;
      });
      const [[state, failures, error]] = (await values(
        `SELECT "State", "Failures", "LastError" FROM SYS.Copies WHERE "Name" = 'mvt.tagged'`,
      )) as [[string, number, string]];
      assert.deepEqual([state, failures], ['failing (last good copy kept)', 1]);
      assert.match(error, /tags/);
      const kept = await rows('SELECT * FROM mvt.tagged ORDER BY id');
      assert.equal(kept.json, before, 'statements still read the last good copy');
      assert.deepEqual(kept.sources, []);
    } finally {
      await postgres.query(`ALTER TABLE ${t}.tags_away RENAME TO tags`);
    }
    // One over another: its refresh runs both SELECTs live; read, it is its own copy.
    await postgres.query(`INSERT INTO ${t}.tags VALUES (50, 'new')`);
    await rows('REFRESH MATERIALIZED VIEW mvt.tag_count');
    const counted = await rows('SELECT * FROM mvt.tag_count');
    assert.equal(counted.json, (await rows('SELECT count(*) AS n, count(tag) AS tagged FROM pg.tags', admin, LIVE)).json);
    assert.deepEqual(counted.sources, []);
    const [[n]] = JSON.parse(counted.json) as number[][];
    assert.deepEqual(await values('SELECT count(*) FROM mvt.tagged'), [[n! - 1]], 'mvt.tagged keeps its own copy, without the new row');
    await postgres.query(`DELETE FROM ${t}.tags WHERE id = 50`);

    // System tables show each user their own part: read from the copy by administrators only.
    const sam = await restrictedReader(services, admin, 'mvsys', [`'mvt.schemas', 'R'`]);
    assert.deepEqual((await rows('SELECT * FROM mvt.schemas')).sources, []);
    const own = await rows('SELECT * FROM mvt.schemas ORDER BY 1', sam);
    assert.equal(own.json, (await rows('SELECT "Name" FROM SYS.Schemas ORDER BY 1', sam)).json, 'the schemas she sees');
    assert.ok(!own.json.includes('mvhidden'), 'not the copy, which holds every schema');
    assert.ok(JSON.stringify(await values('SELECT * FROM mvt.schemas')).includes('mvhidden'));
  } finally {
    await rows('DROP MATERIALIZED VIEW IF EXISTS mvt.tag_count, mvt.tagged, mvt.schemas');
    await rows('DROP VIEW IF EXISTS mvhidden.v');
  }
});

test("a refresh whose SELECT gives other columns than the materialized view's is refused; the copy stays", async () => {
  const t = fixture.pgSchema;
  await postgres.query(`CREATE TABLE ${t}.widgets (id int PRIMARY KEY, name text)`);
  await postgres.query(`INSERT INTO ${t}.widgets VALUES (1, 'a'), (2, 'b')`);
  await services.registry.refreshSource('pg');
  await rows('CREATE MATERIALIZED VIEW mvt.widgets AS SELECT * FROM pg.widgets');
  try {
    await postgres.query(`ALTER TABLE ${t}.widgets ADD COLUMN weight int`);
    await services.registry.refreshSource('pg');
    await refused('REFRESH MATERIALIZED VIEW mvt.widgets', 409, /now gives 3 columns; it was created with 2/);
    const kept = await rows('SELECT * FROM mvt.widgets ORDER BY id');
    assert.equal(kept.json, '[[1,"a"],[2,"b"]]');
    assert.deepEqual(kept.columns, ['id', 'name']);
  } finally {
    await rows('DROP MATERIALIZED VIEW mvt.widgets');
    await postgres.query(`DROP TABLE ${t}.widgets`);
    await services.registry.refreshSource('pg');
  }
});

test('dropping one removes its copy, its files and its row of SYS.Copies; a view that reads it holds it', async () => {
  await rows('CREATE MATERIALIZED VIEW mvt.dropped AS SELECT id, amount FROM my.orders');
  const oid = Number((await values(`SELECT "OID" FROM SYS.Copies WHERE "Name" = 'mvt.dropped'`))[0]![0]);
  const folder = path.join(services.registry.copies.folder, String(oid));
  assert.ok(fs.readdirSync(folder).length > 0);
  await rows('CREATE VIEW mvt.reader AS SELECT sum(amount) AS total FROM mvt.dropped');
  assert.deepEqual((await rows('SELECT * FROM mvt.reader')).sources, [], 'a view over it reads its copy');
  await refused('DROP MATERIALIZED VIEW mvt.dropped', 409, /read by mvt\.reader/);
  await refused('DROP VIEW mvt.dropped', 400, /DROP MATERIALIZED VIEW/);
  await refused("CALL SYSADMIN.dropCopy('mvt.dropped')", 400, /DROP MATERIALIZED VIEW/);
  await rows('DROP VIEW mvt.reader');
  const dropped = await values('DROP MATERIALIZED VIEW mvt.dropped');
  assert.deepEqual(dropped, [['mvt.dropped', 'dropped']]);
  assert.deepEqual(await values(`SELECT count(*) FROM SYS.Copies WHERE "Name" = 'mvt.dropped'`), [[0]]);
  assert.deepEqual(await values(`SELECT count(*) FROM SYS.Tables WHERE "SchemaName" = 'mvt' AND "Name" = 'dropped'`), [[0]]);
  assert.ok(!fs.existsSync(folder) || fs.readdirSync(folder).length === 0, 'no file of it is left');
  await refused('SELECT * FROM mvt.dropped', 404, /does not exist/);
});

test('clear errors: names taken, unknown ones, what is not a materialized view, options, statements', async () => {
  await rows('CREATE MATERIALIZED VIEW mvt.taken AS SELECT 1 AS one');
  await rows('CREATE VIEW mvt.plain AS SELECT 2 AS two');
  try {
    assert.deepEqual(await values('SELECT * FROM mvt.taken'), [[1]]);
    await refused('CREATE MATERIALIZED VIEW mvt.taken AS SELECT 2 AS two', 409, /already exists/);
    await refused('CREATE MATERIALIZED VIEW mvt.plain AS SELECT 2 AS two', 409, /already exists/);
    await refused('CREATE VIEW mvt.taken AS SELECT 2 AS two', 409, /materialized view/);
    await refused('CREATE OR REPLACE VIEW mvt.taken AS SELECT 2 AS two', 409, /materialized view/);
    assert.deepEqual(await values('CREATE MATERIALIZED VIEW IF NOT EXISTS mvt.taken AS SELECT 2 AS two'), [
      ['mvt.taken', null, null, 'exists'],
    ]);
    await refused('CREATE MATERIALIZED VIEW pg.mv AS SELECT 1 AS one', 409, /data source/);
    await refused('CREATE MATERIALIZED VIEW nowhere AS SELECT 1 AS one', 400, /needs a schema/);
    await refused("CREATE MATERIALIZED VIEW mvt.x WITH (refresh_often = '1 hour') AS SELECT 1 AS one", 400, /refresh_every, max_staleness/);
    await refused("CREATE MATERIALIZED VIEW mvt.x WITH (refresh_every = 'soon') AS SELECT 1 AS one", 400, /not a duration/);
    await refused('CREATE MATERIALIZED VIEW mvt.x AS SELECT current_user AS who', 400, /CURRENT_USER/);
    await refused('CREATE MATERIALIZED VIEW mvt.x AS SELECT * FROM pg.nothing', 404, /does not exist/);
    await refused('CREATE MATERIALIZED VIEW mvt.x (a, b) AS SELECT 1 AS one', 400, /names 2 columns/);
    await refused('CREATE MATERIALIZED VIEW mvt.x AS SELECT 1 AS a, 2 AS a', 400, /two columns named/);
    await refused('CREATE TABLE mvt.x AS SELECT 1 AS one', 400, /CREATE TABLE AS is not supported/);
    await refused('REFRESH MATERIALIZED VIEW mvt.nothing', 404, /does not exist/);
    await refused('REFRESH MATERIALIZED VIEW mvt.plain', 400, /not a materialized view/);
    await refused('REFRESH MATERIALIZED VIEW mvt.taken WITH NO DATA', 400, /not supported/);
    await refused('DROP MATERIALIZED VIEW mvt.nothing', 404, /does not exist/);
    await refused('DROP MATERIALIZED VIEW mvt.plain', 400, /DROP VIEW/);
    await refused('INSERT INTO mvt.taken VALUES (3)', 403, /cannot be written/);
    assert.deepEqual(await values('DROP MATERIALIZED VIEW IF EXISTS mvt.nothing'), []);
    for (const sql of [
      'CREATE MATERIALIZED VIEW mvt.x AS SELECT 1 AS one',
      'REFRESH MATERIALIZED VIEW mvt.taken',
      'DROP MATERIALIZED VIEW mvt.taken',
    ]) {
      await assert.rejects(
        services.engine.open(sql, admin, new AbortController().signal, { readOnly: true }),
        (err: Error & { status?: number }) => err.status === 403,
        `a read-only key may not: ${sql}`,
      );
    }
    // Column names given with the view; nothing left of a refused one.
    await rows('CREATE MATERIALIZED VIEW mvt.named (n, label) AS SELECT id, name FROM pg.customers WHERE id < 3');
    const named = await rows('SELECT * FROM mvt.named ORDER BY n');
    assert.deepEqual(named.columns, ['n', 'label']);
    assert.deepEqual(named.sources, []);
    await rows('DROP MATERIALIZED VIEW mvt.named');
    assert.deepEqual(await values(`SELECT "Name" FROM SYS.Copies WHERE "SchemaName" = 'mvt' ORDER BY 1`), [['mvt.taken']]);
  } finally {
    await rows('DROP VIEW IF EXISTS mvt.plain');
    await rows('DROP MATERIALIZED VIEW IF EXISTS mvt.taken');
  }
});
