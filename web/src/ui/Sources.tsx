/**
 * Sources: the list with each source's health, adding one (a form per kind, tested first),
 * refreshing and removing, and browsing schemas, tables, columns and rows.
 */
import { useRef, useState } from 'preact/hooks';
import type { Api, Result } from '../lib/api.js';
import { consoleSql } from '../lib/catalog.js';
import { KINDS, missingFields, sourceSpec } from '../lib/props.js';
import { callProcedure, quoteIdent, sqlLiteral } from '../lib/sql.js';
import { mayAddSource, mayAlterSource, mayRefreshSource, type Grants } from '../lib/permissions.js';
import { DataTable, ErrorBox, useLoad } from './common.js';

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

/** The add-source form. "Test connection" adds the source under a throw-away name and removes it again. */
function AddSource({ api, onAdded }: { api: Api; onAdded: (name: string) => void }) {
  const [name, setName] = useState('');
  const [template, setTemplate] = useState(KINDS[0]!.template);
  const [values, setValues] = useState<Record<string, string>>({});
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const kind = KINDS.find((k) => k.template === template)!;

  const check = () => {
    const missing = missingFields(kind, values);
    if (missing.length > 0) throw new Error(`Fill in: ${missing.join(', ')}.`);
  };
  const test = async () => {
    setError(null);
    setStatus(null);
    setBusy(true);
    // The API has no dry run: adding connects and imports, so a test adds under a name of its own and removes it.
    const probe = `console_test_${Math.random().toString(36).slice(2, 10)}`;
    try {
      check();
      const added = await api.addSource(sourceSpec(probe, kind, values));
      await api.removeSource(probe);
      setStatus(`Connection works: ${added.tables.length} table(s) found.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setStatus(null);
    setBusy(true);
    try {
      check();
      const added = await api.addSource(sourceSpec(name, kind, values, description));
      onAdded(added.name);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card add-source" onSubmit={save} aria-label="Add a data source">
      <div class="form-grid">
        <label>
          Name
          <input
            name="source-name"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            required
            pattern="[A-Za-z_][A-Za-z0-9_$]{0,62}"
          />
        </label>
        <label>
          Kind
          <select name="source-kind" value={template} onChange={(e) => setTemplate(e.currentTarget.value)}>
            {KINDS.map((k) => (
              <option key={k.template} value={k.template}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        {kind.fields.map((f) => (
          <label key={`${template}-${f.key}`}>
            {f.label}
            {f.required ? ' *' : ''}
            {f.type === 'password' ? (
              <input
                name={f.key}
                type="password"
                value={values[f.key] ?? ''}
                autocomplete="new-password"
                onInput={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })}
              />
            ) : (
              <input
                name={f.key}
                inputMode={f.numeric ? 'numeric' : undefined}
                placeholder={f.placeholder}
                value={values[f.key] ?? ''}
                autocomplete="off"
                onInput={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })}
              />
            )}
          </label>
        ))}
        <label class="wide">
          Description
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
      </div>
      <div class="toolbar">
        <button type="button" onClick={test} disabled={busy} data-testid="test-connection">
          Test connection
        </button>
        <button type="submit" class="primary" disabled={busy} data-testid="save-source">
          Save source
        </button>
        <span role="status" class="notice-inline" data-testid="test-status">
          {status ?? ''}
        </span>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}
