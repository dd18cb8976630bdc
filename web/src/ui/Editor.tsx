/**
 * The SQL editor: CodeMirror 6 with PostgreSQL highlighting and completion of the schemas,
 * tables and columns the user may read. Ctrl+Enter runs, Ctrl+Shift+Enter explains. One view
 * serves every tab; each tab keeps its own editor state (and so its undo history). `doc` only
 * seeds a tab's state: the editor owns the text, so typing never echoes back into it.
 */
import { useEffect, useRef } from 'preact/hooks';
import { EditorState, Compartment, Prec } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection, placeholder } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, type Completion } from '@codemirror/autocomplete';
import { bracketMatching, syntaxHighlighting, defaultHighlightStyle } from '@codemirror/language';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { sql, PostgreSQL, type SQLNamespace } from '@codemirror/lang-sql';
import type { Catalog } from '../lib/catalog.js';

export interface EditorProps {
  tabId: string;
  doc: string;
  catalog: Catalog | null;
  onChange: (doc: string) => void;
  onRun: () => void;
  onExplain: () => void;
}

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
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    placeholder('SELECT … (Ctrl+Enter runs)'),
    language.current.of(sql({ dialect: PostgreSQL, schema: namespace(latest.current.catalog), upperCaseKeywords: true })),
    Prec.highest(
      keymap.of([
        { key: 'Mod-Enter', run: () => (latest.current.onRun(), true) },
        { key: 'Shift-Mod-Enter', run: () => (latest.current.onExplain(), true) },
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
    return () => view.current?.destroy();
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

  return <div class="editor" ref={host} />;
}
