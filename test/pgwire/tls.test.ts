/**
 * The listener with a certificate: SSLRequest answered 'S' and the session over TLS; on an
 * address other than loopback, password sign-in without TLS is refused.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { startWireServer, type WireServer } from './helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-pg-tls-'));
let wire: WireServer;
let cert: string;

before(async () => {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  cert = fs.readFileSync(certFile, 'utf8');
  // Every address: not loopback, so passwords need TLS.
  wire = await startWireServer({}, { host: '0.0.0.0', tls: { certFile, keyFile } });
});
after(async () => {
  await wire.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('pg over TLS with the server certificate checked', async () => {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: wire.listener.port,
    user: 'admin',
    password: ADMIN_PASSWORD,
    database: wire.server.services.config.vdbName,
    ssl: { ca: cert },
  });
  await client.connect();
  try {
    assert.deepEqual((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
  } finally {
    await client.end();
  }
});

test('psql with sslmode=require signs in; without TLS it is refused', async () => {
  const secure = await wire.psql('SELECT 7', ['-At'], 'admin', ADMIN_PASSWORD, 'require');
  assert.equal(secure.stdout, '7\n', secure.stderr);
  const plain = await wire.psql('SELECT 7', ['-At'], 'admin', ADMIN_PASSWORD, 'disable');
  assert.notEqual(plain.code, 0);
  assert.match(plain.stderr, /only over TLS/);
});
