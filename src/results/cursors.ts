/**
 * The cursor store behind pagination. A paginated result is computed once into an engine table
 * (DuckDB keeps it in memory and spills to the data directory beyond its memory limit); each
 * chunk is then read by row number, never recomputed. A cursor belongs to the user who created
 * it, expires when idle, and the least recently used cursors go first when the store is full.
 */
import { randomBytes } from 'node:crypto';
import { describe, type EngineGeneration } from '../runtime/duckdb.js';
import { notFound } from '../errors.js';
import { aliasedRelation, jsonRowsSql, streamJsonRows, type ResultColumn, type RowShape } from './json.js';

export interface Cursor {
  id: string;
  owner: string;
  /** The resource it was created for (e.g. /rest/api/query); read only through the same one. */
  resource: string;
  columns: ResultColumn[];
  rowCount: number;
  warnings: string[];
  lastUsed: number;
  readonly table: string;
  /** The engine generation that holds the table (kept open while the cursor lives). */
  readonly engine: EngineGeneration;
  /** The owner's access (roles and their grants) when the result was computed. */
  readonly access: string;
}

/** A result the store can keep: an open statement of the engine, seen from here. */
export interface MaterializableResult {
  columns: ResultColumn[];
  warnings: string[];
  /** The engine generation the result is computed on. */
  readonly engine: EngineGeneration;
  /** Writes the whole result into the table `table` of `engine`; returns its row count. */
  materialize(table: string): Promise<number>;
}

export interface CursorStoreOptions {
  idleMs: number;
  maxCursors: number;
  /**
   * A user's access as it is now (their roles and those roles' grants, conditions and masks): a
   * cursor whose owner's access changed since it was computed is dropped, not read.
   */
  accessOf?: (owner: string) => string;
}

/** Created in every engine generation (see services.ts). */
export const CURSOR_SCHEMA = 'vdb_cursors';

export class CursorStore {
  private readonly cursors = new Map<string, Cursor>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly options: CursorStoreOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => void this.sweep(), Math.max(1000, Math.min(options.idleMs / 4, 60_000)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.cursors.size;
  }

  /** Open cursors and the rows they hold (for the metrics). */
  stats(): { count: number; rows: number } {
    let rows = 0;
    for (const cursor of this.cursors.values()) rows += cursor.rowCount;
    return { count: this.cursors.size, rows };
  }

  /** Materialises the execution's whole result as a new cursor of `owner`. */
  async create(execution: MaterializableResult, owner: string, resource: string): Promise<Cursor> {
    const id = randomBytes(16).toString('hex');
    const table = `${CURSOR_SCHEMA}.r_${id}`;
    const { engine } = execution;
    engine.hold();
    let rowCount: number;
    let stored: Awaited<ReturnType<typeof describe>>;
    try {
      rowCount = await execution.materialize(table);
      // The stored table's own types: they are what pages are encoded from.
      stored = await engine.withConnection((connection) => describe(connection, `SELECT * FROM ${table}`));
    } catch (err) {
      await engine.runAll([`DROP TABLE IF EXISTS ${table}`]).catch(() => undefined);
      engine.release();
      throw err;
    }
    const cursor: Cursor = {
      id,
      engine,
      access: this.options.accessOf?.(owner) ?? '',
      owner,
      resource,
      table,
      columns: execution.columns.map((column, i) => ({ name: column.name, type: stored[i]!.type })),
      rowCount,
      warnings: execution.warnings,
      lastUsed: this.now(),
    };
    this.cursors.set(id, cursor);
    await this.evictBeyondLimit();
    return cursor;
  }

  /** The cursor `id` of `owner` for `resource`; unknown, expired, other users' ones: all 404. */
  get(id: string, owner: string, resource: string): Cursor {
    const cursor = this.cursors.get(id);
    if (cursor && cursor.owner === owner && this.options.accessOf && this.options.accessOf(owner) !== cursor.access) {
      // Computed under grants the owner no longer has (or other ones): never served again.
      void this.drop(cursor).catch(() => undefined);
      throw notFound(
        `The result with requestId "${id}" was computed under permissions that have changed since.`,
        'Run the query again with pagination=true: the new result follows the permissions as they are now.',
        'Unknown requestId',
      );
    }
    if (!cursor || cursor.owner !== owner || cursor.resource !== resource || this.isIdle(cursor)) {
      throw notFound(
        `No result with requestId "${id}" exists for this user; it may have expired.`,
        'Run the query again with pagination=true to get a new requestId.',
        'Unknown requestId',
      );
    }
    cursor.lastUsed = this.now();
    return cursor;
  }

  /** Streams rows [offset, offset + limit) of the cursor as JSON texts. */
  async *page(cursor: Cursor, offset: number, limit: number, shape: RowShape): AsyncGenerator<string> {
    const slice = `SELECT * FROM ${cursor.table} WHERE rowid >= ${offset} AND rowid < ${offset + limit} ORDER BY rowid`;
    const sql = jsonRowsSql(aliasedRelation(slice, cursor.columns.length), cursor.columns, shape);
    const connection = await cursor.engine.connect();
    try {
      yield* streamJsonRows(connection, sql);
    } finally {
      connection.closeSync();
      cursor.lastUsed = this.now();
    }
  }

  private isIdle(cursor: Cursor): boolean {
    return this.now() - cursor.lastUsed > this.options.idleMs;
  }

  private async drop(cursor: Cursor): Promise<void> {
    this.cursors.delete(cursor.id);
    try {
      await cursor.engine.runAll([`DROP TABLE IF EXISTS ${cursor.table}`]);
    } finally {
      cursor.engine.release();
    }
  }

  /** Drops idle cursors. */
  async sweep(): Promise<void> {
    for (const cursor of [...this.cursors.values()]) if (this.isIdle(cursor)) await this.drop(cursor);
  }

  /** Drops every cursor of `owner` (used when a user is removed). */
  async dropOwner(owner: string): Promise<void> {
    for (const cursor of [...this.cursors.values()]) if (cursor.owner === owner) await this.drop(cursor);
  }

  private async evictBeyondLimit(): Promise<void> {
    const byAge = [...this.cursors.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    while (byAge.length > this.options.maxCursors) await this.drop(byAge.shift()!);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
