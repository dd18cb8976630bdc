/**
 * PostgreSQL's char(n) (bpchar) holds its values padded with spaces ('5    ' for char(5)) and
 * compares, joins, measures and concatenates them without the padding. Every route must give
 * PostgreSQL's answer, or refuse with a 400 naming the column where the engine would use padded
 * values; never another answer. Unpadded char(n) values (two-letter codes in a char(2)) and a
 * padded column only shown keep working in the engine.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type pg from 'pg';
import type mysql from 'mysql2/promise';
import type { UserDef } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { Engine } from '../../src/engine/engine.js';
import { createServices, type Services } from '../../src/services.js';
import { paddedChar } from '../../src/connectors/kinds.js';
import { paddedUses } from '../../src/engine/plan/padded-uses.js';
import { parseStatement } from '../../src/engine/front/parse.js';
import { mysqlConnection, pgClient, uniqueTag } from '../connectors/db.js';
import { engineRows, type EngineRows } from './fixtures.js';

const TAG = uniqueTag();
let services: Services;
let dataDir: string;
let postgres: pg.Client;
let maria: mysql.Connection;
let pushed: Engine;
let local: Engine;
let admin: UserDef;

before(async () => {
  postgres = await pgClient();
  await postgres.query(`CREATE SCHEMA ${TAG}`);
  await postgres.query(
    `CREATE TABLE ${TAG}.orders AS SELECT i AS id, i % 700 AS customer_id, ((i % 700)::text)::char(5) AS code FROM generate_series(1, 20000) i`,
  );
  await postgres.query(`CREATE TABLE ${TAG}.countries (code char(2), name text)`);
  await postgres.query(`INSERT INTO ${TAG}.countries VALUES ('DE', 'Germany'), ('US', 'United States'), ('FR', 'France'), (NULL, 'none')`);
  // The MariaDB table, also at PostgreSQL (not imported: another schema) to ask PostgreSQL for its answer: as
  // text, which is how vdb reads another source's text (and ships it to PostgreSQL).
  await postgres.query(`CREATE SCHEMA ${TAG}_ref`);
  await postgres.query(`CREATE TABLE ${TAG}_ref.codes (k text, label text)`);
  await postgres.query(`INSERT INTO ${TAG}_ref.codes VALUES ('5', 'five'), ('6', 'six'), ('US', 'states'), ('DE ', 'spaced')`);
  await postgres.query(`CREATE TABLE ${TAG}.texts AS SELECT i AS id, (i % 700)::text AS t FROM generate_series(1, 20000) i`);
  // A second PostgreSQL source whose small char(n) table is shipped to the first.
  await postgres.query(`CREATE SCHEMA ${TAG}_small`);
  await postgres.query(`CREATE TABLE ${TAG}_small.tiny (code char(5), label text)`);
  await postgres.query(`INSERT INTO ${TAG}_small.tiny VALUES ('5', 'five'), ('DE', 'de'), (NULL, 'none')`);
  await postgres.query(`ANALYZE ${TAG}.orders; ANALYZE ${TAG}.countries; ANALYZE ${TAG}.texts; ANALYZE ${TAG}_small.tiny`);
  maria = await mysqlConnection();
  await maria.query(`CREATE DATABASE ${TAG}`);
  await maria.query(`CREATE TABLE ${TAG}.codes (k varchar(10), label varchar(20))`);
  await maria.query(`INSERT INTO ${TAG}.codes VALUES ('5', 'five'), ('6', 'six'), ('US', 'states'), ('DE ', 'spaced')`);
  await maria.query(`ANALYZE TABLE ${TAG}.codes`);

  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bpchar-'));
  services = await createServices(loadConfig({}, { dataDir, adminPassword: 'bpchar-test-pw', demo: false }), pino({ level: 'silent' }));
  await services.registry.addSource({
    name: 'pg',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
    model: { 'importer.schemaPattern': TAG },
  });
  await services.registry.addSource({
    name: 'pg2',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
    model: { 'importer.schemaPattern': `${TAG}_small` },
  });
  await services.registry.addSource({
    name: 'my',
    kind: 'mysql',
    connection: { host: '127.0.0.1', port: '3306', db: TAG, 'user-name': 'root' },
  });
  const dependentJoin = { maxKeys: 1000, batchSize: 100 };
  pushed = new Engine(services.registry, services.runtime, 'vdb', { pushdown: true, dependentJoin });
  local = new Engine(services.registry, services.runtime, 'vdb', { pushdown: false, dependentJoin });
  admin = services.users.find('admin')!;
});

after(async () => {
  await services?.close();
  await postgres?.query(
    `DROP SCHEMA IF EXISTS ${TAG} CASCADE; DROP SCHEMA IF EXISTS ${TAG}_ref CASCADE; DROP SCHEMA IF EXISTS ${TAG}_small CASCADE`,
  );
  await postgres?.end();
  await maria?.query(`DROP DATABASE IF EXISTS ${TAG}`);
  await maria?.end();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

type Rows = EngineRows;

const rows = (engine: Engine, sql: string, user: UserDef = admin): Promise<Rows> => engineRows(engine, user, sql);

/** The rows, or the refusal (a 400 naming the char(n) column). */
async function answer(engine: Engine, sql: string, user?: UserDef): Promise<Rows | { refused: string }> {
  try {
    return await rows(engine, sql, user);
  } catch (err) {
    const { status, message } = err as Error & { status?: number };
    if (status === 400 && /char\(n\)/.test(message)) return { refused: message };
    throw err;
  }
}

