/**
 * The SQL screen: tabs of statements (kept across reloads), the editor, run/explain/cancel, and
 * each tab's results. Runs belong to the Workbench, not to this screen: leaving for another
 * screen neither cancels a statement nor drops a result. Run takes the selection or the
 * statement at the cursor; Run script takes every statement, each with its own result.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EditorView } from '@codemirror/view';
import type { Api } from '../lib/api.js';
import { loadCatalog, type Catalog } from '../lib/catalog.js';
import { duration } from '../lib/format.js';
import { splitStatements, statementAt, type Statement } from '../lib/statements.js';
import { closeTab, loadTabs, newTab, saveTabs, type TabState } from '../lib/tabs.js';
import type { Mode, StatementRun, TabRun, Workbench } from '../lib/workbench.js';
import type { OpenStatement } from './App.js';
import { Editor, type EditorMark } from './Editor.js';
import { PlanTree } from './PlanTree.js';
import { ResultView } from './ResultView.js';
import { SavedQueries } from './SavedQueries.js';
import { SchemaTree } from './SchemaTree.js';
import { ErrorBox, onTablistKey } from './common.js';

type Scope = 'script' | 'cursor';

/** The editor's statements to run: the selection's, else the one at the cursor (or all, for a script). */
function statementsOf(view: EditorView | null, doc: string, scope: Scope): Statement[] {
  if (!view) return splitStatements(doc);
  const { from, to, head } = view.state.selection.main;
  const text = view.state.doc.toString();
  if (from !== to) {
    return splitStatements(text.slice(from, to)).map((s) => ({ ...s, from: s.from + from, to: s.to + from }));
  }
  const all = splitStatements(text);
  if (scope === 'script') return all;
  const one = statementAt(all, head);
  return one ? [one] : [];
}

/** The error of the shown statement as a mark in the text, while the text there is unchanged. */
function markOf(run: TabRun | undefined, doc: string): EditorMark | null {
  const s = run?.statements[run.shown];
  if (s?.state.kind !== 'error' || !s.state.range || doc.slice(s.from, s.to) !== s.sql) return null;
  const e = s.state.error;
  return {
    from: s.from + s.state.range.from,
    to: s.from + s.state.range.to,
    message: 'description' in e ? `${e.title}: ${e.description}` : e.message,
  };
}

const label = (s: StatementRun, i: number) => {
  const glyph = { waiting: '…', running: '⏳', rows: '✓', plan: '✓', error: '✗', cancelled: '–' }[s.state.kind];
  return `${i + 1}: ${s.sql.replace(/\s+/g, ' ').slice(0, 24)} ${glyph}`;
};

