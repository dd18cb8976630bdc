/**
 * The distinct keys of a load, collected from its rows while they arrive: a dependent join's
 * other scan can start as soon as the source has sent its last row, while the engine is still
 * loading them (load-planned.ts). Only integer columns whose raw values are the text the load's
 * cast writes back (`-12`, not `012`, `+12` or `12.0`): any other value, and keys beyond
 * `maxKeys`, leave the keys to be read from the finished load as before (dependentKeys).
 *
 * For a key a group lookup may use (plan/key-lookup.ts), each row is also numbered by the raw
 * values of its other columns: equal raw values load as equal values, so rows of one number are
 * alike in every column the engine reads but the key. The lookup is given up where a key
 * repeats (the engine would join its row more than once), numbers exceed a byte, or the keys
 * span too far (keyLookup).
 */
import type { ColumnDef } from '../../catalog/types.js';
import type { KeyLookup } from '../../connectors/types.js';
import type { ScanPlan } from '../plan/scans.js';
import { MAX_LOOKUP_CODE } from '../plan/key-lookup.js';
import { TupleNumbers } from '../translate/tuple-numbers.js';

const INTEGER_TYPES = new Set(['SMALLINT', 'INTEGER', 'BIGINT']);
const CANONICAL = /^-?(0|[1-9]\d{0,17})$/;
/** The widest range of keys a lookup covers: one byte each, twice that as the hex of the statement. */
export const MAX_LOOKUP_SPAN = 1 << 20;
/** The most bytes of a lookup per key: sparser keys are shorter as a list. */
const MAX_SLOTS_PER_KEY = 64;

/** Numbers the rows of one key column by their other columns' raw values. */
class KeyCoder {
  private readonly codeOfKey = new Map<string, number>();
  private readonly rows: TupleNumbers<readonly unknown[]>;
  alive = true;

  constructor(private readonly others: readonly number[]) {
    this.rows = new TupleNumbers(others.length, (row, k) => rawValue(row[others[k]!]));
  }

  add(key: string, row: readonly unknown[]): void {
    if (!this.alive) return;
    for (const index of this.others) {
      if (rawValue(row[index]) === UNKNOWN) {
        this.alive = false;
        return;
      }
    }
    const code = this.rows.numberOf(row);
    if (code > MAX_LOOKUP_CODE || this.codeOfKey.has(key)) this.alive = false;
    else this.codeOfKey.set(key, code);
  }

  /** The lookup of the keys (in order), or null where it was given up or would span too far. */
  lookup(sorted: readonly string[]): KeyLookup | null {
    return this.alive ? keyLookup(sorted, this.codeOfKey) : null;
  }
}

/**
 * A lookup of integer keys (canonical texts, in order): each key's number in `codes`, or 1 for
 * every key; null for no keys or where they span more than MAX_LOOKUP_SPAN or 64 slots a key.
 */
export function keyLookup(sorted: readonly string[], codes?: ReadonlyMap<string, number>): KeyLookup | null {
  if (sorted.length === 0) return null;
  const low = BigInt(sorted[0]!);
  const span = BigInt(sorted[sorted.length - 1]!) - low + 1n;
  if (span > BigInt(Math.min(MAX_LOOKUP_SPAN, sorted.length * MAX_SLOTS_PER_KEY))) return null;
  const bytes = new Uint8Array(Number(span));
  // Offsets as numbers where the keys are (the common case), as bigints otherwise.
  const small = Number.isSafeInteger(Number(sorted[0])) && Number.isSafeInteger(Number(sorted[sorted.length - 1]));
  const offsetOf = small ? (key: string) => Number(key) - Number(low) : (key: string) => Number(BigInt(key) - low);
  for (const key of sorted) bytes[offsetOf(key)] = codes?.get(key) ?? 1;
  return { low, codes: bytes };
}

const UNKNOWN = Symbol('unknown raw class');
const NEGATIVE_ZERO = Symbol('-0');

/**
 * A raw value as a map key that equals another's only where both load as the same value: maps
 * compare by SameValueZero, so -0 (a float the engine keeps apart) gets a key of its own; UNKNOWN
 * for any other class (bytes, which maps compare by identity, give up the lookup).
 */
function rawValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'bigint') return value;
  if (typeof value === 'number') return Object.is(value, -0) ? NEGATIVE_ZERO : value;
  return UNKNOWN;
}

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
  /** The lookups of the coded key columns by name, set when `ready` resolves; null where there is none. */
  readonly lookups = new Map<string, KeyLookup | null>();
  private resolve!: (keys: Map<string, string[] | null>) => void;
  private readonly keys: Array<Set<string> | null>;
  private readonly coders: Array<KeyCoder | null>;
  private settled = false;

  /**
   * Collects the keys of `names` (integer columns of the scan; null when there is none), and
   * numbers the rows by those of them in `coded`.
   */
  static for(plan: ScanPlan, names: ReadonlySet<string>, maxKeys: number, coded: ReadonlySet<string> = new Set()): EarlyKeys | null {
    const columns = plan.columns.flatMap((column, index) =>
      names.has(column.name) && INTEGER_TYPES.has(column.type) ? [{ column, index }] : [],
    );
    if (columns.length === 0) return null;
    const coders = columns.map(({ column, index }) =>
      coded.has(column.name) ? new KeyCoder(plan.columns.flatMap((_, other) => (other === index ? [] : [other]))) : null,
    );
    return new EarlyKeys(columns, maxKeys, coders);
  }

  private constructor(
    private readonly columns: ReadonlyArray<{ column: ColumnDef; index: number }>,
    private readonly maxKeys: number,
    coders: Array<KeyCoder | null>,
  ) {
    this.keys = columns.map(() => new Set());
    this.coders = coders;
    this.ready = new Promise((resolve) => (this.resolve = resolve));
  }

  /** A batch of raw rows as the source sent them. */
  batch(rows: readonly unknown[][]): void {
    if (this.settled) return;
    for (const [k, { index }] of this.columns.entries()) {
      const keys = this.keys[k];
      if (!keys) continue;
      const coder = this.coders[k]?.alive ? this.coders[k] : null;
      for (const row of rows) {
        const value = row[index];
        if (value === null || value === undefined) continue;
        const text = typeof value === 'string' ? value : typeof value === 'bigint' || Number.isSafeInteger(value) ? String(value) : '';
        if (!CANONICAL.test(text) || keys.size >= this.maxKeys) {
          this.keys[k] = null;
          break;
        }
        keys.add(text);
        coder?.add(text, row);
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
      const sorted = keys ? [...keys].sort(byValue) : null;
      byName.set(column.name, sorted);
      const coder = this.coders[k];
      if (coder) this.lookups.set(column.name, sorted ? coder.lookup(sorted) : null);
    }
    this.resolve(byName);
  }
}
