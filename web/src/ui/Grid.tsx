/**
 * The results grid. It renders only the rows on screen and asks PagedRows for their pages, so
 * scrolling through a million rows reads a few pages at a time from the cursor. Keyboard: arrows,
 * Page Up/Down, Home/End, Ctrl+Home/End; Ctrl+C copies the cell, Ctrl+Shift+C the row.
 */
import { Component } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Row } from '../lib/api.js';
import type { PagedRows } from '../lib/pages.js';
import { cellText } from '../lib/format.js';
import { Num } from '../lib/json.js';

export const ROW_HEIGHT = 26;
const HEADER_HEIGHT = 40;
/** Browsers cap element heights (about 33M px in Chromium); longer results scroll proportionally. */
const MAX_HEIGHT = 15_000_000;
const OVERSCAN = 20;

export interface Active {
  row: number;
  col: number;
}

export interface Sort {
  col: number;
  descending: boolean;
}

export interface GridProps {
  /** The column the rows are sorted by, if any. */
  sort: Sort | null;
  /** Sorts by a column (up, down, off); null when the result cannot be sorted here. */
  onSort: ((col: number) => void) | null;
  columns: string[];
  types: string[];
  pages: PagedRows;
  rowCount: number;
  active: Active;
  onActive: (a: Active) => void;
  onCopy: (what: 'cell' | 'row') => void;
  /** Shows a value in full (Enter: the selected one; a double click: the one clicked). */
  onView: (cell?: Active) => void;
  onError: (err: unknown) => void;
  /** The result's row number of each row shown (a filtered result); absent: the row's index. */
  rowNumbers?: readonly number[];
}

