/**
 * The schema tree beside the editor: the schemas the user sees (GET /rest/api/source), a
 * schema's tables and views when it is opened (GET /rest/api/source/{name}), a table's columns
 * with their types (SYS.Columns, the catalog completion reads too). A click types the name in at
 * the cursor; a table's Preview runs SELECT * … LIMIT 100 in a new tab. A schema's procedures
 * follow its tables; opening one lists its arguments and the columns of its answer
 * (SYS.ProcedureParams). The filter searches the whole catalog: schemas, tables and columns
 * whose name holds the text.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import { loadProcedureParams, type Catalog, type ColumnInfo, type ProcedureParam } from '../lib/catalog.js';
import { quoteIdent } from '../lib/sql.js';
import { ErrorBox } from './common.js';

/** A name as SQL: bare when PostgreSQL would read it unchanged, else quoted. */
export const sqlName = (name: string): string => (/^[a-z_][a-z0-9_$]*$/.test(name) ? name : quoteIdent(name));

interface TableEntry {
  name: string;
  type: string;
}

interface Props {
  api: Api;
  catalog: Catalog | null;
  onInsert: (text: string) => void;
  onPreview: (sql: string) => void;
}

export function SchemaTree({ api, catalog, onInsert, onPreview }: Props) {
  const [schemas, setSchemas] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [filter, setFilter] = useState('');
  const [open, setOpen] = useState(new Set<string>());
  const [tables, setTables] = useState(new Map<string, TableEntry[]>());
  const [params, setParams] = useState(new Map<string, ProcedureParam[]>());

  useEffect(() => {
    api.schemas().then(setSchemas, setError);
  }, [api]);

  const toggle = (key: string, schema?: string, procedure?: string) => {
    const next = new Set(open);
    if (next.has(key)) next.delete(key);
    else {
      next.add(key);
      if (schema !== undefined && procedure !== undefined) {
        if (!params.has(key))
          loadProcedureParams(api, schema, procedure).then((list) => setParams((m) => new Map(m).set(key, list)), setError);
      } else if (schema !== undefined && !tables.has(schema)) {
        api.objects(schema).then(
          (list) =>
            setTables((m) =>
              new Map(m).set(
                schema,
                list.map((t) => ({ name: t.Name, type: t.Type })),
              ),
            ),
          setError,
        );
      }
    }
    setOpen(next);
  };

  const needle = filter.trim().toLowerCase();
  /** With a filter: schema -> table -> columns that match (a matching table or schema keeps all). */
  const found = useMemo(() => {
    if (!needle || !catalog) return null;
    const result = new Map<string, Map<string, ColumnInfo[]>>();
    for (const [schema, tablesOf] of catalog) {
      for (const [table, columns] of tablesOf) {
        const whole = schema.toLowerCase().includes(needle) || table.toLowerCase().includes(needle);
        const cols = whole ? columns : columns.filter((c) => c.name.toLowerCase().includes(needle));
        if (!whole && cols.length === 0) continue;
        const m = result.get(schema) ?? new Map<string, ColumnInfo[]>();
        result.set(schema, m.set(table, cols));
      }
    }
    return result;
  }, [needle, catalog]);

  const columnItems = (columns: ColumnInfo[] | undefined) =>
    columns === undefined ? (
      <li class="muted small">Loading…</li>
    ) : (
      columns.map((c) => (
        <li key={c.name}>
          <button type="button" class="tree-item column" onClick={() => onInsert(sqlName(c.name))} title={`Insert ${c.name}`}>
            <span class="name">{c.name}</span> <span class="type">{c.type}</span>
          </button>
        </li>
      ))
    );

  const paramItems = (list: ProcedureParam[] | undefined) =>
    list === undefined ? (
      <li class="muted small">Loading…</li>
    ) : list.length === 0 ? (
      <li class="muted small">No arguments.</li>
    ) : (
      list.map((p) => (
        <li key={`${p.kind} ${p.name}`}>
          <button
            type="button"
            class={`tree-item ${p.kind === 'In' ? 'argument' : 'column'}`}
            onClick={() => onInsert(p.kind === 'In' ? `${sqlName(p.name)} => ` : sqlName(p.name))}
            title={p.kind === 'In' ? `Insert the argument ${p.name} =>` : `Insert ${p.name}`}
          >
            <span class="name">{p.name}</span> <span class="type">{p.type}</span>
            <span class="type">{p.kind === 'In' ? (p.optional ? ' argument, optional' : ' argument') : ' column of the answer'}</span>
          </button>
        </li>
      ))
    );

  const procedureItem = (schema: string, procedure: string) => {
    const key = `${schema}\u0000${procedure}()`;
    const expanded = open.has(key);
    const qualified = `${sqlName(schema)}.${sqlName(procedure)}`;
    return (
      <li key={`${procedure}()`}>
        <span class="tree-row">
          <button
            type="button"
            class="twisty"
            aria-expanded={expanded}
            aria-label={`Arguments of ${schema}.${procedure}`}
            onClick={() => toggle(key, schema, procedure)}
          >
            {expanded ? '▾' : '▸'}
          </button>
          <button
            type="button"
            class="tree-item procedure"
            onClick={() => onInsert(qualified)}
            title={`Insert ${qualified} (call it with CALL ${qualified}(…))`}
          >
            {procedure}
            <span class="type"> procedure</span>
          </button>
        </span>
        {expanded && <ul>{paramItems(params.get(key))}</ul>}
      </li>
    );
  };

  const tableItem = (schema: string, table: string, type: string, columns: ColumnInfo[] | undefined, forceOpen: boolean) => {
    const key = `${schema}\u0000${table}`;
    const expanded = forceOpen || open.has(key);
    const qualified = `${sqlName(schema)}.${sqlName(table)}`;
    return (
      <li key={table}>
        <span class="tree-row">
          <button
            type="button"
            class="twisty"
            aria-expanded={expanded}
            aria-label={`Columns of ${schema}.${table}`}
            onClick={() => toggle(key)}
          >
            {expanded ? '▾' : '▸'}
          </button>
          <button
            type="button"
            class={`tree-item ${type === 'View' ? 'view' : 'table'}`}
            onClick={() => onInsert(qualified)}
            title={`Insert ${qualified}`}
          >
            {table}
            {type === 'View' && <span class="type"> view</span>}
          </button>
          <button
            type="button"
            class="tree-action"
            aria-label={`Preview rows of ${schema}.${table}`}
            title="Preview 100 rows in a new tab"
            onClick={() => onPreview(`SELECT * FROM ${qualified} LIMIT 100`)}
          >
            ▶
          </button>
        </span>
        {expanded && <ul>{columnItems(columns)}</ul>}
      </li>
    );
  };

  return (
    <aside class="schema-tree" aria-label="Schemas">
      <input
        type="search"
        placeholder="Filter tables and columns"
        aria-label="Filter the schema tree"
        value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)}
        data-testid="tree-filter"
      />
      <ErrorBox error={error} />
      {found ? (
        <ul class="tree" data-testid="schema-tree">
          {[...found].map(([schema, tablesOf]) => (
            <li key={schema}>
              <button type="button" class="tree-item schema" onClick={() => onInsert(sqlName(schema))}>
                {schema}
              </button>
              <ul>{[...tablesOf].map(([table, columns]) => tableItem(schema, table, '', columns, true))}</ul>
            </li>
          ))}
          {found.size === 0 && <li class="muted small">Nothing matches.</li>}
        </ul>
      ) : (
        <ul class="tree" data-testid="schema-tree">
          {schemas === null && <li class="muted small">Loading…</li>}
          {(schemas ?? []).map((schema) => {
            const expanded = open.has(schema);
            const list = tables.get(schema);
            return (
              <li key={schema}>
                <span class="tree-row">
                  <button
                    type="button"
                    class="twisty"
                    aria-expanded={expanded}
                    aria-label={`Tables of ${schema}`}
                    onClick={() => toggle(schema, schema)}
                  >
                    {expanded ? '▾' : '▸'}
                  </button>
                  <button type="button" class="tree-item schema" onClick={() => onInsert(sqlName(schema))} title={`Insert ${schema}`}>
                    {schema}
                  </button>
                </span>
                {expanded && (
                  <ul>
                    {list === undefined && <li class="muted small">Loading…</li>}
                    {list?.length === 0 && <li class="muted small">No tables.</li>}
                    {list?.map((t) =>
                      t.type === 'Procedure'
                        ? procedureItem(schema, t.name)
                        : tableItem(schema, t.name, t.type, catalog?.get(schema)?.get(t.name), false),
                    )}
                  </ul>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </aside>
  );
}
