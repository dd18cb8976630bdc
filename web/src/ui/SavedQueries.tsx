/**
 * Saved queries: the tab's text kept under a name by vdb (PUT /rest/api/preferences/queries/
 * {name}), so it is there after a reload, in another browser and in a later session. The list
 * opens one in a new tab named after it; saving under a name that exists replaces it.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api, SavedQuery } from '../lib/api.js';
import { ErrorBox, Note } from './common.js';

interface Props {
  api: Api;
  /** The text to save: the whole tab. */
  sql: string;
  /** The name offered when saving: the tab's. */
  title: string;
  onOpen: (query: SavedQuery) => void;
  onSaved: (name: string) => void;
}

export function SavedQueries({ api, sql, title, onOpen, onSaved }: Props) {
  const [list, setList] = useState<SavedQuery[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [naming, setNaming] = useState<string | null>(null);
  const [showing, setShowing] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const reload = () => api.savedQueries().then(setList, setError);
  useEffect(() => void reload(), [api]);

  const save = async (e: Event) => {
    e.preventDefault();
    if (naming === null) return;
    setError(null);
    try {
      const saved = await api.saveQuery(naming, sql);
      setNaming(null);
      setNote(`Saved as “${saved.name}”`);
      onSaved(saved.name);
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (name: string) => {
    if (!confirm(`Delete the saved query “${name}”?`)) return;
    setError(null);
    try {
      await api.deleteQuery(name);
      await reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div class="saved-queries">
      <button type="button" onClick={() => setNaming(naming === null ? title : null)} disabled={!sql.trim()} data-testid="save-query">
        Save…
      </button>
      <button type="button" aria-expanded={showing} onClick={() => setShowing(!showing)} data-testid="saved-queries">
        Saved queries{list ? ` (${list.length})` : ''}
      </button>
      <Note text={note} />
      {naming !== null && (
        <form class="inline-form" onSubmit={save} aria-label="Save the tab's text">
          <input
            aria-label="Name of the saved query"
            value={naming}
            maxLength={200}
            required
            onInput={(e) => setNaming(e.currentTarget.value)}
            data-testid="saved-query-name"
          />
          <button type="submit" class="primary">
            Save
          </button>
          <button type="button" onClick={() => setNaming(null)}>
            Cancel
          </button>
          {list?.some((q) => q.name === naming.trim()) && <span class="muted small">Replaces the saved query of that name.</span>}
        </form>
      )}
      {showing && (
        <ul class="saved-list" aria-label="Saved queries" data-testid="saved-list">
          {list?.length === 0 && <li class="muted small">No saved queries yet: Save… keeps the tab's text under a name.</li>}
          {list?.map((q) => (
            <li key={q.name}>
              <button
                type="button"
                class="link"
                title={q.sql.slice(0, 300)}
                onClick={() => {
                  setShowing(false);
                  onOpen(q);
                }}
              >
                {q.name}
              </button>
              <span class="muted small"> {new Date(q.savedAt).toLocaleString()}</span>
              <button type="button" class="small" aria-label={`Delete the saved query ${q.name}`} onClick={() => void remove(q.name)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorBox error={error} />
    </div>
  );
}