/** PostgreSQL's own answer, as vdb's JSON writes it. */
async function postgresAnswer(sql: string): Promise<string> {
  const ref = sql.replaceAll('pg2.', `${TAG}_small.`).replaceAll('pg.', `${TAG}.`).replaceAll('my.', `${TAG}_ref.`);
  const probe = await postgres.query({ text: ref, rowMode: 'array' });
  const aliases = probe.fields.map((_, i) => `c${i}`);
  const json = await postgres.query({
    text: `SELECT ${aliases.map((a) => `to_json(q.${a})::text`).join(', ')} FROM (${ref}) AS q(${aliases.join(', ')})`,
    rowMode: 'array',
  });
  return `[${json.rows.map((row: Array<string | null>) => `[${row.map((v) => v ?? 'null').join(',')}]`).join(',')}]`;
}

/** Each engine answers as PostgreSQL does or refuses naming `column`; returns the answers. */
async function assertPostgresOrRefused(sql: string, column: string, user?: UserDef): Promise<Array<Rows | { refused: string }>> {
  const expected = await postgresAnswer(sql);
  const answers = [await answer(pushed, sql, user), await answer(local, sql, user)];
  for (const [i, got] of answers.entries()) {
    const plan = i === 0 ? 'pushdown on' : 'pushdown off';
    if ('refused' in got) assert.match(got.refused, new RegExp(column.replace(/\./g, '\\.')), `${plan}: ${got.refused}`);
    else assert.equal(got.json, expected, `${plan}: ${sql}; sent: ${got.sourceSql.join(' | ')}`);
  }
  return answers;
}

