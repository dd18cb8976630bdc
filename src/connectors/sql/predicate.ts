/**
 * Predicate generators: a WHERE condition of the PostgreSQL AST written in a source's dialect,
 * for pushdown. One base generator; each dialect overrides only what differs (Kysely's way).
 *
 * The planner keeps every condition in the engine's own WHERE as well, so a pushed predicate
 * must never drop a row the original would keep; it may keep more. Each generated predicate is
 * therefore marked `exact` (same rows as the engine) or not (a superset, e.g. MySQL's
 * case-insensitive `=`); NOT is only applied to exact predicates. What a dialect cannot
 * express exactly or as a superset throws CannotPushDown and stays in the engine alone.
 */
import type { A_Const, A_Expr, BoolExpr, FuncCall, Node, NullTest } from '@pgsql/types';
import type { ColumnDef } from '../../catalog/types.js';

export class CannotPushDown extends Error {}

export interface Generated {
  sql: string;
  /** True when the predicate keeps exactly the rows the engine would; false for a superset. */
  exact: boolean;
}

/** What the generator knows of the table whose rows are filtered. */
export interface PredicateScope {
  /** The table's column of a (case-insensitive) name, if the reference is to this table. */
  column(fields: string[]): ColumnDef | undefined;
  /** Whether the raw values of a column may fail the engine's cast (then they become NULL). */
  castMayFail(column: ColumnDef): boolean;
  /** How a column reference is written (default: its quoted name; with joins: alias.name). */
  columnSql?(fields: string[], column: ColumnDef): string;
}

type Operand =
  | { kind: 'column'; column: ColumnDef; sql: string }
  | { kind: 'constant'; type: 'number' | 'string' | 'boolean' | 'date' | 'timestamp'; sql: string; text: string };

/** The operator seen from the other side: `5 < col` is `col > 5`. */
const FLIPPED: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

/** IN lists of at most this many constants may be widened (one range each). */
const MAX_WIDENED = 32;

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);

const isStringType = (type: string) => type === 'VARCHAR' || type === 'UUID' || type === 'JSON';
const isNumberType = (type: string) => /^(TINYINT|SMALLINT|INTEGER|BIGINT|UBIGINT|HUGEINT|FLOAT|DOUBLE|DECIMAL)/.test(type);
const isDateType = (type: string) => type === 'DATE';
const isTimestampType = (type: string) => type === 'TIMESTAMP';

const fieldNames = (fields: Node[] | undefined): string[] =>
  Array.isArray(fields) ? fields.map((f) => (f && 'String' in f ? f.String.sval : undefined) ?? '*') : [];

/** The items of a `List` node (IN and BETWEEN operands). */
const listItems = (node: Node | undefined): Node[] => (node && 'List' in node ? node.List.items : undefined) ?? [];

export abstract class PredicateGenerator {
  constructor(protected readonly scope: PredicateScope) {}

  abstract quoteIdentifier(name: string): string;

  quoteString(text: string): string {
    return `'${text.replace(/'/g, "''")}'`;
  }

  /** Literal of a date constant in this dialect. */
  dateLiteral(text: string): string {
    return `DATE ${this.quoteString(text)}`;
  }

  timestampLiteral(text: string): string {
    return `TIMESTAMP ${this.quoteString(text)}`;
  }

  /** A text column's operand of an ordering comparison (<, >, BETWEEN); dialects may fix its collation. */
  orderedText(sql: string): string {
    return sql;
  }

  /** A text column in any comparison (=, <>, IN and the ordering ones). */
  textColumn(sql: string, ordering: boolean): string {
    return ordering ? this.orderedText(sql) : sql;
  }

  /** How string comparisons behave here: exactly like the engine, as a superset, or not at all. */
  abstract stringComparison(op: string): 'exact' | 'superset' | 'no';

  /**
   * `substring(column FROM start [FOR count])` in this dialect, counted in characters as
   * PostgreSQL counts them, for a text column whose values the source holds as text (start >= 1,
   * count >= 0); null where the source cannot compute it so.
   */
  protected substringSql(_column: ColumnDef, _sql: string, _start: number, _count: number | null): string | null {
    return null;
  }

  /** LIKE: exact, superset (case-insensitive) or not pushable. */
  abstract like(column: string, pattern: string, negated: boolean, caseInsensitive: boolean): Generated;

  /**
   * A condition that holds for the rows whose raw value of `column` (written `sql`) the source may
   * compare otherwise than the engine compares the value its load cast (SQLite's values of another
   * storage class than the column's). A pushed comparison on a column whose cast may fail keeps
   * these rows too, so that it stays a superset; null: the source compares every value as the
   * engine does, or drops only values the engine turns into NULL.
   */
  protected otherValues(_column: ColumnDef, _sql: string): string | null {
    return null;
  }

