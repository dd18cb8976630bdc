import fs from 'node:fs';
import path from 'node:path';
import { CatalogData, emptyCatalog } from './types.js';

/**
 * Persists the catalog as one JSON file in the data directory. Writes are atomic (temp file,
 * fsync, rename) and serialised, so a crash leaves either the old or the new catalog, never a
 * half-written one. Callers mutate through `update`, which only publishes the new state after
 * it is safely on disk.
 */
export class CatalogStore {
  private data: CatalogData;
  private readonly file: string;
  private writing: Promise<void> = Promise.resolve();
  private listeners: Array<() => void> = [];
  /** Bumped on every committed change; lets caches (system tables) know they are stale. */
  generation = 0;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'catalog.json');
    this.data = fs.existsSync(this.file) ? CatalogStore.read(this.file) : emptyCatalog();
  }

  private static read(file: string): CatalogData {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as CatalogData;
    if (parsed.formatVersion !== 1) throw new Error(`unsupported catalog format in ${file}`);
    return parsed;
  }

  get current(): Readonly<CatalogData> {
    return this.data;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Applies `change` to a deep copy of the catalog, writes it, then makes it current.
   * If `change` throws or the write fails, nothing changes.
   */
  update<T>(change: (draft: CatalogData) => T): Promise<T> {
    const run = async (): Promise<T> => {
      const draft = structuredClone(this.data);
      const result = change(draft);
      await writeFileAtomic(this.file, JSON.stringify(draft, null, 2));
      this.data = draft;
      this.generation++;
      for (const listener of this.listeners) listener();
      return result;
    };
    const next = this.writing.then(run, run);
    this.writing = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }
}

export async function writeFileAtomic(file: string, content: string, mode = 0o600): Promise<void> {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const handle = await fs.promises.open(tmp, 'w', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.promises.rename(tmp, file);
}
