/**
 * Local copies (accelerated tables and materialized views, docs/copies.md): each copy's state,
 * age, rows, size, last refresh and error from SYS.Copies, with Refresh, Pause, Resume and Drop
 * where the user's permissions allow them, a copy's refresh history from SYSLOG.CopyRefreshes,
 * and a form to accelerate a table.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import { COPIES_SQL, copiesOf, freshness, refreshesOf, refreshesSql, schedule, size, timeText, type Copy } from '../lib/copies.js';
import { count, duration } from '../lib/format.js';
import { mayAccelerate, mayManageCopy, type Grants } from '../lib/permissions.js';
import { callProcedure, sqlLiteral } from '../lib/sql.js';
import { ErrorBox, useLoad } from './common.js';

type Procedure = 'refreshCopy' | 'pauseCopy' | 'resumeCopy' | 'dropCopy';

const DONE: Record<Procedure, string> = {
  refreshCopy: 'refreshed',
  pauseCopy: 'paused',
  resumeCopy: 'resumed',
  dropCopy: 'dropped',
};

/** A button's label while its call runs. */
const UNDER_WAY: Record<Procedure, string> = {
  refreshCopy: 'Refreshing…',
  pauseCopy: 'Pausing…',
  resumeCopy: 'Resuming…',
  dropCopy: 'Dropping…',
};

/** The time now, again every few seconds, so that ages go on counting while the screen is open. */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

