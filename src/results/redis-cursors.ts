/**
 * The cursor store shared by every instance (`cursors.redisUrl`): a cursor's description and
 * its chunks are Redis keys that live for the idle expiry after their last read, so a result
 * computed on one instance is served by any. Each user has a quota of cursors and bytes
 * (policy.perUser), counted in Redis for all instances together: past it their own least
 * recently read cursors go, never another user's. A byte budget holds for all instances and
 * users together: beyond it the user who holds the most bytes loses their least recently read
 * cursor first, so that one user cannot push the others out. Registering a cursor, its owner's
 * quota and the budget are one Lua script: instances that create cursors at the same time
 * cannot both pass a quota.
 *
 * Keys (under the prefix): cursor:<id> (the cursor, JSON), cursor:<id>:rows (hash: chunk index
 * -> rows), cursors (sorted set: id by last read), cursor-sizes (hash: id -> bytes, id:rows ->
 * rows), cursor-bytes and cursor-rows (totals), cursor-owners (hash: id -> owner),
 * cursors-of:<owner> (sorted set: the owner's ids by last read), user-cursors and user-bytes
 * (sorted sets: owner by cursors, by bytes). The scripts name the keys of the cursors they drop
 * themselves: one Redis, not a cluster (as the MULTIs that span cursors already assume).
 */
