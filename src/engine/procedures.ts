/**
 * System procedures called with CALL: the SQL door onto catalog operations (Data Virtuality's
 * names). Each returns a small result (columns and rows) that is encoded like any other.
 *
 *   SYSADMIN.createConnection(name, template, connectionProps, encryptedProperties)
 *   SYSADMIN.createDataSource(name, translator, modelProperties, translatorProperties)
 *   SYSADMIN.removeDataSource(name)
 *   SYSADMIN.refreshDataSource(name)
 *   SYSADMIN.removeConnection(name)
 *
 * Arguments are positional or named (name => 'x'); props are `key=value,key=value` strings.
 */
import type { SourceRegistry } from '../catalog/sources.js';
import { parseProps, sourceFromSpec } from '../catalog/source-spec.js';
import type { UserDef } from '../catalog/types.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import type { StaticResult } from './static-result.js';

export type ProcedureResult = StaticResult;

interface Procedure {
  params: string[];
  required: number;
  admin: boolean;
  run(args: Record<string, string | null>, registry: SourceRegistry): Promise<ProcedureResult>;
}

const sourceRow = (name: string, kind: string, tables: number): ProcedureResult => ({
  columns: ['Name', 'Type', 'Tables'],
  rows: [[name, kind, tables]],
});

const PROCEDURES: Record<string, Procedure> = {
  'sysadmin.createconnection': {
    params: ['name', 'jbosscliTemplateName', 'connectionOrResourceAdapterProperties', 'encryptedProperties'],
    required: 2,
    admin: true,
    async run(args, registry) {
      const spec = sourceFromSpec({
        name: args.name,
        template: args.jbosscliTemplateName,
        connectionProps: args.connectionOrResourceAdapterProperties ?? '',
        encryptedProperties: args.encryptedProperties ?? '',
      });
      await registry.saveConnection(spec.name, spec);
      return { columns: ['Name', 'Type'], rows: [[spec.name, spec.kind]] };
    },
  },
  'sysadmin.createdatasource': {
    params: ['name', 'translator', 'modelProperties', 'translatorProperties'],
    required: 1,
    admin: true,
    async run(args, registry) {
      const name = args.name ?? '';
      const connection = registry.connection(name);
      const model = parseProps(args.modelProperties ?? '', 'modelProperties');
      const source = await registry.addSource({
        name,
        kind: connection.kind,
        connection: connection.connection,
        secrets: connection.secrets,
        model,
        translator: parseProps(args.translatorProperties ?? '', 'translatorProperties'),
        readOnly: /^(true|1|yes)$/i.test(model.readOnly ?? ''),
      });
      return sourceRow(source.name, source.kind, source.tables.length);
    },
  },
  'sysadmin.removedatasource': {
    params: ['name'],
    required: 1,
    admin: true,
    async run(args, registry) {
      const source = await registry.removeSource(args.name ?? '');
      return sourceRow(source.name, source.kind, source.tables.length);
    },
  },
  'sysadmin.refreshdatasource': {
    params: ['name'],
    required: 1,
    admin: true,
    async run(args, registry) {
      const source = await registry.refreshSource(args.name ?? '');
      return sourceRow(source.name, source.kind, source.tables.length);
    },
  },
  'sysadmin.removeconnection': {
    params: ['name'],
    required: 1,
    admin: true,
    async run(args, registry) {
      await registry.removeConnection(args.name ?? '');
      return { columns: ['Name'], rows: [[args.name]] };
    },
  },
};

/** A procedure call: its qualified name and its arguments (positional, then named). */
export interface ProcedureCall {
  name: string;
  positional: Array<string | null>;
  named: Record<string, string | null>;
}

export async function callProcedure(call: ProcedureCall, user: UserDef, registry: SourceRegistry): Promise<ProcedureResult> {
  const procedure = PROCEDURES[call.name.toLowerCase()];
  if (!procedure) throw notFound(`Procedure "${call.name}" does not exist.`, `Available: ${Object.keys(PROCEDURES).join(', ')}.`, 'Unknown procedure');
  if (procedure.admin && !user.roles.includes('admin')) {
    throw new ApiError(403, 'Forbidden', `Only administrators may call ${call.name}.`, null);
  }
  if (call.positional.length > procedure.params.length) {
    throw badRequest(`${call.name} takes at most ${procedure.params.length} arguments.`, `Parameters: ${procedure.params.join(', ')}.`);
  }
  const args: Record<string, string | null> = {};
  procedure.params.forEach((param, i) => {
    if (i < call.positional.length) args[param] = call.positional[i] ?? null;
  });
  for (const [key, value] of Object.entries(call.named)) {
    const param = procedure.params.find((p) => p.toLowerCase() === key.toLowerCase());
    if (!param) throw badRequest(`${call.name} has no parameter "${key}".`, `Parameters: ${procedure.params.join(', ')}.`);
    args[param] = value;
  }
  const missing = procedure.params.slice(0, procedure.required).filter((p) => args[p] === undefined || args[p] === null);
  if (missing.length > 0) throw badRequest(`${call.name} needs ${missing.join(', ')}.`, `Parameters: ${procedure.params.join(', ')}.`);
  return procedure.run(args, registry);
}
