/** A result: the grid, its toolbar (copy, CSV, chart) and its row count and time. */
import { useMemo, useRef, useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import type { RowsResult } from '../lib/workbench.js';
import { copyText } from '../lib/clipboard.js';
import { csvBody } from '../lib/csv.js';
import { cellText, count, duration, isNumericColumn, rowText } from '../lib/format.js';
import { Grid, type Active } from './Grid.js';
import { Chart } from './Chart.js';
import { ErrorBox, Note } from './common.js';
import { RawJson, jsonPretty, type JsonValue } from '../lib/json.js';

/** A value in full: JSON laid out, long text wrapped, exact digits kept. */
function ValueViewer({ column, value, onClose }: { column: string; value: JsonValue | undefined; onClose: () => void }) {
  const text = value instanceof RawJson ? jsonPretty(value) : cellText(value);
  return (
    <section class="value-viewer" aria-label={`Value of ${column}`} data-testid="value-viewer">
      <div class="toolbar">
        <strong>{column}</strong>
        <span class="muted small">{value instanceof RawJson ? 'JSON' : value === null ? 'NULL' : `${count(text.length)} characters`}</span>
        <button type="button" onClick={() => void copyText(text)}>
          Copy value
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <pre class={value === null ? 'null' : undefined}>{text}</pre>
    </section>
  );
}

/** Rows per CSV request: big chunks, fewer round trips (the API caps a chunk at 100,000). */
const CSV_CHUNK = 10_000;

export function ResultView({ api, result }: { api: Api; result: RowsResult }) {
  const [active, setActive] = useState<Active>({ row: 0, col: 0 });
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [chart, setChart] = useState(false);
  const [csv, setCsv] = useState<string | null>(null);
  const [viewing, setViewing] = useState<{ column: string; value: JsonValue | undefined } | null>(null);
  const view = async (cell: Active = active) => {
    try {
      await result.pages.ensure(cell.row, cell.row);
      setViewing({ column: result.columns[cell.col] ?? '', value: result.pages.get(cell.row)?.[cell.col] });
    } catch (err) {
      setError(err);
    }
  };
  const rowCount = result.total ?? result.first.length;
  const numeric = useMemo(
    () =>
      result.columns
        .map((_, i) => i)
        .filter((i) =>
          isNumericColumn(
            result.types[i],
            result.first.slice(0, 50).map((r) => r[i] ?? null),
          ),
        ),
    [result],
  );

  // One timer: an earlier note's must not clear a later note before its two seconds.
  const noteTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const flash = (text: string) => {
    setNote(text);
    clearTimeout(noteTimer.current);
    noteTimer.current = setTimeout(() => setNote(null), 2000);
  };
  const copy = async (what: 'cell' | 'row') => {
    if (rowCount === 0) return;
    try {
      // The selected row's page may have been forgotten after scrolling far away: read it again,
      // rather than leave the clipboard holding what it held before.
      await result.pages.ensure(active.row, active.row);
      const row = result.pages.get(active.row);
      if (!row) throw new Error(`Row ${active.row + 1} could not be read.`);
      await copyText(what === 'cell' ? cellText(row[active.col]) : rowText(row));
      flash(what === 'cell' ? 'Cell copied' : 'Row copied');
    } catch (err) {
      setError(err);
    }
  };

  const download = async () => {
    setError(null);
    try {
      // vdb writes the CSV (Accept: text/csv), chunk by chunk of the cursor; one header line.
      const parts: string[] = [];
      for (let offset = 0; ; offset += CSV_CHUNK) {
        setCsv(`Preparing CSV… ${count(offset)} rows`);
        const page = await api.csvPage(result.requestId, offset, CSV_CHUNK);
        parts.push(offset === 0 ? page.text : csvBody(page.text));
        if (!page.more) break;
      }
      const url = URL.createObjectURL(new Blob(parts, { type: 'text/csv;charset=utf-8' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = 'result.csv';
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      flash('CSV downloaded');
    } catch (err) {
      setError(err);
    } finally {
      setCsv(null);
    }
  };

  return (
    <section class="result" aria-label="Result">
      <div class="toolbar" role="toolbar" aria-label="Result actions">
        <span class="count" data-testid="row-count" role="status">
          {result.provisional
            ? `Showing the first ${count(result.first.length)} · computing the whole result…`
            : result.total === null
              ? `${count(result.first.length)}+ rows, counting…`
              : `${count(result.total)} ${result.total === 1 ? 'row' : 'rows'}`}{' '}
          · {duration(result.elapsedMs)}
        </span>
        <button type="button" onClick={() => copy('cell')} disabled={rowCount === 0} title="Ctrl+C in the grid">
          Copy cell
        </button>
        <button type="button" onClick={() => copy('row')} disabled={rowCount === 0} title="Ctrl+Shift+C in the grid">
          Copy row
        </button>
        <button
          type="button"
          onClick={() => void view()}
          disabled={rowCount === 0}
          title="Enter or a double click in the grid"
          data-testid="view-value"
        >
          View value
        </button>
        <button type="button" onClick={download} disabled={csv !== null || result.provisional === true} data-testid="csv">
          {csv ?? 'Download CSV'}
        </button>
        <button
          type="button"
          aria-pressed={chart}
          onClick={() => setChart(!chart)}
          disabled={numeric.length === 0}
          data-testid="chart-toggle"
        >
          Chart
        </button>
        <Note text={note} />
      </div>
      {result.warnings && (
        <p class="warning" role="note">
          Warnings: {result.warnings}
        </p>
      )}
      <ErrorBox error={error} />
      {viewing && <ValueViewer column={viewing.column} value={viewing.value} onClose={() => setViewing(null)} />}
      {chart && <Chart columns={result.columns} numeric={numeric} rows={result.first} />}
      {result.columns.length > 0 ? (
        <Grid
          columns={result.columns}
          types={result.types}
          pages={result.pages}
          rowCount={rowCount}
          active={active}
          onActive={setActive}
          onCopy={copy}
          onView={(cell) => void view(cell)}
          onError={setError}
        />
      ) : (
        <p class="muted">The statement returned no columns.</p>
      )}
    </section>
  );
}
