/**
 * What vdb learns about a statement once instead of per request: a bounded map (the oldest entry
 * not used since it was inserted goes first, nearly least recently used), keyed by the
 * statement's shape (its tree with the constants' values masked, so `WHERE id = 1` and
 * `WHERE id = 2` share an entry) and by the catalog's generation, so that any change to
 * sources, views or permissions makes every older entry unreachable.
 */
import { isObject } from './ast.js';

export class BoundedCache<V> {
  /** Each entry with whether it was used since it was (re)inserted. */
  private readonly entries = new Map<string, { value: V; used: boolean }>();
  /** Lookups that found their entry (the metrics show them). */
  hits = 0;

  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.hits++;
    // Marked, not moved: an entry is moved behind the others only when one must go (`set`).
    entry.used = true;
    return entry.value;
  }

  /** The entry without counting a hit or marking it used. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, used: false });
    // The oldest entry not used since it was inserted goes; used ones get a second chance (moved last, unmarked).
    while (this.entries.size > this.capacity) {
      const [oldest, entry] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      if (entry.used && oldest !== key) {
        entry.used = false;
        this.entries.set(oldest, entry);
      }
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * The shape of a statement tree: its JSON with every constant's value replaced by its kind
 * (`ival`, `sval`, ...) and source positions left out. Statements of one shape have the same
 * result columns: a constant's kind, not its value, decides a column's type and name, except for
 * decimal literals, whose digits before and after the point the engine types them by (1.5 is a
 * DECIMAL(2,1), 12.25 a DECIMAL(4,2)): their digit counts are part of the shape.
 */
export function shapeOf(tree: unknown): string {
  return JSON.stringify(tree, (key, value: unknown) => {
    if (key === 'location' || key === 'stmt_location' || key === 'stmt_len') return undefined;
    if (key === 'A_Const' && isObject(value)) {
      const fval = isObject(value.fval) ? String(value.fval.fval) : null;
      if (fval !== null) return `fval ${fval.replace(/\d+/g, (digits) => String(digits.length))}`;
      return Object.keys(value).filter((k) => k !== 'location');
    }
    return value;
  });
}
