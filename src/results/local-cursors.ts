/**
 * The cursor store of one process (no Redis configured): chunks stay in memory up to a byte
 * budget, further ones go to a file per cursor in the spill folder up to a disk budget. Each
 * user has a quota of cursors and bytes (policy.perUser): past it their own least recently read
 * cursors go, never another user's. Past the disk budget or the cursor count, the user holding
 * the most (disk bytes, cursors) loses their least recently read cursor first, so that one
 * user cannot push the others out. Idle ones are swept. The spill folder lies in the data
 * directory, which the engine cannot read.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  checkCursor,
  cutPage,
  encodeCursor,
  resultTooLarge,
  resultTooLargeForUser,
  tooManyResultsForUser,
  type Cursor,
  type CursorPolicy,
  type CursorStats,
  type CursorStore,
  type MaterializableResult,
} from './cursors.js';
import type { RowShape } from './json.js';
import { storageWriteFailure } from '../runtime/storage-errors.js';

export interface LocalCursorOptions extends CursorPolicy {
  maxCursors: number;
  /** Bytes of chunks kept in memory, all cursors together. */
  memoryBytes: number;
  /** Bytes of chunks in the spill folder, all cursors together. */
  diskBytes: number;
  /** Where chunks beyond the memory budget go; emptied at start. */
  spillDir: string;
}

/** Where a chunk is: its text in memory, or its place in the cursor's spill file. */
type Place = { text: string } | { position: number; length: number };

interface Entry {
  owner: string;
  cursor: Cursor;
  chunks: Place[];
  memory: number;
  disk: number;
  file: string;
}

/** What a user holds: cursors kept, bytes in memory and on disk (results being computed included). */
interface Holding {
  cursors: number;
  bytes: number;
  disk: number;
}

