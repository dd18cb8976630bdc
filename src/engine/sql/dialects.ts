/** The predicate dialects of the row-delivering sources: only what differs from the base. */
import type { ColumnDef } from '../../catalog/types.js';
import { CannotPushDown, PredicateGenerator, type Generated, type PredicateScope } from './predicate.js';

/** PostgreSQL: our own dialect. Text order follows the engine's byte order via COLLATE "C". */
export class PostgresPredicates extends PredicateGenerator {
  /** The database's locale may order text differently from the engine; "C" is byte order. */
  override orderedText(sql: string): string {
    return `${sql} COLLATE "C"`;
  }

  quoteIdentifier(name: string): string {
    return `"${name.replace(/"/g, '""')}"`;
  }

  override timestampLiteral(text: string): string {
    return `${this.quoteString(text)}::timestamp`;
  }

  override dateLiteral(text: string): string {
    return `${this.quoteString(text)}::date`;
  }

  stringComparison(): 'exact' {
    return 'exact';
  }

  like(column: string, pattern: string, negated: boolean, caseInsensitive: boolean): Generated {
    return { sql: `${column} ${negated ? 'NOT ' : ''}${caseInsensitive ? 'ILIKE' : 'LIKE'} ${pattern}`, exact: true };
  }
}

/**
 * MySQL / MariaDB: default collations compare text case-insensitively and ignore trailing
 * spaces, so `=`, IN and LIKE find a superset of the engine's rows; ordering comparisons
 * and negations on text are not pushed.
 */
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

  like(column: string, pattern: string, negated: boolean, caseInsensitive: boolean): Generated {
    if (negated) throw new CannotPushDown('NOT LIKE on MySQL');
    // LIKE follows the column's collation: a superset under case-insensitive ones, exact under
    // binary ones. ILIKE has no MySQL form that is a superset under every collation.
    if (caseInsensitive) throw new CannotPushDown('ILIKE on MySQL');
    return { sql: `${column} LIKE ${pattern}`, exact: false };
  }
}

/**
 * SQLite: BINARY collation compares text bytewise as the engine does; LIKE ignores ASCII case
 * (a superset). Dates are text there, so only ISO dates compare correctly: date and timestamp
 * comparisons are not pushed.
 */
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

  like(column: string, pattern: string, negated: boolean, caseInsensitive: boolean): Generated {
    if (negated) throw new CannotPushDown('NOT LIKE on SQLite');
    // SQLite's LIKE ignores case for ASCII letters only: a superset of LIKE, not of ILIKE.
    if (caseInsensitive) throw new CannotPushDown('ILIKE on SQLite');
    return { sql: `${column} LIKE ${pattern}`, exact: false };
  }
}

export type PredicateDialect = 'postgresql' | 'mysql' | 'sqlite';

export function predicateGenerator(dialect: PredicateDialect, scope: PredicateScope): PredicateGenerator {
  switch (dialect) {
    case 'postgresql':
      return new PostgresPredicates(scope);
    case 'mysql':
      return new MysqlPredicates(scope);
    case 'sqlite':
      return new SqlitePredicates(scope);
  }
}

/**
 * `column IN (v1, v2, ...)` for a dependent join: the values (as text) written as literals of
 * the column's type in the dialect. Null when the type cannot be written safely.
 */
export function keyInList(dialect: PredicateDialect, column: ColumnDef, values: readonly string[]): string | null {
  const generator = predicateGenerator(dialect, { column: () => undefined, castMayFail: () => true });
  const name = generator.quoteIdentifier(column.nameInSource);
  if (values.length === 0) return '1 = 0';
  let literal: (v: string) => string;
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT|DECIMAL)/.test(column.type)) {
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
