/**
 * `vdb migrate-catalog`: copies a data directory's catalog (catalog.json) and server secrets
 * (secrets.json) into a catalog database, in one transaction, so that instances started with
 * `catalog.url` carry on where the data directory left off: same users and passwords, same
 * sources (their sealed secrets open with the copied key), same login tokens.
 */
import path from 'node:path';
import pg from 'pg';
import { readStoredSecrets, SECURITY_EPOCH } from './server-secrets.js';
import { rowsOf } from './catalog-rows.js';
import { CATALOG_FILE, loadCatalogFile } from './file-store.js';
import { PostgresSecretsStore } from './postgres-secrets.js';
import { migrate, quoteIdent } from './postgres-schema.js';
import type { CatalogData } from './types.js';

export interface MigrationReport {
  sources: number;
  users: number;
  views: number;
  permissions: number;
  /** Sources whose files are inside the data directory: other instances cannot read them there. */
  localFiles: string[];
}

export async function migrateCatalog(dataDir: string, url: string, schema: string): Promise<MigrationReport> {
  const file = path.join(dataDir, CATALOG_FILE);
  const catalog = loadCatalogFile(dataDir);
  if (catalog.users.length === 0) throw new Error(`${file} does not exist or holds no users: there is nothing to migrate from ${dataDir}`);
  const secrets = readStoredSecrets(dataDir);
  if (secrets.securityEpoch < SECURITY_EPOCH || secrets.rotatingTo !== undefined) {
    throw new Error(
      `the secrets of ${dataDir} still need the security upgrade of 0.2.0: start this vdb once on the data directory (vdb serve --data-dir ${dataDir}), stop it, then migrate`,
    );
  }
  const client = new pg.Client({ connectionString: url, application_name: 'vdb migrate-catalog' });
  // A connection ended by the server fails the statement under way; the event itself is not news.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await migrate(client, schema);
    const s = quoteIdent(schema);
    await client.query('BEGIN');
    try {
      const state = (await client.query<{ version: string }>(`SELECT version FROM ${s}.state WHERE id = 1 FOR UPDATE`)).rows[0]!;
      const held = (
        await client.query<{ n: string }>(`SELECT (SELECT count(*) FROM ${s}.entries) + (SELECT count(*) FROM ${s}.secrets) AS n`)
      ).rows[0]!;
      if (Number(state.version) > 0 || Number(held.n) > 0) {
        throw new Error(
          `schema "${schema}" of the catalog database already holds a catalog (version ${state.version}): nothing was copied. ` +
            `To replace it, drop the schema first (DROP SCHEMA ${s} CASCADE) with every instance stopped`,
        );
      }
      const rows = [...rowsOf(catalog).values()];
      await client.query(
        `INSERT INTO ${s}.entries (kind, key, position, data) SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::json[])`,
        [rows.map((r) => r.kind), rows.map((r) => r.key), rows.map((r) => r.position), rows.map((r) => r.data)],
      );
      await client.query(`UPDATE ${s}.state SET version = 1, next_oid = $1, initialized = $2, changed_at = now() WHERE id = 1`, [
        catalog.nextOid,
        catalog.initialized === true,
      ]);
      await new PostgresSecretsStore(client, schema).upsert(secrets, 'DO NOTHING');
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    await client.end();
  }
  return {
    sources: catalog.sources.length,
    users: catalog.users.length,
    views: (catalog.views ?? []).length,
    permissions: (catalog.permissions ?? []).length,
    localFiles: sourcesInside(catalog, dataDir),
  };
}

function sourcesInside(catalog: CatalogData, dataDir: string): string[] {
  const root = path.resolve(dataDir) + path.sep;
  return catalog.sources.filter((s) => Object.values(s.connection).some((v) => path.resolve(v).startsWith(root))).map((s) => s.name);
}
