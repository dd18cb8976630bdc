/**
 * For operators and load balancers, without authentication: GET /healthz (the process answers),
 * GET /readyz (the data directory takes writes and has room, the catalog, the engine and the
 * cursor store are usable and the process is not stopping) and GET /metrics (Prometheus; on the main port unless metricsPort moves it).
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { messageOf } from '../../errors.js';
import { dataDirCheck } from '../../operations/data-dir.js';

/** How long the engine may take to answer SELECT 1 before it counts as not usable. */
const ENGINE_CHECK_MS = 2000;

type Check = 'ok' | string;

async function readiness(services: Services): Promise<Record<string, Check>> {
  const checks: Record<string, Check> = {};
  checks.lifecycle = services.lifecycle.stopping ? 'stopping' : 'ok';
  // Full, read-only or missing: the catalog, spills and cursors of this instance would fail.
  checks.dataDir = await dataDirCheck(services.config.dataDir, services.config.dataDirMinFreeBytes);
  checks.catalog = services.store.available ? 'ok' : `catalog database unreachable (${services.store.unavailableReason})`;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      services.runtime.withConnection((connection) => connection.run('SELECT 1')),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ENGINE_CHECK_MS} ms`)), ENGINE_CHECK_MS);
      }),
    ]);
    checks.engine = 'ok';
  } catch (err) {
    checks.engine = messageOf(err);
  } finally {
    clearTimeout(timer);
  }
  // Cursors are computed in the engine and kept in the cursor store (Redis when configured).
  const store = await services.cursors.check();
  checks.cursors = checks.engine === 'ok' ? store : checks.engine;
  return checks;
}

export function healthRoutes(app: FastifyInstance, services: Services): void {
  const hide = { schema: { hide: true } };
  app.get('/healthz', hide, async () => ({ status: 'ok' }));
  app.get('/readyz', hide, async (_request, reply) => {
    const checks = await readiness(services);
    const failing = Object.entries(checks).filter(([, state]) => state !== 'ok');
    // Unavailable sources are named, never a reason to be unready: the instance serves the others.
    const unavailableSources = services.registry.health.unavailable().map((s) => s.name);
    if (failing.length === 0) return { status: 'ready', checks, unavailableSources };
    return reply.code(503).send({
      title: 'Not ready',
      description: `This instance cannot take requests now: ${failing.map(([name, state]) => `${name}: ${state}`).join('; ')}.`,
      hint: 'A load balancer sends requests to another instance; this one answers /readyz with 200 again once it recovers.',
    });
  });
}

export function metricsRoutes(app: FastifyInstance, services: Services): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(services.metrics.contentType).send(await services.metrics.text()),
  );
}
