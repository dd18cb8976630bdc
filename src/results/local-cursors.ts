/**
 * The cursor store of one process (no Redis configured): chunks stay in memory up to a byte
 * budget, further ones go to a file per cursor in the spill folder up to a disk budget. The
 * least recently used cursors go first when a budget or the cursor count is exceeded; idle ones
 * are swept. The spill folder lies in the data directory, which the engine cannot read.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  checkCursor,
  cutPage,
  encodeCursor,
  resultTooLarge,
  type Cursor,
  type CursorPolicy,
  type CursorStats,
  type CursorStore,
  type MaterializableResult,
} from './cursors.js';
import type { RowShape } from './json.js';

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
  cursor: Cursor;
  chunks: Place[];
  memory: number;
  disk: number;
  file: string;
}

export class LocalCursorStore implements CursorStore {
  private readonly entries = new Map<string, Entry>();
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

  async check(): Promise<string> {
    try {
      await fs.promises.access(this.options.spillDir, fs.constants.W_OK);
      return 'ok';
    } catch (err) {
      return `spill folder not writable: ${(err as Error).message}`;
    }
  }

  async create(execution: MaterializableResult, owner: string, resource: string): Promise<Cursor> {
    const entry: Entry = { cursor: undefined as unknown as Cursor, chunks: [], memory: 0, disk: 0, file: '' };
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
          if (this.memory + size <= this.options.memoryBytes) {
            entry.chunks.push({ text: chunk });
            entry.memory += size;
            this.memory += size;
            return;
          }
          if (entry.disk + size > this.options.diskBytes) throw resultTooLarge(this.options.diskBytes, 'pagination.diskBytes');
          // Room is made by the least recently used cursors, never by this one.
          await this.evictUntil(() => this.disk + size <= this.options.diskBytes);
          if (!handle) {
            entry.file = path.join(
              this.options.spillDir,
              `${process.pid}-${this.entries.size}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
            );
            handle = await fs.promises.open(entry.file, 'wx', 0o600);
          }
          await handle.write(chunk, entry.disk);
          entry.chunks.push({ position: entry.disk, length: size });
          entry.disk += size;
          this.disk += size;
        },
      );
    } catch (err) {
      await (handle as fs.promises.FileHandle | null)?.close();
      this.release(entry);
      throw err;
    }
    await (handle as fs.promises.FileHandle | null)?.close();
    this.entries.set(entry.cursor.id, entry);
    await this.evictUntil(() => this.entries.size <= this.options.maxCursors, entry);
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
    for (const [id, { cursor }] of this.entries) if (cursor.owner === owner) this.drop(id);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const id of [...this.entries.keys()]) this.drop(id);
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.release(entry);
  }

  private release(entry: Entry): void {
    this.memory -= entry.memory;
    this.disk -= entry.disk;
    entry.memory = entry.disk = 0;
    // A page being read keeps its open file; the name goes now, the space when it is closed.
    if (entry.file) fs.rmSync(entry.file, { force: true });
  }

  /** Drops the least recently used cursors (never `keep`) until `enough` holds or none is left. */
  private async evictUntil(enough: () => boolean, keep?: Entry): Promise<void> {
    if (enough()) return;
    const byAge = [...this.entries.values()].filter((e) => e !== keep).sort((a, b) => a.cursor.lastUsed - b.cursor.lastUsed);
    for (const entry of byAge) {
      if (enough()) return;
      this.drop(entry.cursor.id);
    }
  }
}
