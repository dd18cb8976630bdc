/**
 * One server per data directory: `<data dir>/vdb.lock` holds the process id of the server using
 * it, created exclusively (O_EXCL). A second process finds it and refuses to start, naming the
 * directory and the other process. A lock whose process is gone (stopped by SIGKILL, a crash, a
 * reboot) is stale: it is replaced. Servers of one process (tests, embedding) share the lock.
 */
import fs from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'vdb.lock';

/** The holders of each data directory's lock in this process: the lock goes when the last lets go. */
const holders = new Map<string, number>();

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `the data directory ${dataDir} is in use by another vdb process (pid ${pid}); stop it, or start this one with another data directory ` +
        `(if no such process runs, remove ${path.join(dataDir, LOCK_FILE)})`,
    );
    this.name = 'DataDirInUseError';
  }
}

/** Whether a process of that id runs (one of another user counts: it may not be signalled). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process id in the lock file; null when the file is gone, empty or unreadable (a start interrupted while writing it). */
function holderOf(file: string): number | null {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes the lock of `dataDir` (which exists) for this process; throws DataDirInUseError when a
 * live process holds it. Returns the function that lets it go.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE);
  const key = path.resolve(dataDir);
  const held = holders.get(key);
  if (held === undefined) acquire(file, dataDir);
  holders.set(key, (held ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (holders.get(key) ?? 1) - 1;
    if (left > 0) {
      holders.set(key, left);
      return;
    }
    holders.delete(key);
    // Only our own lock: never one another process took over meanwhile.
    if (holderOf(file) === process.pid) fs.rmSync(file, { force: true });
  };
}

function acquire(file: string, dataDir: string): void {
  // A few rounds: another process may be replacing the same stale lock at the same time.
  for (let round = 0; round < 5; round++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      try {
        fs.writeSync(fd, `${process.pid}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = holderOf(file);
    if (pid === process.pid) return; // left by this process (a server not closed): ours already
    if (pid !== null && alive(pid)) throw new DataDirInUseError(dataDir, pid);
    if (pid === null && Date.now() - mtimeOf(file) < FRESH_EMPTY_MS) {
      // Just created by a process that has not written its id yet.
      sleep(50);
      continue;
    }
    // Stale: its process is gone. Replaced only if it is still the file we looked at.
    removeIfHeldBy(file, pid);
  }
  throw new Error(`the lock ${file} could not be taken; another vdb process may be starting on ${dataDir}`);
}

/** An empty lock younger than this is being written, not stale. */
const FRESH_EMPTY_MS = 2000;

function mtimeOf(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function removeIfHeldBy(file: string, pid: number | null): void {
  if (holderOf(file) !== pid) return;
  fs.rmSync(file, { force: true });
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
