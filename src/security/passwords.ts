// Password hashing with scrypt (memory-hard, built into node:crypto).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Cost parameters for new hashes. N=2^14, r=8 uses 16 MiB per hash.
const N = 16384;
const R = 8;
const P = 1;
const SALT_BYTES = 16;
const KEY_BYTES = 32;

// Upper bounds accepted when *verifying*: the parameters come from a stored
// string, so cap them to keep a corrupted/hostile record from exhausting
// memory or CPU. They still allow raising the cost for future hashes.
const MAX_N = 1 << 20;
const MAX_R = 32;
const MAX_P = 16;
const MIN_KEY_BYTES = 16;
const MAX_KEY_BYTES = 64;

// Canonical (padded) standard base64; Buffer.from(.., 'base64') is lenient, so validate first.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DIGITS = /^[1-9][0-9]{0,9}$/;

// Hand-written wrapper: util.promisify picks the wrong overload of scrypt for typing.
function scryptAsync(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

// scrypt needs about 128*N*r bytes; Node's default maxmem (32 MiB) would reject
// legitimate larger parameters, so size the limit from the parameters themselves.
function options(n: number, r: number, p: number): ScryptOptions {
  return { N: n, r, p, maxmem: 128 * n * r * 2 + 1024 * 1024 };
}

/** Hash a password; the result embeds all parameters and the salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scryptAsync(password, salt, KEY_BYTES, options(N, R, P));
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/**
 * Check a password against a stored hash. Returns false (never throws) for a
 * wrong password or a malformed stored string, so callers cannot turn a bad
 * record into a 500 or an exception-based oracle.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  try {
    if (typeof password !== 'string' || typeof stored !== 'string') return false;
    const parts = stored.split('$');
    if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
    const [, nStr, rStr, pStr, saltB64, hashB64] = parts as [string, string, string, string, string, string];
    if (!DIGITS.test(nStr) || !DIGITS.test(rStr) || !DIGITS.test(pStr)) return false;
    const n = Number(nStr);
    const r = Number(rStr);
    const p = Number(pStr);
    // N must be a power of two greater than 1 (scrypt requirement).
    if (n < 2 || n > MAX_N || (n & (n - 1)) !== 0) return false;
    if (r > MAX_R || p > MAX_P) return false;
    if (!BASE64.test(saltB64) || !BASE64.test(hashB64) || saltB64 === '') return false;
    const salt = Buffer.from(saltB64, 'base64');
    const expected = Buffer.from(hashB64, 'base64');
    if (expected.length < MIN_KEY_BYTES || expected.length > MAX_KEY_BYTES) return false;
    const actual = await scryptAsync(password, salt, expected.length, options(n, r, p));
    // Same length by construction, so timingSafeEqual will not throw.
    return timingSafeEqual(actual, expected);
  } catch {
    return false;
  }
}
