// Per-installation secrets, generated on first start and kept in the data dir.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { storageWriteFailure } from '../runtime/storage-errors.js';

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
  return decodeStored(parsed as Record<string, unknown>, path);
}

/** Secrets as stored (base64 keys), checked strictly; `where` names the place in errors. */
export function decodeStored(obj: Record<string, unknown>, where: string): StoredSecrets {
  const present = (value: unknown) => value !== undefined && value !== null;
  const stored: StoredSecrets = {
    serverSecret: decodeKey(obj.serverSecret, `${where} serverSecret`),
    encryptionKey: decodeKey(obj.encryptionKey, `${where} encryptionKey`),
    securityEpoch: present(obj.securityEpoch) ? decodeEpoch(obj.securityEpoch, `${where} securityEpoch`) : 1,
  };
  if (present(obj.rotatingTo)) stored.rotatingTo = decodeEpoch(obj.rotatingTo, `${where} rotatingTo`);
  if (present(obj.previousEncryptionKey))
    stored.previousEncryptionKey = decodeKey(obj.previousEncryptionKey, `${where} previousEncryptionKey`);
  return stored;
}

/** The stored form of `stored`: keys in base64, absent fields undefined. */
export function encodeStored(stored: StoredSecrets): Record<string, string | number | undefined> {
  return {
    serverSecret: stored.serverSecret.toString('base64'),
    encryptionKey: stored.encryptionKey.toString('base64'),
    securityEpoch: stored.securityEpoch,
    rotatingTo: stored.rotatingTo,
    previousEncryptionKey: stored.previousEncryptionKey?.toString('base64'),
  };
}

function serialize(stored: StoredSecrets): string {
  return JSON.stringify(encodeStored(stored), null, 2) + '\n';
}

/** New secrets were never exposed: they are born at the current epoch. */
export function newStoredSecrets(): StoredSecrets {
  return { serverSecret: randomBytes(SECRET_BYTES), encryptionKey: randomBytes(SECRET_BYTES), securityEpoch: SECURITY_EPOCH };
}

/** The secrets to run with: the stored ones, with VDB_ENCRYPTION_KEY in place of the encryption key when set. */
export function withEnvKey(stored: ServerSecrets): ServerSecrets {
  return { serverSecret: stored.serverSecret, encryptionKey: encryptionKeyFromEnv() ?? stored.encryptionKey };
}

/** Where the server secrets are kept: secrets.json in the data directory, or the catalog database. */
export interface SecretsStore {
  /** The stored secrets, created at the current epoch when there are none yet. */
  loadOrCreate(): Promise<StoredSecrets>;
  /** Replaces them atomically (rotation.ts). */
  write(stored: StoredSecrets): Promise<void>;
}

/** secrets.json in the data directory. */
export class FileSecretsStore implements SecretsStore {
  constructor(private readonly dataDir: string) {}

  async loadOrCreate(): Promise<StoredSecrets> {
    loadOrCreateServerSecrets(this.dataDir);
    return readStoredSecrets(this.dataDir);
  }

  async write(stored: StoredSecrets): Promise<void> {
    try {
      writeStoredSecrets(this.dataDir, stored);
    } catch (err) {
      throw storageWriteFailure(err, 'the server secrets');
    }
  }
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
    const created = newStoredSecrets();
    writeAtomically(dataDir, path, serialize(created));
    secrets = created;
  }

  return withEnvKey(secrets);
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
