/**
 * Cursors behind pagination: what every cursor store shares. A paginated result is computed
 * once into an engine table, read back as one JSON array text per row, and kept in chunks of
 * about CHUNK_BYTES (rows separated by "\n"); a page is cut from those chunks, never
 * recomputed. Where the chunks live is the store's business: this process (local-cursors.ts)
 * or Redis (redis-cursors.ts). Both cut pages with the same code, so a page reads the same
 * bytes whichever store and instance serves it.
 */
import { randomBytes } from 'node:crypto';
import { describe, sqlLiteral, streamStatement, type EngineGeneration } from '../runtime/duckdb.js';
import { ApiError, notFound } from '../errors.js';
import { aliasedRelation, columnTypeName, jsonRowsSql, type ResultColumn, type RowShape } from './json.js';

/** A column of a cursor: its name and the SQL type of the stored result, as text. */
export interface CursorColumn {
  name: string;
  type: string;
}

/** What a store keeps of a cursor besides its rows; plain data, so it can be stored anywhere. */
export interface Cursor {
  id: string;
  owner: string;
  /** The resource it was created for (e.g. /rest/api/query); read only through the same one. */
  resource: string;
  columns: CursorColumn[];
  /** Each column name as a JSON object key, as the engine writes it (for object-shaped rows). */
  keys: string[];
  rowCount: number;
  warnings: string[];
  /** The first row number of each chunk, ascending. */
  starts: number[];
  /** Bytes of all chunks. */
  bytes: number;
  /** The owner's access (roles and their grants) when the result was computed. */
  access: string;
  lastUsed: number;
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

/** Open cursors and what they hold (for the metrics). */
export interface CursorStats {
  count: number;
  rows: number;
  bytes: number;
}

/** The cursor stores' common face: the HTTP layer sees only this. */
export interface CursorStore {
  /** Computes the execution's whole result into a new cursor of `owner`. */
  create(execution: MaterializableResult, owner: string, resource: string): Promise<Cursor>;
  /** The cursor `id` of `owner` for `resource`; unknown, expired, other users' ones: all 404. */
  get(id: string, owner: string, resource: string): Promise<Cursor>;
  /** Rows [offset, offset + limit) of the cursor as JSON texts joined by commas, in pieces. */
  page(cursor: Cursor, offset: number, limit: number, shape: RowShape): AsyncGenerator<string>;
  /** Drops the cursor `id`. */
  remove(id: string): Promise<void>;
  /** Drops every cursor of `owner` (a user removed). */
  dropOwner(owner: string): Promise<void>;
  /** Drops idle cursors. */
  sweep(): Promise<void>;
  stats(): CursorStats;
  /** 'ok', or why the store cannot be used now (GET /readyz). */
  check(): Promise<string>;
  close(): Promise<void>;
}

export interface CursorPolicy {
  idleMs: number;
  /**
   * Each user's share of the store (pagination.maxCursorsPerUser, the resolved
   * pagination.maxBytesPerUser): past it the user's own least recently read cursors go, never
   * another user's; a single result larger than `bytes` alone is refused (413).
   */
  perUser: { cursors: number; bytes: number };
  /**
   * A user's access as it is now (their roles and those roles' grants, conditions and masks): a
   * cursor whose owner's access changed since it was computed is dropped, not read.
   */
  accessOf?: (owner: string) => string;
}

/** Created in every engine generation (see services.ts): where results are computed before they are chunked. */
export const CURSOR_SCHEMA = 'vdb_cursors';

/** Target size of a stored chunk. */
export const CHUNK_BYTES = 64 * 1024;

export const newCursorId = () => randomBytes(16).toString('hex');

export const cursorExpired = (id: string) =>
  notFound(
    `No result with requestId "${id}" exists for this user; it may have expired (a result not read for a while is dropped, and the oldest go first when the store is full).`,
    'Run the query again with pagination=true to get a new requestId, and start again from offset 0.',
    'Unknown requestId',
  );

const accessChanged = (id: string) =>
  notFound(
    `The result with requestId "${id}" was computed under permissions that have changed since.`,
    'Run the query again with pagination=true: the new result follows the permissions as they are now.',
    'Unknown requestId',
  );

export const resultTooLarge = (budget: number, setting: string) =>
  new ApiError(
    413,
    'Result too large',
    `The paginated result is larger than the ${budget} bytes the cursor store may hold.`,
    `Narrow the statement (fewer rows or columns), read it without pagination, or raise ${setting}.`,
  );

/** A single result larger than what one user's paginated results may take together. */
export const resultTooLargeForUser = (budget: number) =>
  new ApiError(
    413,
    'Result too large',
    `The paginated result is larger than the ${budget} bytes one user's paginated results may take together.`,
    'Narrow the statement (fewer rows or columns), read it without pagination, or ask an administrator to raise pagination.maxBytesPerUser.',
  );

/** The user's results being computed at once need more than their byte quota together. */
export const tooManyResultsForUser = (budget: number) =>
  new ApiError(
    429,
    'Too many paginated results',
    `Your paginated results being computed at the same time need more than the ${budget} bytes one user's paginated results may take together.`,
    'Wait until your other paginated requests are answered, then run the query again.',
  );

/**
 * The checks of `get` shared by the stores: the cursor exists, is the owner's, for this
 * resource, and not idle; `stale` is called for a cursor computed under other permissions.
 */
export function checkCursor(
  cursor: Cursor | undefined,
  id: string,
  owner: string,
  resource: string,
  policy: CursorPolicy,
  now: number,
  stale: (cursor: Cursor) => void,
): Cursor {
  if (cursor && cursor.owner === owner && policy.accessOf && policy.accessOf(owner) !== cursor.access) {
    // Computed under grants the owner no longer has (or other ones): never served again.
    stale(cursor);
    throw accessChanged(id);
  }
  if (!cursor || cursor.owner !== owner || cursor.resource !== resource || now - cursor.lastUsed > policy.idleMs) {
    throw cursorExpired(id);
  }
  return cursor;
}

/** Marks the true end of a read: a stream that stops without it was cut short by an error. */
const END_OF_ROWS = '#end';

/**
 * Computes the execution into an engine table and hands its rows, encoded as JSON arrays, to
 * `store` chunk by chunk (memory stays at about one engine chunk); returns the new cursor.
 */
export async function encodeCursor(
  execution: MaterializableResult,
  owner: string,
  resource: string,
  access: string,
  now: number,
  store: (index: number, chunk: string) => Promise<void>,
): Promise<Cursor> {
  const id = newCursorId();
  const table = `${CURSOR_SCHEMA}.r_${id}`;
  const { engine } = execution;
  engine.hold();
  try {
    const rowCount = await execution.materialize(table);
    // The stored table's own types: they are what rows are encoded from.
    const stored = await engine.withConnection((connection) => describe(connection, `SELECT * FROM ${table}`));
    const columns: ResultColumn[] = execution.columns.map((column, i) => ({ name: column.name, type: stored[i]!.type }));
    const keys = await objectKeys(engine, columns);
    const starts: number[] = [];
    let bytes = 0;
    let pending: string[] = [];
    let pendingBytes = 0;
    let row = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      starts.push(row - pending.length);
      const chunk = pending.join('\n');
      bytes += Buffer.byteLength(chunk);
      pending = [];
      pendingBytes = 0;
      await store(starts.length - 1, chunk);
    };
    const sql = jsonRowsSql(aliasedRelation(`SELECT * FROM ${table} ORDER BY rowid`, columns.length), columns, 'array');
    const connection = await engine.connect();
    try {
      const result = await streamStatement(connection, `SELECT * FROM (${sql}) UNION ALL SELECT '${END_OF_ROWS}'`);
      let ended = false;
      while (!ended) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        for (const text of chunk.getColumnValues(0) as string[]) {
          if (text === END_OF_ROWS) {
            ended = true;
            break;
          }
          // The engine's JSON has no line breaks (they are escaped inside strings): "\n" separates rows.
          if (text.includes('\n')) throw new Error('A row of the result encodes with a line break.');
          pending.push(text);
          pendingBytes += text.length + 1;
          row += 1;
          if (pendingBytes >= CHUNK_BYTES) await flush();
        }
      }
      if (!ended) throw new Error('The result could not be read back in full.');
      await flush();
    } finally {
      connection.closeSync();
    }
    return {
      id,
      owner,
      resource,
      // The types the statement reports (the same as unpaginated), not the stored table's.
      columns: execution.columns.map((c) => ({ name: c.name, type: columnTypeName(c.type) })),
      keys,
      rowCount,
      warnings: execution.warnings,
      starts,
      bytes,
      access,
      lastUsed: now,
    };
  } finally {
    await engine.runAll([`DROP TABLE IF EXISTS ${table}`]).catch(() => undefined);
    engine.release();
  }
}

