/**
 * System procedures called with CALL: the SQL door onto catalog operations (Data Virtuality's
 * names). Each returns a small result (columns and rows) that is encoded like any other.
 *
 * Sources: createConnection, createDataSource, alterDataSource, removeDataSource,
 * refreshDataSource, removeConnection. Users: addUser, addExternalUser, inviteUser, removeUser, changeUserPwd,
 * revokeTokens. Roles and permissions: addRole, removeRole, addUserRole, removeUserRole,
 * setPermissions. All in SYSADMIN; their arguments are in docs/sql.md ("User procedures") and
 * docs/sources.md.
 *
 * Arguments are positional or named (name => 'x'); props are `key=value,key=value` strings.
 */
import { importWarnings, type SourceRegistry } from '../../sources/registry.js';
import { connectionChangeFromSpec, parseProps, sourceFromSpec } from '../../sources/source-spec.js';
import type { CopyDef, UserDef } from '../../catalog/types.js';
import { copyState } from '../../sources/copies.js';
import type { CopyService } from './copies.js';
import { ApiError, badRequest, notFound } from '../../errors.js';
import type { AuditLog } from '../../catalog/audit-log.js';
import type { InviteService } from '../../security/invites.js';
import type { UserService } from '../../security/users.js';
import { canonicalPermissions, parseResource, type AccessPolicy } from '../../security/permissions.js';
import { walk } from '../tree/ast.js';
import { quoteIdent } from '../../runtime/duckdb.js';
import { parseExpression } from '../front/parse.js';
import type { StaticResult } from '../exec/static-result.js';
import { SYSTEM_PROCEDURES } from '../../sources/system-procedures.js';

/** A procedure's parameters and how many are required, as SYS.ProcedureParams shows them. */
const signatureOf = (name: string) => {
  const found = SYSTEM_PROCEDURES.find((p) => p.name === name)!;
  return { params: found.params, required: found.required };
};

export type ProcedureResult = StaticResult;

/** What procedures act on; `caller` is the user who called. */
export interface ProcedureContext {
  registry: SourceRegistry;
  /** Absent where no user service is wired (engines built for tests). */
  users?: UserService;
  invites?: InviteService;
  auditLog?: AuditLog;
  /** Drops every cursor of a user (when the user is removed). */
  dropCursors(owner: string): Promise<void>;
  caller: UserDef;
  /** The caller's permissions. */
  access: AccessPolicy;
  /** Runs a SELECT without its rows, as the caller: checks that it binds (a condition's columns). */
  probe?(sql: string): Promise<void>;
  /** Local copies (absent where no copy service is wired). */
  copies?: CopyService;
  /** Signed in with an API key: account procedures (passwords, tokens) are refused. */
  viaApiKey?: boolean;
}

/** What an API key may not do to its owner's account: a leaked key must not take it over. */
const ACCOUNT_PROCEDURES = new Set(['sysadmin.changeuserpwd', 'sysadmin.revoketokens']);

interface Procedure {
  params: string[];
  required: number;
  /**
   * Who may call: 'admin' (users, roles and permissions), 'anyone' (checks inside, e.g. one's
   * own password), or the schema the call alters ([] for the whole database, when it creates
   * one): EXECUTE on the procedure and ALTER on that schema.
   */
  access: 'admin' | 'anyone' | ((args: Record<string, string | null>) => string[]);
  run(args: Record<string, string | null>, context: ProcedureContext): Promise<ProcedureResult>;
}

const sourceRow = (name: string, kind: string, tables: number): ProcedureResult => ({
  columns: ['Name', 'Type', 'Tables'],
  rows: [[name, kind, tables]],
});

const userRow = (name: string, action: string): ProcedureResult => ({ columns: ['Name', 'Action'], rows: [[name, action]] });

/** The schema a copy procedure alters: the copied table's (ALTER on it is needed). */
const copySchema = (args: Record<string, string | null>) => [(args.tableName ?? args.name ?? '').split('.')[0] ?? ''];

const copyRow = (copy: CopyDef, action: string): ProcedureResult => ({
  columns: ['Name', 'Mode', 'State', 'Rows', 'RefreshedAt', 'Action'],
  rows: [[copy.name, copy.mode, copyState(copy), copy.current?.rows ?? null, copy.current?.readAt ?? null, action]],
});

