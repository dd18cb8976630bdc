/**
 * Whole-statement pushdown to MySQL/MariaDB and SQLite: a SELECT over tables of one such source
 * written in the source's dialect, for the subset whose meaning is the same there as in the
 * engine: plain columns and count/sum/min/max of numbers, inner and left joins on conditions,
 * WHERE and ON conditions that the predicate generator writes exactly, GROUP BY and ORDER BY on
 * columns (text only where the source compares text bytewise: SQLite), LIMIT and OFFSET.
 * Anything else throws CannotPushDown and the engine runs the statement.
 */
import type { FuncCall, Node, SelectStmt } from '@pgsql/types';
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { RawType, RowConnector } from '../../connectors/types.js';
import { castMayFail } from '../../connectors/types.js';
import { asKind, fieldNames, lower, rangeAlias, sortTarget } from '../tree/ast.js';
import type { SourceDialect } from '../../connectors/dialect.js';
import { CannotPushDown, type PredicateGenerator } from '../../connectors/sql/predicate.js';

export interface SourceSelect {
  sql: string;
  /** Per result column, the raw class the source hands its values over in. */
  raws: RawType[];
  /** Per result column, the table column it shows (`schema.table.column`), for warnings. */
  origins: Array<string | null>;
}

interface Range {
  alias: string;
  /** `label` names the table as users do (schema.table). */
  table: Pick<TableDef, 'nameInSource' | 'sourceName' | 'columns'> & { label: string };
}

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT|DECIMAL|FLOAT|DOUBLE)/;

const INTEGER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT)/;

export function sourceSelect(
  select: SelectStmt,
  connector: RowConnector,
  tableOf: (relname: string) => Range['table'] | undefined,
): SourceSelect {
  if (!connector.dialect.writesWholeSelects) throw new CannotPushDown('dialect');
  if (
    select.op !== 'SETOP_NONE' ||
    select.withClause ||
    select.windowClause ||
    select.valuesLists ||
    select.lockingClause ||
    select.havingClause
  ) {
    throw new CannotPushDown('statement shape');
  }
  // DISTINCT follows column collations (MySQL's case-insensitive ones, SQLite's NOCASE).
  if (select.distinctClause) throw new CannotPushDown('DISTINCT');
  return new SourceSelectWriter(select, connector, tableOf).write();
}

/** A resolved column reference: the FROM entry and the column. */
interface Found {
  range: Range;
  column: ColumnDef;
}

/** The statement written in the source's dialect, clause by clause; any part it cannot write declines. */
class SourceSelectWriter {
  private readonly ranges: Range[] = [];
  private readonly dialect: SourceDialect;
  private readonly generator: PredicateGenerator;

  constructor(
    private readonly select: SelectStmt,
    private readonly connector: RowConnector,
    private readonly tableOf: (relname: string) => Range['table'] | undefined,
  ) {
    this.dialect = connector.dialect;
    this.generator = this.dialect.predicates({
      column: (fields) => this.resolve(fields)?.column,
      castMayFail: (column) => castMayFail(connector, column),
      columnSql: (fields) => {
        const found = this.resolve(fields)!;
        return this.columnSql(found.range, found.column);
      },
    });
  }

  write(): SourceSelect {
    const { select, dialect } = this;
    // FROM first: it says which tables the other clauses may name.
    const from = (select.fromClause ?? []).map((item) => this.fromSql(item));
    if (from.length !== 1) throw new CannotPushDown('one FROM item (joins written with JOIN)');
    const { list, plain, raws, origins, aggregated } = this.selectList();
    const where = select.whereClause ? ` WHERE ${this.condition(select.whereClause)}` : '';
    const { groups, groupKeys } = this.groupBy();
    // Plain columns beside aggregates must be grouping columns (else the engine reports the error).
    if ((aggregated || groups.length > 0) && plain.some((p) => !groupKeys.includes(p))) throw new CannotPushDown('ungrouped column');
    const order = this.orderBy();
    const limit = intConstant(select.limitCount, 'LIMIT');
    const offset = intConstant(select.limitOffset, 'OFFSET');
    let sql = `SELECT ${list.join(', ')} FROM ${from[0]}${where}`;
    if (groups.length > 0) sql += ` GROUP BY ${groups.join(', ')}`;
    if (order.length > 0) sql += ` ORDER BY ${order.join(', ')}`;
    if (limit !== null) sql += ` LIMIT ${limit}`;
    if (offset !== null) sql += ` ${limit !== null ? `OFFSET ${offset}` : dialect.offsetOnly(offset)}`;
    return { sql, raws, origins };
  }

