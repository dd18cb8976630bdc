/** The engine's front: SQL text in, an open execution out (parse -> bind -> execute). */
import { constantExecution } from './exec/constant-result.js';
import type { Constant } from './plan/constant-select.js';
import type { ResultColumn } from '../results/json.js';
import { bindParameters, paramConstant, type ParamValue } from './front/params.js';
import { kindOfText, learnSlots, liftLiterals, slotConstants, variantValues, type LiftedText, type Slot } from './front/statement-text.js';
import type { SourceRegistry } from '../sources/registry.js';
import type { UserDef } from '../catalog/types.js';
import { ApiError, badRequest, forbidden } from '../errors.js';
import { AccessPolicy } from '../security/permissions.js';
import { explainHiddenColumn, hiddenColumnDenial, withholdDataErrors } from './access/access-errors.js';
import { checkAllowed } from './front/allow-list.js';
import { asKind, fieldNames, nodeKind, statementOf, walk } from './tree/ast.js';
import { bindStatement, type BoundStatement } from './access/bind.js';
import type { DuckRuntime } from '../runtime/duckdb.js';
import { openFederatedExecution, openStaticExecution, type Execution } from './exec/execute.js';
import { engineColumnsOf, openSourceSelectExecution, openWholeExecution, type WholeColumns } from './exec/source-execution.js';
import { BoundedCache, shapeOf } from './tree/statement-cache.js';
import { choosePlan, type Plan, type SourceSelectRoute, type WholeRoute } from './plan/choose.js';
import { constantText, constantTexts, fill, markedTree, parameterized, templateOf, type WholeTemplate } from './plan/whole-template.js';
import { openShippedExecution } from './exec/ship.js';
import { parseStatement, requireFaithful } from './front/parse.js';
import { parseInWorker } from './front/parse-pool.js';
import { checkStatementBytes, DEFAULT_STATEMENT_SIZE, type StatementSizeLimits } from './front/statement-size.js';
import { CpuLane } from './cpu-lane.js';
import type { CallStmt, Node, ParseResult } from '@pgsql/types';
import { executeDml, isDml } from './statements/dml.js';
import { explainPlan } from './plan/explain.js';
import { planWhole } from './plan/whole.js';
import { callProcedure, type ProcedureCall, type ProcedureContext } from './statements/procedures.js';
import { staticResultSql } from './exec/static-result.js';
import { createView, dropViews } from './statements/views.js';
import type { HiddenColumns } from './access/access.js';

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
}

/** What a SELECT found out that its text can be linked to. */
interface Learned {
  /** The key of its template (whole-template.ts) and its constants in walk order. */
  template?: { key: string; constants: string[] };
  /** The result of a constant select. */
  constants?: Constant[];
}

/**
 * What a statement's text (statement-text.ts, literals lifted) is linked to: the key of its
 * template and where each constant comes from; or, for the very text, a constant select's result.
 * null: tried, the text cannot be linked (its parsed constants do not follow its literals).
 */
type TextEntry = { templateKey: string; slots: Slot[] } | { constants: Constant[] } | null;

/** A statement's text with what its values are: the lifted literals, then the parameters. */
interface StatementText {
  lifted: LiftedText;
  /** The key of the text for this user under this catalog (`statementTexts`). */
  key: string;
  values: string[];
  kinds: string[];
  /** How often each value occurs in the statement. */
  occurrences: number[];
}

export class Engine {
  /** Result columns of whole statements, by shape: described once, not per request. */
  private readonly wholeColumns = new BoundedCache<WholeColumns | null>(1000);
  /** The engine's result columns of statements that read no source (by text) or one MySQL/SQLite source (by shape). */
  private readonly learnedColumns = new BoundedCache<ResultColumn[]>(1000);
  /**
   * Whole statements planned once (whole-template.ts), by catalog generation, user, roles and
   * shape: any change to sources, views, users, roles or grants makes older entries unreachable.
   * null: the shape has no template (not whole at a source, or not fillable).
   */
  private readonly wholeTemplates = new BoundedCache<WholeTemplate | null>(1000);
  /**
   * Statement texts linked to their templates (or constant results), by catalog generation,
   * user, roles, the text with its literals lifted and the parameters' kinds: a point lookup
   * of a known text is answered without parsing it (`openText`).
   */
  private readonly statementTexts = new BoundedCache<TextEntry>(1000);
  /** Statements answered from a template since the start (for the tests and operators). */
  templated = 0;
  /** Statements answered by their text, unparsed, since the start (for the tests). */
  byText = 0;
  /** Statements of MySQL/SQLite answered from their rows without the engine since the start (for the tests). */
  direct = 0;

