/**
 * The SQL dialect of a kind of source: every difference the engine's planners need to know, in
 * one object per kind (connectors/<kind>/dialect.ts), so that the engine never asks which kind a
 * connector is. The defaults here are the common SQL behaviour; each dialect overrides only
 * what differs (Kysely's way), and a rule that cannot be pushed declines (false or null).
 */
import type { ColumnDef, SourceTableName, TableDef } from '../catalog/types.js';
import type { PredicateGenerator, PredicateScope } from './sql/predicate.js';

/** A scope without a table: for quoting and literals only. */
const NO_TABLE: PredicateScope = { column: () => undefined, castMayFail: () => true };

const NUMBER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT|DECIMAL)/;
const INTEGER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|HUGEINT)$/;

/**
 * The numbers of a smaller table's rows by their integer key: byte `i` of `codes` is the number
 * of the row whose key is `low + i` (1-255), 0 where no row has that key (exec/early-keys.ts).
 */
export interface KeyLookup {
  low: bigint;
  codes: Uint8Array;
}

export abstract class SourceDialect {
  /** Writes WHERE conditions over one table (or a join's tables) in this dialect. */
  abstract predicates(scope: PredicateScope): PredicateGenerator;

  /** The source reads PostgreSQL's SQL as the engine means it: whole statements may go as written. */
  readonly speaksPostgres: boolean = false;

  /** vdb writes whole single-source SELECTs for it itself (source-select.ts). */
  readonly writesWholeSelects: boolean = false;

  quoteIdentifier(name: string): string {
    return this.predicates(NO_TABLE).quoteIdentifier(name);
  }

  /** A catalog's `nameInSource` as its parts (for tables imported before names were kept structured). */
  abstract parseTableName(nameInSource: string): SourceTableName;

  /** A table's name in the source, structured. */
  tableName(table: Pick<TableDef, 'nameInSource' | 'sourceName'>): SourceTableName {
    return table.sourceName ?? this.parseTableName(table.nameInSource);
  }

  /** A table of the catalog as the source's SQL names it (FROM, INSERT INTO). */
  tableSql(table: Pick<TableDef, 'nameInSource' | 'sourceName'>): string {
    const { schema, table: name } = this.tableName(table);
    return schema === undefined ? this.quoteIdentifier(name) : `${this.quoteIdentifier(schema)}.${this.quoteIdentifier(name)}`;
  }

  /**
   * Whether the source orders (and groups) values of the column as the engine does. Text follows
   * the source's collation, which is not the engine's byte order unless the dialect says so.
   */
  ordersLikeEngine(column: ColumnDef): boolean {
    return column.type !== 'VARCHAR';
  }

  /** Any number of dependent-join keys go in one statement (an array): no batches are planned. */
  readonly keysInOneStatement: boolean = false;

  /**
   * Many keys of a column as one array value of the column's type, for `column = ANY(...)`;
   * null where the dialect has no such arrays or a key would not read as the column's type.
   */
  keyArray(_column: ColumnDef, _keys: readonly string[]): string | null {
    return null;
  }

  /** Whether a column's values carry their own scale, read from their text (a numeric without declared scale). */
  scaleFromValues(_column: Pick<ColumnDef, 'type'>): boolean {
    return false;
  }

  /** Whether a column may hold char(n) values padded with spaces, which the source compares without them. */
  paddedChar(_column: Pick<ColumnDef, 'type' | 'sourceType'>): boolean {
    return false;
  }

  /** Whether the source compares a column with a char(n) as a char(n), without trailing spaces. */
  comparesAsChar(_column: Pick<ColumnDef, 'type' | 'sourceType'>): boolean {
    return false;
  }

  /** A column as ORDER BY and GROUP BY write it, so that it orders as `ordersLikeEngine` promised. */
  orderedColumn(sql: string, _column: ColumnDef): string {
    return sql;
  }

  /**
   * Whether `column IN (keys)` may also match values the engine tells apart (a case-insensitive
   * collation): then batches of dependent-join keys could return a row twice.
   */
  matchesKeysLoosely(_column: ColumnDef): boolean {
    return false;
  }

  /**
   * Whether the source may be asked which of many keys of `column` have a row (keyProbeSql):
   * a probe a key (an index serves it) instead of a scan for all of them.
   */
  probesKeys(_column: ColumnDef): boolean {
    return false;
  }

  /**
   * The distinct keys among `keys` for which `table` has a row whose `column` equals the key and
   * that meets `filter`, as one SELECT of one column; only where `probesKeys(column)`.
   */
  keyProbeSql(_table: TableDef, _column: ColumnDef, _keys: readonly string[], _filter: string | undefined): string {
    throw new Error('this source probes no keys');
  }

