import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword, verifyPassword } from '../../src/security/passwords.js';

test('hash has the documented format and a random salt', async () => {
  const a = await hashPassword('s3cret');
  const b = await hashPassword('s3cret');
  assert.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  const parts = a.split('$');
  assert.equal(Buffer.from(parts[4]!, 'base64').length, 16);
  assert.equal(Buffer.from(parts[5]!, 'base64').length, 32);
  assert.notEqual(a, b);
});

test('verify accepts the right password and rejects a wrong one', async () => {
  const stored = await hashPassword('correct horse');
  assert.equal(await verifyPassword('correct horse', stored), true);
  assert.equal(await verifyPassword('correct horsf', stored), false);
  assert.equal(await verifyPassword('', stored), false);
});

test('unicode and empty passwords', async () => {
  const stored = await hashPassword('pässwörd ✓');
  assert.equal(await verifyPassword('pässwörd ✓', stored), true);
  const empty = await hashPassword('');
  assert.equal(await verifyPassword('', empty), true);
  assert.equal(await verifyPassword('x', empty), false);
});

test('malformed stored strings return false, never throw', async () => {
  const good = await hashPassword('pw');
  const [, n, r, p, salt, hash] = good.split('$');
  const bad = [
    '',
    'scrypt',
    'plain-text-password',
    `bcrypt$${n}$${r}$${p}$${salt}$${hash}`,
    `scrypt$${n}$${r}$${p}$${salt}`,
    `scrypt$${n}$${r}$${p}$${salt}$${hash}$extra`,
    `scrypt$abc$${r}$${p}$${salt}$${hash}`,
    `scrypt$1000$${r}$${p}$${salt}$${hash}`, // not a power of two
    `scrypt$0$${r}$${p}$${salt}$${hash}`,
    `scrypt$1073741824$${r}$${p}$${salt}$${hash}`, // absurd cost
    `scrypt$${n}$0$${p}$${salt}$${hash}`,
    `scrypt$${n}$${r}$-1$${salt}$${hash}`,
    `scrypt$${n}$${r}$${p}$!!!$${hash}`,
    `scrypt$${n}$${r}$${p}$${salt}$`,
    `scrypt$${n}$${r}$${p}$${salt}$AAAA`, // too-short hash
  ];
  for (const s of bad) {
    assert.equal(await verifyPassword('pw', s), false, s);
  }
});

test('tampered hash is rejected', async () => {
  const stored = await hashPassword('pw');
  const parts = stored.split('$');
  const h = Buffer.from(parts[5]!, 'base64');
  h[0] = h[0]! ^ 1;
  parts[5] = h.toString('base64');
  assert.equal(await verifyPassword('pw', parts.join('$')), false);
});
