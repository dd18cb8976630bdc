/** The engine's front: SQL text in, an open execution out (parse -> bind -> execute). */
import type { SourceRegistry } from '../catalog/sources.js';
import type { UserDef } from '../catalog/types.js';
import { ApiError, badRequest, forbidden } from '../errors.js';
import { AccessPolicy } from '../security/permissions.js';
import { explainHiddenColumn, hiddenColumnDenial, withholdDataErrors } from './access/access-errors.js';
import { checkAllowed } from './front/allow-list.js';
import { fieldNames, walk } from './front/ast.js';
import { bindStatement, type BoundStatement } from './front/bind.js';
import type { DuckRuntime } from '../runtime/duckdb.js';
import { openExecution, openStaticExecution, type Execution } from './exec/execute.js';
import { openSourceSelectExecution, openWholeExecution } from './exec/source-execution.js';
import { chooseRoute } from './plan/route.js';
import { parseStatement, requireFaithful } from './front/parse.js';
import type { ParseResult } from '@pgsql/types';
import { executeDml, isDml } from './exec/dml.js';
import { explain, explainWhole } from './plan/explain.js';
import { callProcedure, type ProcedureCall, type ProcedureContext } from './exec/procedures.js';
import { staticResultSql } from './exec/static-result.js';
import { createView, dropViews } from './access/views.js';

type Json = Record<string, unknown>;

/** What every statement handler gets. */
interface StatementContext {
  tree: ParseResult;
  /** The statement's node ({SelectStmt: ...}, {CallStmt: ...}, ...). */
  statement: Json;
  user: UserDef;
  signal: AbortSignal;
  policy: AccessPolicy;
  viaApiKey: boolean;
}

export class Engine {
  constructor(
    readonly registry: SourceRegistry,
    readonly runtime: DuckRuntime,
    private readonly vdbName: string,
    private readonly options: {
      pushdown: boolean;
      /** Send statements of one PostgreSQL source whole (default true; off for diagnosis). */
      wholeStatements?: boolean;
      dependentJoin: { maxKeys: number; batchSize: number };
    },
    /** Users and cursors, for the user procedures (absent: those procedures are unavailable). */
    private readonly accounts?: Pick<ProcedureContext, 'users' | 'invites' | 'auditLog' | 'dropCursors'>,
  ) {}

  /** Parses and binds `sql`, loads what sources must supply, and prepares the result. */
  async open(sql: string, user: UserDef, signal: AbortSignal, access: { readOnly?: boolean; apiKey?: boolean } = {}): Promise<Execution> {
    const tree = parseStatement(sql);
    // Only what vdb lists may be called, whatever the statement's kind (allow-list.ts).
    checkAllowed(tree);
    requireFaithful(tree);
    if (access.readOnly) {
      const statement = tree.stmts?.[0]?.stmt as Json | undefined;
      if (isDml(statement) || (statement && ('CallStmt' in statement || 'ViewStmt' in statement || 'DropStmt' in statement))) {
        throw new ApiError(
          403,
          'Forbidden',
          'A read-only API key may only read.',
          'Use a key created with readOnly: false for writes and procedures.',
        );
      }
    }
    return this.openTree(tree, user, signal, access.apiKey ?? false);
  }

  /** The rows of a SELECT (of an INSERT ... SELECT) as text, for writing them to a source. */
  private async selectRows(select: ParseResult, user: UserDef, signal: AbortSignal) {
    const execution = await this.openTree(select, user, signal);
    // Errors met while the rows are read are the statement's, in API terms (not the target's).
    async function* rows() {
      try {
        yield* execution.textRows();
      } catch (err) {
        throw execution.translateError(err);
      }
    }
    return { columns: execution.columns.length, rows: rows(), close: () => execution.close() };
  }

