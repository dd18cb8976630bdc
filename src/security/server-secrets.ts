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

const SECRET_BYTES = 32;
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

function readSecretsFile(path: string): ServerSecrets {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`${path} is malformed`);
  const obj = parsed as Record<string, unknown>;
  return {
    serverSecret: decodeKey(obj.serverSecret, `${path} serverSecret`),
    encryptionKey: decodeKey(obj.encryptionKey, `${path} encryptionKey`),
  };
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
    try { unlinkSync(tmp); } catch { /* already gone */ }
    throw err;
  }
  // Persist the rename itself (best effort: not all platforms can fsync a directory).
  try {
    const dfd = openSync(dir, 'r');
    try { fsyncSync(dfd); } finally { closeSync(dfd); }
  } catch { /* ignore */ }
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
    secrets = { serverSecret: randomBytes(SECRET_BYTES), encryptionKey: randomBytes(SECRET_BYTES) };
    const content = JSON.stringify(
      { serverSecret: secrets.serverSecret.toString('base64'), encryptionKey: secrets.encryptionKey.toString('base64') },
      null,
      2,
    ) + '\n';
    writeAtomically(dataDir, path, content);
  }

  const envKey = process.env[ENV_KEY];
  if (envKey !== undefined && envKey !== '') {
    secrets = { ...secrets, encryptionKey: decodeKey(envKey, ENV_KEY) };
  }
  return secrets;
}
