/** PostgreSQL's SQL: the engine's own dialect, with the source's text collation to mind. */
import { UNCONSTRAINED_NUMERIC, type ColumnDef, type SourceTableName, type TableDef } from '../../catalog/types.js';
import { SourceDialect } from '../dialect.js';
import { keyArrayElements, keyArrayFilter, keyArrayLiteral } from './key-array.js';
import { paddedCharColumn, varcharColumn } from './types.js';
import { PredicateGenerator, type Generated, type PredicateScope } from '../sql/predicate.js';

/** Predicates: our own dialect. Text order follows the engine's byte order via COLLATE "C". */
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

  /** PostgreSQL's own substring, over columns of its text types (others have no substring, or another). */
  protected override substringSql(column: ColumnDef, sql: string, start: number, count: number | null): string | null {
    if (!/^(text|character varying(\(\d+\))?|character(\(\d+\))?|bpchar)$/.test(column.sourceType ?? '')) return null;
    return `substring(${sql} FROM ${start}${count === null ? '' : ` FOR ${count}`})`;
  }

  like(column: string, pattern: string, negated: boolean, caseInsensitive: boolean): Generated {
    return { sql: `${column} ${negated ? 'NOT ' : ''}${caseInsensitive ? 'ILIKE' : 'LIKE'} ${pattern}`, exact: true };
  }
}

/**
 * Up to this many dependent-join keys are written as a list (`IN (2, 7)`, which PostgreSQL
 * turns into the same array comparison and which reads better in EXPLAIN); more go as one array.
 */
const LISTED_KEYS = 64;

/** The array type probed keys of a column go as (keyProbeSql), by the column's engine type. */
const PROBE_ARRAY_TYPES: Record<string, string> = { SMALLINT: 'int8', INTEGER: 'int8', BIGINT: 'int8', DATE: 'date' };

export class PostgresDialect extends SourceDialect {
  override readonly speaksPostgres = true;
  override readonly keysInOneStatement = true;

  override keyArray(column: ColumnDef, keys: readonly string[]): string | null {
    const elements = keyArrayElements(column, keys);
    return elements && keyArrayLiteral(elements);
  }

  /** `numeric` without scale: each value keeps the scale of its text, as PostgreSQL writes it. */
  override scaleFromValues(column: Pick<ColumnDef, 'type'>): boolean {
    return column.type === UNCONSTRAINED_NUMERIC;
  }

  override paddedChar(column: Pick<ColumnDef, 'type' | 'sourceType'>): boolean {
    return paddedCharColumn(column);
  }

  override comparesAsChar(column: Pick<ColumnDef, 'type' | 'sourceType'>): boolean {
    return varcharColumn(column);
  }

  /** Many keys: one array of the column's type in one statement (key-array.ts), not batches. */
  override keyFilters(column: ColumnDef, keys: readonly string[], batchSize: number): string[] | null {
    if (keys.length > LISTED_KEYS) {
      const filter = keyArrayFilter(this.quoteIdentifier(column.nameInSource), column, keys);
      if (filter !== null) return [filter];
    }
    return super.keyFilters(column, keys, batchSize);
  }

  /** Integer and date keys: their array has a type of its own (bigint compares with every integer type, and an index serves it). */
  override probesKeys(column: ColumnDef): boolean {
    return PROBE_ARRAY_TYPES[column.type] !== undefined;
  }

  /** `unnest` of the keys, each kept where EXISTS finds a row: PostgreSQL may probe an index a key, or hash them. */
  override keyProbeSql(table: TableDef, column: ColumnDef, keys: readonly string[], filter: string | undefined): string {
    const elements = keyArrayElements(column, keys);
    const type = PROBE_ARRAY_TYPES[column.type];
    if (elements === null || type === undefined) throw new Error(`keys of ${column.name} cannot be probed`);
    const condition = `${this.quoteIdentifier(column.nameInSource)} = __vdb_probe.key${filter ? ` AND (${filter})` : ''}`;
    return (
      `SELECT __vdb_probe.key FROM unnest(${keyArrayLiteral(elements)}::${type}[]) AS __vdb_probe(key) ` +
      `WHERE EXISTS (SELECT FROM ${this.tableSql(table)} WHERE ${condition})`
    );
  }

  predicates(scope: PredicateScope): PredicateGenerator {
    return new PostgresPredicates(scope);
  }

  /** `"schema"."table"`, as the importer wrote it. */
  parseTableName(nameInSource: string): SourceTableName {
    const m = /^"((?:[^"]|"")*)"\."((?:[^"]|"")*)"$/.exec(nameInSource);
    return m ? { schema: m[1]!.replace(/""/g, '"'), table: m[2]!.replace(/""/g, '"') } : { table: nameInSource };
  }
}

export const POSTGRES_DIALECT = new PostgresDialect();
