/**
 * Telling a failure of vdb's own storage from a data source's. The engine writes nothing but its
 * spill files (sources are attached read-only), and vdb's own files (catalog, secrets, cursors)
 * lie in the data directory; a source's own full disk reaches vdb as the source's error (an
 * SQLSTATE, a driver code), never as an engine message or a Node errno of a local write.
 */
import { StorageFailure } from '../errors.js';

/** Node errno codes of a full disk or a spent quota. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
/** Node errno codes of a data directory that cannot be written (only where vdb wrote its own files). */
const UNWRITABLE_CODES = new Set(['EROFS', 'EACCES', 'EPERM', 'EIO', 'ENOENT', 'ENOTDIR']);

/** Messages of the engine's own (a source's driver never writes these): its errors, and its appender's as rows load. */
const ENGINE_MESSAGE = /^(IO Error|Out of Memory Error|Failed to append):/;
/** About its spill files: a full disk or engineSpillLimit reached, or a spill folder it cannot write. */
const ENGINE_FULL = /max_temp_directory_size|No space left on device|Disk quota exceeded|File too large/;
const ENGINE_UNWRITABLE = /Read-only file system|duckdb_temp_/;

const ENGINE_SPILL = "the engine's spill files";

/** A Node errno of a system call (fs, not a driver's own code), or null. */
function errnoOf(err: unknown): string | null {
  const { code, syscall } = (err ?? {}) as NodeJS.ErrnoException;
  return typeof code === 'string' && typeof syscall === 'string' ? code : null;
}

/** "ENOSPC: no space left on device", without the system call and the path (a client need not see vdb's paths). */
function errnoDetail(err: NodeJS.ErrnoException): string {
  return err.message.split(',')[0]!.trim();
}

/** The engine's message as a short reason, without its paths and tuning advice. */
function engineDetail(message: string): string {
  if (/max_temp_directory_size/.test(message)) {
    const first = message.split('\n')[0]!.replace(/^(Out of Memory Error|Failed to append):\s*/, '');
    return `the spill files reached their limit (engineSpillLimit): ${first}`;
  }
  // IO Error: Could not write file "/…/duckdb_temp_storage-0.tmp": No space left on device
  const reason = message.split(/:\s*/).pop()!.trim();
  return reason || message;
}

/** An engine (DuckDB) error about its spill files, as vdb's storage failure; null for any other message. */
export function engineStorageFailure(message: string): StorageFailure | null {
  if (!ENGINE_MESSAGE.test(message)) return null;
  if (ENGINE_FULL.test(message)) return new StorageFailure(true, ENGINE_SPILL, engineDetail(message));
  if (ENGINE_UNWRITABLE.test(message)) return new StorageFailure(false, ENGINE_SPILL, engineDetail(message));
  return null;
}

/**
 * A failure that can only be vdb's own storage, wherever it is met: a StorageFailure, an engine
 * message about its spill files, or a local write that found the disk full or read-only. For the
 * places that would otherwise blame the data source the statement was reading.
 */
export function ownStorageFailure(err: unknown): StorageFailure | null {
  if (err instanceof StorageFailure) return err;
  const code = errnoOf(err);
  if (code && (FULL_CODES.has(code) || code === 'EROFS'))
    return new StorageFailure(FULL_CODES.has(code), 'its files', errnoDetail(err as Error));
  if (err instanceof Error && !code) return engineStorageFailure(err.message);
  return null;
}

/**
 * `err` of a write to vdb's own files (`what`: "the catalog", "a cursor's spill file") as a
 * StorageFailure when the file system refused it; any other error as it is.
 */
export function storageWriteFailure(err: unknown, what: string): unknown {
  const code = errnoOf(err);
  if (!code || !(FULL_CODES.has(code) || UNWRITABLE_CODES.has(code))) return err;
  return new StorageFailure(FULL_CODES.has(code), what, errnoDetail(err as Error));
}
