/**
 * MySQL's and MariaDB's SQL. Default collations compare text case-insensitively and ignore
 * trailing spaces, so `=`, IN and LIKE find a superset of the engine's rows, and text is neither
 * ordered nor grouped as the engine does.
 */
import type { ColumnDef, SourceTableName } from '../../catalog/types.js';
import { SourceDialect } from '../dialect.js';
import type { KeyLookup } from '../types.js';
import { CannotPushDown, PredicateGenerator, type Generated, type PredicateScope } from '../sql/predicate.js';

/** Predicates: ordering comparisons and negations on text are not pushed. */
export class MysqlPredicates extends PredicateGenerator {
  quoteIdentifier(name: string): string {
    return `\`${name.replace(/`/g, '``')}\``;
  }

  override quoteString(text: string): string {
    return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  }

  stringComparison(op: string): 'superset' | 'no' {
    return op === '=' ? 'superset' : 'no';
  }

  /**
   * SUBSTRING counts characters of the column's character set, as PostgreSQL does in UTF-8;
   * only over columns declared as text (an ENUM, a spatial or INET6 value's string is not
   * necessarily the text the engine reads).
   */
  protected override substringSql(column: ColumnDef, sql: string, start: number, count: number | null): string | null {
    if (!/^(var)?char\(\d+\)|^(tiny|medium|long)?text\b/.test(column.sourceType ?? '')) return null;
    return `SUBSTRING(${sql}, ${start}${count === null ? '' : `, ${count}`})`;
  }

  like(column: string, pattern: string, negated: boolean, caseInsensitive: boolean): Generated {
    if (negated) throw new CannotPushDown('NOT LIKE on MySQL');
    // LIKE follows the column's collation: a superset under case-insensitive ones, exact under
    // binary ones. ILIKE has no MySQL form that is a superset under every collation.
    if (caseInsensitive) throw new CannotPushDown('ILIKE on MySQL');
    return { sql: `${column} LIKE ${pattern}`, exact: false };
  }
}

export class MysqlDialect extends SourceDialect {
  override readonly writesWholeSelects = true;

  predicates(scope: PredicateScope): PredicateGenerator {
    return new MysqlPredicates(scope);
  }

  /** `` `database`.`table` ``, as the importer wrote it. */
  parseTableName(nameInSource: string): SourceTableName {
    const m = /^`((?:[^`]|``)*)`\.`((?:[^`]|``)*)`$/.exec(nameInSource);
    return m ? { schema: m[1]!.replace(/``/g, '`'), table: m[2]!.replace(/``/g, '`') } : { table: nameInSource };
  }

  /** Text keys match case-insensitively: batches of keys could overlap. */
  override matchesKeysLoosely(column: ColumnDef): boolean {
    return column.type === 'VARCHAR';
  }

  override readonly takesKeyLookups = true;

  /**
   * A byte of one binary literal, at the key's offset: O(1) a row, where an IN list of the keys
   * is a binary search. The CASE keeps the offset from being computed outside the lookup's range
   * (no overflow of a BIGINT).
   */
  override lookupCode(column: string, lookup: KeyLookup): string {
    const high = lookup.low + BigInt(lookup.codes.length) - 1n;
    const bytes = Buffer.from(lookup.codes.buffer, lookup.codes.byteOffset, lookup.codes.byteLength).toString('hex');
    return `CASE WHEN ${column} BETWEEN ${lookup.low} AND ${high} THEN ASCII(SUBSTRING(x'${bytes}', ${column} - (${lookup.low - 1n}), 1)) ELSE 0 END`;
  }

  /**
   * A text key matches by the column's collation ('A', 'a ' and 'á' may equal 'a'): the IN list
   * finds the candidates through the key's index, the bytes of their UTF-8 text decide. The
   * values go as hex literals, which read the same under every sql_mode.
   */
  protected override exactKeyIn(column: ColumnDef, sql: string, values: readonly string[]): string | null {
    if (column.type !== 'VARCHAR') return super.exactKeyIn(column, sql, values);
    const hex = values.map((v) => Buffer.from(v, 'utf8').toString('hex').toUpperCase());
    return `${sql} IN (${hex.map((h) => `_utf8mb4 X'${h}'`).join(', ')}) AND HEX(CONVERT(${sql} USING utf8mb4)) IN (${hex.map((h) => `'${h}'`).join(', ')})`;
  }

  /** Text is grouped by its (usually case-insensitive) collation: such keys stay in the engine. */
  override groupsLikeEngine(keys: readonly ColumnDef[]): boolean {
    return keys.every((c) => c.type !== 'VARCHAR');
  }

  /** MySQL has no OFFSET without LIMIT: the largest LIMIT stands for "all". */
  override offsetOnly(offset: number): string {
    return `LIMIT 18446744073709551615 OFFSET ${offset}`;
  }
}

export const MYSQL_DIALECT = new MysqlDialect();