  /** Hits of the engine's caches since the start, by cache (GET /metrics). */
  cacheHits(): Record<string, number> {
    return {
      'statement-templates': this.wholeTemplates.hits,
      'statement-texts': this.statementTexts.hits,
      'source-result-columns': this.wholeColumns.hits,
      'engine-result-columns': this.learnedColumns.hits,
    };
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
  ) {}

  /** Parses and binds `sql`, loads what sources must supply, and prepares the result. */
  async open(
    sql: string,
    user: UserDef,
    signal: AbortSignal,
    access: { readOnly?: boolean; apiKey?: boolean; params?: readonly ParamValue[] } = {},
  ): Promise<Execution> {
    const limits = this.options.statementSize ?? DEFAULT_STATEMENT_SIZE;
    // Bounded before any work on the text (statement-size.ts).
    checkStatementBytes(sql, limits);
    const text = this.statementText(sql, user, access.apiKey ?? false, access.params);
    if (text) {
      const known = await this.openText(text, sql, user, signal);
      if (known) return known;
    }
    // Long statements are parsed and measured in a worker, and refused there beyond the limits.
    const tree = await parseInWorker(sql, limits);
    // Their stages on the main thread each wait for a turn of their own (cpu-lane.ts); a short statement's are too short to matter.
    const turn = sql.length > LANE_BYTES ? () => this.lane.turn() : undefined;
    await turn?.();
    return this.openParsed(tree, sql, text, user, signal, access, turn);
  }

  /** Turns of the event loop for the main-thread stages of long statements, one statement per turn. */
  private readonly lane = new CpuLane();

  private async openParsed(
    tree: ParseResult,
    sql: string,
    text: StatementText | null,
    user: UserDef,
    signal: AbortSignal,
    access: { readOnly?: boolean; apiKey?: boolean; params?: readonly ParamValue[] },
    turn?: () => Promise<void>,
  ): Promise<Execution> {
    // $1, $2, ... become the values given with the statement (params.ts); without values, a $n is refused here.
    bindParameters(tree, access.params ?? []);
    // Only what vdb lists may be called, whatever the statement's kind (allow-list.ts).
    checkAllowed(tree);
    requireFaithful(tree);
    if (access.readOnly) {
      const statement = statementOf(tree);
      if (isDml(statement) || (statement && ('CallStmt' in statement || 'ViewStmt' in statement || 'DropStmt' in statement))) {
        throw new ApiError(
          403,
          'Forbidden',
          'A read-only API key may only read.',
          'Use a key created with readOnly: false for writes and procedures.',
        );
      }
    }
    const learned: Learned = {};
    // The checks above and the shape and copy of the tree in `selectStatement` each take a turn.
    await turn?.();
    const execution = await this.openTree(tree, user, signal, access.apiKey ?? false, learned, turn);
    if (text) this.learnText(text, sql, learned, access.params);
    return execution;
  }

  /** The prefix of the keys of what is learned for `user` under this catalog (kept per user object and generation). */
  private userKey(user: UserDef, viaApiKey: boolean): string {
    const generation = this.registry.generation;
    const known = this.userKeys.get(user);
    if (known?.generation === generation && known.viaApiKey === viaApiKey) return known.key;
    const key = `${generation}\u0000${user.name}\u0000${user.roles.join('\u0001')}\u0000${viaApiKey}`;
    this.userKeys.set(user, { generation, viaApiKey, key });
    return key;
  }
  private readonly userKeys = new WeakMap<UserDef, { generation: number; viaApiKey: boolean; key: string }>();

