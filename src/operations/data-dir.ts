/**
 * Whether vdb's data directory can take writes, for /readyz and /metrics: the bytes its disk has
 * free (statfs) against dataDirMinFreeBytes, and a real write (create, fsync, remove a small
 * file), which finds a read-only mount, a missing folder, a spent quota or a failing disk that a
 * permission check misses.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Bytes the write probe writes: one block, so that a full disk refuses it. */
const PROBE_BYTES = 4096;

/** Bytes of the data directory's disk that vdb may still write (statfs: blocks available to it). */
export async function freeBytes(dir: string): Promise<number> {
  const stats = await fs.promises.statfs(dir);
  return stats.bavail * stats.bsize;
}

/** "ENOSPC: no space left on device", without the system call and the path. */
const reason = (err: unknown) => (err instanceof Error ? err.message.split(',')[0]!.trim() : String(err));

/** 'ok', or why the data directory cannot take vdb's writes ("data directory full (N bytes free)"). */
export async function dataDirCheck(dir: string, minFreeBytes: number): Promise<string> {
  let free: number;
  try {
    free = await freeBytes(dir);
  } catch (err) {
    return `data directory not usable (${reason(err)})`;
  }
  // One name per process: a probe left by a crash is overwritten by the next one, not piled up.
  const probe = path.join(dir, `.write-probe.${process.pid}.tmp`);
  try {
    const handle = await fs.promises.open(probe, 'w', 0o600);
    try {
      await handle.write(Buffer.alloc(PROBE_BYTES), 0, PROBE_BYTES, 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return `data directory full (${free} bytes free)`;
    return `data directory not writable (${reason(err)})`;
  } finally {
    await fs.promises.rm(probe, { force: true }).catch(() => undefined);
  }
  if (free < minFreeBytes) return `data directory full (${free} bytes free, below dataDirMinFreeBytes ${minFreeBytes})`;
  return 'ok';
}
