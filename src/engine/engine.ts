/** The engine's front: SQL text in, an open execution out (parse -> bind -> execute). */
import { constantExecution } from './exec/constant-result.js';
import { bindParameters, type ParamValue } from './front/params.js';
import type { SourceRegistry } from '../sources/registry.js';
import type { UserDef } from '../catalog/types.js';
import { ApiError, badRequest, forbidden } from '../errors.js';
import { AccessPolicy } from '../security/permissions.js';
import { hiddenColumnDenial } from './access/access-errors.js';
import { checkAllowed } from './front/allow-list.js';
import { asKind, fieldNames, nodeKind, statementOf, walk } from './tree/ast.js';
import { bindStatement, type BoundStatement } from './access/bind.js';
import { DEFAULT_READING, LIVE_READING, type CopyReading } from '../sources/copies.js';
import { CopyService } from './statements/copies.js';
import os from 'node:os';
import { rewriteCatalogCalls } from './access/catalog-functions.js';
import type { DuckRuntime } from '../runtime/duckdb.js';
import { openFederatedExecution, openStaticExecution, type Execution } from './exec/execute.js';
import { engineColumnsOf, openSourceSelectExecution, openWholeExecution } from './exec/source-execution.js';
import { choosePlan, type Plan, type SourceSelectRoute, type WholeRoute } from './plan/choose.js';
import { openShippedExecution } from './exec/ship.js';
import { parseStatement, requireFaithful } from './front/parse.js';
import { parseInWorker } from './front/parse-pool.js';
import { checkStatementBytes, DEFAULT_STATEMENT_SIZE, type StatementSizeLimits } from './front/statement-size.js';
import { CpuLane } from './cpu-lane.js';
import type { CallStmt, Node, ParseResult } from '@pgsql/types';
import { executeDml, isDml } from './statements/dml.js';
import { explainPlan } from './plan/explain.js';
import { callProcedure, type ProcedureCall, type ProcedureContext } from './statements/procedures.js';
import {
  argumentsOf,
  openSourceProcedure,
  sourceProcedureOf,
  type ProcedureArguments,
  type SourceProcedureCall,
} from './statements/source-procedures.js';
import { staticResultSql, type StaticResult } from './exec/static-result.js';
import { createView, dropViews, type ViewContext } from './statements/views.js';
import { createMaterializedView, dropMaterializedViews, refreshMaterializedView } from './statements/materialized-views.js';
import { StatementMemory, type Learned, type StatementText } from './statement-memory.js';
import { guarded, routed } from './opened.js';

/** What every statement handler gets. */
interface StatementContext {
  tree: ParseResult;
  /** The statement's node ({SelectStmt: ...}, {CallStmt: ...}, ...); undefined for none. */
  statement: Node | undefined;
  user: UserDef;
  signal: AbortSignal;
  policy: AccessPolicy;
  viaApiKey: boolean;
  /** Filled in by a SELECT: what its text may be linked to (see `learnText`). */
  learned?: Learned;
  /** A long statement's wait for a turn of the event loop before an expensive stage (cpu-lane.ts). */
  turn?: () => Promise<void>;
  /** Whether tables are read from their local copies (sources/copies.ts). */
  reading: CopyReading;
}

/** What a request asks of a statement besides its text. */
export interface StatementAccess {
  readOnly?: boolean;
  apiKey?: boolean;
  params?: readonly ParamValue[];
  /** Live data, or copies no older than a bound (default: each copy's own bound). */
  reading?: CopyReading;
}

export class Engine {
  /** What the engine remembers of statements, around the pipeline (statement-memory.ts). */
  private readonly memory: StatementMemory;
  /** Statements of MySQL/SQLite answered from their rows without the engine since the start (for the tests). */
  direct = 0;

  /** Statements answered from a template since the start (for the tests and operators). */
  get templated(): number {
    return this.memory.templated;
  }

  /** Statements answered by their text, unparsed, since the start (for the tests). */
  get byText(): number {
    return this.memory.byText;
  }

