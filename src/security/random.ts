// Small random / comparison helpers shared by the other security modules.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A random URL-safe token. The default 16 bytes gives 128 bits of entropy,
 * enough that guessing is infeasible.
 */
export function randomToken(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Constant-time string comparison. Both sides are hashed first so the two
 * buffers handed to timingSafeEqual always have the same length: this avoids
 * its length-mismatch throw and leaks nothing about the length of either input.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
