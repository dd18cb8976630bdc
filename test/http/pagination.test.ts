/**
 * Pagination (spec 4.5, issue 2) on the query and source endpoints: the walk forward and back
 * through the page links, the headers, cursors (cached, per user, expiring), limits, and how
 * the absolute links are built.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertApiError, loginToken, okJson, pageHeaders, rawRequest, type PageHeaders } from './util.js';

/** Default settings: defaultLimit 1000, no proxy trusted. */
let server: TestServer;
let token: string;
let eveToken: string;
/** Small limits, a short cursor lifetime, and a trusted proxy. */
let small: TestServer;
let smallToken: string;

before(async () => {
  [server, small] = await Promise.all([
    startTestServer(),
    startTestServer({ pagination: { defaultLimit: 5, maxLimit: 7, cursorIdleMs: 1000 }, trustProxy: true }),
  ]);
  await server.services.users.addPasswordUser('eve', 'eve-password-1');
  [token, eveToken, smallToken] = await Promise.all([loginToken(server), loginToken(server, 'eve', 'eve-password-1'), loginToken(small)]);
});
after(async () => Promise.all([server?.close(), small?.close()]));

/** Any request with JSON content type and a login token. */
function call(url: string, tok: string, init: { method?: string; body?: unknown; contentType?: boolean } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'x-auth-token': tok };
  if (init.contentType !== false) headers['content-type'] = 'application/json';
  return fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
}

const query = (srv: TestServer, tok: string, params: string, sql?: string) =>
  call(`${srv.url}/rest/api/query${params}`, tok, { method: 'POST', body: sql === undefined ? undefined : { sql } });

/** The search parameters of a link as a plain object. */
const paramsOf = (link: string) => Object.fromEntries(new URL(link).searchParams.entries());

interface Chunk<T> {
  rows: T[];
  headers: PageHeaders;
}

async function chunkOf<T>(response: Response, what: string): Promise<Chunk<T>> {
  const headers = pageHeaders(response);
  const rows = await okJson<T[]>(response, what);
  return { rows, headers };
}

const CUSTOMERS = 'SELECT id, name FROM shop.customers ORDER BY id';