export function Grid({ columns, types, pages, rowCount, active, onActive, onCopy, onView, onError, sort, onSort, rowNumbers }: GridProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(400);
  const [, redraw] = useState(0);
  /** Column widths set by dragging (or the arrow keys on a column's edge); null: shared out. */
  const [widths, setWidths] = useState<Array<number | null>>(() => columns.map(() => null));
  const resize = (col: number, width: number) => setWidths((w) => w.map((x, i) => (i === col ? Math.max(48, Math.round(width)) : x)));
  const startDrag = (col: number, e: PointerEvent) => {
    e.preventDefault();
    const cell = (e.currentTarget as HTMLElement).parentElement!;
    const startX = e.clientX;
    const startWidth = cell.getBoundingClientRect().width;
    const onMove = (m: PointerEvent) => resize(col, startWidth + m.clientX - startX);
    const onUp = () => {
      removeEventListener('pointermove', onMove);
      removeEventListener('pointerup', onUp);
    };
    addEventListener('pointermove', onMove);
    addEventListener('pointerup', onUp);
  };

  const full = rowCount * ROW_HEIGHT;
  const height = Math.min(full, MAX_HEIGHT);
  // Scroll position -> row position; 1 unless the result is taller than the cap.
  const ratio = full > height && height > viewport ? (full - viewport) / (height - viewport) : 1;
  const position = scrollTop * ratio;
  const first = Math.max(0, Math.min(Math.floor(position / ROW_HEIGHT), rowCount - 1));
  const visible = Math.ceil(viewport / ROW_HEIGHT) + 1;
  const last = Math.max(0, Math.min(rowCount - 1, first + visible));

  useLayoutEffect(() => {
    const el = scroller.current!;
    const observer = new ResizeObserver(() => setViewport(el.clientHeight - HEADER_HEIGHT));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    // Rows already loaded need no second drawing of the frame: only a read of a missing page redraws.
    if (pages.has(first, Math.min(rowCount - 1, last + OVERSCAN))) return;
    let live = true;
    pages
      .ensure(first, Math.min(rowCount - 1, last + OVERSCAN))
      .then(() => live && redraw((n) => n + 1))
      .catch((err: unknown) => live && onError(err));
    return () => {
      live = false;
    };
  }, [pages, first, last, rowCount]);

  /** Scrolls so that row `row` is on screen. */
  const reveal = (row: number) => {
    const el = scroller.current!;
    const top = row * ROW_HEIGHT;
    if (top < position) el.scrollTop = top / ratio;
    else if (top + ROW_HEIGHT > position + viewport) el.scrollTop = (top + ROW_HEIGHT - viewport) / ratio;
  };

  const move = (row: number, col: number) => {
    const next = { row: Math.max(0, Math.min(rowCount - 1, row)), col: Math.max(0, Math.min(columns.length - 1, col)) };
    onActive(next);
    reveal(next.row);
  };

  const onKey = (e: KeyboardEvent) => {
    const page = Math.max(1, visible - 2);
    const mod = e.ctrlKey || e.metaKey;
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(active.row + 1, active.col),
      ArrowUp: () => move(active.row - 1, active.col),
      ArrowRight: () => move(active.row, active.col + 1),
      ArrowLeft: () => move(active.row, active.col - 1),
      PageDown: () => move(active.row + page, active.col),
      PageUp: () => move(active.row - page, active.col),
      Home: () => move(mod ? 0 : active.row, 0),
      End: () => move(mod ? rowCount - 1 : active.row, mod ? active.col : columns.length - 1),
      Enter: () => onView(),
    };
    if (mod && e.key.toLowerCase() === 'c') {
      e.preventDefault();
      onCopy(e.shiftKey ? 'row' : 'cell');
      return;
    }
    const action = keys[e.key];
    if (action) {
      e.preventDefault();
      action();
    }
  };

  const template = `64px ${widths.map((w) => (w === null ? 'minmax(140px, 1fr)' : `${w}px`)).join(' ')}`;
  const minWidth = 64 + widths.reduce<number>((sum, w) => sum + (w ?? 140), 0);
  // Row i is drawn by element i % slots: scrolling by a few rows gives new rows to as many
  // elements, and the others keep theirs (their text and place unchanged, nothing to lay out).
  const slots = rowCount > 0 ? last - first + 1 : 0;
  const rows: Array<[number, Row | undefined]> = [];
  for (let slot = 0; slot < slots; slot++) {
    const i = first + ((((slot - first) % slots) + slots) % slots);
    rows.push([i, pages.get(i)]);
  }
  const activeId = `cell-${active.row}-${active.col}`;

  return (
    <div
      class="grid"
      ref={scroller}
      role="grid"
      tabIndex={0}
      aria-label="Result rows"
      aria-rowcount={rowCount + 1}
      aria-colcount={columns.length + 1}
      aria-activedescendant={rows.some(([i]) => i === active.row) ? activeId : undefined}
      onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      onKeyDown={onKey}
      data-testid="grid"
    >
      <div class="grid-body" style={{ height: `${height + HEADER_HEIGHT}px`, minWidth: `${minWidth}px`, '--grid-columns': template }}>
        <div class="grid-head" role="row" aria-rowindex={1}>
          <div role="columnheader" class="rownum">
            #
          </div>
          {columns.map((c, i) => (
            <div
              role="columnheader"
              key={i}
              title={types[i] ? `${c} ${types[i]}` : c}
              aria-sort={sort?.col === i ? (sort.descending ? 'descending' : 'ascending') : undefined}
            >
              {onSort ? (
                <button
                  type="button"
                  class="name sort"
                  onClick={() => onSort(i)}
                  title={`Sort by ${c} (in the browser: every row is loaded)`}
                  data-testid="sort"
                >
                  {c}
                  {sort?.col === i ? (sort.descending ? ' ▼' : ' ▲') : ''}
                </button>
              ) : (
                <span class="name" title={`${c}: results of more than one chunk are sorted with ORDER BY`}>
                  {c}
                </span>
              )}
              <span class="type">{types[i] ?? ''}</span>
              <div
                class="resize"
                role="separator"
                aria-orientation="vertical"
                aria-label={`Width of ${c}`}
                aria-valuenow={widths[i] ?? undefined}
                tabIndex={0}
                onPointerDown={(e) => startDrag(i, e)}
                onKeyDown={(e) => {
                  if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
                  e.preventDefault();
                  e.stopPropagation();
                  const current = widths[i] ?? e.currentTarget.parentElement?.getBoundingClientRect().width ?? 140;
                  resize(i, current + (e.key === 'ArrowRight' ? 20 : -20));
                }}
                data-testid="column-resize"
              />
            </div>
          ))}
        </div>
        <GridRows
          rows={rows}
          columns={columns.length}
          numbers={rowNumbers}
          active={active}
          activeId={activeId}
          offset={HEADER_HEIGHT + scrollTop - position}
          onActive={onActive}
          onView={onView}
        />
      </div>
    </div>
  );
}

