/** The one-time rotation of the secrets that versions before 0.2.0 exposed (security/rotation.ts). */
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { FileCatalogStore } from '../../src/catalog/file-store.js';
import type { CatalogData } from '../../src/catalog/types.js';
import { rotateExposedSecrets } from '../../src/security/rotation.js';
import { openSecret, sealSecret } from '../../src/security/secret-box.js';
import { FileSecretsStore, loadOrCreateServerSecrets, type ServerSecrets } from '../../src/catalog/server-secrets.js';
import { deriveSigningKey } from '../../src/security/tokens.js';
import { UserService } from '../../src/security/users.js';
import { ADMIN_PASSWORD, startTestServer } from '../helpers/server.js';

let dir: string;
const savedEnv = process.env.VDB_ENCRYPTION_KEY;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-rotation-'));
  delete process.env.VDB_ENCRYPTION_KEY;
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  if (savedEnv === undefined) delete process.env.VDB_ENCRYPTION_KEY;
  else process.env.VDB_ENCRYPTION_KEY = savedEnv;
});

const VERSION = '0.2.0';
const secretsFile = () => path.join(dir, 'secrets.json');
const catalogFile = () => path.join(dir, 'catalog.json');
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
const readCatalog = () => readJson(catalogFile()) as unknown as CatalogData;
const b64 = (key: Buffer) => key.toString('base64');

interface LogLine {
  level: number;
  msg: string;
  values?: string[];
}

function capture(): { log: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { log: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) }), lines };
}

/** A data directory as 0.1.0 left it: secrets.json without an epoch, a user, a source and a stored connection. */
function oldDataDir(sealingKey?: Buffer): { old: ServerSecrets; catalog: CatalogData } {
  const old = { serverSecret: randomBytes(32), encryptionKey: randomBytes(32) };
  fs.writeFileSync(secretsFile(), JSON.stringify({ serverSecret: b64(old.serverSecret), encryptionKey: b64(old.encryptionKey) }, null, 2), {
    mode: 0o600,
  });
  const key = sealingKey ?? old.encryptionKey;
  const catalog: CatalogData = {
    formatVersion: 1,
    sources: [
      {
        name: 'crm',
        kind: 'postgresql',
        connection: { host: '127.0.0.1', port: '5432', db: 'crm', 'user-name': 'reader' },
        secrets: { password: sealSecret('crm-db-password', key) },
        model: {},
        translator: {},
        description: null,
        readOnly: false,
        createdAt: '2026-01-01T00:00:00.000Z',
        tables: [],
        oid: 1000,
      },
    ],
    connections: [
      { name: 'later', kind: 'mysql', connection: { host: '127.0.0.1' }, secrets: { password: sealSecret('later-db-password', key) } },
    ],
    users: [
      {
        name: 'alice',
        kind: 'password',
        passwordHash: 'scrypt$not-checked-here',
        tokenSecret: 'old-token-secret',
        databaseUsername: 'alice',
        rest: true,
        linkToken: 'old-link-token-old-link-token-ol',
        roles: ['admin'],
        createdAt: '2026-01-01T00:00:00.000Z',
      },
    ],
    initialized: true,
    nextOid: 1001,
  };
  fs.writeFileSync(catalogFile(), JSON.stringify(catalog, null, 2), { mode: 0o600 });
  return { old, catalog };
}

/** What a start does: load the secrets, open the catalog, rotate. */
async function start(log = capture().log, store = new FileCatalogStore(dir)): Promise<ServerSecrets> {
  return rotateExposedSecrets(new FileSecretsStore(dir), loadOrCreateServerSecrets(dir), store, log);
}

function tokenFor(secrets: ServerSecrets): string {
  const store = new FileCatalogStore(dir);
  const users = new UserService(store, deriveSigningKey(secrets.serverSecret, VERSION));
  return users.issueToken(users.find('alice')!);
}

function userOfToken(secrets: ServerSecrets, token: string): string | null {
  return new UserService(new FileCatalogStore(dir), deriveSigningKey(secrets.serverSecret, VERSION)).userOfToken(token)?.name ?? null;
}

