/**
 * Sources: the list with each source's health, adding one (a form per kind, tested first),
 * refreshing and removing, and browsing schemas, tables, columns and rows.
 */
import { useRef, useState } from 'preact/hooks';
import type { Api, Result } from '../lib/api.js';
import { consoleSql } from '../lib/catalog.js';
import { callProcedure, quoteIdent, sqlLiteral } from '../lib/sql.js';
import { mayAddSource, mayAlterSource, mayRefreshSource, type Grants } from '../lib/permissions.js';
import { DataTable, ErrorBox, useLoad } from './common.js';
import { AddSource, EditSource } from './SourceForm.js';

type Health = { state: 'checking' } | { state: 'ok' } | { state: 'empty' } | { state: 'failed'; message: string };

interface SourceRow {
  name: string;
  kind: string;
  tables: number;
  description: string | null;
  connection: string;
}

const SYSTEM = ['SYS', 'SYSADMIN', 'SYSLOG'];

/** A source is healthy when one row of one of its tables can be read (the read is pushed down). */
async function checkHealth(api: Api, schema: string): Promise<Health> {
  // Paced: the table list and the read below wait for the console's own slot.
  const tables = await api.paced(() => api.tables(schema));
  const first = tables.find((t) => t.Type === 'Table') ?? tables[0];
  if (!first) return { state: 'empty' };
  try {
    await api.query(consoleSql(`SELECT 1 AS ok FROM ${quoteIdent(schema)}.${quoteIdent(first.Name)} LIMIT 1`));
    return { state: 'ok' };
  } catch (err) {
    return { state: 'failed', message: err instanceof Error ? err.message : String(err) };
  }
}

