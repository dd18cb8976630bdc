/**
 * The data directory's catalog survives a crash (issue 13): a process killed with SIGKILL during
 * a burst of changes leaves a catalog that loads and holds every change it reported committed;
 * temporary files of an interrupted write are removed at start; an unreadable catalog stops the
 * start with what to do, and following that advice starts from the last good copy.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, test } from 'node:test';
import pino from 'pino';
import { FileCatalogStore } from '../../src/catalog/file-store.js';
import { loadConfig } from '../../src/config.js';
import { createServices } from '../../src/services.js';

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'catalog-writer.js');
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-crash-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Starts the writer, kills it with SIGKILL after `commits` reported changes, returns what it reported. */
function burstThenKill(commits: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const reported: string[] = [];
    let buffer = '';
    let stderr = '';
    let killing: NodeJS.Timeout | undefined;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      reported.push(...lines);
      // At a moment of no relation to the writer's steps: sometimes mid-write, sometimes between writes.
      if (reported.length >= commits && !killing) killing = setTimeout(() => child.kill('SIGKILL'), Math.random() * 40);
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(reported);
      else reject(new Error(`writer ended by itself (${code}): ${stderr}`));
    });
  });
}

test('killed with SIGKILL during bursts of changes: every start loads a catalog with every reported change', async () => {
  const committed: string[] = [];
  let interrupted = 0;
  for (const commits of [5, 40, 17, 60, 3, 25]) {
    committed.push(...(await burstThenKill(commits)));
    const store = new FileCatalogStore(dir);
    interrupted += store.removedLeftovers.length;
    const roles = new Set(store.current.roles ?? []);
    for (const role of committed) assert.ok(roles.has(role), `${role} was reported committed but is missing`);
    assert.deepEqual(
      fs.readdirSync(dir).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file is left after a start',
    );
  }
  // Whether a kill landed mid-write is up to timing; said so the run shows what it exercised.
  process.stdout.write(`# temporary files of interrupted writes removed: ${interrupted}\n`);
});

test('a leftover temporary file is removed at start and the catalog is the last completed write', async () => {
  const store = new FileCatalogStore(dir);
  await store.update((catalog) => {
    catalog.roles = ['kept'];
  });
  fs.writeFileSync(path.join(dir, 'catalog.json.12345.abcdef.tmp'), '{"formatVersion": 1, "sour');
  const again = new FileCatalogStore(dir);
  assert.deepEqual(again.removedLeftovers, ['catalog.json.12345.abcdef.tmp']);
  assert.deepEqual(again.current.roles, ['kept']);
  assert.ok(!fs.existsSync(path.join(dir, 'catalog.json.12345.abcdef.tmp')));
});

test('a corrupt catalog stops the start with what to do; doing it starts from the last good copy', async () => {
  const store = new FileCatalogStore(dir);
  await store.update((catalog) => {
    catalog.roles = ['first'];
  });
  await store.update((catalog) => {
    catalog.roles = ['first', 'second'];
  });
  const file = path.join(dir, 'catalog.json');
  fs.writeFileSync(file, '{"formatVersion": 1, "sources": [');
  const config = loadConfig({}, { dataDir: dir, demo: false, adminPassword: 'admin-secret-1', logLevel: 'silent' });
  const refusal = await createServices(config, pino({ level: 'silent' })).then(
    () => assert.fail('started on a corrupt catalog'),
    (err: unknown) => (err as Error).message,
  );
  assert.match(refusal, /catalog\.json cannot be read .*vdb did not start, so nothing was overwritten/);
  assert.equal(fs.readFileSync(file, 'utf8'), '{"formatVersion": 1, "sources": [', 'the damaged file is left for inspection');
  // The advice, as given.
  const advice = /To start from it: mv (\S+) (\S+) && cp (\S+) (\S+)$/.exec(refusal);
  assert.ok(advice, refusal);
  fs.renameSync(advice[1]!, advice[2]!);
  fs.copyFileSync(advice[3]!, advice[4]!);
  assert.deepEqual(new FileCatalogStore(dir).current.roles, ['first'], 'the copy before the last change');
});

test('a missing catalog next to a last good copy is not taken for a first start', () => {
  fs.writeFileSync(path.join(dir, 'catalog.previous.json'), JSON.stringify({ formatVersion: 1, sources: [], users: [], nextOid: 1000 }));
  assert.throws(() => new FileCatalogStore(dir), /catalog\.json is missing but .*catalog\.previous\.json exists.*cp /);
});
