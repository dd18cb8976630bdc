// Per-installation secrets, generated on first start and kept in the data dir.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface ServerSecrets {
  /** Root of token signing keys. */
  serverSecret: Buffer;
  /** AES-256 key for data-source secrets at rest. */
  encryptionKey: Buffer;
}

/**
 * Raised when a release must replace secrets that earlier versions exposed (see rotation.ts).
 * A file written by this version starts at it; a file without one is from epoch 1.
 */
export const SECURITY_EPOCH = 2;

/** secrets.json as stored, without VDB_ENCRYPTION_KEY applied. */
export interface StoredSecrets extends ServerSecrets {
  /** The last rotation completed (rotation.ts). */
  securityEpoch: number;
  /** Set while a rotation to that epoch is under way. */
  rotatingTo?: number;
  /** During a rotation: the replaced encryption key, kept until every sealed value is re-sealed. */
  previousEncryptionKey?: Buffer;
}

export const SECRET_BYTES = 32;
const FILE_NAME = 'secrets.json';
const ENV_KEY = 'VDB_ENCRYPTION_KEY';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// Strict decode: a truncated or mistyped key must fail loudly, not yield a
// different key that silently makes stored secrets unreadable.
function decodeKey(value: unknown, what: string): Buffer {
  if (typeof value !== 'string' || !BASE64.test(value.trim())) throw new Error(`${what} is not valid base64`);
  const buf = Buffer.from(value.trim(), 'base64');
  if (buf.length !== SECRET_BYTES) throw new Error(`${what} must be ${SECRET_BYTES} bytes`);
  return buf;
}

function decodeEpoch(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new Error(`${what} is not a positive integer`);
  return value;
}

function readSecretsFile(path: string): StoredSecrets {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`${path} is malformed`);
  const obj = parsed as Record<string, unknown>;
  const stored: StoredSecrets = {
    serverSecret: decodeKey(obj.serverSecret, `${path} serverSecret`),
    encryptionKey: decodeKey(obj.encryptionKey, `${path} encryptionKey`),
    securityEpoch: obj.securityEpoch === undefined ? 1 : decodeEpoch(obj.securityEpoch, `${path} securityEpoch`),
  };
  if (obj.rotatingTo !== undefined) stored.rotatingTo = decodeEpoch(obj.rotatingTo, `${path} rotatingTo`);
  if (obj.previousEncryptionKey !== undefined)
    stored.previousEncryptionKey = decodeKey(obj.previousEncryptionKey, `${path} previousEncryptionKey`);
  return stored;
}

function serialize(stored: StoredSecrets): string {
  return (
    JSON.stringify(
      {
        serverSecret: stored.serverSecret.toString('base64'),
        encryptionKey: stored.encryptionKey.toString('base64'),
        securityEpoch: stored.securityEpoch,
        rotatingTo: stored.rotatingTo,
        previousEncryptionKey: stored.previousEncryptionKey?.toString('base64'),
      },
      null,
      2,
    ) + '\n'
  );
}

// Write via temp file + fsync + rename so a crash never leaves a half-written
// secrets file (which would lock us out of everything encrypted with it).
function writeAtomically(dir: string, path: string, content: string): void {
  const tmp = join(dir, `.${FILE_NAME}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  // 'wx' + 0o600: created fresh and private from the start, never world-readable.
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    try {
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw err;
  }
  // Persist the rename itself (best effort: not all platforms can fsync a directory).
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    /* ignore */
  }
}

/**
 * Load `<dataDir>/secrets.json`, creating it (and dataDir) on first use.
 * VDB_ENCRYPTION_KEY, if set, overrides the encryption key without being
 * written to disk, so it can live in a separate secret store.
 */
export function loadOrCreateServerSecrets(dataDir: string): ServerSecrets {
  // 0o700 only applies if we create the directory; an existing one is left alone.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, FILE_NAME);

  let secrets: ServerSecrets;
  try {
    secrets = readSecretsFile(path);
  } catch (err) {
    // Only a missing file means "first start"; a corrupt one must not be replaced.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // New secrets were never exposed: the file is born at the current epoch.
    const created: StoredSecrets = {
      serverSecret: randomBytes(SECRET_BYTES),
      encryptionKey: randomBytes(SECRET_BYTES),
      securityEpoch: SECURITY_EPOCH,
    };
    writeAtomically(dataDir, path, serialize(created));
    secrets = created;
  }

  const envKey = encryptionKeyFromEnv();
  return { serverSecret: secrets.serverSecret, encryptionKey: envKey ?? secrets.encryptionKey };
}

/** The key in VDB_ENCRYPTION_KEY, or null when it is not set. */
export function encryptionKeyFromEnv(): Buffer | null {
  const value = process.env[ENV_KEY];
  return value === undefined || value === '' ? null : decodeKey(value, ENV_KEY);
}

/** Reads `<dataDir>/secrets.json` as stored (for rotation.ts); it must exist. */
export function readStoredSecrets(dataDir: string): StoredSecrets {
  return readSecretsFile(join(dataDir, FILE_NAME));
}

/** Replaces `<dataDir>/secrets.json` atomically (for rotation.ts). */
export function writeStoredSecrets(dataDir: string, stored: StoredSecrets): void {
  writeAtomically(dataDir, join(dataDir, FILE_NAME), serialize(stored));
}
