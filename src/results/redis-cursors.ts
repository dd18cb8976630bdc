/**
 * The cursor store shared by every instance (`cursors.redisUrl`): a cursor's description and
 * its chunks are Redis keys that live for the idle expiry after their last read, so a result
 * computed on one instance is served by any. A byte budget holds for all instances together:
 * beyond it the least recently read cursors are dropped, oldest first.
 *
 * Keys (under the prefix): cursor:<id> (the cursor, JSON), cursor:<id>:rows (hash: chunk index
 * -> rows), cursors (sorted set: id by last read), cursor-sizes (hash: id -> bytes, id:rows ->
 * rows), cursor-bytes and cursor-rows (totals).
 */
import type { Redis } from 'ioredis';
import {
  checkCursor,
  cursorExpired,
  cutPage,
  encodeCursor,
  newCursorId,
  resultTooLarge,
  type Cursor,
  type CursorPolicy,
  type CursorStats,
  type CursorStore,
  type MaterializableResult,
} from './cursors.js';
import type { RowShape } from './json.js';
import { redisCheck, withRedis } from '../runtime/redis.js';

export interface RedisCursorOptions extends CursorPolicy {
  /** Bytes of chunks in Redis, all instances' cursors together. */
  maxBytes: number;
  /** Prepended to every key (instances that share cursors use the same one). */
  prefix: string;
  /** Bytes of chunks this instance keeps of what it read (ChunkCache). */
  cacheBytes: number;
}

/** Chunks fetched per Redis round trip while a page is read. */
const CHUNKS_PER_READ = 16;

const WHAT = 'paginated results';

/**
 * Forgets a cursor atomically: its keys and its share of the totals, counted once even when
 * several instances forget it at the same time.
 * KEYS: cursors, cursor-sizes, cursor-bytes, cursor-rows, cursor:<id>, cursor:<id>:rows; ARGV: id.
 */
const FORGET = `
local bytes = redis.call('HGET', KEYS[2], ARGV[1])
local rows = redis.call('HGET', KEYS[2], ARGV[1] .. ':rows')
redis.call('ZREM', KEYS[1], ARGV[1])
if bytes then
  redis.call('HDEL', KEYS[2], ARGV[1], ARGV[1] .. ':rows')
  redis.call('DECRBY', KEYS[3], bytes)
  redis.call('DECRBY', KEYS[4], rows or 0)
end
redis.call('DEL', KEYS[5], KEYS[6])
return bytes
`;

/**
 * The chunks this instance read last, least recently used dropped first beyond a byte budget. A
 * cursor's chunks never change once written and its id is never reused, so a cached chunk is
 * always right; whether the cursor still exists and who may read it is asked of Redis on every
 * page (get), before any chunk is cut.
 */
export class ChunkCache {
  private readonly entries = new Map<string, string>();
  private bytes = 0;
  hits = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): string | undefined {
    const text = this.entries.get(key);
    if (text === undefined) return undefined;
    this.hits++;
    // Map order is insertion order: moved to the end, it is the most recently used.
    this.entries.delete(key);
    this.entries.set(key, text);
    return text;
  }

  set(key: string, text: string): void {
    // UTF-16 in memory: two bytes a character.
    const size = text.length * 2;
    if (size > this.maxBytes || this.entries.has(key)) return;
    for (const [oldest, old] of this.entries) {
      if (this.bytes + size <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.length * 2;
    }
    this.entries.set(key, text);
    this.bytes += size;
  }

  /** Drops a cursor's chunks (it was forgotten): memory back at once instead of when they age out. */
  dropCursor(id: string): void {
    for (const [key, text] of this.entries) {
      if (!key.startsWith(`${id}:`)) continue;
      this.entries.delete(key);
      this.bytes -= text.length * 2;
    }
  }
}

