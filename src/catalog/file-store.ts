/**
 * The embedded catalog store: one JSON file in the data directory. Writes are serialised, atomic
 * and durable (temporary file, fsync, rename, fsync of the folder), so a crash leaves the old or
 * the new catalog, never a half-written one. Before each replacement the current file is kept as
 * catalog.previous.json, the last good copy an operator can fall back to.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CatalogChange, CatalogStore } from './store.js';
import { CatalogData, emptyCatalog } from './types.js';
import { storageWriteFailure } from '../runtime/storage-errors.js';

export const CATALOG_FILE = 'catalog.json';
export const PREVIOUS_FILE = 'catalog.previous.json';
/** Temporary files of interrupted writes: `catalog.json.<pid>.<random>.tmp` and the previous copy's. */
const LEFTOVER = /^(catalog\.json|catalog\.previous\.json)\..+\.tmp$/;

export class FileCatalogStore implements CatalogStore {
  private data: CatalogData;
  private readonly file: string;
  private writing: Promise<void> = Promise.resolve();
  private listeners: Array<(change: CatalogChange) => void> = [];
  generation = 0;
  readonly available = true;
  readonly unavailableReason = null;
  /** Temporary files of interrupted writes found (and removed) at start. */
  readonly removedLeftovers: string[];

  constructor(private readonly dataDir: string) {
    this.file = path.join(dataDir, CATALOG_FILE);
    this.removedLeftovers = removeLeftovers(dataDir);
    this.data = loadCatalogFile(dataDir);
  }

  get current(): Readonly<CatalogData> {
    return this.data;
  }

  onChange(listener: (change: CatalogChange) => void): void {
    this.listeners.push(listener);
  }

  update<T>(change: (draft: CatalogData) => T): Promise<T> {
    const run = async (): Promise<T> => {
      const draft = structuredClone(this.data);
      const result = change(draft);
      // A refused write leaves the catalog file and this copy as they were: a 507/503, nothing half-done.
      await replaceCatalogFile(this.dataDir, JSON.stringify(draft, null, 2)).catch((err: unknown) => {
        throw storageWriteFailure(err, 'the catalog');
      });
      this.data = draft;
      this.generation++;
      for (const listener of this.listeners) listener({ remote: false });
      return result;
    };
    const next = this.writing.then(run, run);
    this.writing = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  async close(): Promise<void> {
    await this.writing;
  }
}

/** Parses and checks a catalog file; throws with the reason. */
export function parseCatalog(text: string): CatalogData {
  const parsed = JSON.parse(text) as CatalogData;
  if (typeof parsed !== 'object' || parsed === null) throw new Error('not a JSON object');
  if (parsed.formatVersion !== 1) throw new Error(`unsupported format version ${String(parsed.formatVersion)}`);
  if (!Array.isArray(parsed.sources) || !Array.isArray(parsed.users) || typeof parsed.nextOid !== 'number')
    throw new Error('sources, users or nextOid missing');
  return parsed;
}

/**
 * The data directory's catalog; an empty one when there is none yet. A catalog that cannot be
 * read stops the start with what to do, never an empty catalog in its place (that would drop
 * every user and grant without a word).
 */
export function loadCatalogFile(dataDir: string): CatalogData {
  const file = path.join(dataDir, CATALOG_FILE);
  const previous = path.join(dataDir, PREVIOUS_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (!fs.existsSync(previous)) return emptyCatalog();
    throw new Error(
      `${file} is missing but ${previous} exists, so this data directory had a catalog. ` +
        `To start from the last good copy (it lacks at most the last change): cp ${previous} ${file}`,
    );
  }
  try {
    return parseCatalog(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const fallback = readablePrevious(previous);
    const what = fallback
      ? `The last good copy is ${previous} (written ${fallback.toISOString()}; it lacks at most the last change). ` +
        `To start from it: mv ${file} ${file}.damaged && cp ${previous} ${file}`
      : `There is no readable last good copy (${previous}): restore ${file} from a backup.`;
    throw new Error(`${file} cannot be read (${reason}); vdb did not start, so nothing was overwritten. ${what}`);
  }
}

function readablePrevious(previous: string): Date | null {
  try {
    parseCatalog(fs.readFileSync(previous, 'utf8'));
    return fs.statSync(previous).mtime;
  } catch {
    return null;
  }
}

/** Temporary files are never the catalog (the rename is the commit): those of interrupted writes go. */
function removeLeftovers(dataDir: string): string[] {
  if (!fs.existsSync(dataDir)) return [];
  const removed: string[] = [];
  for (const name of fs.readdirSync(dataDir)) {
    if (!LEFTOVER.test(name)) continue;
    fs.rmSync(path.join(dataDir, name), { force: true });
    removed.push(name);
  }
  return removed;
}

/** Replaces catalog.json durably, keeping the one it replaces as catalog.previous.json. */
async function replaceCatalogFile(dataDir: string, content: string): Promise<void> {
  const file = path.join(dataDir, CATALOG_FILE);
  const tmp = await writeTemporary(file, content);
  // The current file becomes the previous copy (a hard link: no copying), atomically replaced.
  const previousTmp = `${path.join(dataDir, PREVIOUS_FILE)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await keepAs(file, previousTmp);
    await fs.promises.rename(previousTmp, path.join(dataDir, PREVIOUS_FILE));
  } catch (err) {
    await fs.promises.rm(previousTmp, { force: true });
    // No catalog yet (the first write) has no previous copy; anything else stops the write.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
  }
  await fs.promises.rename(tmp, file);
  await syncFolder(dataDir);
}

/** `target` becomes a hard link to `file`, or a copy where the file system has no hard links. */
async function keepAs(file: string, target: string): Promise<void> {
  try {
    await fs.promises.link(file, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    await fs.promises.copyFile(file, target, fs.constants.COPYFILE_EXCL);
  }
}

/** Writes `content` next to `file` under a temporary name, synced to disk; returns that name. */
async function writeTemporary(file: string, content: string, mode = 0o600): Promise<string> {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await fs.promises.open(tmp, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  return tmp;
}

/** Makes a rename durable (best effort: not every platform can sync a folder). */
async function syncFolder(dir: string): Promise<void> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fs.promises.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not supported here; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}
