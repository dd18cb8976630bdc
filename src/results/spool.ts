/**
 * A result read ahead of a slow client. A statement a source runs whole streams its rows from a
 * pooled source connection; a client that reads slowly (or not at all for a while) would hold
 * that connection as long as it takes. The spool reads the source at its own pace instead: what
 * the client has not taken yet waits in memory (resultSpool.memoryBytes per result), then in a
 * file of the data directory (resultSpool.diskBytes for all results together), so the source's
 * statement ends and its connection goes back to the pool. The client reads from the spool.
 *
 * Still a stream: the first rows go out as soon as they come, and nothing holds the whole
 * result in a list. Beyond the disk budget (or on a disk that fails) the source waits for the
 * client, as without a spool. A source that fails ends the result at once (the rows ahead are
 * dropped: the body is cut either way); a client that stops (or goes) stops the source and the
 * file is deleted.
 */
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';

export interface SpoolLimits {
  /** Characters of one result held in memory ahead of its client. */
  memoryBytes: number;
  /** Bytes on disk of all results together. */
  diskBytes: number;
  /** The folder of the files (emptied when the spools are made: files of an earlier process). */
  dir: string;
}

/** The spools of one process: their shared disk budget, and what the metrics show of them. */
export class Spools {
  private diskUsed = 0;
  private memoryUsed = 0;
  private open = 0;
  private spilled = 0;

  constructor(readonly limits: SpoolLimits) {
    // Files are unlinked as soon as they are open; what is left is from a process that died.
    fs.rmSync(limits.dir, { recursive: true, force: true });
  }

  /**
   * `source`'s chunks, read ahead of the caller. When `signal` aborts (the statement's timeout,
   * the client gone) the result ends with its reason, and what waits is let go of at once.
   */
  spool(source: AsyncGenerator<string>, signal?: AbortSignal): AsyncGenerator<string> {
    return this.readAhead(source, signal);
  }

  /**
   * A result of one chunk (a point lookup, a count) goes as it is: a spool costs a small result
   * a fifth of its time (bench/restructure.ts) and only pays for results a client could be slow
   * to take. From a second chunk on, the rest is read ahead.
   */
  private async *readAhead(source: AsyncGenerator<string>, signal?: AbortSignal): AsyncGenerator<string> {
    const first = await source.next();
    if (first.done) return;
    const second = await source.next();
    if (second.done) {
      yield first.value;
      return;
    }
    yield* spooled(new Spool(withFirst([first.value, second.value], source), this, signal));
  }

  stats(): { open: number; memoryBytes: number; diskBytes: number; spilled: number } {
    return { open: this.open, memoryBytes: this.memoryUsed, diskBytes: this.diskUsed, spilled: this.spilled };
  }

  /** @internal */
  opened(delta: number): void {
    this.open += delta;
  }

  /** @internal */
  memory(delta: number): void {
    this.memoryUsed += delta;
  }

  /** @internal Takes `bytes` of the disk budget, if they are left. */
  takeDisk(bytes: number, first: boolean): boolean {
    if (this.diskUsed + bytes > this.limits.diskBytes) return false;
    this.diskUsed += bytes;
    if (first) this.spilled++;
    return true;
  }

  /** @internal */
  giveDisk(bytes: number): void {
    this.diskUsed -= bytes;
  }
}

/** `rest` with `first` before it; stopping it early stops `rest`. */
async function* withFirst(first: string[], rest: AsyncGenerator<string>): AsyncGenerator<string> {
  let finished = false;
  try {
    for (const chunk of first) yield chunk;
    yield* rest;
    finished = true;
  } finally {
    if (!finished) await rest.return(undefined).catch(() => undefined);
  }
}

async function* spooled(spool: Spool): AsyncGenerator<string> {
  try {
    for (;;) {
      const chunk = await spool.next();
      if (chunk === null) return;
      yield chunk;
    }
  } finally {
    await spool.close();
  }
}

/** A chunk in the file: where it is and its length in bytes. */
interface OnDisk {
  position: number;
  length: number;
}

class Spool {
  /** Chunks in memory, oldest first; every one older than any chunk on disk. */
  private readonly memory: string[] = [];
  private memoryChars = 0;
  /** Chunks in the file, oldest first. The first stays listed while it is read back. */
  private readonly onDisk: OnDisk[] = [];
  private file: FileHandle | null = null;
  /** Where the next chunk is written: back to 0 whenever the file was read to its end. */
  private writeAt = 0;
  /** The file's length, taken from the disk budget until the end. */
  private fileSize = 0;
  /** No more writes to disk (the budget is spent, or the disk failed): the source waits for the client. */
  private diskRefused = false;
  private ended = false;
  private failure: { error: unknown } | null = null;
  private stopped = false;
  private wakeReader: (() => void) | null = null;
  private wakeWriter: (() => void) | null = null;
  private readonly pumping: Promise<void>;
  private readonly onAbort: () => void;

