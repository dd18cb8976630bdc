/**
 * Dates and timestamps before year 1 (BC): PostgreSQL writes them "0044-03-15 BC", the engine
 * "0044-03-15 (BC)", and counts years otherwise (no year 0 in PostgreSQL). Loaded from
 * PostgreSQL (COPY text "... BC"), from MariaDB (year 0 is 1 BC), computed and written as JSON
 * in the engine: the answers are PostgreSQL's own, or a refusal.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { UserDef } from '../../src/catalog/types.js';
import { Engine } from '../../src/engine/engine.js';
import type { Services } from '../../src/services.js';
import { dropTagged, engineRows, MY, PG, servicesWithSources } from './fixtures.js';

const tag = `vdbt_${randomBytes(4).toString('hex')}`;
let services: Services;
let dataDir: string;
let pushed: Engine;
let local: Engine;
let admin: UserDef;
let client: pg.Client;

const EVENTS: Array<[number, string | null, string | null, string | null]> = [
  [1, '0044-03-15 BC', '0044-03-15 10:00:00 BC', '0044-03-15 10:00:00+00 BC'],
  [2, '0001-01-01 BC', '0001-01-01 10:00:00.25 BC', '0001-12-31 23:59:59.5+00 BC'],
  [3, '0001-12-31 BC', '0001-01-01 00:00:00 BC', '0001-01-01 00:00:00+00 BC'],
  [4, '0005-02-29 BC', '0010-12-31 23:00:00 BC', '4713-11-24 00:00:00+00 BC'],
  [5, '4713-11-24 BC', '2099-06-15 12:30:00 BC', '0011-01-01 00:00:00+00 BC'],
  [6, '0001-01-01', '0001-01-01 00:00:00', '0001-01-01 00:00:00+00'],
  [7, '2025-03-15', '2025-03-15 10:00:00.5', '2025-03-15 10:00:00+00'],
  [8, null, null, null],
  [9, '-infinity', '-infinity', '-infinity'],
];

before(async () => {
  client = new pg.Client({ ...PG, options: '-c TimeZone=UTC' });
  await client.connect();
  await client.query(`CREATE SCHEMA ${tag}`);
  await client.query(`CREATE TABLE ${tag}.events (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz)`);
  for (const row of EVENTS) await client.query(`INSERT INTO ${tag}.events VALUES ($1, $2, $3, $4)`, row);
  const my = await mysql.createConnection(MY);
  await my.query(`CREATE DATABASE ${tag}`);
  await my.query(`CREATE TABLE ${tag}.ids (id int PRIMARY KEY)`);
  await my.query(`INSERT INTO ${tag}.ids VALUES ?`, [EVENTS.map(([id]) => [id])]);
  // MariaDB's year 0 is 1 BC (proleptic Gregorian, astronomical years).
  await my.query(`CREATE TABLE ${tag}.zero (id int PRIMARY KEY, d date, dt datetime(3))`);
  await my.query(
    `INSERT INTO ${tag}.zero VALUES (1, '0000-01-01', '0000-01-01 10:00:00'), (2, '0000-12-31', '0000-03-01 23:59:59.500'), (3, '0001-01-01', '0001-01-01 00:00:00')`,
  );
  await my.end();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bc-'));
  services = await servicesWithSources(tag, dataDir);
  const { registry, runtime } = services;
  pushed = new Engine(registry, runtime, 'vdb', { pushdown: true, dependentJoin: { maxKeys: 1000, batchSize: 100 } });
  local = new Engine(registry, runtime, 'vdb', { pushdown: false, dependentJoin: { maxKeys: 1000, batchSize: 100 } });
  admin = services.users.find('admin')!;
});

after(async () => {
  await client?.end();
  await services?.close();
  await dropTagged(tag, dataDir);
});

/** PostgreSQL's answer to `sql` (over the schema `tag` for `pg.`), as the rows of json_agg of its rows. */
async function postgresRows(sql: string): Promise<unknown> {
  const inner = sql.replaceAll('pg.', `${tag}.`);
  const result = await client.query<{ j: unknown }>(`SELECT coalesce(json_agg(to_json(q)), '[]') AS j FROM (${inner}) AS q`);
  return (result.rows[0]!.j as Array<Record<string, unknown>>).map((row) => Object.values(row));
}

