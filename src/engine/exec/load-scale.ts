/**
 * PostgreSQL's numeric without a declared scale keeps each value's own scale (1.5, 2.25, 3); the
 * engine's DECIMAL has one per column. When the load holds the rows, the scales of the values'
 * text decide the column's type: all of one scale s, DECIMAL(38,s), and the engine writes every
 * value, sum, difference and product as PostgreSQL does (add and subtract keep the larger
 * scale, multiply adds them, sum keeps the column's). Values of different scales are loaded
 * with the largest, which keeps them exact for comparing; a statement that shows or computes
 * with them (plan/scale-uses.ts) fails where it reads a value of another scale. Values that
 * no 38-digit DECIMAL holds fail where they are read, as NaN and the infinities do.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlLiteral } from '../../runtime/duckdb.js';
import { exclusive } from './connection-lock.js';

/** Text PostgreSQL's numeric holds (NaN, infinities) and no DECIMAL does (TRY_CAST gives NULL). */
export const NOT_DECIMAL = "('nan', 'infinity', '+infinity', '-infinity', 'inf', '+inf', '-inf')";

/** A loaded column of a numeric without declared scale. */
export interface ScaledColumn {
  /** How messages name it (schema.table.column, or the aggregate). */
  label: string;
  /** The column's own name, for the cast a message suggests. */
  column: string;
  /** The statement may show or compute with it (else it only compares it). */
  shown: boolean;
}

/** The scales of a column's values: smallest, largest, and the most digits before the point. */
export interface ColumnScales {
  min: number;
  max: number;
  integerDigits: number;
}

const MAX_DIGITS = 38;

const scaleOf = (c: string) => `CASE WHEN strpos(${c}, '.') > 0 THEN length(${c}) - strpos(${c}, '.') ELSE 0 END`;
const integerDigitsOf = (c: string) => `length(ltrim(split_part(ltrim(${c}, '-+'), '.', 1), '0'))`;
const isNumber = (c: string) => `${c} IS NOT NULL AND lower(${c}) NOT IN ${NOT_DECIMAL}`;

/**
 * The scales of the text columns `columns` of `relation` (null for a column without a value), in
 * one cheap pass (about 20 ms a million values): NaN and the infinities count as scale 0, and the
 * digits before the point as the characters there (a sign included), an upper bound; the
 * load's cast checks each value it reads exactly.
 */
export async function columnScales(
  connection: DuckDBConnection,
  relation: string,
  columns: readonly string[],
): Promise<Array<ColumnScales | null>> {
  if (columns.length === 0) return [];
  const parts = columns.flatMap((c) => {
    const point = `strpos(${c}, '.')`;
    const scale = `CASE WHEN ${point} > 0 THEN length(${c}) - ${point} ELSE 0 END`;
    return [`min(${scale})`, `max(${scale})`, `max(CASE WHEN ${point} > 0 THEN ${point} - 1 ELSE length(${c}) END)`];
  });
  const reader = await exclusive(connection, () => connection.runAndReadAll(`SELECT ${parts.join(', ')} FROM ${relation}`));
  const row = reader.getRows()[0] ?? [];
  return columns.map((_, i) => {
    const [min, max, digits] = [row[3 * i], row[3 * i + 1], row[3 * i + 2]];
    return min === null || min === undefined ? null : { min: Number(min), max: Number(max), integerDigits: Number(digits) };
  });
}

/** The type a column of these scales is loaded as; null when it has no number (the catalog's type then). */
export const scaledType = (scales: ColumnScales | null): string | null =>
  scales ? `DECIMAL(${MAX_DIGITS},${Math.min(scales.max, MAX_DIGITS)})` : null;

const nanMessage = (label: string) =>
  `A numeric NaN or Infinity (column ${label}) is not supported by vdb's engine: its DECIMAL holds neither; leave such rows out at the source or read the column as float8 there (a view).`;
const bigMessage = (label: string) =>
  `A numeric value of column ${label} has more than ${MAX_DIGITS} digits, more than vdb's engine holds; leave such rows out at the source or read the column as float8 or text there (a view).`;
const mixedMessage = (column: ScaledColumn, scales: ColumnScales) =>
  `The numeric column ${column.label} holds values with ${scales.min} to ${scales.max} digits after the point, and the statement shows or computes with them: PostgreSQL writes each value with its own scale, vdb's engine gives a column one. Cast it in the statement to a numeric with a scale (${column.column}::numeric(12,2)) or to float8, or declare the column with a scale at the source.`;

/**
 * The load's cast of the raw text `c` of a column with these scales to `type` (scaledType):
 * NaN, infinities and values of more than 38 digits fail where read; a value of another scale
 * than the column's fails where read when the statement shows the column.
 */
export function scaledCast(
  c: string,
  type: string,
  scales: ColumnScales,
  column: ScaledColumn,
  tryCast: (expr: string, type: string) => string,
): string {
  const failure = `error(CASE WHEN lower(${c}) IN ${NOT_DECIMAL} THEN ${sqlLiteral(nanMessage(column.label))} ELSE ${sqlLiteral(bigMessage(column.label))} END)`;
  const cast = `COALESCE(${tryCast(c, type)}, CASE WHEN ${c} IS NOT NULL THEN ${failure} END)`;
  const checks: string[] = [];
  // Too many digits first (a scale beyond the type's would be rounded by the cast), then another scale.
  const scale = Math.min(scales.max, MAX_DIGITS);
  if (scales.max > MAX_DIGITS || scales.integerDigits + scale > MAX_DIGITS) {
    checks.push(
      `WHEN ${isNumber(c)} AND (${scaleOf(c)} > ${MAX_DIGITS} OR ${integerDigitsOf(c)} + ${scale} > ${MAX_DIGITS}) THEN error(${sqlLiteral(bigMessage(column.label))})`,
    );
  }
  if (column.shown && scales.min !== scales.max) {
    checks.push(`WHEN ${isNumber(c)} AND ${scaleOf(c)} <> ${scales.max} THEN error(${sqlLiteral(mixedMessage(column, scales))})`);
  }
  return checks.length === 0 ? cast : `CASE ${checks.join(' ')} ELSE ${cast} END`;
}
