/**
 * The SQL screen: tabs of statements (kept across reloads), the editor, run/explain/cancel, and
 * each tab's result. A run opens a cursor (pagination=true) and pages through it; cancelling
 * aborts the request, and vdb cancels the statement in the engine and at the sources.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import { loadCatalog, type Catalog } from '../lib/catalog.js';
import { countRows } from '../lib/count.js';
import { planTree, type PlanNode } from '../lib/explain.js';
import { duration } from '../lib/format.js';
import { PagedRows } from '../lib/pages.js';
import { closeTab, loadTabs, newTab, saveTabs, type TabState } from '../lib/tabs.js';
import type { OpenStatement } from './App.js';
import { Editor } from './Editor.js';
import { PlanTree } from './PlanTree.js';
import { ResultView, type RowsResult } from './ResultView.js';
import { ErrorBox, onTablistKey } from './common.js';

const PAGE_SIZE = 500;
const PLAN_COLUMNS = 'step,location,operation,object,pushed,sql';

type RunState =
  | { kind: 'running'; started: number; controller: AbortController; what: 'run' | 'explain' }
  | { kind: 'rows'; result: RowsResult }
  | { kind: 'plan'; nodes: PlanNode[]; elapsedMs: number }
  | { kind: 'error'; error: unknown }
  | { kind: 'cancelled'; afterMs: number };

export function QueryScreen({
  api,
  user,
  open,
  onOpened,
}: {
  api: Api;
  user: string;
  /** A statement from another screen, opened once: onOpened tells the sender it was taken. */
  open: OpenStatement | null;
  onOpened: () => void;
}) {
  const [state, setState] = useState<TabState>(() => loadTabs(localStorage, user));
  const [runs, setRuns] = useState(new Map<string, RunState>());
  const [catalog, setCatalog] = useState<Catalog | null>(null);
  const [catalogError, setCatalogError] = useState<unknown>(null);
  const [, tick] = useState(0);
  const tab = state.tabs.find((t) => t.id === state.active) ?? state.tabs[0]!;
  const run = runs.get(tab.id);
  const runsRef = useRef(runs);
  runsRef.current = runs;

  useEffect(() => saveTabs(localStorage, user, state), [state, user]);
  useEffect(() => {
    loadCatalog(api).then(setCatalog, setCatalogError);
  }, [api]);
  // The running time ticks while a statement runs.
  useEffect(() => {
    if (run?.kind !== 'running') return;
    const timer = setInterval(() => tick((n) => n + 1), 250);
    return () => clearInterval(timer);
  }, [run?.kind]);

  const setRun = (id: string, value: RunState) => setRuns((m) => new Map(m).set(id, value));
  // Saved at once as well as after the render: a reload right after typing keeps the statement.
  const setSql = (sql: string) =>
    setState((s) => {
      const next = { ...s, tabs: s.tabs.map((t) => (t.id === s.active ? { ...t, sql } : t)) };
      saveTabs(localStorage, user, next);
      return next;
    });

  const execute = async (what: 'run' | 'explain', sqlText = tab.sql, id = tab.id) => {
    const text = sqlText.trim();
    if (!text) return;
    const previous = runsRef.current.get(id);
    if (previous?.kind === 'running') previous.controller.abort();
    const controller = new AbortController();
    const started = performance.now();
    setRun(id, { kind: 'running', started, controller, what });
    try {
      if (what === 'explain') {
        const result = await api.query(`EXPLAIN ${text}`, controller.signal);
        setRun(id, { kind: 'plan', nodes: planTree(result), elapsedMs: performance.now() - started });
        return;
      }
      const first = await api.openCursor(text, PAGE_SIZE, controller.signal);
      const elapsedMs = performance.now() - started;
      if (first.columns.map((c) => c.toLowerCase()).join(',') === PLAN_COLUMNS) {
        setRun(id, { kind: 'plan', nodes: planTree(first), elapsedMs });
        return;
      }
      const pages = new PagedRows((offset, limit) => api.page(first.requestId, offset, limit), PAGE_SIZE, first.rows);
      const result: RowsResult = { ...first, sql: text, pages, first: first.rows, total: first.more ? null : first.rows.length, elapsedMs };
      setRun(id, { kind: 'rows', result });
      if (first.more) {
        const total = await countRows(first.rows.length, async (i) => (await api.page(first.requestId, i, 1)).length > 0);
        setRuns((m) => {
          const current = m.get(id);
          return current?.kind === 'rows' && current.result === result
            ? new Map(m).set(id, { kind: 'rows', result: { ...result, total } })
            : m;
        });
      }
    } catch (error) {
      if (controller.signal.aborted) setRun(id, { kind: 'cancelled', afterMs: performance.now() - started });
      else setRun(id, { kind: 'error', error });
    }
  };

  const cancel = () => {
    if (run?.kind === 'running') run.controller.abort();
  };

  // A statement sent from the history or the sources screen: a new tab, run at once if asked.
  useEffect(() => {
    if (!open) return;
    const fresh = newTab(state.tabs.length + 1, open.sql);
    setState((s) => ({ tabs: [...s.tabs, fresh], active: fresh.id }));
    if (open.run) void execute('run', open.sql, fresh.id);
    // Taken: coming back to this screen later must not open (and run) it again.
    onOpened();
  }, [open?.seq]);

  const addTab = () => {
    const fresh = newTab(state.tabs.length + 1);
    setState((s) => ({ tabs: [...s.tabs, fresh], active: fresh.id }));
  };
  const removeTab = (id: string) => {
    const r = runs.get(id);
    if (r?.kind === 'running') r.controller.abort();
    setState((s) => closeTab(s, id));
  };

  return (
    <div class="query-screen">
      <div class="tabs" role="tablist" aria-label="Statements" onKeyDown={onTablistKey}>
        {state.tabs.map((t) => (
          <span class="tab" key={t.id}>
            <button
              type="button"
              role="tab"
              id={`tab-${t.id}`}
              aria-selected={t.id === tab.id}
              aria-controls="statement-panel"
              tabIndex={t.id === tab.id ? 0 : -1}
              onClick={() => setState((s) => ({ ...s, active: t.id }))}
              title={t.sql.slice(0, 200)}
            >
              {t.title}
              {runs.get(t.id)?.kind === 'running' ? ' ⏳' : ''}
            </button>
            <button type="button" class="close" aria-label={`Close ${t.title}`} onClick={() => removeTab(t.id)}>
              ×
            </button>
          </span>
        ))}
        <button type="button" class="add" onClick={addTab} aria-label="New tab" data-testid="new-tab">
          +
        </button>
      </div>
      <div role="tabpanel" id="statement-panel" aria-labelledby={`tab-${tab.id}`} class="tab-panel">
        <Editor
          tabId={tab.id}
          doc={tab.sql}
          catalog={catalog}
          onChange={setSql}
          onRun={() => execute('run')}
          onExplain={() => execute('explain')}
        />
        <div class="toolbar" role="toolbar" aria-label="Statement">
          <button
            type="button"
            class="primary"
            onClick={() => execute('run')}
            disabled={run?.kind === 'running'}
            data-testid="run"
            title="Ctrl+Enter"
          >
            Run
          </button>
          <button
            type="button"
            onClick={() => execute('explain')}
            disabled={run?.kind === 'running'}
            data-testid="explain"
            title="Ctrl+Shift+Enter"
          >
            Explain
          </button>
          <button type="button" onClick={cancel} disabled={run?.kind !== 'running'} data-testid="cancel">
            Cancel
          </button>
          <span class="muted small" role="status" data-testid="run-status">
            {run?.kind === 'running' &&
              `${run.what === 'explain' ? 'Explaining' : 'Running'}… ${duration(performance.now() - run.started)}`}
            {run?.kind === 'cancelled' && `Cancelled after ${duration(run.afterMs)}.`}
            {run?.kind === 'plan' && `Plan in ${duration(run.elapsedMs)}.`}
          </span>
          <span class="muted small kbd-help">Ctrl+Enter runs · Ctrl+Shift+Enter explains · Ctrl+Space completes</span>
        </div>
        {catalogError !== null && <ErrorBox error={catalogError} />}
        {run?.kind === 'error' && <ErrorBox error={run.error} />}
        {run?.kind === 'plan' && <PlanTree nodes={run.nodes} />}
        {run?.kind === 'rows' && <ResultView key={run.result.requestId} api={api} result={run.result} />}
      </div>
    </div>
  );
}