const vdbRows = async (engine: Engine, sql: string) => JSON.parse((await engineRows(engine, admin, sql)).json) as unknown;

test('BC dates and timestamps as JSON: the engine writes what PostgreSQL writes (loaded with and without pushdown)', async () => {
  const sql = 'SELECT id, d, ts, tz FROM pg.events ORDER BY id';
  const expected = await postgresRows(sql);
  assert.deepEqual((expected as unknown[][])[0], [1, '0044-03-15 BC', '0044-03-15T10:00:00 BC', '0044-03-15T10:00:00+00:00 BC']);
  assert.deepEqual(await vdbRows(local, sql), expected);
  assert.deepEqual(await vdbRows(pushed, sql), expected);
});

test('a PostgreSQL BC date loaded into the engine for a federated join keeps its value', async () => {
  const sql = 'SELECT e.id, e.d, e.ts, e.tz FROM pg.events e JOIN my.ids i ON i.id = e.id ORDER BY e.id';
  const expected = await postgresRows(sql.replace('JOIN my.ids i ON i.id = e.id', ''));
  for (const engine of [pushed, local]) {
    const { json } = await engineRows(engine, admin, sql);
    assert.deepEqual(JSON.parse(json), expected);
  }
  // Conditions on BC values, in the engine.
  const before =
    "SELECT e.id FROM pg.events e JOIN my.ids i ON i.id = e.id WHERE e.d < DATE '0001-01-01' AND e.ts > '-infinity' ORDER BY 1";
  assert.deepEqual(await vdbRows(pushed, before), [[1], [2], [3], [4], [5]]);
});

test('BC values computed in the engine: text, years, arithmetic and to_json as in PostgreSQL', async () => {
  const sql = `SELECT id, d::text AS dt, ts::text AS tst, tz::text AS tzt, concat(d, '|', ts) AS joined,
      extract(year FROM d) AS y, extract(isoyear FROM d) AS iy, extract(decade FROM d) AS dec,
      extract(century FROM d) AS c, extract(millennium FROM d) AS m, date_part('year', ts) AS ty,
      date_part('decade', tz) AS tzd, extract(year FROM tz) AS tzy, extract(isoyear FROM tz) AS tziy,
      extract(century FROM tz) AS tzc, date_trunc('year', tz) AS tz_year, extract(doy FROM d) AS doy, d - 1 AS prev, d + 400 AS later,
      ts + interval '1 year' AS ts_later, d - DATE '0001-01-01' AS days, to_json(d) AS jd, to_json(ts) AS jts,
      to_json(tz) AS jtz, d < DATE '0001-01-01' AS bc
    FROM pg.events WHERE d > '-infinity' ORDER BY id`;
  const expected = await postgresRows(sql);
  assert.deepEqual(await vdbRows(local, sql), expected);
  const made =
    'SELECT make_date(-44, 3, 15) AS a, make_date(-1, 12, 31) AS b, make_timestamp(-1, 1, 1, 10, 0, 0) AS c, make_date(1, 1, 1) AS e';
  const answer = await postgresRows(made);
  assert.deepEqual((answer as unknown[][])[0]![0], '0044-03-15 BC');
  assert.deepEqual(await vdbRows(local, `${made} FROM pg.events WHERE id = 1`), answer);
  await assert.rejects(() => vdbRows(local, 'SELECT make_date(id - 1, 1, 1) FROM pg.events WHERE id = 1'), /out of range/);
});