test('an old data directory is rotated: new keys, re-sealed secrets, ended tokens and links, one warning', async () => {
  const { old } = oldDataDir();
  const oldToken = tokenFor(old);
  assert.equal(userOfToken(old, oldToken), 'alice');
  const { log, lines } = capture();

  const secrets = await start(log);

  assert.notDeepEqual(secrets.serverSecret, old.serverSecret);
  assert.notDeepEqual(secrets.encryptionKey, old.encryptionKey);
  assert.deepEqual(readJson(secretsFile()), {
    serverSecret: b64(secrets.serverSecret),
    encryptionKey: b64(secrets.encryptionKey),
    securityEpoch: 2,
  });
  const catalog = readCatalog();
  const sealed = catalog.sources[0]!.secrets.password!;
  assert.equal(openSecret(sealed, secrets.encryptionKey), 'crm-db-password');
  assert.throws(() => openSecret(sealed, old.encryptionKey));
  assert.equal(openSecret(catalog.connections![0]!.secrets.password!, secrets.encryptionKey), 'later-db-password');
  const alice = catalog.users[0]!;
  assert.notEqual(alice.tokenSecret, 'old-token-secret');
  assert.notEqual(alice.linkToken, 'old-link-token-old-link-token-ol');
  assert.equal(alice.linkToken.length, 32);
  assert.equal(alice.passwordHash, 'scrypt$not-checked-here');
  // Neither the new server secret nor the old one accepts a token issued before.
  assert.equal(userOfToken(secrets, oldToken), null);
  assert.equal(userOfToken(old, oldToken), null);
  assert.equal(userOfToken(secrets, tokenFor(secrets)), 'alice');

  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.level, 40);
  assert.match(lines[0]!.msg, /before 0\.2\.0/);
  assert.match(lines[0]!.msg, /Every login token and hosted link has ended/);
  assert.match(lines[0]!.msg, /API keys still work/);
  assert.match(lines[0]!.msg, /change their password/);
  assert.match(lines[0]!.msg, /2 source secrets re-sealed/);
});

test('a second start changes nothing', async () => {
  oldDataDir();
  const first = await start();
  const secretsText = fs.readFileSync(secretsFile(), 'utf8');
  const catalogText = fs.readFileSync(catalogFile(), 'utf8');
  const { log, lines } = capture();
  const second = await start(log);
  assert.deepEqual(second, first);
  assert.equal(fs.readFileSync(secretsFile(), 'utf8'), secretsText);
  assert.equal(fs.readFileSync(catalogFile(), 'utf8'), catalogText);
  assert.deepEqual(lines, []);
});

test('a fresh data directory is born rotated', async () => {
  const { log, lines } = capture();
  const loaded = loadOrCreateServerSecrets(dir);
  assert.equal(readJson(secretsFile()).securityEpoch, 2);
  const secrets = await rotateExposedSecrets(new FileSecretsStore(dir), loaded, new FileCatalogStore(dir), log);
  assert.deepEqual(secrets, loaded);
  assert.deepEqual(lines, []);
  assert.deepEqual(fs.readdirSync(dir), ['secrets.json']);
});

/** A store that "crashes": before writing (crashAfterWrite false) or right after. */
class CrashingStore extends FileCatalogStore {
  constructor(
    dataDir: string,
    private readonly crashAfterWrite: boolean,
  ) {
    super(dataDir);
  }

  override async update<T>(change: (draft: CatalogData) => T): Promise<T> {
    if (this.crashAfterWrite) await super.update(change);
    throw new Error('simulated crash');
  }
}

for (const crashAfterWrite of [false, true]) {
  test(`a rotation interrupted ${crashAfterWrite ? 'after' : 'before'} the catalog was written completes on the next start`, async () => {
    const { old } = oldDataDir();
    const oldToken = tokenFor(old);
    const { log, lines } = capture();
    await assert.rejects(start(log, new CrashingStore(dir, crashAfterWrite)), /simulated crash/);
    assert.deepEqual(lines, []);
    const pending = readJson(secretsFile());
    assert.equal(pending.rotatingTo, 2);
    assert.equal(pending.previousEncryptionKey, b64(old.encryptionKey));
    // The password opens with one of the two keys in the file at every point.
    const sealed = readCatalog().sources[0]!.secrets.password!;
    const keys = [pending.encryptionKey, pending.previousEncryptionKey].map((k) => Buffer.from(String(k), 'base64'));
    assert.ok(
      keys.some((k) => {
        try {
          return openSecret(sealed, k) === 'crm-db-password';
        } catch {
          return false;
        }
      }),
    );

    const again = capture();
    const secrets = await start(again.log);
    assert.equal(b64(secrets.encryptionKey), pending.encryptionKey);
    assert.equal(b64(secrets.serverSecret), pending.serverSecret);
    assert.deepEqual(readJson(secretsFile()), {
      serverSecret: pending.serverSecret,
      encryptionKey: pending.encryptionKey,
      securityEpoch: 2,
    });
    assert.equal(openSecret(readCatalog().sources[0]!.secrets.password!, secrets.encryptionKey), 'crm-db-password');
    assert.equal(openSecret(readCatalog().connections![0]!.secrets.password!, secrets.encryptionKey), 'later-db-password');
    assert.equal(userOfToken(secrets, oldToken), null);
    assert.equal(again.lines.length, 1);
  });
}

