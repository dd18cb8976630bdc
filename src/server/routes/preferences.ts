/**
 * GET/PUT /rest/api/preferences: the current user's REST switch, hosted link and database
 * username (spec 5, hosted variant). The link token is static: switching REST off and on
 * keeps it. /rest/api/preferences/queries: the user's saved queries (security/saved-queries.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { UserDef } from '../../catalog/types.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { requireWritable } from '../auth.js';
import { originOf } from '../errors.js';
import { removeQuery, savedQueries, saveQuery } from '../../security/saved-queries.js';
import { invalidBody, PreferencesBody, SavedQueryBody, SavedQueryParams } from '../schemas.js';

function preferencesOf(request: FastifyRequest, user: UserDef) {
  return {
    rest: user.rest,
    link: `${originOf(request)}/${user.linkToken}/rest`,
    databaseUsername: user.databaseUsername,
  };
}

export function preferencesRoutes(fastify: FastifyInstance, services: Services): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/preferences', { schema: { summary: 'Your REST switch, hosted link and database username' } }, async (request) =>
    preferencesOf(request, request.user!),
  );

  app.put(
    '/preferences',
    { schema: { summary: 'Switch the REST interface on or off', body: PreferencesBody }, attachValidation: true },
    async (request) => {
      requireWritable(request, 'change preferences');
      if (invalidBody(request) || request.body === undefined) {
        throw badRequest('The body must be {"rest": true} or {"rest": false}.', null, 'Invalid preferences');
      }
      const { body } = request;
      const user = await services.users.setRest(request.user!.name, body.rest);
      services.auditLog.record({
        user: user.name,
        action: body.rest ? 'switch REST on' : 'switch REST off',
        target: user.name,
        outcome: 'ok',
        address: request.ip,
      });
      return preferencesOf(request, user);
    },
  );
  savedQueryRoutes(fastify, services);
}

function savedQueryRoutes(fastify: FastifyInstance, services: Services): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/preferences/queries', { schema: { summary: 'Your saved queries, by name' } }, async (request) =>
    savedQueries(services.store, request.user!.name),
  );

  app.put(
    '/preferences/queries/:name',
    {
      schema: { summary: 'Save a query under a name (replacing one of that name)', params: SavedQueryParams, body: SavedQueryBody },
      attachValidation: true,
    },
    async (request) => {
      requireWritable(request, 'save queries');
      if (invalidBody(request) || request.body === undefined) {
        throw badRequest('The body must be {"sql": "<statement>"}.', null, 'Invalid saved query');
      }
      return saveQuery(services.store, request.user!.name, request.params.name, request.body.sql);
    },
  );

  app.delete(
    '/preferences/queries/:name',
    { schema: { summary: 'Delete a saved query', params: SavedQueryParams } },
    async (request, reply) => {
      requireWritable(request, 'delete saved queries');
      await removeQuery(services.store, request.user!.name, request.params.name);
      return reply.code(204).send();
    },
  );
}
