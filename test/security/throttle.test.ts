/** Failed sign-ins are throttled per user name and per client address. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { connectRedis, whenReady } from '../../src/runtime/redis.js';
import { RedisThrottle } from '../../src/security/redis-throttle.js';
import { MemoryThrottle, signInKeys, type SignInThrottle } from '../../src/security/throttle.js';
import { ADMIN_PASSWORD, REDIS_URL, startTestServer, type TestServer } from '../helpers/server.js';

/** The same rule, whichever store counts: this process, or Redis shared by every instance. */
async function lockRule(make: (now: () => number) => SignInThrottle): Promise<void> {
  let now = 1_000_000;
  const throttle = make(() => now);
  const keys = signInKeys(`bob-${randomUUID()}`, `10.0.0.${Math.floor(Math.random() * 250)}`);
  await throttle.fail(keys);
  await throttle.fail(keys);
  await throttle.check(keys); // two failures: still allowed
  await throttle.fail(keys);
  await assert.rejects(
    () => throttle.check(keys),
    (err: { status: number; headers: Record<string, string> }) => {
      assert.equal(err.status, 429);
      assert.equal(err.headers['Retry-After'], '5');
      return true;
    },
  );
  // The address alone locks another name too.
  await assert.rejects(() => throttle.check(signInKeys('carol', keys[1]!.slice('address:'.length))));
  now += 5_001;
  await throttle.check(keys);
  // Failures outside the window do not add up.
  await throttle.fail(keys);
  now += 10_001;
  await throttle.fail(keys);
  await throttle.fail(keys);
  await throttle.check(keys);
}

const OPTIONS = { maxFailures: 3, windowMs: 10_000, lockMs: 5_000 };

test('a name or address is locked after too many failures, for the lock time', async () => {
  await lockRule((now) => new MemoryThrottle(OPTIONS, now));
});

test('in Redis: the same rule, and failures on one instance count on another', async () => {
  const redis = connectRedis(REDIS_URL);
  const other = connectRedis(REDIS_URL);
  const prefix = `vdb-test-${randomUUID()}:`;
  await Promise.all([whenReady(redis, 5000), whenReady(other, 5000)]);
  try {
    // Redis expires the keys by its own clock: the test's clock starts at Redis' time.
    const [seconds] = await redis.time();
    const start = Number(seconds) * 1000;
    await lockRule((now) => new RedisThrottle(redis, OPTIONS, prefix, () => start + now() - 1_000_000));
    const keys = signInKeys(`dave-${randomUUID()}`, '10.1.1.1');
    const one = new RedisThrottle(redis, OPTIONS, prefix);
    const two = new RedisThrottle(other, OPTIONS, prefix);
    await one.fail(keys);
    await two.fail(keys);
    await one.fail(keys);
    await assert.rejects(() => two.check(keys), { status: 429 });
  } finally {
    const left = await redis.keys(`${prefix}*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
    other.disconnect();
  }
});

let server: TestServer;
before(async () => {
  server = await startTestServer({ throttle: { maxFailures: 3, windowMs: 60_000, lockMs: 60_000 } });
});
after(async () => server.close());

test('Basic and login answer 429 with Retry-After after repeated failures, even with the right password', async () => {
  const wrong = server.basic('admin', 'wrong-password');
  for (let i = 0; i < 3; i++) {
    const response = await server.request('/rest/api/status', { headers: { authorization: wrong } });
    assert.equal(response.status, 401);
    await response.text();
  }
  const locked = await server.request('/rest/api/status', { headers: { authorization: server.basic('admin', ADMIN_PASSWORD) } });
  assert.equal(locked.status, 429);
  assert.ok(Number(locked.headers.get('retry-after')) > 0);
  const body = (await locked.json()) as { title: string; description: string; hint: string };
  assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title']);
  const login = await server.request('/api/login', {
    body: { username: 'admin', password: ADMIN_PASSWORD },
    headers: { authorization: '' },
  });
  assert.equal(login.status, 429);
  await login.text();
});

test('behind a trusted proxy the address is the one the proxy saw, not one the client wrote', async () => {
  const proxied = await startTestServer({ trustProxy: true, throttle: { maxFailures: 2, windowMs: 60_000, lockMs: 60_000 } });
  try {
    const attempt = (forwarded: string, password = 'wrong-password') =>
      proxied.request('/rest/api/status', {
        headers: { authorization: proxied.basic(`u${Math.random()}`, password), 'x-forwarded-for': forwarded },
      });
    for (let i = 0; i < 2; i++) await (await attempt('203.0.113.7')).text();
    const spoofed = await attempt('198.51.100.1, 203.0.113.7');
    assert.equal(spoofed.status, 429, 'a made-up entry in front does not change the address');
    await spoofed.text();
    const other = await attempt('198.51.100.9');
    assert.equal(other.status, 401, 'another address is not locked');
    await other.text();
  } finally {
    await proxied.close();
  }
});