export class LocalCursorStore implements CursorStore {
  private readonly entries = new Map<string, Entry>();
  private readonly holdings = new Map<string, Holding>();
  private memory = 0;
  private disk = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly options: LocalCursorOptions,
    private readonly now: () => number = Date.now,
  ) {
    // Files of a previous process belong to cursors that no longer exist.
    fs.rmSync(options.spillDir, { recursive: true, force: true });
    fs.mkdirSync(options.spillDir, { recursive: true, mode: 0o700 });
    this.sweeper = setInterval(() => void this.sweep(), Math.max(1000, Math.min(options.idleMs / 4, 60_000)));
    this.sweeper.unref();
  }

  stats(): CursorStats {
    let rows = 0;
    for (const { cursor } of this.entries.values()) rows += cursor.rowCount;
    return { count: this.entries.size, rows, bytes: this.memory + this.disk };
  }

  /** Bytes held in memory and on disk (for tests and metrics). */
  usage(): { memory: number; disk: number } {
    return { memory: this.memory, disk: this.disk };
  }

  /** What `owner` holds: cursors kept and their bytes, results being computed included (for tests). */
  usageOf(owner: string): { cursors: number; bytes: number } {
    const holding = this.holdings.get(owner);
    return { cursors: holding?.cursors ?? 0, bytes: holding?.bytes ?? 0 };
  }

  async check(): Promise<string> {
    try {
      await fs.promises.access(this.options.spillDir, fs.constants.W_OK);
      return 'ok';
    } catch (err) {
      return `spill folder not writable: ${(err as Error).message}`;
    }
  }

  async create(execution: MaterializableResult, owner: string, resource: string): Promise<Cursor> {
    const entry: Entry = { owner, cursor: undefined as unknown as Cursor, chunks: [], memory: 0, disk: 0, file: '' };
    const quota = this.options.perUser.bytes;
    let handle: fs.promises.FileHandle | null = null;
    try {
      entry.cursor = await encodeCursor(
        execution,
        owner,
        resource,
        this.options.accessOf?.(owner) ?? '',
        this.now(),
        async (_index, chunk) => {
          const size = Buffer.byteLength(chunk);
          if (entry.memory + entry.disk + size > quota) throw resultTooLargeForUser(quota);
          // Within the user's quota, room is made by their own least recently read cursors only.
          this.evictOwn(owner, () => this.holding(owner).bytes + size <= quota);
          // Still short: the user's other results being computed hold the rest.
          if (this.holding(owner).bytes + size > quota) throw tooManyResultsForUser(quota);
          if (this.memory + size <= this.options.memoryBytes) {
            entry.chunks.push({ text: chunk });
            this.charge(entry, size, 0);
            return;
          }
          if (entry.disk + size > this.options.diskBytes) throw resultTooLarge(this.options.diskBytes, 'pagination.diskBytes');
          // Room on disk is made by the users holding the most there, never by this cursor.
          this.evictFairly('disk', () => this.disk + size <= this.options.diskBytes);
          // Counted before the write, so that results computed at the same time see it.
          const position = entry.disk;
          this.charge(entry, 0, size);
          try {
            if (!handle) {
              entry.file = path.join(
                this.options.spillDir,
                `${process.pid}-${this.entries.size}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
              );
              handle = await fs.promises.open(entry.file, 'wx', 0o600);
            }
            await writeAll(handle, Buffer.from(chunk), position);
          } catch (err) {
            // A full or unwritable data directory is vdb's failure, not the source's the rows came from.
            throw storageWriteFailure(err, "a paginated result's spill file");
          }
          entry.chunks.push({ position, length: size });
        },
      );
    } catch (err) {
      await (handle as fs.promises.FileHandle | null)?.close();
      this.release(entry);
      throw err;
    }
    await (handle as fs.promises.FileHandle | null)?.close();
    this.entries.set(entry.cursor.id, entry);
    this.holding(owner).cursors += 1;
    this.evictOwn(owner, () => this.holding(owner).cursors <= this.options.perUser.cursors, entry);
    this.evictFairly('cursors', () => this.entries.size <= this.options.maxCursors, entry);
    return entry.cursor;
  }

  async get(id: string, owner: string, resource: string): Promise<Cursor> {
    const entry = this.entries.get(id);
    const cursor = checkCursor(entry?.cursor, id, owner, resource, this.options, this.now(), () => this.drop(id));
    cursor.lastUsed = this.now();
    return cursor;
  }

  page(cursor: Cursor, offset: number, limit: number, shape: RowShape): AsyncGenerator<string> {
    const entries = this.entries;
    const now = this.now;
    return cutPage(cursor, offset, limit, shape, async function* (indexes) {
      const entry = entries.get(cursor.id);
      if (!entry) {
        yield null;
        return;
      }
      let handle: fs.promises.FileHandle | null = null;
      try {
        for (const index of indexes) {
          const place = entry.chunks[index]!;
          if ('text' in place) {
            yield place.text;
            continue;
          }
          handle ??= await fs.promises.open(entry.file, 'r');
          const buffer = Buffer.alloc(place.length);
          await handle.read(buffer, 0, place.length, place.position);
          yield buffer.toString('utf8');
        }
      } finally {
        await handle?.close();
        entry.cursor.lastUsed = now();
      }
    });
  }

  async sweep(): Promise<void> {
    const now = this.now();
    for (const [id, { cursor }] of this.entries) if (now - cursor.lastUsed > this.options.idleMs) this.drop(id);
  }

  async remove(id: string): Promise<void> {
    this.drop(id);
  }

  async dropOwner(owner: string): Promise<void> {
    for (const [id, entry] of this.entries) if (entry.owner === owner) this.drop(id);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const id of [...this.entries.keys()]) this.drop(id);
  }

  private holding(owner: string): Holding {
    let holding = this.holdings.get(owner);
    if (!holding) this.holdings.set(owner, (holding = { cursors: 0, bytes: 0, disk: 0 }));
    return holding;
  }

  /** Counts `memory` and `disk` more bytes to the entry, its owner and the store. */
  private charge(entry: Entry, memory: number, disk: number): void {
    entry.memory += memory;
    entry.disk += disk;
    this.memory += memory;
    this.disk += disk;
    const holding = this.holding(entry.owner);
    holding.bytes += memory + disk;
    holding.disk += disk;
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.holding(entry.owner).cursors -= 1;
    this.release(entry);
  }

  private release(entry: Entry): void {
    this.memory -= entry.memory;
    this.disk -= entry.disk;
    const holding = this.holding(entry.owner);
    holding.bytes -= entry.memory + entry.disk;
    holding.disk -= entry.disk;
    if (holding.cursors === 0 && holding.bytes === 0) this.holdings.delete(entry.owner);
    entry.memory = entry.disk = 0;
    // A page being read keeps its open file; the name goes now, the space when it is closed.
    if (entry.file) fs.rmSync(entry.file, { force: true });
  }

  /** Drops `owner`'s least recently read cursors (never `keep`) until `enough` holds or none is left. */
  private evictOwn(owner: string, enough: () => boolean, keep?: Entry): void {
    if (enough()) return;
    const byAge = [...this.entries.values()]
      .filter((e) => e.owner === owner && e !== keep)
      .sort((a, b) => a.cursor.lastUsed - b.cursor.lastUsed);
    for (const entry of byAge) {
      if (enough()) return;
      this.drop(entry.cursor.id);
    }
  }

  /**
   * Until `enough` holds: the user who holds the most of what is short (disk bytes, or cursors)
   * loses their least recently read cursor (never `keep`; for disk, one that has bytes there).
   * Ties go to the user whose cursor was read longest ago.
   */
  private evictFairly(short: 'disk' | 'cursors', enough: () => boolean, keep?: Entry): void {
    while (!enough()) {
      const oldest = new Map<string, Entry>();
      for (const entry of this.entries.values()) {
        if (entry === keep || (short === 'disk' && entry.disk === 0)) continue;
        const known = oldest.get(entry.owner);
        if (!known || entry.cursor.lastUsed < known.cursor.lastUsed) oldest.set(entry.owner, entry);
      }
      let victim: Entry | undefined;
      let most = -1;
      for (const [owner, entry] of oldest) {
        const holding = this.holding(owner);
        const held = short === 'disk' ? holding.disk : holding.cursors;
        if (held > most || (held === most && entry.cursor.lastUsed < victim!.cursor.lastUsed)) {
          victim = entry;
          most = held;
        }
      }
      if (!victim) return;
      this.drop(victim.cursor.id);
    }
  }
}

/** Writes all of `bytes` at `position`: a write on a nearly full disk may take only part of them. */
async function writeAll(handle: fs.promises.FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}