export class RedisCursorStore implements CursorStore {
  private readonly sweeper: NodeJS.Timeout;
  private cached: CursorStats = { count: 0, rows: 0, bytes: 0 };
  readonly chunks: ChunkCache;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisCursorOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.chunks = new ChunkCache(options.cacheBytes);
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), Math.max(1000, Math.min(options.idleMs / 4, 60_000)));
    this.sweeper.unref();
  }

  private key(name: string): string {
    return `${this.options.prefix}${name}`;
  }

  private metaKey = (id: string) => this.key(`cursor:${id}`);
  private rowsKey = (id: string) => this.key(`cursor:${id}:rows`);

  stats(): CursorStats {
    return this.cached;
  }

  async check(): Promise<string> {
    return redisCheck(this.redis);
  }

  async create(execution: MaterializableResult, owner: string, resource: string): Promise<Cursor> {
    let rowsKey: string | null = null;
    let bytes = 0;
    try {
      const cursor = await encodeCursor(
        execution,
        owner,
        resource,
        this.options.accessOf?.(owner) ?? '',
        this.now(),
        async (index, chunk) => {
          bytes += Buffer.byteLength(chunk);
          if (bytes > this.options.maxBytes) throw resultTooLarge(this.options.maxBytes, 'cursors.maxBytes');
          rowsKey ??= this.key(`cursor:pending:${newCursorId()}`);
          await withRedis(WHAT, () =>
            this.redis.multi().hset(rowsKey!, String(index), chunk).pexpire(rowsKey!, this.options.idleMs).exec(),
          );
        },
      );
      const { id } = cursor;
      const multi = this.redis.multi();
      if (rowsKey) multi.rename(rowsKey, this.rowsKey(id)).pexpire(this.rowsKey(id), this.options.idleMs);
      await withRedis(WHAT, () =>
        multi
          .set(this.metaKey(id), JSON.stringify(cursor), 'PX', this.options.idleMs)
          .zadd(this.key('cursors'), cursor.lastUsed, id)
          .hset(this.key('cursor-sizes'), id, String(cursor.bytes), `${id}:rows`, String(cursor.rowCount))
          .incrby(this.key('cursor-bytes'), cursor.bytes)
          .incrby(this.key('cursor-rows'), cursor.rowCount)
          .exec(),
      );
      rowsKey = null;
      await this.evictBeyondBudget(id);
      return cursor;
    } catch (err) {
      if (rowsKey) await this.redis.del(rowsKey).catch(() => undefined);
      throw err;
    }
  }

  async get(id: string, owner: string, resource: string): Promise<Cursor> {
    if (!/^[0-9a-f]{32}$/.test(id)) throw cursorExpired(id);
    const now = this.now();
    // One round trip: read and renew together (renewing a cursor that is then refused costs nothing).
    const answers = await withRedis(WHAT, () =>
      this.redis
        .multi()
        .get(this.metaKey(id))
        .pexpire(this.metaKey(id), this.options.idleMs)
        .pexpire(this.rowsKey(id), this.options.idleMs)
        .zadd(this.key('cursors'), 'XX', now, id)
        .exec(),
    );
    const text = answers?.[0]?.[1];
    const stored = typeof text === 'string' ? (JSON.parse(text) as Cursor) : undefined;
    // Redis expires idle cursors by itself: a cursor it still has is not idle.
    if (stored) stored.lastUsed = now;
    return checkCursor(stored, id, owner, resource, this.options, now, () => void this.forget(id).catch(() => undefined));
  }

  page(cursor: Cursor, offset: number, limit: number, shape: RowShape): AsyncGenerator<string> {
    const redis = this.redis;
    const chunks = this.chunks;
    const rowsKey = this.rowsKey(cursor.id);
    const cacheKey = (index: number) => `${cursor.id}:${index}`;
    return cutPage(cursor, offset, limit, shape, async function* (indexes) {
      for (let i = 0; i < indexes.length; i += CHUNKS_PER_READ) {
        const batch = indexes.slice(i, i + CHUNKS_PER_READ);
        const known = batch.map((index) => chunks.get(cacheKey(index)));
        const missing = batch.filter((_, k) => known[k] === undefined);
        const read = missing.length > 0 ? await withRedis(WHAT, () => redis.hmget(rowsKey, ...missing.map(String))) : [];
        for (const [k, index] of missing.entries()) {
          const text = read[k];
          if (typeof text === 'string') chunks.set(cacheKey(index), text);
        }
        let next = 0;
        for (const text of known) yield text ?? read[next++] ?? null;
      }
    });
  }

  async sweep(): Promise<void> {
    const gone = await withRedis(WHAT, () => this.redis.zrangebyscore(this.key('cursors'), '-inf', this.now() - this.options.idleMs));
    for (const id of gone) await this.forget(id);
    await this.refreshStats();
  }

  async remove(id: string): Promise<void> {
    await this.forget(id);
    await this.refreshStats();
  }

  async dropOwner(owner: string): Promise<void> {
    const ids = await withRedis(WHAT, () => this.redis.zrange(this.key('cursors'), 0, -1));
    for (let i = 0; i < ids.length; i += 100) {
      const batch = ids.slice(i, i + 100);
      const texts = await withRedis(WHAT, () => this.redis.mget(...batch.map(this.metaKey)));
      for (const [j, text] of texts.entries()) {
        if (text !== null && (JSON.parse(text) as Cursor).owner === owner) await this.forget(batch[j]!);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private async forget(id: string): Promise<void> {
    this.chunks.dropCursor(id);
    await withRedis(WHAT, () =>
      this.redis.eval(
        FORGET,
        6,
        this.key('cursors'),
        this.key('cursor-sizes'),
        this.key('cursor-bytes'),
        this.key('cursor-rows'),
        this.metaKey(id),
        this.rowsKey(id),
        id,
      ),
    );
  }

  /** Drops the least recently read cursors (never `keep`) while the total is above the budget. */
  private async evictBeyondBudget(keep: string): Promise<void> {
    for (;;) {
      const total = Number(await withRedis(WHAT, () => this.redis.get(this.key('cursor-bytes'))));
      if (total <= this.options.maxBytes) break;
      const oldest = await withRedis(WHAT, () => this.redis.zrange(this.key('cursors'), 0, 1));
      const victim = oldest.find((id) => id !== keep);
      if (victim === undefined) break;
      await this.forget(victim);
    }
    await this.refreshStats();
  }

  private async refreshStats(): Promise<void> {
    const [count, bytes, rows] = await withRedis(WHAT, () =>
      Promise.all([
        this.redis.zcard(this.key('cursors')),
        this.redis.get(this.key('cursor-bytes')),
        this.redis.get(this.key('cursor-rows')),
      ]),
    );
    this.cached = { count, bytes: Number(bytes ?? 0), rows: Number(rows ?? 0) };
  }
}
