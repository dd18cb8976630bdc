/**
 * The pushdown negotiation of the SQL sources (PostgreSQL, MySQL/MariaDB, SQLite), written once:
 * each offer of a planner is answered from the source's capabilities and its dialect's rules,
 * and declined (null) wherever the source would compute something otherwise than the engine
 * (a collation that orders or groups text differently, values that may fail the engine's cast,
 * a condition it cannot write). See `ScanPushdown` in ../types.ts for the contract.
 */
import type { Node } from '@pgsql/types';
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { KeyLookup, SourceDialect } from '../dialect.js';
import { castMayFail, type Capabilities, type PartialAggregate, type RowConnector, type ScanPushdown, type SortKey } from '../types.js';
import { CannotPushDown, type Generated, type PredicateScope } from './predicate.js';

/** Column types whose order the engine and the SQL sources agree on (text only where the dialect says so). */
const ORDERABLE = /^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT|DECIMAL|FLOAT|DOUBLE|DATE|TIMESTAMP|VARCHAR)/;

/** What the negotiation reads of its connector, at each offer (the connector is still being built when it is made). */
type Negotiator = Pick<RowConnector, 'capabilities' | 'dialect' | 'castMayFail'>;

export class SqlScanPushdown implements ScanPushdown {
  constructor(private readonly connector: Negotiator) {}

  private get can(): Capabilities {
    return this.connector.capabilities;
  }

  private get dialect(): SourceDialect {
    return this.connector.dialect;
  }

  private mayFail = (column: ColumnDef): boolean => castMayFail(this.connector as RowConnector, column);

  applyFilter(condition: Node, scope: Omit<PredicateScope, 'castMayFail'>): Generated | null {
    if (!this.can.filters) return null;
    return this.generate(condition, scope);
  }

  applyTopN(orderBy: readonly SortKey[], limit: number): { orderBy: SortKey[]; limit: number } | null {
    if (!this.can.limit || !this.can.orderBy) return null;
    for (const { column } of orderBy) {
      // Text orders differ between collations: the dialect says whether the source's is the engine's.
      if (this.mayFail(column) || !this.dialect.ordersLikeEngine(column) || !ORDERABLE.test(column.type)) return null;
    }
    return { orderBy: [...orderBy], limit };
  }

  applyAggregation(
    keys: readonly ColumnDef[],
    aggregates: readonly PartialAggregate[],
  ): { keys: ColumnDef[]; aggregates: PartialAggregate[] } | null {
    // Keys the source groups otherwise than the engine (text under a collation) stay in the engine.
    if (!this.can.aggregates || !this.dialect.groupsLikeEngine(keys)) return null;
    return { keys: [...keys], aggregates: [...aggregates] };
  }

  applyJoin(join: {
    tables: ReadonlyArray<{ alias: string; table: TableDef }>;
    conditions: readonly Node[];
    written?: readonly string[];
    columns: ReadonlyArray<{ alias: string; column: ColumnDef }>;
  }): { sql: string; taken: boolean[]; exact: boolean[] } | null {
    if (!this.can.joins || join.columns.length === 0) return null;
    const quote = (name: string) => this.dialect.quoteIdentifier(name);
    const byAlias = new Map(join.tables.map((t) => [t.alias, t.table]));
    const scope: Omit<PredicateScope, 'castMayFail'> = {
      column: (fields) =>
        fields.length === 2
          ? byAlias.get(fields[0]!.toLowerCase())?.columns.find((c) => c.name.toLowerCase() === fields[1]!.toLowerCase())
          : undefined,
      columnSql: (fields, column) => `${quote(fields[0]!.toLowerCase())}.${quote(column.nameInSource)}`,
    };
    const pushed: string[] = [];
    const generated = join.conditions.map((condition) => this.generate(condition, scope));
    for (const g of generated) if (g) pushed.push(g.sql);
    pushed.push(...(join.written ?? []));
    const list = join.columns.map((c) => `${quote(c.alias)}.${quote(c.column.nameInSource)}`);
    const from = join.tables.map((t) => `${this.dialect.tableSql(t.table)} AS ${quote(t.alias)}`);
    const sql =
      `SELECT ${list.join(', ')} FROM ${from.join(', ')}` +
      (pushed.length > 0 ? ` WHERE ${pushed.map((p) => `(${p})`).join(' AND ')}` : '');
    return { sql, taken: generated.map((g) => g !== null), exact: generated.map((g) => g?.exact === true) };
  }

  applyKeyFilter(
    column: ColumnDef,
    keys: readonly string[],
    { batchSize, lookup }: { batchSize: number; lookup?: KeyLookup },
  ): string[] | null {
    if (!this.can.filters) return null;
    if (lookup && this.dialect.takesKeyLookups) return [this.dialect.keyLookupFilter(column, lookup)];
    // Batches must not overlap at the source: where text matches loosely (MySQL's
    // case-insensitive IN), two batches could return the same row twice. Then: one batch only.
    if (this.dialect.matchesKeysLoosely(column) && keys.length > batchSize) return null;
    return this.dialect.keyFilters(column, keys, batchSize);
  }

  /** A condition in the dialect, or null where it cannot be written. */
  private generate(condition: Node, scope: Omit<PredicateScope, 'castMayFail'>): Generated | null {
    try {
      return this.dialect.predicates({ ...scope, castMayFail: this.mayFail }).generate(condition);
    } catch (err) {
      if (err instanceof CannotPushDown) return null;
      throw err;
    }
  }
}