describe('query endpoint', () => {
  let all: Array<[number, string]>;
  before(async () => {
    all = await okJson(await query(server, token, '', CUSTOMERS));
    assert.equal(all.length, 200);
  });

  test('pagination=true with limit walks forward through nextPage to the end; the chunks make the whole result', async () => {
    const cursorsBefore = server.services.cursors.stats().count;
    let chunk = await chunkOf<[number, string]>(await query(server, token, '?pagination=true&limit=30', CUSTOMERS), 'first');
    const requestId = chunk.headers.requestId;
    assert.ok(requestId && /^[\w-]{16,}$/.test(requestId), `requestId ${requestId}`);
    const seen: Array<[number, string]> = [];
    const offsets: number[] = [];
    // Follow-ups alternate between the ways a client may send them (spec 4.5.3).
    const styles = ['resend body', 'no body', 'empty JSON body', 'no content type'] as const;
    for (let i = 0; ; i++) {
      assert.equal(chunk.headers.limit, '30');
      assert.equal(chunk.headers.requestId, requestId, 'the same cursor throughout');
      const offset = Number(chunk.headers.offset);
      offsets.push(offset);
      assert.deepEqual(chunk.rows, all.slice(offset, offset + 30), `chunk at ${offset}`);
      seen.push(...chunk.rows);
      if (!chunk.headers.nextPage) break;
      const next = new URL(chunk.headers.nextPage);
      assert.equal(next.origin, new URL(server.url).origin, 'absolute link to this server');
      assert.equal(next.pathname, '/rest/api/query');
      assert.deepEqual(paramsOf(chunk.headers.nextPage), { requestId, limit: '30', offset: String(offset + 30) });
      const style = styles[i % styles.length]!;
      const response =
        style === 'resend body'
          ? await call(chunk.headers.nextPage, token, { method: 'POST', body: { sql: CUSTOMERS } })
          : style === 'no body'
            ? await call(chunk.headers.nextPage, token, { method: 'POST' })
            : style === 'empty JSON body'
              ? await call(chunk.headers.nextPage, token, { method: 'POST', body: '' })
              : await call(chunk.headers.nextPage, token, { method: 'POST', contentType: false });
      chunk = await chunkOf(response, `${style} at ${offset + 30}`);
    }
    assert.deepEqual(offsets, [0, 30, 60, 90, 120, 150, 180]);
    assert.equal(chunk.rows.length, 20, 'the last chunk holds the rest');
    assert.equal(chunk.headers.nextPage, null, 'the last chunk has no nextPage');
    assert.deepEqual(seen, all);
    assert.equal(server.services.cursors.stats().count, cursorsBefore + 1, 'one cursor for the whole walk');
  });

  test('...and back through prevPage to the start; the first chunk points to offset=0', async () => {
    const first = await chunkOf<[number, string]>(await query(server, token, '?pagination=TRUE&limit=40', CUSTOMERS), 'first');
    assert.deepEqual(first.rows, all.slice(0, 40));
    assert.ok(first.headers.prevPage);
    assert.deepEqual(paramsOf(first.headers.prevPage), { requestId: first.headers.requestId, limit: '40', offset: '0' });
    // Jump to the last chunk, then walk back.
    let chunk = await chunkOf<[number, string]>(
      await call(`${server.url}/rest/api/query?requestId=${first.headers.requestId}&limit=40&offset=160`, token, { method: 'POST' }),
      'last',
    );
    assert.equal(chunk.headers.nextPage, null);
    const back: number[] = [];
    const seen: Array<[number, string]> = [];
    for (;;) {
      const offset = Number(chunk.headers.offset);
      back.push(offset);
      assert.deepEqual(chunk.rows, all.slice(offset, offset + 40));
      seen.unshift(...chunk.rows);
      if (offset === 0) break;
      assert.ok(chunk.headers.prevPage);
      assert.deepEqual(paramsOf(chunk.headers.prevPage), { requestId: first.headers.requestId, limit: '40', offset: String(offset - 40) });
      chunk = await chunkOf(
        await call(chunk.headers.prevPage, token, { method: 'POST', body: { sql: CUSTOMERS } }),
        `back to ${offset - 40}`,
      );
    }
    assert.deepEqual(back, [160, 120, 80, 40, 0]);
    assert.deepEqual(seen, all);
    assert.equal(paramsOf(chunk.headers.prevPage!).offset, '0', 'prevPage of the first chunk stays at offset=0');
  });

  test('an offset between chunk borders: prevPage clamps at 0, nextPage continues from offset+limit', async () => {
    const first = await chunkOf(await query(server, token, '?pagination=true&limit=10', CUSTOMERS), 'first');
    const id = first.headers.requestId!;
    const mid = await chunkOf<[number, string]>(
      await call(`${server.url}/rest/api/query?requestId=${id}&limit=10&offset=5`, token, { method: 'POST' }),
      'offset 5',
    );
    assert.deepEqual(mid.rows, all.slice(5, 15));
    assert.equal(mid.headers.offset, '5');
    assert.equal(paramsOf(mid.headers.prevPage!).offset, '0');
    assert.equal(paramsOf(mid.headers.nextPage!).offset, '15');
    // The same cursor may be read with another limit.
    const wide = await chunkOf<[number, string]>(
      await call(`${server.url}/rest/api/query?requestId=${id}&limit=25&offset=190`, token, { method: 'POST' }),
      'limit 25',
    );
    assert.deepEqual(wide.rows, all.slice(190));
    assert.equal(wide.headers.limit, '25');
    assert.equal(wide.headers.nextPage, null);
    assert.equal(paramsOf(wide.headers.prevPage!).offset, '165');
  });

  test('a chunk ending exactly at the last row has no nextPage; past the end is []', async () => {
    const first = await chunkOf<[number]>(
      await query(server, token, '?pagination=true&limit=25', 'SELECT id FROM shop.products ORDER BY id'),
      'first',
    );
    assert.equal(first.rows.length, 25);
    assert.ok(first.headers.nextPage);
    const second = await chunkOf<[number]>(await call(first.headers.nextPage, token, { method: 'POST' }), 'second');
    assert.deepEqual(
      second.rows.map((r) => r[0]),
      Array.from({ length: 25 }, (_, i) => i + 26),
    );
    assert.equal(second.headers.nextPage, null);
    const beyond = await chunkOf(
      await call(`${server.url}/rest/api/query?requestId=${first.headers.requestId}&limit=25&offset=50`, token, { method: 'POST' }),
      'beyond',
    );
    assert.deepEqual(beyond.rows, []);
    assert.equal(beyond.headers.nextPage, null);
  });

  test('an empty result paginates as [] with the headers and no nextPage', async () => {
    const chunk = await chunkOf(
      await query(server, token, '?pagination=true&limit=10', 'SELECT id FROM shop.customers WHERE id < 0'),
      'empty',
    );
    assert.deepEqual(chunk.rows, []);
    assert.equal(chunk.headers.limit, '10');
    assert.equal(chunk.headers.offset, '0');
    assert.ok(chunk.headers.requestId);
    assert.equal(chunk.headers.nextPage, null);
    assert.equal(paramsOf(chunk.headers.prevPage!).offset, '0');
  });

  test('the first request may start at an offset', async () => {
    const chunk = await chunkOf<[number, string]>(
      await query(server, token, '?pagination=true&limit=10&offset=195', CUSTOMERS),
      'offset 195',
    );
    assert.deepEqual(chunk.rows, all.slice(195));
    assert.equal(chunk.headers.offset, '195');
    assert.equal(chunk.headers.nextPage, null);
    assert.equal(paramsOf(chunk.headers.prevPage!).offset, '185');
  });

  test('without pagination=true there are no pagination headers; pagination=false is the same', async () => {
    for (const params of ['', '?pagination=false', '?pagination=FALSE&limit=3']) {
      const response = await query(server, token, params, CUSTOMERS);
      const headers = pageHeaders(response);
      const rows = await okJson<unknown[]>(response);
      assert.equal(rows.length, params.includes('limit') ? 3 : 200);
      assert.deepEqual(headers, { limit: null, offset: null, requestId: null, nextPage: null, prevPage: null }, params);
    }
  });

  test('array and headers apply to chunks, of the first request and of later ones', async () => {
    const first = await chunkOf(await query(server, token, '?pagination=true&limit=2&array=false', CUSTOMERS), 'objects');
    assert.deepEqual(first.rows, [
      { id: 1, name: 'Lukas Müller' },
      { id: 2, name: 'Chiara Ferrari' },
    ]);
    const id = first.headers.requestId!;
    const withHeader = await chunkOf(
      await call(`${server.url}/rest/api/query?requestId=${id}&limit=2&offset=2&headers=true`, token, { method: 'POST' }),
      'headers',
    );
    assert.deepEqual(withHeader.rows, [['id', 'name'], ...all.slice(2, 4)]);
    const objects = await chunkOf(
      await call(`${server.url}/rest/api/query?requestId=${id}&limit=1&offset=4&array=false`, token, { method: 'POST' }),
      'objects later',
    );
    assert.deepEqual(objects.rows, [{ id: 5, name: all[4]![1] }]);
  });

  test('requestid in lower case is accepted', async () => {
    const first = await chunkOf(await query(server, token, '?pagination=true&limit=3', CUSTOMERS), 'first');
    const later = await chunkOf(
      await call(`${server.url}/rest/api/query?requestid=${first.headers.requestId}&limit=3&offset=3`, token, { method: 'POST' }),
      'requestid',
    );
    assert.deepEqual(later.rows, all.slice(3, 6));
    assert.equal(later.headers.requestId, first.headers.requestId);
  });

  test('later requests are served from the cache: no new cursor, no new query', async () => {
    const first = await chunkOf(await query(server, token, '?pagination=true&limit=50', CUSTOMERS), 'first');
    const size = server.services.cursors.stats().count;
    const id = first.headers.requestId!;
    for (const offset of [50, 100, 150, 0, 100]) {
      const chunk = await chunkOf(
        await call(`${server.url}/rest/api/query?requestId=${id}&limit=50&offset=${offset}`, token, {
          method: 'POST',
          body: { sql: CUSTOMERS },
        }),
        `offset ${offset}`,
      );
      assert.deepEqual(chunk.rows, all.slice(offset, offset + 50));
    }
    assert.equal(server.services.cursors.stats().count, size);
    // A broken statement in the body does not matter either: only requestId is used.
    const ignored = await chunkOf(
      await call(`${server.url}/rest/api/query?requestId=${id}&limit=1&offset=0`, token, {
        method: 'POST',
        body: { sql: 'SELEC nonsense' },
      }),
      'body ignored',
    );
    assert.deepEqual(ignored.rows, all.slice(0, 1));
  });

  test('later chunks do not change when the source data changes after the first request', async () => {
    const file = path.join(small.dataDir, 'files', 'mutable.sqlite');
    const db = new Database(file);
    db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)');
    const insert = db.prepare('INSERT INTO items VALUES (?, ?)');
    for (let i = 1; i <= 10; i++) insert.run(i, `item ${i}`);
    await small.services.registry.addSource({ name: 'mut', kind: 'sqlite', connection: { path: file } });
    try {
      const sql = 'SELECT id, label FROM mut.items ORDER BY id';
      const first = await chunkOf<[number, string]>(await query(small, smallToken, '?pagination=true&limit=4', sql), 'first');
      assert.deepEqual(
        first.rows.map((r) => r[0]),
        [1, 2, 3, 4],
      );
      const size = small.services.cursors.stats().count;
      db.exec("DELETE FROM items WHERE id > 2; UPDATE items SET label = 'changed'");
      assert.deepEqual(
        await okJson(await query(small, smallToken, '', sql)),
        [
          [1, 'changed'],
          [2, 'changed'],
        ],
        'a new query sees the change',
      );
      const second = await chunkOf<[number, string]>(
        await call(first.headers.nextPage!, smallToken, { method: 'POST', body: { sql } }),
        'second',
      );
      assert.deepEqual(
        second.rows,
        [5, 6, 7, 8].map((i) => [i, `item ${i}`]),
      );
      const third = await chunkOf<[number, string]>(await call(second.headers.nextPage!, smallToken, { method: 'POST' }), 'third');
      assert.deepEqual(third.rows, [
        [9, 'item 9'],
        [10, 'item 10'],
      ]);
      assert.equal(third.headers.nextPage, null);
      const again = await chunkOf<[number, string]>(await call(second.headers.prevPage!, smallToken, { method: 'POST' }), 'back');
      assert.deepEqual(
        again.rows,
        [1, 2, 3, 4].map((i) => [i, `item ${i}`]),
      );
      assert.equal(small.services.cursors.stats().count, size);
    } finally {
      db.close();
    }
  });

  test('an unknown requestId is 404 JSON', async () => {
    for (const id of ['0123456789abcdef0123456789abcdef', 'nope', '..%2F..%2Fetc', 'x'.repeat(500)]) {
      const body = await assertApiError(
        await call(`${server.url}/rest/api/query?requestId=${id}&limit=5&offset=0`, token, { method: 'POST' }),
        404,
        `requestId ${id}`,
      );
      assert.match(body.description, /requestId/);
    }
    // Also when the body carries SQL: a requestId is never silently replaced by a new query.
    await assertApiError(
      await call(`${server.url}/rest/api/query?requestId=0123456789abcdef0123456789abcdef&limit=5`, token, {
        method: 'POST',
        body: { sql: CUSTOMERS },
      }),
      404,
      'unknown requestId with a body',
    );
  });

  test("another user's requestId is 404; the owner can still read it", async () => {
    const first = await chunkOf(await query(server, token, '?pagination=true&limit=5', CUSTOMERS), 'admin');
    const id = first.headers.requestId!;
    await assertApiError(
      await call(`${server.url}/rest/api/query?requestId=${id}&limit=5&offset=5`, eveToken, { method: 'POST' }),
      404,
      'eve',
    );
    await assertApiError(await call(`${server.url}/rest/api/source?requestId=${id}&limit=5&offset=0`, eveToken), 404, 'eve via source');
    const own = await chunkOf(
      await call(`${server.url}/rest/api/query?requestId=${id}&limit=5&offset=5`, token, { method: 'POST' }),
      'admin again',
    );
    assert.deepEqual(own.rows, all.slice(5, 10));
  });

  test('an idle cursor expires (cursorIdleMs) and is then 404; reading it keeps it alive', async () => {
    const first = await chunkOf<[number]>(
      await query(small, smallToken, '?pagination=true&limit=2', 'SELECT id FROM shop.customers ORDER BY id'),
      'first',
    );
    const kept = await chunkOf<[number]>(
      await query(small, smallToken, '?pagination=true&limit=2', 'SELECT id FROM shop.products ORDER BY id'),
      'kept',
    );
    const keptUrl = (offset: number) => `${small.url}/rest/api/query?requestId=${kept.headers.requestId}&limit=2&offset=${offset}`;
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.deepEqual((await chunkOf<[number]>(await call(keptUrl(2), smallToken, { method: 'POST' }), 'kept at 600 ms')).rows, [[3], [4]]);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.deepEqual((await chunkOf<[number]>(await call(keptUrl(4), smallToken, { method: 'POST' }), 'kept at 1200 ms')).rows, [[5], [6]]);
    const body = await assertApiError(await call(first.headers.nextPage!, smallToken, { method: 'POST' }), 404, 'expired');
    assert.match(body.description, /requestId/);
  });

  test('without a limit the configured default applies (defaultLimit)', async () => {
    const chunk = await chunkOf<[number]>(
      await query(small, smallToken, '?pagination=true', 'SELECT id FROM shop.customers ORDER BY id'),
      'default 5',
    );
    assert.deepEqual(chunk.rows, [[1], [2], [3], [4], [5]]);
    assert.equal(chunk.headers.limit, '5');
    assert.deepEqual(paramsOf(chunk.headers.nextPage!), { requestId: chunk.headers.requestId, limit: '5', offset: '5' });
    const later = await chunkOf<[number]>(
      await call(`${small.url}/rest/api/query?requestId=${chunk.headers.requestId}&offset=5`, smallToken, { method: 'POST' }),
      'no limit later',
    );
    assert.deepEqual(later.rows, [[6], [7], [8], [9], [10]]);
    assert.equal(later.headers.limit, '5');

    // The shipped default is 1000.
    const orders = await chunkOf<[number]>(
      await query(server, token, '?pagination=true', 'SELECT id FROM shop.orders ORDER BY id'),
      'default 1000',
    );
    assert.equal(orders.rows.length, 1000);
    assert.equal(orders.headers.limit, '1000');
    assert.equal(paramsOf(orders.headers.nextPage!).offset, '1000');
    const last = await chunkOf<[number]>(await call(orders.headers.nextPage!, token, { method: 'POST' }), 'orders 2');
    assert.equal(last.rows.length, 1000);
    assert.equal(last.rows[999]![0], 2000);
    assert.equal(last.headers.nextPage, null);
  });

  test('a limit above maxLimit is capped, and the headers and links say so', async () => {
    const chunk = await chunkOf<[number]>(
      await query(small, smallToken, '?pagination=true&limit=100', 'SELECT id FROM shop.customers ORDER BY id'),
      'capped',
    );
    assert.equal(chunk.rows.length, 7);
    assert.equal(chunk.headers.limit, '7');
    assert.equal(paramsOf(chunk.headers.nextPage!).limit, '7');
    assert.equal(paramsOf(chunk.headers.nextPage!).offset, '7');
    const later = await chunkOf<[number]>(
      await call(`${small.url}/rest/api/query?requestId=${chunk.headers.requestId}&limit=1000&offset=7`, smallToken, { method: 'POST' }),
      'capped later',
    );
    assert.deepEqual(
      later.rows.map((r) => r[0]),
      [8, 9, 10, 11, 12, 13, 14],
    );
    assert.equal(later.headers.limit, '7');
  });

  test('bad limit/offset values are 400, on the first request and on later ones', async () => {
    for (const params of ['limit=0', 'limit=-1', 'limit=abc', 'offset=-1', 'offset=x', 'pagination=maybe']) {
      await assertApiError(await query(server, token, `?pagination=true&${params}`, CUSTOMERS), 400, `first request ${params}`);
    }
    const first = await chunkOf(await query(server, token, '?pagination=true&limit=5', CUSTOMERS), 'first');
    for (const params of ['limit=0', 'limit=-5', 'limit=five', 'offset=-5', 'offset=1.5']) {
      await assertApiError(
        await call(`${server.url}/rest/api/query?requestId=${first.headers.requestId}&${params}`, token, { method: 'POST' }),
        400,
        `later request ${params}`,
      );
    }
  });

  test('a failing paginated statement creates no cursor', async () => {
    const size = server.services.cursors.stats().count;
    await assertApiError(await query(server, token, '?pagination=true&limit=5', 'SELECT * FROM shop.nope'), 400, 'unknown table');
    await assertApiError(await query(server, token, '?pagination=true&limit=5', 'SELEC 1'), 400, 'syntax');
    await assertApiError(await query(server, token, '?pagination=true&limit=5', "SELECT 'x'::integer"), 400, 'conversion');
    await assertApiError(await query(server, token, '?pagination=true&limit=5'), 400, 'no body and no requestId');
    assert.equal(server.services.cursors.stats().count, size);
  });

  test('a page link is followed with a plain GET; GET without requestId and other methods are 405 with Allow', async () => {
    const first = await chunkOf(
      await query(server, token, '?pagination=true&limit=2', 'SELECT n FROM (VALUES (0), (1), (2), (3), (4)) v(n) ORDER BY n'),
      'first',
    );
    const next = first.headers.nextPage!;
    const second = await chunkOf(await call(next, token, { contentType: false }), 'GET next');
    assert.deepEqual(second.rows, [[2], [3]]);
    assert.deepEqual((await chunkOf(await call(second.headers.prevPage!, token), 'GET prev')).rows, [[0], [1]]);
    const plain = await call(`${server.url}/rest/api/query`, token);
    assert.equal(plain.headers.get('allow'), 'POST');
    const body = await assertApiError(plain, 405, 'GET without requestId');
    assert.match(body.description, /requestId/);
    const put = await call(next, token, { method: 'PUT', body: {} });
    assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
    await assertApiError(put, 405, 'PUT');
    // A cursor is read on the path it was made on: a query's requestId on the source path is unknown.
    await assertApiError(await call(`${server.url}/rest/api/source?requestId=${first.headers.requestId}`, token), 404, 'other path');
  });
});

