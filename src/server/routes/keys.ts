/**
 * API keys of the current user (application authentication, spec 5.4): create (the key is
 * shown once), list, revoke. Keys are sent as `Authorization: Bearer <key>`.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiError, badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { invalidBody, invalidField, KeyBody, KeyParams } from '../schemas.js';

export function keyRoutes(fastify: FastifyInstance, services: Services): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/keys',
    { schema: { summary: 'Create an API key (shown once)', body: KeyBody }, attachValidation: true },
    async (request, reply) => {
      // A key does not make keys: a leaked one must not be able to multiply.
      if (request.apiKey)
        throw new ApiError(403, 'Forbidden', 'API keys cannot create API keys.', 'Sign in with your password or a login token.');
      if (invalidBody(request)) {
        const field = invalidField(request);
        if (field === 'expiresAt')
          throw badRequest('"expiresAt" must be an ISO-8601 date or date-time.', 'Example: 2027-01-01T00:00:00Z', 'Invalid API key');
        if (field === 'readOnly') throw badRequest('"readOnly" must be true or false.', null, 'Invalid API key');
        throw badRequest('The body must be {"name": string, "expiresAt"?: ISO date-time, "readOnly"?: boolean}.', null, 'Invalid API key');
      }
      const body = request.body;
      const key = await services.apiKeys.create(request.user!, {
        name: body.name,
        expiresAt: body.expiresAt ?? null,
        readOnly: body.readOnly ?? false,
      });
      request.log.info({ user: request.user!.name, key: key.id }, 'API key created');
      services.auditLog.record({ user: request.user!.name, action: 'create API key', target: key.id, outcome: 'ok', address: request.ip });
      return reply.code(201).send(key);
    },
  );

  app.get('/keys', { schema: { summary: 'List your API keys' } }, async (request) => services.apiKeys.list(request.user!));

  app.delete('/keys/:id', { schema: { summary: 'Revoke an API key', params: KeyParams } }, async (request, reply) => {
    if (request.apiKey)
      throw new ApiError(403, 'Forbidden', 'API keys cannot revoke API keys.', 'Sign in with your password or a login token.');
    const { id } = request.params;
    await services.apiKeys.revoke(request.user!, id);
    request.log.info({ user: request.user!.name, key: id }, 'API key revoked');
    services.auditLog.record({ user: request.user!.name, action: 'revoke API key', target: id, outcome: 'ok', address: request.ip });
    return reply.code(204).send();
  });
}
