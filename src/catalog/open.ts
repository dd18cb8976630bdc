/**
 * Chooses the catalog store at start: the data directory's files (the default), or the catalog
 * database when `catalog.url` is set. Returns the store, where the server secrets live, and
 * where the audit and query logs are also written.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AuditEntry } from './audit-log.js';
import { FileSecretsStore, type SecretsStore } from './server-secrets.js';
import { FileCatalogStore } from './file-store.js';
import { PostgresLogWriter } from './postgres-logs.js';
import { PostgresSecretsStore } from './postgres-secrets.js';
import { PostgresCatalogStore } from './postgres-store.js';
import type { QueryLogEntry } from './query-log.js';
import type { CatalogStore } from './store.js';

export interface OpenedCatalog {
  store: CatalogStore;
  secrets: SecretsStore;
  /** Where log entries go besides this process's memory (the catalog database), or null. */
  logs: {
    audit(entry: AuditEntry): void;
    query(entry: QueryLogEntry): void;
    /** Every instance's latest entries (SYSLOG). */
    recent(limit: number): Promise<{ queries: QueryLogEntry[]; audits: AuditEntry[] }>;
    close(): Promise<void>;
  } | null;
}

export async function openCatalog(config: Config, log: Logger): Promise<OpenedCatalog> {
  if (config.catalog.url === null) {
    const store = new FileCatalogStore(config.dataDir);
    if (store.removedLeftovers.length > 0)
      log.warn(
        { files: store.removedLeftovers },
        'temporary files of an interrupted catalog write removed (the catalog is the last completed write)',
      );
    return { store, secrets: new FileSecretsStore(config.dataDir), logs: null };
  }
  const store = await PostgresCatalogStore.open({ url: config.catalog.url, schema: config.catalog.schema, log });
  // The URL may hold a password: only where, not how.
  const { host, port, pathname } = new URL(config.catalog.url);
  log.info({ host, port, database: pathname.slice(1), schema: store.schema }, 'catalog in the catalog database (shared)');
  return {
    store,
    secrets: new PostgresSecretsStore(store.pool, store.schema),
    logs: new PostgresLogWriter(store.pool, store.schema, store.instance, config.queryLog, log),
  };
}
