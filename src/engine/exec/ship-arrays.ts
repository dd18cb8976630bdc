/**
 * The shipped table's arrays written straight from the rows its source sends (exec/ship.ts),
 * without loading them into the engine first: a raw value goes as it came where the engine's
 * load cast could not change it (an integer in the column's range, text without NUL, a valid
 * `YYYY-MM-DD` date, a decimal within the column's precision and scale). Any other value makes
 * the caller load the rows into the engine and write the arrays from there (the slow, general
 * path, with the load's warnings). Pure: no I/O.
 */
import type { ColumnDef } from '../../catalog/types.js';
import { UNCONSTRAINED_NUMERIC } from '../../catalog/types.js';
import { shippedType } from '../plan/ship.js';

/** The shipped table's source, by kind (a PostgreSQL numeric without scale goes as `numeric`). */
type SourceKind = { kind: string };
const NO_SOURCE: SourceKind = { kind: '' };

const INTEGER_RANGES: Record<string, [bigint, bigint]> = {
  SMALLINT: [-(2n ** 15n), 2n ** 15n - 1n],
  INTEGER: [-(2n ** 31n), 2n ** 31n - 1n],
  BIGINT: [-(2n ** 63n), 2n ** 63n - 1n],
};

/**
 * The digits of an integer written plainly (`-?(0|[1-9][0-9]{0,18})`: no sign `+`, no leading
 * zeros, no spaces), 0 for any other text. A loop over the characters: a regular expression took
 * a third of the rows' time here.
 */
function plainIntegerDigits(text: string): number {
  const start = text.charCodeAt(0) === 45 ? 1 : 0; // '-'
  const digits = text.length - start;
  if (digits === 0 || digits > 19) return 0;
  const first = text.charCodeAt(start);
  if (first === 48) return digits === 1 ? 1 : 0; // '0' alone
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return 0;
  }
  return digits;
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `text` (YYYY-MM-DD) is a date both the engine and PostgreSQL read as that same day. */
function validDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > DAYS[month - 1]!) return false;
  return month !== 2 || day < 29 || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
}

/** Makes the writer of one column's elements: null for SQL NULL, the element's text, or undefined (not exact). */
export function elementWriter(column: ColumnDef, source: SourceKind = NO_SOURCE): ((value: unknown) => string | null | undefined) | null {
  const type = shippedType(column, source);
  if (type === null) return null;
  if (type === 'numeric' && column.type === UNCONSTRAINED_NUMERIC) {
    // PostgreSQL's own text of a numeric without scale: read back by PostgreSQL as that value, its scale included.
    return (value) =>
      value === null || value === undefined ? null : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? value : undefined;
  }
  const range = INTEGER_RANGES[column.type];
  if (range) {
    const [low, high] = range;
    return (value) => {
      if (value === null || value === undefined) return null;
      const text = typeof value === 'string' ? value : typeof value === 'bigint' || Number.isSafeInteger(value) ? String(value) : '';
      const digits = plainIntegerDigits(text);
      if (digits === 0) return undefined;
      // Up to 9 digits fit every integer type but SMALLINT; longer ones are compared exactly.
      if (digits <= 9 && column.type !== 'SMALLINT') return text;
      const n = BigInt(text);
      return n >= low && n <= high ? text : undefined;
    };
  }
  if (column.type === 'VARCHAR') {
    return (value) =>
      value === null || value === undefined ? null : typeof value === 'string' && !value.includes('\0') ? value : undefined;
  }
  if (column.type === 'DATE') {
    return (value) => (value === null || value === undefined ? null : typeof value === 'string' && validDate(value) ? value : undefined);
  }
  if (column.type === 'BOOLEAN') {
    return (value) => {
      if (value === null || value === undefined) return null;
      if (value === true || value === 't' || value === 'true') return 'true';
      if (value === false || value === 'f' || value === 'false') return 'false';
      return undefined;
    };
  }
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(column.type);
  if (decimal) {
    const scale = Number(decimal[2]);
    const whole = Number(decimal[1]) - scale;
    const fraction = scale > 0 ? `(\\.\\d{1,${scale}})?` : '';
    const pattern = new RegExp(`^-?\\d{1,${Math.max(whole, 1)}}${fraction}$`);
    return (value) => {
      if (value === null || value === undefined) return null;
      if (typeof value !== 'string' || !pattern.test(value)) return undefined;
      // `0.5` in DECIMAL(2,2): the integer part must be zero when the column has no whole digits.
      return whole > 0 || /^-?0(\.|$)/.test(value) ? value : undefined;
    };
  }
  return null;
}

/** An array element: quoted, `\` and `"` escaped; NULL unquoted. */
export function arrayElement(text: string | null): string {
  if (text === null) return 'NULL';
  return text.includes('\\') || text.includes('"') ? `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"` : `"${text}"`;
}

/**
 * One column's values as the SQL literal of a typed array: text quoted and escaped, the other
 * types' texts (numbers, dates, true/false) as they are, NULL unquoted.
 */
export function arrayLiteral(values: ReadonlyArray<string | null>, column: ColumnDef, source: SourceKind = NO_SOURCE): string {
  const quoted = column.type === 'VARCHAR';
  const body = values.map((value) => (value === null ? 'NULL' : quoted ? arrayElement(value) : value)).join(',');
  return `'{${quoted ? body.replace(/'/g, "''") : body}}'::${shippedType(column, source)!}[]`;
}

/**
 * Collects rows into one list of values per column, as texts (null for NULL), written into
 * literals when asked for. `add` returns false at the first value that is not exact (then
 * nothing more is added and the caller takes the general path).
 */
export class ArrayBuilder {
  /** Each column's values, row by row: the text that goes (ship-arrays' writers), null for NULL. */
  readonly values: Array<Array<string | null>>;
  rows = 0;
  private readonly writers: Array<(value: unknown) => string | null | undefined>;
  private readonly texts: Array<string | null>;

  /** Null when a column's type has no exact writer. */
  static for(columns: readonly ColumnDef[], source: SourceKind = NO_SOURCE): ArrayBuilder | null {
    const writers = columns.map((column) => elementWriter(column, source));
    if (!writers.every((w) => w !== null)) return null;
    return new ArrayBuilder(columns, writers as Array<NonNullable<(typeof writers)[number]>>, source);
  }

  private constructor(
    private readonly columns: readonly ColumnDef[],
    writers: Array<(value: unknown) => string | null | undefined>,
    private readonly source: SourceKind,
  ) {
    this.writers = writers;
    this.values = columns.map(() => []);
    this.texts = columns.map(() => null);
  }

  add(row: readonly unknown[]): boolean {
    const { writers, texts, values } = this;
    for (let i = 0; i < writers.length; i++) {
      const text = writers[i]!(row[i]);
      if (text === undefined) return false;
      texts[i] = text;
    }
    for (let i = 0; i < texts.length; i++) values[i]!.push(texts[i]!);
    this.rows += 1;
    return true;
  }

  /** The distinct non-NULL texts of a column. */
  distinct(column: number): Set<string> {
    const distinct = new Set<string>();
    for (const text of this.values[column]!) if (text !== null) distinct.add(text);
    return distinct;
  }

  literals(): string[] {
    return this.columns.map((column, i) => arrayLiteral(this.values[i]!, column, this.source));
  }
}
