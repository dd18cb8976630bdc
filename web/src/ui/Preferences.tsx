/** Preferences: the REST switch, the hosted link and database username; API keys (created, shown once, revoked). */
import { useState } from 'preact/hooks';
import type { Api, ApiKey } from '../lib/api.js';
import { CopyButton, ErrorBox, useLoad } from './common.js';

export function Preferences({ api }: { api: Api }) {
  const prefs = useLoad(() => api.preferences(), [api]);
  const [error, setError] = useState<unknown>(null);
  const toggle = async (rest: boolean) => {
    setError(null);
    try {
      await api.setRest(rest);
      prefs.reload();
    } catch (err) {
      setError(err);
    }
  };
  const p = prefs.value;
  return (
    <div class="preferences">
      <h1>Preferences</h1>
      <section class="card" aria-labelledby="rest-title">
        <h2 id="rest-title">REST interface</h2>
        <ErrorBox error={error ?? prefs.error} />
        {p && (
          <>
            <label class="switch">
              <input
                type="checkbox"
                role="switch"
                checked={p.rest}
                onChange={(e) => toggle(e.currentTarget.checked)}
                data-testid="rest-switch"
              />
              The hosted link is {p.rest ? 'on' : 'off'}
            </label>
            <label>
              Hosted link
              <span class="row">
                <input readOnly value={p.link} class="mono" data-testid="rest-link" aria-describedby="link-help" />
                <CopyButton text={p.link} label="Copy link" testId="copy-link" />
              </span>
            </label>
            <p id="link-help" class="muted small">
              Append <code>/api/query</code>, <code>/api/source</code> or <code>/api/status/</code>. Requests use HTTP Basic with the
              database username and your password. The link stays the same when the switch goes off and on again. Token, Basic and API-key
              requests to <code>/rest/api</code> work either way.
            </p>
            <label>
              Database username
              <span class="row">
                <input readOnly value={p.databaseUsername} class="mono" data-testid="db-username" />
                <CopyButton text={p.databaseUsername} label="Copy" />
              </span>
            </label>
          </>
        )}
      </section>
      <ApiKeys api={api} />
    </div>
  );
}

function ApiKeys({ api }: { api: Api }) {
  const keys = useLoad(() => api.keys(), [api]);
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [readOnly, setReadOnly] = useState(true);
  const [created, setCreated] = useState<ApiKey | null>(null);
  const [error, setError] = useState<unknown>(null);
  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      setCreated(await api.createKey(name, expires || null, readOnly));
      setName('');
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (key: ApiKey) => {
    if (!confirm(`Revoke the API key "${key.name}"? Applications using it stop working at once.`)) return;
    setError(null);
    try {
      await api.revokeKey(key.id);
      if (created?.id === key.id) setCreated(null);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p class="muted small">
        Applications send a key as <code>Authorization: Bearer &lt;key&gt;</code> on <code>/rest/api/…</code>. A key acts as you; a
        read-only key may only read.
      </p>
      <form class="row wrap" onSubmit={create} aria-label="Create an API key">
        <label>
          Name
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} data-testid="key-name" />
        </label>
        <label>
          Expires (optional)
          <input type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
        </label>
        <label class="inline">
          <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.currentTarget.checked)} /> Read-only
        </label>
        <button type="submit" class="primary" data-testid="create-key">
          Create key
        </button>
      </form>
      <ErrorBox error={error ?? keys.error} />
      {created?.key && (
        <div class="once" role="status" data-testid="new-key">
          <p>
            <strong>Your new key, shown only now.</strong> vdb keeps only its hash and cannot show it again.
          </p>
          <span class="row">
            <input readOnly value={created.key} class="mono" aria-label="New API key" />
            <CopyButton text={created.key} label="Copy key" />
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </span>
        </div>
      )}
      <div class="table-wrap">
        <table class="data" aria-label="Your API keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Access</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(keys.value ?? []).map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td class="mono">{k.id}</td>
                <td>{k.readOnly ? 'read-only' : 'read-write'}</td>
                <td class="nowrap">{k.createdAt}</td>
                <td class="nowrap">{k.expiresAt ?? 'never'}</td>
                <td class="actions">
                  <button type="button" class="danger" onClick={() => revoke(k)} aria-label={`Revoke ${k.name}`}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {keys.value?.length === 0 && <p class="muted">No keys.</p>}
    </section>
  );
}