import type { Redis } from 'ioredis';
import {
  checkCursor,
  cursorExpired,
  cutPage,
  encodeCursor,
  newCursorId,
  resultTooLarge,
  resultTooLargeForUser,
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
 * `forget(id)` in Lua: drops a cursor's keys and its share of the totals and of its owner's,
 * counted once even when several instances forget it at the same time. ARGV[1] is the prefix.
 */
const FORGET_FUNCTION = `
local prefix = ARGV[1]
local function forget(id)
  local sizes = prefix .. 'cursor-sizes'
  local bytes = redis.call('HGET', sizes, id)
  local rows = redis.call('HGET', sizes, id .. ':rows')
  local owner = redis.call('HGET', prefix .. 'cursor-owners', id)
  redis.call('ZREM', prefix .. 'cursors', id)
  if bytes then
    redis.call('HDEL', sizes, id, id .. ':rows')
    redis.call('DECRBY', prefix .. 'cursor-bytes', bytes)
    redis.call('DECRBY', prefix .. 'cursor-rows', rows or 0)
  end
  if owner then
    redis.call('HDEL', prefix .. 'cursor-owners', id)
    redis.call('ZREM', prefix .. 'cursors-of:' .. owner, id)
    local left = tonumber(redis.call('ZINCRBY', prefix .. 'user-cursors', -1, owner))
    redis.call('ZINCRBY', prefix .. 'user-bytes', -(tonumber(bytes) or 0), owner)
    if left <= 0 then
      redis.call('ZREM', prefix .. 'user-cursors', owner)
      redis.call('ZREM', prefix .. 'user-bytes', owner)
    end
  end
  redis.call('DEL', prefix .. 'cursor:' .. id, prefix .. 'cursor:' .. id .. ':rows')
  return bytes
end
`;

/** Forgets a cursor. ARGV: prefix, id. */
const FORGET = `${FORGET_FUNCTION}
return forget(ARGV[2])
`;

/**
 * Registers a finished cursor and applies the quotas, atomically: the owner's least recently
 * read cursors go while the owner is past their count or byte quota; then, while all cursors
 * are past the byte budget, the least recently read cursor of the user holding the most bytes
 * (then cursors of no known owner, from before owners were counted). The new cursor is
 * never dropped. Returns the number of cursors dropped, or -1 when the result's rows expired
 * before it was registered.
 * ARGV: prefix, id, owner, cursor JSON, bytes, rows, now, idle ms, the rows' pending key ('':
 * none), the owner's most cursors, the owner's most bytes, the byte budget of all.
 */
const REGISTER = `${FORGET_FUNCTION}
local id, owner, meta = ARGV[2], ARGV[3], ARGV[4]
local bytes, rows, now, idle = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local pending = ARGV[9]
local maxCursors, maxUserBytes, maxBytes = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local rowsKey = prefix .. 'cursor:' .. id .. ':rows'
if pending ~= '' then
  if redis.call('EXISTS', pending) == 0 then return -1 end
  redis.call('RENAME', pending, rowsKey)
  redis.call('PEXPIRE', rowsKey, idle)
end
redis.call('SET', prefix .. 'cursor:' .. id, meta, 'PX', idle)
redis.call('ZADD', prefix .. 'cursors', now, id)
redis.call('HSET', prefix .. 'cursor-sizes', id, bytes, id .. ':rows', rows)
redis.call('INCRBY', prefix .. 'cursor-bytes', bytes)
redis.call('INCRBY', prefix .. 'cursor-rows', rows)
redis.call('HSET', prefix .. 'cursor-owners', id, owner)
redis.call('ZADD', prefix .. 'cursors-of:' .. owner, now, id)
redis.call('ZINCRBY', prefix .. 'user-cursors', 1, owner)
redis.call('ZINCRBY', prefix .. 'user-bytes', bytes, owner)
local dropped = 0
local function oldestOf(who)
  for _, other in ipairs(redis.call('ZRANGE', prefix .. 'cursors-of:' .. who, 0, 1)) do
    if other ~= id then return other end
  end
  return nil
end
local function drop(victim, who)
  forget(victim)
  -- Even if its owner entry was lost: never picked again.
  if who then redis.call('ZREM', prefix .. 'cursors-of:' .. who, victim) end
  dropped = dropped + 1
end
local function held(set)
  return tonumber(redis.call('ZSCORE', prefix .. set, owner) or 0)
end
while held('user-cursors') > maxCursors or held('user-bytes') > maxUserBytes do
  local victim = oldestOf(owner)
  if not victim then break end
  drop(victim, owner)
end
while tonumber(redis.call('GET', prefix .. 'cursor-bytes') or 0) > maxBytes do
  local victim, who = nil, nil
  for _, most in ipairs(redis.call('ZREVRANGE', prefix .. 'user-bytes', 0, 1)) do
    victim = oldestOf(most)
    if victim then who = most break end
  end
  if not victim then
    for _, other in ipairs(redis.call('ZRANGE', prefix .. 'cursors', 0, 1)) do
      if other ~= id then victim = other break end
    end
  end
  if not victim then break end
  drop(victim, who)
end
return dropped
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
    const { maxBytes, perUser } = this.options;
    try {
      const cursor = await encodeCursor(
        execution,
        owner,
        resource,
        this.options.accessOf?.(owner) ?? '',
        this.now(),
        async (index, chunk) => {
          bytes += Buffer.byteLength(chunk);
          if (bytes > perUser.bytes && perUser.bytes < maxBytes) throw resultTooLargeForUser(perUser.bytes);
          if (bytes > maxBytes) throw resultTooLarge(maxBytes, 'cursors.maxBytes');
          rowsKey ??= this.key(`cursor:pending:${newCursorId()}`);
          await withRedis(WHAT, () =>
            this.redis.multi().hset(rowsKey!, String(index), chunk).pexpire(rowsKey!, this.options.idleMs).exec(),
          );
        },
      );
      const { id } = cursor;
      const registered = await withRedis(WHAT, () =>
        this.redis.eval(
          REGISTER,
          0,
          this.options.prefix,
          id,
          owner,
          JSON.stringify(cursor),
          cursor.bytes,
          cursor.rowCount,
          cursor.lastUsed,
          this.options.idleMs,
          rowsKey ?? '',
          perUser.cursors,
          perUser.bytes,
          maxBytes,
        ),
      );
      if (registered === -1) throw new Error('The rows of the paginated result expired in Redis before it was complete.');
      rowsKey = null;
      await this.refreshStats();
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
        // Only where the id is the owner's already: another user's id adds nothing.
        .zadd(this.key(`cursors-of:${owner}`), 'XX', now, id)
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
    for (const id of await withRedis(WHAT, () => this.redis.zrange(this.key(`cursors-of:${owner}`), 0, -1))) await this.forget(id);
    // Cursors registered before owners were counted.
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
    await withRedis(WHAT, () => this.redis.eval(FORGET, 0, this.options.prefix, id));
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