  /** The statement's text and values, when its literals and parameters can be lifted; else null. */
  private statementText(sql: string, user: UserDef, viaApiKey: boolean, params?: readonly ParamValue[]): StatementText | null {
    if (sql.length > MAX_TEXT_LENGTH) return null;
    const lifted = liftLiterals(sql);
    if (!lifted) return null;
    const values = lifted.literals.map((l) => l.text);
    const kinds = lifted.literals.map((l) => l.kind);
    const occurrences = values.map(() => 1);
    let paramKinds = '-';
    if (params) {
      paramKinds = '';
      for (const [i, value] of params.entries()) {
        if (value === null) {
          paramKinds += 'n,';
          continue;
        }
        const written = constantText((paramConstant(value) as { A_Const: Record<string, unknown> }).A_Const);
        const kind = written === null ? null : kindOfText(written);
        // A value that would need escaping, a negative number: the full path.
        if (written === null || kind === null) return null;
        values.push(written);
        kinds.push(kind);
        occurrences.push(lifted.placeholders.get(i + 1) ?? 0);
        paramKinds += `${kind},`;
      }
    }
    return { lifted, key: `${this.userKey(user, viaApiKey)}\u0000${lifted.key}\u0000${paramKinds}`, values, kinds, occurrences };
  }

  /**
   * A statement whose text is linked to a template (or is a known constant select): answered
   * without parsing it. Null when it is not, or the template no longer holds: then the full path.
   */
  private async openText(text: StatementText, sql: string, user: UserDef, signal: AbortSignal): Promise<Execution | null> {
    const entry = this.statementTexts.get(text.key) ?? this.statementTexts.get(`${text.key}\u0000${sql}`);
    if (!entry) return null;
    if ('constants' in entry) {
      this.byText++;
      return routed(constantExecution(entry.constants, this.runtime), 'constant');
    }
    const template = this.wholeTemplates.get(entry.templateKey);
    if (!template) return null;
    const execution = await this.openTemplate(template, slotConstants(entry.slots, text.values), user, signal);
    if (!execution) return null;
    this.templated++;
    this.byText++;
    return routed(execution, 'whole');
  }

