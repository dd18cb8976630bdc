/**
 * PostgreSQL's result types where they depend on argument types only the engine knows:
 * sum(int2/int4) is bigint and sum(int8) numeric (the engine's sums of integers are HUGEINT),
 * sum(float4) is float4 (the engine's DOUBLE), date - date is integer (the engine's BIGINT);
 * to_char(x, ...) formats a number or a date by x's type.
 *
 * The statement is written twice. First as a probe: at each such place the arguments are
 * compared with a new parameter, whose type the engine infers from what it is compared with;
 * the probe is prepared (never run) and its parameters' types read. Then as the engine runs it,
 * each place cast to PostgreSQL's type for the types learned. Statements without such a place
 * are written once.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { FuncCall, Node, TypeCast } from '@pgsql/types';
import { nameNode } from '../tree/ast.js';
import { int, written } from '../tree/syntax-nodes.js';
import { overflowChecked, realSum } from './youngs-cramer.js';
import { BoundedCache } from '../tree/statement-cache.js';

interface Writing {
  probing: boolean;
  /** Parameters handed out so far, by the text of the arguments they stand for. */
  params: Map<string, number>;
  /** Per parameter (from 1), the engine's type learned by the last probe. */
  types: ReadonlyArray<string | undefined>;
  /** Set when a place's arguments hold another place (sum(d - date '...')): probed again with the inner types. */
  nested: boolean;
}

let current: Writing | null = null;

/** `write()` under a probe or with learned types; `write` must not wait (the state is the module's). */
function writing<T>(state: Writing, write: () => T): T {
  const saved = current;
  current = state;
  try {
    return write();
  } finally {
    current = saved;
  }
}

/** The text of a node without its positions in the statement: the same for the same expression. */
const keyOf = (value: Node): string => JSON.stringify(value, (key, v: unknown) => (key === 'location' ? undefined : v));

/**
 * The place of `values`: the engine's types of the values learned so far (undefined where not
 * known, as when written without a probe: EXPLAIN); while probing, also the parameters to
 * compare them with (the same ones for the same values, so that a GROUP BY expression and its
 * select item stay alike).
 */
function place(values: Node[]): { params?: Node[]; types: Array<string | undefined> } {
  if (!current) return { types: values.map(() => undefined) };
  const state = current;
  const numbers = values.map((value) => {
    const key = keyOf(value);
    if (state.probing && key.includes('"ParamRef"')) state.nested = true;
    let n = state.params.get(key);
    if (n === undefined) {
      n = state.params.size + 1;
      state.params.set(key, n);
    }
    return n;
  });
  const types = numbers.map((n) => state.types[n - 1]);
  return state.probing ? { params: numbers.map((number) => ({ ParamRef: { number } })), types } : { types };
}

const equals = (a: Node, b: Node): Node => ({ A_Expr: { kind: 'AEXPR_OP', name: [nameNode('=')], lexpr: a, rexpr: b } });
const allOf = (args: Node[]): Node => (args.length === 1 ? args[0]! : { BoolExpr: { boolop: 'AND_EXPR', args } });

/** A cast the rewrites leave alone. */
function typed(value: Node, type: string, typmods?: number[]): Node {
  const cast: TypeCast = { arg: value, typeName: { names: [nameNode(type)], typmods: typmods?.map(int) } };
  written.add(cast);
  return { TypeCast: cast };
}

const NARROW_INTEGERS = /^(TINYINT|SMALLINT|INTEGER|UTINYINT|USMALLINT)$/;

