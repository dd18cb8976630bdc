/**
 * A vdb with its PostgreSQL listener on an ephemeral loopback port, and clients for it: the
 * Node `pg` client and the real psql.
 */
import { execFile } from 'node:child_process';
import pg from 'pg';
import { startPgListener, type PgListener, type PgListenerOptions } from '../../src/pgwire/listener.js';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';
import type { ConfigOverrides } from '../../src/config.js';

export interface WireServer {
  server: TestServer;
  listener: PgListener;
  /** A connected `pg` client (admin unless told otherwise). */
  client(user?: string, password?: string): Promise<pg.Client>;
  /** psql's output for `sql` (unaligned, tuples only unless flags say otherwise), and its exit code. */
  psql(
    sql: string,
    flags?: string[],
    user?: string,
    password?: string,
    sslmode?: string,
  ): Promise<{ stdout: string; stderr: string; code: number }>;
  close(): Promise<void>;
}

export async function startWireServer(overrides: ConfigOverrides = {}, listen: Partial<PgListenerOptions> = {}): Promise<WireServer> {
  const server = await startTestServer(overrides);
  const listener = await startPgListener(server.services, { host: '127.0.0.1', port: 0, tls: null, allowPlainPasswords: false, ...listen });
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
    psql(sql, flags = ['-At'], user = 'admin', password = ADMIN_PASSWORD, sslmode = 'prefer') {
      return new Promise((resolve) => {
        execFile(
          '/usr/bin/psql',
          ['-h', '127.0.0.1', '-p', String(listener.port), '-U', user, '-d', database, '-X', ...flags, '-c', sql],
          { env: { ...process.env, PGPASSWORD: password, PGSSLMODE: sslmode, PGCONNECT_TIMEOUT: '10' }, timeout: 30_000 },
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

/** Values as the server's texts: the pg client's parsers left out, so that the texts are compared. */
export const rawTypes = { getTypeParser: () => (value: string) => value };

/**
 * A minimal raw protocol client: signs in with a cleartext password and exchanges messages, for
 * what the `pg` client does not expose (Execute with a row limit, a client that vanishes).
 */
export class RawClient {
  private buffer = Buffer.alloc(0);
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: import('node:net').Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number, database: string, user = 'admin', password = ADMIN_PASSWORD): Promise<RawClient> {
    const net = await import('node:net');
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const client = new RawClient(socket);
    const params = Buffer.from(`user\0${user}\0database\0${database}\0\0`);
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + params.length);
    startup.writeInt32BE(196608, 4);
    socket.write(Buffer.concat([startup, params]));
    const offer = (await client.until('R')).at(-1)!.body;
    if (offer.readInt32BE(0) === 3) client.send('p', Buffer.from(`${password}\0`));
    else await client.scram(password);
    const messages = await client.until('Z');
    client.processId = messages.find((m) => m.type === 'K')?.body.readInt32BE(0) ?? 0;
    client.secret = messages.find((m) => m.type === 'K')?.body.readInt32BE(4) ?? 0;
    return client;
  }

  processId = 0;
  secret = 0;

  /** The client's side of SCRAM-SHA-256 (RFC 5802), after the server's AuthenticationSASL. */
  private async scram(password: string): Promise<void> {
    const { createHash, createHmac, pbkdf2Sync, randomBytes } = await import('node:crypto');
    const clientFirstBare = `n=,r=${randomBytes(18).toString('base64')}`;
    const first = Buffer.from(`n,,${clientFirstBare}`);
    const length = Buffer.alloc(4);
    length.writeInt32BE(first.length);
    this.send('p', Buffer.concat([Buffer.from('SCRAM-SHA-256\0'), length, first]));
    const serverFirst = (await this.until('R')).at(-1)!.body.subarray(4).toString();
    const fields = new Map(serverFirst.split(',').map((part) => [part[0]!, part.slice(2)]));
    const salted = pbkdf2Sync(password, Buffer.from(fields.get('s')!, 'base64'), Number(fields.get('i')), 32, 'sha256');
    const clientKey = createHmac('sha256', salted).update('Client Key').digest();
    const storedKey = createHash('sha256').update(clientKey).digest();
    const withoutProof = `c=biws,r=${fields.get('r')}`;
    const signature = createHmac('sha256', storedKey).update(`${clientFirstBare},${serverFirst},${withoutProof}`).digest();
    const proof = Buffer.from(clientKey.map((byte, i) => byte ^ signature[i]!));
    this.send('p', Buffer.from(`${withoutProof},p=${proof.toString('base64')}`));
  }

  send(type: string, body: Buffer): void {
    const head = Buffer.alloc(5);
    head.write(type, 0, 'latin1');
    head.writeInt32BE(body.length + 4, 1);
    this.socket.write(Buffer.concat([head, body]));
  }

  /** The messages up to and including the first of `type`. */
  async until(type: string): Promise<Array<{ type: string; body: Buffer }>> {
    const messages: Array<{ type: string; body: Buffer }> = [];
    for (;;) {
      while (this.buffer.length >= 5 && this.buffer.length >= this.buffer.readInt32BE(1) + 1) {
        const length = this.buffer.readInt32BE(1);
        const message = { type: String.fromCharCode(this.buffer[0]!), body: this.buffer.subarray(5, length + 1) };
        this.buffer = this.buffer.subarray(length + 1);
        messages.push(message);
        if (message.type === type) return messages;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A message body of NUL-terminated strings and 16/32-bit integers, in order. */
export function body(...fields: Array<string | { i16: number } | { i32: number }>): Buffer {
  return Buffer.concat(
    fields.map((field) => {
      if (typeof field === 'string') return Buffer.from(`${field}\0`);
      const out = Buffer.alloc('i16' in field ? 2 : 4);
      if ('i16' in field) out.writeInt16BE(field.i16);
      else out.writeInt32BE(field.i32);
      return out;
    }),
  );
}
