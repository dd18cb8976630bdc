import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { deriveSigningKey, signToken, verifyToken, TOKEN_LIFETIME_MS, VerifiedTokens } from '../../src/security/tokens.js';

const serverSecret = randomBytes(32);
const key = deriveSigningKey(serverSecret, '1.0.0');
const NOW = 1_700_000_000_000;
const EXP = NOW + TOKEN_LIFETIME_MS;

function users(map: Record<string, string>): (u: string) => string | undefined {
  return (u) => (Object.prototype.hasOwnProperty.call(map, u) ? map[u] : undefined);
}
const secrets = users({ alice: 'sa', bob: 'sb', 'dom:alice': 'sd', 'a:b:c': 'sabc' });

test('lifetime is 30 days', () => {
  assert.equal(TOKEN_LIFETIME_MS, 30 * 24 * 3600 * 1000);
});

test('deriveSigningKey depends on secret and version', () => {
  assert.equal(key.length, 32);
  assert.deepEqual(deriveSigningKey(serverSecret, '1.0.0'), key);
  assert.notDeepEqual(deriveSigningKey(serverSecret, '1.0.1'), key);
  assert.notDeepEqual(deriveSigningKey(randomBytes(32), '1.0.0'), key);
});

test('roundtrip', () => {
  const t = signToken('alice', EXP, 'sa', key);
  assert.match(t, /^alice:\d+:[A-Za-z0-9_-]+$/);
  assert.equal(verifyToken(t, key, secrets, NOW), 'alice');
});

test('default now is Date.now()', () => {
  const t = signToken('alice', Date.now() + 60_000, 'sa', key);
  assert.equal(verifyToken(t, key, secrets), 'alice');
  const old = signToken('alice', Date.now() - 1, 'sa', key);
  assert.equal(verifyToken(old, key, secrets), null);
});

test('changed username is rejected', () => {
  const [, exp, sig] = signToken('alice', EXP, 'sa', key).split(':');
  assert.equal(verifyToken(`bob:${exp}:${sig}`, key, secrets, NOW), null);
  // Even if bob had the same user secret, the username is signed.
  assert.equal(verifyToken(`bob:${exp}:${sig}`, key, users({ bob: 'sa' }), NOW), null);
});

test('changed expiry is rejected', () => {
  const [u, exp, sig] = signToken('alice', EXP, 'sa', key).split(':');
  assert.equal(verifyToken(`${u}:${Number(exp) + 1}:${sig}`, key, secrets, NOW), null);
  assert.equal(verifyToken(`${u}:0${exp}:${sig}`, key, secrets, NOW), null);
});

test('changed signature is rejected', () => {
  const t = signToken('alice', EXP, 'sa', key);
  const last = t.at(-1) === 'A' ? 'B' : 'A';
  assert.equal(verifyToken(t.slice(0, -1) + last, key, secrets, NOW), null);
  assert.equal(verifyToken(t.slice(0, -1), key, secrets, NOW), null);
  assert.equal(verifyToken(t + 'A', key, secrets, NOW), null);
});

test('expired token is rejected', () => {
  const t = signToken('alice', NOW, 'sa', key);
  assert.equal(verifyToken(t, key, secrets, NOW), null); // expiry must be > now
  assert.equal(verifyToken(t, key, secrets, NOW - 1), 'alice');
  assert.equal(verifyToken(signToken('alice', EXP, 'sa', key), key, secrets, EXP + 1), null);
});

test('token is void after the user secret changes (password change)', () => {
  const t = signToken('alice', EXP, 'sa', key);
  assert.equal(verifyToken(t, key, users({ alice: 'sa-new' }), NOW), null);
});

test('token is void after an appVersion change', () => {
  const t = signToken('alice', EXP, 'sa', key);
  assert.equal(verifyToken(t, deriveSigningKey(serverSecret, '1.1.0'), secrets, NOW), null);
});

test('token is void under another server secret', () => {
  const t = signToken('alice', EXP, 'sa', key);
  assert.equal(verifyToken(t, deriveSigningKey(randomBytes(32), '1.0.0'), secrets, NOW), null);
});

test('unknown user is rejected', () => {
  const t = signToken('carol', EXP, 'sc', key);
  assert.equal(verifyToken(t, key, secrets, NOW), null);
});

test('usernames containing ":"', () => {
  const t1 = signToken('dom:alice', EXP, 'sd', key);
  assert.equal(verifyToken(t1, key, secrets, NOW), 'dom:alice');
  const t2 = signToken('a:b:c', EXP, 'sabc', key);
  assert.equal(verifyToken(t2, key, secrets, NOW), 'a:b:c');
  // Dropping the prefix must not turn dom:alice's token into alice's.
  assert.equal(verifyToken(t1.slice('dom:'.length), key, secrets, NOW), null);
});

test('garbage tokens return null, never throw', () => {
  const garbage = [
    '',
    ':',
    '::',
    'a:b',
    'a:12x:sig',
    ':123:sig',
    `alice:${EXP}:`,
    `alice::sig`,
    `alice:-${EXP}:sig`,
    `alice:${EXP}.5:sig`,
    `alice:1e20:sig`,
    'alice:99999999999999999999999:sig',
    'no-colons',
  ];
  for (const g of garbage) {
    assert.equal(verifyToken(g, key, secrets, NOW), null, JSON.stringify(g));
  }
});

test('a throwing user lookup yields null', () => {
  const t = signToken('alice', EXP, 'sa', key);
  assert.equal(
    verifyToken(
      t,
      key,
      () => {
        throw new Error('db down');
      },
      NOW,
    ),
    null,
  );
});

test('signToken rejects a non-integer expiry', () => {
  assert.throws(() => signToken('alice', Number.NaN, 'sa', key));
  assert.throws(() => signToken('alice', 1.5, 'sa', key));
});

test("a remembered token is valid while its secret is the user's and until it expires; bounded", () => {
  const remembered = new VerifiedTokens(2);
  const token = `a:b:${1000}:sig`;
  remembered.remember(token, 'a:b', 'secret-1');
  const secrets: Record<string, string> = { 'a:b': 'secret-1' };
  assert.equal(
    remembered.lookup(token, (n) => secrets[n], 999),
    'a:b',
  );
  assert.equal(
    remembered.lookup(token, (n) => secrets[n], 1000),
    undefined,
    'expired',
  );
  remembered.remember(token, 'a:b', 'secret-1');
  secrets['a:b'] = 'secret-2';
  assert.equal(
    remembered.lookup(token, (n) => secrets[n], 1),
    undefined,
    'the secret was rotated',
  );
  secrets['a:b'] = 'secret-1';
  assert.equal(
    remembered.lookup(token, (n) => secrets[n], 1),
    undefined,
    'and forgotten for good',
  );
  remembered.remember('x:5:s', 'x', 'secret-1');
  remembered.remember('y:5:s', 'y', 'secret-1');
  remembered.remember('z:5:s', 'z', 'secret-1');
  assert.equal(
    remembered.lookup('x:5:s', () => 'secret-1', 1),
    undefined,
    'the oldest went first',
  );
  assert.equal(
    remembered.lookup('z:5:s', () => 'secret-1', 1),
    'z',
  );
  assert.equal(
    remembered.lookup('z:5:s', () => undefined, 1),
    undefined,
    'a removed user',
  );
});
