/**
 * Per-user cursor quotas over HTTP (critical: one user must not take the service from others):
 * one user's flood of cheap paginated requests drops only their own oldest results, and a result
 * larger than their byte quota alone is a 413 {title, description, hint}. Both stores; the
 * stores' own tests are in test/results/cursor-quotas.test.ts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { ConfigOverrides } from '../../src/config.js';
import { whenReady } from '../../src/runtime/redis.js';
import { REDIS_URL, startTestServer, type TestServer } from '../helpers/server.js';
import { basicOf } from './util.js';

const CHEAP = 'SELECT i FROM generate_series(1, 50) t(i)';
const BIG = `SELECT i, repeat('x', 1000) AS pad FROM generate_series(1, 100) t(i)`;

function quotaOverHttp(name: string, overrides: () => ConfigOverrides): void {
  describe(name, () => {
    let server: TestServer;
    const as = (user: string) => ({ authorization: basicOf(user, `${user}-password-1`) });
    const paginate = (user: string, sql: string) =>
      server.request('/rest/api/query?pagination=true&limit=10', { body: { sql }, headers: as(user) });
    const follow = (user: string, requestId: string) =>
      server.request(`/rest/api/query?requestId=${requestId}&limit=10&offset=10`, { method: 'POST', headers: as(user) });

    before(async () => {
      server = await startTestServer({ ...overrides(), pagination: { maxCursorsPerUser: 3, maxBytesPerUser: 64 * 1024 } });
      for (const user of ['bob', 'carol']) await server.services.users.addPasswordUser(user, `${user}-password-1`);
    });
    after(async () => server.close());

    test("one user's many paginated requests drop only their own oldest results", async () => {
      const bob = await paginate('bob', CHEAP);
      assert.equal(bob.status, 200, await bob.text());
      const bobId = bob.headers.get('requestId')!;
      const carol: string[] = [];
      for (let i = 0; i < 25; i++) {
        const answer = await paginate('carol', CHEAP);
        assert.equal(answer.status, 200, await answer.text());
        carol.push(answer.headers.get('requestId')!);
      }
      const bobPage = await follow('bob', bobId);
      assert.equal(bobPage.status, 200, "bob's result is still served");
      assert.deepEqual(
        await bobPage.json(),
        Array.from({ length: 10 }, (_, i) => [11 + i]),
      );
      const statuses = [];
      for (const id of carol) statuses.push((await follow('carol', id)).status);
      assert.deepEqual(statuses, [...Array<number>(22).fill(404), 200, 200, 200], 'carol keeps her 3 newest');
      // Someone else's requestId is a 404 whatever the quotas did.
      assert.equal((await follow('carol', bobId)).status, 404);
    });

    test('a result larger than the user byte quota alone is a 413 with title, description and hint', async () => {
      const bob = await paginate('bob', CHEAP);
      const bobId = bob.headers.get('requestId')!;
      const big = await paginate('carol', BIG);
      assert.equal(big.status, 413);
      const body = (await big.json()) as Record<string, string>;
      assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title']);
      assert.equal(body.title, 'Result too large');
      assert.match(body.description, /65536 bytes one user's paginated results may take together/);
      assert.match(body.hint!, /pagination\.maxBytesPerUser/);
      assert.equal((await follow('bob', bobId)).status, 200);
    });
  });
}

quotaOverHttp('local cursor store', () => ({}));

describe('Redis cursor store', () => {
  const prefix = `vdb-test-${randomUUID()}:`;
  let redis: Redis;
  before(async () => {
    redis = new Redis(REDIS_URL);
    await whenReady(redis, 5000);
  });
  after(async () => {
    const left = await redis.keys(`${prefix}*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
  });
  quotaOverHttp('quotas', () => ({ cursors: { redisUrl: REDIS_URL, keyPrefix: prefix } }));
});
