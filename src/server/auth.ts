/**
 * Who is asking. On-premise paths take an `x-auth-token` (from /api/login) or HTTP Basic; the
 * hosted paths (/{linkToken}/rest/api/...) take the user's link token plus HTTP Basic with the
 * database username and password. Every failure is the same HTML 401 page; only the log says why.
 */
import type { FastifyRequest } from 'fastify';
import type { UserDef } from '../catalog/types.js';
import type { ApiKeyService } from '../security/api-keys.js';
import { AccessPolicy } from '../security/permissions.js';
import type { Services } from '../services.js';
import type { AuditLog } from '../catalog/audit-log.js';
import { signInKeys, type SignInThrottle } from '../security/throttle.js';
import type { UserService } from '../security/users.js';
import { safeEqual } from '../security/random.js';
import { ApiError } from '../errors.js';
import { UnauthorizedPage } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    user: UserDef | null;
    /** Signed in with an API key (not a password or token): its id and whether it is read-only. */
    apiKey: { id: string; readOnly: boolean } | null;
  }
}

/** Refuses what a read-only API key, or any API key, may not do. */
export function requireWritable(request: FastifyRequest, action: string): void {
  if (request.apiKey?.readOnly)
    throw new ApiError(403, 'Forbidden', `A read-only API key may not ${action}.`, 'Use a key created with readOnly: false.');
}

export function parseBasic(header: string | undefined): { name: string; password: string } | null {
  const match = header && /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * A password check with throttling: refused (429) while the name or the client address is
 * locked after too many failures; failures are counted and logged.
 */
export async function checkPasswordThrottled(
  request: FastifyRequest,
  users: UserService,
  throttle: SignInThrottle,
  name: string,
  password: string,
  audit?: AuditLog,
): Promise<UserDef | null> {
  const keys = signInKeys(name, request.ip);
  try {
    await throttle.check(keys);
  } catch (err) {
    audit?.record({ user: name, action: 'sign-in', target: null, outcome: 'refused', address: request.ip });
    throw err;
  }
  const user = await users.checkPassword(name, password);
  if (user) await throttle.succeed(keys[0]!);
  else {
    await throttle.fail(keys);
    audit?.record({ user: name, action: 'sign-in', target: null, outcome: 'failed', address: request.ip });
    request.log.warn({ user: name, address: request.ip }, 'failed sign-in');
  }
  return user;
}

/** Authenticates `request`; throws UnauthorizedPage (rendered as the 401 page) on failure. */
export interface AuthContext {
  users: UserService;
  throttle: SignInThrottle;
  apiKeys: ApiKeyService;
  auditLog: AuditLog;
}

export async function authenticate(request: FastifyRequest, context: AuthContext): Promise<UserDef> {
  const { users, throttle, apiKeys, auditLog } = context;
  const linkToken = (request.params as { linkToken?: string }).linkToken;
  const user =
    linkToken !== undefined
      ? await viaLink(request, users, throttle, linkToken, auditLog)
      : await onPremise(request, users, throttle, apiKeys, auditLog);
  if (user.kind !== 'password') throw new UnauthorizedPage(`user ${user.name} signs in externally`);
  request.user = user;
  return user;
}

async function onPremise(
  request: FastifyRequest,
  users: UserService,
  throttle: SignInThrottle,
  apiKeys: ApiKeyService,
  auditLog: AuditLog,
): Promise<UserDef> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer !== undefined) {
    const key = apiKeys.verify(bearer);
    const owner = key ? users.find(key.owner) : undefined;
    if (!key || !owner) throw new UnauthorizedPage('invalid, expired or revoked API key');
    request.apiKey = { id: key.id, readOnly: key.readOnly };
    return owner;
  }
  const token = request.headers['x-auth-token'];
  if (typeof token === 'string' && token !== '') {
    const user = users.userOfToken(token);
    if (!user) throw new UnauthorizedPage('invalid or expired token');
    return user;
  }
  const basic = parseBasic(request.headers.authorization);
  if (!basic) throw new UnauthorizedPage('no credentials');
  const user = await checkPasswordThrottled(request, users, throttle, basic.name, basic.password, auditLog);
  if (!user) throw new UnauthorizedPage(`wrong password for ${basic.name}`);
  return user;
}

async function viaLink(
  request: FastifyRequest,
  users: UserService,
  throttle: SignInThrottle,
  linkToken: string,
  auditLog: AuditLog,
): Promise<UserDef> {
  const owner = users.userOfLinkToken(linkToken);
  if (!owner || !owner.rest) throw new UnauthorizedPage('unknown or disabled link');
  const basic = parseBasic(request.headers.authorization);
  if (!basic || !safeEqual(basic.name, owner.databaseUsername)) throw new UnauthorizedPage('link needs Basic auth of its user');
  const user = await checkPasswordThrottled(request, users, throttle, owner.name, basic.password, auditLog);
  if (!user) throw new UnauthorizedPage(`wrong password for ${owner.name} on link`);
  return user;
}

/** The permissions of the request's user, as the catalog holds them now. */
export function accessOf(request: FastifyRequest, services: Pick<Services, 'registry'>): AccessPolicy {
  return new AccessPolicy(request.user!, services.registry.permissions);
}