interface RowsProps {
  rows: Array<[number, Row | undefined]>;
  columns: number;
  numbers: readonly number[] | undefined;
  active: Active;
  activeId: string;
  /** Where row 0 would be drawn, in px from the top of the grid's body (each row is moved by its number). */
  offset: number;
  onActive: (a: Active) => void;
  onView: (cell?: Active) => void;
}

/**
 * The rows on screen, in a fixed set of row elements (no elements made or dropped per frame):
 * element `i % n` shows row i, placed by its own `top`, so a scroll of a few rows
 * changes the text and place of a few elements only. Clicks are handled once for all cells, by
 * the data-row and data-col of the cell clicked.
 */
function GridRows({ rows, columns, numbers, active, activeId, offset, onActive, onView }: RowsProps) {
  const cellAt = (e: MouseEvent): Active | null => {
    const cell = (e.target as HTMLElement).closest<HTMLElement>('[data-col]');
    const row = cell?.parentElement?.dataset.row;
    return cell && row !== undefined ? { row: Number(row), col: Number(cell.dataset.col) } : null;
  };
  return (
    <div
      class="grid-rows"
      style={{ transform: `translateY(${offset}px)` }}
      onClick={(e) => {
        const at = cellAt(e);
        if (at) onActive(at);
      }}
      onDblClick={(e) => {
        const at = cellAt(e);
        if (at) onView(at);
      }}
    >
      {rows.map(([i, row], slot) => (
        <GridRow
          key={slot}
          index={i}
          row={row}
          columns={columns}
          number={(numbers?.[i] ?? i) + 1}
          activeCol={i === active.row ? active.col : -1}
          activeId={activeId}
        />
      ))}
    </div>
  );
}

interface RowProps {
  index: number;
  row: Row | undefined;
  columns: number;
  /** The row number shown (the result's, in a filtered result). */
  number: number;
  /** The selected cell's column in this row, or -1. */
  activeCol: number;
  activeId: string;
}

/** One row element. Drawn again only when it shows another row, its row's page arrives, or its selection changes. */
class GridRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const now = this.props;
    return (
      next.index !== now.index ||
      next.row !== now.row ||
      next.columns !== now.columns ||
      next.number !== now.number ||
      next.activeCol !== now.activeCol ||
      (next.activeCol >= 0 && next.activeId !== now.activeId)
    );
  }

  override render() {
    const { index: i, row, columns, number, activeCol, activeId } = this.props;
    const cells = [];
    for (let c = 0; c < columns; c++) {
      const value = row?.[c];
      const isActive = c === activeCol;
      cells.push(
        <div
          role="gridcell"
          key={c}
          data-col={c}
          id={isActive ? activeId : undefined}
          aria-selected={isActive}
          class={`${row === undefined ? 'loading' : value === null ? 'null' : value instanceof Num ? 'num' : ''}${isActive ? ' active' : ''}`}
        >
          {row === undefined ? '…' : cellText(value)}
        </div>,
      );
    }
    return (
      <div role="row" class={i % 2 ? 'grid-row alt' : 'grid-row'} aria-rowindex={i + 2} data-row={i} style={{ top: `${i * ROW_HEIGHT}px` }}>
        <div role="rowheader" class="rownum">
          {number}
        </div>
        {cells}
      </div>
    );
  }
}
