/** The one row of a constant select (plan/constant-select.ts), answered without the engine. */
import { VARCHAR } from '@duckdb/node-api';
import type { ResultColumn } from '../../results/json.js';
import type { DuckRuntime } from '../../runtime/duckdb.js';
import type { Constant } from '../plan/constant-select.js';
import type { Execution } from './execute.js';

/** The columns of each constant select (kept with its text, engine.ts): one list, so its header is written once. */
const columnLists = new WeakMap<Constant[], ResultColumn[]>();

/** The one row of a constant select, as an execution (stream, cursor, rows as text). */
export function constantExecution(constants: Constant[], runtime: DuckRuntime): Execution {
  const engine = runtime.current;
  engine.hold();
  let columns = columnLists.get(constants);
  if (!columns) columnLists.set(constants, (columns = constants.map((c) => c.column)));
  return {
    columns,
    warnings: [],
    sourceQueries: [],
    engine,
    async *stream(shape, window, options) {
      if ((window.offset ?? 0) > 0 || window.limit === 0) return;
      options.onRows?.(1);
      yield shape === 'array'
        ? `[${constants.map((c) => c.json).join(',')}]`
        : `{${constants.map((c) => `${JSON.stringify(c.column.name)}:${c.json}`).join(',')}}`;
    },
    async materialize(table) {
      // A cursor's table, columns c0..cn as the engine's results have them.
      const list = constants.map((c, i) => `${c.sql} AS c${i}`).join(', ');
      await engine.runAll([`CREATE TABLE ${table} AS SELECT ${list}`]);
      return 1;
    },
    async *textRows() {
      yield [constants.map((c) => (c.sql === 'NULL' ? null : c.column.type === VARCHAR ? JSON.parse(c.json) : c.json))];
    },
    translateError: (err) => err,
    close: () => engine.release(),
  };
}
