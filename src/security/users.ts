/**
 * Users and the ways they prove who they are: password (HTTP Basic, login), signed token,
 * hosted link token. Users live in the catalog; only hashes and per-user secrets are stored.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { CatalogStore } from '../catalog/store.js';
import type { PermissionDef, UserDef } from '../catalog/types.js';
import { badRequest, notFound } from '../errors.js';
import { scramVerifier } from './scram.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { randomToken, safeEqual } from './random.js';
import { signToken, TOKEN_LIFETIME_MS, VerifiedTokens, verifyToken } from './tokens.js';

export const ADMIN_USER = 'admin';
/** The built-in role that may do everything. */
export const ADMIN_ROLE = 'admin';

function checkName(name: string): void {
  if (!/^[^\s:]{1,128}$/.test(name)) {
    throw badRequest(`"${name}" is not a valid user name.`, 'Use 1 to 128 characters without spaces or colons.');
  }
}

function checkPassword(password: string): void {
  if (password.length < 8) throw badRequest('The password is too short.', 'Use at least 8 characters.');
}

/** A hash of a random password: verified against when the user is unknown, so timing tells nothing. */
const decoyHash = hashPassword(randomToken());

/**
 * Recently verified passwords, so that HTTP Basic (credentials on every request) does not pay
 * the deliberately slow scrypt check each time. Keys are an HMAC of name and password under a
 * key that lives only in this process; an entry holds the hash it was verified against, so a
 * password change invalidates it at once. Only successes are cached, for a short time.
 */
class VerifiedPasswords {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, { passwordHash: string; until: number }>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 1000,
  ) {}

  private keyOf(name: string, password: string): string {
    return createHmac('sha256', this.key).update(name).update('\u0000').update(password).digest('base64');
  }

  has(name: string, password: string, passwordHash: string, now: number): boolean {
    const entry = this.entries.get(this.keyOf(name, password));
    return entry !== undefined && entry.until > now && entry.passwordHash === passwordHash;
  }

  add(name: string, password: string, passwordHash: string, now: number): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(this.keyOf(name, password), { passwordHash, until: now + this.ttlMs });
  }
}

export class UserService {
  private readonly verified = new VerifiedPasswords();
  /** Login tokens verified before: checked against the user's current secret, not signed again. */
  private readonly verifiedTokens = new VerifiedTokens();

  /** Login tokens answered from the verified-token cache since the start. */
  get tokenCacheHits(): number {
    return this.verifiedTokens.hits;
  }

