// Stateless login tokens: `<username>:<expiry epoch ms>:<signature>`.
//
// The signature key mixes three secrets:
//  - the server secret (tokens cannot be forged without the data dir),
//  - the application version (upgrading voids every outstanding token),
//  - a per-user secret (changing it, e.g. on password change, voids that user's tokens).
import { createHmac } from 'node:crypto';
import { safeEqual } from './random.js';

/** Tokens are valid for 30 days. */
export const TOKEN_LIFETIME_MS = 30 * 24 * 3600 * 1000;

const EXPIRY = /^[0-9]{1,16}$/;

/** Per-version signing key: HMAC-SHA256(serverSecret, "vdb-token-key:" + appVersion). */
export function deriveSigningKey(serverSecret: Buffer, appVersion: string): Buffer {
  return createHmac('sha256', serverSecret).update(`vdb-token-key:${appVersion}`, 'utf8').digest();
}

function signature(username: string, expiresAt: number | string, userSecret: string, signingKey: Buffer): string {
  // Per-user key so that a user's secret change only invalidates their own tokens.
  const userKey = createHmac('sha256', signingKey).update(userSecret, 'utf8').digest();
  // '\n' separator: usernames with ':' cannot be confused with the expiry field.
  return createHmac('sha256', userKey).update(`${username}\n${expiresAt}`, 'utf8').digest('base64url');
}

/** Create a token for `username` valid until `expiresAt` (epoch ms). */
export function signToken(username: string, expiresAt: number, userSecret: string, signingKey: Buffer): string {
  if (!Number.isSafeInteger(expiresAt) || expiresAt < 0) throw new Error('invalid token expiry');
  return `${username}:${expiresAt}:${signature(username, expiresAt, userSecret, signingKey)}`;
}

/**
 * Returns the username of a valid, unexpired token, or null. Never throws:
 * any malformed input is simply an invalid token.
 */
export function verifyToken(
  token: string,
  signingKey: Buffer,
  userSecretOf: (username: string) => string | undefined,
  now = Date.now(),
): string | null {
  try {
    if (typeof token !== 'string') return null;
    // Parse from the right: the username itself may contain ':'.
    const sigSep = token.lastIndexOf(':');
    if (sigSep <= 0) return null;
    const expSep = token.lastIndexOf(':', sigSep - 1);
    if (expSep <= 0) return null; // also rejects an empty username
    const username = token.slice(0, expSep);
    const expiryStr = token.slice(expSep + 1, sigSep);
    const sig = token.slice(sigSep + 1);
    if (!EXPIRY.test(expiryStr) || sig === '') return null;
    const expiresAt = Number(expiryStr);
    if (!Number.isSafeInteger(expiresAt) || expiresAt <= now) return null;
    const userSecret = userSecretOf(username);
    if (userSecret === undefined) return null;
    // Recompute over the exact expiry text received, so a re-spelling such as
    // leading zeros does not yield a second valid token.
    const expected = signature(username, expiryStr, userSecret, signingKey);
    return safeEqual(sig, expected) ? username : null;
  } catch {
    return null;
  }
}

/**
 * Tokens verified before, so that a client sending the same token on every request pays the
 * two HMACs once: remembered with the user's secret they were signed with, so a rotated secret
 * (new password, revoked tokens) or a deleted user voids them as it voids the token itself.
 * Bounded; the oldest entry goes first.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { username: string; userSecret: string; expiresAt: number }>();
  /** Tokens answered without verifying them again (the metrics show them). */
  hits = 0;

  constructor(private readonly capacity = 10_000) {}

  /** The username of a token verified before and still valid, or undefined (verify it then). */
  lookup(token: string, userSecretOf: (username: string) => string | undefined, now: number): string | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.expiresAt > now && userSecretOf(entry.username) === entry.userSecret) {
      this.hits++;
      return entry.username;
    }
    this.entries.delete(token);
    return undefined;
  }

  remember(token: string, username: string, userSecret: string): void {
    const expiresAt = Number(token.slice(token.lastIndexOf(':', token.lastIndexOf(':') - 1) + 1, token.lastIndexOf(':')));
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, { username, userSecret, expiresAt });
  }
}