  private async openTree(tree: ParseResult, user: UserDef, signal: AbortSignal, viaApiKey = false): Promise<Execution> {
    const statement = (tree.stmts?.[0]?.stmt ?? {}) as Json;
    // The user's permissions as they are now, for this statement.
    const context: StatementContext = {
      tree,
      statement,
      user,
      signal,
      policy: new AccessPolicy(user, this.registry.permissions),
      viaApiKey,
    };
    const handler = this.handlers[Object.keys(statement)[0] ?? ''] ?? this.selectStatement;
    return handler.call(this, context);
  }

  /** The handler of each statement kind; any other kind goes to `select`, whose binding refuses it. */
  private readonly handlers: Record<string, (context: StatementContext) => Promise<Execution>> = {
    ViewStmt: this.createViewStatement,
    DropStmt: this.dropViewStatement,
    CallStmt: this.callStatement,
    ExplainStmt: this.explainStatement,
    InsertStmt: this.writeStatement,
    UpdateStmt: this.writeStatement,
    DeleteStmt: this.writeStatement,
  };

  private async createViewStatement({ statement, user, signal, policy }: StatementContext): Promise<Execution> {
    const result = await createView(statement.ViewStmt as Json, {
      registry: this.registry,
      policy,
      auditLog: this.accounts?.auditLog,
      openSelect: (select) => this.openTree(select, user, signal),
      narrowedFor: (select) => bindStatement(select, this.registry, this.vdbName, policy).narrowed,
    });
    return openStaticExecution(this.runtime, staticResultSql(result), signal);
  }

  /** DROP VIEW; other DROPs are refused by `select`. */
  private async dropViewStatement(context: StatementContext): Promise<Execution> {
    const { statement, signal, policy } = context;
    if ((statement.DropStmt as Json).removeType !== 'OBJECT_VIEW') return this.selectStatement(context);
    const result = await dropViews(statement.DropStmt as Json, { registry: this.registry, policy, auditLog: this.accounts?.auditLog });
    return openStaticExecution(this.runtime, staticResultSql(result), signal);
  }

  private async callStatement({ statement, user, signal, policy, viaApiKey }: StatementContext): Promise<Execution> {
    const result = await callProcedure(procedureCall(statement.CallStmt as Json), {
      registry: this.registry,
      users: this.accounts?.users,
      invites: this.accounts?.invites,
      auditLog: this.accounts?.auditLog,
      dropCursors: this.accounts?.dropCursors ?? (async () => undefined),
      caller: user,
      access: policy,
      probe: async (sql) => (await this.openTree(parseStatement(sql), user, signal)).close(),
      viaApiKey,
    });
    return openStaticExecution(this.runtime, staticResultSql(result), signal);
  }

  private async explainStatement({ tree, statement, user, signal, policy }: StatementContext): Promise<Execution> {
    const explainStmt = statement.ExplainStmt as Json;
    const options = ((explainStmt.options as Json[] | undefined) ?? []).map((o) => String((o.DefElem as Json | undefined)?.defname ?? ''));
    if (options.some((o) => o.toLowerCase() === 'analyze')) {
      throw badRequest(
        'EXPLAIN ANALYZE is not supported.',
        'EXPLAIN shows the plan without running it; SYSLOG.QueryLog shows what ran, with durations.',
        'Unsupported statement',
      );
    }
    const inner = explainStmt.query;
    if (isDml(inner as Json)) {
      throw badRequest('EXPLAIN of INSERT, UPDATE or DELETE is not supported.', 'EXPLAIN a SELECT.', 'Unsupported statement');
    }
    const written = structuredClone(inner);
    const bound = bindStatement({ ...tree, stmts: [{ stmt: inner as never }] }, this.registry, this.vdbName, policy);
    // Running would fail on a hidden column (a 403); EXPLAIN does not run, so look for one.
    walk(written, (kind, node) => {
      if (kind !== 'ColumnRef') return;
      const name = fieldNames(node.fields).pop() ?? '*';
      const qualified = bound.hiddenColumns.get(name.toLowerCase());
      if (qualified) throw hiddenColumnDenial(qualified, user.name);
    });
    // A plan names every table it reads: only those the user may read themselves.
    const behind = bound.tables.filter((t) => t.resolved.kind !== 'system' && !policy.canRead(t.resolved.schema, t.resolved.table));
    if (behind.length > 0) {
      throw forbidden(
        `EXPLAIN would show tables you may not read (${behind.map((t) => `${t.resolved.schema}.${t.resolved.table.name}`).join(', ')}), read here through views or row conditions.`,
        'Run the statement itself, or ask an administrator for READ on those tables.',
      );
    }
    const route = await chooseRoute(bound, this.registry, this.options);
    // A whole statement the source refuses (unknown function, ...) runs federated, as execution does.
    const plan =
      route.kind === 'whole'
        ? await route.plan.connector.describeStatement(route.plan.sql).then(
            () => explainWhole(route.plan),
            () => null,
          )
        : route.kind === 'source-select'
          ? explainWhole({ source: route.plan.source, sql: route.plan.pushed.sql })
          : null;
    return openStaticExecution(this.runtime, staticResultSql(plan ?? explain(bound, this.registry, this.options.pushdown)), signal);
  }

