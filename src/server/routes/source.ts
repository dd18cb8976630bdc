/** GET /rest/api/source: the schemas of the virtual database as [{Name}] (spec 4.4). */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { parseResultParams } from '../params.js';
import { sendResult } from '../results.js';

const LIST_SCHEMAS = 'SELECT "Name" FROM SYS."Schemas" ORDER BY "OID"';

export function sourceRoutes(app: FastifyInstance, services: Services): void {
  app.get('/source', async (request, reply) => {
    // Rows are objects here unless array=true: the spec's answer is [{"Name": ...}].
    const params = parseResultParams(request.query as Record<string, string>, {
      array: false,
      timeoutMs: services.config.queryTimeoutMs,
    });
    return sendResult(services, request, reply, request.user!, params, LIST_SCHEMAS, 'source');
  });
}
