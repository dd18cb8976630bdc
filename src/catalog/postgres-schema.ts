/**
 * The catalog database's schema and its migrations: each applied once, in order, at start,
 * recorded in `<schema>.migrations`; concurrent starts wait for each other (an advisory lock).
 */
import type pg from 'pg';

/** Schema names accepted for `catalog.schema` (quoted anyway). */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * A connection of `pool` for a few statements. The server ending it between two statements
 * (pg_terminate_backend, a restart) is an 'error' event that, unheard, would end the process:
 * it is heard here, and the next statement fails instead.
 */
export async function checkout(pool: pg.Pool): Promise<pg.PoolClient & { done(broken?: Error): void }> {
  const client = await pool.connect();
  const ignore = () => undefined;
  client.on('error', ignore);
  return Object.assign(client, {
    done(broken?: Error) {
      client.removeListener('error', ignore);
      client.release(broken);
    },
  });
}

interface Migration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'catalog, secrets, audit and query logs',
    sql: (s) => `
      CREATE TABLE ${s}.state (
        id int PRIMARY KEY CHECK (id = 1),
        version bigint NOT NULL,
        next_oid bigint NOT NULL,
        initialized boolean NOT NULL,
        changed_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO ${s}.state (id, version, next_oid, initialized) VALUES (1, 0, 1000, false);
      -- json, not jsonb: the text is kept as written, so an unchanged item compares equal.
      CREATE TABLE ${s}.entries (
        kind text NOT NULL,
        key text NOT NULL,
        position int NOT NULL,
        data json NOT NULL,
        PRIMARY KEY (kind, key)
      );
      CREATE TABLE ${s}.secrets (
        id int PRIMARY KEY CHECK (id = 1),
        server_secret text NOT NULL,
        encryption_key text NOT NULL,
        security_epoch int NOT NULL,
        rotating_to int,
        previous_encryption_key text
      );
      CREATE TABLE ${s}.audit_log (
        id bigserial PRIMARY KEY,
        time timestamptz NOT NULL,
        user_name text,
        action text NOT NULL,
        target text,
        outcome text NOT NULL,
        address text,
        instance text NOT NULL
      );
      CREATE TABLE ${s}.query_log (
        id bigserial PRIMARY KEY,
        user_name text NOT NULL,
        statement text NOT NULL,
        start timestamptz NOT NULL,
        duration_ms bigint NOT NULL,
        rows bigint,
        status text NOT NULL,
        error text,
        source_queries text,
        narrowed boolean NOT NULL,
        sources text[] NOT NULL,
        instance text NOT NULL
      );
      CREATE INDEX ON ${s}.query_log (start);`,
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Brings `schema` up to the latest version; returns the versions applied now. */
export async function migrate(client: pg.ClientBase, schema: string): Promise<number[]> {
  const s = quoteIdent(schema);
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    // One instance migrates; the others wait here and then find nothing left to do.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`vdb-catalog-migrations:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${s}.migrations`);
    const current = rows[0]?.version ?? 0;
    if (current > LATEST_VERSION) {
      throw new Error(
        `the catalog schema "${schema}" is at version ${current}, newer than this vdb knows (${LATEST_VERSION}): run the newer vdb, or upgrade this one`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(migration.sql(s));
      await client.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return applied;
}