  private async writeStatement({ tree, user, signal, policy }: StatementContext): Promise<Execution> {
    const result = await executeDml(tree, policy, this.registry, this.vdbName, (select, s) => this.selectRows(select, user, s), signal);
    return openStaticExecution(this.runtime, staticResultSql(result), signal, result.sourceQueries);
  }

  private async selectStatement({ tree, user, signal, policy }: StatementContext): Promise<Execution> {
    const bound = bindStatement(tree, this.registry, this.vdbName, policy);
    const narrowed = bound.narrowed.size > 0 || bound.hiddenColumns.size > 0 || bound.readsViews;
    try {
      const execution = await this.openBound(bound, user, signal);
      if (!narrowed) return execution;
      const translate = execution.translateError.bind(execution);
      return Object.assign(execution, { narrowed, translateError: (err: unknown) => withholdDataErrors(translate(err)) });
    } catch (err) {
      const explained = explainHiddenColumn(err, bound.hiddenColumns, user.name);
      throw narrowed ? withholdDataErrors(explained) : explained;
    }
  }

  private async openBound(bound: BoundStatement, user: UserDef, signal: AbortSignal): Promise<Execution> {
    const route = await chooseRoute(bound, this.registry, this.options);
    // A narrower route may still decline once it meets the source: then the statement runs federated.
    const execution =
      route.kind === 'whole'
        ? await openWholeExecution(route.plan, this.runtime, signal)
        : route.kind === 'source-select'
          ? await openSourceSelectExecution(bound, route.plan, this.runtime, signal)
          : null;
    if (execution) return execution;
    return openExecution(bound, this.registry, this.runtime, { signal, user, ...this.options });
  }
}

/** Only constants are accepted as procedure arguments. */
function constantOf(node: unknown): string | null {
  const constant = (node as { A_Const?: Json } | undefined)?.A_Const;
  if (!constant) throw badRequest('Procedure arguments must be constants (strings, numbers or NULL).', null, 'Invalid procedure call');
  if (constant.isnull) return null;
  for (const key of ['sval', 'ival', 'fval', 'boolval']) {
    const inner = constant[key] as Json | undefined;
    if (inner) return String(Object.values(inner)[0] ?? (key === 'ival' ? 0 : key === 'boolval' ? false : ''));
  }
  return null;
}

function procedureCall(call: Json): ProcedureCall {
  const funccall = call.funccall as Json;
  const name = (funccall.funcname as Array<{ String: { sval: string } }>).map((n) => n.String.sval).join('.');
  const positional: Array<string | null> = [];
  const named: Record<string, string | null> = {};
  for (const arg of (funccall.args as Json[] | undefined) ?? []) {
    const namedArg = arg.NamedArgExpr as Json | undefined;
    if (namedArg) named[String(namedArg.name)] = constantOf(namedArg.arg);
    else positional.push(constantOf(arg));
  }
  return { name, positional, named };
}
