/**
 * POST /rest/api/query: one SQL statement in, rows out (spec 4.3). GET serves a page of a
 * paginated result, so that a nextPage or prevPage link can be followed as it is.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiError, badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { parseResultParams } from '../params.js';
import { sendResult } from '../result-delivery.js';
import { invalidBody, invalidField, QueryBody, ResultQuery } from '../schemas.js';

export function queryRoutes(fastify: FastifyInstance, services: Services): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const paramsOf = (query: ResultQuery) => parseResultParams(query, { array: true, timeoutMs: services.config.queryTimeoutMs });
  app.post(
    '/query',
    { schema: { summary: 'Run one SQL statement', querystring: ResultQuery, body: QueryBody }, attachValidation: true },
    async (request, reply) => {
      const params = paramsOf(request.query);
      // No body at all is a later page of a paginated result (requestId). A body sent with
      // requestId is checked all the same, though its statement is not run again.
      if (invalidBody(request) && request.body !== undefined) {
        if (invalidField(request) === 'sql') throw badRequest('"sql" must be a string.', null, 'Missing SQL');
        if (invalidField(request) === 'params') {
          throw badRequest(
            '"params" must be a list of strings, numbers, true, false or null.',
            'Example: {"sql": "SELECT $1", "params": [42]}',
          );
        }
        throw badRequest('The body must be a JSON object.', 'Example: {"sql": "SELECT 1"}');
      }
      return sendResult(services, request, reply, request.user!, params, request.body?.sql, 'query', request.body?.params);
    },
  );

  app.get(
    '/query',
    { schema: { summary: 'A page of a paginated result (a nextPage or prevPage link)', querystring: ResultQuery } },
    async (request, reply) => {
      const params = paramsOf(request.query);
      if (params.requestId === undefined) {
        throw new ApiError(
          405,
          'Method not allowed',
          'GET /rest/api/query serves only the pages of a paginated result, named by requestId; a statement is sent with POST.',
          'POST /rest/api/query with the body {"sql": "..."}.',
          { allow: 'POST' },
        );
      }
      return sendResult(services, request, reply, request.user!, params, undefined, 'query');
    },
  );
}
