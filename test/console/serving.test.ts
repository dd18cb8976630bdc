/** vdb serves the built console at / without shadowing the API (src/server/console.ts). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { consoleRoutes } from '../../src/server/console.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('console: serving', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());

  it('serves index.html at / with a strict content security policy, and its assets', async () => {
    const res = await fetch(`${server.url}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const html = await res.text();
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    const asset = await fetch(`${server.url}/${script}`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type') ?? '', /javascript/);
    assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
  });

  it('leaves the API its own answers: 401 page, JSON 404, login', async () => {
    const unknownRest = await fetch(`${server.url}/rest/api/nope`);
    assert.equal(unknownRest.status, 401);
    const signedIn = await server.request('/rest/api/nope');
    assert.equal(signedIn.status, 404);
    assert.equal(((await signedIn.json()) as { title: string }).title, 'Not found');
    const other = await fetch(`${server.url}/nope.html`);
    assert.equal(other.status, 404);
    assert.match(other.headers.get('content-type') ?? '', /application\/json/);
    const status = await server.request('/rest/api/status/');
    assert.deepEqual(await status.json(), { status: 'OK' });
    const login = await server.request('/api/login', {
      body: { username: 'admin', password: 'wrong-password' },
      headers: { authorization: '' },
    });
    assert.equal(login.status, 401);
  });

  it('says how to build the console when the build is missing', async () => {
    const app = Fastify({ logger: false });
    await app.register(async (instance) => consoleRoutes(instance, { root: '/nonexistent/web/dist' }));
    const res = await app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /npm run build/);
    const other = await app.inject({ method: 'GET', url: '/assets/x.js' });
    assert.equal(other.statusCode, 404);
    await app.close();
  });
});