  /** Whether grouping by these columns at the source makes the engine's groups (partial aggregation). */
  groupsLikeEngine(_keys: readonly ColumnDef[]): boolean {
    return true;
  }

  /**
   * The source reads a lookup of integer keys faster than their IN list (plan/key-lookup.ts): as
   * the dependent join's keys, and to group a scan by (ScanRequest.groupLookup).
   */
  readonly takesKeyLookups: boolean = false;

  /** The number (0-255) of the integer key `column` (its SQL) in `lookup`, 0 outside it; only where `takesKeyLookups`. */
  lookupCode(_column: string, _lookup: KeyLookup): string {
    throw new Error('this source takes no key lookups');
  }

  /** The condition that keeps the rows whose integer `column` is a key of `lookup` (a number other than 0). */
  keyLookupFilter(column: ColumnDef, lookup: KeyLookup): string {
    return `${this.lookupCode(this.quoteIdentifier(column.nameInSource), lookup)} <> 0`;
  }

  /** The raw class in which count() and sum() of integers arrive. */
  countRaw(): 'BIGINT' | 'VARCHAR' {
    return 'VARCHAR';
  }

  /** Whether sum() of decimals is exact at the source. */
  sumsDecimalsExactly(): boolean {
    return true;
  }

  /** The clause for OFFSET without LIMIT. */
  offsetOnly(offset: number): string {
    return `OFFSET ${offset}`;
  }

  /**
   * The conditions that ask a scan for only these dependent-join keys (values as text), one per
   * statement: `column IN (...)` in batches of `batchSize`. Null when the keys cannot be written
   * safely.
   */
  keyFilters(column: ColumnDef, keys: readonly string[], batchSize: number): string[] | null {
    const filters: string[] = [];
    for (let i = 0; i < Math.max(keys.length, 1); i += batchSize) {
      const filter = this.keyInList(column, keys.slice(i, i + batchSize));
      if (filter === null) return null;
      filters.push(filter);
    }
    return filters;
  }

  /**
   * The condition that keeps exactly the rows whose key `columns` hold one of `keys` (values as
   * the engine reads them, as text), each value compared as the engine compares it: a write
   * chosen by the engine (exec/dml.ts) reaches those rows and no other. Null where the dialect
   * cannot write such keys exactly (the write is then refused).
   */
  exactKeyMatch(columns: readonly ColumnDef[], keys: ReadonlyArray<ReadonlyArray<string>>): string | null {
    if (keys.length === 0) return '1 = 0';
    const names = columns.map((c) => this.quoteIdentifier(c.nameInSource));
    if (columns.length === 1)
      return this.exactKeyIn(
        columns[0]!,
        names[0]!,
        keys.map((k) => k[0]!),
      );
    const terms: string[] = [];
    for (const key of keys) {
      const parts = columns.map((c, i) => this.exactKeyIn(c, names[i]!, [key[i]!]));
      if (parts.some((p) => p === null)) return null;
      terms.push(`(${parts.join(' AND ')})`);
    }
    return terms.join(' OR ');
  }

  /**
   * `sql` (a key column) is one of `values`, exactly as the engine compares them. Here integers
   * only, which every source compares as the engine does; dialects add what they can write
   * exactly (text under a collation that is not bytewise needs more than `=`).
   */
  protected exactKeyIn(column: ColumnDef, sql: string, values: readonly string[]): string | null {
    if (!INTEGER.test(column.type) || !values.every((v) => /^-?\d{1,38}$/.test(v))) return null;
    return `${sql} IN (${values.join(', ')})`;
  }

  /**
   * `column IN (v1, v2, ...)` for a dependent join: the values (as text) written as literals of
   * the column's type. Null when the type cannot be written safely.
   */
  keyInList(column: ColumnDef, values: readonly string[]): string | null {
    const generator = this.predicates(NO_TABLE);
    const name = generator.quoteIdentifier(column.nameInSource);
    if (values.length === 0) return '1 = 0';
    let literal: (v: string) => string;
    if (NUMBER.test(column.type)) {
      if (!values.every((v) => /^-?\d+(\.\d+)?$/.test(v))) return null;
      literal = (v) => v;
    } else if (column.type === 'VARCHAR') {
      literal = (v) => generator.quoteString(v);
    } else if (column.type === 'DATE') {
      try {
        literal = (v) => generator.dateLiteral(v);
        literal(values[0]!);
      } catch {
        return null;
      }
    } else return null;
    return `${name} IN (${values.map(literal).join(', ')})`;
  }
}
