/**
 * Procedures through the source endpoints: which procedure a path names (vdb's own in
 * SYSADMIN, a source's), its arguments from a GET's query or a POST's JSON body (an object, or
 * an array of them for a batch), and the engine call that answers them.
 */
import type { ProcedureDef, UserDef } from '../catalog/types.js';
import { badRequest } from '../errors.js';
import type { ProcedureArguments } from '../engine/statements/source-procedures.js';
import { quoteIdent } from '../runtime/duckdb.js';
import type { SourceRegistry } from '../sources/registry.js';
import { findByName } from '../sources/definitions.js';
import { SYSTEM_PROCEDURE_DEFS } from '../sources/system-tables.js';
import type { Services } from '../services.js';
import type { Opener } from './result-delivery.js';
import { RESULT_PARAMETERS } from './schemas.js';

export interface ProcedureTarget {
  schema: string;
  procedure: ProcedureDef;
}

/** The procedure `schema/name` names, or null where it names a table (or nothing: the table's 404 follows). */
export function procedureTarget(registry: SourceRegistry, schema: string, name: string): ProcedureTarget | null {
  if (schema.toUpperCase() === 'SYSADMIN') {
    const procedure = findByName(SYSTEM_PROCEDURE_DEFS, name, (p) => p.name);
    return procedure ? { schema: 'SYSADMIN', procedure } : null;
  }
  const source = registry.findSource(schema);
  if (!source || findByName(source.tables, name, (t) => t.name)) return null;
  const procedure = findByName(source.procedures ?? [], name, (p) => p.name);
  return procedure ? { schema: source.name, procedure } : null;
}

const invalid = (description: string) =>
  badRequest(
    description,
    'Arguments are strings, numbers, booleans or null, by parameter name (SYS.ProcedureParams).',
    'Invalid procedure call',
  );

/** One call's arguments from a JSON object: each value a string, number, boolean or null. */
function namedArguments(target: ProcedureTarget, object: Record<string, unknown>): ProcedureArguments {
  const named: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
      throw invalid(`Parameter "${key}" of ${target.schema}.${target.procedure.name} must be a string, number, boolean or null.`);
    }
    named[key] = value === null ? null : String(value);
  }
  return { positional: [], named };
}

/**
 * The calls a request asks for: from a GET, its query parameters other than the result's
 * (a repeated one counts with its last value); from a POST, its body (none: one call without arguments).
 */
export function callArguments(target: ProcedureTarget, input: unknown, from: 'query' | 'body', invalidBody = false): ProcedureArguments[] {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (from === 'query') {
    const query = isObject(input) ? input : {};
    const named: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(query)) {
      if (!RESULT_PARAMETERS.has(key)) named[key] = Array.isArray(value) ? value[value.length - 1] : value;
    }
    return [namedArguments(target, named)];
  }
  if (input === null || input === undefined) return [{ positional: [], named: {} }];
  if (isObject(input)) return [namedArguments(target, input)];
  if (Array.isArray(input) && input.length > 0 && input.every(isObject)) return input.map((call) => namedArguments(target, call));
  if (Array.isArray(input) && input.length > 1000) throw invalid('A batch holds at most 1000 calls.');
  throw invalid(
    invalidBody && Array.isArray(input) && input.length === 0
      ? 'A batch needs at least one call.'
      : 'The body must be a JSON object of arguments by parameter name, or an array of such objects (a batch).',
  );
}

/** The statement the query log shows for the calls: the procedure and the parameters given, never the values. */
export function procedureStatement(target: ProcedureTarget, calls: readonly ProcedureArguments[]): string {
  const text = (call: ProcedureArguments) =>
    `CALL ${quoteIdent(target.schema)}.${quoteIdent(target.procedure.name)}(${Object.keys(call.named)
      .map((name) => `${quoteIdent(name)} => ?`)
      .join(', ')})`;
  return calls.map(text).join('; ');
}

/** Opens the calls in the engine, as `user`. */
export function procedureOpener(services: Services, user: UserDef, target: ProcedureTarget, calls: ProcedureArguments[]): Opener {
  return (signal, access) => services.engine.openProcedureCalls(target.schema, target.procedure.name, calls, user, signal, access);
}
