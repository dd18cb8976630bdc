/**
 * Helpers shared by the black-box HTTP tests: checks for the 401 page and the JSON error body,
 * a raw node:http client (fetch cannot set Host), reading paginated responses, and the real
 * token signing key of a test server (to forge, expire and re-version tokens).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { loadOrCreateServerSecrets } from '../../src/catalog/server-secrets.js';
import { deriveSigningKey } from '../../src/security/tokens.js';
import { ADMIN_PASSWORD, type TestServer } from '../helpers/server.js';

export const UNAUTHORIZED_TEXT = 'Unauthorized: Authentication token was either missing or invalid.';

export const basicOf = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Asserts the HTML 401 page of spec section 7. */
export async function assertUnauthorizedPage(response: Response, what = ''): Promise<void> {
  const text = await response.text();
  assert.equal(response.status, 401, `${what}: expected the 401 page, got ${response.status} ${text.slice(0, 300)}`);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html\b/i, `${what}: content type`);
  assert.ok(text.includes('<title>Error</title>'), `${what}: the page has the title Error: ${text}`);
  assert.ok(text.includes(UNAUTHORIZED_TEXT), `${what}: the page states why: ${text}`);
}

export interface ApiErrorBody {
  title: string;
  description: string;
  hint: string | null;
}

/** Checks a raw error body: exactly title, description, hint; no stack trace or source path. */
export function checkErrorText(text: string, what = ''): ApiErrorBody {
  let body: ApiErrorBody;
  try {
    body = JSON.parse(text) as ApiErrorBody;
  } catch {
    assert.fail(`${what}: the error body is not JSON: ${text.slice(0, 300)}`);
  }
  assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title'], `${what}: error body keys of ${text}`);
  assert.equal(typeof body.title, 'string', `${what}: title`);
  assert.ok(body.title.length > 0, `${what}: title not empty`);
  assert.equal(typeof body.description, 'string', `${what}: description`);
  assert.ok(body.description.length > 0, `${what}: description not empty`);
  assert.ok(body.hint === null || (typeof body.hint === 'string' && body.hint.length > 0), `${what}: hint is null or text`);
  assert.doesNotMatch(
    text,
    /\bat [\w.<>]+ \(|node:internal|node_modules|\/src\/[\w/]+\.[jt]s|\.js:\d+:\d+/,
    `${what}: no stack trace: ${text}`,
  );
  return body;
}

/** Asserts a JSON error answer with `status` and returns its body. */
export async function assertApiError(response: Response, status: number, what = ''): Promise<ApiErrorBody> {
  const text = await response.text();
  assert.equal(response.status, status, `${what}: expected ${status}, got ${response.status} ${text.slice(0, 400)}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/i, `${what}: content type`);
  return checkErrorText(text, what);
}

/** Asserts a 200 JSON answer and returns the parsed body. */
export async function okJson<T = unknown>(response: Response, what = ''): Promise<T> {
  const text = await response.text();
  assert.equal(response.status, 200, `${what}: expected 200, got ${response.status} ${text.slice(0, 400)}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/i, `${what}: content type`);
  return JSON.parse(text) as T;
}

/** Asserts a 200 JSON answer and returns its raw text (for exact number checks). */
export async function okText(response: Response, what = ''): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, 200, `${what}: expected 200, got ${response.status} ${text.slice(0, 400)}`);
  return text;
}

/** POST /rest/api/query with `sql` through `request` and returns the parsed rows. */
export async function queryRows<T = unknown[]>(request: Requester, sql: string, params = ''): Promise<T[]> {
  return okJson<T[]>(await request(`/rest/api/query${params}`, { body: { sql } }), sql);
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A request through node:http, which (unlike fetch) may set Host and other forbidden headers. */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const url = new URL(options.path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: options.method ?? 'GET',
        headers: {
          ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** The pagination headers of a response. */
export interface PageHeaders {
  limit: string | null;
  offset: string | null;
  requestId: string | null;
  nextPage: string | null;
  prevPage: string | null;
}

export const pageHeaders = (response: Response): PageHeaders => ({
  limit: response.headers.get('limit'),
  offset: response.headers.get('offset'),
  requestId: response.headers.get('requestId'),
  nextPage: response.headers.get('nextPage'),
  prevPage: response.headers.get('prevPage'),
});

export type Requester = TestServer['request'];

/**
 * A `server.request` that authenticates with a login token instead of Basic: each Basic request
 * costs a password hash, and the suites that are not about authentication send hundreds.
 */
export async function loginToken(server: TestServer, username = 'admin', password = ADMIN_PASSWORD): Promise<string> {
  const response = await server.request('/api/login', { body: { username, password }, headers: { authorization: '' } });
  return (await okJson<{ token: string }>(response, `login ${username}`)).token;
}

export async function tokenRequester(server: TestServer, username = 'admin', password = ADMIN_PASSWORD): Promise<Requester> {
  const token = await loginToken(server, username, password);
  return (pathAndQuery, init = {}) =>
    server.request(pathAndQuery, { ...init, headers: { authorization: '', 'x-auth-token': token, ...init.headers } });
}

/** The real signing key of a test server's tokens, or the key another app version would use. */
export function signingKeyOf(server: TestServer, version = server.services.version): Buffer {
  return deriveSigningKey(loadOrCreateServerSecrets(server.dataDir).serverSecret, version);
}
