/**
 * Calls of a source's procedures (PostgreSQL functions, MariaDB stored procedures): by
 * `CALL src.proc(...)`, `SELECT * FROM src.fn(...)` and over REST, one call or a batch answered
 * in order. The arguments are checked against the parameters (names, count, types) and sent as
 * bound parameters; the rows are loaded into the engine with the result's types, so they are
 * encoded, streamed and paginated as any result.
 */
import { ApiError, badRequest, forbidden, messageOf, notFound, sourceFailed } from '../../errors.js';
import type { ProcedureDef, SourceDef } from '../../catalog/types.js';
import { SourceUnreachableError, type ProcedureRows, type RawType, type RowConnector } from '../../connectors/types.js';
import { scaleFromValues } from '../../connectors/kinds.js';
import type { SourceRegistry } from '../../sources/registry.js';
import type { AccessPolicy } from '../../security/permissions.js';
import { describe, quoteIdent, sqlLiteral, type DuckRuntime } from '../../runtime/duckdb.js';
import { engineExecution, statementConnection, type Execution } from '../exec/execute.js';
import { loadBatches, tryCast, type SourceQuery } from '../exec/load.js';
import { engineError } from '../exec/errors.js';
import type { Node } from '@pgsql/types';
import { asKind, walk } from '../tree/ast.js';

/** The arguments of one call: positional first, then by name (names case-insensitive). */
export interface ProcedureArguments {
  positional: Array<string | null>;
  named: Record<string, string | null>;
}

export interface SourceProcedureCall {
  schema: string;
  name: string;
  /** One call, or a batch whose rows are answered in order. */
  calls: ProcedureArguments[];
}

/** Only constants are accepted as procedure arguments. */
function constantOf(node: Node | undefined): string | null {
  const constant = asKind(node, 'A_Const');
  if (!constant) throw badRequest('Procedure arguments must be constants (strings, numbers or NULL).', null, 'Invalid procedure call');
  if (constant.isnull) return null;
  if (constant.sval) return String(constant.sval.sval ?? '');
  if (constant.ival) return String(constant.ival.ival ?? 0);
  if (constant.fval) return String(constant.fval.fval ?? '');
  if (constant.boolval) return String(constant.boolval.boolval ?? false);
  return null;
}

/** A call's arguments: positional ones, then those named (name => value). */
export function argumentsOf(args: Node[] | undefined): ProcedureArguments {
  const positional: Array<string | null> = [];
  const named: Record<string, string | null> = {};
  for (const arg of args ?? []) {
    const namedArg = asKind(arg, 'NamedArgExpr');
    if (namedArg) named[String(namedArg.name)] = constantOf(namedArg.arg);
    else positional.push(constantOf(arg));
  }
  return { positional, named };
}

const nameParts = (names: Node[] | undefined) => (names ?? []).map((n) => String(asKind(n, 'String')?.sval ?? ''));

/** Whether a SELECT is exactly `SELECT * FROM one_function(...) [AS alias]`. */
function readsOneFunctionWhole(statement: Node | undefined): boolean {
  const select = asKind(statement, 'SelectStmt');
  if (!select || (select.fromClause ?? []).length !== 1 || (select.targetList ?? []).length !== 1) return false;
  const range = asKind(select.fromClause![0], 'RangeFunction');
  const target = asKind(asKind(select.targetList![0], 'ResTarget')?.val, 'ColumnRef');
  const star = target?.fields?.length === 1 && 'A_Star' in target.fields[0]!;
  const clauses = [
    select.whereClause,
    select.groupClause,
    select.havingClause,
    select.sortClause,
    select.limitCount,
    select.limitOffset,
    select.distinctClause,
    select.withClause,
    select.windowClause,
    select.intoClause,
    select.lockingClause,
    select.valuesLists,
  ];
  return (
    star &&
    range !== undefined &&
    (range.functions ?? []).length === 1 &&
    !range.ordinality &&
    !range.lateral &&
    !range.coldeflist &&
    clauses.every((c) => c === undefined || (Array.isArray(c) && c.length === 0)) &&
    (select.op ?? 'SETOP_NONE') === 'SETOP_NONE'
  );
}

