/**
 * The statements each editor tab ran and their results, kept apart from the screens: moving to
 * History or Sources and back neither cancels a running statement nor drops a result. Results
 * are kept in sessionStorage as their cursor (requestId) and read again after a reload. A
 * reload closes the connection of a running statement (vdb then cancels it); the console warns
 * before it (beforeunload) and says so after it.
 */
import { ApiError, type Api, type Row } from './api.js';
import { countRows } from './count.js';
import { errorRange, type ErrorRange } from './errors.js';
import { analyze, analyzed, type Analysis } from './analyze.js';
import { planTree, type PlanNode } from './explain.js';
import { PagedRows } from './pages.js';
import type { Statement } from './statements.js';

export const PAGE_SIZE = 500;
/** How long a cursor waits for the first rows read ahead of it. */
const AHEAD_MS = 200;
const PLAN_COLUMNS = 'step,location,operation,object,pushed,sql';

/**
 * Statements whose first rows may be read ahead of their cursor: plain reads, which running
 * twice does not change (SELECT … INTO creates a table, and is left alone).
 */
export function isPlainRead(sql: string): boolean {
  const text = sql.replace(/^(?:\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/|\()*/, '');
  return /^(select|values|table)\b/i.test(text) && !/\binto\b/i.test(text);
}

export type Mode = 'run' | 'explain' | 'analyze';

export interface RowsResult {
  sql: string;
  columns: string[];
  types: string[];
  requestId: string;
  pages: PagedRows;
  first: Row[];
  /** null while the count is being found. */
  total: number | null;
  elapsedMs: number;
  warnings: string | null;
  /** The first rows, shown while the cursor of the whole result is still being computed. */
  provisional?: boolean;
}

export type StatementState =
  | { kind: 'waiting' }
  | { kind: 'running'; started: number }
  | { kind: 'rows'; result: RowsResult }
  | { kind: 'plan'; nodes: PlanNode[]; elapsedMs: number; analysis?: Analysis }
  | { kind: 'error'; error: ApiError | Error; range: ErrorRange | null }
  | { kind: 'cancelled'; afterMs: number | null; why: string };

export interface StatementRun extends Statement {
  what: Mode;
  state: StatementState;
}

export interface TabRun {
  statements: StatementRun[];
  /** The statement whose result is shown. */
  shown: number;
}

interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** What sessionStorage keeps of a statement: rows as their cursor, no live objects. */
type Saved = Statement & {
  what: Mode;
  state:
    | { kind: 'waiting' | 'running' }
    | {
        kind: 'rows';
        requestId: string;
        columns: string[];
        types: string[];
        total: number | null;
        elapsedMs: number;
        warnings: string | null;
      }
    | { kind: 'plan'; nodes: PlanNode[]; elapsedMs: number; analysis?: Analysis }
    | { kind: 'error'; status: number; title: string; description: string; hint: string | null; range: ErrorRange | null }
    | { kind: 'cancelled'; afterMs: number | null; why: string };
};

const errorOf = (error: unknown): ApiError | Error => (error instanceof Error ? error : new Error(String(error)));

export class Workbench {
  private readonly runs = new Map<string, TabRun>();
  private readonly controllers = new Map<string, AbortController>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly api: Api,
    private readonly store: KeyValueStore,
    private readonly key: string,
  ) {
    this.restore();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(tabId: string): TabRun | undefined {
    return this.runs.get(tabId);
  }

  /** True while a statement of the tab (of any tab without an id) runs. */
  running(tabId?: string): boolean {
    return tabId === undefined ? this.controllers.size > 0 : this.controllers.has(tabId);
  }

  show(tabId: string, index: number): void {
    const run = this.runs.get(tabId);
    if (run && index >= 0 && index < run.statements.length) this.update(tabId, { ...run, shown: index });
  }

  /** Runs the statements in order, each with its own result; the first error stops the rest. */
  async run(tabId: string, statements: Statement[], what: Mode): Promise<void> {
    if (statements.length === 0) return;
    this.cancel(tabId);
    const controller = new AbortController();
    this.controllers.set(tabId, controller);
    let run: TabRun = { statements: statements.map((s) => ({ ...s, what, state: { kind: 'waiting' } })), shown: 0 };
    const set = (i: number, state: StatementState, shown = i) => {
      // A later run of this tab replaced this one: its results are not shown any more.
      if (this.controllers.get(tabId) !== controller) return;
      run = { statements: run.statements.map((s, j) => (j === i ? { ...s, state } : s)), shown };
      this.update(tabId, run);
    };
    this.update(tabId, run);
    for (let i = 0; i < statements.length; i++) {
      const started = Date.now();
      set(i, { kind: 'running', started });
      // First rows ahead of the cursor, unless another tab runs too (vdb caps statements per user).
      const early = what === 'run' && this.controllers.size === 1 && isPlainRead(statements[i]!.sql);
      const progress = (state: StatementState) => set(i, state);
      const ok = await this.execute(statements[i]!.sql, what, controller.signal, started, early ? progress : null).then(
        (state) => (set(i, state), state.kind !== 'error'),
        (error: unknown) => {
          const failure = errorOf(error);
          if (controller.signal.aborted) set(i, { kind: 'cancelled', afterMs: Date.now() - started, why: 'Cancelled' });
          else
            set(i, {
              kind: 'error',
              error: failure,
              range: failure instanceof ApiError ? errorRange(failure.description, statements[i]!.sql) : null,
            });
          return false;
        },
      );
      if (!ok) {
        for (let j = i + 1; j < statements.length; j++)
          set(j, { kind: 'cancelled', afterMs: null, why: 'Not run: an earlier statement did not succeed' }, i);
        break;
      }
    }
    if (this.controllers.get(tabId) === controller) {
      this.controllers.delete(tabId);
      this.update(tabId, run);
    }
  }

  /** Stops the tab's statement; vdb cancels it when the request closes. */
  cancel(tabId: string): void {
    this.controllers.get(tabId)?.abort();
  }

  /** Signing out: every statement stops, and the results are forgotten. */
  close(): void {
    for (const controller of this.controllers.values()) controller.abort();
    this.controllers.clear();
    this.runs.clear();
    this.save();
  }

  /** The tab was closed: its statement stops and its results go. */
  forget(tabId: string): void {
    this.cancel(tabId);
    this.controllers.delete(tabId);
    this.runs.delete(tabId);
    this.save();
    this.emit();
  }

  private async execute(
    sql: string,
    what: Mode,
    signal: AbortSignal,
    started: number,
    progress: ((state: StatementState) => void) | null,
  ): Promise<StatementState> {
    // EXPLAIN ANALYZE typed in is run as the Explain analyze button runs it.
    const inner = what === 'run' ? analyzed(sql) : null;
    if (what === 'explain' || what === 'analyze' || inner !== null) {
      const target = inner ?? sql;
      const result = await this.api.query(`EXPLAIN ${target}`, signal);
      const nodes = planTree(result);
      if (what === 'explain') return { kind: 'plan', nodes, elapsedMs: Date.now() - started };
      return { kind: 'plan', nodes, elapsedMs: Date.now() - started, analysis: await analyze(this.api, target, signal) };
    }
    let done = false;
    let ahead: Promise<unknown> = Promise.resolve();
    const stopAhead = new AbortController();
    if (progress) {
      signal.addEventListener('abort', () => stopAhead.abort());
      // Its errors are the cursor's too, and the cursor reports them.
      ahead = this.api.firstRows(sql, PAGE_SIZE, stopAhead.signal).then(
        (r) => {
          if (done) return;
          const result = this.rowsResult(sql, '', r.columns, r.types, r.rows, null, Date.now() - started, null);
          progress({ kind: 'rows', result: { ...result, provisional: true } });
        },
        () => undefined,
      );
      // The cursor starts when the first rows are in, or after a moment for a slow statement: building
      // a cursor keeps vdb busy, and the first rows would wait behind it.
      await Promise.race([ahead, new Promise((resolve) => setTimeout(resolve, AHEAD_MS))]);
      signal.throwIfAborted();
    }
    const cursor = this.api.openCursor(sql, PAGE_SIZE, signal);
    void cursor.finally(() => ((done = true), stopAhead.abort())).catch(() => undefined);
    const first = await cursor;
    done = true;
    const elapsedMs = Date.now() - started;
    if (first.columns.map((c) => c.toLowerCase()).join(',') === PLAN_COLUMNS) {
      return { kind: 'plan', nodes: planTree(first), elapsedMs };
    }
    const total = first.total ?? (first.more ? null : first.rows.length);
    const result = this.rowsResult(sql, first.requestId, first.columns, first.types, first.rows, total, elapsedMs, first.warnings);
    if (total === null) {
      // A server that sends no Content-Range: the count is found by reading single rows.
      result.total = await countRows(first.rows.length, async (i) => (await this.api.page(first.requestId, i, 1)).length > 0);
    }
    return { kind: 'rows', result };
  }

  private rowsResult(
    sql: string,
    requestId: string,
    columns: string[],
    types: string[],
    first: Row[],
    total: number | null,
    elapsedMs: number,
    warnings: string | null,
  ): RowsResult {
    const pages = new PagedRows((offset, limit) => this.api.page(requestId, offset, limit), PAGE_SIZE, first);
    return { sql, requestId, columns, types, pages, first, total, elapsedMs, warnings };
  }

  private update(tabId: string, run: TabRun): void {
    this.runs.set(tabId, run);
    this.save();
    this.emit();
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  private save(): void {
    const saved: Record<string, { shown: number; statements: Saved[] }> = {};
    for (const [tabId, run] of this.runs) {
      saved[tabId] = { shown: run.shown, statements: run.statements.map(savedOf) };
    }
    try {
      this.store.setItem(this.key, JSON.stringify(saved));
    } catch {
      // storage full or disabled: results live on for this page only
    }
  }

  /** After a reload: results are read again from their cursors; a statement that ran was cut off. */
  private restore(): void {
    let saved: Record<string, { shown: number; statements: Saved[] }>;
    try {
      saved = JSON.parse(this.store.getItem(this.key) ?? '{}') as typeof saved;
    } catch {
      return;
    }
    for (const [tabId, { shown, statements }] of Object.entries(saved ?? {})) {
      if (!Array.isArray(statements)) continue;
      const run: TabRun = {
        shown: Number(shown) || 0,
        statements: statements.map((s) => ({ sql: s.sql, from: s.from, to: s.to, what: s.what, state: this.restored(tabId, s) })),
      };
      this.runs.set(tabId, run);
    }
  }

  private restored(tabId: string, s: Saved): StatementState {
    const state = s.state;
    switch (state.kind) {
      case 'waiting':
      case 'running':
        return {
          kind: 'cancelled',
          afterMs: null,
          why: 'Stopped by the page reload: the browser closed its connection and vdb cancelled the statement. Run it again',
        };
      case 'plan':
      case 'cancelled':
        return state;
      case 'error':
        return { kind: 'error', error: new ApiError(state.status, state.title, state.description, state.hint), range: state.range };
      case 'rows': {
        // The first page is read again; until then the statement shows as running.
        const started = Date.now();
        void this.api.page(state.requestId, 0, PAGE_SIZE).then(
          (rows) =>
            this.replace(tabId, s, {
              kind: 'rows',
              result: this.rowsResult(
                s.sql,
                state.requestId,
                state.columns,
                state.types,
                rows,
                state.total,
                state.elapsedMs,
                state.warnings,
              ),
            }),
          (error: unknown) =>
            this.replace(tabId, s, {
              kind: 'cancelled',
              afterMs: null,
              why: `The result is no longer kept by vdb (${errorOf(error).message}). Run the statement again`,
            }),
        );
        return { kind: 'running', started };
      }
    }
  }

  /** Replaces the state of a restored statement, if its tab still shows that run. */
  private replace(tabId: string, saved: Saved, state: StatementState): void {
    const run = this.runs.get(tabId);
    const i = run?.statements.findIndex((s) => s.from === saved.from && s.sql === saved.sql && s.state.kind === 'running') ?? -1;
    if (!run || i < 0 || this.controllers.has(tabId)) return;
    this.update(tabId, { ...run, statements: run.statements.map((s, j) => (j === i ? { ...s, state } : s)) });
  }
}

function savedOf(s: StatementRun): Saved {
  const base = { sql: s.sql, from: s.from, to: s.to, what: s.what };
  const state = s.state;
  switch (state.kind) {
    case 'rows': {
      const r = state.result;
      if (r.provisional) return { ...base, state: { kind: 'running' } };
      return {
        ...base,
        state: {
          kind: 'rows',
          requestId: r.requestId,
          columns: r.columns,
          types: r.types,
          total: r.total,
          elapsedMs: r.elapsedMs,
          warnings: r.warnings,
        },
      };
    }
    case 'error': {
      const e = state.error;
      const api = e instanceof ApiError ? e : null;
      return {
        ...base,
        state: {
          kind: 'error',
          status: api?.status ?? 0,
          title: api?.title ?? 'Error',
          description: api?.description ?? e.message,
          hint: api?.hint ?? null,
          range: state.range,
        },
      };
    }
    case 'running':
      return { ...base, state: { kind: 'running' } };
    default:
      return { ...base, state };
  }
}