describe('page links', () => {
  const viaHost = async (srv: TestServer, tok: string, headers: Record<string, string>) => {
    const response = await rawRequest(srv.url, {
      method: 'POST',
      path: '/rest/api/query?pagination=true&limit=2',
      headers: { 'content-type': 'application/json', 'x-auth-token': tok, ...headers },
      body: JSON.stringify({ sql: 'SELECT id FROM shop.customers ORDER BY id' }),
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(JSON.parse(response.text), [[1], [2]]);
    return {
      nextPage: String(response.headers.nextpage),
      prevPage: String(response.headers.prevpage),
      requestId: String(response.headers.requestid),
    };
  };

  test('links are absolute and built from the Host header', async () => {
    const links = await viaHost(server, token, { host: 'api.example.test:9999' });
    assert.equal(links.nextPage, `http://api.example.test:9999/rest/api/query?requestId=${links.requestId}&limit=2&offset=2`);
    assert.equal(links.prevPage, `http://api.example.test:9999/rest/api/query?requestId=${links.requestId}&limit=2&offset=0`);
    const plain = await viaHost(server, token, { host: 'vdb.internal' });
    assert.ok(plain.nextPage.startsWith('http://vdb.internal/rest/api/query?'), plain.nextPage);
  });

  test('X-Forwarded-Proto/Host are ignored unless a proxy is trusted', async () => {
    const links = await viaHost(server, token, {
      host: 'api.example.test:9999',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'proxy.example.test',
    });
    assert.ok(links.nextPage.startsWith('http://api.example.test:9999/rest/api/query?'), links.nextPage);
    assert.ok(links.prevPage.startsWith('http://api.example.test:9999/rest/api/query?'), links.prevPage);
  });

  test('with trustProxy the links use X-Forwarded-Proto and X-Forwarded-Host', async () => {
    const links = await viaHost(small, smallToken, {
      host: 'backend.local:8080',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'proxy.example.test',
    });
    assert.equal(links.nextPage, `https://proxy.example.test/rest/api/query?requestId=${links.requestId}&limit=2&offset=2`);
    assert.ok(links.prevPage.startsWith('https://proxy.example.test/rest/api/query?'), links.prevPage);
    const direct = await viaHost(small, smallToken, { host: 'backend.local:8080' });
    assert.ok(direct.nextPage.startsWith('http://backend.local:8080/rest/api/query?'), direct.nextPage);
  });

  test('the hosted preferences link follows the same rule', async () => {
    const response = await rawRequest(server.url, {
      path: '/rest/api/preferences',
      headers: { 'x-auth-token': token, host: 'api.example.test:9999', 'x-forwarded-host': 'proxy.example.test' },
    });
    assert.equal(response.status, 200, response.text);
    assert.match((JSON.parse(response.text) as { link: string }).link, /^http:\/\/api\.example\.test:9999\/[\w-]+\/rest$/);
  });
});

describe('source endpoint', () => {
  // One object per data source (spec 4.4); the system schemas are reached by SQL.
  const SOURCES = [{ Name: 'shop' }, { Name: 'files' }];

  test('GET /rest/api/source lists the data sources as [{Name}]; SYS.Schemas has the system schemas too', async () => {
    const response = await call(`${server.url}/rest/api/source`, token);
    assert.deepEqual(await okJson(response), SOURCES);
    assert.deepEqual(pageHeaders(response), { limit: null, offset: null, requestId: null, nextPage: null, prevPage: null });
    const fromSys = await okJson<string[][]>(await query(server, token, '', 'SELECT "Name" FROM SYS.Schemas ORDER BY "OID"'));
    assert.deepEqual(
      fromSys.map(([name]) => ({ Name: name })),
      [{ Name: 'SYS' }, { Name: 'SYSADMIN' }, { Name: 'SYSLOG' }, ...SOURCES],
    );
    const sysTables = await okJson<unknown[]>(await call(`${server.url}/rest/api/source/SYS`, token));
    assert.ok(sysTables.length > 0, 'GET /rest/api/source/SYS still lists the system tables');
  });

  test('array=true gives arrays; headers=true then adds the column name', async () => {
    assert.deepEqual(await okJson(await call(`${server.url}/rest/api/source?array=true`, token)), [['shop'], ['files']]);
    assert.deepEqual(await okJson(await call(`${server.url}/rest/api/source?array=TRUE&headers=true`, token)), [
      ['Name'],
      ['shop'],
      ['files'],
    ]);
    assert.deepEqual(await okJson(await call(`${server.url}/rest/api/source?array=false&headers=true`, token)), SOURCES);
  });

  test('limit and offset without pagination', async () => {
    assert.deepEqual(await okJson(await call(`${server.url}/rest/api/source?limit=1&offset=1`, token)), SOURCES.slice(1, 2));
  });

  test('pagination=true&limit=1 walks to the end; links carry array=false and headers=false', async () => {
    const first = await chunkOf<{ Name: string }>(await call(`${server.url}/rest/api/source?pagination=true&limit=1`, token), 'first');
    const id = first.headers.requestId!;
    assert.ok(id);
    // First chunk's prevPage: no offset parameter (spec 4.5.2).
    const prev = new URL(first.headers.prevPage!);
    assert.equal(prev.origin, new URL(server.url).origin);
    assert.equal(prev.pathname, '/rest/api/source');
    assert.deepEqual(paramsOf(first.headers.prevPage!), { requestId: id, limit: '1', array: 'false', headers: 'false' });
    assert.equal(prev.searchParams.has('offset'), false);

    let chunk = first;
    const seen: Array<{ Name: string }> = [];
    const offsets: string[] = [];
    for (;;) {
      assert.equal(chunk.headers.limit, '1');
      assert.equal(chunk.headers.requestId, id);
      offsets.push(chunk.headers.offset!);
      seen.push(...chunk.rows);
      if (!chunk.headers.nextPage) break;
      const next = new URL(chunk.headers.nextPage);
      assert.equal(next.pathname, '/rest/api/source');
      assert.deepEqual(paramsOf(chunk.headers.nextPage), {
        requestId: id,
        limit: '1',
        offset: String(Number(chunk.headers.offset) + 1),
        array: 'false',
        headers: 'false',
      });
      chunk = await chunkOf(await call(chunk.headers.nextPage, token), `source at ${next.searchParams.get('offset')}`);
    }
    assert.deepEqual(offsets, ['0', '1']);
    assert.deepEqual(seen, SOURCES);

    // Back to the start through prevPage.
    const back: Array<{ Name: string }> = [];
    for (;;) {
      back.unshift(...chunk.rows);
      if (chunk.headers.offset === '0') break;
      const link = chunk.headers.prevPage!;
      const expectedOffset = Number(chunk.headers.offset) - 1;
      assert.equal(paramsOf(link).offset ?? '0', String(expectedOffset));
      assert.equal(paramsOf(link).array, 'false');
      chunk = await chunkOf(await call(link, token), 'source back');
    }
    assert.deepEqual(back, SOURCES);
  });

  test('links set array=false and headers=false whatever the request had (spec 4.4)', async () => {
    const first = await chunkOf(
      await call(`${server.url}/rest/api/source?pagination=true&limit=1&array=true&headers=true`, token),
      'arrays',
    );
    assert.deepEqual(first.rows, [['Name'], ['shop']]);
    for (const link of [first.headers.nextPage!, first.headers.prevPage!]) {
      assert.equal(paramsOf(link).array, 'false', link);
      assert.equal(paramsOf(link).headers, 'false', link);
    }
    const second = await chunkOf(await call(first.headers.nextPage!, token), 'second');
    assert.deepEqual(second.rows, [{ Name: 'files' }]);
    assert.equal(second.headers.nextPage, null);
    // A table's rows are arrays by default; its links still say array=false.
    const table = await chunkOf(await call(`${server.url}/rest/api/source/files/regions?pagination=true&limit=2`, token), 'table');
    assert.ok(Array.isArray(table.rows[0]), 'arrays on the first request');
    assert.equal(paramsOf(table.headers.nextPage!).array, 'false');
    assert.ok(
      !Array.isArray((await chunkOf(await call(table.headers.nextPage!, token), 'table next')).rows[0]),
      'objects through the link',
    );
  });

  test('source pagination uses the default limit and the cap', async () => {
    const chunk = await chunkOf<{ Name: string }>(await call(`${small.url}/rest/api/source?pagination=true`, smallToken), 'default');
    assert.equal(chunk.headers.limit, '5');
    assert.ok(chunk.rows.length <= 5);
    assert.deepEqual(chunk.rows.slice(0, 2), SOURCES);
    const capped = await chunkOf(await call(`${small.url}/rest/api/source?pagination=true&limit=50`, smallToken), 'capped');
    assert.equal(capped.headers.limit, '7');
  });

  test('an unknown requestId on source is 404; bad parameters are 400', async () => {
    await assertApiError(
      await call(`${server.url}/rest/api/source?requestId=nope&limit=1&offset=0&array=false&headers=false`, token),
      404,
      'unknown',
    );
    for (const params of ['limit=-1', 'offset=x', 'array=maybe', 'headers=2', 'pagination=yes']) {
      await assertApiError(await call(`${server.url}/rest/api/source?${params}`, token), 400, params);
    }
  });
});
