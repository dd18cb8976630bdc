/** POST /api/login: username and password in, a signed token out (spec 4.1). */
import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { SignInThrottle } from '../../security/throttle.js';
import { checkPasswordThrottled } from '../auth.js';

export function loginRoutes(app: FastifyInstance, services: Services): void {
  app.post('/api/login', async (request) => {
    const body = request.body as { username?: unknown; password?: unknown } | undefined;
    if (typeof body?.username !== 'string' || typeof body.password !== 'string' || body.username === '') {
      throw badRequest('The body must be {"username": string, "password": string}.', null, 'Missing credentials');
    }
    try {
      services.throttle.check(SignInThrottle.keys(body.username, request.ip));
    } catch (err) {
      services.auditLog.record({ user: body.username, action: 'login', target: null, outcome: 'refused', address: request.ip });
      throw err;
    }
    const known = services.users.find(body.username);
    if (known?.kind === 'external') {
      services.auditLog.record({ user: body.username, action: 'login', target: null, outcome: 'refused', address: request.ip });
      throw new ApiError(
        401,
        'Login failed',
        `User "${body.username}" signs in through an external identity provider, which the REST interface does not support.`,
        'Use a user who signs in with username and password (an administrator can create or invite one).',
      );
    }
    const user = await checkPasswordThrottled(request, services.users, services.throttle, body.username, body.password, services.auditLog);
    if (!user) {
      throw new ApiError(401, 'Login failed', 'The username or password is wrong.', null);
    }
    services.auditLog.record({ user: user.name, action: 'login', target: null, outcome: 'ok', address: request.ip });
    return { username: user.name, token: services.users.issueToken(user) };
  });

  // Invitations (spec 5.2): the invited person chooses a password and becomes a password user.
  app.post('/api/invite/accept', async (request, reply) => {
    const body = request.body as { token?: unknown; password?: unknown } | undefined;
    if (typeof body?.token !== 'string' || typeof body.password !== 'string') {
      throw badRequest('The body must be {"token": string, "password": string}.', null, 'Invalid invitation');
    }
    const name = await services.invites.accept(body.token, body.password);
    services.auditLog.record({ user: name, action: 'accept invitation', target: name, outcome: 'ok', address: request.ip });
    request.log.info({ user: name }, 'invitation accepted');
    return reply.code(201).send({ username: name });
  });
}
