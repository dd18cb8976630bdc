/**
 * CSV and JSON files read with types that lose nothing: decimal numbers are numeric with their
 * scale (sums and comparisons of money columns exact, as PostgreSQL holding the same data
 * answers them), never a float unless declared or asked for (`decimals=double`); text stays
 * text; a file changed after the import fails where a value no longer fits, never rounded.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient, uniqueTag } from './db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { compareAnswers, postgresAnswer, postgresTypeNames, vdbAnswer } from '../engine/postgres-answers.js';

let server: TestServer;
let postgres: pg.Client;
let pgTypes: Map<number, string>;
let folder: string;
const tag = uniqueTag();

const MONEY: ReadonlyArray<readonly [number, string, string, string, string]> = [
  [1, '0.10', '0.5', '1e3', '1 day'],
  [2, '0.20', '0.25', '2.5', '\\x0102'],
  [3, '12345678901234.57', '-1.125', '3', 'x'],
  [4, '-0.05', '', '', ''],
  [5, '1.10', '7', '0.1', '2024-01-01 bc'],
];

before(async () => {
  server = await startTestServer();
  postgres = await pgClient();
  pgTypes = await postgresTypeNames(postgres);
  folder = path.join(server.dataDir, 'files', tag);
  fs.mkdirSync(folder, { recursive: true });
  const csv = (v: string) => (/[",\s\\]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  fs.writeFileSync(
    path.join(folder, 'money.csv'),
    ['id,amount,rate,sci,note', ...MONEY.map((row) => row.map((v) => csv(String(v))).join(','))].join('\n') + '\n',
  );
  const json = MONEY.filter(([id]) => id !== 3).map(
    ([id, amount, rate]) => `{"id": ${id}, "amount": ${amount}, "rate": ${rate === '' ? 'null' : rate}}`,
  );
  fs.writeFileSync(path.join(folder, 'ledger.json'), `[${json.join(',\n')}]`);
  // 16 significant digits: more than the JSON reader's double holds exactly.
  fs.writeFileSync(path.join(folder, 'big.json'), '[{"amount": 12345678901234.57}, {"amount": 0.5}]');
  fs.writeFileSync(path.join(folder, 'scaled.json'), '[{"p": 1.50}, {"p": 2.10}]');
  // 17 and 30 digits the reader's double rounds (1 and 1.2345678901234568e+29); text holding a number is no number.
  fs.writeFileSync(
    path.join(folder, 'lossy.json'),
    '[{"id": 1, "amount": 1.0000000000000001, "fine": 0.5, "note": "a: 1.00000000000000000001"},\n {"id": 2, "amount": 123456789012345678901234567890, "fine": 0.30000000000000004, "note": null}]',
  );
  await postgres.query(`CREATE SCHEMA ${tag}`);
  // PostgreSQL holding the same data: amount as numeric (one scale), rate as the numeric(p,s) of its largest scale.
  await postgres.query(`CREATE TABLE ${tag}.money (id bigint, amount numeric, rate numeric(18,3), sci float8, note text)`);
  for (const [id, amount, rate, sci, note] of MONEY)
    await postgres.query(`INSERT INTO ${tag}.money VALUES ($1, $2, $3, $4, $5)`, [id, amount, rate || null, sci || null, note || null]);
  for (const [name, props] of [
    ['ft', `ParentDirectory=${folder}`],
    ['floats', `ParentDirectory=${folder},decimals=double`],
  ]) {
    const response = await server.request('/rest/api/source', { body: { name, template: 'file', connectionProps: props } });
    assert.equal(response.status, 201, await response.text());
  }
});
after(async () => {
  await postgres?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await postgres?.end();
  await server?.close();
  fs.rmSync(folder, { recursive: true, force: true });
});

async function assertSame(vdbSql: string, table: string): Promise<void> {
  const pgSql = vdbSql.replaceAll(table, `${tag}.money`);
  const expected = await postgresAnswer(postgres, pgTypes, pgSql);
  const actual = await vdbAnswer(server, vdbSql);
  assert.equal(actual.status, 200, `${vdbSql}: ${actual.body}`);
  assert.equal(compareAnswers(expected, actual.answer!, false), null, vdbSql);
}

const columnTypes = async (table: string) => {
  const response = await server.request('/rest/api/query', {
    body: {
      sql: `SELECT "Name", "DataType" FROM SYS.Columns WHERE "SchemaName" = 'ft' AND "TableName" = '${table}' ORDER BY "Position"`,
    },
  });
  assert.equal(response.status, 200);
  return Object.fromEntries((await response.json()) as Array<[string, string]>);
};

test('decimal text of a CSV file is numeric with its scale; exponents stay floats, other text stays text', async () => {
  assert.deepEqual(await columnTypes('money'), {
    id: 'BIGINT',
    amount: 'DECIMAL(18,2)',
    rate: 'DECIMAL(18,3)',
    sci: 'DOUBLE',
    note: 'VARCHAR',
  });
});

test('sums and comparisons of money columns answer as PostgreSQL holding the same data', async () => {
  const t = 'ft.money';
  await assertSame(`SELECT sum(amount) AS s, sum(rate) AS r, min(amount) AS lo, max(amount) AS hi FROM ${t}`, t);
  await assertSame(`SELECT id, amount, rate, amount * 3 AS triple, amount + rate AS plus FROM ${t} ORDER BY id`, t);
  await assertSame(`SELECT id FROM ${t} WHERE amount + 0.20 = 0.30 OR rate = 0.25 ORDER BY id`, t);
  await assertSame(`SELECT count(*) AS n FROM ${t} WHERE amount > 0.1`, t);
  await assertSame(`SELECT id, note FROM ${t} ORDER BY id`, t);
});

test('JSON numbers with a point are numeric too, where the reader double holds them exactly', async () => {
  assert.deepEqual(await columnTypes('ledger'), { id: 'BIGINT', amount: 'DECIMAL(18,2)', rate: 'DECIMAL(18,2)' });
  const expected = await postgresAnswer(
    postgres,
    pgTypes,
    `SELECT sum(amount) AS s, sum(rate::numeric(18,2)) AS r FROM ${tag}.money WHERE id <> 3`,
  );
  const actual = await vdbAnswer(server, 'SELECT sum(amount) AS s, sum(rate) AS r FROM ft.ledger');
  assert.equal(compareAnswers(expected, actual.answer!, false), null);
  // 16 significant digits, the very text of its double (a float written by a program): a float.
  assert.deepEqual(await columnTypes('big'), { amount: 'DOUBLE' });
  // The scale as the file writes it (1.50, not the double's 1.5).
  const scaled = await server.request('/rest/api/query', { body: { sql: 'SELECT p, p * 2 AS d FROM ft.scaled' } });
  assert.equal(await scaled.text(), '[[1.50,3.00],[2.10,4.20]]');
});

test('a JSON column holding numbers its double would round is refused when read, never rounded', async () => {
  assert.deepEqual(await columnTypes('lossy'), { id: 'BIGINT', amount: 'DOUBLE', fine: 'DOUBLE', note: 'VARCHAR' });
  for (const sql of ['SELECT amount FROM ft.lossy', 'SELECT sum(amount) FROM ft.lossy', 'SELECT id FROM ft.lossy WHERE amount > 1']) {
    const refused = await vdbAnswer(server, sql);
    assert.equal(refused.status, 400, `${sql}: ${refused.body}`);
    assert.match(refused.body, /column \\"amount\\" of file lossy.json holds numbers of more than 15 significant digits.*not supported/i);
  }
  // The other columns answer; a float written with 17 digits is the double it writes.
  const others = await server.request('/rest/api/query', { body: { sql: 'SELECT id, fine, note FROM ft.lossy ORDER BY id' } });
  assert.equal(await others.text(), '[[1,0.5,"a: 1.00000000000000000001"],[2,0.30000000000000004,null]]');
  // Read as floats where the folder reads floats.
  const floats = await server.request('/rest/api/query', { body: { sql: 'SELECT amount FROM floats.lossy ORDER BY id' } });
  assert.equal(floats.status, 200, await floats.text());
});

test('JSON numbers declared numeric(p,s) are read from their text, rounded as PostgreSQL rounds them; more exact ones are refused', async () => {
  const declared = path.join(server.dataDir, 'files', `${tag}_jsondecl`);
  fs.mkdirSync(declared);
  fs.writeFileSync(
    path.join(declared, 'exact.json'),
    '[{"x": 0.1, "y": 2.675, "z": 1.0000000000000001, "w": 1.00000000000000000001}, {"x": -7, "y": -0.005, "z": 2, "w": null}]',
  );
  fs.writeFileSync(
    path.join(declared, 'exact.schema.json'),
    JSON.stringify({ columns: { x: 'numeric(38,30)', y: 'numeric(10,2)', z: 'float8', w: 'numeric(38,20)' } }),
  );
  const added = await server.request('/rest/api/source', {
    body: { name: 'jsondecl', template: 'file', connectionProps: `ParentDirectory=${declared}` },
  });
  assert.equal(added.status, 201, await added.text());
  const expected = await postgresAnswer(
    postgres,
    pgTypes,
    "SELECT x::numeric(38,30) AS x, y::numeric(10,2) AS y, z::float8 AS z FROM (VALUES ('0.1', '2.675', '1.0000000000000001'), ('-7', '-0.005', '2')) v(x, y, z)",
  );
  const actual = await vdbAnswer(server, 'SELECT x, y, z FROM jsondecl.exact');
  assert.equal(actual.status, 200, actual.body);
  assert.equal(compareAnswers(expected, actual.answer!, true), null);
  const refused = await vdbAnswer(server, 'SELECT w FROM jsondecl.exact');
  assert.equal(refused.status, 400, refused.body);
  assert.match(refused.body, /not supported/);
  fs.rmSync(declared, { recursive: true, force: true });
});

test('decimals=double keeps the reader floats for a whole folder', async () => {
  const response = await server.request('/rest/api/query', { body: { sql: 'SELECT amount FROM floats.money WHERE id = 1' } });
  assert.equal(response.status, 200);
  assert.deepEqual(JSON.parse(response.headers.get('SQL-Column-Types') ?? ''), ['DOUBLE']);
});

test('a value with more decimals than the import found fails, never rounded; a refresh reads it', async () => {
  fs.appendFileSync(path.join(folder, 'money.csv'), '6,2.255,1,1,y\n');
  const failed = await vdbAnswer(server, 'SELECT sum(amount) FROM ft.money');
  assert.equal(failed.status, 400, failed.body);
  assert.match(failed.body, /column \\"amount\\" of file money.csv has more digits than its type numeric\(18,2\)/);
  const refreshed = await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.refreshDataSource('ft')" } });
  assert.equal(refreshed.status, 200, await refreshed.text());
  const sum = await server.request('/rest/api/query', { body: { sql: 'SELECT sum(amount) FROM ft.money' } });
  assert.equal(await sum.text(), '[[12345678901238.175]]');
});

test('a schema file declaring numeric without scale has the scale found from the values, even where the folder reads floats', async () => {
  const declared = path.join(server.dataDir, 'files', `${tag}_declared`);
  fs.mkdirSync(declared);
  fs.writeFileSync(path.join(declared, 'prices.csv'), 'id,price,qty\n1,1.250,3\n2,2.5,4\n');
  fs.writeFileSync(path.join(declared, 'prices.schema.json'), JSON.stringify({ columns: { price: 'numeric', qty: 'numeric' } }));
  fs.writeFileSync(path.join(declared, 'rates.json'), '[{"rate": 0.25}, {"rate": 1}]');
  fs.writeFileSync(path.join(declared, 'rates.schema.json'), JSON.stringify({ columns: { rate: 'numeric' } }));
  const added = await server.request('/rest/api/source', {
    body: { name: 'declared', template: 'file', connectionProps: `ParentDirectory=${declared},decimals=double` },
  });
  assert.equal(added.status, 201, await added.text());
  const prices = await server.request('/rest/api/query', {
    body: { sql: 'SELECT price, qty, price * qty AS total FROM declared.prices ORDER BY id' },
  });
  assert.equal(await prices.text(), '[[1.250,3,3.750],[2.500,4,10.000]]');
  assert.deepEqual(JSON.parse(prices.headers.get('SQL-Column-Types') ?? ''), ['DECIMAL(18,3)', 'DECIMAL(18,0)', 'DECIMAL(18,3)']);
  const rates = await server.request('/rest/api/query', { body: { sql: 'SELECT sum(rate) FROM declared.rates' } });
  assert.equal(await rates.text(), '[[1.25]]');
  fs.writeFileSync(path.join(declared, 'bad.csv'), 'x\n1e3\n');
  fs.writeFileSync(path.join(declared, 'bad.schema.json'), JSON.stringify({ columns: { x: 'numeric' } }));
  const refreshed = await server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.refreshDataSource('declared')" } });
  assert.notEqual(refreshed.status, 200);
  assert.match(await refreshed.text(), /column \\"x\\" is declared numeric, and holds values vdb's engine cannot hold exactly/);
  fs.rmSync(declared, { recursive: true, force: true });
});

test('an unknown decimals setting is refused', async () => {
  const response = await server.request('/rest/api/source', {
    body: { name: 'bad', template: 'file', connectionProps: `ParentDirectory=${folder},decimals=float` },
  });
  assert.notEqual(response.status, 201);
  assert.match(await response.text(), /decimals=float is not numeric or double/);
});
