/** POST /rest/api/query: one SQL statement in, rows out (spec 4.3). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { parseResultParams } from '../params.js';
import { sendResult } from '../results.js';
import { invalidBody, invalidField, QueryBody, ResultQuery } from '../schemas.js';

export function queryRoutes(app: FastifyInstance, services: Services): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post(
      '/query',
      { schema: { summary: 'Run one SQL statement', querystring: ResultQuery, body: QueryBody }, attachValidation: true },
      async (request, reply) => {
        const params = parseResultParams(request.query, { array: true, timeoutMs: services.config.queryTimeoutMs });
        // No body at all is a later page of a paginated result (requestId).
        if (invalidBody(request) && request.body !== undefined) {
          if (invalidField(request) === 'sql') throw badRequest('"sql" must be a string.', null, 'Missing SQL');
          throw badRequest('The body must be a JSON object.', 'Example: {"sql": "SELECT 1"}');
        }
        return sendResult(services, request, reply, request.user!, params, request.body?.sql, 'query');
      },
    );
}