  private quote(name: string): string {
    return this.dialect.quoteIdentifier(name);
  }

  private resolve(fields: string[]): Found | null {
    const name = lower(fields[fields.length - 1] ?? '');
    const candidates =
      fields.length === 2 ? this.ranges.filter((r) => r.alias === lower(fields[0]!)) : fields.length === 1 ? this.ranges : [];
    const found = candidates.flatMap((range) =>
      range.table.columns.filter((c) => lower(c.name) === name).map((column) => ({ range, column })),
    );
    return found.length === 1 ? found[0]! : null;
  }

  private columnSql(range: Range, column: ColumnDef): string {
    return `${this.quote(range.alias)}.${this.quote(column.nameInSource)}`;
  }

  private condition(node: Node): string {
    const generated = this.generator.generate(node);
    if (!generated.exact) throw new CannotPushDown('condition is not exact at the source');
    return generated.sql;
  }

  /** Text orders as the engine's only where the dialect says so; values that may turn NULL in the engine order differently. */
  private orderable(column: ColumnDef): boolean {
    return (
      !castMayFail(this.connector, column) &&
      (NUMERIC.test(column.type) ||
        /^(DATE|TIMESTAMP)/.test(column.type) ||
        (column.type === 'VARCHAR' && this.dialect.ordersLikeEngine(column)))
    );
  }

  private fromSql(item: Node | undefined): string {
    if (!item) throw new CannotPushDown('FROM');
    if ('RangeVar' in item) {
      const rv = item.RangeVar;
      const table = typeof rv.relname === 'string' ? this.tableOf(rv.relname) : undefined;
      if (!table) throw new CannotPushDown('table of another source');
      const range = { alias: rangeAlias(rv), table };
      if (this.ranges.some((r) => r.alias === range.alias)) throw new CannotPushDown('repeated alias');
      this.ranges.push(range);
      return `${this.dialect.tableSql(table)} AS ${this.quote(range.alias)}`;
    }
    if ('JoinExpr' in item) {
      const join = item.JoinExpr;
      const kind = join.jointype === 'JOIN_INNER' ? 'JOIN' : join.jointype === 'JOIN_LEFT' ? 'LEFT JOIN' : null;
      if (!kind || !join.quals || join.usingClause || join.isNatural) throw new CannotPushDown('join kind');
      const left = this.fromSql(join.larg);
      const right = this.fromSql(join.rarg);
      return `${left} ${kind} ${right} ON ${this.condition(join.quals)}`;
    }
    throw new CannotPushDown('FROM item');
  }

  /** The select list: columns as they are, and count/sum/min/max where the source computes them as the engine would. */
  private selectList() {
    const { connector, ranges } = this;
    const raws: RawType[] = [];
    const origins: Array<string | null> = [];
    const list: string[] = [];
    const plain: string[] = [];
    let aggregated = false;
    const column = (found: Found) => {
      list.push(this.columnSql(found.range, found.column));
      plain.push(this.columnSql(found.range, found.column));
      raws.push(connector.rawType(found.column));
      origins.push(`${found.range.table.label}.${found.column.name}`);
    };
    for (const item of this.select.targetList ?? []) {
      const value = asKind(item, 'ResTarget')!.val!;
      if ('ColumnRef' in value && fieldNames(value.ColumnRef.fields).pop() === '*') {
        if (ranges.length !== 1 || fieldNames(value.ColumnRef.fields).length > 2) throw new CannotPushDown('* over joins');
        for (const c of ranges[0]!.table.columns) column({ range: ranges[0]!, column: c });
      } else if ('ColumnRef' in value) {
        const found = this.resolve(fieldNames(value.ColumnRef.fields));
        if (!found) throw new CannotPushDown('column');
        column(found);
      } else if ('FuncCall' in value) {
        aggregated = true;
        origins.push(null);
        const { sql, raw } = this.aggregate(value.FuncCall);
        list.push(sql);
        raws.push(raw);
      } else throw new CannotPushDown('select item');
    }
    return { list, plain, raws, origins, aggregated };
  }

