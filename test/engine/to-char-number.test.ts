/**
 * to_char of numbers against PostgreSQL itself: a grid of templates and values, of each kind
 * PostgreSQL's to_char takes (integer, bigint, numeric, real, double precision), as constants
 * and over a table the engine reads (a CSV file with PostgreSQL's types, the same rows in
 * PostgreSQL as the oracle). Each answer is PostgreSQL's text, or a 400 where PostgreSQL fails
 * too (a template error, V past an integer's range); vdb refuses nothing else here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Templates: every pattern, alone and together, in fill mode and not. */
const TEMPLATES = [
  '9',
  '999',
  '99999999999999999999',
  '999.99',
  '9,999.99',
  '9G999D99',
  '0000',
  '0999.90',
  '90.9',
  '.999',
  '9.',
  'FM999.990',
  'FM9999',
  'FM9.9',
  'FM0.00',
  'FM.999',
  'S999.99',
  '999.99S',
  'S0009',
  'MI999',
  '999MI',
  'FM999.99MI',
  'PL999',
  '999PL',
  'SG999',
  'FMSG9999.99',
  '999PR',
  'FM999.99PR',
  'L999.99',
  '99th',
  'FM99TH',
  '999V99',
  'FM9V99',
  '9.99EEEE',
  '9.9999eeee',
  '99.99999999999999999999EEEE',
  'RN',
  'FMRN',
  'rn',
  '"Total: "999.99 "units"',
  'B999 C SP',
  '9.99999999999999999999',
  '',
];

/** The values: zero, signs, halves (rounding), the kinds' limits, long fractions, NaN and the infinities. */
const VALUES = [
  '0',
  '1',
  '-1',
  '12',
  '-12',
  '0.5',
  '-0.5',
  '2.5',
  '-2.5',
  '0.125',
  '1.005',
  '123.456',
  '-123.456',
  '999.995',
  '-0.001',
  '3999',
  '12345.678',
  '0.00000000000000000001',
  '1.23456789012345678901',
  '2147483647',
  '-2147483648',
  '1000000000000000',
  '-9223372036854775808',
  '9223372036854775807',
  '1e-300',
  '1.5e300',
  'NaN',
  'Infinity',
  '-Infinity',
];

type Kind = 'integer' | 'bigint' | 'numeric' | 'real' | 'double precision';
const KINDS: Kind[] = ['integer', 'bigint', 'numeric', 'real', 'double precision'];

let server: TestServer;
let postgres: pg.Client;
const tag = uniqueTag();
let folder = '';

/** The values each kind holds (PostgreSQL's own input decides). */
const held = new Map<Kind, string[]>();

before(async () => {
  server = await startTestServer();
  postgres = await pgClient();
  for (const kind of KINDS) {
    const ok: string[] = [];
    for (const value of VALUES) {
      const valid = await postgres.query(`SELECT $1::${kind}`, [value]).then(
        () => true,
        () => false,
      );
      // The engine's numeric (DECIMAL) holds neither NaN nor the infinities, nor 38 digits and more.
      if (valid && !(kind === 'numeric' && /NaN|Infinity|e/.test(value))) ok.push(value);
    }
    held.set(kind, ok);
  }
  // The table: one row per value, a column per kind (NULL where the kind cannot hold the value).
  await postgres.query(`CREATE SCHEMA ${tag}`);
  await postgres.query(`CREATE TABLE ${tag}.nums (id int, i integer, b bigint, n numeric(38,20), r real, f double precision)`);
  folder = path.join(server.dataDir, 'files', `${tag}_nums`);
  fs.mkdirSync(folder, { recursive: true });
  const lines = ['id,i,b,n,r,f'];
  const columns: Array<[string, Kind]> = [
    ['i', 'integer'],
    ['b', 'bigint'],
    ['n', 'numeric'],
    ['r', 'real'],
    ['f', 'double precision'],
  ];
  for (const [id, value] of VALUES.entries()) {
    const row = columns.map(([, kind]) => (held.get(kind)!.includes(value) && fitsNumeric38(kind, value) ? value : null));
    await postgres.query(`INSERT INTO ${tag}.nums VALUES ($1, $2, $3, $4, $5, $6)`, [id, ...row]);
    lines.push([id, ...row.map((v) => v ?? '')].join(','));
  }
  fs.writeFileSync(path.join(folder, 'nums.csv'), lines.join('\n') + '\n');
  fs.writeFileSync(
    path.join(folder, 'nums.schema.json'),
    JSON.stringify({ columns: { id: 'integer', i: 'integer', b: 'bigint', n: 'numeric(38,20)', r: 'real', f: 'double precision' } }),
  );
  const response = await server.request('/rest/api/source', {
    body: { name: 'nums', template: 'file', connectionProps: `ParentDirectory=${folder}` },
  });
  assert.equal(response.status, 201, await response.text());
});