/**
 * `CALL src.proc(...)` of a source, or `SELECT * FROM src.fn(...)` of a source's procedure, as a
 * call; null for other statements. A procedure is read whole: any other statement reading one
 * (a condition, a join, a view, EXPLAIN) is refused.
 */
export function sourceProcedureOf(
  statement: Node | undefined,
  catalog: { isSource(schema: string): boolean; isProcedure(schema: string, name: string): boolean },
): SourceProcedureCall | null {
  const call = asKind(statement, 'CallStmt');
  if (call) {
    const names = nameParts(call.funccall?.funcname);
    if (names.length !== 2 || !catalog.isSource(names[0]!)) return null;
    return { schema: names[0]!, name: names[1]!, calls: [argumentsOf(call.funccall!.args)] };
  }
  let found: { schema: string; name: string; args: Node[] | undefined } | undefined;
  walk(statement, (nodeType, node) => {
    if (nodeType !== 'RangeFunction') return;
    for (const item of (node.functions as Node[] | undefined) ?? []) {
      const fn = asKind(asKind(item, 'List')?.items?.[0], 'FuncCall');
      const names = nameParts(fn?.funcname);
      if (fn && names.length === 2 && catalog.isProcedure(names[0]!, names[1]!))
        found = { schema: names[0]!, name: names[1]!, args: fn.args };
    }
  });
  if (!found) return null;
  const { schema, name, args } = found;
  if (!readsOneFunctionWhole(statement)) {
    throw badRequest(
      `The procedure ${schema}.${name} is read whole: SELECT * FROM ${schema}.${name}(...), alone.`,
      'Call it alone (or CALL it), and filter, join or order its rows on the client.',
      'Unsupported statement',
    );
  }
  return { schema, name, calls: [argumentsOf(args)] };
}

const invalidCall = (description: string, hint: string | null) => badRequest(description, hint, 'Invalid procedure call');

/** The source's procedure `schema.name`, or a 404 naming what exists. */
export function findSourceProcedure(
  registry: SourceRegistry,
  schema: string,
  name: string,
): { source: SourceDef; procedure: ProcedureDef } {
  const found = registry.findSourceProcedure(schema, name);
  if (found) return found;
  const source = registry.findSource(schema);
  throw notFound(
    `Procedure "${schema}.${name}" does not exist.`,
    source ? `SYS.Procedures lists the procedures of ${source.name}.` : 'SYS.Procedures lists the procedures.',
    'Unknown procedure',
  );
}

/** Who may call: EXECUTE on the procedure; one that changes data also UPDATE on its source, a writable source and key. */
export function authorizeCall(source: SourceDef, procedure: ProcedureDef, policy: AccessPolicy, access: { readOnlyKey?: boolean }): void {
  policy.require('E', [source.name, procedure.name], 'procedure');
  if (!procedure.modifiesData) return;
  if (access.readOnlyKey) {
    throw new ApiError(
      403,
      'Forbidden',
      `A read-only API key may only read; ${source.name}.${procedure.name} may change data.`,
      'Use a key created with readOnly: false for writes and procedures.',
    );
  }
  if (source.readOnly) {
    throw forbidden(
      `Data source "${source.name}" is read-only; ${source.name}.${procedure.name} may change data.`,
      'Its procedures that only read (PostgreSQL STABLE or IMMUTABLE, MariaDB READS SQL DATA) can be called.',
    );
  }
  policy.require('U', [source.name], 'schema');
}

