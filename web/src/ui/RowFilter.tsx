/**
 * The result's filter box and its state. A result whose rows are all loaded is filtered at
 * once; a longer one is read again from its cursor, 10,000 rows a request, keeping only the rows
 * that match (with their row numbers in the result). A new text stops the reading of the last.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import { filterCursor, filterRows, type Filtered } from '../lib/filter.js';
import { count } from '../lib/format.js';
import type { RowsResult } from '../lib/workbench.js';

/** Rows per request while filtering a cursor. */
const FILTER_CHUNK = 10_000;
/** Typing pauses this long before a filter runs. */
const PAUSE_MS = 250;

export interface RowFilter {
  text: string;
  setText: (text: string) => void;
  /** The rows that match; null without a filter, or while they are being read. */
  filtered: Filtered | null;
  /** What the filter is doing: `Filtering… 20,000 rows read`, or null. */
  status: string | null;
  error: unknown;
}

export function useRowFilter(api: Api, result: RowsResult, whole: boolean): RowFilter {
  const [text, setText] = useState('');
  const [filtered, setFiltered] = useState<Filtered | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setFiltered(null);
    setError(null);
    setStatus(null);
    const needle = text.trim();
    if (!needle || result.provisional) return;
    if (whole) {
      setFiltered(filterRows(result.first, needle));
      return;
    }
    const stop = new AbortController();
    const timer = setTimeout(() => {
      setStatus('Filtering…');
      filterCursor(
        (offset, limit, signal) => api.page(result.requestId, offset, limit, signal),
        needle,
        result.total,
        FILTER_CHUNK,
        stop.signal,
        (read, matched) => setStatus(`Filtering… ${count(read)} rows read, ${count(matched)} found`),
      ).then(
        (found) => {
          setFiltered(found);
          setStatus(null);
        },
        (err: unknown) => {
          if (stop.signal.aborted) return;
          setError(err);
          setStatus(null);
        },
      );
    }, PAUSE_MS);
    return () => {
      clearTimeout(timer);
      stop.abort();
    };
  }, [api, result, whole, text]);
  return { text, setText, filtered, status, error };
}

export function FilterBox({ filter, disabled }: { filter: RowFilter; disabled: boolean }) {
  return (
    <input
      type="search"
      class="row-filter"
      placeholder="Filter rows"
      aria-label="Filter rows: those with a value that holds the text"
      title={disabled ? 'The whole result is still being computed' : 'Rows with a value that holds the text, case aside'}
      value={filter.text}
      disabled={disabled}
      onInput={(e) => filter.setText(e.currentTarget.value)}
      data-testid="row-filter"
    />
  );
}

/** The row count line's text with a filter: `3 of 100,000 rows`. */
export const filteredCount = (found: Filtered, total: number): string => `${count(found.rows.length)} of ${count(total)} rows match`;