function needCopies(copies: CopyService | undefined): CopyService {
  if (!copies) throw new Error('local copies are not available here');
  return copies;
}

const COPY_PROCEDURES: Record<string, Procedure> = {
  'sysadmin.acceleratetable': {
    ...signatureOf('SYSADMIN.accelerateTable'),
    access: copySchema,
    async run(args, { copies, caller }) {
      const copy = await needCopies(copies).accelerate(
        {
          tableName: args.tableName!,
          mode: args.mode ?? null,
          refreshEvery: args.refreshEvery ?? null,
          maxStaleness: args.maxStaleness ?? null,
          changeColumn: args.changeColumn ?? null,
          keyColumns: args.keyColumns ?? null,
          fullRefreshEvery: args.fullRefreshEvery ?? null,
        },
        caller,
      );
      return copyRow(copy, 'defined');
    },
  },
  'sysadmin.refreshcopy': {
    ...signatureOf('SYSADMIN.refreshCopy'),
    access: copySchema,
    async run(args, { copies }) {
      const service = needCopies(copies);
      const full = ['true', 't', '1', 'yes'].includes((args.full ?? '').trim().toLowerCase());
      const refreshed = await service.refresh(args.name!, full ? 'full' : 'auto');
      if (!refreshed) return copyRow(service.require(args.name!), 'refreshing on another instance');
      return copyRow(refreshed, 'refreshed');
    },
  },
  'sysadmin.pausecopy': {
    ...signatureOf('SYSADMIN.pauseCopy'),
    access: copySchema,
    async run(args, { copies }) {
      return copyRow(await needCopies(copies).setPaused(args.name!, true), 'paused');
    },
  },
  'sysadmin.resumecopy': {
    ...signatureOf('SYSADMIN.resumeCopy'),
    access: copySchema,
    async run(args, { copies }) {
      return copyRow(await needCopies(copies).setPaused(args.name!, false), 'resumed');
    },
  },
  'sysadmin.dropcopy': {
    ...signatureOf('SYSADMIN.dropCopy'),
    access: copySchema,
    async run(args, { copies }) {
      const service = needCopies(copies);
      const copy = service.require(args.name!);
      // A materialized view's copy is the view itself: dropped with its checks (views that read it).
      if (copy.kind === 'view')
        throw badRequest(`${copy.name} is a materialized view.`, 'Use DROP MATERIALIZED VIEW to remove it.', 'Wrong object type');
      await service.drop(copy.name);
      return copyRow({ ...copy, current: null }, 'dropped');
    },
  },
};

