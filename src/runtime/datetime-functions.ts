/**
 * The engine functions that read text cast while a statement runs as PostgreSQL reads a date,
 * time, timestamp or interval (datetime-input.ts, interval-input.ts): each gives the text the
 * engine reads exactly, or fails the statement with PostgreSQL's error or vdb's refusal.
 * Literals are read when the statement is translated; these serve the values of tables.
 */
import {
  DuckDBScalarFunction,
  INTEGER,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBIntegerVector,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';
import { ApiError } from '../errors.js';
import { dateTimeInput, type DateTimeType } from './datetime-input.js';
import { engineIntervalText, intervalInput, notSupported, restricted } from './interval-input.js';

const TYPES = new Set<string>(['date', 'timestamp', 'timestamptz', 'time']);

/** `vdb_datetime_in(text, type)`: the engine's text of `text` read as PostgreSQL reads a value of `type`. */
export function datetimeText(text: string, type: DateTimeType): string {
  const value = dateTimeInput(text, type);
  if (value.kind === 'text') return value.text;
  if (value.kind === 'now') throw notSupported(`The ${type} input '${text}' in a value of a table`, 'Use now() or current_timestamp.');
  // 'today' and its kin: the current date in UTC, the session's time zone.
  const day = new Date(Date.now() + value.days * 86_400_000).toISOString().slice(0, 10);
  return type === 'date' ? day : type === 'timestamptz' ? `${day} 00:00:00+00` : `${day} 00:00:00`;
}

const message = (err: unknown) => (err instanceof ApiError ? err.description : err instanceof Error ? err.message : String(err));

export function registerDateTimeInput(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_datetime_in',
      returnType: VARCHAR,
      parameterTypes: [VARCHAR, VARCHAR],
      mainFunction: (info, batch, output) => {
        const texts = batch.getColumnVector(0) as DuckDBVarCharVector;
        const types = batch.getColumnVector(1) as DuckDBVarCharVector;
        const out = output as DuckDBVarCharVector;
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            const text = texts.getItem(i);
            const type = types.getItem(i);
            out.setItem(i, text === null || type === null || !TYPES.has(type) ? null : datetimeText(text, type as DateTimeType));
          }
        } catch (err) {
          info.setError(message(err));
          return;
        }
        out.flush();
      },
    }),
  );
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_interval_in',
      returnType: VARCHAR,
      parameterTypes: [VARCHAR, INTEGER, INTEGER],
      mainFunction: (info, batch, output) => {
        const texts = batch.getColumnVector(0) as DuckDBVarCharVector;
        const masks = batch.getColumnVector(1) as DuckDBIntegerVector;
        const precisions = batch.getColumnVector(2) as DuckDBIntegerVector;
        const out = output as DuckDBVarCharVector;
        try {
          for (let i = 0; i < batch.rowCount; i++) {
            const text = texts.getItem(i);
            const mask = masks.getItem(i);
            const precision = precisions.getItem(i);
            // Text of a table is read without the fields, which then restrict the value (a
            // precision below 0: none), as PostgreSQL casts text to interval(typmod).
            const value =
              text === null || mask === null
                ? null
                : restricted(intervalInput(text), mask, precision === null || precision < 0 ? null : precision);
            out.setItem(i, value === null ? null : engineIntervalText(value));
          }
        } catch (err) {
          info.setError(message(err));
          return;
        }
        out.flush();
      },
    }),
  );
}
