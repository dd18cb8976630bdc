// Authenticated encryption at rest for data-source secrets (passwords, keys).
// Format: `v1:<iv b64>:<tag b64>:<ciphertext b64>`; the version prefix leaves
// room to change the algorithm later.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12; // GCM's native nonce size; random is safe for our low volume.
const TAG_BYTES = 16;

const B64 = '(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?';
const SEALED = new RegExp(`^v1:(${B64}):(${B64}):(${B64})$`);

function checkKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) throw new Error('encryption key must be 32 bytes');
}

/** Encrypt and authenticate `plaintext` with a 32-byte key. */
export function sealSecret(plaintext: string, key: Buffer): string {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `v1:${iv.toString('base64')}:${tag.toString('base64')}:${ciphertext.toString('base64')}`;
}

/**
 * Decrypt a value made by sealSecret. Any failure (malformed, tampered, wrong
 * key) gives the same generic error so nothing about the cause leaks.
 */
export function openSecret(sealed: string, key: Buffer): string {
  checkKey(key);
  const m = typeof sealed === 'string' ? SEALED.exec(sealed) : null;
  if (!m) throw new Error('cannot decrypt secret');
  const iv = Buffer.from(m[1]!, 'base64');
  const tag = Buffer.from(m[2]!, 'base64');
  const ciphertext = Buffer.from(m[3]!, 'base64');
  // Insist on full-length IV and tag: GCM would otherwise accept truncated tags.
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('cannot decrypt secret');
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('cannot decrypt secret');
  }
}

/** True if `value` looks like the output of sealSecret (does not check the key). */
export function isSealed(value: string): boolean {
  return typeof value === 'string' && SEALED.test(value);
}
