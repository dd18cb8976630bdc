/** The optional HTTPS listener: a configured certificate and key, the same API. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let cert: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-tls-'));

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
  server = await startTestServer({ tls: { certFile, keyFile } });
});
after(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('with a certificate and key configured, vdb answers over HTTPS', async () => {
  assert.match(server.url, /^https:/);
  const body = await new Promise<string>((resolve, reject) => {
    const request = https.request(
      `${server.url}/rest/api/status`,
      { ca: cert, headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}` } },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve(text));
      },
    );
    request.on('error', reject);
    request.end();
  });
  assert.deepEqual(JSON.parse(body), { status: 'OK' });
});

test('a missing certificate file stops the start with a clear message', async () => {
  await assert.rejects(
    startTestServer({ tls: { certFile: path.join(dir, 'none.pem'), keyFile: path.join(dir, 'none.pem') } }),
    /does not exist/,
  );
});