const PROCEDURES: Record<string, Procedure> = {
  ...COPY_PROCEDURES,
  'sysadmin.adduser': {
    ...signatureOf('SYSADMIN.addUser'),
    access: 'admin',
    async run(args, { users }) {
      if (!users) throw new Error('user procedures are not available here');
      await users.addPasswordUser(args.name!, args.password!);
      return userRow(args.name!, 'added');
    },
  },
  'sysadmin.addexternaluser': {
    ...signatureOf('SYSADMIN.addExternalUser'),
    access: 'admin',
    async run(args, { users }) {
      if (!users) throw new Error('user procedures are not available here');
      if (!args.provider?.trim()) throw badRequest('The identity provider must be named.', null);
      await users.addExternalUser(args.name!, args.provider);
      return userRow(args.name!, 'added');
    },
  },
  'sysadmin.addrole': {
    ...signatureOf('SYSADMIN.addRole'),
    access: 'admin',
    async run(args, { users }) {
      if (!users) throw new Error('user procedures are not available here');
      await users.addRole(args.name!);
      return { columns: ['Name', 'Action'], rows: [[args.name!, 'added']] };
    },
  },
  'sysadmin.removerole': {
    ...signatureOf('SYSADMIN.removeRole'),
    access: 'admin',
    async run(args, { users }) {
      if (!users) throw new Error('user procedures are not available here');
      await users.removeRole(args.name!);
      return { columns: ['Name', 'Action'], rows: [[args.name!, 'removed']] };
    },
  },
  'sysadmin.adduserrole': {
    ...signatureOf('SYSADMIN.addUserRole'),
    access: 'admin',
    async run(args, { users }) {
      if (!users) throw new Error('user procedures are not available here');
      await users.addUserRole(args.roleName!, args.userName!);
      return { columns: ['Role', 'User', 'Action'], rows: [[args.roleName!, args.userName!, 'granted']] };
    },
  },
  'sysadmin.removeuserrole': {
    ...signatureOf('SYSADMIN.removeUserRole'),
    access: 'admin',
    async run(args, { users }) {
      if (!users) throw new Error('user procedures are not available here');
      await users.removeUserRole(args.roleName!, args.userName!);
      return { columns: ['Role', 'User', 'Action'], rows: [[args.roleName!, args.userName!, 'revoked']] };
    },
  },
  'sysadmin.setpermissions': {
    ...signatureOf('SYSADMIN.setPermissions'),
    access: 'admin',
    async run(args, { users, registry, probe }) {
      if (!users) throw new Error('user procedures are not available here');
      const resource = args.resourceName!;
      // Removing needs no existing object: entries outlive what they name (a dropped table).
      if (args.permissions === null || args.permissions === undefined) parseResource(resource);
      else checkResource(parseResource(resource), registry);
      const path = parseResource(resource);
      const condition = args.condition?.trim() || null;
      const mask = args.mask?.trim() || null;
      if (condition !== null && path.length < 2) {
        throw badRequest(
          'A condition applies to a table (a row condition) or a column (where its mask applies).',
          `"${resource}" names neither.`,
        );
      }
      if (mask !== null && path.length !== 3)
        throw badRequest('A mask applies to a column: name it as schema.table.column.', `"${resource}" is not a column.`);
      if (condition !== null && path.length === 3 && mask === null)
        throw badRequest('A condition on a column says where its mask applies; give the mask too.', null);
      for (const [text, what] of [
        [condition, 'condition'],
        [mask, 'mask'],
      ] as const) {
        if (text !== null) checkTablesRead(parseExpression(text, what), registry, what);
      }
      // The columns and functions they name must exist: run them once over the object, without rows.
      if ((condition !== null || mask !== null) && probe) {
        const object = `${quoteIdent(path[0]!)}.${quoteIdent(path[1]!)}`;
        const sql = `SELECT ${mask === null ? '1' : `(${mask}\n)`} FROM ${object} WHERE (${condition ?? 'TRUE'}\n) LIMIT 0`;
        await probe(sql).catch((err: unknown) => {
          if (err instanceof ApiError && err.status < 500) {
            throw badRequest(
              `The ${mask !== null ? 'mask or its condition' : 'condition'} cannot be evaluated on ${path.slice(0, 2).join('.')}: ${err.description}`,
              err.hint,
              `Invalid ${mask !== null ? 'mask' : 'condition'}`,
            );
          }
          throw err;
        });
      }
      const maskOrder = args.maskOrder === null || args.maskOrder === undefined ? null : Number(args.maskOrder);
      if (maskOrder !== null && !Number.isSafeInteger(maskOrder))
        throw badRequest(`maskOrder "${args.maskOrder}" is not an integer.`, null);
      const permissions = args.permissions === null || args.permissions === undefined ? null : canonicalPermissions(args.permissions);
      await users.setPermissions({ role: args.role!, resource: resource.trim(), permissions, condition, mask, maskOrder }, sameResource);
      return {
        columns: ['Role', 'Resource', 'Permissions', 'Action'],
        rows: [[args.role!, resource.trim(), permissions, permissions === null ? 'removed' : 'set']],
      };
    },
  },
  'sysadmin.inviteuser': {
    ...signatureOf('SYSADMIN.inviteUser'),
    access: 'admin',
    async run(args, { invites }) {
      if (!invites) throw new Error('invitations are not available here');
      const { token, expiresAt } = await invites.invite(args.name!);
      return { columns: ['Name', 'Token', 'ExpiresAt'], rows: [[args.name!, token, expiresAt]] };
    },
  },
  'sysadmin.removeuser': {
    ...signatureOf('SYSADMIN.removeUser'),
    access: 'admin',
    async run(args, { users, dropCursors, caller }) {
      if (!users) throw new Error('user procedures are not available here');
      if (args.name === caller.name) throw badRequest('You cannot remove yourself.', 'Ask another administrator.');
      await users.removeUser(args.name!);
      await dropCursors(args.name!);
      return userRow(args.name!, 'removed');
    },
  },
  'sysadmin.changeuserpwd': {
    ...signatureOf('SYSADMIN.changeUserPwd'),
    // Administrators for anyone, everybody for themselves (checked below).
    access: 'anyone',
    async run(args, { users, caller }) {
      if (!users) throw new Error('user procedures are not available here');
      if (args.name !== caller.name && !caller.roles.includes('admin')) {
        throw new ApiError(403, 'Forbidden', 'Only administrators may change the passwords of other users.', null);
      }
      await users.changePassword(args.name!, args.password!);
      return userRow(args.name!, 'password changed');
    },
  },
  'sysadmin.revoketokens': {
    ...signatureOf('SYSADMIN.revokeTokens'),
    access: 'anyone',
    async run(args, { users, caller }) {
      if (!users) throw new Error('user procedures are not available here');
      if (args.name !== caller.name && !caller.roles.includes('admin')) {
        throw new ApiError(403, 'Forbidden', 'Only administrators may revoke the tokens of other users.', null);
      }
      await users.revokeTokens(args.name!);
      return userRow(args.name!, 'tokens revoked');
    },
  },
  'sysadmin.createconnection': {
    ...signatureOf('SYSADMIN.createConnection'),
    access: () => [],
    async run(args, { registry }) {
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
    ...signatureOf('SYSADMIN.createDataSource'),
    access: () => [],
    async run(args, { registry }) {
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
      return { ...sourceRow(source.name, source.kind, source.tables.length), warnings: importWarnings(source) };
    },
  },
  'sysadmin.alterdatasource': {
    ...signatureOf('SYSADMIN.alterDataSource'),
    access: (args) => [args.name ?? ''],
    async run(args, { registry }) {
      const name = args.name ?? '';
      const source = registry.findSource(name);
      if (!source) throw notFound(`Data source "${name}" does not exist.`, 'GET /rest/api/source lists the sources.', 'Unknown source');
      const change = connectionChangeFromSpec(
        source.kind,
        source.model,
        args.connectionOrResourceAdapterProperties,
        args.encryptedProperties,
      );
      const altered = await registry.alterSource(source.name, change);
      return { ...sourceRow(altered.name, altered.kind, altered.tables.length), warnings: importWarnings(altered) };
    },
  },
  'sysadmin.removedatasource': {
    ...signatureOf('SYSADMIN.removeDataSource'),
    access: (args) => [args.name ?? ''],
    async run(args, { registry }) {
      const source = await registry.removeSource(args.name ?? '');
      return sourceRow(source.name, source.kind, source.tables.length);
    },
  },
  'sysadmin.refreshdatasource': {
    ...signatureOf('SYSADMIN.refreshDataSource'),
    access: (args) => [args.name ?? ''],
    async run(args, { registry }) {
      const source = await registry.refreshSource(args.name ?? '');
      return { ...sourceRow(source.name, source.kind, source.tables.length), warnings: importWarnings(source) };
    },
  },
  'sysadmin.removeconnection': {
    ...signatureOf('SYSADMIN.removeConnection'),
    access: () => [],
    async run(args, { registry }) {
      await registry.removeConnection(args.name ?? '');
      return { columns: ['Name'], rows: [[args.name]] };
    },
  },
};

/** The tables a condition or mask reads must exist, and be tables: views are not expanded there. */
function checkTablesRead(expression: Record<string, unknown>, registry: SourceRegistry, what: string): void {
  walk(expression, (nodeType, node) => {
    if (nodeType !== 'RangeVar') return;
    const resolved = registry.resolve(typeof node.schemaname === 'string' ? node.schemaname : undefined, String(node.relname));
    if (resolved.origin === 'view')
      throw badRequest(
        `A ${what} cannot read a view (${resolved.schema}.${resolved.table.name}).`,
        'Name the tables the view reads.',
        `Invalid ${what}`,
      );
  });
}

/** Resource names are case-insensitive; `"a"."b"` and `a.b` name the same resource. */
function sameResource(a: string, b: string): boolean {
  const [x, y] = [parseResource(a), parseResource(b)];
  return x.length === y.length && x.every((part, i) => part.toLowerCase() === y[i]!.toLowerCase());
}

/**
 * A resource of setPermissions must exist: `*`, a schema, a table, a column, or a procedure
 * (SYSADMIN.name, or a source's). Returns its path with the catalog's spelling.
 */
function checkResource(path: string[], registry: SourceRegistry): string[] {
  if (path.length === 0) return path;
  const schema = registry.requireSchema(path[0]!);
  if (path.length === 1) return [schema];
  const procedure =
    schema === 'SYSADMIN' ? CANONICAL_NAMES.find((n) => n.toLowerCase() === `sysadmin.${path[1]!.toLowerCase()}`) : undefined;
  if (procedure && path.length === 2) return [schema, procedure.split('.')[1]!];
  // A source's procedure (a name no table of the source has).
  const sourceProcedure = path.length === 2 && !registry.tablesOf(schema).some((t) => t.name.toLowerCase() === path[1]!.toLowerCase());
  const found = sourceProcedure ? registry.findSourceProcedure(schema, path[1]!) : undefined;
  if (found) return [schema, found.procedure.name];
  const table = registry.resolve(schema, path[1]!).table;
  if (path.length === 2) return [schema, table.name];
  const column = table.columns.find((c) => c.name.toLowerCase() === path[2]!.toLowerCase());
  if (!column) throw notFound(`Column "${path[2]}" of ${schema}.${table.name} does not exist.`, null, 'Unknown column');
  return [schema, table.name, column.name];
}

/** The procedures' names as documented (the parser lower-cases unquoted names). */
const CANONICAL_NAMES = SYSTEM_PROCEDURES.map((p) => p.name);

/** A procedure call: its qualified name and its arguments (positional, then named). */
export interface ProcedureCall {
  name: string;
  positional: Array<string | null>;
  named: Record<string, string | null>;
}

export async function callProcedure(call: ProcedureCall, context: ProcedureContext): Promise<ProcedureResult> {
  const user = context.caller;
  const procedure = PROCEDURES[call.name.toLowerCase()];
  if (!procedure)
    throw notFound(`Procedure "${call.name}" does not exist.`, `Available: ${CANONICAL_NAMES.join(', ')}.`, 'Unknown procedure');
  const action = CANONICAL_NAMES.find((n) => n.toLowerCase() === call.name.toLowerCase()) ?? call.name;
  const refuse = (err: ApiError) => {
    context.auditLog?.record({ user: user.name, action, target: null, outcome: 'refused', address: null });
    return err;
  };
  if (procedure.access === 'admin' && !context.access.admin) {
    throw refuse(new ApiError(403, 'Forbidden', `Only administrators may call ${action}.`, 'Ask an administrator, or for the admin role.'));
  }
  if (context.viaApiKey && ACCOUNT_PROCEDURES.has(call.name.toLowerCase())) {
    context.auditLog?.record({ user: user.name, action, target: null, outcome: 'refused', address: null });
    throw new ApiError(403, 'Forbidden', `${action} cannot be called with an API key.`, 'Sign in with your password or a login token.');
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
  if (typeof procedure.access === 'function') {
    const [schema, procedureName] = action.split('.') as [string, string];
    const altered = procedure.access(args);
    try {
      context.access.require('E', [schema, procedureName], 'procedure');
      context.access.require('A', altered, 'schema');
    } catch (err) {
      throw refuse(err as ApiError);
    }
  }
  // Every procedure changes the catalog (users, sources): audited with its target, never its arguments.
  const target = args[procedure.params[0]!] ?? null;
  try {
    const result = await procedure.run(args, context);
    context.auditLog?.record({ user: user.name, action, target, outcome: 'ok', address: null });
    return result;
  } catch (err) {
    const refused = err instanceof ApiError && err.status === 403;
    context.auditLog?.record({ user: user.name, action, target, outcome: refused ? 'refused' : 'failed', address: null });
    throw err;
  }
}
