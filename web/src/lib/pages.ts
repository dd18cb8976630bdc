/**
 * The rows of a cursor, loaded a page at a time as the grid needs them and forgotten when far
 * away, so a million-row result costs the browser only the pages near what is on screen.
 */
import type { Row } from './api.js';

export type PageLoader = (offset: number, limit: number) => Promise<Row[]>;

export class PagedRows {
  private readonly pages = new Map<number, Row[]>();
  private readonly loading = new Map<number, Promise<void>>();

  constructor(
    private readonly load: PageLoader,
    readonly pageSize: number,
    first: Row[],
    /** Pages kept at most; the least recently used go first. */
    private readonly keep = 40,
  ) {
    this.pages.set(0, first);
  }

  /** The row if its page is loaded. */
  get(index: number): Row | undefined {
    const page = this.pages.get(Math.floor(index / this.pageSize));
    return page?.[index % this.pageSize];
  }

  /**
   * True when every page that holds rows from..to (inclusive) is loaded; they are marked recently
   * used. The grid asks this each frame it scrolls, and draws again only when a page was missing.
   */
  has(from: number, to: number): boolean {
    let all = true;
    for (let p = Math.floor(Math.max(0, from) / this.pageSize); p <= Math.floor(Math.max(0, to) / this.pageSize); p++) {
      const page = this.pages.get(p);
      if (!page) {
        all = false;
        continue;
      }
      // Touch: a Map keeps insertion order, so re-inserting marks it recently used.
      this.pages.delete(p);
      this.pages.set(p, page);
    }
    return all;
  }

  /** Loads the pages that hold rows from..to (inclusive) and are not loaded yet. */
  async ensure(from: number, to: number): Promise<void> {
    const wanted: Promise<void>[] = [];
    for (let p = Math.floor(Math.max(0, from) / this.pageSize); p <= Math.floor(Math.max(0, to) / this.pageSize); p++) {
      const page = this.pages.get(p);
      if (page) {
        this.pages.delete(p);
        this.pages.set(p, page);
        continue;
      }
      let pending = this.loading.get(p);
      if (!pending) {
        pending = this.load(p * this.pageSize, this.pageSize)
          .then((rows) => {
            this.pages.set(p, rows);
            this.evict();
          })
          .finally(() => this.loading.delete(p));
        this.loading.set(p, pending);
      }
      wanted.push(pending);
    }
    await Promise.all(wanted);
  }

  get loadedPages(): number {
    return this.pages.size;
  }

  private evict(): void {
    for (const p of this.pages.keys()) {
      if (this.pages.size <= this.keep) break;
      this.pages.delete(p);
    }
  }
}