export function Sources({ api, grants, openInEditor }: { api: Api; grants: Grants; openInEditor: (sql: string, run: boolean) => void }) {
  const [health, setHealth] = useState(new Map<string, Health>());
  const [selected, setSelected] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [message, setMessage] = useState<string | null>(null);
  // Bumped by every change (refresh, removal): the browser below then reads the tables again.
  const [generation, setGeneration] = useState(0);

  const list = useLoad(async () => {
    const [schemas, info] = await Promise.all([
      api.schemas(),
      api.query(consoleSql('SELECT "Name", "Type", "Tables", "Description", "Connection" FROM SYSADMIN.DataSources')),
    ]);
    const byName = new Map(info.rows.map((r) => [String(r[0]), r]));
    const rows: SourceRow[] = schemas.map((name) => {
      const r = byName.get(name);
      return {
        name,
        kind: r ? String(r[1]) : SYSTEM.includes(name) ? 'system' : 'views',
        tables: r ? Number(r[2]) : 0,
        description: r ? (r[3] as string | null) : null,
        connection: r ? String(r[4] ?? '') : '',
      };
    });
    for (const row of rows.filter((r) => !['system', 'views'].includes(r.kind))) {
      setHealth((m) => new Map(m).set(row.name, { state: 'checking' }));
      void checkHealth(api, row.name).then((h) => setHealth((m) => new Map(m).set(row.name, h)));
    }
    return rows;
  }, [api]);

  const act = async (what: () => Promise<string>) => {
    setError(null);
    setMessage(null);
    try {
      setMessage(await what());
      setGeneration((g) => g + 1);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const refresh = (name: string) =>
    act(async () => {
      await api.query(callProcedure('refreshDataSource', name));
      return `Source ${name} refreshed.`;
    });
  const remove = (name: string) => {
    if (!confirm(`Remove the data source "${name}"? Its schema and the permissions on it are removed too.`)) return;
    void act(async () => {
      await api.removeSource(name);
      if (selected === name) setSelected(null);
      return `Source ${name} removed.`;
    });
  };

  return (
    <div class="sources">
      <div class="section-head">
        <h1>Sources</h1>
        {mayAddSource(grants) && (
          <button type="button" class="primary" onClick={() => setAdding(!adding)} aria-expanded={adding} data-testid="add-source">
            Add source
          </button>
        )}
        <button type="button" onClick={list.reload}>
          Reload
        </button>
      </div>
      {adding && (
        <AddSource
          api={api}
          onAdded={(name) => {
            setAdding(false);
            setMessage(`Source ${name} added.`);
            setSelected(name);
            list.reload();
          }}
        />
      )}
      {editing && list.value?.some((s) => s.name === editing) && (
        <EditSource
          key={editing}
          api={api}
          name={editing}
          template={list.value.find((s) => s.name === editing)!.kind}
          connection={list.value.find((s) => s.name === editing)!.connection}
          onCancel={() => setEditing(null)}
          onSaved={() => {
            const name = editing;
            setEditing(null);
            void act(async () => `Source ${name} now connects with the new settings.`);
          }}
        />
      )}
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <ErrorBox error={error ?? list.error} />
      <div class="split">
        {/* Its own scroll box: a long error in Health must not push the table under the browser beside it. */}
        <div class="table-wrap">
          <table class="data sources-list" aria-label="Data sources">
            <thead>
              <tr>
                <th scope="col">Schema</th>
                <th scope="col">Kind</th>
                <th scope="col">Tables</th>
                <th scope="col">Health</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {(list.value ?? []).map((s) => {
                const h = health.get(s.name);
                const own = !['system', 'views'].includes(s.kind);
                return (
                  <tr key={s.name} data-source={s.name} class={selected === s.name ? 'selected' : undefined}>
                    <th scope="row">
                      <button
                        type="button"
                        class="link"
                        onClick={() => setSelected(s.name)}
                        aria-pressed={selected === s.name}
                        title={s.description ?? s.connection}
                      >
                        {s.name}
                      </button>
                    </th>
                    <td>{s.kind}</td>
                    <td class="num">{own ? s.tables : ''}</td>
                    <td class={`health ${h?.state ?? ''}`} title={h?.state === 'failed' ? h.message : undefined}>
                      {h?.state === 'ok' && '● reachable'}
                      {h?.state === 'checking' && '… checking'}
                      {h?.state === 'empty' && '○ no tables'}
                      {h?.state === 'failed' && `✕ ${h.message}`}
                    </td>
                    <td class="actions">
                      {own && mayRefreshSource(grants, s.name) && (
                        <button type="button" onClick={() => refresh(s.name)}>
                          Refresh
                        </button>
                      )}
                      {own && mayAlterSource(grants, s.name) && (
                        <button type="button" onClick={() => setEditing(editing === s.name ? null : s.name)} aria-label={`Edit ${s.name}`}>
                          Edit
                        </button>
                      )}
                      {own && mayAlterSource(grants, s.name) && (
                        <button type="button" class="danger" onClick={() => remove(s.name)} aria-label={`Remove ${s.name}`}>
                          Remove
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        {selected && <Browse key={`${selected}:${generation}`} api={api} schema={selected} openInEditor={openInEditor} />}
      </div>
    </div>
  );
}

/** Tables of a schema, the columns of one table with their types, and a preview of its rows. */
function Browse({ api, schema, openInEditor }: { api: Api; schema: string; openInEditor: (sql: string, run: boolean) => void }) {
  const tables = useLoad(() => api.tables(schema), [schema]);
  const [table, setTable] = useState<string | null>(null);
  const [columns, setColumns] = useState<Result | null>(null);
  const [preview, setPreview] = useState<Result | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Answers can arrive out of order: only the newest request's answer is shown, so the columns or
  // rows of one table never appear under another's name.
  const latest = useRef(0);
  const open = async (name: string) => {
    const request = ++latest.current;
    setTable(name);
    setColumns(null);
    setPreview(null);
    setError(null);
    try {
      const answer = await api.query(
        consoleSql(
          `SELECT "Name", "DataType", "NullType", "IsPrimaryKey" FROM SYS.Columns WHERE "SchemaName" = ${sqlLiteral(schema)} AND "TableName" = ${sqlLiteral(name)} ORDER BY "Position"`,
        ),
      );
      if (request === latest.current) setColumns(answer);
    } catch (err) {
      if (request === latest.current) setError(err);
    }
  };
  const show = async () => {
    const request = ++latest.current;
    setError(null);
    try {
      const answer = await api.preview(schema, table!, 100);
      if (request === latest.current) setPreview(answer);
    } catch (err) {
      if (request === latest.current) setError(err);
    }
  };
  return (
    <section class="browse" aria-label={`Schema ${schema}`}>
      <h2>{schema}</h2>
      <ErrorBox error={tables.error ?? error} />
      <ul class="tables" aria-label="Tables">
        {(tables.value ?? []).map((t) => (
          <li key={t.Name}>
            <button type="button" class="link" aria-pressed={table === t.Name} onClick={() => open(t.Name)}>
              {t.Name}
            </button>{' '}
            <span class="muted small">
              {t.Type}
              {t.Description ? ` · ${t.Description}` : ''}
            </span>
          </li>
        ))}
        {tables.value?.length === 0 && <li class="muted">No tables you may read.</li>}
      </ul>
      {table && columns && (
        <>
          <h3>
            {schema}.{table}
          </h3>
          <DataTable result={columns} caption="Columns" />
          <div class="toolbar">
            <button type="button" onClick={show} data-testid="preview">
              Preview rows
            </button>
            <button type="button" onClick={() => openInEditor(`SELECT * FROM ${quoteIdent(schema)}.${quoteIdent(table)} LIMIT 1000`, true)}>
              Query in editor
            </button>
          </div>
          {preview && <DataTable result={preview} caption={`First ${preview.rows.length} rows`} />}
        </>
      )}
    </section>
  );
}
