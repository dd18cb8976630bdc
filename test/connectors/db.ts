/**
 * Helpers for the tests that talk to the real PostgreSQL and MariaDB on loopback: unique object
 * names, admin connections to set up and drop test objects, polling, and engine access.
 * Every test file creates its own uniquely named schemas/databases and drops them in `after`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { UserDef } from '../../src/catalog/types.js';
import type { SourceQuery } from '../../src/engine/exec/load.js';
import { Engine } from '../../src/engine/engine.js';
import type { Services } from '../../src/services.js';

export const PG = { host: '127.0.0.1', port: 5432, database: 'test', user: 'postgres' } as const;
export const MY = { host: '127.0.0.1', port: 3306, database: 'test', user: 'root', password: '' } as const;

/** A name no other test run uses: vdbt_ and 10 hex digits. */
export const uniqueTag = () => `vdbt_${randomBytes(5).toString('hex')}`;

/** A PostgreSQL client on `database` (default `test`), connected. */
export async function pgClient(database: string = PG.database): Promise<pg.Client> {
  const client = new pg.Client({ ...PG, database, application_name: 'vdb-test' });
  await client.connect();
  return client;
}

/** A MariaDB connection as root, multiple statements allowed. */
export async function mysqlConnection(database?: string): Promise<mysql.Connection> {
  return mysql.createConnection({ ...MY, database, multipleStatements: true, charset: 'utf8mb4', dateStrings: true });
}

export function adminOf(services: Services): UserDef {
  const admin = services.users.find('admin');
  assert.ok(admin, 'the admin user exists');
  return admin;
}

/** Opens `sql` in the engine as admin and returns what each source was asked. */
export async function sourceQueriesOf(services: Services, sql: string): Promise<SourceQuery[]> {
  const execution = await services.engine.open(sql, adminOf(services), new AbortController().signal);
  try {
    return execution.sourceQueries;
  } finally {
    execution.close();
  }
}

/** The scans the engine sends when it runs a statement itself (whole-statement pushdown off). */
export async function scanQueriesOf(services: Services, sql: string): Promise<SourceQuery[]> {
  const engine = new Engine(services.registry, services.runtime, services.config.vdbName, {
    pushdown: true,
    wholeStatements: false,
    dependentJoin: services.config.dependentJoin,
  });
  const execution = await engine.open(sql, adminOf(services), new AbortController().signal);
  try {
    return execution.sourceQueries;
  } finally {
    execution.close();
  }
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last result. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export interface ErrorBody {
  title: string;
  description: string;
  hint: string | null;
}

/** Asserts a JSON error response with `status` (or one of several) and returns its body. */
export async function expectError(response: Response, status: number | number[], what = ''): Promise<ErrorBody> {
  const text = await response.text();
  const allowed = Array.isArray(status) ? status : [status];
  assert.ok(allowed.includes(response.status), `${what}: expected ${allowed.join(' or ')}, got ${response.status} ${text.slice(0, 500)}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/i, `${what}: content type of ${text.slice(0, 200)}`);
  const body = JSON.parse(text) as ErrorBody;
  assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title'], `${what}: error body ${text}`);
  assert.equal(typeof body.description, 'string');
  return body;
}

/** Asserts a 200 response and returns its raw text. */
export async function expectOkText(response: Response, what = ''): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, 200, `${what}: expected 200, got ${response.status} ${text.slice(0, 500)}`);
  return text;
}

/** Asserts a 200 JSON response and returns the parsed body. */
export async function expectOkJson<T = unknown>(response: Response, what = ''): Promise<T> {
  const text = await expectOkText(response, what);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/i, `${what}: content type`);
  return JSON.parse(text) as T;
}

/** Asserts that `error` is an ApiError-like value with `status` whose description names `name`. */
export function assertApiError(error: unknown, status: number | number[], name: string): true {
  const e = error as { status?: number; description?: string; message?: string };
  const allowed = Array.isArray(status) ? status : [status];
  assert.ok(allowed.includes(e.status ?? -1), `expected status ${allowed.join(' or ')}, got ${e.status}: ${e.message}`);
  assert.ok((e.description ?? '').includes(name), `the error names "${name}": ${e.description}`);
  return true;
}
