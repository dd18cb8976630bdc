/**
 * Helpers for the tests of the shared catalog: a PostgreSQL database of its own per test file
 * (so that it can be blocked and dropped without touching anyone else's), and a poll that
 * measures how long a change took to be seen.
 */
import assert from 'node:assert/strict';
import { PG, pgClient, uniqueTag } from '../connectors/db.js';

export interface CatalogDatabase {
  name: string;
  url: string;
  /** Refuses new connections and ends the open ones: the catalog database "goes away". */
  block(): Promise<void>;
  unblock(): Promise<void>;
  /** Runs `sql` in the catalog database (as postgres). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createCatalogDatabase(): Promise<CatalogDatabase> {
  const name = uniqueTag();
  const admin = await pgClient();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = `postgres://${PG.user}@${PG.host}:${PG.port}/${name}`;
  return {
    name,
    url,
    async block() {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    },
    async unblock() {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    },
    async query<T>(sql: string, params: unknown[] = []) {
      const client = await pgClient(name);
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end();
      }
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * Polls `check` until it passes; fails when it has not within `limitMs`. Returns the time it took.
 * (A bound the issue sets, "within a second", not a speed measurement.)
 */
export async function seenWithin(limitMs: number, what: string, check: () => Promise<void>): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      await check();
      return Date.now() - started;
    } catch (err) {
      if (Date.now() - started > limitMs)
        assert.fail(`${what}: not seen within ${limitMs} ms (${err instanceof Error ? err.message : String(err)})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