/** PostgreSQL's sum type for the engine's type of its argument, where the engine's differs. */
function sumType(argument: string | undefined): { type: string; typmods?: number[] } | null {
  if (argument === undefined) return null;
  if (NARROW_INTEGERS.test(argument)) return { type: 'int8' };
  if (/^(BIGINT|HUGEINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(argument)) return { type: 'decimal', typmods: [38, 0] };
  if (argument === 'FLOAT') return { type: 'float4' };
  return null;
}

/** sum(x) (its children already written) with PostgreSQL's type. */
export function typedSum(sum: { FuncCall: FuncCall }): Node {
  const fc = sum.FuncCall;
  const argument = fc.args![0]!;
  const at = place([argument]);
  let call: FuncCall = fc;
  if (at.params) {
    const probe = equals(argument, at.params[0]!);
    call = { ...fc, agg_filter: fc.agg_filter ? allOf([fc.agg_filter, probe]) : probe };
  }
  const type = sumType(at.types[0]);
  // Floats as PostgreSQL adds them (youngs-cramer.ts): real in real arithmetic, an overflow an error.
  const written: Node =
    at.types[0] === 'FLOAT'
      ? realSum(call, argument)
      : at.types[0] === 'DOUBLE'
        ? overflowChecked({ FuncCall: call }, call, argument)
        : { FuncCall: call };
  return type ? typed(written, type.type, type.typmods) : written;
}

/**
 * The engine's type of an aggregate's one argument (undefined where not known), and the call to
 * write while probing: the argument compared with the probe's parameter in its FILTER (as sum's).
 */
export function probedArgument(fc: FuncCall): { type: string | undefined; call: FuncCall } {
  const argument = fc.args![0]!;
  const at = place([argument]);
  if (!at.params) return { type: at.types[0], call: fc };
  const probe = equals(argument, at.params[0]!);
  return { type: at.types[0], call: { ...fc, agg_filter: fc.agg_filter ? allOf([fc.agg_filter, probe]) : probe } };
}

/** `left - right` (both written) with PostgreSQL's type: integer for two dates. */
export function typedDifference(difference: Node, left: Node, right: Node): Node {
  const at = place([left, right]);
  const written: Node = at.params
    ? {
        CaseExpr: {
          args: [{ CaseWhen: { expr: allOf([equals(left, at.params[0]!), equals(right, at.params[1]!)]), result: difference } }],
        },
      }
    : difference;
  return at.types.every((t) => t === 'DATE') ? typed(written, 'int4') : written;
}

/** Whether `values` are integers of at most 32 bits (an int4 series), and while probing the condition that asks. */
export function narrowIntegers(values: Node[]): { narrow: boolean; probe?: Node } {
  const at = place(values);
  const narrow = at.types.every((t) => t !== undefined && NARROW_INTEGERS.test(t));
  return at.params ? { narrow, probe: allOf(values.map((v, i) => equals(v, at.params![i]!))) } : { narrow };
}

/**
 * The engine's type of `value` (undefined where not known), and while probing the condition
 * that asks it (to stand where the value's use is written: to_char(x, ...) of a number or a
 * date is written otherwise).
 */
export function probedType(value: Node): { type: string | undefined; probe?: Node; probed: boolean } {
  const at = place([value]);
  // probed: written to run (not for EXPLAIN), so an unknown type means the probe failed.
  const probed = current !== null;
  return at.params ? { type: at.types[0], probe: equals(value, at.params[0]!), probed } : { type: at.types[0], probed };
}

/**
 * Types learned by probes of statements that read no table of their own (constants, the system
 * tables, whose types are vdb's): the same probe text always learns the same types.
 */
const LEARNED = new BoundedCache<Array<string | undefined>>(1000);

/**
 * `write()` under `state`, where it is written in passes (engine-dialect.ts `engineSqlPasses`):
 * each pass under the state, with a wait for `turn` between them (the state is set again after it).
 */
async function writingInTurns(state: Writing, write: () => string | Generator<void, string>, turn?: () => Promise<void>): Promise<string> {
  const passes = writing(state, write);
  if (typeof passes === 'string') return passes;
  for (;;) {
    const pass = writing(state, () => passes.next());
    if (pass.done) return pass.value;
    await turn?.();
  }
}

/**
 * The engine's SQL for a statement, written by `write`, with PostgreSQL's types at the places
 * above (learned by a probe prepared on `connection`, where the statement's tables are).
 * `reusable`: the statement reads no table loaded for it, so what its probe learns holds for
 * the next statement of the same text. `turn`: where `write` writes in passes, a long
 * statement's wait for a turn of the event loop between them (engine/cpu-lane.ts).
 */
export async function typedSql(
  connection: DuckDBConnection,
  write: () => string | Generator<void, string>,
  options: { reusable?: boolean; turn?: () => Promise<void> } = {},
): Promise<string> {
  let types: Array<string | undefined> = [];
  // A place inside another is learned a probe later than the one around it: at most three deep.
  for (let pass = 0; pass < 3; pass++) {
    const probe: Writing = { probing: true, params: new Map(), types, nested: false };
    const probeSql = await writingInTurns(probe, write, options.turn);
    if (probe.params.size === 0) return probeSql;
    let learned = options.reusable ? LEARNED.get(probeSql) : undefined;
    if (!learned) {
      try {
        const prepared = await connection.prepare(probeSql);
        learned = Array.from({ length: prepared.parameterCount }, (_, i) => prepared.parameterType(i + 1).toString());
        prepared.destroySync();
      } catch {
        // The statement's own error (if it has one) comes when it is described; no types learned.
        break;
      }
      if (options.reusable) LEARNED.set(probeSql, learned);
    }
    const same = learned.length === types.length && learned.every((t, i) => t === types[i]);
    types = learned;
    if (!probe.nested || same) break;
  }
  return writingInTurns({ probing: false, params: new Map(), types, nested: false }, write, options.turn);
}