  /**
   * A comparison `column op constant` (`=` with several constants: an IN list) of a column whose
   * cast may fail, written as a superset that reads better at the source than the comparison OR
   * otherValues (SQLite: widened ranges an index still serves); null: that form.
   */
  protected widened(_column: ColumnDef, _sql: string, _op: string, _constants: readonly string[]): string | null {
    return null;
  }

  /** `sql` OR the rows of the operands' columns that the source may compare otherwise (otherValues). */
  private guarded(sql: string, operands: readonly Operand[]): string {
    const guards = operands.flatMap((o) =>
      o.kind === 'column' && this.scope.castMayFail(o.column) ? [this.otherValues(o.column, o.sql)] : [],
    );
    const kept = guards.filter((g): g is string => g !== null);
    return kept.length === 0 ? sql : `(${sql} OR ${kept.join(' OR ')})`;
  }

  /** Whether a column's values compare here as they do in the engine. */
  protected comparable(column: ColumnDef, other: Operand): boolean {
    if (isNumberType(column.type)) return other.kind === 'constant' ? other.type === 'number' : isNumberType(other.column.type);
    if (isDateType(column.type)) return other.kind === 'constant' ? other.type === 'date' : isDateType(other.column.type);
    if (isTimestampType(column.type)) return other.kind === 'constant' ? other.type === 'timestamp' : isTimestampType(other.column.type);
    if (isStringType(column.type)) return other.kind === 'constant' ? other.type === 'string' : isStringType(other.column.type);
    return false;
  }

  generate(node: Node): Generated {
    if ('BoolExpr' in node) return this.boolExpr(node.BoolExpr);
    if ('A_Expr' in node) return this.aExpr(node.A_Expr);
    if ('NullTest' in node) return this.nullTest(node.NullTest);
    throw new CannotPushDown(String(Object.keys(node)[0]));
  }

  private boolExpr(b: BoolExpr): Generated {
    const args = b.args!.map((a) => this.generate(a));
    if (b.boolop === 'NOT_EXPR') {
      const inner = args[0]!;
      if (!inner.exact) throw new CannotPushDown('NOT of a superset predicate');
      return { sql: `NOT (${inner.sql})`, exact: true };
    }
    const joiner = b.boolop === 'AND_EXPR' ? ' AND ' : ' OR ';
    return { sql: args.map((a) => `(${a.sql})`).join(joiner), exact: args.every((a) => a.exact) };
  }

  private nullTest(b: NullTest): Generated {
    const operand = this.operand(b.arg);
    if (operand.kind !== 'column') throw new CannotPushDown('null test of a constant');
    const isNull = b.nulltesttype === 'IS_NULL';
    // A value the engine cannot cast becomes NULL there, but is not NULL at the source.
    if (isNull && this.scope.castMayFail(operand.column)) throw new CannotPushDown('IS NULL on a lossy column');
    return { sql: `${operand.sql} IS ${isNull ? '' : 'NOT '}NULL`, exact: !this.scope.castMayFail(operand.column) };
  }

  private aExpr(b: A_Expr): Generated {
    const op = fieldNames(b.name)[0] ?? '';
    switch (b.kind) {
      case 'AEXPR_OP':
        if (COMPARISONS.has(op)) return this.comparison(op === '!=' ? '<>' : op, this.operand(b.lexpr), this.operand(b.rexpr));
        if (op === '~~' || op === '!~~') return this.likeExpr(b, op.startsWith('!'), false);
        if (op === '~~*' || op === '!~~*') return this.likeExpr(b, op.startsWith('!'), true);
        throw new CannotPushDown(`operator ${op}`);
      case 'AEXPR_LIKE':
        return this.likeExpr(b, op.startsWith('!'), false);
      case 'AEXPR_ILIKE':
        return this.likeExpr(b, op.startsWith('!'), true);
      case 'AEXPR_IN':
        return this.inList(b, op === '<>');
      case 'AEXPR_BETWEEN':
      case 'AEXPR_NOT_BETWEEN':
        return this.between(b, b.kind === 'AEXPR_NOT_BETWEEN');
      default:
        throw new CannotPushDown(String(b.kind));
    }
  }

