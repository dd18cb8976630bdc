import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isSealed, openSecret, sealSecret } from '../../src/security/secret-box.js';

const key = randomBytes(32);

test('roundtrip', () => {
  for (const s of ['', 'p@ssw0rd', 'ünïcødé ✓', 'x'.repeat(10_000)]) {
    const sealed = sealSecret(s, key);
    assert.match(sealed, /^v1:[^:]+:[^:]+:[^:]*$/);
    assert.equal(isSealed(sealed), true);
    assert.equal(openSecret(sealed, key), s);
  }
});

test('random IV: same plaintext seals differently', () => {
  const a = sealSecret('same', key);
  const b = sealSecret('same', key);
  assert.notEqual(a, b);
  assert.equal(Buffer.from(a.split(':')[1]!, 'base64').length, 12);
});

function flip(b64: string): string {
  const buf = Buffer.from(b64, 'base64');
  buf[0] = buf[0]! ^ 1;
  return buf.toString('base64');
}

test('tampering is detected', () => {
  const sealed = sealSecret('secret value', key);
  const [v, iv, tag, ct] = sealed.split(':') as [string, string, string, string];
  const tampered = [
    `${v}:${flip(iv)}:${tag}:${ct}`,
    `${v}:${iv}:${flip(tag)}:${ct}`,
    `${v}:${iv}:${tag}:${flip(ct)}`,
    `${v}:${iv}:${Buffer.from(tag, 'base64').subarray(0, 4).toString('base64')}:${ct}`, // truncated tag
    `${v}:${iv}:${tag}:`,
    `v2:${iv}:${tag}:${ct}`,
    'not sealed',
    '',
  ];
  for (const t of tampered) {
    assert.throws(() => openSecret(t, key), { message: 'cannot decrypt secret' }, t);
  }
});

test('wrong key fails', () => {
  const sealed = sealSecret('secret value', key);
  assert.throws(() => openSecret(sealed, randomBytes(32)), { message: 'cannot decrypt secret' });
});

test('key must be 32 bytes', () => {
  assert.throws(() => sealSecret('x', randomBytes(16)));
});

test('isSealed', () => {
  assert.equal(isSealed('plain password'), false);
  assert.equal(isSealed('v1:abc'), false);
  assert.equal(isSealed(''), false);
});
