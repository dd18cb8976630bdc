/**
 * The shared catalog store: the catalog as rows of a schema in a PostgreSQL database, for several
 * vdb instances at once. Each instance keeps the whole catalog in memory (read synchronously, as
 * with the file store) and:
 *  - commits a change in one transaction that first locks the state row, so changes from two
 *    instances are serialised and each is applied to the latest catalog (none is lost);
 *  - announces each commit with NOTIFY; the others LISTEN and reload within milliseconds;
 *  - while its LISTEN connection is down it cannot know what changed elsewhere (a revoked token,
 *    a withdrawn grant), so it reports itself unavailable until it has reconnected and reloaded.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { messageOf } from '../errors.js';
import { catalogOf, diffRows, type CatalogScalars } from './catalog-rows.js';
import { checkout, migrate, quoteIdent } from './postgres-schema.js';
import { catalogUnavailable, type CatalogChange, type CatalogStore } from './store.js';
import type { CatalogData } from './types.js';

export interface PostgresCatalogOptions {
  url: string;
  schema: string;
  log: Logger;
}

/** How often the LISTEN connection is checked, and how soon a lost one is retried. */
const PING_MS = 1000;
const RECONNECT_MS = 250;
/** How long connecting or one query may take before the database counts as unreachable. */
const CONNECT_TIMEOUT_MS = 3000;
const QUERY_TIMEOUT_MS = 10_000;

interface StateRow {
  version: string;
  next_oid: string;
  initialized: boolean;
}

/**
 * A failure of the connection rather than of a statement: no SQLSTATE (socket closed, refused,
 * timed out), class 08 (connection exception) or 57P (the server shut the session down).
 */
export function isConnectionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (!(err instanceof pg.DatabaseError)) return true;
  return typeof code !== 'string' || code.startsWith('08') || code.startsWith('57P') || code === '53300';
}