/** One value per parameter in order (undefined: left out); 400s name the parameter. */
export function argumentsFor(procedure: ProcedureDef, label: string, call: ProcedureArguments): Array<string | null | undefined> {
  const params = procedure.params;
  const list = params.map((p) => `${p.name} ${p.type}${p.optional ? ' (optional)' : ''}`).join(', ') || 'none';
  if (call.positional.length > params.length) {
    throw invalidCall(`${label} takes at most ${params.length} arguments, not ${call.positional.length}.`, `Parameters: ${list}.`);
  }
  const args: Array<string | null | undefined> = params.map((_, i) => (i < call.positional.length ? call.positional[i] : undefined));
  for (const [key, value] of Object.entries(call.named)) {
    const i = params.findIndex((p) => p.name.toLowerCase() === key.toLowerCase());
    if (i < 0) throw invalidCall(`${label} has no parameter "${key}".`, `Parameters: ${list}.`);
    if (args[i] !== undefined) throw invalidCall(`Parameter "${params[i]!.name}" of ${label} is given twice.`, `Parameters: ${list}.`);
    args[i] = value;
  }
  const missing = params.filter((p, i) => !p.optional && args[i] === undefined).map((p) => p.name);
  if (missing.length > 0) throw invalidCall(`${label} needs ${missing.join(', ')}.`, `Parameters: ${list}.`);
  return args;
}

/** The source's errors that are about the arguments (bad values, the procedure's own refusal): 400, with its message. */
function argumentError(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? '');
  const errno = Number((err as { errno?: unknown }).errno ?? 0);
  // PostgreSQL: class 22 (data exception), P0001 (RAISE EXCEPTION); MariaDB: SIGNAL, bad values.
  return /^22...$/.test(code) || code === 'P0001' || [1644, 1366, 1292, 1264, 1406].includes(errno);
}

/**
 * Calls the procedure once per entry of `call.calls`, in order, and answers their rows as one
 * result (the first call's columns).
 */
export async function openSourceProcedure(
  registry: SourceRegistry,
  runtime: DuckRuntime,
  call: SourceProcedureCall,
  policy: AccessPolicy,
  access: { readOnlyKey?: boolean },
  signal: AbortSignal,
): Promise<Execution> {
  const { source, procedure } = findSourceProcedure(registry, call.schema, call.name);
  const label = `${source.name}.${procedure.name}`;
  authorizeCall(source, procedure, policy, access);
  if (call.calls.length === 0) throw invalidCall(`A batch of calls of ${label} needs at least one call.`, null);
  const argumentLists = call.calls.map((c) => argumentsFor(procedure, label, c));
  const connector = registry.connectorOf(source) as RowConnector;
  const procedures = connector.procedures;
  if (!procedures) throw invalidCall(`Data source "${source.name}" has no procedures.`, null);

  const held = await statementConnection(runtime, signal);
  const { connection } = held;
  const translateError = (err: unknown) => engineError(err, (m) => m) ?? err;
  let open: ProcedureRows | null = null;
  try {
    await checkTypes(connection, procedure, label, argumentLists);
    const sourceQueries: SourceQuery[] = argumentLists.map((args) => ({
      source: source.name,
      sql: procedures.procedureCallSql(procedure, args),
    }));
    const callSource = async (args: Array<string | null | undefined>) => {
      try {
        return await procedures.callProcedure(procedure, args, signal);
      } catch (err) {
        throw sourceError(err, source.name, signal);
      }
    };
    const first = (open = await callSource(argumentLists[0]!));
    const width = first.columns.length;
    if (width === 0) {
      first.close();
      open = null;
      throw invalidCall(`${label} answered no result set.`, 'Only procedures that return rows can be called through vdb.');
    }
    async function* rows(): AsyncGenerator<unknown[][]> {
      try {
        yield* first.rows;
        for (const args of argumentLists.slice(1)) {
          const next = await callSource(args);
          if (next.columns.length !== width) {
            next.close();
            throw sourceFailed(source.name, `${label} answered ${next.columns.length} columns in one call and ${width} in another.`, false);
          }
          yield* next.rows;
        }
      } catch (err) {
        throw err instanceof ApiError ? err : sourceError(err, source.name, signal);
      }
    }
    const loadName = '__vdb_procedure_1';
    const raws: RawType[] = first.rawTypes;
    const loaded = await loadBatches(
      connection,
      loadName,
      first.columns.map((c, i) => ({
        type: c.type,
        raw: raws[i]!,
        scaled:
          scaleFromValues(c, source) && raws[i] === 'VARCHAR' ? { label: `${label}.${c.name}`, column: c.name, shown: true } : undefined,
      })),
      rows(),
      signal,
    );
    open = null;
    const warnings = await castWarnings(connection, loaded.rawName, label, first.columns, raws);
    const sql = `SELECT ${first.columns.map((c, i) => `${quoteIdent(`c${i}`)} AS ${quoteIdent(c.name)}`).join(', ')} FROM ${loadName}`;
    const columns = await describe(connection, sql);
    return engineExecution(connection, sql, columns, { warnings, sourceQueries, translateError, close: held.close, engine: held.engine });
  } catch (err) {
    open?.close();
    held.close();
    if (signal.aborted) throw signal.reason;
    throw translateError(err);
  }
}

