/**
 * Invitations (spec 5.2): an administrator invites a user by name and hands over a one-time
 * token (256 random bits, stored as its SHA-256 only); the invited person turns it into a
 * password user with POST /api/invite/accept. A token works once, until it expires.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { CatalogStore } from '../catalog/store.js';
import { ApiError, badRequest } from '../errors.js';
import { safeEqual } from './random.js';
import type { UserService } from './users.js';

const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

export const INVITE_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export class InviteService {
  constructor(
    private readonly store: CatalogStore,
    private readonly users: UserService,
    private readonly lifetimeMs = INVITE_LIFETIME_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates an invitation for `name`; the returned token is shown once. */
  async invite(name: string): Promise<{ token: string; expiresAt: string }> {
    if (!/^[^\s:]{1,128}$/.test(name))
      throw badRequest(`"${name}" is not a valid user name.`, 'Use 1 to 128 characters without spaces or colons.');
    if (this.users.find(name)) throw badRequest(`User "${name}" already exists.`);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.now() + this.lifetimeMs).toISOString();
    await this.store.update((catalog) => {
      // A new invitation replaces an open one for the same name.
      const others = (catalog.invites ?? []).filter((i) => i.name !== name || i.usedAt !== null);
      catalog.invites = [...others, { name, hash: hashOf(token), expiresAt, createdAt: new Date(this.now()).toISOString(), usedAt: null }];
    });
    return { token, expiresAt };
  }

  /** Turns an invitation into a password user; 400 for an unknown or used token, 410 when expired. */
  async accept(token: string, password: string): Promise<string> {
    const hash = hashOf(token);
    const invite = (this.store.current.invites ?? []).find((i) => safeEqual(i.hash, hash));
    if (!invite || invite.usedAt !== null) {
      throw badRequest(
        'This invitation is unknown or was already used.',
        'Ask an administrator for a new invitation.',
        'Invalid invitation',
      );
    }
    if (Date.parse(invite.expiresAt) <= this.now()) {
      throw new ApiError(
        410,
        'Invitation expired',
        `This invitation expired at ${invite.expiresAt}.`,
        'Ask an administrator for a new invitation.',
      );
    }
    await this.users.addPasswordUser(invite.name, password);
    await this.store.update((catalog) => {
      const stored = (catalog.invites ?? []).find((i) => i.hash === hash);
      if (stored) stored.usedAt = new Date(this.now()).toISOString();
    });
    return invite.name;
  }
}
