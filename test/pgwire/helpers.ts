/**
 * A vdb with its PostgreSQL listener on an ephemeral loopback port, and clients for it: the
 * Node `pg` client and the real psql.
 */
import { execFile } from 'node:child_process';
import pg from 'pg';
import { startPgListener, type PgListener } from '../../src/pgwire/listener.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import type { ConfigOverrides } from '../../src/config.js';

export interface WireServer {
  server: TestServer;
  listener: PgListener;
  /** A connected `pg` client (admin unless told otherwise). */
  client(user?: string, password?: string): Promise<pg.Client>;
  /** psql's output for `sql` (unaligned, tuples only unless flags say otherwise), and its exit code. */
  psql(sql: string, flags?: string[], user?: string, password?: string): Promise<{ stdout: string; stderr: string; code: number }>;
  close(): Promise<void>;
}

export async function startWireServer(overrides: ConfigOverrides = {}): Promise<WireServer> {
  const server = await startTestServer(overrides);
  const listener = await startPgListener(server.services, { host: '127.0.0.1', port: 0, tls: null, allowPlainPasswords: false });
  const database = server.services.config.vdbName;
  const clients: pg.Client[] = [];
  return {
    server,
    listener,
    async client(user = 'admin', password = ADMIN_PASSWORD) {
      const client = new pg.Client({ host: '127.0.0.1', port: listener.port, user, password, database });
      client.on('error', () => undefined);
      await client.connect();
      clients.push(client);
      return client;
    },
    psql(sql, flags = ['-At'], user = 'admin', password = ADMIN_PASSWORD) {
      return new Promise((resolve) => {
        execFile(
          '/usr/bin/psql',
          ['-h', '127.0.0.1', '-p', String(listener.port), '-U', user, '-d', database, '-X', ...flags, '-c', sql],
          { env: { ...process.env, PGPASSWORD: password, PGSSLMODE: 'prefer', PGCONNECT_TIMEOUT: '10' }, timeout: 30_000 },
          (err, stdout, stderr) => resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
        );
      });
    },
    async close() {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
      await listener.close();
      await server.close();
    },
  };
}

/** A client of the real PostgreSQL of the tests (trust, db test). */
export async function postgresClient(): Promise<pg.Client> {
  const client = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' });
  await client.connect();
  return client;
}
