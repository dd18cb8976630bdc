/**
 * Constant date arithmetic folded in the conditions offered to sources: in
 * `o_orderdate < date '1994-01-01' + interval '1' year` the source is offered
 * `o_orderdate < date '1995-01-01'`, so that both bounds of a range reach it (TPC-H's ranges; the
 * dialects write no interval arithmetic). The engine's own statement keeps the expression.
 *
 * PostgreSQL's meaning: date ± interval is a timestamp, the interval's months added first (the
 * day clamped to the end of the month: Jan 31 + 1 month is Feb 28), then its days. Intervals of
 * years, months, weeks and days only, so the timestamp is at midnight, and only where it is
 * compared with a DATE column: there comparing with that timestamp and with its date is the same.
 * Anything else is left as it is (and declined by the source as before).
 */
import type { A_Expr, Node, TypeCast } from '@pgsql/types';
import type { ColumnDef } from '../../catalog/types.js';
import { asKind, exprIs, fieldNames } from '../tree/ast.js';

const COMPARISONS = new Set(['<', '<=', '>', '>=', '=', '<>', '!=']);

/** PostgreSQL's interval field masks (INTERVAL_MASK of datetime.h) for `interval '3' month`. */
const FIELD_MASKS: Record<number, 'year' | 'month' | 'day'> = { 4: 'year', 2: 'month', 8: 'day' };

const UNITS: Record<string, 'year' | 'month' | 'day' | 'week'> = {
  year: 'year',
  years: 'year',
  month: 'month',
  months: 'month',
  mon: 'month',
  mons: 'month',
  day: 'day',
  days: 'day',
  week: 'week',
  weeks: 'week',
};

interface Span {
  months: number;
  days: number;
}

/** `condition` with constant date arithmetic compared with DATE columns folded to dates; the same node when there is none. */
export function foldDateArithmetic(condition: Node, column: (fields: string[]) => ColumnDef | undefined): Node {
  const expr = asKind(condition, 'A_Expr');
  if (!expr || !(exprIs(expr, 'AEXPR_OP') || isBetween(expr))) return condition;
  const op = fieldNames(expr.name)[0] ?? '';
  if (exprIs(expr, 'AEXPR_OP') && !COMPARISONS.has(op)) return condition;
  const isDateColumn = (node: Node | undefined) => {
    const ref = asKind(node, 'ColumnRef');
    return ref !== undefined && column(fieldNames(ref.fields))?.type === 'DATE';
  };
  if (isBetween(expr)) {
    const bounds = asKind(expr.rexpr, 'List')?.items;
    if (!isDateColumn(expr.lexpr) || !bounds) return condition;
    const folded = bounds.map((b) => foldedDate(b) ?? b);
    return folded.some((f, i) => f !== bounds[i]) ? { A_Expr: { ...expr, rexpr: { List: { items: folded } } } } : condition;
  }
  if (isDateColumn(expr.lexpr)) {
    const rexpr = expr.rexpr && foldedDate(expr.rexpr);
    return rexpr ? { A_Expr: { ...expr, rexpr } } : condition;
  }
  if (isDateColumn(expr.rexpr)) {
    const lexpr = expr.lexpr && foldedDate(expr.lexpr);
    return lexpr ? { A_Expr: { ...expr, lexpr } } : condition;
  }
  return condition;
}

const isBetween = (expr: A_Expr) =>
  exprIs(expr, 'AEXPR_BETWEEN') ||
  exprIs(expr, 'AEXPR_NOT_BETWEEN') ||
  exprIs(expr, 'AEXPR_BETWEEN_SYM') ||
  exprIs(expr, 'AEXPR_NOT_BETWEEN_SYM');

