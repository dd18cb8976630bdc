/**
 * Test harness: a real vdb (services + HTTP app on an ephemeral port) over a fresh temporary
 * data directory with the demo data attached. Tests talk to it with fetch, as any client would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig, type ConfigOverrides } from '../../src/config.js';
import { buildApp } from '../../src/server/app.js';
import { createServices, type Services } from '../../src/services.js';

export const ADMIN_PASSWORD = 'admin-secret-1';

/** The Redis of the tests (shared with other test runs: every test uses a key prefix of its own). */
export const REDIS_URL = process.env.VDB_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export interface TestServer {
  url: string;
  services: Services;
  app: FastifyInstance;
  dataDir: string;
  /** Authorization header value for HTTP Basic. */
  basic(user?: string, password?: string): string;
  /** fetch with JSON content type and admin Basic auth unless headers say otherwise. */
  request(pathAndQuery: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  close(): Promise<void>;
}

export async function startTestServer(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-test-'));
  // Tests fail sign-ins on purpose, all from one address: throttling only where a test sets it.
  const config = loadConfig(env, {
    adminPassword: ADMIN_PASSWORD,
    port: 0,
    logLevel: 'silent',
    throttle: { maxFailures: 100_000 },
    ...overrides,
    dataDir,
  });
  const services = await createServices(config, pino({ level: 'silent' }));
  const app = buildApp(services, false);
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const basic = (user = 'admin', password = ADMIN_PASSWORD) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return {
    url: address,
    services,
    app,
    dataDir,
    basic,
    request(pathAndQuery, init = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json', authorization: basic(), ...init.headers };
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      return fetch(address + pathAndQuery, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers,
        body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
      });
    },
    async close() {
      await app.close();
      await services.close();
      if (!overrides.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
