/**
 * One engine call at a time per connection. Loads of one statement run at the same time
 * (load-planned.ts) and share the statement's connection, whose temporary tables they fill; a
 * DuckDB connection runs one statement at a time, and an appender must not write while a
 * statement of the same connection is running. Each call (or each batch of appends) takes its
 * turn here; the sources are still read at the same time.
 */
import type { DuckDBConnection } from '@duckdb/node-api';

const tails = new WeakMap<DuckDBConnection, Promise<unknown>>();

/** Runs `work` once every call queued before it on `connection` has settled. Not re-entrant. */
export function exclusive<T>(connection: DuckDBConnection, work: () => Promise<T> | T): Promise<T> {
  const previous = tails.get(connection) ?? Promise.resolve();
  const result = previous.then(work, work);
  tails.set(
    connection,
    result.catch(() => undefined),
  );
  return result;
}