describe('a padded char(n) column', () => {
  test('the importer records char(n) columns', () => {
    const source = services.registry.findSource('pg')!;
    const orders = source.tables.find((t) => t.name === 'orders')!;
    const code = orders.columns.find((c) => c.name === 'code')!;
    assert.equal(code.sourceType, 'character(5)');
    assert.ok(paddedChar(code, source));
    const name = source.tables.find((t) => t.name === 'countries')!.columns.find((c) => c.name === 'name')!;
    assert.equal(name.sourceType, 'text');
    assert.ok(!paddedChar(name, source));
  });

  test('compared with a constant: PostgreSQL finds the padded values; so does the engine, without the padding', async () => {
    const sql = "SELECT count(*) FROM pg.orders WHERE code = '5'";
    assert.equal(await postgresAnswer(sql), '[[29]]');
    const answers = await assertPostgresOrRefused(sql, 'pg.orders.code');
    for (const got of answers) assert.ok(!('refused' in got), 'answered');
    assert.ok(!('refused' in answers[1]!) && answers[1].sourceSql.length > 0, 'pushdown off: computed by the engine');
  });

  test('joined with a MariaDB varchar: PostgreSQL ignores the padding; so does the engine', async () => {
    for (const sql of [
      'SELECT o.id, m.label FROM pg.orders o JOIN my.codes m ON m.k = o.code ORDER BY o.id LIMIT 5',
      'SELECT count(*) FROM pg.orders o JOIN my.codes m ON m.k = o.code',
      'SELECT m.label, count(*) FROM my.codes m LEFT JOIN pg.orders o ON o.code = m.k GROUP BY m.label ORDER BY 1',
      'SELECT m.label FROM my.codes m WHERE m.k IN (SELECT code FROM pg.orders) ORDER BY 1',
    ]) {
      const answers = await assertPostgresOrRefused(sql, 'orders.code');
      for (const got of answers) assert.ok(!('refused' in got), `answered: ${sql}`);
    }
  });

  test('computed with: answered where PostgreSQL reads it without padding (or with it), refused elsewhere', async () => {
    const answered = [
      "SELECT id, length(code), code || 'x', upper(code), code::text || '|', octet_length(code) FROM pg.orders WHERE id <= 3 ORDER BY id",
      "SELECT id, concat(code, '|'), code LIKE '5%', code LIKE '%5', code ~ '5 +$' FROM pg.orders WHERE id IN (5, 705) ORDER BY id",
      'SELECT id, code FROM pg.orders WHERE id <= 20 ORDER BY code, id',
      "SELECT id FROM pg.orders WHERE code BETWEEN '5' AND '50' AND code <> '6' AND code NOT IN ('7', '8') ORDER BY id LIMIT 20",
      'SELECT id, code AS c FROM pg.orders WHERE id <= 5 ORDER BY code',
      'SELECT code, count(*) FROM pg.orders WHERE id <= 50 GROUP BY code ORDER BY code',
      "SELECT string_agg(code, ',' ORDER BY code) FROM pg.orders WHERE id <= 5",
      'SELECT id FROM pg.orders o WHERE code = (SELECT max(t) FROM pg.texts x WHERE x.id = 5) ORDER BY id LIMIT 3',
      "SELECT count(*) FROM pg.orders o JOIN pg2.tiny s ON s.code = o.code WHERE s.code <> 'DE'",
      'SELECT c.name, count(o.id) FROM pg.countries c LEFT JOIN pg.orders o ON o.code = c.code GROUP BY c.name ORDER BY 1',
      "SELECT code, count(*) FROM pg.orders WHERE id <= 100 GROUP BY code HAVING code > '5' ORDER BY code",
      "SELECT id, CASE WHEN code = '5' THEN 'five' END, code IS DISTINCT FROM '6' FROM pg.orders WHERE id IN (5, 6, 7) ORDER BY id",
      'SELECT x.id FROM pg.texts x WHERE EXISTS (SELECT 1 FROM pg.orders o WHERE o.code = x.t AND o.id = x.id) ORDER BY 1 LIMIT 5',
      'SELECT count(DISTINCT code), count(code), count(*) FROM pg.orders',
    ];
    for (const sql of answered) {
      const answers = await assertPostgresOrRefused(sql, 'pg.orders.code');
      for (const got of answers) assert.ok(!('refused' in got), `answered: ${sql}`);
    }
    for (const sql of [
      'SELECT id, code FROM pg.orders WHERE id <= 20 ORDER BY 2, 1',
      'SELECT DISTINCT code FROM pg.orders WHERE id <= 3 ORDER BY 1',
      "SELECT x.id FROM (SELECT id, code AS c FROM pg.orders) x WHERE x.c = '5' ORDER BY 1",
      'SELECT id, code AS c FROM pg.orders WHERE id <= 5 ORDER BY c',
      'SELECT max(code) FROM pg.orders',
    ]) {
      const [, b] = await assertPostgresOrRefused(sql, 'pg.orders.code');
      assert.ok('refused' in b!, `the engine refuses: ${sql}`);
    }
  });

  test('under EXISTS (SELECT * ...), which uses no column of its select list: answered on every route', async () => {
    for (const sql of [
      'SELECT m.label FROM my.codes m WHERE EXISTS (SELECT * FROM pg.orders o WHERE o.customer_id::text = m.k) ORDER BY 1',
      'SELECT count(*) FROM my.codes m WHERE NOT EXISTS (SELECT * FROM pg.orders o WHERE o.customer_id::text = m.k)',
    ]) {
      const answers = await assertPostgresOrRefused(sql, 'pg.orders.code');
      for (const got of answers) assert.ok(!('refused' in got), `answered: ${sql}`);
    }
  });

  test('shipped from another PostgreSQL source, it goes as bpchar: PostgreSQL ignores the padding there', async () => {
    for (const sql of [
      'SELECT count(*) FROM pg.texts x JOIN pg2.tiny s ON s.code = x.t',
      'SELECT x.id, s.label, s.code FROM pg.texts x JOIN pg2.tiny s ON s.code = x.t ORDER BY x.id LIMIT 3',
    ]) {
      const [a] = await assertPostgresOrRefused(sql, 'tiny.code');
      assert.ok(!('refused' in a!), `pushed: answered at PostgreSQL (${sql})`);
      assert.ok(
        (a as Rows).sourceSql.some((q) => /::bpchar\[\]/.test(q)),
        `shipped as bpchar: ${(a as Rows).sourceSql.join(' | ')}`,
      );
    }
  });

  test('shown bare, it keeps its padding on every route, as PostgreSQL shows it', async () => {
    for (const sql of [
      'SELECT id, code FROM pg.orders WHERE id <= 3 ORDER BY id',
      'SELECT * FROM pg.orders WHERE id <= 3 ORDER BY id',
      'SELECT o.code, m.label FROM pg.orders o JOIN my.codes m ON m.k = o.customer_id::text WHERE o.id <= 10 ORDER BY o.id',
    ]) {
      const answers = await assertPostgresOrRefused(sql, 'pg.orders.code');
      for (const got of answers) assert.ok(!('refused' in got), `answered: ${sql}`);
    }
    assert.equal((await rows(local, 'SELECT id, code FROM pg.orders WHERE id <= 2 ORDER BY id')).json, '[[1,"1    "],[2,"2    "]]');
  });

  test('under a row condition on it: the condition runs at PostgreSQL, or the engine refuses', async () => {
    for (const sql of [
      "CALL SYSADMIN.addRole('coders')",
      "CALL SYSADMIN.setPermissions('coders', 'pg.orders', 'R', 'code = ''5''')",
      "CALL SYSADMIN.setPermissions('coders', 'pg.countries', 'R', 'code = ''US''')",
      "CALL SYSADMIN.setPermissions('coders', 'my.codes', 'R')",
      "CALL SYSADMIN.addUser('cody', 'cody-password-1')",
      "CALL SYSADMIN.addUserRole('coders', 'cody')",
    ])
      await rows(services.engine, sql);
    const cody = services.users.find('cody')!;
    const count = 'SELECT count(*) FROM pg.orders WHERE customer_id >= 0';
    const expected = '[[29]]';
    const a = await answer(pushed, count, cody);
    const b = await answer(local, count, cody);
    assert.ok(!('refused' in a), 'pushed: the condition goes to PostgreSQL');
    assert.equal((a as Rows).json, expected);
    if ('refused' in b) assert.match(b.refused, /pg\.orders\.code/);
    else assert.equal(b.json, expected);
    // Shown bare under the condition: the padding shows as PostgreSQL shows it.
    const shown = 'SELECT id, customer_id FROM pg.orders WHERE id < 1000 ORDER BY id';
    for (const engine of [pushed, local]) {
      const got = await answer(engine, shown, cody);
      if (!('refused' in got)) assert.equal(got.json, '[[5,5],[705,5]]');
    }
    // Unpadded char(2) values under a condition on them: the engine answers.
    for (const engine of [pushed, local]) {
      assert.equal((await rows(engine, 'SELECT name FROM pg.countries ORDER BY 1', cody)).json, '[["United States"]]');
    }
  });
});

