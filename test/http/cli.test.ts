/** `vdb query` from the command line: rows on stdout, and a sentence saying what to set when it cannot ask. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli.js');
let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** Runs the command line in a process of its own (the server answers from this one meanwhile). */
const vdb = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'query', ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

test('rows on stdout with the password given', async () => {
  const run = await vdb(['SELECT 1 + 1 AS two', '--url', server.url, '--password', ADMIN_PASSWORD]);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), '[[2]]');
});

test('without a password, a wrong one, or no server: what to set, never the HTML page or "fetch failed"', async () => {
  const none = await vdb(['SELECT 1', '--url', server.url]);
  assert.equal(none.status, 1);
  assert.match(none.stderr, /needs the password of "admin".*VDB_PASSWORD/);
  const wrong = await vdb(['SELECT 1'], { VDB_URL: server.url, VDB_PASSWORD: 'not-the-password' });
  assert.equal(wrong.status, 1);
  assert.match(wrong.stderr, /refused the user "admin".*401/);
  assert.doesNotMatch(wrong.stdout + wrong.stderr, /<html|<!DOCTYPE/i);
  const down = await vdb(['SELECT 1', '--url', 'http://127.0.0.1:9', '--password', 'x']);
  assert.equal(down.status, 1);
  assert.match(down.stderr, /no vdb server answered at http:\/\/127\.0\.0\.1:9.*vdb serve/);
  assert.doesNotMatch(down.stderr, /^vdb: fetch failed$/m);
});