  constructor(
    private readonly store: CatalogStore,
    private readonly signingKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  find(name: string): UserDef | undefined {
    return this.store.current.users.find((u) => u.name === name);
  }

  /**
   * Creates the admin user on first start. Returns the generated password when none was
   * configured (to be printed once), else null.
   */
  async ensureAdmin(configuredPassword: string | null): Promise<string | null> {
    if (this.find(ADMIN_USER)) return null;
    const password = configuredPassword ?? randomToken(18);
    try {
      await this.addPasswordUser(ADMIN_USER, password, ['admin']);
    } catch (err) {
      // Another instance sharing the catalog created it first.
      if (this.find(ADMIN_USER)) return null;
      throw err;
    }
    return configuredPassword ? null : password;
  }

  async addPasswordUser(name: string, password: string, roles: string[] = []): Promise<UserDef> {
    checkName(name);
    checkPassword(password);
    const passwordHash = await hashPassword(password);
    const scram = await scramVerifier(password);
    return this.store.update((catalog) => {
      if (catalog.users.some((u) => u.name === name)) throw badRequest(`User "${name}" already exists.`);
      const user: UserDef = {
        name,
        kind: 'password',
        passwordHash,
        scramVerifier: scram,
        tokenSecret: randomToken(),
        databaseUsername: name,
        rest: false,
        linkToken: randomToken(24),
        roles,
        createdAt: new Date(this.now()).toISOString(),
      };
      catalog.users.push(user);
      return user;
    });
  }

  /** A user who signs in through an external identity provider: no password, no REST. */
  async addExternalUser(name: string, provider: string): Promise<UserDef> {
    checkName(name);
    return this.store.update((catalog) => {
      if (catalog.users.some((u) => u.name === name)) throw badRequest(`User "${name}" already exists.`);
      const user: UserDef = {
        name,
        kind: 'external',
        provider,
        passwordHash: null,
        tokenSecret: randomToken(),
        databaseUsername: name,
        rest: false,
        linkToken: randomToken(24),
        roles: [],
        createdAt: new Date(this.now()).toISOString(),
      };
      catalog.users.push(user);
      return user;
    });
  }

  /** Removes a user: their tokens, link and credentials go with them. */
  async removeUser(name: string): Promise<void> {
    await this.store.update((catalog) => {
      if (!catalog.users.some((u) => u.name === name)) throw notFound(`User "${name}" does not exist.`, null, 'Unknown user');
      catalog.users = catalog.users.filter((u) => u.name !== name);
      // Their API keys go with them.
      catalog.apiKeys = (catalog.apiKeys ?? []).filter((k) => k.owner !== name);
    });
  }

  /** Voids every token issued to the user so far (a new token secret). */
  async revokeTokens(name: string): Promise<void> {
    await this.store.update((catalog) => {
      const user = catalog.users.find((u) => u.name === name);
      if (!user) throw notFound(`User "${name}" does not exist.`, null, 'Unknown user');
      user.tokenSecret = randomToken();
    });
  }

  /** Every role: the built-in `admin` and those added with addRole. */
  roles(): string[] {
    return [ADMIN_ROLE, ...(this.store.current.roles ?? [])];
  }

  async addRole(role: string): Promise<void> {
    if (!/^[A-Za-z_][\w.-]{0,127}$/.test(role))
      throw badRequest(`"${role}" is not a valid role name.`, 'Use letters, digits, _ . and -, starting with a letter.');
    await this.store.update((catalog) => {
      if (role === ADMIN_ROLE || (catalog.roles ?? []).includes(role)) throw badRequest(`Role "${role}" already exists.`);
      catalog.roles = [...(catalog.roles ?? []), role];
    });
  }

  /** Removes a role and takes it from every user who had it. */
  async removeRole(role: string): Promise<void> {
    if (role === ADMIN_ROLE) throw badRequest('The admin role cannot be removed.');
    await this.store.update((catalog) => {
      if (!(catalog.roles ?? []).includes(role)) throw notFound(`Role "${role}" does not exist.`, null, 'Unknown role');
      catalog.roles = (catalog.roles ?? []).filter((r) => r !== role);
      for (const user of catalog.users) user.roles = user.roles.filter((r) => r !== role);
      catalog.permissions = (catalog.permissions ?? []).filter((p) => p.role !== role);
    });
  }

  /** The permission entries of every role (SYSADMIN.setPermissions). */
  permissions(): readonly PermissionDef[] {
    return this.store.current.permissions ?? [];
  }

  /**
   * Sets (or, with `permissions` null, removes) the entry of `role` on `resource`. The entry
   * replaces the previous one of that role and resource whole: letters, condition and mask.
   */
  async setPermissions(
    entry: Omit<PermissionDef, 'permissions'> & { permissions: string | null },
    sameResource: (a: string, b: string) => boolean,
  ): Promise<void> {
    if (entry.role === ADMIN_ROLE)
      throw badRequest('The admin role may do everything; its permissions cannot be changed.', 'Grant to another role.');
    await this.store.update((catalog) => {
      if (!(catalog.roles ?? []).includes(entry.role))
        throw notFound(`Role "${entry.role}" does not exist.`, 'Create it with SYSADMIN.addRole.', 'Unknown role');
      const others = (catalog.permissions ?? []).filter((p) => p.role !== entry.role || !sameResource(p.resource, entry.resource));
      catalog.permissions = entry.permissions === null ? others : [...others, { ...entry, permissions: entry.permissions }];
    });
  }

  async addUserRole(role: string, name: string): Promise<void> {
    await this.store.update((catalog) => {
      if (role !== ADMIN_ROLE && !(catalog.roles ?? []).includes(role))
        throw notFound(`Role "${role}" does not exist.`, null, 'Unknown role');
      const user = catalog.users.find((u) => u.name === name);
      if (!user) throw notFound(`User "${name}" does not exist.`, null, 'Unknown user');
      if (!user.roles.includes(role)) user.roles.push(role);
    });
  }

  /** Takes a role from a user; the last administrator keeps the admin role. */
  async removeUserRole(role: string, name: string): Promise<void> {
    await this.store.update((catalog) => {
      const user = catalog.users.find((u) => u.name === name);
      if (!user) throw notFound(`User "${name}" does not exist.`, null, 'Unknown user');
      if (
        role === ADMIN_ROLE &&
        catalog.users.filter((u) => u.roles.includes(ADMIN_ROLE)).length === 1 &&
        user.roles.includes(ADMIN_ROLE)
      ) {
        throw badRequest('The last administrator keeps the admin role.', 'Give another user the admin role first.');
      }
      user.roles = user.roles.filter((r) => r !== role);
    });
  }

  /** Checks a username and password; null when either is wrong. Same cost either way. */
  async checkPassword(name: string, password: string): Promise<UserDef | null> {
    const user = this.find(name);
    if (!user?.passwordHash) {
      await verifyPassword(password, await decoyHash);
      return null;
    }
    const now = this.now();
    if (this.verified.has(name, password, user.passwordHash, now)) return user;
    if (!(await verifyPassword(password, user.passwordHash))) return null;
    this.verified.add(name, password, user.passwordHash, now);
    if (!user.scramVerifier) return this.addScramVerifier(user, password);
    return user;
  }

  /**
   * Users from before SCRAM verifiers (security/scram.ts) get one when their password is next
   * checked, so that the PostgreSQL listener can sign them in with SCRAM-SHA-256.
   */
  private async addScramVerifier(user: UserDef, password: string): Promise<UserDef> {
    const scram = await scramVerifier(password);
    try {
      await this.store.update((catalog) => {
        const stored = catalog.users.find((u) => u.name === user.name);
        // Only for the password just checked: a change in between keeps its own.
        if (stored && stored.passwordHash === user.passwordHash && !stored.scramVerifier) stored.scramVerifier = scram;
      });
    } catch {
      // A catalog that cannot be written now (a shared one unreachable) leaves it for the next sign-in.
    }
    return this.find(user.name) ?? user;
  }

  /** Sets a new password; the new token secret voids every token issued before. */
  async changePassword(name: string, password: string): Promise<void> {
    checkPassword(password);
    const passwordHash = await hashPassword(password);
    const scram = await scramVerifier(password);
    await this.store.update((catalog) => {
      const user = catalog.users.find((u) => u.name === name);
      if (!user) throw notFound(`User "${name}" does not exist.`, null, 'Unknown user');
      if (user.kind !== 'password') throw badRequest(`User "${name}" signs in externally and has no password.`);
      user.passwordHash = passwordHash;
      user.scramVerifier = scram;
      user.tokenSecret = randomToken();
    });
  }

  issueToken(user: UserDef): string {
    return signToken(user.name, this.now() + TOKEN_LIFETIME_MS, user.tokenSecret, this.signingKey);
  }

  /** The user a login token belongs to, or null for a missing, forged or expired token. */
  userOfToken(token: string): UserDef | null {
    const secretOf = (n: string) => this.find(n)?.tokenSecret;
    const now = this.now();
    const known = this.verifiedTokens.lookup(token, secretOf, now);
    if (known !== undefined) return this.find(known) ?? null;
    const name = verifyToken(token, this.signingKey, secretOf, now);
    const user = name ? this.find(name) : undefined;
    if (user) this.verifiedTokens.remember(token, user.name, user.tokenSecret);
    return user ?? null;
  }

  /** The user whose hosted link token this is (compared in constant time), REST on or off. */
  userOfLinkToken(linkToken: string): UserDef | null {
    let match: UserDef | null = null;
    for (const user of this.store.current.users) if (safeEqual(user.linkToken, linkToken)) match = user;
    return match;
  }

  async setRest(name: string, rest: boolean): Promise<UserDef> {
    return this.store.update((catalog) => {
      const user = catalog.users.find((u) => u.name === name);
      if (!user) throw badRequest(`User "${name}" does not exist.`);
      user.rest = rest;
      return structuredClone(user);
    });
  }
}
