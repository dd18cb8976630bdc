import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadOrCreateServerSecrets } from '../../src/catalog/server-secrets.js';

let dir: string;
const savedEnv = process.env.VDB_ENCRYPTION_KEY;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-secrets-'));
  delete process.env.VDB_ENCRYPTION_KEY;
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  if (savedEnv === undefined) delete process.env.VDB_ENCRYPTION_KEY;
  else process.env.VDB_ENCRYPTION_KEY = savedEnv;
});

test('created on first use, stable on second load', () => {
  const dataDir = path.join(dir, 'nested', 'data');
  const a = loadOrCreateServerSecrets(dataDir);
  assert.equal(a.serverSecret.length, 32);
  assert.equal(a.encryptionKey.length, 32);
  assert.notDeepEqual(a.serverSecret, a.encryptionKey);
  const file = path.join(dataDir, 'secrets.json');
  const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  assert.equal(json.serverSecret, a.serverSecret.toString('base64'));
  assert.equal(json.encryptionKey, a.encryptionKey.toString('base64'));
  const b = loadOrCreateServerSecrets(dataDir);
  assert.deepEqual(b, a);
  // No temp files left behind.
  assert.deepEqual(fs.readdirSync(dataDir), ['secrets.json']);
});

test('file mode is 0600', { skip: process.platform === 'win32' }, () => {
  loadOrCreateServerSecrets(dir);
  const mode = fs.statSync(path.join(dir, 'secrets.json')).mode & 0o777;
  assert.equal(mode, 0o600);
});

test('VDB_ENCRYPTION_KEY overrides the encryption key and is not written', () => {
  const envKey = randomBytes(32);
  process.env.VDB_ENCRYPTION_KEY = envKey.toString('base64');
  const s = loadOrCreateServerSecrets(dir);
  assert.deepEqual(s.encryptionKey, envKey);
  const text = fs.readFileSync(path.join(dir, 'secrets.json'), 'utf8');
  assert.equal(text.includes(envKey.toString('base64')), false);
  // The server secret still comes from the file.
  delete process.env.VDB_ENCRYPTION_KEY;
  const again = loadOrCreateServerSecrets(dir);
  assert.deepEqual(again.serverSecret, s.serverSecret);
  assert.notDeepEqual(again.encryptionKey, envKey);
});

test('invalid VDB_ENCRYPTION_KEY is an error', () => {
  process.env.VDB_ENCRYPTION_KEY = randomBytes(16).toString('base64');
  assert.throws(() => loadOrCreateServerSecrets(dir), /VDB_ENCRYPTION_KEY/);
  process.env.VDB_ENCRYPTION_KEY = 'not base64!';
  assert.throws(() => loadOrCreateServerSecrets(dir), /VDB_ENCRYPTION_KEY/);
});

test('a corrupt secrets file is an error and is not overwritten', () => {
  const file = path.join(dir, 'secrets.json');
  fs.writeFileSync(file, '{"serverSecret": "short"}');
  assert.throws(() => loadOrCreateServerSecrets(dir));
  assert.equal(fs.readFileSync(file, 'utf8'), '{"serverSecret": "short"}');
});