describe('unpadded char(n) values', () => {
  test('compared and joined in the engine: answered as PostgreSQL does', async () => {
    for (const sql of [
      "SELECT name FROM pg.countries WHERE code = 'US'",
      "SELECT name FROM pg.countries WHERE code IN ('DE', 'FR') ORDER BY 1",
      'SELECT c.name, m.label FROM pg.countries c JOIN my.codes m ON m.k = c.code ORDER BY 1',
      "SELECT code, length(code), code || '!' FROM pg.countries ORDER BY code",
    ]) {
      const answers = await assertPostgresOrRefused(sql, 'pg.countries.code');
      for (const got of answers) assert.ok(!('refused' in got), `answered: ${sql}`);
    }
  });

  test('compared with a constant ending with a space: PostgreSQL ignores it; the engine refuses', async () => {
    const sql = "SELECT name FROM pg.countries WHERE code = 'US '";
    assert.equal(await postgresAnswer(sql), '[["United States"]]');
    const [, b] = await assertPostgresOrRefused(sql, 'pg.countries.code');
    assert.ok('refused' in b!);
  });
});

test('which uses are more than showing a column', () => {
  const used = (sql: string, column: string) => paddedUses(parseStatement(sql)).used(column);
  const strippable = (sql: string, column: string) => paddedUses(parseStatement(sql)).strippable(column).length;
  assert.ok(!used('SELECT id, code FROM t WHERE id = 1 ORDER BY id', 'code'));
  assert.ok(!used('SELECT * FROM t', 'code'));
  assert.ok(!used('SELECT id FROM t WHERE code = 1', 'code'));
  assert.equal(strippable('SELECT id FROM t WHERE code = 1 ORDER BY code', 'code'), 2);
  assert.equal(strippable("SELECT length(code), code || 'x', code::text, upper(code) FROM t", 'code'), 4);
  assert.ok(!used("SELECT id FROM t WHERE code LIKE '%a' OR code ~ 'a' OR octet_length(code) > 1", 'code'));
  assert.equal(strippable("SELECT id FROM t WHERE code LIKE '%a'", 'code'), 0);
  assert.ok(used('SELECT code FROM t ORDER BY 1', 'code'));
  assert.ok(used('SELECT code AS c FROM t ORDER BY c', 'code'));
  assert.ok(used('SELECT DISTINCT code FROM t ORDER BY code', 'code'));
  assert.ok(!used('SELECT DISTINCT code FROM t', 'code'));
  assert.ok(used('SELECT x FROM (SELECT DISTINCT code AS x FROM t) s', 'code'));
  assert.ok(!used('SELECT count(DISTINCT code) FROM t', 'code'));
  assert.equal(strippable('SELECT DISTINCT code FROM t ORDER BY code', 'code'), 0);
  assert.ok(used('SELECT code FROM t UNION SELECT code FROM u', 'code'));
  assert.ok(used('SELECT * FROM t JOIN u USING (code)', 'code'));
  assert.ok(used('SELECT * FROM t NATURAL JOIN u', 'code'));
  assert.ok(used('SELECT x.code FROM (SELECT * FROM t) x', 'code'));
  assert.ok(used('SELECT t FROM t', 'code'));
  assert.ok(used('SELECT max(code) FROM t', 'code'));
  assert.ok(!used('SELECT id FROM t WHERE EXISTS (SELECT * FROM u WHERE u.id = t.id)', 'code'));
  assert.ok(!used('SELECT id FROM t WHERE NOT EXISTS (SELECT code FROM u WHERE u.id = t.id)', 'code'));
  assert.ok(used('SELECT id FROM t WHERE EXISTS (SELECT DISTINCT code FROM u)', 'code'));
  assert.ok(paddedUses(parseStatement('SELECT upper(t) AS code FROM t')).aliased('code'));
  assert.ok(paddedUses(parseStatement("SELECT code FROM t WHERE name = 'a '")).paddedConstant());
  assert.ok(!paddedUses(parseStatement("SELECT code FROM t WHERE name = 'a'")).paddedConstant());
});

