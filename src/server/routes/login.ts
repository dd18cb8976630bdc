/** POST /api/login: username and password in, a signed token out (spec 4.1). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiError, badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { signInKeys } from '../../security/throttle.js';
import { checkPasswordThrottled } from '../auth.js';
import { InviteAcceptBody, invalidBody, LoginBody } from '../schemas.js';

export function loginRoutes(fastify: FastifyInstance, services: Services): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/login',
    { schema: { summary: 'Sign in: a token for x-auth-token', security: [], body: LoginBody }, attachValidation: true },
    async (request) => {
      if (invalidBody(request) || request.body === undefined) {
        throw badRequest('The body must be {"username": string, "password": string}.', null, 'Missing credentials');
      }
      const { body } = request;
      try {
        await services.throttle.check(signInKeys(body.username, request.ip));
      } catch (err) {
        services.auditLog.record({ user: body.username, action: 'login', target: null, outcome: 'refused', address: request.ip });
        throw err;
      }
      const known = services.users.find(body.username);
      if (known !== undefined && known.kind !== 'password') {
        services.auditLog.record({ user: body.username, action: 'login', target: null, outcome: 'refused', address: request.ip });
        throw new ApiError(
          401,
          'Login failed',
          `User "${body.username}" signs in through an external identity provider, which the REST interface does not support.`,
          'Use a user who signs in with username and password (an administrator can create or invite one).',
        );
      }
      const user = await checkPasswordThrottled(
        request,
        services.users,
        services.throttle,
        body.username,
        body.password,
        services.auditLog,
      );
      if (!user) {
        throw new ApiError(401, 'Login failed', 'The username or password is wrong.', null);
      }
      services.auditLog.record({ user: user.name, action: 'login', target: null, outcome: 'ok', address: request.ip });
      return { username: user.name, token: services.users.issueToken(user) };
    },
  );

  // Invitations (spec 5.2): the invited person chooses a password and becomes a password user.
  app.post(
    '/api/invite/accept',
    { schema: { summary: 'Accept an invitation', security: [], body: InviteAcceptBody }, attachValidation: true },
    async (request, reply) => {
      if (invalidBody(request) || request.body === undefined) {
        throw badRequest('The body must be {"token": string, "password": string}.', null, 'Invalid invitation');
      }
      const { body } = request;
      const name = await services.invites.accept(body.token, body.password);
      services.auditLog.record({ user: name, action: 'accept invitation', target: name, outcome: 'ok', address: request.ip });
      request.log.info({ user: name }, 'invitation accepted');
      return reply.code(201).send({ username: name });
    },
  );
}