test('a crash between the two secrets.json writes (pending state left by hand) completes', async () => {
  const { old } = oldDataDir();
  const next = randomBytes(32);
  const server = randomBytes(32);
  fs.writeFileSync(
    secretsFile(),
    JSON.stringify({
      serverSecret: b64(server),
      encryptionKey: b64(next),
      securityEpoch: 1,
      rotatingTo: 2,
      previousEncryptionKey: b64(old.encryptionKey),
    }),
  );
  const secrets = await start();
  assert.deepEqual(secrets, { serverSecret: server, encryptionKey: next });
  assert.equal(openSecret(readCatalog().sources[0]!.secrets.password!, next), 'crm-db-password');
  assert.equal(readJson(secretsFile()).securityEpoch, 2);
});

test('with VDB_ENCRYPTION_KEY the sealed values and the key stay; the server secret and user secrets are replaced', async () => {
  const envKey = randomBytes(32);
  process.env.VDB_ENCRYPTION_KEY = b64(envKey);
  const { old, catalog: before } = oldDataDir(envKey);
  const oldToken = tokenFor(loadOrCreateServerSecrets(dir));
  const { log, lines } = capture();

  const secrets = await start(log);

  assert.deepEqual(secrets.encryptionKey, envKey);
  assert.notDeepEqual(secrets.serverSecret, old.serverSecret);
  // The file's key is left too: an operator may have copied it into the environment.
  assert.deepEqual(readJson(secretsFile()), {
    serverSecret: b64(secrets.serverSecret),
    encryptionKey: b64(old.encryptionKey),
    securityEpoch: 2,
  });
  const catalog = readCatalog();
  assert.deepEqual(catalog.sources[0]!.secrets, before.sources[0]!.secrets);
  assert.deepEqual(catalog.connections![0]!.secrets, before.connections![0]!.secrets);
  assert.notEqual(catalog.users[0]!.tokenSecret, 'old-token-secret');
  assert.notEqual(catalog.users[0]!.linkToken, before.users[0]!.linkToken);
  assert.equal(userOfToken(secrets, oldToken), null);

  assert.equal(lines.length, 2);
  assert.ok(lines.every((l) => l.level === 40));
  assert.doesNotMatch(lines[0]!.msg, /encryption key/);
  assert.match(lines[1]!.msg, /Rotate VDB_ENCRYPTION_KEY/);
  assert.match(lines[1]!.msg, /release-notes\.md/);
});

test('an interrupted re-sealing is not resumed under VDB_ENCRYPTION_KEY', async () => {
  oldDataDir();
  await assert.rejects(start(capture().log, new CrashingStore(dir, false)));
  const secretsText = fs.readFileSync(secretsFile(), 'utf8');
  process.env.VDB_ENCRYPTION_KEY = b64(randomBytes(32));
  await assert.rejects(start(), /without VDB_ENCRYPTION_KEY/);
  assert.equal(fs.readFileSync(secretsFile(), 'utf8'), secretsText);
});

test('a sealed value that opens with neither key is left as it is and named in a warning', async () => {
  const { old } = oldDataDir();
  const foreign = sealSecret('unknown', randomBytes(32));
  const catalog = readCatalog();
  catalog.connections![0]!.secrets.password = foreign;
  fs.writeFileSync(catalogFile(), JSON.stringify(catalog));
  const { log, lines } = capture();
  const secrets = await start(log);
  assert.notDeepEqual(secrets.encryptionKey, old.encryptionKey);
  assert.equal(readCatalog().connections![0]!.secrets.password, foreign);
  assert.equal(openSecret(readCatalog().sources[0]!.secrets.password!, secrets.encryptionKey), 'crm-db-password');
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[1]!.values, ['connection "later" password']);
});

test('a server started on a data directory of an earlier version ends the tokens issued before', async () => {
  const first = await startTestServer({ dataDir: dir });
  const login = async (url: string) =>
    fetch(`${url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
    });
  const { token } = (await (await login(first.url)).json()) as { token: string };
  await first.close();
  // What 0.1.0 wrote: the same keys, no epoch.
  const stored = readJson(secretsFile());
  fs.writeFileSync(secretsFile(), JSON.stringify({ serverSecret: stored.serverSecret, encryptionKey: stored.encryptionKey }));

  const second = await startTestServer({ dataDir: dir });
  try {
    const status = await fetch(`${second.url}/rest/api/status`, { headers: { 'x-auth-token': token } });
    assert.equal(status.status, 401);
    assert.equal((await login(second.url)).status, 200);
    assert.equal(readJson(secretsFile()).securityEpoch, 2);
    assert.notEqual(readJson(secretsFile()).serverSecret, stored.serverSecret);
  } finally {
    await second.close();
  }
});