export function QueryScreen({
  api,
  user,
  workbench,
  open,
  onOpened,
}: {
  api: Api;
  user: string;
  workbench: Workbench;
  /** A statement from another screen, opened once: onOpened tells the sender it was taken. */
  open: OpenStatement | null;
  onOpened: () => void;
}) {
  const [state, setState] = useState<TabState>(() => loadTabs(localStorage, user));
  const [catalog, setCatalog] = useState<Catalog | null>(null);
  const [catalogError, setCatalogError] = useState<unknown>(null);
  const [, tick] = useState(0);
  const view = useRef<EditorView | null>(null);
  const tab = state.tabs.find((t) => t.id === state.active) ?? state.tabs[0]!;
  const run = workbench.get(tab.id);
  const shown = run?.statements[run.shown];
  const running = workbench.running(tab.id);

  useEffect(() => workbench.subscribe(() => tick((n) => n + 1)), [workbench]);
  useEffect(() => saveTabs(localStorage, user, state), [state, user]);
  useEffect(() => {
    loadCatalog(api).then(setCatalog, setCatalogError);
  }, [api]);
  // The running time ticks while a statement runs.
  useEffect(() => {
    if (!running && shown?.state.kind !== 'running') return;
    const timer = setInterval(() => tick((n) => n + 1), 250);
    return () => clearInterval(timer);
  }, [running, shown?.state.kind]);

  // Saved at once as well as after the render: a reload right after typing keeps the statement.
  const setSql = (sql: string) =>
    setState((s) => {
      const next = { ...s, tabs: s.tabs.map((t) => (t.id === s.active ? { ...t, sql } : t)) };
      saveTabs(localStorage, user, next);
      return next;
    });

  const execute = (what: Mode, scope: Scope = 'cursor') => void workbench.run(tab.id, statementsOf(view.current, tab.sql, scope), what);

  /** A new tab holding `sql`, run at once if asked. */
  const openTab = (sql: string, runIt: boolean, title?: string) => {
    const fresh = newTab(state.tabs.length + 1, sql, title);
    setState((s) => ({ tabs: [...s.tabs, fresh], active: fresh.id }));
    if (runIt) void workbench.run(fresh.id, splitStatements(sql), 'run');
  };

  // A statement sent from the history or the sources screen.
  useEffect(() => {
    if (!open) return;
    openTab(open.sql, open.run);
    // Taken: coming back to this screen later must not open (and run) it again.
    onOpened();
  }, [open?.seq]);

  const addTab = () => {
    const fresh = newTab(state.tabs.length + 1);
    setState((s) => ({ tabs: [...s.tabs, fresh], active: fresh.id }));
  };
  const removeTab = (id: string) => {
    workbench.forget(id);
    setState((s) => closeTab(s, id));
  };
  /** A name from the schema tree, typed in at the cursor. */
  const insert = (text: string) => {
    const v = view.current;
    if (!v) return;
    const { from, to } = v.state.selection.main;
    v.dispatch({ changes: { from, to, insert: text }, selection: { anchor: from + text.length } });
    v.focus();
  };

  const st = shown?.state;
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
              {workbench.running(t.id) ? ' ⏳' : ''}
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
      <div class="workbench">
        <div role="tabpanel" id="statement-panel" aria-labelledby={`tab-${tab.id}`} class="tab-panel">
          <Editor
            tabId={tab.id}
            doc={tab.sql}
            catalog={catalog}
            mark={markOf(run, tab.sql)}
            onChange={setSql}
            onRun={() => execute('run')}
            onRunScript={() => execute('run', 'script')}
            onExplain={() => execute('explain')}
            onView={(v) => (view.current = v)}
          />
          <div class="toolbar" role="toolbar" aria-label="Statement">
            <button
              type="button"
              class="primary"
              onClick={() => execute('run')}
              disabled={running}
              data-testid="run"
              title="Ctrl+Enter: the selection, or the statement at the cursor"
            >
              Run
            </button>
            <button
              type="button"
              onClick={() => execute('run', 'script')}
              disabled={running}
              data-testid="run-script"
              title="Ctrl+Alt+Enter: every statement, in order"
            >
              Run script
            </button>
            <button type="button" onClick={() => execute('explain')} disabled={running} data-testid="explain" title="Ctrl+Shift+Enter">
              Explain
            </button>
            <button
              type="button"
              onClick={() => execute('analyze')}
              disabled={running}
              data-testid="explain-analyze"
              title="The plan, then the statement run (as EXPLAIN ANALYZE: a write writes), with its time, rows and what the sources received"
            >
              Explain analyze
            </button>
            <button type="button" onClick={() => workbench.cancel(tab.id)} disabled={!running} data-testid="cancel">
              Cancel
            </button>
            <SavedQueries
              api={api}
              sql={tab.sql}
              title={tab.title}
              onOpen={(q) => openTab(q.sql, false, q.name)}
              onSaved={(name) => setState((s) => ({ ...s, tabs: s.tabs.map((t) => (t.id === tab.id ? { ...t, title: name } : t)) }))}
            />
            <span class="muted small" role="status" data-testid="run-status">
              {st?.kind === 'running' &&
                `${{ explain: 'Explaining', analyze: 'Running and explaining', run: 'Running' }[shown?.what ?? 'run']}… ${duration(Date.now() - st.started)}`}
              {st?.kind === 'waiting' && 'Waiting for the statements before it…'}
              {st?.kind === 'cancelled' && `${st.why}${st.afterMs === null ? '' : ` after ${duration(st.afterMs)}`}.`}
              {st?.kind === 'plan' && `${st.analysis ? 'Run and plan' : 'Plan'} in ${duration(st.elapsedMs)}.`}
            </span>
            <span class="muted small kbd-help">
              Ctrl+Enter runs · Ctrl+Alt+Enter runs all · Ctrl+Shift+Enter explains · Ctrl+Space completes
            </span>
          </div>
          {catalogError !== null && <ErrorBox error={catalogError} />}
          {run && run.statements.length > 1 && (
            <div class="tabs result-tabs" role="tablist" aria-label="Results" onKeyDown={onTablistKey}>
              {run.statements.map((s, i) => (
                <button
                  type="button"
                  role="tab"
                  key={i}
                  aria-selected={i === run.shown}
                  tabIndex={i === run.shown ? 0 : -1}
                  title={s.sql.slice(0, 200)}
                  data-testid="result-tab"
                  onClick={() => workbench.show(tab.id, i)}
                >
                  {label(s, i)}
                </button>
              ))}
            </div>
          )}
          {st?.kind === 'error' && <ErrorBox error={st.error} />}
          {st?.kind === 'plan' && <PlanTree nodes={st.nodes} analysis={st.analysis} />}
          {st?.kind === 'rows' && <ResultView key={st.result.requestId} api={api} result={st.result} />}
        </div>
        {/* Beside the editor on the right, after it in the Tab order: the editor is reached first. */}
        <SchemaTree api={api} catalog={catalog} onInsert={insert} onPreview={(sql) => openTab(sql, true)} />
      </div>
    </div>
  );
}
