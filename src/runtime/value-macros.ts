/**
 * Macros that bound the values the engine builds (engine/exec/value-bounds.ts writes calls to
 * them). The engine's memory limit covers its tables, sorts and aggregates, not the values of an
 * expression: `repeat('x', 600000000)` or a split of a huge text would take the process's memory
 * whatever the limit, and a single such value cannot be interrupted. So a function whose result
 * size follows from its arguments is checked before it builds the value, and a function that
 * only joins or widens its inputs is checked on its result, each against `limit` bytes. The
 * error text is read back by exec/errors.ts (`valueLimitError`).
 */
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

export function valueMacros(limit: number): string[] {
  const fail = (fn: string) => `error('${VALUE_LIMIT_MARK}:${fn}:${limit}')`;
  const text = (x: string) => `strlen(CAST(${x} AS VARCHAR))`;
  const macros: Array<readonly [string, string]> = [
    // A result already built by a function that joins or widens its inputs (||, concat, ...).
    ['vdb_bounded(v, fn)', `CASE WHEN ${text('$v')} > ${limit} THEN error('${VALUE_LIMIT_MARK}:' || $fn || ':${limit}') ELSE $v END`],
    [
      'vdb_repeat(s, n)',
      `repeat($s, CASE WHEN CAST(${text('$s')} AS DOUBLE) * CAST($n AS DOUBLE) > ${limit} THEN ${fail('repeat')} ELSE $n END)`,
    ],
    // lpad/rpad give `n` characters of at most 4 bytes each.
    [
      'vdb_pad_width(n, fn)',
      `CASE WHEN CAST($n AS DOUBLE) * 4 > ${limit} THEN error('${VALUE_LIMIT_MARK}:' || $fn || ':${limit}') ELSE $n END`,
    ],
    // A split gives at most one element per byte.
    [
      'vdb_split_input(s, fn)',
      `CASE WHEN CAST(${text('$s')} AS DOUBLE) * ${LIST_ELEMENT_BYTES + 1} + ${LIST_ELEMENT_BYTES} > ${limit} THEN error('${VALUE_LIMIT_MARK}:' || $fn || ':${limit}') ELSE $s END`,
    ],
    // Each occurrence of `f` (at most one per strlen(f) bytes) becomes `t`.
    [
      'vdb_replace(s, f, t)',
      `replace($s, $f, CASE WHEN strlen($t) > strlen($f) AND CAST(strlen($s) AS DOUBLE) + floor(strlen($s) / greatest(strlen($f), 1)) * (strlen($t) - strlen($f)) > ${limit} THEN ${fail('replace')} ELSE $t END)`,
    ],
    // The text of regexp_replace(s, p, r): each match (at most one per byte, and one at the end)
    // becomes the replacement, whose back-references copy at most the whole text each. (The
    // call itself stays as written: the engine wants its options as a constant.)
    [
      'vdb_regexp_text(s, r)',
      `CASE WHEN (CAST(strlen($s) AS DOUBLE) + 1) * (2 * strlen($r) + 1) > ${limit} THEN ${fail('regexp_replace')} ELSE $s END`,
    ],
    // The list of array_to_string(l, d): the delimiter goes between every two elements. (The
    // call stays as written: the engine wants its delimiter as a constant.)
    ['vdb_join_input(l, d)', `CASE WHEN CAST(len($l) AS DOUBLE) * strlen($d) > ${limit} THEN ${fail('array_to_string')} ELSE $l END`],
    // A series as a list (generate_series in a select list): its length from its bounds and step,
    // numbers or timestamps (read from their text, so that one macro binds for either).
    [
      'vdb_series(a, b, step)',
      `generate_series($a, $b, CASE WHEN ${seriesLength('$a', '$b', '$step')} * ${LIST_ELEMENT_BYTES} > ${limit} THEN ${fail('generate_series')} ELSE $step END)`,
    ],
    [
      'vdb_series2(a, b)',
      `generate_series($a, CASE WHEN ${seriesLength('$a', '$b', '1')} * ${LIST_ELEMENT_BYTES} > ${limit} THEN ${fail('generate_series')} ELSE $b END)`,
    ],
  ];
  return macros.map(macroSql);
}
