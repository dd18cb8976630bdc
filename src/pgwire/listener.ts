/**
 * The PostgreSQL listener: vdb's second front door, in the same process as the REST API and on
 * the same services. Each connection is started (startup.ts), then served by a session
 * (session.ts); a CancelRequest finds its session by the process id and secret it was given.
 */
import net from 'node:net';
import fs from 'node:fs';
import { randomInt } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { Services } from '../services.js';
import { Connection } from './connection.js';
import { errorFields, errorResponse } from './errors.js';
import { Session } from './session.js';
import { startSession } from './startup.js';

export interface PgListenerOptions {
  host: string;
  port: number;
  /** PEM files of the certificate and key; null: no TLS (SSLRequest is answered 'N'). */
  tls: { certFile: string; keyFile: string } | null;
  /** Allow password sign-in without TLS on an address other than loopback. */
  allowPlainPasswords: boolean;
}

export interface PgListener {
  host: string;
  port: number;
  /** Sessions open now (tests see that a vanished client's session ended). */
  readonly sessions: number;
  close(): Promise<void>;
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);

export async function startPgListener(services: Services, options: PgListenerOptions, log?: Logger): Promise<PgListener> {
  const tls: SecureContext | null = options.tls
    ? createSecureContext({ cert: fs.readFileSync(options.tls.certFile), key: fs.readFileSync(options.tls.keyFile) })
    : null;
  const plainPasswords = options.allowPlainPasswords || isLoopback(options.host);
  const sessions = new Map<number, { secret: number; session: Session }>();
  const sockets = new Set<net.Socket>();
  const cancel = (processId: number, secret: number) => {
    const entry = sessions.get(processId);
    // A wrong secret is ignored without an answer, as PostgreSQL does.
    if (entry && entry.secret === secret) entry.session.cancel();
  };

  async function serve(socket: net.Socket): Promise<void> {
    const connection = new Connection(socket);
    let processId = 0;
    try {
      const signedIn = await startSession(services, connection, { tls, plainPasswords, cancel });
      if (!signedIn) {
        connection.destroy();
        return;
      }
      do processId = randomInt(1, 2 ** 31 - 1);
      while (sessions.has(processId));
      const secret = randomInt(0, 2 ** 31 - 1);
      const session = new Session(services, connection, signedIn, signedIn.parameters);
      sessions.set(processId, { secret, session });
      session.greet(processId, secret);
      await session.serve();
      await connection.close();
    } catch (err) {
      const fields = errorFields(err);
      if (fields.code === 'XX000') log?.error({ err }, 'PostgreSQL protocol session failed');
      connection.send(errorResponse({ ...fields, severity: 'FATAL' }));
      await connection.close().catch(() => undefined);
    } finally {
      sessions.delete(processId);
      connection.destroy();
    }
  }

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    void serve(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;
  return {
    host: options.host,
    port: address.port,
    get sessions() {
      return sessions.size;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
