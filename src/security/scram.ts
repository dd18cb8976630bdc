/**
 * SCRAM-SHA-256 (RFC 5802, RFC 7677) verifiers, as PostgreSQL stores them in pg_authid:
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64). A verifier lets the
 * PostgreSQL listener check a client's proof without the password; it is kept beside the scrypt
 * hash and made whenever vdb sees the password (set, changed, or a sign-in that checked it).
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';

/** PostgreSQL's default (scram_iterations). */
export const SCRAM_ITERATIONS = 4096;

export interface ScramVerifier {
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

const hmac = (key: Buffer, text: string | Buffer) => createHmac('sha256', key).update(text).digest();
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

/**
 * The password as SCRAM hashes it. SASLprep's normalization is NFKC; its other mappings (spaces,
 * soft hyphens) concern passwords vdb's users rarely have.
 */
const prepared = (password: string) => password.normalize('NFKC');

function saltedPassword(password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    pbkdf2(prepared(password), salt, iterations, 32, 'sha256', (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A new verifier of `password`, in PostgreSQL's text form. */
export async function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = SCRAM_ITERATIONS): Promise<string> {
  const salted = await saltedPassword(password, salt, iterations);
  const storedKey = sha256(hmac(salted, 'Client Key'));
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** The parts of a verifier's text; null when it is not one. */
export function parseVerifier(text: string | null | undefined): ScramVerifier | null {
  const match = /^SCRAM-SHA-256\$(\d{1,7}):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(text ?? '');
  if (!match) return null;
  const iterations = Number(match[1]);
  const storedKey = Buffer.from(match[3]!, 'base64');
  const serverKey = Buffer.from(match[4]!, 'base64');
  if (iterations < 1 || storedKey.length !== 32 || serverKey.length !== 32) return null;
  return { iterations, salt: Buffer.from(match[2]!, 'base64'), storedKey, serverKey };
}

/**
 * Checks a client's proof for `authMessage`; answers the server's signature (the client checks
 * it in turn) when the proof is right, else null.
 */
export function checkProof(verifier: ScramVerifier, authMessage: string, proof: Buffer): Buffer | null {
  if (proof.length !== 32) return null;
  const signature = hmac(verifier.storedKey, authMessage);
  const clientKey = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) clientKey[i] = proof[i]! ^ signature[i]!;
  if (!timingSafeEqual(sha256(clientKey), verifier.storedKey)) return null;
  return hmac(verifier.serverKey, authMessage);
}
