/**
 * The SQL editor: CodeMirror 6 with PostgreSQL highlighting and completion of the schemas,
 * tables and columns the user may read. Ctrl+Enter runs, Ctrl+Shift+Enter explains. One view
 * serves every tab; each tab keeps its own editor state (and so its undo history). `doc` only
 * seeds a tab's state: the editor owns the text, so typing never echoes back into it.
 */
import { useEffect, useRef } from 'preact/hooks';
import { EditorState, Compartment, Prec, StateEffect, StateField } from '@codemirror/state';
import {
  Decoration,
  EditorView,
  keymap,
  lineNumbers,
  highlightActiveLine,
  drawSelection,
  placeholder,
  type DecorationSet,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, type Completion } from '@codemirror/autocomplete';
import { bracketMatching, syntaxHighlighting } from '@codemirror/language';
import { classHighlighter } from '@lezer/highlight';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { sql, PostgreSQL, type SQLNamespace } from '@codemirror/lang-sql';
import type { Catalog } from '../lib/catalog.js';

/** A place in the text to mark as wrong, with the message shown on hover. */
export interface EditorMark {
  from: number;
  to: number;
  message: string;
}

export interface EditorProps {
  tabId: string;
  doc: string;
  catalog: Catalog | null;
  /** The error of the tab's last run, where it is in the text; null for none. */
  mark: EditorMark | null;
  onChange: (doc: string) => void;
  onRun: () => void;
  onRunScript: () => void;
  onExplain: () => void;
  /** The view, for reading the selection and the cursor, and for inserting names. */
  onView: (view: EditorView | null) => void;
}

/**
 * The editor in the console's colours (CSS variables, so it follows the light or dark theme):
 * CodeMirror's own base theme would keep a light gutter and selection in the dark.
 */
const theme = EditorView.theme({
  '&': { color: 'var(--text)', backgroundColor: 'var(--panel)' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection': {
    backgroundColor: 'var(--selection)',
  },
  '.cm-gutters': { backgroundColor: 'var(--gutter)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine': { backgroundColor: 'var(--active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--active-line)', color: 'var(--text)' },
  '.cm-selectionMatch': { backgroundColor: 'var(--selection-match)' },
  '&.cm-focused .cm-matchingBracket': { backgroundColor: 'var(--selection-match)', outline: '1px solid var(--muted)' },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--text)', border: '1px solid var(--line)' },
  '.cm-tooltip-autocomplete > ul > li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--accent-text)' },
  '.cm-completionDetail': { color: 'var(--muted)' },
  '.cm-panels': { backgroundColor: 'var(--panel)', color: 'var(--text)' },
  '.cm-searchMatch': { backgroundColor: 'var(--selection-match)', outline: '1px solid var(--focus)' },
  '.cm-placeholder': { color: 'var(--muted)' },
});

const setMark = StateEffect.define<EditorMark | null>();

/** The error mark: moves with edits before it, goes when the marked text is edited. */
const markField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    let next = marks.map(tr.changes);
    if (tr.docChanged) {
      tr.changes.iterChangedRanges((from, to) => {
        next = next.update({ filter: (f, t) => t < from || f > to });
      });
    }
    for (const effect of tr.effects) {
      if (!effect.is(setMark)) continue;
      const m = effect.value;
      next =
        m && m.from < m.to && m.to <= tr.state.doc.length
          ? Decoration.set([
              Decoration.mark({ class: 'cm-error-mark', attributes: { title: m.message, 'data-testid': 'error-mark' } }).range(
                m.from,
                m.to,
              ),
            ])
          : Decoration.none;
    }
    return next;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/** The catalog as lang-sql's namespace: schema -> table -> columns with their types. */
function namespace(catalog: Catalog | null): SQLNamespace {
  const ns: Record<string, Record<string, Completion[]>> = {};
  for (const [schema, tables] of catalog ?? []) {
    ns[schema] = {};
    for (const [table, columns] of tables) {
      ns[schema][table] = columns.map((c) => ({ label: c.name, type: 'property', detail: c.type }));
    }
  }
  return ns;
}

export function Editor(props: EditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const states = useRef(new Map<string, EditorState>());
  const language = useRef(new Compartment());
  // The callbacks change with every render; the keymap reads them through this ref.
  const latest = useRef(props);
  latest.current = props;

  const extensions = () => [
    lineNumbers(),
    history(),
    drawSelection(),
    highlightActiveLine(),
    bracketMatching(),
    closeBrackets(),
    highlightSelectionMatches(),
    autocompletion({ activateOnTyping: true }),
    // Tokens get stable tok-* classes, coloured in styles.css for the light and the dark theme.
    syntaxHighlighting(classHighlighter),
    theme,
    markField,
    placeholder('SELECT … (Ctrl+Enter runs)'),
    language.current.of(sql({ dialect: PostgreSQL, schema: namespace(latest.current.catalog), upperCaseKeywords: true })),
    Prec.highest(
      keymap.of([
        { key: 'Mod-Enter', run: () => (latest.current.onRun(), true) },
        { key: 'Shift-Mod-Enter', run: () => (latest.current.onExplain(), true) },
        { key: 'Alt-Mod-Enter', run: () => (latest.current.onRunScript(), true) },
      ]),
    ),
    keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...completionKeymap, indentWithTab]),
    EditorView.updateListener.of((update) => {
      if (update.docChanged) latest.current.onChange(update.state.doc.toString());
    }),
    EditorView.contentAttributes.of({ 'aria-label': 'SQL statement', 'data-testid': 'sql-editor' }),
  ];

  const stateFor = (tabId: string, doc: string) => {
    const saved = states.current.get(tabId);
    if (saved && saved.doc.toString() === doc) return saved;
    return EditorState.create({ doc, extensions: extensions() });
  };

  useEffect(() => {
    view.current = new EditorView({ state: stateFor(props.tabId, props.doc), parent: host.current! });
    latest.current.onView(view.current);
    return () => {
      latest.current.onView(null);
      view.current?.destroy();
    };
  }, []);

  // Switching tabs: keep the old tab's state, show the new one's.
  const shown = useRef(props.tabId);
  useEffect(() => {
    const v = view.current;
    if (!v || shown.current === props.tabId) return;
    states.current.set(shown.current, v.state);
    v.setState(stateFor(props.tabId, props.doc));
    shown.current = props.tabId;
    // Focus follows to the text, except from the tab list, where the arrow keys go on to other tabs.
    if (document.activeElement?.getAttribute('role') !== 'tab') v.focus();
  }, [props.tabId]);

  // The catalog arrives after the editor: completion is reconfigured, the text kept.
  useEffect(() => {
    states.current.clear();
    view.current?.dispatch({
      effects: language.current.reconfigure(sql({ dialect: PostgreSQL, schema: namespace(props.catalog), upperCaseKeywords: true })),
    });
  }, [props.catalog]);

  // The mark follows the tab's last error (set after a tab switch, too).
  useEffect(() => {
    view.current?.dispatch({ effects: setMark.of(props.mark) });
  }, [props.mark?.from, props.mark?.to, props.mark?.message, props.tabId]);

  return <div class="editor" ref={host} />;
}