  /** Hits of the engine's caches since the start, by cache (GET /metrics). */
  cacheHits(): Record<string, number> {
    return this.memory.hits();
  }

  constructor(
    readonly registry: SourceRegistry,
    readonly runtime: DuckRuntime,
    private readonly vdbName: string,
    private readonly options: {
      pushdown: boolean;
      /** Send statements of one PostgreSQL source whole (default true; off for diagnosis). */
      wholeStatements?: boolean;
      /** Write small results of MySQL/SQLite statements sent whole without the engine (default true; off for diagnosis). */
      directRows?: boolean;
      dependentJoin: { maxKeys: number; batchSize: number; maxShippedRows?: number; lookupArrays?: boolean; keyLookups?: boolean };
      /** How large a user's statement may be (statement-size.ts; default DEFAULT_STATEMENT_SIZE). */
      statementSize?: StatementSizeLimits;
    },
    /** Users and cursors, for the user procedures (absent: those procedures are unavailable). */
    private readonly accounts?: Pick<ProcedureContext, 'users' | 'invites' | 'auditLog' | 'dropCursors'>,
  ) {
    this.memory = new StatementMemory(registry, runtime, vdbName, options.statementSize);
    this.copies = new CopyService({
      registry,
      runtime,
      vdbName,
      options: { pushdown: options.pushdown, dependentJoin: options.dependentJoin },
      instance: `${os.hostname()}:${process.pid}`,
    });
  }

  /** Local copies: defined, refreshed and dropped (statements/copies.ts); the schedule runs their refreshes. */
  readonly copies: CopyService;

  /** Parses and binds `sql`, loads what sources must supply, and prepares the result. */
  async open(sql: string, user: UserDef, signal: AbortSignal, access: StatementAccess = {}): Promise<Execution> {
    const limits = this.options.statementSize ?? DEFAULT_STATEMENT_SIZE;
    // Bounded before any work on the text (statement-size.ts).
    checkStatementBytes(sql, limits);
    const reading = access.reading ?? DEFAULT_READING;
    const text = this.memory.text(sql, user, access.apiKey ?? false, access.params, reading);
    if (text) {
      const known = await this.memory.answerText(text, sql, user, signal);
      if (known) return known;
    }
    // Long statements are parsed and measured in a worker, and refused there beyond the limits.
    const tree = await parseInWorker(sql, limits);
    // Their stages on the main thread each wait for a turn of their own (cpu-lane.ts); a short statement's are too short to matter.
    const turn = sql.length > LANE_BYTES ? () => this.lane.turn() : undefined;
    await turn?.();
    return this.openParsed(tree, sql, text, user, signal, access, turn);
  }

  /**
   * Calls a source's procedure once per entry of `calls` (REST: an object or an array of them),
   * answering their rows in order.
   */
  async openProcedureCalls(
    schema: string,
    name: string,
    calls: ProcedureArguments[],
    user: UserDef,
    signal: AbortSignal,
    access: { readOnly?: boolean; apiKey?: boolean } = {},
  ): Promise<Execution> {
    const policy = new AccessPolicy(user, this.registry.permissions);
    if (schema.toUpperCase() !== 'SYSADMIN') {
      return openSourceProcedure(this.registry, this.runtime, { schema, name, calls }, policy, { readOnlyKey: access.readOnly }, signal);
    }
    if (access.readOnly) throw readOnlyKeyRefusal();
    // vdb's own procedures, one after the other; their rows in order.
    const context = this.procedureContext(user, signal, policy, access.apiKey ?? false);
    let merged: { columns: string[]; rows: StaticResult['rows']; warnings: string[] } | null = null;
    for (const call of calls) {
      const result = await callProcedure({ name: `SYSADMIN.${name}`, ...call }, context);
      merged ??= { columns: result.columns, rows: [], warnings: [] };
      merged.rows.push(...result.rows);
      merged.warnings.push(...(result.warnings ?? []));
    }
    const execution = await openStaticExecution(this.runtime, staticResultSql(merged!), signal);
    execution.warnings.push(...merged!.warnings);
    return execution;
  }

