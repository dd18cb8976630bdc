/**
 * Whole-statement pushdown to MySQL/MariaDB and SQLite: a SELECT over tables of one such source
 * written in the source's dialect, for the subset whose meaning is the same there as in the
 * engine: plain columns and count/sum/min/max of numbers, inner and left joins on conditions,
 * WHERE and ON conditions that the predicate generator writes exactly, GROUP BY and ORDER BY on
 * columns (text only where the source compares text bytewise: SQLite), LIMIT and OFFSET.
 * Anything else throws CannotPushDown and the engine runs the statement.
 */
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { RawType, RowConnector } from '../../connectors/types.js';
import { castMayFail } from '../../connectors/types.js';
import { fieldNames, isObject, lower, sortTarget, type Json } from '../front/ast.js';
import { CannotPushDown } from '../../connectors/sql/predicate.js';

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
  select: Json,
  connector: RowConnector,
  tableOf: (relname: string) => Range['table'] | undefined,
): SourceSelect {
  const { dialect } = connector;
  if (!dialect.writesWholeSelects) throw new CannotPushDown('dialect');
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

  const ranges: Range[] = [];
  const quote = (name: string) => dialect.quoteIdentifier(name);
  const resolve = (fields: string[]): { range: Range; column: ColumnDef } | null => {
    const name = lower(fields[fields.length - 1] ?? '');
    const candidates = fields.length === 2 ? ranges.filter((r) => r.alias === lower(fields[0]!)) : fields.length === 1 ? ranges : [];
    const found = candidates.flatMap((range) =>
      range.table.columns.filter((c) => lower(c.name) === name).map((column) => ({ range, column })),
    );
    return found.length === 1 ? found[0]! : null;
  };
  const columnSql = (range: Range, column: ColumnDef) => `${quote(range.alias)}.${quote(column.nameInSource)}`;
  const generator = dialect.predicates({
    column: (fields) => resolve(fields)?.column,
    castMayFail: (column) => castMayFail(connector, column),
    columnSql: (fields) => {
      const found = resolve(fields)!;
      return columnSql(found.range, found.column);
    },
  });
  const condition = (node: unknown): string => {
    const generated = generator.generate(node);
    if (!generated.exact) throw new CannotPushDown('condition is not exact at the source');
    return generated.sql;
  };
  /** Text orders as the engine's only where the dialect says so; values that may turn NULL in the engine order differently. */
  const orderable = (column: ColumnDef) =>
    !castMayFail(connector, column) &&
    (NUMERIC.test(column.type) || /^(DATE|TIMESTAMP)/.test(column.type) || (column.type === 'VARCHAR' && dialect.ordersLikeEngine(column)));

  const fromSql = (item: unknown): string => {
    if (!isObject(item)) throw new CannotPushDown('FROM');
    if (isObject(item.RangeVar)) {
      const rv = item.RangeVar;
      const table = typeof rv.relname === 'string' ? tableOf(rv.relname) : undefined;
      if (!table) throw new CannotPushDown('table of another source');
      const range = { alias: lower(String((rv.alias as Json | undefined)?.aliasname ?? rv.relname)), table };
      if (ranges.some((r) => r.alias === range.alias)) throw new CannotPushDown('repeated alias');
      ranges.push(range);
      return `${dialect.tableSql(table)} AS ${quote(range.alias)}`;
    }
    if (isObject(item.JoinExpr)) {
      const join = item.JoinExpr;
      const kind = join.jointype === 'JOIN_INNER' ? 'JOIN' : join.jointype === 'JOIN_LEFT' ? 'LEFT JOIN' : null;
      if (!kind || !join.quals || join.usingClause || join.isNatural) throw new CannotPushDown('join kind');
      const left = fromSql(join.larg);
      const right = fromSql(join.rarg);
      return `${left} ${kind} ${right} ON ${condition(join.quals)}`;
    }
    throw new CannotPushDown('FROM item');
  };
  const from = ((select.fromClause as unknown[] | undefined) ?? []).map(fromSql);
  if (from.length !== 1) throw new CannotPushDown('one FROM item (joins written with JOIN)');

  const raws: RawType[] = [];
  const origins: Array<string | null> = [];
  const list: string[] = [];
  const plain: string[] = [];
  let aggregated = false;
  for (const item of (select.targetList as Json[] | undefined) ?? []) {
    const target = item.ResTarget as Json;
    const value = target.val as Json;
    if (isObject(value.ColumnRef) && fieldNames(value.ColumnRef.fields).pop() === '*') {
      if (ranges.length !== 1 || fieldNames(value.ColumnRef.fields).length > 2) throw new CannotPushDown('* over joins');
      for (const column of ranges[0]!.table.columns) {
        list.push(columnSql(ranges[0]!, column));
        plain.push(columnSql(ranges[0]!, column));
        raws.push(connector.rawType(column));
        origins.push(`${ranges[0]!.table.label}.${column.name}`);
      }
      continue;
    }
    if (isObject(value.ColumnRef)) {
      const found = resolve(fieldNames(value.ColumnRef.fields));
      if (!found) throw new CannotPushDown('column');
      list.push(columnSql(found.range, found.column));
      plain.push(columnSql(found.range, found.column));
      raws.push(connector.rawType(found.column));
      origins.push(`${found.range.table.label}.${found.column.name}`);
      continue;
    }
    if (isObject(value.FuncCall)) {
      const fc = value.FuncCall;
      const fn = lower(fieldNames(fc.funcname).pop() ?? '');
      if (fc.agg_distinct || fc.agg_filter || fc.over || fc.agg_order) throw new CannotPushDown('aggregate form');
      aggregated = true;
      origins.push(null);
      if (fn === 'count' && fc.agg_star) {
        list.push('count(*)');
        raws.push(dialect.countRaw());
        continue;
      }
      const args = (fc.args as Json[] | undefined) ?? [];
      const found = args.length === 1 && isObject(args[0]!.ColumnRef) ? resolve(fieldNames(args[0]!.ColumnRef.fields)) : null;
      if (!found || castMayFail(connector, found.column)) throw new CannotPushDown('aggregate argument');
      const { column } = found;
      const argSql = columnSql(found.range, column);
      if (fn === 'count') {
        list.push(`count(${argSql})`);
        raws.push(dialect.countRaw());
      } else if (fn === 'sum' && INTEGER.test(column.type)) {
        list.push(`sum(${argSql})`);
        raws.push(dialect.countRaw());
      } else if (fn === 'sum' && /^DECIMAL/.test(column.type) && dialect.sumsDecimalsExactly()) {
        list.push(`sum(${argSql})`);
        raws.push('VARCHAR');
      } else if ((fn === 'min' || fn === 'max') && orderable(column) && column.type !== 'VARCHAR') {
        list.push(`${fn}(${argSql})`);
        raws.push(connector.rawType(column));
      } else throw new CannotPushDown(`aggregate ${fn}`);
      continue;
    }
    throw new CannotPushDown('select item');
  }

  const where = select.whereClause ? ` WHERE ${condition(select.whereClause)}` : '';
  // Grouped and ordered as the engine does (SQLite: bytewise whatever a column's declared collation).
  const binary = (found: { range: Range; column: ColumnDef }) => dialect.orderedColumn(columnSql(found.range, found.column), found.column);
  const groupKeys: string[] = [];
  const groups = ((select.groupClause as Json[] | undefined) ?? []).map((g) => {
    const found = isObject(g.ColumnRef) ? resolve(fieldNames(g.ColumnRef.fields)) : null;
    if (!found || !orderable(found.column)) throw new CannotPushDown('GROUP BY');
    groupKeys.push(columnSql(found.range, found.column));
    return binary(found);
  });
  // Plain columns beside aggregates must be grouping columns (else the engine reports the error).
  if ((aggregated || groups.length > 0) && plain.some((p) => !groupKeys.includes(p))) throw new CannotPushDown('ungrouped column');
  const order = ((select.sortClause as Json[] | undefined) ?? []).flatMap((s) => {
    const sort = s.SortBy as Json;
    const node = sortTarget(sort.node, select.targetList) as Json;
    let found: { range: Range; column: ColumnDef } | null = null;
    if (isObject(node) && isObject(node.ColumnRef)) found = resolve(fieldNames(node.ColumnRef.fields));
    if (!found || !orderable(found.column)) throw new CannotPushDown('ORDER BY');
    const descending = sort.sortby_dir === 'SORTBY_DESC';
    const nullsFirst = sort.sortby_nulls === 'SORTBY_NULLS_FIRST' || (sort.sortby_nulls !== 'SORTBY_NULLS_LAST' && descending);
    const c = binary(found);
    return [`(${columnSql(found.range, found.column)} IS NULL) ${nullsFirst ? 'DESC' : 'ASC'}`, `${c} ${descending ? 'DESC' : 'ASC'}`];
  });
  const limit = intConstant(select.limitCount, 'LIMIT');
  const offset = intConstant(select.limitOffset, 'OFFSET');
  let sql = `SELECT ${list.join(', ')} FROM ${from[0]}${where}`;
  if (groups.length > 0) sql += ` GROUP BY ${groups.join(', ')}`;
  if (order.length > 0) sql += ` ORDER BY ${order.join(', ')}`;
  if (limit !== null) sql += ` LIMIT ${limit}`;
  if (offset !== null) sql += ` ${limit !== null ? `OFFSET ${offset}` : dialect.offsetOnly(offset)}`;
  return { sql, raws, origins };
}

function intConstant(node: unknown, what: string): number | null {
  if (node === undefined) return null;
  const constant = isObject(node) && isObject(node.A_Const) ? node.A_Const : null;
  const value = constant && isObject(constant.ival) ? Number(constant.ival.ival ?? 0) : NaN;
  if (!Number.isSafeInteger(value) || value < 0) throw new CannotPushDown(what);
  return value;
}
