/**
 * What the engine remembers of the statements it ran, around the pipeline (parse -> bind ->
 * plan -> run) rather than inside it: each memory lets a statement skip stages, and is filled in
 * after the stages ran.
 *
 * | Memory | Keyed by | Skips |
 * |---|---|---|
 * | statement texts | user, catalog generation, text with its literals lifted | parsing, binding, planning |
 * | whole templates | user, catalog generation, statement shape | binding, planning |
 * | source / engine result columns | source and shape, or text | describing the result |
 *
 * Any change to sources, views, users, roles or grants changes the generation in every key, so
 * older entries are never reached again (and age out of the bounded caches).
 */
import type { ParseResult } from '@pgsql/types';
import type { UserDef } from '../catalog/types.js';
import type { ResultColumn } from '../results/json.js';
import type { DuckRuntime } from '../runtime/duckdb.js';
import type { AccessPolicy } from '../security/permissions.js';
import type { SourceRegistry } from '../sources/registry.js';
import type { HiddenColumns } from './access/access.js';
import { bindStatement } from './access/bind.js';
import type { CopyReading } from '../sources/copies.js';
import { constantExecution } from './exec/constant-result.js';
import type { Execution } from './exec/execute.js';
import { openWholeExecution, type WholeColumns } from './exec/source-execution.js';
import { bindParameters, paramConstant, type ParamValue } from './front/params.js';
import { parseStatement } from './front/parse.js';
import type { StatementSizeLimits } from './front/statement-size.js';
import { kindOfText, learnSlots, liftLiterals, slotConstants, variantValues, type LiftedText, type Slot } from './front/statement-text.js';
import { guarded, routed } from './opened.js';
import type { WholeRoute } from './plan/choose.js';
import type { Constant } from './plan/constant-select.js';
import { constantText, constantTexts, fill, markedTree, parameterized, templateOf, type WholeTemplate } from './plan/whole-template.js';
import { planWhole } from './plan/whole.js';
import { BoundedCache, shapeOf } from './tree/statement-cache.js';

/** What a SELECT found out that its text can be linked to. */
export interface Learned {
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
export interface StatementText {
  lifted: LiftedText;
  /** The key of the text for this user under this catalog (`statementTexts`). */
  key: string;
  values: string[];
  kinds: string[];
  /** How often each value occurs in the statement. */
  occurrences: number[];
}

/** A parsed SELECT's shape for this user, its constants, and the template known for it (undefined: never planned). */
export interface StatementShape {
  key: string;
  constants: string[];
  template: WholeTemplate | null | undefined;
}

/** Statements longer than this are not looked up by their text (the key holds the text). */
const MAX_TEXT_LENGTH = 4096;

/** Between the user's part of a template's key and the statement's shape. */
const SHAPE_SEPARATOR = '\u0000';

export class StatementMemory {
  /** Result columns of whole statements, by shape: described once, not per request. */
  readonly wholeColumns = new BoundedCache<WholeColumns | null>(1000);
  /** The engine's result columns of statements that read no source (by text) or one MySQL/SQLite source (by shape). */
  readonly learnedColumns = new BoundedCache<ResultColumn[]>(1000);
  /**
   * Whole statements planned once (whole-template.ts), by catalog generation, user, roles and
   * shape. null: the shape has no template (not whole at a source, or not fillable).
   */
  private readonly wholeTemplates = new BoundedCache<WholeTemplate | null>(1000);
  /**
   * Statement texts linked to their templates (or constant results), by catalog generation,
   * user, roles, the text with its literals lifted and the parameters' kinds: a point lookup
   * of a known text is answered without parsing it (`answerText`).
   */
  private readonly statementTexts = new BoundedCache<TextEntry>(1000);
  private readonly userKeys = new WeakMap<UserDef, { generation: number; viaApiKey: boolean; key: string }>();
  /** Statements answered from a template since the start (for the tests and operators). */
  templated = 0;
  /** Statements answered by their text, unparsed, since the start (for the tests). */
  byText = 0;

  constructor(
    private readonly registry: SourceRegistry,
    private readonly runtime: DuckRuntime,
    private readonly vdbName: string,
    private readonly statementSize?: StatementSizeLimits,
  ) {}

  /** Hits of each memory since the start (GET /metrics). */
  hits(): Record<string, number> {
    return {
      'statement-templates': this.wholeTemplates.hits,
      'statement-texts': this.statementTexts.hits,
      'source-result-columns': this.wholeColumns.hits,
      'engine-result-columns': this.learnedColumns.hits,
    };
  }

  /** The prefix of the keys of what is learned for `user` under this catalog (kept per user object and generation). */
  private userKey(user: UserDef, viaApiKey: boolean, reading: CopyReading): string {
    // The copies usable now: a plan made over a copy is not one over its source.
    const copies = this.registry.copies.key(reading);
    const generation = this.registry.generation;
    const known = this.userKeys.get(user);
    if (known?.generation === generation && known.viaApiKey === viaApiKey) return `${known.key}\u0000${copies}`;
    const key = `${generation}\u0000${user.name}\u0000${user.roles.join('\u0001')}\u0000${viaApiKey}`;
    this.userKeys.set(user, { generation, viaApiKey, key });
    return `${key}\u0000${copies}`;
  }