/** `date 'y-m-d' ± interval '...'` (either order for +) as a date literal; null for anything else. */
function foldedDate(node: Node): Node | null {
  const expr = asKind(node, 'A_Expr');
  if (!expr || !exprIs(expr, 'AEXPR_OP') || !expr.lexpr || !expr.rexpr) return null;
  const op = fieldNames(expr.name).join('.');
  if (op !== '+' && op !== '-') return null;
  let date = dateOf(expr.lexpr);
  let span = spanOf(expr.rexpr);
  if (op === '+' && (!date || !span)) {
    date = dateOf(expr.rexpr);
    span = spanOf(expr.lexpr);
  }
  if (!date || !span) return null;
  const sign = op === '-' ? -1 : 1;
  const result = addSpan(date, { months: sign * span.months, days: sign * span.days });
  return result ? dateLiteral(result) : null;
}

/** A `date '...'` constant of a year 1-9999, as [year, month, day]. */
function dateOf(node: Node): [number, number, number] | null {
  const cast = asKind(node, 'TypeCast');
  if (!cast || typeNameOf(cast) !== 'date') return null;
  const text = asKind(cast.arg, 'A_Const')?.sval?.sval;
  const match = text === undefined ? null : /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  return [year, month, day];
}

/** An `interval '...'` constant of whole years, months, weeks and days. */
function spanOf(node: Node): Span | null {
  const cast = asKind(node, 'TypeCast');
  if (!cast || typeNameOf(cast) !== 'interval') return null;
  const text = asKind(cast.arg, 'A_Const')?.sval?.sval;
  if (text === undefined) return null;
  const typmods = cast.typeName?.typmods ?? [];
  if (typmods.length > 0) {
    // `interval '3' month`: a whole number of the one field named.
    const mask = typmods.length === 1 ? asKind(typmods[0], 'A_Const')?.ival?.ival : undefined;
    const field = mask === undefined ? undefined : FIELD_MASKS[mask];
    if (!field || !/^[+-]?\d{1,6}$/.test(text.trim())) return null;
    return spanAdd({ months: 0, days: 0 }, field, Number(text.trim()));
  }
  // `interval '1 year 2 months'`: pairs of a whole number and a unit.
  const words = text.trim().toLowerCase().split(/\s+/);
  if (words.length === 0 || words.length % 2 !== 0) return null;
  let span: Span = { months: 0, days: 0 };
  for (let i = 0; i < words.length; i += 2) {
    const unit = UNITS[words[i + 1]!];
    if (!unit || !/^[+-]?\d{1,6}$/.test(words[i]!)) return null;
    span = spanAdd(span, unit, Number(words[i]));
  }
  return span;
}

function spanAdd(span: Span, unit: 'year' | 'month' | 'week' | 'day', count: number): Span {
  if (unit === 'year') return { ...span, months: span.months + 12 * count };
  if (unit === 'month') return { ...span, months: span.months + count };
  return { ...span, days: span.days + (unit === 'week' ? 7 : 1) * count };
}

/** PostgreSQL's timestamp + interval for whole months and days: months first, the day clamped to the month's end, then days. */
function addSpan([year, month, day]: [number, number, number], span: Span): [number, number, number] | null {
  const total = year * 12 + (month - 1) + span.months;
  const newYear = Math.floor(total / 12);
  const newMonth = total - newYear * 12 + 1;
  const clamped = Math.min(day, daysIn(newYear, newMonth));
  // setUTCFullYear takes years 0-99 as they are (Date.UTC would read them as 1900-1999).
  const moved = new Date(0);
  moved.setUTCFullYear(newYear, newMonth - 1, clamped);
  moved.setTime(moved.getTime() + span.days * 86_400_000);
  const result: [number, number, number] = [moved.getUTCFullYear(), moved.getUTCMonth() + 1, moved.getUTCDate()];
  return result[0] >= 1 && result[0] <= 9999 ? result : null;
}

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

function typeNameOf(cast: TypeCast): string {
  const names = fieldNames(cast.typeName?.names);
  return names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog') ? names[names.length - 1]!.toLowerCase() : '';
}

function dateLiteral([year, month, day]: [number, number, number]): Node {
  const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  return { TypeCast: { arg: { A_Const: { sval: { sval: text } } }, typeName: { names: [{ String: { sval: 'date' } }], typemod: -1 } } };
}
