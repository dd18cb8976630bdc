/**
 * Starts the HTTP server: services, app, listen (and the metrics port when configured), and a
 * graceful shutdown on SIGINT/SIGTERM: readiness turns false, new statements are refused,
 * running ones get `shutdownGraceMs` to finish and are then cancelled at their sources.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig, pgwireAddress, type ConfigOverrides } from '../config.js';
import { createServices, type Services } from '../services.js';
import { buildApp } from './app.js';
import { metricsRoutes } from './routes/operations.js';
import { startPgListener, type PgListener } from '../pgwire/listener.js';

export interface RunningServer {
  url: string;
  /** Where GET /metrics answers when `metricsPort` is set. */
  metricsUrl: string | null;
  /** Where the PostgreSQL listener answers (host:port), null when it is off. */
  pgwire: string | null;
  stop: () => Promise<void>;
}

/** Stops taking statements, lets running ones finish within the grace period, then cancels them. */
export async function shutDown(services: Services, servers: readonly FastifyInstance[]): Promise<void> {
  services.lifecycle.beginStopping();
  const deadline = setTimeout(() => services.lifecycle.cancelRunning(), services.config.shutdownGraceMs);
  // A response that still does not end once its statement is cancelled does not hold the exit.
  const lastResort = setTimeout(() => {
    for (const server of servers) server.server.closeAllConnections();
  }, services.config.shutdownGraceMs + FORCE_CLOSE_AFTER_MS);
  try {
    // Stops accepting connections and waits for the requests under way.
    await Promise.all(servers.map((server) => server.close()));
  } finally {
    clearTimeout(deadline);
    clearTimeout(lastResort);
  }
  await services.close();
}

/** After the grace period and the cancellations: how long before connections are cut. */
const FORCE_CLOSE_AFTER_MS = 5000;

export async function startServer(overrides: ConfigOverrides = {}): Promise<RunningServer> {
  const config = loadConfig(process.env, overrides);
  const log = pino({ level: config.logLevel });
  const services = await createServices(config, log);
  if (services.generatedAdminPassword) {
    // Printed once, on the first start only; afterwards only its hash exists.
    process.stdout.write(
      `\n  vdb: created user "admin" with the generated password:\n\n      ${services.generatedAdminPassword}\n\n` +
        `  It is shown only now. Set VDB_ADMIN_PASSWORD before the first start to choose it.\n\n`,
    );
  }
  const app = buildApp(services);
  const url = await app.listen({ host: config.host, port: config.port });
  const servers: FastifyInstance[] = [app];
  let metricsUrl: string | null = null;
  if (config.metricsPort !== null) {
    const metricsApp = Fastify({ logger: false });
    metricsRoutes(metricsApp, services);
    metricsUrl = await metricsApp.listen({ host: config.host, port: config.metricsPort });
    servers.push(metricsApp);
  }
  let pg: PgListener | null = null;
  if (config.pgwire.enabled) {
    const { host, port } = pgwireAddress(config);
    const options = { host, port, tls: config.tls, allowPlainPasswords: config.pgwire.allowPlainPasswords };
    try {
      pg = await startPgListener(services, options, log);
    } catch (err) {
      // The default port (the HTTP one + 1) may be taken: vdb still serves HTTP; a port set explicitly must be had.
      if (config.pgwire.port !== null || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        await shutDown(services, servers);
        throw err;
      }
      log.warn({ host, port }, 'the PostgreSQL listener is off: its port is in use (set pgwire.port)');
    }
  }
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= Promise.resolve(pg?.close()).then(() => shutDown(services, servers));
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log.info({ signal, running: services.lifecycle.inFlight, graceMs: config.shutdownGraceMs }, 'shutting down');
      void stop().then(() => process.exit(0));
    });
  }
  return { url, metricsUrl, pgwire: pg ? `${pg.host}:${pg.port}` : null, stop };
}