after(async () => {
  await postgres?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await postgres?.end();
  await server?.close();
});

/** numeric(38,20) holds 18 digits before the point. */
function fitsNumeric38(kind: Kind, value: string): boolean {
  return kind !== 'numeric' || Math.abs(Number(value)) < 1e18;
}

type Answer = { rows: string } | { error: string };

async function oracle(sql: string): Promise<Answer> {
  try {
    return { rows: JSON.stringify((await postgres.query({ text: sql, rowMode: 'array' })).rows) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

async function vdb(sql: string): Promise<Answer & { status: number }> {
  const response = await server.request('/rest/api/query', { body: { sql } });
  const body = await response.text();
  if (response.status !== 200) return { status: response.status, error: body };
  return { status: 200, rows: JSON.stringify(JSON.parse(body)) };
}

const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** The value as a constant of its kind: numbers as PostgreSQL reads them, the rest cast. */
function constant(kind: Kind, value: string): string {
  if (kind === 'numeric') return /^-?\d+$/.test(value) ? `(${value})::numeric(38,0)` : value;
  if (kind === 'integer' || kind === 'bigint') return `(${value})::${kind}`;
  return `${quoted(value)}::${kind}`;
}

interface Tally {
  same: number;
  failedAlike: number;
  differences: string[];
}

/** Compares one statement; where PostgreSQL fails, vdb must answer 400. */
async function judge(tally: Tally, sql: string, pgSql = sql): Promise<boolean> {
  const [expected, actual] = [await oracle(pgSql), await vdb(sql)];
  if ('error' in expected) {
    if (actual.status === 400) tally.failedAlike++;
    else
      tally.differences.push(
        `${sql}\n  PostgreSQL fails (${expected.error}), vdb: ${actual.status} ${'rows' in actual ? actual.rows : ''}`,
      );
    return false;
  }
  if ('rows' in actual && actual.rows === expected.rows) tally.same++;
  else tally.differences.push(`${sql}\n  PostgreSQL: ${expected.rows}\n  vdb: ${'rows' in actual ? actual.rows : actual.error}`);
  return true;
}

test('to_char of constants of each kind answers as PostgreSQL over the grid of templates and values', async () => {
  const tally: Tally = { same: 0, failedAlike: 0, differences: [] };
  for (const kind of KINDS) {
    const values = held.get(kind)!.filter((v) => fitsNumeric38(kind, v));
    for (const template of TEMPLATES) {
      const items = values.map((v, i) => `to_char(${constant(kind, v)}, ${quoted(template)}) AS c${i}`);
      // One statement per template; where it fails (V past the range), each value alone.
      if (!(await judge(tally, `SELECT ${items.join(', ')}`))) {
        tally.failedAlike = Math.max(0, tally.failedAlike - 1);
        for (const item of items) await judge(tally, `SELECT ${item}`);
      }
    }
  }
  console.log(`constants: ${tally.same} same, ${tally.failedAlike} failing as in PostgreSQL, ${tally.differences.length} different`);
  assert.deepEqual(tally.differences, []);
});

test('to_char of numeric literals (int4, int8, numeric as written) answers as PostgreSQL', async () => {
  const tally: Tally = { same: 0, failedAlike: 0, differences: [] };
  const literals = ['0', '-12', '2147483648', '-9223372036854775808', '12.50', '-0.5', '2.5', '1e15', '1.5E-7', '99999999999999999999.5'];
  for (const template of TEMPLATES) for (const literal of literals) await judge(tally, `SELECT to_char(${literal}, ${quoted(template)})`);
  console.log(`literals: ${tally.same} same, ${tally.failedAlike} failing as in PostgreSQL`);
  assert.deepEqual(tally.differences, []);
});

test('to_char of table columns read by the engine answers as PostgreSQL, row by row', async () => {
  const tally: Tally = { same: 0, failedAlike: 0, differences: [] };
  for (const template of TEMPLATES) {
    const columns = ['i', 'b', 'n', 'r', 'f'].map((c) => `to_char(${c}, ${quoted(template)})`);
    const statement = (table: string, items: string[]) => `SELECT id, ${items.join(', ')} FROM ${table} ORDER BY id`;
    if (!(await judge(tally, statement('nums.nums', columns), statement(`${tag}.nums`, columns)))) {
      tally.failedAlike = Math.max(0, tally.failedAlike - 1);
      for (const column of columns) await judge(tally, statement('nums.nums', [column]), statement(`${tag}.nums`, [column]));
    }
  }
  console.log(`table: ${tally.same} same, ${tally.failedAlike} failing as in PostgreSQL`);
  assert.deepEqual(tally.differences, []);
});

test('a template computed per row, NULLs, and what is refused', async () => {
  const tally: Tally = { same: 0, failedAlike: 0, differences: [] };
  const rows = `(VALUES (1, '9.99'), (2, 'FM999th'), (3, NULL), (4, '9.9EEEE')) AS v(id, t)`;
  await judge(
    tally,
    `SELECT id, to_char(f, t) FROM nums.nums JOIN ${rows} USING (id) ORDER BY id`,
    `SELECT id, to_char(f, t) FROM ${tag}.nums JOIN ${rows} USING (id) ORDER BY id`,
  );
  await judge(
    tally,
    `SELECT id, to_char(n, t) FROM nums.nums JOIN ${rows} USING (id) ORDER BY id`,
    `SELECT id, to_char(n, t) FROM ${tag}.nums JOIN ${rows} USING (id) ORDER BY id`,
  );
  await judge(tally, `SELECT to_char(NULL::integer, '999'), to_char(12, NULL), to_char(NULL::float8, 'RN')`);
  // PostgreSQL's own errors: templates, V past the range, a template of another type.
  for (const sql of [
    "SELECT to_char(12, '9.9.9')",
    "SELECT to_char(12, 'EEEE9')",
    "SELECT to_char(12, 'S9MI')",
    "SELECT to_char(12, '9V9.9')",
    "SELECT to_char(2147483647, '9V99')",
    'SELECT to_char(i, 9) FROM nums.nums',
    "SELECT to_char(NULL, '9')",
    "SELECT to_char('12', '9')",
  ]) {
    const answer = await vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${'rows' in answer ? answer.rows : answer.error}`);
  }
  // The engine's numeric holds no NaN: refused (PostgreSQL answers " NaN").
  const nan = await vdb("SELECT to_char('NaN'::numeric(10,2), '999')");
  assert.equal(nan.status, 400);
  // vdb's refusal: a number written with an exponent computed with (numeric to PostgreSQL, a double to the engine).
  const refused = await vdb("SELECT to_char(1e15 + i, '9.99') FROM nums.nums");
  assert.equal(refused.status, 400);
  assert.match('error' in refused ? refused.error : '', /not supported/);
  assert.deepEqual(tally.differences, []);
});
