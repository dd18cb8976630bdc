/** A result: the grid, its toolbar (copy, CSV, chart) and its row count and time. */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import type { RowsResult } from '../lib/workbench.js';
import { copyText } from '../lib/clipboard.js';
import { csvBody } from '../lib/csv.js';
import { cellText, count, duration, isNumericColumn, rowText } from '../lib/format.js';
import { Grid, type Active, type Sort } from './Grid.js';
import { PagedRows } from '../lib/pages.js';
import { sortOrder } from '../lib/sort.js';
import { FilterBox, filteredCount, useRowFilter } from './RowFilter.js';
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
/** The most rows one request of a cursor answers (pagination.maxLimit): the limit of a whole-file format. */
const WHOLE_LIMIT = 100_000;

/** The formats the API serves (docs/rest.md#result-formats). */
const FORMATS = {
  csv: { label: 'CSV', accept: 'text/csv', extension: 'csv', whole: false },
  json: { label: 'JSON', accept: 'application/json', extension: 'json', whole: false },
  ndjson: { label: 'NDJSON', accept: 'application/x-ndjson', extension: 'ndjson', whole: false },
  arrow: { label: 'Arrow', accept: 'application/vnd.apache.arrow.stream', extension: 'arrows', whole: true },
  parquet: { label: 'Parquet', accept: 'application/vnd.apache.parquet', extension: 'parquet', whole: true },
} as const;
type Format = keyof typeof FORMATS;

export function ResultView({ api, result }: { api: Api; result: RowsResult }) {
  const [active, setActive] = useState<Active>({ row: 0, col: 0 });
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [chart, setChart] = useState(false);
  const [csv, setCsv] = useState<string | null>(null);
  const [format, setFormat] = useState<Format>('csv');
  /** Sorted in the browser only when every row is loaded: one chunk holds the whole result. */
  const [sort, setSort] = useState<Sort | null>(null);
  const whole = !result.provisional && result.total !== null && result.total <= result.first.length;
  const filter = useRowFilter(api, result, whole);
  const { filtered } = filter;
  /** The rows held in the browser (every row, or those the filter found): the ones a sort may order. */
  const held = useMemo(() => filtered ?? (whole ? { rows: result.first, numbers: null } : null), [filtered, whole, result]);
  const [pages, rowNumbers] = useMemo(() => {
    if (!held || (!sort && !filtered)) return [result.pages, undefined] as const;
    const order = sort ? sortOrder(held.rows, sort.col, sort.descending) : held.rows.map((_, i) => i);
    const rows = order.map((i) => held.rows[i]!);
    return [new PagedRows(async () => [], Math.max(1, rows.length), rows), order.map((i) => held.numbers?.[i] ?? i)] as const;
  }, [sort, held, result]);
  useEffect(() => setActive((a) => ({ row: 0, col: a.col })), [filtered]);
  const [viewing, setViewing] = useState<{ column: string; value: JsonValue | undefined } | null>(null);
  const view = async (cell: Active = active) => {
    try {
      await pages.ensure(cell.row, cell.row);
      setViewing({ column: result.columns[cell.col] ?? '', value: pages.get(cell.row)?.[cell.col] });
    } catch (err) {
      setError(err);
    }
  };
  const resultRows = result.total ?? result.first.length;
  const rowCount = filtered ? filtered.rows.length : resultRows;
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
      await pages.ensure(active.row, active.row);
      const row = pages.get(active.row);
      if (!row) throw new Error(`Row ${active.row + 1} could not be read.`);
      await copyText(what === 'cell' ? cellText(row[active.col]) : rowText(row));
      flash(what === 'cell' ? 'Cell copied' : 'Row copied');
    } catch (err) {
      setError(err);
    }
  };

  const download = async () => {
    setError(null);
    const spec = FORMATS[format];
    try {
      const parts: BlobPart[] = [];
      if (spec.whole) {
        // Arrow and Parquet files are whole: one request for the cursor's rows (at most 100,000).
        setCsv(`Preparing ${spec.label}…`);
        parts.push((await api.pageAs(result.requestId, 0, Math.max(1, rowCount), spec.accept)).body);
      } else {
        // Text formats come chunk by chunk of the cursor, written by vdb, and are joined here.
        const texts: string[] = [];
        for (let offset = 0; ; offset += CSV_CHUNK) {
          setCsv(`Preparing ${spec.label}… ${count(offset)} rows`);
          if (format === 'csv') {
            const page = await api.csvPage(result.requestId, offset, CSV_CHUNK);
            texts.push(offset === 0 ? page.text : csvBody(page.text));
            if (!page.more) break;
          } else {
            const page = await api.pageAs(result.requestId, offset, CSV_CHUNK, spec.accept, format === 'json' ? { array: false } : {});
            const text = await page.body.text();
            // A JSON chunk is an array of objects: the elements of all chunks make one array.
            const inner = format === 'json' ? text.trim().slice(1, -1).trim() : text;
            if (inner) texts.push(inner);
            if (!page.more) break;
          }
        }
        parts.push(format === 'json' ? `[${texts.join(',')}]` : texts.join(''));
      }
      const url = URL.createObjectURL(new Blob(parts, { type: spec.accept }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `result.${spec.extension}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      flash(`${spec.label} downloaded`);
    } catch (err) {
      setError(err);
    } finally {
      setCsv(null);
    }
  };
  const tooBig = FORMATS[format].whole && rowCount > WHOLE_LIMIT;

  return (
    <section class="result" aria-label="Result">
      <div class="toolbar" role="toolbar" aria-label="Result actions">
        <span class="count" data-testid="row-count" role="status">
          {filtered
            ? filteredCount(filtered, resultRows)
            : result.provisional
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
        <select
          value={format}
          onChange={(e) => setFormat(e.currentTarget.value as Format)}
          aria-label="Download format"
          data-testid="download-format"
        >
          {Object.entries(FORMATS).map(([key, f]) => (
            <option key={key} value={key}>
              {f.label}
            </option>
          ))}
        </select>
        <button
          type="button"
          onClick={download}
          disabled={csv !== null || result.provisional === true || tooBig}
          title={
            tooBig
              ? `${FORMATS[format].label} files are made whole, of up to ${count(WHOLE_LIMIT)} rows: add a LIMIT, or download CSV, JSON or NDJSON`
              : undefined
          }
          data-testid="csv"
        >
          {csv ?? `Download ${FORMATS[format].label}`}
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
        <FilterBox filter={filter} disabled={result.provisional === true} />
        {filter.status && (
          <span class="muted small" role="status" data-testid="filter-status">
            {filter.status}
          </span>
        )}
        <Note text={note} />
      </div>
      {result.warnings && (
        <p class="warning" role="note">
          Warnings: {result.warnings}
        </p>
      )}
      <ErrorBox error={error ?? filter.error} />
      {viewing && <ValueViewer column={viewing.column} value={viewing.value} onClose={() => setViewing(null)} />}
      {chart && <Chart columns={result.columns} numeric={numeric} rows={result.first} />}
      {result.columns.length > 0 ? (
        <Grid
          columns={result.columns}
          types={result.types}
          pages={pages}
          sort={held ? sort : null}
          rowNumbers={rowNumbers}
          onSort={
            held
              ? (col) => setSort(sort?.col === col ? (sort.descending ? null : { col, descending: true }) : { col, descending: false })
              : null
          }
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
