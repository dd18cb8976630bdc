/** Small pieces every screen uses: error display, a plain table for small results, copy buttons. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, type Result } from '../lib/api.js';
import { copyText } from '../lib/clipboard.js';
import { cellText } from '../lib/format.js';
import { Num } from '../lib/json.js';

/** An API error as the API wrote it: title, description, hint. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : null;
  const title = api?.title ?? 'Error';
  const description = api?.description ?? (error instanceof Error ? error.message : String(error));
  return (
    <div class="error" role="alert">
      <strong class="error-title">{title}</strong>
      <pre class="error-description">{description}</pre>
      {api?.hint && <p class="error-hint">Hint: {api.hint}</p>}
    </div>
  );
}

/** A transient note ("Copied") announced to screen readers. */
export function Note({ text }: { text: string | null }) {
  return (
    <span class="note" role="status" aria-live="polite">
      {text ?? ''}
    </span>
  );
}

export function CopyButton({ text, label = 'Copy', testId }: { text: string; label?: string; testId?: string }) {
  const [note, setNote] = useState<string | null>(null);
  const copy = useCallback(async () => {
    try {
      await copyText(text);
      setNote('Copied');
    } catch (err) {
      setNote(err instanceof Error ? err.message : 'Copy failed');
    }
    setTimeout(() => setNote(null), 2000);
  }, [text]);
  return (
    <>
      <button type="button" onClick={copy} data-testid={testId}>
        {label}
      </button>
      <Note text={note} />
    </>
  );
}

/** A small result (catalog, logs) as a plain table; NULL in its own style. */
export function DataTable({
  result,
  caption,
  actions,
}: {
  result: Result;
  caption?: string;
  actions?: (row: Result['rows'][number]) => ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table class="data">
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {result.columns.map((c, i) => (
              <th scope="col" key={i}>
                {c}
                {result.types[i] && <span class="type">{result.types[i]}</span>}
              </th>
            ))}
            {actions && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {result.rows.map((row, r) => (
            <tr key={r}>
              {row.map((v, i) => (
                <td key={i} class={v === null ? 'null' : v instanceof Num ? 'num' : undefined}>
                  {cellText(v)}
                </td>
              ))}
              {actions && <td class="actions">{actions(row)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      {result.rows.length === 0 && <p class="muted">No rows.</p>}
    </div>
  );
}

/** Runs `load` on mount and when `deps` change; gives its value, error and a reload. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { value: T | null; error: unknown; reload: () => void; busy: boolean } {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setBusy(true);
    load()
      .then((v) => live && (setValue(v), setError(null)))
      .catch((e: unknown) => live && setError(e))
      .finally(() => live && setBusy(false));
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { value, error, busy, reload: () => setRound((r) => r + 1) };
}

/**
 * Arrow keys, Home and End in a tablist (WAI-ARIA tabs): move to the neighbouring tab and select
 * it. Only the selected tab is in the Tab order (roving tabindex), so Tab leaves the list.
 */
export function onTablistKey(event: KeyboardEvent): void {
  const list = event.currentTarget as HTMLElement;
  const tabs = Array.from(list.querySelectorAll<HTMLElement>('[role=tab]'));
  const index = tabs.indexOf(document.activeElement as HTMLElement);
  if (index < 0) return;
  const target = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
  if (target === undefined) return;
  event.preventDefault();
  const tab = tabs[(target + tabs.length) % tabs.length]!;
  tab.focus();
  tab.click();
}
