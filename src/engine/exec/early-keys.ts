/**
 * The distinct keys of a load, collected from its rows while they arrive: a dependent join's
 * other scan can start as soon as the source has sent its last row, while the engine is still
 * loading them (load-planned.ts). Only integer columns whose raw values are the text the load's
 * cast writes back (`-12`, not `012`, `+12` or `12.0`): any other value, and keys beyond
 * `maxKeys`, leave the keys to be read from the finished load as before (dependentKeys).
 */
import type { ColumnDef } from '../../catalog/types.js';
import type { ScanPlan } from '../plan/scans.js';

const INTEGER_TYPES = new Set(['SMALLINT', 'INTEGER', 'BIGINT']);
const CANONICAL = /^-?(0|[1-9]\d{0,17})$/;

/** Canonical integer texts by value: sign, then length, then digits. */
function byValue(a: string, b: string): number {
  const negative = a.startsWith('-');
  if (negative !== b.startsWith('-')) return negative ? -1 : 1;
  const order = a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return negative ? -order : order;
}

export class EarlyKeys {
  /** The keys of each collected column by name, in the column's order; null where they must come from the load. */
  readonly ready: Promise<Map<string, string[] | null>>;
  private resolve!: (keys: Map<string, string[] | null>) => void;
  private readonly keys: Array<Set<string> | null>;
  private settled = false;

  /** Collects the keys of `columns` (positions among the scan's columns); null when none is an integer column. */
  static for(plan: ScanPlan, names: ReadonlySet<string>, maxKeys: number): EarlyKeys | null {
    const columns = plan.columns.flatMap((column, index) =>
      names.has(column.name) && INTEGER_TYPES.has(column.type) ? [{ column, index }] : [],
    );
    return columns.length > 0 ? new EarlyKeys(columns, maxKeys) : null;
  }

  private constructor(
    private readonly columns: ReadonlyArray<{ column: ColumnDef; index: number }>,
    private readonly maxKeys: number,
  ) {
    this.keys = columns.map(() => new Set());
    this.ready = new Promise((resolve) => (this.resolve = resolve));
  }

  /** A batch of raw rows as the source sent them. */
  batch(rows: readonly unknown[][]): void {
    if (this.settled) return;
    for (const [k, { index }] of this.columns.entries()) {
      const keys = this.keys[k];
      if (!keys) continue;
      for (const row of rows) {
        const value = row[index];
        if (value === null || value === undefined) continue;
        const text = typeof value === 'string' ? value : typeof value === 'bigint' || Number.isSafeInteger(value) ? String(value) : '';
        if (!CANONICAL.test(text) || keys.size >= this.maxKeys) {
          this.keys[k] = null;
          break;
        }
        keys.add(text);
      }
    }
  }

  /** The source sent its last row: the keys are known. */
  end(): void {
    this.settle(true);
  }

  /** The source failed: the keys come from the load, which fails too. */
  fail(): void {
    this.settle(false);
  }

  private settle(complete: boolean): void {
    if (this.settled) return;
    this.settled = true;
    const byName = new Map<string, string[] | null>();
    for (const [k, { column }] of this.columns.entries()) {
      const keys = complete ? this.keys[k] : null;
      // In the column's order, as the keys read from the load are (the SQL sent reads naturally).
      byName.set(column.name, keys ? [...keys].sort(byValue) : null);
    }
    this.resolve(byName);
  }
}