/** The engine's own spelling of each column name as an object key (`"name"` in `{"name":...}`). */
async function objectKeys(engine: EngineGeneration, columns: readonly ResultColumn[]): Promise<string[]> {
  if (columns.length === 0) return [];
  const select = columns.map((c, i) => `json_object(${sqlLiteral(c.name)}, NULL)::VARCHAR AS k${i}`).join(', ');
  const rows = await engine.withConnection(async (connection) => (await connection.runAndReadAll(`SELECT ${select}`)).getRows());
  return (rows[0] ?? []).map((text) => String(text).slice(1, -':null}'.length));
}

/** The index of the chunk that holds `row` (starts ascending, starts[0] = 0). */
export function chunkOf(starts: readonly number[], row: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= row) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The chunks that hold rows [offset, offset + limit), as indexes. */
export function chunksOf(cursor: Cursor, offset: number, limit: number): number[] {
  const end = Math.min(offset + limit, cursor.rowCount);
  if (offset >= end || cursor.starts.length === 0) return [];
  const first = chunkOf(cursor.starts, offset);
  const last = chunkOf(cursor.starts, end - 1);
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

/**
 * Cuts a page out of its chunks: rows [offset, offset + limit), shaped, joined by commas, one
 * piece per chunk. `read` gives each chunk's text (in order); a missing one means the cursor expired.
 */
export async function* cutPage(
  cursor: Cursor,
  offset: number,
  limit: number,
  shape: RowShape,
  read: (indexes: number[]) => AsyncGenerator<string | null>,
): AsyncGenerator<string> {
  const indexes = chunksOf(cursor, offset, limit);
  if (indexes.length === 0) return;
  const end = Math.min(offset + limit, cursor.rowCount);
  let i = 0;
  for await (const text of read(indexes)) {
    if (text === null) throw cursorExpired(cursor.id);
    const start = cursor.starts[indexes[i++]!]!;
    let rows = text.split('\n');
    const from = Math.max(0, offset - start);
    const to = Math.min(rows.length, end - start);
    rows = rows.slice(from, to);
    if (rows.length === 0) continue;
    yield shape === 'array' ? rows.join(',') : rows.map((row) => asObject(row, cursor.keys)).join(',');
  }
}

/** A row's JSON array text as the JSON object of its columns, value texts kept byte for byte. */
export function asObject(arrayText: string, keys: readonly string[]): string {
  const values = topLevelElements(arrayText);
  if (values.length !== keys.length) throw new Error('A stored row does not match its columns.');
  return `{${keys.map((key, i) => `${key}:${values[i]}`).join(',')}}`;
}

/** The texts of the top-level elements of a JSON array text, exactly as written. */
export function topLevelElements(text: string): string[] {
  const elements: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 1;
  for (let i = 1; i < text.length - 1; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') depth++;
    else if (ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      elements.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (text.length > 2) elements.push(text.slice(start, text.length - 1));
  return elements;
}

/** The header row of a cursor's page: the column names as a JSON array. */
export const cursorHeaderRow = (cursor: Cursor) => JSON.stringify(cursor.columns.map((c) => c.name));