  private aggregate(fc: FuncCall): { sql: string; raw: RawType } {
    const { connector, dialect } = this;
    const fn = lower(fieldNames(fc.funcname).pop() ?? '');
    if (fc.agg_distinct || fc.agg_filter || fc.over || fc.agg_order) throw new CannotPushDown('aggregate form');
    if (fn === 'count' && fc.agg_star) return { sql: 'count(*)', raw: dialect.countRaw() };
    const args = fc.args ?? [];
    const ref = args.length === 1 ? asKind(args[0], 'ColumnRef') : undefined;
    const found = ref ? this.resolve(fieldNames(ref.fields)) : null;
    if (!found || castMayFail(connector, found.column)) throw new CannotPushDown('aggregate argument');
    const { column } = found;
    const argSql = this.columnSql(found.range, column);
    if (fn === 'count') return { sql: `count(${argSql})`, raw: dialect.countRaw() };
    if (fn === 'sum' && INTEGER.test(column.type)) return { sql: `sum(${argSql})`, raw: dialect.countRaw() };
    if (fn === 'sum' && /^DECIMAL/.test(column.type) && dialect.sumsDecimalsExactly()) return { sql: `sum(${argSql})`, raw: 'VARCHAR' };
    if ((fn === 'min' || fn === 'max') && this.orderable(column) && column.type !== 'VARCHAR') {
      return { sql: `${fn}(${argSql})`, raw: connector.rawType(column) };
    }
    throw new CannotPushDown(`aggregate ${fn}`);
  }

  /** Grouped and ordered as the engine does (SQLite: bytewise whatever a column's declared collation). */
  private ordered(found: Found): string {
    return this.dialect.orderedColumn(this.columnSql(found.range, found.column), found.column);
  }

  private groupBy(): { groups: string[]; groupKeys: string[] } {
    const groupKeys: string[] = [];
    const groups = (this.select.groupClause ?? []).map((g) => {
      const found = 'ColumnRef' in g ? this.resolve(fieldNames(g.ColumnRef.fields)) : null;
      if (!found || !this.orderable(found.column)) throw new CannotPushDown('GROUP BY');
      groupKeys.push(this.columnSql(found.range, found.column));
      return this.ordered(found);
    });
    return { groups, groupKeys };
  }

  /** ORDER BY with the engine's NULL placement spelled out. */
  private orderBy(): string[] {
    return (this.select.sortClause ?? []).flatMap((s) => {
      const sort = asKind(s, 'SortBy')!;
      const ref = asKind(sortTarget(sort.node, this.select.targetList), 'ColumnRef');
      const found = ref ? this.resolve(fieldNames(ref.fields)) : null;
      if (!found || !this.orderable(found.column)) throw new CannotPushDown('ORDER BY');
      const descending = sort.sortby_dir === 'SORTBY_DESC';
      const nullsFirst = sort.sortby_nulls === 'SORTBY_NULLS_FIRST' || (sort.sortby_nulls !== 'SORTBY_NULLS_LAST' && descending);
      return [
        `(${this.columnSql(found.range, found.column)} IS NULL) ${nullsFirst ? 'DESC' : 'ASC'}`,
        `${this.ordered(found)} ${descending ? 'DESC' : 'ASC'}`,
      ];
    });
  }
}

function intConstant(node: Node | undefined, what: string): number | null {
  if (node === undefined) return null;
  const constant = asKind(node, 'A_Const');
  const value = constant?.ival ? Number(constant.ival.ival ?? 0) : NaN;
  if (!Number.isSafeInteger(value) || value < 0) throw new CannotPushDown(what);
  return value;
}