export class PostgresCatalogStore implements CatalogStore {
  /** This process, in NOTIFY payloads and log rows. */
  readonly instance = randomUUID();
  readonly pool: pg.Pool;
  readonly schema: string;
  private readonly s: string;
  private readonly channel: string;
  private data: CatalogData;
  /** The state row's version this instance's `data` is at (-1: never loaded). */
  private version = -1;
  generation = 0;
  private listener: pg.Client | null = null;
  private problem: string | null = null;
  private queue: Promise<void> = Promise.resolve();
  private reloadQueued = false;
  private listeners: Array<(change: CatalogChange) => void> = [];
  private pingTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(private readonly options: PostgresCatalogOptions) {
    this.schema = options.schema;
    this.s = quoteIdent(options.schema);
    this.channel = `${options.schema}_changes`;
    this.data = { formatVersion: 1, sources: [], users: [], nextOid: 1000 };
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: 4,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      application_name: 'vdb catalog',
    });
    // An idle connection the server ended: the next checkout opens a new one.
    this.pool.on('error', (err) => options.log.warn({ err: messageOf(err) }, 'catalog database connection lost'));
  }

  /** Connects, applies the migrations, listens for changes and loads the catalog. Throws when the database cannot be used. */
  static async open(options: PostgresCatalogOptions): Promise<PostgresCatalogStore> {
    const store = new PostgresCatalogStore(options);
    try {
      const client = await checkout(store.pool);
      try {
        const applied = await migrate(client, options.schema);
        if (applied.length > 0) options.log.info({ schema: options.schema, applied }, 'catalog database migrated');
      } finally {
        client.done();
      }
      // Listening before loading: a change committed in between is announced, not missed.
      await store.listen();
      await store.reload();
      store.pingTimer = setInterval(() => void store.ping(), PING_MS);
      store.pingTimer.unref();
    } catch (err) {
      await store.close();
      throw new Error(`the catalog database (catalog.url) cannot be used: ${messageOf(err)}`, { cause: err });
    }
    return store;
  }

  get current(): Readonly<CatalogData> {
    return this.data;
  }

  get available(): boolean {
    return this.listener !== null && this.problem === null;
  }

  get unavailableReason(): string | null {
    return this.available ? null : (this.problem ?? 'not connected');
  }

  onChange(listener: (change: CatalogChange) => void): void {
    this.listeners.push(listener);
  }

  update<T>(change: (draft: CatalogData) => T): Promise<T> {
    return this.enqueue(() => this.commit(change));
  }

  /** Runs `task` after every change and reload queued before it (one at a time per instance). */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task);
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  private async commit<T>(change: (draft: CatalogData) => T): Promise<T> {
    if (!this.available) throw catalogUnavailable(this.unavailableReason);
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      // The lock that serialises every instance's changes.
      const state = (await client.query<StateRow>(`SELECT version, next_oid, initialized FROM ${this.s}.state WHERE id = 1 FOR UPDATE`))
        .rows[0]!;
      const stale = Number(state.version) !== this.version;
      const base = stale ? await this.readCatalog(client, state) : this.data;
      const draft = structuredClone(base) as CatalogData;
      let result: T;
      try {
        result = change(draft);
      } catch (err) {
        await client.query('ROLLBACK');
        throw new ChangeRefused(err);
      }
      const { upserts, deletes } = diffRows(base, draft);
      if (deletes.length > 0) {
        await client.query(
          `DELETE FROM ${this.s}.entries e USING unnest($1::text[], $2::text[]) AS d(kind, key) WHERE e.kind = d.kind AND e.key = d.key`,
          [deletes.map((d) => d.kind), deletes.map((d) => d.key)],
        );
      }
      if (upserts.length > 0) {
        await client.query(
          `INSERT INTO ${this.s}.entries (kind, key, position, data)
           SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::json[])
           ON CONFLICT (kind, key) DO UPDATE SET position = excluded.position, data = excluded.data`,
          [upserts.map((u) => u.kind), upserts.map((u) => u.key), upserts.map((u) => u.position), upserts.map((u) => u.data)],
        );
      }
      const version = Number(state.version) + 1;
      await client.query(`UPDATE ${this.s}.state SET version = $1, next_oid = $2, initialized = $3, changed_at = now() WHERE id = 1`, [
        version,
        draft.nextOid,
        draft.initialized === true,
      ]);
      await client.query('SELECT pg_notify($1, $2)', [this.channel, JSON.stringify({ version, instance: this.instance })]);
      await client.query('COMMIT');
      this.publish(draft, version, stale);
      return result;
    } catch (err) {
      if (err instanceof ChangeRefused) throw err.reason;
      await client.query('ROLLBACK').catch(() => undefined);
      if (!isConnectionFailure(err)) throw err;
      broken = err as Error;
      throw catalogUnavailable(messageOf(err));
    } finally {
      client.done(broken);
    }
  }

  /**
   * A lock no other instance holds at once (an advisory lock of the catalog database, held by a
   * connection of its own until released); null when another instance holds it.
   */
  async tryLock(name: string): Promise<(() => Promise<void>) | null> {
    const client = await this.connect();
    try {
      const key = `${this.options.schema}:${name}`;
      const taken = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key]);
      if (!taken.rows[0]?.ok) {
        client.done();
        return null;
      }
      return async () => {
        try {
          await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
          client.done();
        } catch (err) {
          // A broken connection is not reused; its session, and so the lock, ended with it.
          client.done(err as Error);
        }
      };
    } catch (err) {
      client.done(err as Error);
      throw catalogUnavailable(messageOf(err));
    }
  }

  private async connect(): ReturnType<typeof checkout> {
    try {
      return await checkout(this.pool);
    } catch (err) {
      throw catalogUnavailable(messageOf(err));
    }
  }

  private publish(data: CatalogData, version: number, remote: boolean): void {
    this.data = data;
    this.version = version;
    this.generation++;
    for (const listener of this.listeners) listener({ remote });
  }

  private async readCatalog(client: pg.ClientBase, state: StateRow): Promise<CatalogData> {
    const { rows } = await client.query<{ kind: string; position: number; data: string }>(
      `SELECT kind, position, data::text AS data FROM ${this.s}.entries`,
    );
    const scalars: CatalogScalars = { nextOid: Number(state.next_oid), initialized: state.initialized };
    return catalogOf(rows, scalars);
  }

  /** Loads the catalog when the database has a newer version than this instance. */
  private async reload(): Promise<void> {
    const client = await checkout(this.pool);
    let broken: Error | undefined;
    try {
      // One snapshot: the state row and the entries agree.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const state = (await client.query<StateRow>(`SELECT version, next_oid, initialized FROM ${this.s}.state WHERE id = 1`)).rows[0]!;
      if (Number(state.version) !== this.version) {
        const data = await this.readCatalog(client, state);
        await client.query('COMMIT');
        this.publish(data, Number(state.version), true);
      } else {
        await client.query('COMMIT');
      }
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      client.done(broken);
    }
  }

  /** Reloads after the commits announced since; reloads already waiting cover later announcements. */
  private scheduleReload(): void {
    if (this.reloadQueued) return;
    this.reloadQueued = true;
    void this.enqueue(async () => {
      this.reloadQueued = false;
      await this.reload();
    }).catch((err: unknown) => this.lost(this.listener, err));
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: 'vdb catalog listener',
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.channel !== this.channel || message.payload === undefined) return;
      const { version, instance } = JSON.parse(message.payload) as { version: number; instance: string };
      if (instance !== this.instance && version > this.version) this.scheduleReload();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.channel)}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    this.listener = client;
  }

  /** The LISTEN connection answers, or counts as lost. */
  private async ping(): Promise<void> {
    const client = this.listener;
    if (!client) return;
    try {
      await client.query('SELECT 1');
    } catch (err) {
      this.lost(client, err);
    }
  }

  /** The LISTEN connection `client` failed: unavailable until a new one listens and the catalog is reloaded. */
  private lost(client: pg.Client | null, err: unknown): void {
    if (this.closed || client === null || client !== this.listener) return;
    this.listener = null;
    this.problem = messageOf(err);
    this.options.log.warn({ err: this.problem }, 'catalog database unreachable: requests get 503 until it answers again');
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.recover();
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }

  private async recover(): Promise<void> {
    try {
      await this.listen();
      // Whatever changed while this instance could not hear it.
      await this.enqueue(() => this.reload());
      this.problem = null;
      this.options.log.info('catalog database reachable again');
    } catch (err) {
      this.problem = messageOf(err);
      const client = this.listener;
      this.listener = null;
      client?.removeAllListeners('end');
      await client?.end().catch(() => undefined);
      this.retry();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.queue;
    const client = this.listener;
    this.listener = null;
    client?.removeAllListeners('end');
    await client?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}

/** An error thrown by a change function (not by the database): passed on as it is. */
class ChangeRefused {
  constructor(readonly reason: unknown) {}
}
