/**
 * Statement limits per role (configuration roleLimits): rows, running time, and statements at
 * once per user, the last counted across instances through Redis.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { UserDef } from '../../src/catalog/types.js';
import { connectRedis, whenReady } from '../../src/runtime/redis.js';
import { limitsOf } from '../../src/security/statement-limits.js';
import { REDIS_URL, startTestServer, type TestServer } from '../helpers/server.js';

const ROLE_LIMITS = {
  capped: { maxRowsPerStatement: 100 },
  // Alone: a loaded machine may take longer than this for a row-limit test's statements.
  hurried: { statementTimeoutMs: 300 },
  single: { maxConcurrentStatements: 1 },
  wide: { maxRowsPerStatement: 1000 },
};

/** A user with `roles`, each granted reading the demo files. */
async function addUser(server: TestServer, name: string, roles: string[]): Promise<string> {
  const { users } = server.services;
  if (!users.find(name)) await users.addPasswordUser(name, `${name}-password-1`);
  for (const role of roles) {
    await users.addRole(role).catch(() => undefined);
    await users.addUserRole(role, name);
    await users.setPermissions(
      { role, resource: 'files', permissions: 'R', condition: null, mask: null, maskOrder: null },
      (a, b) => a === b,
    );
  }
  return server.basic(name, `${name}-password-1`);
}

const query = (server: TestServer, auth: string, sql: string, params = '', signal?: AbortSignal) =>
  fetch(`${server.url}/rest/api/query${params}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: auth },
    body: JSON.stringify({ sql }),
    signal,
  });

async function errorOf(response: Response, status: number): Promise<{ title: string; description: string; hint: string }> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  const body = JSON.parse(text) as { title: string; description: string; hint: string };
  assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title']);
  return body;
}

const HUGE = 'SELECT a.id, b.id FROM files.events a, files.events b';

const prefix = `vdb-test-${randomUUID()}:`;
let one: TestServer;
let two: TestServer;
before(async () => {
  const config = { roleLimits: ROLE_LIMITS, cursors: { redisUrl: REDIS_URL, keyPrefix: prefix } };
  [one, two] = await Promise.all([startTestServer(config), startTestServer(config)]);
});
after(async () => {
  await Promise.all([one.close(), two.close()]);
  const redis = connectRedis(REDIS_URL);
  await whenReady(redis, 5000);
  const left = await redis.keys(`${prefix}*`);
  if (left.length > 0) await redis.del(...left);
  redis.disconnect();
});

test("a user's limit is the largest of their roles', none when one of their roles sets none; admin has none", () => {
  const user = (roles: string[]) => ({ roles }) as unknown as UserDef;
  assert.equal(limitsOf(user(['capped']), ROLE_LIMITS).maxRowsPerStatement, 100);
  assert.equal(limitsOf(user(['capped', 'wide']), ROLE_LIMITS).maxRowsPerStatement, 1000);
  assert.equal(limitsOf(user(['capped', 'other']), ROLE_LIMITS).maxRowsPerStatement, null);
  assert.equal(limitsOf(user(['capped', 'other']), { ...ROLE_LIMITS, '*': { maxRowsPerStatement: 5 } }).maxRowsPerStatement, 100);
  assert.equal(limitsOf(user(['hurried', 'admin']), ROLE_LIMITS).statementTimeoutMs, null);
  assert.equal(limitsOf(user(['hurried']), ROLE_LIMITS).statementTimeoutMs, 300);
  assert.throws(() => loadConfig({}, { dataDir: '/tmp/x', roleLimits: { r: { maxRows: 5 } as never } }), /maxRows is not a limit/);
  assert.throws(() => loadConfig({}, { dataDir: '/tmp/x', roleLimits: { r: { statementTimeoutMs: 0 } } }), /integer from 1/);
});

test('more rows than maxRowsPerStatement: 400 before any row is sent, streamed or paginated', async () => {
  const auth = await addUser(one, 'rowan', ['capped']);
  const fine = await query(one, auth, 'SELECT id FROM files.events ORDER BY id LIMIT 100');
  assert.equal(fine.status, 200);
  assert.equal((JSON.parse(await fine.text()) as unknown[]).length, 100);
  for (const params of ['', '?pagination=true&limit=10']) {
    const body = await errorOf(await query(one, auth, 'SELECT id FROM files.events ORDER BY id LIMIT 101', params), 400);
    assert.equal(body.title, 'Too many rows');
    assert.match(body.description, /more than 100 rows/);
  }
  // The limit parameter keeps a statement inside the limit.
  const part = await query(one, auth, 'SELECT id FROM files.events ORDER BY id', '?limit=50&offset=10');
  assert.equal(part.status, 200);
  assert.deepEqual((JSON.parse(await part.text()) as number[][]).map((row) => row[0]).slice(0, 2), [11, 12]);
  // The administrator has no limit.
  const admin = await query(one, one.basic(), 'SELECT id FROM files.events LIMIT 1000');
  assert.equal((JSON.parse(await admin.text()) as unknown[]).length, 1000);
});

test('longer than statementTimeoutMs: cancelled with 504, whatever timeout the request asks for', async () => {
  const auth = await addUser(one, 'tim', ['hurried']);
  const body = await errorOf(await query(one, auth, 'SELECT count(*) FROM generate_series(1, 100000000000) a', '?timeout=600000'), 504);
  assert.match(body.description, /300 ms/);
  assert.match(body.description, /statementTimeoutMs/);
});

test('more statements at once than maxConcurrentStatements: 429, counted across instances', async () => {
  const auth = await addUser(one, 'sol', ['single']);
  // The other instance has its own catalog here: the same user, made there too.
  const authTwo = await addUser(two, 'sol', ['single']);
  const stop = new AbortController();
  // A huge result whose body is not read: the statement stays running.
  const running = await query(one, auth, HUGE, '', stop.signal);
  assert.equal(running.status, 200);
  const here = await errorOf(await query(one, auth, 'SELECT 1'), 429);
  assert.equal(here.title, 'Too many statements');
  await errorOf(await query(two, authTwo, 'SELECT 1'), 429);
  // Other users are not counted against sol.
  assert.equal((await query(two, two.basic(), 'SELECT 1')).status, 200);
  stop.abort();
  await running.body?.cancel().catch(() => undefined);
  // The place is freed when the response ends (the abort reaches the server a moment later).
  let status = 0;
  for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
    const response = await query(two, authTwo, 'SELECT 1');
    status = response.status;
    await response.text();
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(status, 200, 'allowed again once the first statement ended');
});
