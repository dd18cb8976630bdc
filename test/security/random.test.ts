import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomToken, safeEqual } from '../../src/security/random.js';

test('randomToken is base64url with >= 128 bits by default', () => {
  const t = randomToken();
  assert.match(t, /^[A-Za-z0-9_-]+$/);
  assert.equal(Buffer.from(t, 'base64url').length, 16);
  assert.notEqual(randomToken(), randomToken());
  assert.equal(Buffer.from(randomToken(32), 'base64url').length, 32);
});

test('safeEqual', () => {
  assert.equal(safeEqual('abc', 'abc'), true);
  assert.equal(safeEqual('', ''), true);
  assert.equal(safeEqual('abc', 'abd'), false);
  assert.equal(safeEqual('abc', 'abcd'), false);
  assert.equal(safeEqual('', 'a'), false);
});
