/** POST /rest/api/query: one SQL statement in, rows out (spec 4.3). */
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { parseResultParams } from '../params.js';
import { sendResult } from '../results.js';

export function queryRoutes(app: FastifyInstance, services: Services): void {
  app.post('/query', async (request, reply) => {
    const params = parseResultParams(request.query as Record<string, string>, {
      array: true,
      timeoutMs: services.config.queryTimeoutMs,
    });
    const body = request.body;
    let sql: string | undefined;
    if (body !== undefined && body !== null) {
      if (typeof body !== 'object' || Array.isArray(body))
        throw badRequest('The body must be a JSON object.', 'Example: {"sql": "SELECT 1"}');
      const value = (body as { sql?: unknown }).sql;
      if (value !== undefined && typeof value !== 'string') throw badRequest('"sql" must be a string.', null, 'Missing SQL');
      sql = value;
    }
    return sendResult(services, request, reply, request.user!, params, sql, 'query');
  });
}
