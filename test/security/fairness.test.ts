/**
 * One user must not stall everyone: statements bounded by size (400 Statement too large), the
 * process answering status requests while flooded with the largest statements allowed, a
 * default limit of statements at once per user (429), and the instance's places shared.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Admission } from '../../src/security/statement-limits.js';
import { treeSize } from '../../src/engine/front/statement-size.js';
import { parseStatement } from '../../src/engine/front/parse.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

/** A user with no role at all: what the flood came from. */
async function roleless(name: string): Promise<string> {
  if (!server.services.users.find(name)) await server.services.users.addPasswordUser(name, `${name}-password-1`);
  return server.basic(name, `${name}-password-1`);
}

const query = (auth: string, sql: string, signal?: AbortSignal) =>
  fetch(`${server.url}/rest/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: auth },
    body: JSON.stringify({ sql }),
    signal,
  });

async function errorOf(response: Response, status: number) {
  const text = await response.text();
  assert.equal(response.status, status, text);
  const body = JSON.parse(text) as { title: string; description: string; hint: string };
  assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title']);
  return body;
}

const inList = (values: number) => `SELECT 1 WHERE 1 IN (${Array.from({ length: values }, (_, i) => i).join(',')})`;

/** The longest IN list within the default limit of syntax nodes: the largest statement of its kind allowed. */
function largestAllowed(): string {
  let low = 1;
  let high = 20_000;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (sizeOf(inList(mid)) <= server.services.config.statements.maxSyntaxNodes) low = mid;
    else high = mid - 1;
  }
  return inList(low);
}
const sizeOf = (sql: string) => treeSize(parseStatement(sql, { maxBytes: 1e9, maxSyntaxNodes: 1e9, maxSelectListTerms: 1e9 })).nodes;

test('a statement past each size limit: 400 Statement too large, naming the limit', async () => {
  const auth = await roleless('wide');
  const bytes = await errorOf(await query(auth, `SELECT '${'x'.repeat(1_000_000)}'`), 400);
  assert.equal(bytes.title, 'Statement too large');
  assert.match(bytes.description, /statements\.maxBytes/);
  const nodes = await errorOf(await query(auth, inList(20_000)), 400);
  assert.equal(nodes.title, 'Statement too large');
  assert.match(nodes.description, /statements\.maxSyntaxNodes/);
  // Short enough for the parse on the main thread: the same answer.
  const shortNodes = await errorOf(await query(auth, `SELECT ${Array(2100).fill('1+1').join(',')}`), 400);
  assert.match(shortNodes.description, /statements\.maxSelectListTerms|statements\.maxSyntaxNodes/);
  const terms = await errorOf(await query(auth, `SELECT ${Array(1700).fill('1').join(',')}`), 400);
  assert.equal(terms.title, 'Statement too large');
  assert.match(terms.description, /1700 terms/);
  assert.match(terms.description, /statements\.maxSelectListTerms/);
  const values = await errorOf(await query(auth, `SELECT * FROM (VALUES (${Array(1700).fill('1').join(',')})) v`), 400);
  assert.match(values.description, /statements\.maxSelectListTerms/);
  // Within the limits: answered.
  assert.equal((await query(auth, `SELECT ${Array(1000).fill('1').join(',')}`)).status, 200);
  const largest = largestAllowed();
  assert.equal((await query(server.basic(), largest)).status, 200);
});

test("a result wider than PostgreSQL's 1664 columns (SELECT * over joins): 400 Too many columns, before the engine describes it", async () => {
  const auth = await roleless('widerow');
  const wide = (columns: number) => `WITH w AS (SELECT ${Array.from({ length: columns }, (_, i) => `${i} AS c${i}`).join(', ')})`;
  const refused = await errorOf(await query(auth, `${wide(600)} SELECT * FROM w a, w b, w c`), 400);
  assert.equal(refused.title, 'Too many columns');
  assert.match(refused.description, /1800 columns/);
  assert.match(refused.hint, /SELECT \*/);
  const widest = await query(auth, `${wide(832)} SELECT * FROM w a, w b`);
  assert.equal(widest.status, 200);
  assert.equal(((await widest.json()) as unknown[][])[0]!.length, 1664);
  // Its types would pass what clients take in a response's headers: left out, the rows come.
  assert.equal(widest.headers.get('sql-column-types'), null);
  const narrow = await query(auth, `${wide(100)} SELECT * FROM w a, w b`);
  assert.equal(JSON.parse(narrow.headers.get('sql-column-types')!).length, 200);
});

test('a flood of the largest statements allowed does not stall /rest/api/status', async () => {
  const largest = largestAllowed();
  const pastLimit = inList(40_000);
  const stop = Date.now() + 3000;
  const flooders = Array.from({ length: 8 }, async (_, i) => {
    const auth = await roleless(`flooder${i}`);
    let sent = 0;
    while (Date.now() < stop) {
      const response = await query(auth, i % 2 === 0 ? largest : pastLimit);
      await response.arrayBuffer();
      assert.ok([200, 400, 429, 503].includes(response.status), `status ${response.status}`);
      sent++;
    }
    return sent;
  });
  const latencies: number[] = [];
  while (Date.now() < stop) {
    const started = performance.now();
    const response = await server.request('/rest/api/status');
    await response.arrayBuffer();
    assert.equal(response.status, 200);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const sent = (await Promise.all(flooders)).reduce((a, b) => a + b, 0);
  assert.ok(sent > 8, `the flood sent ${sent} statements`);
  // Speed is measured in bench/status-under-flood.ts; a stall of seconds fails here.
  assert.ok(Math.max(...latencies) < 2000, `status answered within ${Math.max(...latencies).toFixed(0)} ms at worst`);
});

test('more statements at once than the default per user: 429 with Retry-After; another user is served', async () => {
  // A role that reads the demo files and sets no limits: the default applies.
  const auth = await roleless('greedy');
  const { users } = server.services;
  await users.addRole('readers').catch(() => undefined);
  await users.addUserRole('readers', 'greedy');
  await users.setPermissions(
    { role: 'readers', resource: 'files', permissions: 'R', condition: null, mask: null, maskOrder: null },
    (a, b) => a === b,
  );
  const { maxPerUser } = server.services.config.statements;
  const stop = new AbortController();
  // Huge results whose bodies are not read: the statements stay running.
  const running = await Promise.all(
    Array.from({ length: maxPerUser }, () => query(auth, 'SELECT a.id, b.id FROM files.events a, files.events b', stop.signal)),
  );
  for (const response of running) assert.equal(response.status, 200);
  const refused = await query(auth, 'SELECT 1');
  assert.equal(refused.headers.get('retry-after'), '1');
  const body = await errorOf(refused, 429);
  assert.equal(body.title, 'Too many statements');
  assert.match(body.description, /statements\.maxPerUser/);
  // Another user (with no role either) is served while greedy holds all of theirs.
  const other = await query(await roleless('patient'), 'SELECT 1');
  assert.equal(other.status, 200, await other.text());
  stop.abort();
  await Promise.all(running.map((r) => r.body?.cancel().catch(() => undefined)));
  let status = 0;
  for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
    const response = await query(auth, 'SELECT 1');
    status = response.status;
    await response.text();
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(status, 200, 'allowed again once the statements ended');
});

test("the instance's places: one user holds at most half; others queue, then 503 with Retry-After", async () => {
  const admission = new Admission({ maxRunning: 4, maxQueued: 2, maxQueueMs: 200 });
  const far = Date.now() + 60_000;
  const a1 = await admission.acquire('a', far);
  const a2 = await admission.acquire('a', far);
  // A third of a's waits although places are free: they are kept for others.
  let a3Admitted = false;
  const a3 = admission.acquire('a', far).then((release) => {
    a3Admitted = true;
    return release;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(a3Admitted, false);
  const b1 = await admission.acquire('b', far);
  const b2 = await admission.acquire('b', far);
  assert.deepEqual(admission.counts, { running: 4, queued: 1 });
  const c1 = admission.acquire('c', far);
  // The queue is full: refused at once.
  await assert.rejects(admission.acquire('d', far), (err: { status: number; headers: Record<string, string> }) => {
    assert.equal(err.status, 503);
    assert.equal(err.headers['Retry-After'], '1');
    return true;
  });
  // A place of b's frees: c comes first (a is at its share), then a's when one of a's ends.
  b1();
  (await c1)();
  assert.equal(a3Admitted, false);
  a1();
  (await a3)();
  // Waiting too long: 503.
  const d1 = await admission.acquire('d', far);
  const d2 = await admission.acquire('e', far);
  await assert.rejects(admission.acquire('f', far), (err: { status: number; title: string }) => err.status === 503);
  for (const release of [a2, b2, d1, d2]) release();
  assert.deepEqual(admission.counts, { running: 0, queued: 0 });
});
