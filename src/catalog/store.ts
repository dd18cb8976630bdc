/**
 * The catalog store: where the catalog (sources, views, users, roles, grants, API keys,
 * invitations, preferences) is kept. Two implementations, chosen at start (catalog/open.ts):
 * one JSON file in the data directory (file-store.ts, the default) and a schema of a PostgreSQL
 * database shared by several instances (postgres-store.ts). The rest of vdb sees only this.
 */
import { ApiError } from '../errors.js';
import type { CatalogData } from './types.js';

/** What listeners hear: `remote` when the change came from another instance (or was found on reload). */
export interface CatalogChange {
  remote: boolean;
}

export interface CatalogStore {
  /** The catalog as last committed (read synchronously everywhere; refreshed on remote changes). */
  readonly current: Readonly<CatalogData>;
  /** Bumped on every change seen by this instance; lets caches (system tables, plans) know they are stale. */
  readonly generation: number;
  /** Whether the store can be used now (false while a shared catalog database is unreachable). */
  readonly available: boolean;
  /** Why it is not available, for /readyz. */
  readonly unavailableReason: string | null;
  onChange(listener: (change: CatalogChange) => void): void;
  /**
   * Applies `change` to a copy of the latest catalog, commits it, then makes it current.
   * If `change` throws or the commit fails, nothing changes. `change` may run more than once
   * only in that it sees the latest state; its result is what the committed run returned.
   */
  update<T>(change: (draft: CatalogData) => T): Promise<T>;
  /**
   * A lock that no other instance sharing this catalog holds at the same time (a copy's refresh);
   * null when one does. Absent where the catalog is this instance's own (one data directory, one process).
   */
  tryLock?(name: string): Promise<(() => Promise<void>) | null>;
  close(): Promise<void>;
}

/** 503 for requests that need the catalog while its database cannot be reached. */
export const catalogUnavailable = (reason: string | null) =>
  new ApiError(
    503,
    'Catalog unavailable',
    `The catalog database cannot be reached${reason ? ` (${reason})` : ''}, so this instance cannot check users, grants or sources now.`,
    'Try again shortly; the instance recovers by itself once the catalog database answers again.',
    { 'retry-after': '1' },
  );