  constructor(
    private readonly source: AsyncGenerator<string>,
    private readonly spools: Spools,
    private readonly signal?: AbortSignal,
  ) {
    spools.opened(1);
    // Ended by the statement (timeout, client gone), also after the source's end: a client that
    // does not read must not keep the spool's memory and file until it goes.
    this.onAbort = () => {
      this.failure ??= { error: signal!.reason };
      this.stopped = true;
      this.wakeWriter?.();
      this.wakeReader?.();
      void this.discard();
    };
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.pumping = this.pump();
  }

  /** The next chunk, null at the end; throws the source's failure as soon as it is known. */
  async next(): Promise<string | null> {
    for (;;) {
      if (this.failure) throw this.failure.error;
      const text = this.memory.shift();
      if (text !== undefined) {
        this.memoryChars -= text.length;
        this.spools.memory(-text.length);
        this.wakeWriter?.();
        return text;
      }
      const entry = this.onDisk[0];
      if (entry) {
        const bytes = Buffer.allocUnsafe(entry.length);
        await this.file!.read(bytes, 0, entry.length, entry.position);
        this.onDisk.shift();
        this.wakeWriter?.();
        return bytes.toString('utf8');
      }
      if (this.ended) return null;
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
      this.wakeReader = null;
    }
  }

  /** Stops the source (if it is still read) and lets go of the memory and the file. */
  async close(): Promise<void> {
    this.stopped = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    this.wakeWriter?.();
    await this.pumping;
    await this.discard();
  }

  /** Lets go of the memory and the file (once). */
  private discarding: Promise<void> | null = null;

  private discard(): Promise<void> {
    this.discarding ??= (async () => {
      this.spools.memory(-this.memoryChars);
      this.memory.length = 0;
      this.memoryChars = 0;
      this.onDisk.length = 0;
      // A file still being opened is closed by `write`, which sees `stopped`.
      const file = this.file;
      this.file = null;
      await file?.close().catch(() => undefined);
      this.spools.giveDisk(this.fileSize);
      this.fileSize = 0;
      this.spools.opened(-1);
    })();
    return this.discarding;
  }

  /** Reads the source to its end (or until stopped), as fast as it comes and room is left. */
  private async pump(): Promise<void> {
    let done = false;
    try {
      while (!this.stopped) {
        const next = await this.source.next();
        if (next.done) {
          done = true;
          break;
        }
        await this.put(next.value);
      }
      this.ended = done;
    } catch (err) {
      this.failure = { error: err };
    } finally {
      // Stopped before its end: the source's statement ends and its connection goes back.
      if (!done) await this.source.return(undefined).catch(() => undefined);
      this.wakeReader?.();
    }
  }

  /** Keeps one chunk: in memory while there is room and nothing waits on disk, else on disk, else waits. */
  private async put(text: string): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      if (this.onDisk.length === 0 && (this.memory.length === 0 || this.memoryChars + text.length <= this.spools.limits.memoryBytes)) {
        this.memory.push(text);
        this.memoryChars += text.length;
        this.spools.memory(text.length);
        this.wakeReader?.();
        return;
      }
      if (!this.diskRefused && (await this.write(text))) {
        this.wakeReader?.();
        return;
      }
      // No room: the client must take something first (backpressure reaches the source).
      await new Promise<void>((resolve) => (this.wakeWriter = resolve));
      this.wakeWriter = null;
    }
  }

  /** Appends a chunk to the file; false when the budget or the disk refuses it. */
  private async write(text: string): Promise<boolean> {
    if (this.stopped) return false;
    const bytes = Buffer.from(text, 'utf8');
    // Everything written was read back: the file is written from its start again.
    if (this.onDisk.length === 0) this.writeAt = 0;
    const end = this.writeAt + bytes.length;
    if (end > this.fileSize) {
      if (!this.spools.takeDisk(end - this.fileSize, this.fileSize === 0)) return false;
      this.fileSize = end;
    }
    try {
      if (!this.file) {
        const file = await this.openFile();
        // Ended while the file was opened: nothing will read it.
        if (this.stopped) {
          await file.close();
          return false;
        }
        this.file = file;
      }
      await this.file.write(bytes, 0, bytes.length, this.writeAt);
    } catch {
      // A full or unwritable disk: the result goes on as it would without the spool.
      this.diskRefused = true;
      return false;
    }
    this.onDisk.push({ position: this.writeAt, length: bytes.length });
    this.writeAt = end;
    return true;
  }

  private async openFile(): Promise<FileHandle> {
    const dir = this.spools.limits.dir;
    await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    const name = path.join(dir, `${randomUUID()}.json`);
    const file = await fs.promises.open(name, 'w+', 0o600);
    // Only this handle reaches it: gone from the folder now, from the disk when it is closed.
    await fs.promises.unlink(name).catch(() => undefined);
    return file;
  }
}