  /** `CALL src.proc(...)` or `SELECT * FROM src.fn(...)` of a source's procedure, or null for other statements. */
  private sourceProcedureCall(statement: Node | undefined): SourceProcedureCall | null {
    // Most statements: no source has procedures, nothing to look for.
    if (!this.registry.sources.some((s) => (s.procedures?.length ?? 0) > 0)) return null;
    return sourceProcedureOf(statement, {
      isSource: (schema) => this.registry.findSource(schema) !== undefined,
      isProcedure: (schema, name) => this.registry.findSourceProcedure(schema, name) !== undefined,
    });
  }

  /** Turns of the event loop for the main-thread stages of long statements, one statement per turn. */
  private readonly lane = new CpuLane();

  private async openParsed(
    tree: ParseResult,
    sql: string,
    text: StatementText | null,
    user: UserDef,
    signal: AbortSignal,
    access: StatementAccess,
    turn?: () => Promise<void>,
  ): Promise<Execution> {
    // $1, $2, ... become the values given with the statement (params.ts); without values, a $n is refused here.
    bindParameters(tree, access.params ?? []);
    // A source's procedure, called or read whole (source-procedures.ts): it checks its caller itself.
    const sourceCall = this.sourceProcedureCall(statementOf(tree));
    if (sourceCall) {
      const policy = new AccessPolicy(user, this.registry.permissions);
      return openSourceProcedure(this.registry, this.runtime, sourceCall, policy, { readOnlyKey: access.readOnly }, signal);
    }
    // PostgreSQL's catalog functions and casts, answered from vdb's catalog for this user (catalog-functions.ts).
    rewriteCatalogCalls(tree, {
      registry: this.registry,
      policy: new AccessPolicy(user, this.registry.permissions),
      vdbName: this.vdbName,
    });
    // Only what vdb lists may be called, whatever the statement's kind (allow-list.ts).
    checkAllowed(tree);
    requireFaithful(tree);
    if (access.readOnly) {
      const statement = statementOf(tree);
      const changes = ['CallStmt', 'ViewStmt', 'DropStmt', 'CreateTableAsStmt', 'RefreshMatViewStmt'];
      if (isDml(statement) || (statement && changes.some((kind) => kind in statement))) {
        throw readOnlyKeyRefusal();
      }
    }
    const learned: Learned = {};
    // The checks above and the shape and copy of the tree in `selectStatement` each take a turn.
    await turn?.();
    const execution = await this.openTree(tree, user, signal, access.apiKey ?? false, learned, turn, access.reading);
    if (text) this.memory.learnText(text, sql, learned, access.params);
    return execution;
  }

