/**
 * Macros that bound the values the engine builds (engine/exec/value-bounds.ts writes calls to
 * them). The engine's memory limit covers its tables, sorts and aggregates, not the values of an
 * expression: `repeat('x', 600000000)` or a split of a huge text would take the process's memory
 * whatever the limit, and a single such value cannot be interrupted. So a function whose result
 * size follows from its arguments is checked before it builds the value, and a function that
 * only joins or widens its inputs is checked on its result, each against `limit` bytes. The
 * error text is read back by exec/errors.ts (`valueLimitError`).
 */
import { DOUBLE, DuckDBScalarFunction, type DuckDBConnection, type DuckDBDoubleVector } from '@duckdb/node-api';
import { macroSql } from './numeric-macros.js';

/** The start of the engine's error text for a refused value: `vdb-value-limit:<function>:<limit>`. */
export const VALUE_LIMIT_MARK = 'vdb-value-limit';

/** Bytes a list element takes in the engine beside its text (a 16-byte string header). */
const LIST_ELEMENT_BYTES = 16;

/** How many elements a series from `a` to `b` by `step` has (0 where unknown: its values are NULL). */
function seriesLength(a: string, b: string, step: string): string {
  const number = (x: string) => `TRY_CAST(CAST(${x} AS VARCHAR) AS DOUBLE)`;
  const seconds = (x: string, type: string) => `epoch(TRY_CAST(CAST(${x} AS VARCHAR) AS ${type}))`;
  const numbers = `abs(${number(b)} - ${number(a)}) / nullif(abs(${number(step)}), 0)`;
  const times = `abs(${seconds(b, 'TIMESTAMP')} - ${seconds(a, 'TIMESTAMP')}) / nullif(abs(${seconds(step, 'INTERVAL')}), 0)`;
  return `coalesce(${numbers}, ${times}, 0)`;
}

/**
 * The engine computes a batch of up to 2,048 rows at a time and keeps every value of the batch
 * until the batch is done: values under the limit can still add up to gigabytes. So every
 * check also adds up the sizes of its batch (`vdb_batch_bytes`, registered by
 * `registerBatchCheck`) against `batchBytes` shared by the statement's `g` checks.
 */
export function valueMacros(limit: number, batchBytes: number): string[] {
  /** `value`, or the error naming `fn` where `size` (bytes per row) passes a limit. */
  const unlessTooLarge = (size: string, fn: string, value: string) =>
    `CASE WHEN CAST(${size} AS DOUBLE) > ${limit} THEN error('${VALUE_LIMIT_MARK}:' || ${fn} || ':${limit}') ` +
    // The rows left: their sizes added up per batch (never below 0, so never NULL here).
    `WHEN vdb_batch_bytes(greatest(CAST(${size} AS DOUBLE), 0), ${batchBytes} / $g) < 0 THEN NULL ELSE ${value} END`;
  const text = (x: string) => `strlen(CAST(${x} AS VARCHAR))`;
  const macros: Array<readonly [string, string]> = [
    // For the rows of results (results/json.ts): none longer than the limit leaves the engine.
    ['vdb_value_limit()', String(limit)],
    // A result already built by a function that joins or widens its inputs (||, concat, ...).
    ['vdb_bounded(v, fn, g)', unlessTooLarge(text('$v'), '$fn', '$v')],
    ['vdb_repeat(s, n, g)', `repeat($s, ${unlessTooLarge(`${text('$s')} * CAST($n AS DOUBLE)`, "'repeat'", '$n')})`],
    // lpad/rpad give `n` characters of at most 4 bytes each.
    ['vdb_pad_width(n, fn, g)', unlessTooLarge('CAST($n AS DOUBLE) * 4', '$fn', '$n')],
    // A split gives at most one element per byte.
    ['vdb_split_input(s, fn, g)', unlessTooLarge(`${text('$s')} * ${LIST_ELEMENT_BYTES + 1} + ${LIST_ELEMENT_BYTES}`, '$fn', '$s')],
    // Each occurrence of `f` (at most one per strlen(f) bytes) becomes `t`.
    [
      'vdb_replace(s, f, t, g)',
      `replace($s, $f, ${unlessTooLarge(
        'strlen($s) + CASE WHEN strlen($t) > strlen($f) THEN floor(strlen($s) / greatest(strlen($f), 1)) * (strlen($t) - strlen($f)) ELSE 0 END',
        "'replace'",
        '$t',
      )})`,
    ],
    // The text of regexp_replace(s, p, r): each match (at most one per byte, and one at the end)
    // becomes the replacement, whose back-references copy at most the whole text each. (The
    // call itself stays as written: the engine wants its options as a constant.)
    ['vdb_regexp_text(s, r, fn, g)', unlessTooLarge('(strlen($s) + 1) * (2 * strlen($r) + 1)', '$fn', '$s')],
    // The list of array_to_string(l, d): the delimiter goes between every two elements. (The
    // call stays as written: the engine wants its delimiter as a constant.)
    ['vdb_join_input(l, d, g)', unlessTooLarge('len($l) * strlen($d)', "'array_to_string'", '$l')],
    // A series as a list (generate_series in a select list): its length from its bounds and step,
    // numbers or timestamps (read from their text, so that one macro binds for either).
    [
      'vdb_series(a, b, step, g)',
      `generate_series($a, $b, ${unlessTooLarge(`${seriesLength('$a', '$b', '$step')} * ${LIST_ELEMENT_BYTES}`, "'generate_series'", '$step')})`,
    ],
    [
      'vdb_series2(a, b, g)',
      `generate_series($a, ${unlessTooLarge(`${seriesLength('$a', '$b', '1')} * ${LIST_ELEMENT_BYTES}`, "'generate_series'", '$b')})`,
    ],
  ];
  return macros.map(macroSql);
}

/** The start of the engine's error text for a batch of values past its share: `vdb-batch-limit:<bytes>`. */
export const BATCH_LIMIT_MARK = 'vdb-batch-limit';

/**
 * `vdb_batch_bytes(size, budget)`: each row's `size`, unchanged; fails when the sizes of the
 * batch add up past `budget`. A function of the engine's (it sees a whole batch, which SQL
 * cannot), called by the engine's threads and run on the main thread, once per batch.
 */
export function registerBatchCheck(connection: DuckDBConnection): void {
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name: 'vdb_batch_bytes',
      returnType: DOUBLE,
      parameterTypes: [DOUBLE, DOUBLE],
      volatile: true,
      mainFunction: (info, batch, output) => {
        const sizes = batch.getColumnVector(0) as DuckDBDoubleVector;
        const budgets = batch.getColumnVector(1) as DuckDBDoubleVector;
        const out = output as DuckDBDoubleVector;
        let total = 0;
        for (let i = 0; i < batch.rowCount; i++) {
          const size = sizes.getItem(i);
          total += size ?? 0;
          out.setItem(i, size);
        }
        const budget = batch.rowCount > 0 ? budgets.getItem(0) : null;
        if (budget !== null && total > budget) {
          info.setError(`${BATCH_LIMIT_MARK}:${Math.floor(budget)}`);
          return;
        }
        out.flush();
      },
    }),
  );
}

/** Defines the checks on `connection`'s engine: the batch function, then the macros that call it. */
export async function defineValueChecks(connection: DuckDBConnection, limit: number, batchBytes: number): Promise<void> {
  registerBatchCheck(connection);
  for (const macro of valueMacros(limit, batchBytes)) await connection.run(macro);
}
