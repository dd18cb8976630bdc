/** Starts the HTTP server: services, app, listen, and a clean shutdown on SIGINT/SIGTERM. */
import pino from 'pino';
import { loadConfig, type ConfigOverrides } from '../config.js';
import { createServices } from '../services.js';
import { buildApp } from './app.js';

export async function startServer(overrides: ConfigOverrides = {}): Promise<{ url: string; stop: () => Promise<void> }> {
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
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await app.close();
      await services.close();
    })();
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop().then(() => process.exit(0)));
  return { url, stop };
}