  /**
   * Links a statement's text to what its first run learned: a constant select's result (for
   * the very text), or its template, once the statement is seen to take its constants from the
   * lifted literals and parameters alone: each where the values stand, none from elsewhere, and
   * the same again when the statement is parsed with other values of the same kinds.
   */
  private learnText(text: StatementText, sql: string, learned: Learned, params?: readonly ParamValue[]): void {
    if (learned.constants && !params) {
      this.statementTexts.set(`${text.key}\u0000${sql}`, { constants: learned.constants });
      return;
    }
    const template = learned.template;
    const planned = template && this.wholeTemplates.peek(template.key);
    if (!template || !planned || this.statementTexts.peek(text.key) !== undefined) return;
    const slots = learnSlots(template.constants, text.values, text.occurrences);
    // Values only where a constant is a value (not an ORDER BY position, a type modifier): the
    // checks a parsed statement gets before its template is used never look at those.
    if (!slots || slots.some((slot, i) => typeof slot === 'number' && !planned.parameters[i])) return;
    let linked = false;
    try {
      const variants = variantValues(text.kinds, text.values);
      if (variants) {
        const { literals } = text.lifted;
        let variantSql = sql;
        for (let i = literals.length - 1; i >= 0; i--) {
          variantSql = variantSql.slice(0, literals[i]!.start) + variants[i] + variantSql.slice(literals[i]!.end);
        }
        const tree = parseStatement(variantSql, this.options.statementSize);
        if (params) bindParameters(tree, variantParams(params, variants.slice(literals.length), text.kinds.slice(literals.length)));
        const constants = constantTexts(tree);
        const key = template.key.slice(0, template.key.lastIndexOf(SHAPE_SEPARATOR) + 1) + shapeOf(tree);
        linked = key === template.key && constants !== null && JSON.stringify(constants) === JSON.stringify(slotConstants(slots, variants));
      }
    } catch {
      linked = false;
    }
    this.statementTexts.set(text.key, linked ? { templateKey: template.key, slots } : null);
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

  private async openTree(
    tree: ParseResult,
    user: UserDef,
    signal: AbortSignal,
    viaApiKey = false,
    learned?: Learned,
    turn?: () => Promise<void>,
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
    };
    const handler = (statement && this.handlers[nodeKind(statement)]) ?? this.selectStatement;
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
    const result = await createView(asKind(statement, 'ViewStmt')!, {
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
    const drop = asKind(statement, 'DropStmt')!;
    if (drop.removeType !== 'OBJECT_VIEW') return this.selectStatement(context);
    const result = await dropViews(drop, { registry: this.registry, policy, auditLog: this.accounts?.auditLog });
    return openStaticExecution(this.runtime, staticResultSql(result), signal);
  }

  private async callStatement({ statement, user, signal, policy, viaApiKey }: StatementContext): Promise<Execution> {
    const result = await callProcedure(procedureCall(asKind(statement, 'CallStmt')!), {
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
    const execution = await openStaticExecution(this.runtime, staticResultSql(result), signal);
    execution.warnings.push(...(result.warnings ?? []));
    return execution;
  }

  private async explainStatement({ tree, statement, user, signal, policy }: StatementContext): Promise<Execution> {
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
    const bound = bindStatement({ ...tree, stmts: [{ stmt: inner }] }, this.registry, this.vdbName, policy);
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
    let plan = await choosePlan(bound, this.registry, this.options);
    // A whole statement the source refuses (unknown function, ...) runs as its plan says then, as execution does.
    if (plan.kind === 'whole') {
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

  private async selectStatement({ tree, user, signal, policy, viaApiKey, learned, turn }: StatementContext): Promise<Execution> {
    // The same shape planned before for this user under this catalog: fill in the constants.
    const constants = constantTexts(tree);
    const key = constants ? `${this.userKey(user, viaApiKey)}${SHAPE_SEPARATOR}${shapeOf(tree)}` : null;
    if (learned && key && constants) learned.template = { key, constants };
    const template = key ? this.wholeTemplates.get(key) : undefined;
    if (template && constants) {
      const execution = await this.openTemplate(template, constants, user, signal);
      if (execution) {
        this.templated++;
        return routed(execution, 'whole');
      }
    }
    // A first statement of its shape: a copy before binding rewrites it, to learn the template from.
    const pristine = key && template === undefined ? structuredClone(tree) : null;

    await turn?.();
    const bound = bindStatement(tree, this.registry, this.vdbName, policy);
    const narrowed = bound.narrowed.size > 0 || bound.hiddenColumns.size > 0 || bound.readsViews;
    const opened = await guarded(
      this.openBound(bound, user, signal, learned, turn),
      (o) => o.execution,
      narrowed,
      bound.hiddenColumns,
      user,
    );
    if (key && pristine && constants) {
      const whole = opened.plan?.kind === 'whole' ? opened.plan : null;
      const learned = whole ? await this.learnTemplate(pristine, constants, whole.whole.sql, policy).catch(() => null) : null;
      this.wholeTemplates.set(
        key,
        learned && whole
          ? {
              ...learned,
              plan: { source: whole.whole.source, connector: whole.whole.connector },
              columnsKey: whole.columnsKey,
              narrowed,
              hiddenColumns: bound.hiddenColumns,
            }
          : null,
      );
    }
    return opened.execution;
  }

  /** Plans the statement again with markers for its constants; the template when it is faithful. */
  private async learnTemplate(pristine: ParseResult, constants: string[], sql: string, policy: AccessPolicy) {
    const { tree, parameters } = markedTree(pristine);
    const plan = await planWhole(bindStatement(tree, this.registry, this.vdbName, policy), this.registry);
    const template = plan ? templateOf(plan.sql, constants, sql) : null;
    return template ? { ...template, parameters } : null;
  }

  /**
   * A statement of a known shape: the source's text filled in, its columns known. Null when the
   * source now refuses the statement as such: then the ordinary path decides.
   */
  private async openTemplate(template: WholeTemplate, constants: string[], user: UserDef, signal: AbortSignal): Promise<Execution | null> {
    const plan = { ...template.plan, sql: fill(template, constants) };
    const learned = { cache: this.wholeColumns, key: template.columnsKey };
    const opening = openWholeExecution(plan, this.runtime, signal, learned, parameterized(template, constants));
    return guarded(opening, (execution) => execution, template.narrowed, template.hiddenColumns, user);
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
    switch (plan.kind) {
      case 'constant':
        // SELECT 1 and its kind: no source, no engine.
        if (learned) learned.constants = plan.constants;
        return { execution: routed(constantExecution(plan.constants, this.runtime), 'constant') };
      case 'whole': {
        const columns = { cache: this.wholeColumns, key: plan.columnsKey };
        const execution = await openWholeExecution(plan.whole, this.runtime, signal, columns, null, () =>
          engineColumnsOf(bound, this.runtime, signal),
        );
        if (!execution) return this.run(await plan.otherwise(), bound, user, signal, learned, turn);
        return { execution: routed(execution, 'whole'), plan };
      }
      case 'source-select': {
        const columns = { cache: this.learnedColumns, key: plan.columnsKey };
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
          learned: { cache: this.wholeColumns, key: plan.columnsKey },
        });
        if (!execution) return this.run(plan.otherwise(), bound, user, signal, learned, turn);
        return { execution: routed(execution, 'shipped') };
      }
      case 'federated': {
        const options = { signal, user, ...this.options, learned: this.learnedColumns, turn };
        return { execution: routed(await openFederatedExecution(plan, this.registry, this.runtime, options), 'federated') };
      }
    }
  }
}

/** Statements longer than this are not looked up by their text (the key holds the text). */
const MAX_TEXT_LENGTH = 4096;

/** Statements longer than this (characters) take the CPU lane (cpu-lane.ts): some 2,500 syntax nodes, a few ms of work. */
const LANE_BYTES = 1024;

/** Between the user's part of a template's key and the statement's shape. */
const SHAPE_SEPARATOR = '\u0000';

/** Parameters of the same kinds as `params`, with the values `texts` (written as the deparser writes them). */
function variantParams(params: readonly ParamValue[], texts: readonly string[], kinds: readonly string[]): ParamValue[] {
  let next = 0;
  return params.map((value) => {
    if (value === null) return null;
    const text = texts[next]!;
    const kind = kinds[next++]!;
    if (kind === 'b') return text === 'true';
    if (kind === 's') return text.slice(1, -1);
    return Number(text);
  });
}

/** Marks how a SELECT was answered (metrics). */
function routed(execution: Execution, route: Plan['kind']): Execution {
  execution.route = route;
  return execution;
}

/** An opened SELECT, and the plan it took when a source runs it as such. */
interface Opened {
  execution: Execution;
  plan?: WholeRoute | SourceSelectRoute;
}

/**
 * The errors of a statement over narrowed data: a hidden column named is a 403, and what the
 * statement meets while it runs is withheld (access-errors.ts).
 */
async function guarded<T>(
  opening: Promise<T>,
  executionOf: (opened: T) => Execution | null,
  narrowed: boolean,
  hiddenColumns: HiddenColumns,
  user: UserDef,
): Promise<T> {
  try {
    const opened = await opening;
    const execution = executionOf(opened);
    if (!narrowed || !execution) return opened;
    const translate = execution.translateError.bind(execution);
    Object.assign(execution, { narrowed, translateError: (err: unknown) => withholdDataErrors(translate(err)) });
    return opened;
  } catch (err) {
    const explained = explainHiddenColumn(err, hiddenColumns, user.name);
    throw narrowed ? withholdDataErrors(explained) : explained;
  }
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

function procedureCall(call: CallStmt): ProcedureCall {
  const funccall = call.funccall!;
  const name = funccall.funcname!.map((n) => asKind(n, 'String')!.sval).join('.');
  const positional: Array<string | null> = [];
  const named: Record<string, string | null> = {};
  for (const arg of funccall.args ?? []) {
    const namedArg = asKind(arg, 'NamedArgExpr');
    if (namedArg) named[String(namedArg.name)] = constantOf(namedArg.arg);
    else positional.push(constantOf(arg));
  }
  return { name, positional, named };
}
