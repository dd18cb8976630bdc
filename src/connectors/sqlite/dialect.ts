/**
 * SQLite's SQL. BINARY collation compares text bytewise as the engine does; LIKE ignores ASCII
 * case (a superset). Dates are text there, so only ISO dates compare correctly: date and
 * timestamp comparisons are not pushed. Catalog names are stored bare.
 */
import type { ColumnDef, SourceTableName } from '../../catalog/types.js';
import { SourceDialect } from '../dialect.js';
import { CannotPushDown, PredicateGenerator, type Generated, type PredicateScope } from '../sql/predicate.js';
import { exactClassSql, otherClassesNearKeys, otherClassesSql, storedClassCertain, widenedComparison } from './types.js';

export class SqlitePredicates extends PredicateGenerator {
  quoteIdentifier(name: string): string {
    return `"${name.replace(/"/g, '""')}"`;
  }

  override dateLiteral(): string {
    throw new CannotPushDown('dates are text in SQLite');
  }

  override timestampLiteral(): string {
    throw new CannotPushDown('timestamps are text in SQLite');
  }

  stringComparison(): 'exact' {
    return 'exact';
  }

  /** Bytewise whatever the column's declared collation (NOCASE, RTRIM), as the engine compares. */
  override textColumn(sql: string): string {
    return `${sql} COLLATE BINARY`;
  }

  /**
   * Values of another storage class than the comparison is exact for (types.ts: otherClassesSql):
   * kept by every pushed comparison, IN and LIKE on a column whose class SQLite does not fix, so
   * that the engine decides on them after its own cast.
   */
  protected override otherValues(column: ColumnDef, sql: string): string | null {
    return storedClassCertain(column) ? null : otherClassesSql(column, sql);
  }

  /** Numeric comparisons as ranges widened by the load's rounding, which an index still serves (types.ts: widenedComparison). */
  protected override widened(column: ColumnDef, sql: string, op: string, constants: readonly string[]): string | null {
    return storedClassCertain(column) ? null : widenedComparison(column, sql, op, constants);
  }

  like(column: string, pattern: string, negated: boolean, caseInsensitive: boolean): Generated {
    if (negated) throw new CannotPushDown('NOT LIKE on SQLite');
    // SQLite's LIKE ignores case for ASCII letters only: a superset of LIKE, not of ILIKE.
    if (caseInsensitive) throw new CannotPushDown('ILIKE on SQLite');
    return { sql: `${column} LIKE ${pattern}`, exact: false };
  }
}

export class SqliteDialect extends SourceDialect {
  override readonly writesWholeSelects = true;

  predicates(scope: PredicateScope): PredicateGenerator {
    return new SqlitePredicates(scope);
  }

  /** The catalog keeps SQLite's table names bare. */
  parseTableName(nameInSource: string): SourceTableName {
    return { table: nameInSource };
  }

  /** Text ordered with COLLATE BINARY is the engine's byte order. */
  override ordersLikeEngine(): boolean {
    return true;
  }

  override orderedColumn(sql: string, column: ColumnDef): string {
    return column.type === 'VARCHAR' ? `${sql} COLLATE BINARY` : sql;
  }

  /** Integers are integers there. */
  override countRaw(): 'BIGINT' {
    return 'BIGINT';
  }

  /** SQLite keeps decimals as floating point. */
  override sumsDecimalsExactly(): boolean {
    return false;
  }

  override offsetOnly(offset: number): string {
    return `LIMIT -1 OFFSET ${offset}`;
  }

  /**
   * The key batches; on a column whose values SQLite may store in another class than the keys
   * compare exactly with (a REAL 1001.5 in an INTEGER column, which the engine rounds to 1002),
   * the first batch also keeps the values of another class the engine may match (the engine's
   * join decides on them; types.ts: otherClassesNearKeys, else otherClassesSql) and the others
   * only values of the exact class, so that no row comes twice.
   */
  override keyFilters(column: ColumnDef, keys: readonly string[], batchSize: number): string[] | null {
    const filters = super.keyFilters(column, keys, batchSize);
    if (filters === null || storedClassCertain(column)) return filters;
    const name = this.quoteIdentifier(column.nameInSource);
    const exactClass = exactClassSql(column, name);
    if (exactClass === null) return null;
    const others = otherClassesNearKeys(column, name, keys) ?? otherClassesSql(column, name);
    return filters.map((f, i) => (i === 0 ? `${f} OR ${others}` : `${exactClass} AND ${f}`));
  }

  /**
   * Keys compare bytewise (COLLATE BINARY, whatever the column's collation) and only with values
   * of the class the engine read them from, where SQLite does not fix the column's class (the
   * text '7' is not the integer 7 there).
   */
  protected override exactKeyIn(column: ColumnDef, sql: string, values: readonly string[]): string | null {
    const generator = this.predicates({ column: () => undefined, castMayFail: () => true });
    const list =
      column.type === 'VARCHAR'
        ? `${sql} COLLATE BINARY IN (${values.map((v) => generator.quoteString(v)).join(', ')})`
        : super.exactKeyIn(column, sql, values);
    if (list === null || storedClassCertain(column)) return list;
    const exactClass = exactClassSql(column, sql);
    return exactClass === null ? null : `${exactClass} AND ${list}`;
  }

  /**
   * Integer keys as one JSON literal read by json_each: SQLite parses it faster than a list of
   * literals (bench/key-forms.ts: 0.7 of the time for 25,000 keys), and compares the values as the
   * list's (integers, the column's affinity applied). Other keys: the list.
   */
  override keyInList(column: ColumnDef, values: readonly string[]): string | null {
    if (!INTEGER_KEYS.test(column.type) || values.length === 0 || !values.every((v) => /^-?\d{1,18}$/.test(v)))
      return super.keyInList(column, values);
    const name = this.quoteIdentifier(column.nameInSource);
    return `${name} IN (SELECT value FROM json_each('[${values.join(',')}]'))`;
  }
}

const INTEGER_KEYS = /^(SMALLINT|INTEGER|BIGINT)$/;

export const SQLITE_DIALECT = new SqliteDialect();