export function Copies({ api, grants }: { api: Api; grants: Grants }) {
  const list = useLoad(async () => copiesOf(await api.query(COPIES_SQL)), [api]);
  const [selected, setSelected] = useState<string | null>(null);
  const [working, setWorking] = useState(new Map<string, Procedure>());
  const [error, setError] = useState<unknown>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [accelerating, setAccelerating] = useState(false);
  // Bumped by every action: the history below is read again.
  const [generation, setGeneration] = useState(0);
  const now = useNow(5000);
  const copies = list.value ?? [];

  // A copy being built (its first refresh runs after it was defined) is read again until it is done.
  const building = copies.some((c) => c.state === 'building');
  useEffect(() => {
    if (!building) return;
    const timer = setTimeout(list.reload, 2000);
    return () => clearTimeout(timer);
  }, [building, list.value]);

  const act = async (copy: Copy, procedure: Procedure) => {
    if (procedure === 'dropCopy' && !confirm(`Drop the copy of ${copy.name}? Statements read the source again.`)) return;
    setError(null);
    setMessage(null);
    setWorking((m) => new Map(m).set(copy.name, procedure));
    try {
      const answer = await api.query(callProcedure(procedure, copy.name));
      const action = String(answer.rows[0]?.[answer.columns.indexOf('Action')] ?? DONE[procedure]);
      const rows = answer.rows[0]?.[answer.columns.indexOf('Rows')];
      const detail = procedure === 'refreshCopy' && rows !== null && rows !== undefined ? `: ${count(Number(String(rows)))} rows` : '';
      setMessage(`Copy ${copy.name} ${action}${detail}.`);
      if (procedure === 'dropCopy' && selected === copy.name) setSelected(null);
    } catch (err) {
      setError(err);
    } finally {
      setWorking((m) => {
        const next = new Map(m);
        next.delete(copy.name);
        return next;
      });
      setGeneration((g) => g + 1);
      list.reload();
    }
  };

  return (
    <div class="copies">
      <div class="section-head">
        <h1>Local copies</h1>
        {mayAccelerate(grants) && (
          <button type="button" class="primary" aria-expanded={accelerating} onClick={() => setAccelerating(!accelerating)}>
            Accelerate a table
          </button>
        )}
        <button type="button" onClick={list.reload}>
          Reload
        </button>
      </div>
      {accelerating && (
        <Accelerate
          api={api}
          onDefined={(name) => {
            setAccelerating(false);
            setMessage(`Copy of ${name} defined; its first refresh is under way.`);
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
      <div class="table-wrap">
        <table class="data cards copies-list" aria-label="Local copies">
          <thead>
            <tr>
              <th scope="col">Copy</th>
              <th scope="col">State</th>
              <th scope="col">Age</th>
              <th scope="col">Rows</th>
              <th scope="col">Size</th>
              <th scope="col">Last refresh</th>
              <th scope="col">Next refresh</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {copies.map((c) => (
              <CopyRow
                key={c.name}
                copy={c}
                now={now}
                grants={grants}
                selected={selected === c.name}
                working={working.get(c.name) ?? null}
                onSelect={() => setSelected(c.name)}
                onAct={(p) => void act(c, p)}
              />
            ))}
          </tbody>
        </table>
      </div>
      {list.value?.length === 0 && (
        <p class="muted">
          No local copies of tables you may read. A copy keeps a source's table in vdb, so statements read it without the source.
        </p>
      )}
      {selected && copies.some((c) => c.name === selected) && <Refreshes key={`${selected}:${generation}`} api={api} copy={selected} />}
    </div>
  );
}

function CopyRow({
  copy: c,
  now,
  grants,
  selected,
  working,
  onSelect,
  onAct,
}: {
  copy: Copy;
  now: number;
  grants: Grants;
  selected: boolean;
  working: Procedure | null;
  onSelect: () => void;
  onAct: (procedure: Procedure) => void;
}) {
  const fresh = freshness(c, now);
  const button = (procedure: Procedure, label: string, danger = false) =>
    mayManageCopy(grants, c.schema, procedure) && (
      <button
        type="button"
        class={danger ? 'danger' : undefined}
        disabled={working !== null}
        aria-label={`${label} ${c.name}`}
        onClick={() => onAct(procedure)}
      >
        {working === procedure ? UNDER_WAY[procedure] : label}
      </button>
    );
  return (
    <tr data-copy={c.name} class={selected ? 'selected' : undefined}>
      <th scope="row" data-label="Copy">
        <button type="button" class="link" aria-pressed={selected} onClick={onSelect} title="Show its refreshes">
          {c.name}
        </button>
        <div class="muted small">
          {c.kind === 'view' ? 'materialized view · ' : ''}
          {schedule(c)}
        </div>
      </th>
      <td data-label="State" class={`copy-state ${c.state.startsWith('failing') ? 'failed' : c.state}`}>
        {working === 'refreshCopy' ? 'refreshing…' : c.state}
        {c.lastError && (
          <div class="error-text" data-testid="copy-error">
            {c.failures > 1 ? `${c.failures} failures: ` : ''}
            {c.lastError}
          </div>
        )}
      </td>
      <td data-label="Age" class={fresh.stale ? 'stale' : undefined}>
        <span data-testid="copy-age">{fresh.text}</span>
        <div class="muted small">{fresh.note}</div>
      </td>
      <td data-label="Rows" class="num" data-testid="copy-rows">
        {c.rows === null ? '–' : count(c.rows)}
      </td>
      <td data-label="Size" class="num">
        {c.bytes === null ? '–' : size(c.bytes)}
      </td>
      <td data-label="Last refresh" data-testid="copy-refreshed">
        <span class="nowrap">{timeText(c.refreshedAt)}</span>
        {c.lastRefreshMs !== null && <div class="muted small">took {duration(c.lastRefreshMs)}</div>}
        {c.version !== null && <div class="muted small">version {c.version}</div>}
      </td>
      <td data-label="Next refresh">
        {c.state === 'paused' ? 'paused' : c.refreshEvery === null ? 'when asked' : timeText(c.nextRefreshAt)}
      </td>
      <td class="actions">
        {button('refreshCopy', 'Refresh')}
        {c.state === 'paused' ? button('resumeCopy', 'Resume') : button('pauseCopy', 'Pause')}
        {/* A materialized view's copy is the view: DROP MATERIALIZED VIEW removes it. */}
        {c.kind !== 'view' && button('dropCopy', 'Drop', true)}
      </td>
    </tr>
  );
}

/** The last refreshes of one copy, newest first. */
function Refreshes({ api, copy }: { api: Api; copy: string }) {
  const log = useLoad(async () => refreshesOf(await api.query(refreshesSql(copy))), [api, copy]);
  return (
    <section class="copy-refreshes" aria-label={`Refreshes of ${copy}`}>
      <h2>Refreshes of {copy}</h2>
      <ErrorBox error={log.error} />
      <div class="table-wrap">
        <table class="data cards" aria-label={`Refreshes of ${copy}`}>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Rows read</th>
              <th scope="col">Took</th>
              <th scope="col">Instance</th>
            </tr>
          </thead>
          <tbody>
            {(log.value ?? []).map((r, i) => (
              <tr key={i}>
                <td data-label="Started" class="nowrap">
                  {timeText(r.startedAt)}
                </td>
                <td data-label="Kind">{r.kind}</td>
                <td data-label="Status" class={`status ${r.status === 'ok' ? 'ok' : 'failed'}`}>
                  {r.status}
                  {r.error && <div class="error-text">{r.error}</div>}
                </td>
                <td data-label="Rows read" class="num">
                  {r.rows === null ? '–' : count(r.rows)}
                </td>
                <td data-label="Took" class="num">
                  {r.durationMs === null ? '–' : duration(r.durationMs)}
                </td>
                <td data-label="Instance">{r.instance}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {log.value?.length === 0 && <p class="muted">No refresh yet.</p>}
      {log.value && log.value.length > 0 && <p class="muted small">Newest first; vdb keeps the last 20.</p>}
    </section>
  );
}

/** CALL SYSADMIN.accelerateTable with the arguments filled in (named, so the empty ones are left out). */
function Accelerate({ api, onDefined }: { api: Api; onDefined: (name: string) => void }) {
  const [table, setTable] = useState('');
  const [mode, setMode] = useState('full');
  const [every, setEvery] = useState('');
  const [staleness, setStaleness] = useState('');
  const [change, setChange] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const args: Array<[string, string]> = [
      ['tableName', table.trim()],
      ['mode', mode],
      ['refreshEvery', every.trim()],
      ['maxStaleness', staleness.trim()],
      ['changeColumn', mode === 'full' ? '' : change.trim()],
    ];
    const sql = `CALL SYSADMIN.accelerateTable(${args
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k} => ${sqlLiteral(v)}`)
      .join(', ')})`;
    try {
      const answer = await api.query(sql);
      onDefined(String(answer.rows[0]?.[0] ?? table.trim()));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="card" aria-label="Accelerate a table" onSubmit={submit}>
      <div class="form-grid">
        <label>
          Table (schema.table) *
          <input required value={table} onInput={(e) => setTable(e.currentTarget.value)} placeholder="pg.orders" data-testid="copy-table" />
        </label>
        <label>
          Mode
          <select value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
            <option value="full">full: the whole table each time</option>
            <option value="append">append: rows past the largest change value</option>
            <option value="upsert">upsert: rows changed since, by key</option>
          </select>
        </label>
        {mode !== 'full' && (
          <label>
            Change column *
            <input required value={change} onInput={(e) => setChange(e.currentTarget.value)} placeholder="updated_at" />
          </label>
        )}
        <label>
          Refresh every
          <input value={every} onInput={(e) => setEvery(e.currentTarget.value)} placeholder="1 hour (empty: when asked)" />
        </label>
        <label>
          Max staleness
          <input value={staleness} onInput={(e) => setStaleness(e.currentTarget.value)} placeholder="2 hours (empty: any age)" />
        </label>
      </div>
      <ErrorBox error={error} />
      <div class="toolbar">
        <button type="submit" class="primary" data-testid="accelerate">
          Accelerate
        </button>
      </div>
    </form>
  );
}
