/**
 * Shared by the red-team tests (redteam*.test.ts): requests as a named user, and checks that an
 * answer, whatever its status, leaks none of the values the user must not see.
 */
import assert from 'node:assert/strict';
import { pgClient } from '../connectors/db.js';
import { okJson, type Requester } from '../http/util.js';

export const PASSWORD = (user: string) => `${user}-pass-1`;

/** Values bob must never receive (he sees German customers, masked e-mails, no segment, no price). */
export const BOB_SECRETS = [
  'Chiara Ferrari', // customer 2, IT: outside the row condition
  'chiara.ferrari2@example.com',
  'lukas.muller1@example.com', // customer 1 (DE): the unmasked e-mail
  'enterprise', // segment values (hidden column)
  '"smb"',
  'consumer',
  '112.49', // price of product 1 (hidden column)
];

/** Each test file fills this with a requester per user name (its own process, its own map). */
export const as: Record<string, Requester> = {};

export interface Answer {
  status: number;
  text: string;
}

export async function run(user: string, sql: string): Promise<Answer> {
  const response = await as[user]!('/rest/api/query', { body: { sql } });
  return { status: response.status, text: await response.text() };
}

export async function rows<T = unknown[]>(user: string, sql: string): Promise<T[]> {
  return okJson<T[]>(await as[user]!('/rest/api/query', { body: { sql } }), `${user}: ${sql}`);
}

export const admin = <T = unknown[]>(sql: string) => rows<T>('admin', sql);

/** The answer (whatever its status) contains none of `secrets`. */
export function assertNoLeak(answer: Answer, secrets: readonly string[], what: string): void {
  for (const secret of secrets) {
    assert.ok(!answer.text.includes(secret), `${what}: leaked ${JSON.stringify(secret)} (${answer.status}): ${answer.text.slice(0, 400)}`);
  }
}

/** The statement is refused (4xx) and its answer leaks none of `secrets`. */
export async function refusedWithoutLeak(user: string, sql: string, secrets: readonly string[]): Promise<Answer> {
  const answer = await run(user, sql);
  assertNoLeak(answer, secrets, `${user}: ${sql}`);
  assert.ok(
    answer.status >= 400 && answer.status < 500,
    `${user}: ${sql}: expected a refusal, got ${answer.status} ${answer.text.slice(0, 400)}`,
  );
  return answer;
}

export async function pgReachable(): Promise<boolean> {
  try {
    const client = await pgClient();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * In PostgreSQL schema `tag`: employees (id, name, region, ssn, salary) with Ann (EU), Ben (US)
 * and Cy (EU), and allowed (ids 1 and 3).
 */
export async function createEmployees(pg: { query(sql: string, values?: unknown[]): Promise<unknown> }, tag: string): Promise<void> {
  await pg.query(`CREATE SCHEMA ${tag}`);
  await pg.query(`CREATE TABLE ${tag}.employees (id int PRIMARY KEY, name text, region text, ssn text, salary numeric(10,2))`);
  const employees = [
    [1, 'Ann Eu', 'EU', '900-00-1001', '51001.11'],
    [2, 'Ben Us', 'US', '900-00-1002', '62002.22'],
    [3, 'Cy Eu', 'EU', '900-00-1003', '73003.33'],
  ];
  for (const row of employees) await pg.query(`INSERT INTO ${tag}.employees VALUES ($1, $2, $3, $4, $5)`, row);
  await pg.query(`CREATE TABLE ${tag}.allowed (id int PRIMARY KEY)`);
  await pg.query(`INSERT INTO ${tag}.allowed VALUES (1), (3)`);
}

/** Adds schema `tag` of the local PostgreSQL as the source `pg` (as the admin). */
export async function attachEmployees(tag: string): Promise<void> {
  const added = await as.admin!('/rest/api/source', {
    body: {
      name: 'pg',
      template: 'postgresql',
      connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
      modelProps: `importer.schemaPattern=${tag}`,
    },
  });
  assert.equal(added.status, 201, await added.text());
}

/**
 * rita (role pg_eu): RUD on pg.employees where region = 'EU', ssn masked, salary hidden.
 * sid (role pg_sub): its grants are each file's (a condition reading pg.allowed).
 */
export const EMPLOYEE_GRANTS = [
  "CALL SYSADMIN.addRole('pg_eu')",
  "CALL SYSADMIN.addRole('pg_sub')",
  ...['rita', 'sid'].map((u) => `CALL SYSADMIN.addUser('${u}', '${PASSWORD(u)}')`),
  "CALL SYSADMIN.addUserRole('pg_eu', 'rita')",
  "CALL SYSADMIN.addUserRole('pg_sub', 'sid')",
  "CALL SYSADMIN.setPermissions('pg_eu', 'pg.employees', 'RUD', 'region = ''EU''')",
  "CALL SYSADMIN.setPermissions('pg_eu', 'pg.employees.ssn', 'R', NULL, '''***-**-'' || right(ssn, 4)')",
  "CALL SYSADMIN.setPermissions('pg_eu', 'pg.employees.salary', '')",
];

/** Drops a PostgreSQL schema made by a test, with everything in it. */
export async function dropSchema(tag: string): Promise<void> {
  const pg = await pgClient();
  try {
    await pg.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  } finally {
    await pg.end();
  }
}