  /**
   * Texts without literals (their values all parameters: a client's prepared statement), lifted
   * once: the same text comes again and again. Texts with literals differ by them: not kept.
   */
  private readonly liftedTexts = new BoundedCache<LiftedText | null>(1000);

  private lifted(sql: string): LiftedText | null {
    const known = this.liftedTexts.get(sql);
    if (known !== undefined) return known;
    const lifted = liftLiterals(sql);
    if (lifted === null || lifted.literals.length === 0) this.liftedTexts.set(sql, lifted);
    return lifted;
  }

  /** The statement's text and values, when its literals and parameters can be lifted; else null. */
  text(
    sql: string,
    user: UserDef,
    viaApiKey: boolean,
    params: readonly ParamValue[] | undefined,
    reading: CopyReading,
  ): StatementText | null {
    if (sql.length > MAX_TEXT_LENGTH) return null;
    const lifted = this.lifted(sql);
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
    return { lifted, key: `${this.userKey(user, viaApiKey, reading)}\u0000${lifted.key}\u0000${paramKinds}`, values, kinds, occurrences };
  }

  /**
   * A statement whose text is linked to a template (or is a known constant select): answered
   * without parsing it. Null when it is not, or the template no longer holds: then the full path.
   */
  async answerText(text: StatementText, sql: string, user: UserDef, signal: AbortSignal): Promise<Execution | null> {
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
  learnText(text: StatementText, sql: string, learned: Learned, params?: readonly ParamValue[]): void {
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
        const tree = parseStatement(variantSql, this.statementSize);
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

  /** A parsed SELECT's shape for this user and what is known of it; null when its constants cannot be lifted. */
  shape(tree: ParseResult, user: UserDef, viaApiKey: boolean, reading: CopyReading): StatementShape | null {
    const constants = constantTexts(tree);
    if (!constants) return null;
    const key = `${this.userKey(user, viaApiKey, reading)}${SHAPE_SEPARATOR}${shapeOf(tree)}`;
    return { key, constants, template: this.wholeTemplates.get(key) };
  }

  /** A statement of a known shape, answered from its template; null when there is none or the source now refuses it. */
  async answerShape(shape: StatementShape, user: UserDef, signal: AbortSignal): Promise<Execution | null> {
    if (!shape.template) return null;
    const execution = await this.openTemplate(shape.template, shape.constants, user, signal);
    if (!execution) return null;
    this.templated++;
    return routed(execution, 'whole');
  }

  /**
   * After a first statement of its shape ran: its template when it went whole to a source and
   * planning it again with markers for its constants gives the same statement (else null, so the
   * shape is not planned twice for nothing). `pristine` is the tree before binding rewrote it.
   */
  async learnShape(
    shape: StatementShape,
    pristine: ParseResult,
    whole: WholeRoute | null,
    policy: AccessPolicy,
    access: { narrowed: boolean; hiddenColumns: HiddenColumns; tables: string[] },
    reading: CopyReading,
  ): Promise<void> {
    const learned = whole ? await this.learnTemplate(pristine, shape.constants, whole.whole.sql, policy, reading).catch(() => null) : null;
    this.wholeTemplates.set(
      shape.key,
      learned && whole
        ? {
            ...learned,
            plan: { source: whole.whole.source, connector: whole.whole.connector },
            columnsKey: whole.columnsKey,
            ...access,
          }
        : null,
    );
  }

  /** Plans the statement again with markers for its constants; the template when it is faithful. */
  private async learnTemplate(pristine: ParseResult, constants: string[], sql: string, policy: AccessPolicy, reading: CopyReading) {
    const { tree, parameters } = markedTree(pristine);
    const plan = await planWhole(bindStatement(tree, this.registry, this.vdbName, policy, reading), this.registry);
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
    const opening = openWholeExecution(plan, this.runtime, signal, learned, parameterized(template, constants)).then((execution) =>
      execution ? Object.assign(execution, { tablesRead: template.tables }) : execution,
    );
    return guarded(opening, (execution) => execution, template.narrowed, template.hiddenColumns, user);
  }
}

/** Parameters of the same kinds as `params`, with the values `texts` (written as the deparser writes them). */
function variantParams(params: readonly ParamValue[], texts: readonly string[], kinds: readonly string[]): ParamValue[] {
  let next = 0;
  return params.map((value) => {
    if (value === null) return null;
    const text = texts[next]!;
    const marker = kinds[next++]!;
    if (marker === 'b') return text === 'true';
    if (marker === 's') return text.slice(1, -1);
    return Number(text);
  });
}