test('a PostgreSQL text column imported before vdb recorded source types counts as a possible char(n)', () => {
  assert.ok(paddedChar({ type: 'VARCHAR' }, { kind: 'postgresql' }));
  assert.ok(!paddedChar({ type: 'VARCHAR', sourceType: 'text' }, { kind: 'postgresql' }));
  assert.ok(paddedChar({ type: 'VARCHAR', sourceType: 'character(1)' }, { kind: 'postgresql' }));
  assert.ok(paddedChar({ type: 'VARCHAR', sourceType: 'bpchar' }, { kind: 'postgresql' }));
  assert.ok(!paddedChar({ type: 'VARCHAR', sourceType: 'character varying(5)' }, { kind: 'postgresql' }));
  assert.ok(!paddedChar({ type: 'VARCHAR' }, { kind: 'mysql' }));
  assert.ok(!paddedChar({ type: 'INTEGER' }, { kind: 'postgresql' }));
});

test('a source imported before vdb recorded source types: text values ending with a space are refused where used, until a refresh records the types', async () => {
  await postgres.query(`CREATE TABLE ${TAG}.notes (id int, note text)`);
  await postgres.query(`INSERT INTO ${TAG}.notes VALUES (1, 'a '), (2, 'b')`);
  await rows(services.engine, "CALL SYSADMIN.refreshDataSource('pg')");
  // As a catalog written before 0.2.0 holds it: no source types.
  const source = services.registry.findSource('pg')!;
  const notes = source.tables.find((t) => t.name === 'notes')!;
  for (const column of notes.columns) delete column.sourceType;
  const sql = "SELECT id FROM pg.notes WHERE note <> 'x' ORDER BY id";
  const refused = await answer(local, sql);
  assert.ok('refused' in refused, 'a text value ending with a space may be a char(n): refused');
  assert.match(refused.refused, /pg\.notes\.note/);
  assert.match(refused.refused, /imported before/);
  assert.equal((await rows(local, 'SELECT id, note FROM pg.notes ORDER BY id')).json, '[[1,"a "],[2,"b"]]', 'shown bare: answered');
  await rows(services.engine, "CALL SYSADMIN.refreshDataSource('pg')");
  const refreshed = services.registry.findSource('pg')!.tables.find((t) => t.name === 'notes')!;
  assert.equal(refreshed.columns.find((c) => c.name === 'note')!.sourceType, 'text');
  assert.equal((await rows(local, sql)).json, '[[1],[2]]');
});
