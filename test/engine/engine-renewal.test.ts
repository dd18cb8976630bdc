/**
 * A fatal error of the engine's own (DuckDB invalidates its whole instance, and refuses every
 * statement after it) is followed by a new engine with the same sources: the request that met
 * the broken engine fails with a 500, the next ones answer.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { okJson } from '../http/util.js';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.close();
});

/** Breaks the current engine as a fatal error of its own does (a statement vdb itself refuses, run on the engine directly). */
async function breakEngine(): Promise<void> {
  const broken = await server.services.runtime
    .withConnection((connection) => connection.run("SELECT date_part(f, now()) FROM (VALUES ('epoch')) AS v(f)"))
    .then(
      () => false,
      () => true,
    );
  assert.equal(broken, true, 'the statement fails inside the engine');
  assert.equal(await server.services.runtime.current.answers(), false, 'the engine refuses every statement now');
}

const query = (sql: string) => server.request('/rest/api/query', { body: { sql } });

test('after a fatal error of the engine, a new one with the same sources answers', async () => {
  const before = await okJson<unknown[][]>(await query('SELECT count(*) FROM files.events'));
  const engine = server.services.runtime.current;
  await breakEngine();
  // The request that meets the broken engine: a 500 with the error body, nothing of the engine's message.
  const failed = await query('SELECT count(*) FROM files.events');
  assert.equal(failed.status, 500);
  assert.deepEqual(Object.keys((await failed.json()) as object).sort(), ['description', 'hint', 'title']);
  // The renewal runs beside the answer: wait for the new generation.
  for (let i = 0; i < 100 && server.services.runtime.current === engine; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.notEqual(server.services.runtime.current, engine, 'a new engine took over');
  assert.deepEqual(await okJson<unknown[][]>(await query('SELECT count(*) FROM files.events')), before, 'a file source, published again');
  assert.deepEqual(await okJson<unknown[][]>(await query('SELECT count(*) FROM shop.customers WHERE id = 1')), [[1]], 'a database source');
  assert.equal((await okJson<unknown[][]>(await query('SELECT count(*) FROM SYS.Tables')))[0]!.length, 1, 'the system tables');
});

test('an engine that still answers is kept', async () => {
  const engine = server.services.runtime.current;
  assert.equal(await server.services.runtime.renewIfBroken(), false);
  assert.equal(server.services.runtime.current, engine);
});