/** PostgreSQL's and MariaDB's refusal of a write in a READ ONLY transaction. */
const readOnlyRefusal = (err: unknown) =>
  (err as { code?: unknown }).code === '25006' || Number((err as { errno?: unknown }).errno ?? 0) === 1792;

function sourceError(err: unknown, source: string, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ApiError) return err;
  // Declared as only reading (STABLE, IMMUTABLE, READS SQL DATA), it tried to write: the source refused it.
  if (readOnlyRefusal(err)) {
    return forbidden(
      `Data source "${source}" refused a write of a procedure declared as only reading: ${messageOf(err)}`,
      'Declare it VOLATILE (PostgreSQL) or MODIFIES SQL DATA (MariaDB), then refresh the source.',
    );
  }
  if (argumentError(err)) return invalidCall(`Data source "${source}" refused the call: ${messageOf(err)}`, null);
  return sourceFailed(source, messageOf(err), err instanceof SourceUnreachableError);
}

/** Each argument must be a value of its parameter's type, as the engine reads it: else a 400 naming the parameter. */
async function checkTypes(
  connection: Awaited<ReturnType<typeof statementConnection>>['connection'],
  procedure: ProcedureDef,
  label: string,
  argumentLists: ReadonlyArray<ReadonlyArray<string | null | undefined>>,
): Promise<void> {
  for (const args of argumentLists) {
    for (const [i, value] of args.entries()) {
      const param = procedure.params[i]!;
      if (value === null || value === undefined || param.type === 'VARCHAR') continue;
      const reader = await connection.runAndReadAll(`SELECT ${tryCast(sqlLiteral(value), param.type)} IS NULL`);
      if (reader.getRows()[0]?.[0] === true) {
        throw invalidCall(
          `Parameter "${param.name}" of ${label} takes ${param.sourceType}; "${value.length > 100 ? `${value.slice(0, 100)}...` : value}" is not one.`,
          null,
        );
      }
    }
  }
}

/** Values the load could not read as their column's type (they are NULL): said in SQL-Warnings. */
async function castWarnings(
  connection: Awaited<ReturnType<typeof statementConnection>>['connection'],
  rawName: string,
  label: string,
  columns: ReadonlyArray<{ name: string; type: string }>,
  raws: readonly RawType[],
): Promise<string[]> {
  const cast = columns.map((c, i) => ({ c, i })).filter(({ c, i }) => raws[i] === 'VARCHAR' && c.type !== 'VARCHAR');
  if (cast.length === 0) return [];
  const counts = cast.map(({ c, i }) => `count(*) FILTER (WHERE c${i} IS NOT NULL AND ${tryCast(`c${i}`, c.type)} IS NULL)`).join(', ');
  const row = (await connection.runAndReadAll(`SELECT ${counts} FROM ${rawName}`)).getRows()[0] ?? [];
  return cast.flatMap(({ c }, k) =>
    Number(row[k] ?? 0) > 0 ? [`${label}.${c.name}: ${Number(row[k])} value(s) are not valid ${c.type} and were returned as NULL`] : [],
  );
}