  /** `column op operand` (either side may be the column). */
  private comparison(op: string, left: Operand, right: Operand): Generated {
    const column = left.kind === 'column' ? left.column : right.kind === 'column' ? right.column : null;
    const other = left.kind === 'column' ? right : left;
    if (!column || !this.comparable(column, other)) throw new CannotPushDown('incomparable operands');
    let exact = true;
    if (isStringType(column.type)) {
      const rule = this.stringComparison(op);
      if (rule === 'no') throw new CannotPushDown(`string ${op}`);
      exact = rule === 'exact';
    }
    if (this.scope.castMayFail(column)) exact = false;
    if (other.kind === 'column' && this.scope.castMayFail(other.column)) exact = false;
    const [columnSide, constant] = left.kind === 'column' ? [left, right] : [right, left];
    if (columnSide.kind === 'column' && constant.kind === 'constant' && constant.type === 'number' && this.scope.castMayFail(column)) {
      const widened = this.widened(column, columnSide.sql, left.kind === 'column' ? op : (FLIPPED[op] ?? op), [constant.text]);
      if (widened !== null) return { sql: widened, exact };
    }
    const text = isStringType(column.type);
    const ordering = op !== '=' && op !== '<>';
    const side = (o: Operand) => (text && o.kind === 'column' ? this.textColumn(o.sql, ordering) : o.sql);
    return { sql: this.guarded(`${side(left)} ${op} ${side(right)}`, [left, right]), exact };
  }

  private likeExpr(b: A_Expr, negated: boolean, caseInsensitive: boolean): Generated {
    const column = this.operand(b.lexpr);
    const pattern = this.operand(this.likePattern(b.rexpr));
    if (column.kind !== 'column' || !isStringType(column.column.type)) throw new CannotPushDown('LIKE on a non-text operand');
    if (pattern.kind !== 'constant' || pattern.type !== 'string') throw new CannotPushDown('LIKE with a non-constant pattern');
    // Escape characters differ between engines (PostgreSQL: backslash, DuckDB: none).
    if (pattern.text.includes('\\')) throw new CannotPushDown('LIKE pattern with a backslash');
    const like = this.like(column.sql, pattern.sql, negated, caseInsensitive);
    return { ...like, sql: this.guarded(like.sql, [column]) };
  }

  /**
   * The pattern of `x LIKE p ESCAPE e` (parsed as `x ~~ like_escape(p, e)`) when the escape
   * character plays no part in it: a constant pattern without it (nor a backslash) means the same
   * under any escape character, and is pushed as a plain pattern. Otherwise the pattern as written.
   */
  private likePattern(rexpr: Node | undefined): Node | undefined {
    const escaped = rexpr && 'FuncCall' in rexpr ? rexpr.FuncCall : undefined;
    if (!escaped) return rexpr;
    const [pattern, escape] = escaped.args ?? [];
    const name = fieldNames(escaped.funcname).join('.').toLowerCase();
    const stringOf = (node: Node | undefined) =>
      node && 'A_Const' in node && node.A_Const.sval ? (node.A_Const.sval.sval ?? '') : undefined;
    const patternText = stringOf(pattern);
    const escapeText = stringOf(escape);
    const helper = /^(pg_catalog\.)?like_escape$/.test(name) && escaped.args?.length === 2;
    if (!helper || patternText === undefined || escapeText === undefined || [...escapeText].length > 1)
      throw new CannotPushDown('LIKE ... ESCAPE');
    if (escapeText !== '' && patternText.includes(escapeText)) throw new CannotPushDown('LIKE pattern with its escape character');
    return pattern;
  }

  private inList(b: A_Expr, negated: boolean): Generated {
    const column = this.operand(b.lexpr);
    if (column.kind !== 'column') throw new CannotPushDown('IN on a constant');
    const items = listItems(b.rexpr).map((i) => this.operand(i));
    if (items.length === 0 || items.some((i) => i.kind !== 'constant' || !this.comparable(column.column, i))) {
      throw new CannotPushDown('IN list');
    }
    let exact = !this.scope.castMayFail(column.column);
    if (isStringType(column.column.type)) {
      const rule = this.stringComparison(negated ? '<>' : '=');
      if (rule === 'no') throw new CannotPushDown('string IN');
      exact &&= rule === 'exact';
    }
    if (negated && !exact) throw new CannotPushDown('NOT IN of a superset');
    const columnSql = isStringType(column.column.type) ? this.textColumn(column.sql, false) : column.sql;
    if (
      !negated &&
      this.scope.castMayFail(column.column) &&
      items.length <= MAX_WIDENED &&
      items.every((i) => i.kind === 'constant' && i.type === 'number')
    ) {
      const widened = this.widened(
        column.column,
        column.sql,
        '=',
        items.map((i) => (i.kind === 'constant' ? i.text : '')),
      );
      if (widened !== null) return { sql: widened, exact };
    }
    const sql = `${columnSql} ${negated ? 'NOT IN' : 'IN'} (${items.map((i) => i.sql).join(', ')})`;
    return { sql: negated ? sql : this.guarded(sql, [column]), exact };
  }

