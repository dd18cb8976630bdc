/**
 * GET /rest/api/openapi.json: the OpenAPI description written from the routes' schemas. Checked
 * against the routes themselves: every documented operation is a route, and every route of the
 * REST contract is documented, with its parameters.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
interface Operation {
  summary?: string;
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: unknown;
}
let doc: { openapi: string; info: { version: string }; paths: Record<string, Record<string, Operation>> };

before(async () => {
  server = await startTestServer();
  const response = await server.request('/rest/api/openapi.json');
  assert.equal(response.status, 200);
  doc = (await response.json()) as typeof doc;
});
after(async () => {
  await server?.close();
});

const CONTRACT = [
  'post /api/login',
  'post /api/invite/accept',
  'get /rest/api/status',
  'post /rest/api/query',
  'get /rest/api/query',
  'get /rest/api/source',
  'post /rest/api/source',
  'get /rest/api/source/{schema}',
  'patch /rest/api/source/{schema}',
  'delete /rest/api/source/{schema}',
  'get /rest/api/source/{schema}/{table}',
  'post /rest/api/source/{schema}/{table}',
  'get /rest/api/preferences',
  'put /rest/api/preferences',
  'get /rest/api/preferences/queries',
  'put /rest/api/preferences/queries/{name}',
  'delete /rest/api/preferences/queries/{name}',
  'get /rest/api/keys',
  'post /rest/api/keys',
  'delete /rest/api/keys/{id}',
];

test('an OpenAPI 3 description of this version, only for signed-in users', async () => {
  assert.match(doc.openapi, /^3\./);
  assert.equal(doc.info.version, server.services.version);
  const anonymous = await fetch(`${server.url}/rest/api/openapi.json`);
  assert.equal(anonymous.status, 401);
});

test('every documented operation is a route, and every route of the contract is documented with a summary', () => {
  const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method} ${path}`),
  );
  assert.deepEqual([...documented].sort(), [...CONTRACT].sort());
  for (const operation of documented) {
    const [method, path] = operation.split(' ') as [string, string];
    assert.ok(
      server.app.hasRoute({ method: method.toUpperCase() as 'GET', url: path.replace(/\{(\w+)\}/g, ':$1') }),
      `${operation} is a route`,
    );
    assert.ok(doc.paths[path]![method]!.summary, `${operation} has a summary`);
  }
});

test('parameters and bodies are described', () => {
  const query = doc.paths['/rest/api/query']!.post!;
  const names = (query.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  for (const name of ['pagination', 'limit', 'offset', 'requestId', 'array', 'headers', 'timeout']) assert.ok(names.includes(name), name);
  assert.ok(query.requestBody);
  const table = doc.paths['/rest/api/source/{schema}/{table}']!.get!;
  assert.deepEqual(
    (table.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
    ['schema', 'table'],
  );
  assert.ok(doc.paths['/rest/api/keys']!.post!.requestBody);
  // A procedure's call: its arguments as an object, or an array of them.
  assert.ok(doc.paths['/rest/api/source/{schema}/{table}']!.post!.requestBody);
});

test('the result endpoints name their formats, the count headers and 406', () => {
  const results = [
    doc.paths['/rest/api/query']!.post!,
    doc.paths['/rest/api/query']!.get!,
    doc.paths['/rest/api/source']!.get!,
    doc.paths['/rest/api/source/{schema}']!.get!,
    doc.paths['/rest/api/source/{schema}/{table}']!.get!,
    doc.paths['/rest/api/source/{schema}/{table}']!.post!,
  ] as Array<Operation & { responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> }>;
  for (const operation of results) {
    assert.deepEqual(Object.keys(operation.responses['200']!.content ?? {}), [
      'application/json',
      'text/csv',
      'application/x-ndjson',
      'application/vnd.apache.arrow.stream',
      'application/vnd.apache.parquet',
    ]);
    assert.ok(operation.responses['200']!.headers?.['Content-Range'], operation.summary);
    assert.ok(operation.responses['406']!.content?.['application/json'], operation.summary);
    assert.ok(
      operation.parameters?.some((p) => p.in === 'header' && p.name === 'prefer'),
      operation.summary,
    );
  }
  const keys = doc.paths['/rest/api/keys']!.post! as { responses?: Record<string, unknown> };
  assert.equal(keys.responses?.['406'], undefined, 'other endpoints are as they were');
});