test('to_char of a BC date is refused, not written otherwise', async () => {
  await assert.rejects(
    () => vdbRows(local, "SELECT to_char(d, 'YYYY-MM-DD') FROM pg.events WHERE id = 1"),
    /before year 1 \(BC\) is not supported/,
  );
  assert.deepEqual(await vdbRows(local, "SELECT to_char(d, 'YYYY-MM-DD') FROM pg.events WHERE id = 7"), [['2025-03-15']]);
  // The engine's year of a timestamp with time zone before 1 is its era's: refused too.
  await assert.rejects(() => vdbRows(local, "SELECT to_char(tz, 'YYYY') FROM pg.events WHERE id = 1"), /before year 1/);
  for (const field of ['century', 'decade'])
    await assert.rejects(
      () => vdbRows(local, `SELECT date_trunc('${field}', tz) FROM pg.events WHERE id = 1`),
      /before 1 is not supported/,
    );
  assert.deepEqual(await vdbRows(local, "SELECT date_trunc('decade', ts) FROM pg.events WHERE id = 7"), [['2020-01-01T00:00:00']]);
});

test("MariaDB's year 0 is 1 BC: written and counted as PostgreSQL writes and counts 1 BC", async () => {
  const sql = 'SELECT id, d, dt, d::text, extract(year FROM d) FROM my.zero ORDER BY id';
  const expected = [
    [1, '0001-01-01 BC', '0001-01-01T10:00:00 BC', '0001-01-01 BC', -1],
    [2, '0001-12-31 BC', '0001-03-01T23:59:59.5 BC', '0001-12-31 BC', -1],
    [3, '0001-01-01', '0001-01-01T00:00:00', '0001-01-01', 1],
  ];
  // The same values written in PostgreSQL's terms.
  const postgres = await postgresRows(
    `SELECT * FROM (VALUES (1, DATE '0001-01-01 BC', TIMESTAMP '0001-01-01 10:00:00 BC'), (2, DATE '0001-12-31 BC', TIMESTAMP '0001-03-01 23:59:59.5 BC'), (3, DATE '0001-01-01', TIMESTAMP '0001-01-01 00:00:00')) AS v(id, d, dt)`,
  );
  assert.deepEqual(
    postgres,
    expected.map((row) => row.slice(0, 3)),
  );
  for (const engine of [pushed, local]) assert.deepEqual(await vdbRows(engine, sql), expected, sql);
  assert.deepEqual(
    await vdbRows(pushed, 'SELECT id, d FROM my.zero ORDER BY id'),
    expected.map((row) => row.slice(0, 2)),
  );
});

test('BC literals: typed ones read as PostgreSQL reads them, untyped ones and year 0 refused', async () => {
  const sql = `SELECT id, d = DATE '0044-03-15 BC' AS same, ts = TIMESTAMP '0044-03-15 10:00:00 BC' AS same_ts,
      tz = TIMESTAMPTZ '0044-03-15 10:00:00+00 BC' AS same_tz, DATE '0001-01-01 BC' - 1 AS before
    FROM pg.events WHERE id IN (1, 7) ORDER BY id`;
  const expected = await postgresRows(sql);
  assert.deepEqual((expected as unknown[][])[0]!.slice(1, 4), [true, true, true]);
  assert.deepEqual(await vdbRows(local, sql), expected);
  // Untyped, the engine would read it as 44 AD where it meets a date.
  await assert.rejects(() => vdbRows(local, "SELECT id FROM pg.events WHERE d = '0044-03-15 BC'"), /before year 1/);
  // PostgreSQL has no year 0; the engine's is 1 BC.
  await assert.rejects(() => vdbRows(local, "SELECT DATE '0000-01-01' FROM pg.events"), /out of range/);
  await assert.rejects(
    () => vdbRows(local, "SELECT (concat('000', id - 1, '-01-01'))::date FROM pg.events WHERE id = 1"),
    /date\/time field value out of range/,
  );
});
