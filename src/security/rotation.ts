/**
 * The one-time rotation of the secrets that versions before 0.2.0 exposed: their SQL engine let
 * any signed-in user read secrets.json and catalog.json. The first start of a data directory
 * below SECURITY_EPOCH replaces the server secret, every user's token secret and link token, and
 * the encryption key (re-sealing every source secret under the new one), then records the epoch.
 *
 * Crash safety, over two stores that are each replaced atomically (files, or rows of the catalog database):
 *  1. secrets.json gets the new keys, the previous encryption key and `rotatingTo` (with
 *     VDB_ENCRYPTION_KEY set: only the new server secret, the sealed values stay as they are);
 *  2. catalog.json gets the new user secrets and every sealed value re-sealed under the new key
 *     (each opened with whichever of the two keys opens it);
 *  3. secrets.json gets `securityEpoch`, without the previous key.
 * A start that finds `rotatingTo` resumes at step 2 with the keys already in the file, so a crash
 * anywhere leaves a key that opens every sealed value.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CatalogStore } from '../catalog/store.js';
import type { CatalogData } from '../catalog/types.js';
import { randomToken } from './random.js';
import { isSealed, openSecret, sealSecret } from './secret-box.js';
import {
  encryptionKeyFromEnv,
  SECRET_BYTES,
  SECURITY_EPOCH,
  type SecretsStore,
  type ServerSecrets,
  type StoredSecrets,
  withEnvKey,
} from '../catalog/server-secrets.js';

/** Where the reasons and the steps for users are written down. */
const NOTES = 'docs/release-notes.md#020';

interface CatalogRotation {
  users: number;
  resealed: number;
  /** Sealed values that open with neither key (sealed under some other key): left as they are. */
  unopened: string[];
}

/**
 * Rotates the data directory's secrets if an earlier version exposed them, and returns the
 * secrets to run with (`loaded` itself when nothing was to do). Call once at start, before
 * anything uses the secrets or the catalog.
 */
export async function rotateExposedSecrets(
  secretsStore: SecretsStore,
  loaded: ServerSecrets,
  store: CatalogStore,
  log: Logger,
): Promise<ServerSecrets> {
  const stored = await secretsStore.loadOrCreate();
  if (stored.rotatingTo === undefined && stored.securityEpoch >= SECURITY_EPOCH) return loaded;
  const envKey = encryptionKeyFromEnv();

  // Step 1. A resumed rotation keeps the keys already written: the catalog may use them.
  let pending: StoredSecrets =
    stored.rotatingTo === undefined
      ? {
          serverSecret: randomBytes(SECRET_BYTES),
          encryptionKey: stored.encryptionKey,
          securityEpoch: stored.securityEpoch,
          rotatingTo: SECURITY_EPOCH,
        }
      : stored;
  if (envKey === null && pending.previousEncryptionKey === undefined) {
    pending = { ...pending, encryptionKey: randomBytes(SECRET_BYTES), previousEncryptionKey: pending.encryptionKey };
  }
  if (envKey !== null && pending.previousEncryptionKey !== undefined) {
    // The file's keys are mid-change and the environment's key might be one of them: do not guess.
    throw new Error(
      'secrets.json: an interrupted rotation is re-sealing source secrets under the key in this file; start vdb once without VDB_ENCRYPTION_KEY to complete it',
    );
  }
  if (pending !== stored) await secretsStore.write(pending);

  // Step 2. With VDB_ENCRYPTION_KEY the sealed values are under that key: they stay as they are.
  const keys =
    pending.previousEncryptionKey === undefined ? null : { current: pending.encryptionKey, previous: pending.previousEncryptionKey };
  const done = await store.update((catalog) => rotateCatalog(catalog, keys));

  // Step 3.
  await secretsStore.write({ serverSecret: pending.serverSecret, encryptionKey: pending.encryptionKey, securityEpoch: SECURITY_EPOCH });

  const replaced =
    keys === null
      ? 'the server secret'
      : `the server secret, the encryption key (${done.resealed} source secrets re-sealed under the new one)`;
  const sourcePasswords = keys === null ? '' : ' Source passwords could be decrypted with the old key: change them at the databases.';
  log.warn(
    { securityEpoch: SECURITY_EPOCH, users: done.users, resealedSecrets: done.resealed },
    `security upgrade: versions before 0.2.0 let signed-in users read secrets.json and catalog.json through SQL, so this first start replaced ${replaced} ` +
      `and every user's token secret and hosted link token. Every login token and hosted link has ended: users sign in again and read their new link from /rest/api/preferences. ` +
      `API keys still work (only their hashes were stored). Password hashes were readable: have every user change their password.${sourcePasswords} See ${NOTES}`,
  );
  if (envKey !== null) {
    log.warn(
      `security upgrade: VDB_ENCRYPTION_KEY is set, so vdb did not replace the key that seals the source secrets (it does not store it), and catalog.json with the sealed values was readable. ` +
        `Rotate VDB_ENCRYPTION_KEY and the source passwords as ${NOTES} describes`,
    );
  }
  if (done.unopened.length > 0) {
    log.warn(
      { values: done.unopened },
      'security upgrade: these sealed values open with neither the previous nor the new encryption key (sealed under another key, such as an earlier VDB_ENCRYPTION_KEY) and were left as they are',
    );
  }
  return withEnvKey(await secretsStore.loadOrCreate());
}

/** Step 2 on a draft of the catalog; `keys` null leaves the sealed values alone. */
function rotateCatalog(catalog: CatalogData, keys: { current: Buffer; previous: Buffer } | null): CatalogRotation {
  // Same sizes as users.ts gives new users.
  for (const user of catalog.users) {
    user.tokenSecret = randomToken();
    user.linkToken = randomToken(24);
  }
  const result: CatalogRotation = { users: catalog.users.length, resealed: 0, unopened: [] };
  if (keys === null) return result;
  for (const { where, secrets } of sealedValues(catalog)) {
    for (const [name, sealed] of Object.entries(secrets)) {
      const plain = openWithEither(sealed, keys);
      if (plain === null) {
        result.unopened.push(`${where} ${name}`);
        continue;
      }
      // Already under the new key: a rotation resumed after step 2 was written.
      if (plain.key === 'previous') secrets[name] = sealSecret(plain.value, keys.current);
      result.resealed++;
    }
  }
  return result;
}

/** Every map of sealed values in the catalog: sealSecret is used for these two only (sources/registry.ts). */
function sealedValues(catalog: CatalogData): Array<{ where: string; secrets: Record<string, string> }> {
  return [
    ...catalog.sources.map((s) => ({ where: `source "${s.name}"`, secrets: s.secrets })),
    ...(catalog.connections ?? []).map((c) => ({ where: `connection "${c.name}"`, secrets: c.secrets })),
  ];
}

function openWithEither(
  sealed: string,
  keys: { current: Buffer; previous: Buffer },
): { key: 'current' | 'previous'; value: string } | null {
  if (!isSealed(sealed)) return null;
  for (const key of ['current', 'previous'] as const) {
    try {
      return { key, value: openSecret(sealed, keys[key]) };
    } catch {
      // Not under this key; try the other.
    }
  }
  return null;
}
