/**
 * API keys (spec 5.4, application authentication): a user creates keys for applications, sent as
 * `Authorization: Bearer <key>`. A key is shown once; only its SHA-256 is stored (it holds 256
 * random bits, so a slow hash adds nothing). Keys may expire and may be read-only.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { CatalogStore } from '../catalog/store.js';
import type { ApiKeyDef, UserDef } from '../catalog/types.js';
import { badRequest, notFound } from '../errors.js';
import { safeEqual } from './random.js';

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('base64url');

export interface NewApiKey {
  name: string;
  expiresAt: string | null;
  readOnly: boolean;
}

/** A key as its owner sees it: everything but the secret. */
export type ApiKeyView = Omit<ApiKeyDef, 'hash'>;

export class ApiKeyService {
  constructor(
    private readonly store: CatalogStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates a key; the returned `key` is the only time the secret is seen. */
  async create(owner: UserDef, spec: NewApiKey): Promise<ApiKeyView & { key: string }> {
    if (spec.name.trim() === '' || spec.name.length > 200) throw badRequest('"name" must be 1 to 200 characters.', null, 'Invalid API key');
    if (spec.expiresAt !== null && !(Date.parse(spec.expiresAt) > this.now())) {
      throw badRequest('"expiresAt" must be a date-time in the future (ISO-8601).', 'Example: 2027-01-01T00:00:00Z', 'Invalid API key');
    }
    const id = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const def: ApiKeyDef = {
      id,
      owner: owner.name,
      name: spec.name,
      hash: hashOf(secret),
      expiresAt: spec.expiresAt === null ? null : new Date(spec.expiresAt).toISOString(),
      readOnly: spec.readOnly,
      createdAt: new Date(this.now()).toISOString(),
    };
    await this.store.update((catalog) => {
      catalog.apiKeys = [...(catalog.apiKeys ?? []), def];
    });
    const { hash: _hash, ...view } = def;
    return { ...view, key: `vdb_${id}_${secret}` };
  }

  list(owner: UserDef): ApiKeyView[] {
    return (this.store.current.apiKeys ?? []).filter((k) => k.owner === owner.name).map(({ hash: _hash, ...view }) => view);
  }

  async revoke(owner: UserDef, id: string): Promise<void> {
    await this.store.update((catalog) => {
      const keys = catalog.apiKeys ?? [];
      if (!keys.some((k) => k.id === id && k.owner === owner.name))
        throw notFound(`API key "${id}" does not exist.`, 'GET /rest/api/keys lists your keys.', 'Unknown API key');
      catalog.apiKeys = keys.filter((k) => k.id !== id);
    });
  }

  /** The key's definition when `presented` is a valid, unexpired key; else null. */
  verify(presented: string): ApiKeyDef | null {
    const match = /^vdb_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/.exec(presented);
    if (!match) return null;
    const key = (this.store.current.apiKeys ?? []).find((k) => k.id === match[1]);
    if (!key || !safeEqual(key.hash, hashOf(match[2]!))) return null;
    if (key.expiresAt !== null && Date.parse(key.expiresAt) <= this.now()) return null;
    return key;
  }
}