  private between(b: A_Expr, negated: boolean): Generated {
    const column = this.operand(b.lexpr);
    const [low, high] = listItems(b.rexpr).map((i) => this.operand(i));
    if (column.kind !== 'column' || !low || !high) throw new CannotPushDown('BETWEEN');
    const lower = this.comparison('>=', column, low);
    const upper = this.comparison('<=', column, high);
    const exact = lower.exact && upper.exact;
    if (negated && !exact) throw new CannotPushDown('NOT BETWEEN of a superset');
    return { sql: `${negated ? 'NOT ' : ''}(${lower.sql} AND ${upper.sql})`, exact };
  }

  /** A column of the table, or a constant (plain, or cast to a date or timestamp). */
  protected operand(node: Node | undefined): Operand {
    if (node && 'ColumnRef' in node) {
      const fields = fieldNames(node.ColumnRef.fields);
      const column = this.scope.column(fields);
      if (!column) throw new CannotPushDown('column of another table');
      return { kind: 'column', column, sql: this.scope.columnSql?.(fields, column) ?? this.quoteIdentifier(column.nameInSource) };
    }
    if (node && 'A_Const' in node) return this.constant(node.A_Const);
    if (node && 'FuncCall' in node) return this.substring(node.FuncCall);
    if (node && 'TypeCast' in node) {
      const names = fieldNames(node.TypeCast.typeName?.names).filter((n) => n !== 'pg_catalog');
      const target = names[names.length - 1]?.toLowerCase();
      const inner = this.operand(node.TypeCast.arg);
      if (inner.kind !== 'constant' || inner.type !== 'string') throw new CannotPushDown('cast of a non-literal');
      if (target === 'date' && /^\d{4}-\d{2}-\d{2}$/.test(inner.text)) {
        return { kind: 'constant', type: 'date', sql: this.dateLiteral(inner.text), text: inner.text };
      }
      if (target === 'timestamp' && /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/.test(inner.text)) {
        const text = inner.text.replace('T', ' ');
        return { kind: 'constant', type: 'timestamp', sql: this.timestampLiteral(text), text };
      }
      throw new CannotPushDown(`cast to ${target}`);
    }
    throw new CannotPushDown(String(node && Object.keys(node)[0]));
  }

  /**
   * `substring(column FROM s [FOR n])` (also `substring(column, s, n)`) and `left(column, n)`
   * with whole constants: the part of a text column, compared as the column's text is. Only
   * positions from 1 on and counts from 0 on, where every SQL source counts alike (PostgreSQL
   * takes a start below 1 as counting from before the first character, MySQL from the end).
   */
  private substring(call: FuncCall): Operand {
    const name = fieldNames(call.funcname)
      .filter((n) => n !== 'pg_catalog')
      .join('.')
      .toLowerCase();
    const args = call.args ?? [];
    if (call.agg_star || call.agg_distinct || call.over || call.agg_filter || call.agg_order) throw new CannotPushDown('aggregate');
    const whole = (node: Node | undefined, least: number): number => {
      const value = node && 'A_Const' in node && node.A_Const.ival !== undefined ? Number(node.A_Const.ival.ival ?? 0) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < least) throw new CannotPushDown(`${name} position`);
      return value;
    };
    let start: number;
    let count: number | null;
    if (name === 'substring' && (args.length === 2 || args.length === 3)) {
      start = whole(args[1], 1);
      count = args.length === 3 ? whole(args[2], 0) : null;
    } else if (name === 'left' && args.length === 2) {
      start = 1;
      count = whole(args[1], 0);
    } else throw new CannotPushDown(`function ${name}`);
    const column = this.operand(args[0]);
    if (column.kind !== 'column' || column.column.type !== 'VARCHAR') throw new CannotPushDown(`${name} of a non-text operand`);
    const sql = this.substringSql(column.column, column.sql, start, count);
    if (sql === null) throw new CannotPushDown(name);
    return { ...column, sql };
  }

  private constant(b: A_Const): Operand {
    if (b.isnull) throw new CannotPushDown('NULL constant');
    if (b.ival !== undefined) {
      const text = String(b.ival.ival ?? 0);
      return { kind: 'constant', type: 'number', sql: text, text };
    }
    if (b.fval !== undefined) {
      const text = String(b.fval.fval);
      if (!/^-?\d+(\.\d+)?$/.test(text)) throw new CannotPushDown('float literal');
      return { kind: 'constant', type: 'number', sql: text, text };
    }
    if (b.sval !== undefined) {
      const text = String(b.sval.sval ?? '');
      return { kind: 'constant', type: 'string', sql: this.quoteString(text), text };
    }
    throw new CannotPushDown('constant');
  }
}