  /** The rows of a SELECT (of an INSERT ... SELECT) as text, for writing them to a source. */
  private async selectRows(select: ParseResult, user: UserDef, signal: AbortSignal) {
    // What a write reads comes from the sources, never from copies that may lag behind them.
    const execution = await this.openTree(select, user, signal, false, undefined, undefined, LIVE_READING);
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

  private async openTree(
    tree: ParseResult,
    user: UserDef,
    signal: AbortSignal,
    viaApiKey = false,
    learned?: Learned,
    turn?: () => Promise<void>,
    reading: CopyReading = DEFAULT_READING,
  ): Promise<Execution> {
    const statement = statementOf(tree);
    // The user's permissions as they are now, for this statement.
    const context: StatementContext = {
      tree,
      statement,
      user,
      signal,
      policy: new AccessPolicy(user, this.registry.permissions),
      viaApiKey,
      learned,
      turn,
      reading,
    };
    const handler = (statement && this.handlers[nodeKind(statement)]) ?? this.selectStatement;
    return handler.call(this, context);
  }

  /** The handler of each statement kind; any other kind goes to `select`, whose binding refuses it. */
  private readonly handlers: Record<string, (context: StatementContext) => Promise<Execution>> = {
    ViewStmt: this.createViewStatement,
    CreateTableAsStmt: this.createMaterializedViewStatement,
    RefreshMatViewStmt: this.refreshMaterializedViewStatement,
    DropStmt: this.dropViewStatement,
    CallStmt: this.callStatement,
    ExplainStmt: this.explainStatement,
    InsertStmt: this.writeStatement,
    UpdateStmt: this.writeStatement,
    DeleteStmt: this.writeStatement,
  };

  /** What creating a view or materialized view checks its SELECT with, as the creator. */
  private viewContext({ user, signal, policy }: StatementContext): ViewContext {
    return {
      registry: this.registry,
      policy,
      auditLog: this.accounts?.auditLog,
      // Live: the columns and the check are the SELECT's own, never a copy's.
      openSelect: (select) => this.openTree(select, user, signal, false, undefined, undefined, LIVE_READING),
      narrowedFor: (select) => bindStatement(select, this.registry, this.vdbName, policy, LIVE_READING).narrowed,
    };
  }

  private async createViewStatement(context: StatementContext): Promise<Execution> {
    const result = await createView(asKind(context.statement, 'ViewStmt')!, this.viewContext(context));
    return openStaticExecution(this.runtime, staticResultSql(result), context.signal);
  }

  /** CREATE MATERIALIZED VIEW; CREATE TABLE AS is refused by `select`. */
  private async createMaterializedViewStatement(context: StatementContext): Promise<Execution> {
    const create = asKind(context.statement, 'CreateTableAsStmt')!;
    if (create.objtype !== 'OBJECT_MATVIEW') return this.selectStatement(context);
    const result = await createMaterializedView(create, { ...this.viewContext(context), copies: this.copies, signal: context.signal });
    return openStaticExecution(this.runtime, staticResultSql(result), context.signal);
  }

  private async refreshMaterializedViewStatement(context: StatementContext): Promise<Execution> {
    const refresh = asKind(context.statement, 'RefreshMatViewStmt')!;
    const result = await refreshMaterializedView(refresh, { ...this.viewContext(context), copies: this.copies, signal: context.signal });
    return openStaticExecution(this.runtime, staticResultSql(result), context.signal);
  }

  /** DROP VIEW and DROP MATERIALIZED VIEW; other DROPs are refused by `select`. */
  private async dropViewStatement(context: StatementContext): Promise<Execution> {
    const { statement, signal, policy } = context;
    const drop = asKind(statement, 'DropStmt')!;
    if (drop.removeType === 'OBJECT_MATVIEW') {
      const result = await dropMaterializedViews(drop, { ...this.viewContext(context), copies: this.copies, signal });
      return openStaticExecution(this.runtime, staticResultSql(result), signal);
    }
    if (drop.removeType !== 'OBJECT_VIEW') return this.selectStatement(context);
    const result = await dropViews(drop, { registry: this.registry, policy, auditLog: this.accounts?.auditLog });
    return openStaticExecution(this.runtime, staticResultSql(result), signal);
  }

  private async callStatement({ statement, user, signal, policy, viaApiKey }: StatementContext): Promise<Execution> {
    const result = await callProcedure(
      procedureCall(asKind(statement, 'CallStmt')!),
      this.procedureContext(user, signal, policy, viaApiKey),
    );
    const execution = await openStaticExecution(this.runtime, staticResultSql(result), signal);
    execution.warnings.push(...(result.warnings ?? []));
    return execution;
  }

  /** What vdb's own procedures act on, for `user`. */
  private procedureContext(user: UserDef, signal: AbortSignal, policy: AccessPolicy, viaApiKey: boolean): ProcedureContext {
    return {
      registry: this.registry,
      users: this.accounts?.users,
      invites: this.accounts?.invites,
      auditLog: this.accounts?.auditLog,
      dropCursors: this.accounts?.dropCursors ?? (async () => undefined),
      caller: user,
      access: policy,
      copies: this.copies,
      probe: async (sql) => (await this.openTree(parseStatement(sql), user, signal)).close(),
      viaApiKey,
    };
  }

  private async explainStatement({ tree, statement, user, signal, policy, reading }: StatementContext): Promise<Execution> {
    const explainStmt = asKind(statement, 'ExplainStmt')!;
    const options = (explainStmt.options ?? []).map((o) => String(asKind(o, 'DefElem')?.defname ?? ''));
    if (options.some((o) => o.toLowerCase() === 'analyze')) {
      throw badRequest(
        'EXPLAIN ANALYZE is not supported.',
        'EXPLAIN shows the plan without running it; SYSLOG.QueryLog shows what ran, with durations.',
        'Unsupported statement',
      );
    }
    const inner = explainStmt.query;
    if (isDml(inner)) {
      throw badRequest('EXPLAIN of INSERT, UPDATE or DELETE is not supported.', 'EXPLAIN a SELECT.', 'Unsupported statement');
    }
    const written = structuredClone(inner);
    const bound = bindStatement({ ...tree, stmts: [{ stmt: inner }] }, this.registry, this.vdbName, policy, reading);
    // Running would fail on a hidden column (a 403); EXPLAIN does not run, so look for one.
    walk(written, (nodeType, node) => {
      if (nodeType !== 'ColumnRef') return;
      const name = fieldNames(node.fields).pop() ?? '*';
      const qualified = bound.hiddenColumns.get(name.toLowerCase());
      if (qualified) throw hiddenColumnDenial(qualified, user.name);
    });
    // A plan names every table it reads: only those the user may read themselves.
    const behind = bound.tables.filter((t) => t.resolved.origin !== 'system' && !policy.canRead(t.resolved.schema, t.resolved.table));
    if (behind.length > 0) {
      throw forbidden(
        `EXPLAIN would show tables you may not read (${behind.map((t) => `${t.resolved.schema}.${t.resolved.table.name}`).join(', ')}), read here through views or row conditions.`,
        'Run the statement itself, or ask an administrator for READ on those tables.',
      );
    }
    let plan = await choosePlan(bound, this.registry, this.options);
    // A whole statement the source refuses (unknown function, ...) runs as its plan says then, as execution does.
    if (plan.route === 'whole') {
      const whole = plan;
      const refused = await whole.whole.connector.describeStatement(whole.whole.sql, signal).then(
        () => false,
        () => true,
      );
      if (refused) plan = await whole.otherwise();
    }
    return openStaticExecution(this.runtime, staticResultSql(explainPlan(plan, this.registry, this.options.dependentJoin)), signal);
  }

  private async writeStatement({ tree, user, signal, policy }: StatementContext): Promise<Execution> {
    const result = await executeDml(tree, policy, this.registry, this.vdbName, (select, s) => this.selectRows(select, user, s), signal);
    return openStaticExecution(this.runtime, staticResultSql(result), signal, result.sourceQueries);
  }

  private async selectStatement({ tree, user, signal, policy, viaApiKey, learned, turn, reading }: StatementContext): Promise<Execution> {
    // The same shape planned before for this user under this catalog: fill in the constants.
    const shape = this.memory.shape(tree, user, viaApiKey, reading);
    if (learned && shape) learned.template = { key: shape.key, constants: shape.constants };
    const known = shape ? await this.memory.answerShape(shape, user, signal) : null;
    if (known) return known;
    // A first statement of its shape: a copy before binding rewrites it, to learn the template from.
    const pristine = shape && shape.template === undefined ? structuredClone(tree) : null;

    await turn?.();
    const bound = bindStatement(tree, this.registry, this.vdbName, policy, reading);
    const narrowed = bound.narrowed.size > 0 || bound.hiddenColumns.size > 0 || bound.readsViews;
    // Tables read live from their sources (not from copies): the query log's, for recommendations.
    const tables = bound.tables.filter((t) => t.resolved.origin === 'rows').map((t) => `${t.resolved.schema}.${t.resolved.table.name}`);
    const opened = await guarded(
      this.openBound(bound, user, signal, learned, turn).then((o) => (Object.assign(o.execution, { tablesRead: tables }), o)),
      (o) => o.execution,
      narrowed,
      bound.hiddenColumns,
      user,
    );
    if (shape && pristine) {
      const whole = opened.plan?.route === 'whole' ? opened.plan : null;
      await this.memory.learnShape(shape, pristine, whole, policy, { narrowed, hiddenColumns: bound.hiddenColumns, tables }, reading);
    }
    return opened.execution;
  }

  /** Plans the statement (plan/choose.ts), then runs the plan. */
  private async openBound(
    bound: BoundStatement,
    user: UserDef,
    signal: AbortSignal,
    learned?: Learned,
    turn?: () => Promise<void>,
  ): Promise<Opened> {
    await turn?.();
    return this.run(await choosePlan(bound, this.registry, { ...this.options, turn }), bound, user, signal, learned, turn);
  }

  /** Runs a plan; where a source refuses a route at its door, the plan's `otherwise`. */
  private async run(
    plan: Plan,
    bound: BoundStatement,
    user: UserDef,
    signal: AbortSignal,
    learned?: Learned,
    turn?: () => Promise<void>,
  ): Promise<Opened> {
    switch (plan.route) {
      case 'constant':
        // SELECT 1 and its kind: no source, no engine.
        if (learned) learned.constants = plan.constants;
        return { execution: routed(constantExecution(plan.constants, this.runtime), 'constant') };
      case 'whole': {
        const columns = { cache: this.memory.wholeColumns, key: plan.columnsKey };
        const execution = await openWholeExecution(plan.whole, this.runtime, signal, columns, null, () =>
          engineColumnsOf(bound, this.runtime, signal),
        );
        if (!execution) return this.run(await plan.otherwise(), bound, user, signal, learned, turn);
        return { execution: routed(execution, 'whole'), plan };
      }
      case 'source-select': {
        const columns = { cache: this.memory.learnedColumns, key: plan.columnsKey };
        const execution = await openSourceSelectExecution(
          bound,
          plan.select,
          this.runtime,
          signal,
          columns,
          this.options.directRows !== false,
        );
        if (!execution) return this.run(await plan.otherwise(), bound, user, signal, learned, turn);
        if (execution.direct) this.direct++;
        return { execution: routed(execution, 'source-select'), plan };
      }
      case 'shipped': {
        const execution = await openShippedExecution(plan, this.registry, this.runtime, {
          signal,
          maxShippedRows: plan.maxShippedRows,
          lookupArrays: this.options.dependentJoin.lookupArrays,
          learned: { cache: this.memory.wholeColumns, key: plan.columnsKey },
        });
        if (!execution) return this.run(plan.otherwise(), bound, user, signal, learned, turn);
        return { execution: routed(execution, 'shipped') };
      }
      case 'federated': {
        const options = { signal, user, ...this.options, learned: this.memory.learnedColumns, turn };
        return { execution: routed(await openFederatedExecution(plan, this.registry, this.runtime, options), 'federated') };
      }
    }
  }
}

/** Statements longer than this (characters) take the CPU lane (cpu-lane.ts): some 2,500 syntax nodes, a few ms of work. */
const LANE_BYTES = 1024;

/** An opened SELECT, and the plan it took when a source runs it as such. */
interface Opened {
  execution: Execution;
  plan?: WholeRoute | SourceSelectRoute;
}

const readOnlyKeyRefusal = () =>
  new ApiError(403, 'Forbidden', 'A read-only API key may only read.', 'Use a key created with readOnly: false for writes and procedures.');

function procedureCall(call: CallStmt): ProcedureCall {
  const funccall = call.funccall!;
  const name = funccall.funcname!.map((n) => asKind(n, 'String')!.sval).join('.');
  return { name, ...argumentsOf(funccall.args) };
}
