/** GET /rest/api/status (spec 4.2): the service works and the credentials are good. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, assertUnauthorizedPage, okJson } from './util.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

test('GET /rest/api/status/ and /rest/api/status answer {"status":"OK"}', async () => {
  for (const path of ['/rest/api/status/', '/rest/api/status']) {
    const response = await server.request(path);
    assert.equal(response.status, 200, path);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/, path);
    assert.equal(await response.clone().text(), '{"status":"OK"}', path);
    assert.deepEqual(await response.json(), { status: 'OK' }, path);
  }
});

test('status works without a Content-Type header and ignores query parameters', async () => {
  const response = await fetch(`${server.url}/rest/api/status?x=1`, { headers: { authorization: server.basic() } });
  assert.deepEqual(await okJson(response), { status: 'OK' });
});

test('status checks the credentials', async () => {
  await assertUnauthorizedPage(await server.request('/rest/api/status/', { headers: { authorization: '' } }), 'none');
  await assertUnauthorizedPage(
    await server.request('/rest/api/status/', { headers: { authorization: server.basic('admin', 'nope-nope') } }),
    'wrong',
  );
});

test('other methods are 405 with Allow, neighbouring paths 404 JSON errors, not the status', async () => {
  const response = await server.request('/rest/api/status', { method: 'POST', body: {} });
  assert.equal(response.headers.get('allow'), 'GET, HEAD');
  const post = await assertApiError(response, 405, 'POST status');
  assert.match(post.description, /status/);
  await assertApiError(await server.request('/rest/api/statuses'), 404, 'statuses');
  await assertApiError(await server.request('/rest/status'), 404, '/rest/status');
  await assertApiError(await server.request('/api/status'), 404, '/api/status');
});
