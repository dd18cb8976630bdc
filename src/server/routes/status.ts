/** GET /rest/api/status/: the service works and the credentials are good (spec 4.2). */
import type { FastifyInstance } from 'fastify';

export function statusRoutes(app: FastifyInstance): void {
  app.get('/status', { schema: { summary: 'The service works and the credentials are good' } }, async () => ({ status: 'OK' }));
}
