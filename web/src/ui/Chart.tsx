/** A one-click chart of the loaded rows: a numeric column against another, as bars or a line. */
import { useMemo, useState } from 'preact/hooks';
import type { Row } from '../lib/api.js';
import { CHART, chartGeometry } from '../lib/chart.js';

export function Chart({ columns, numeric, rows }: { columns: string[]; numeric: number[]; rows: Row[] }) {
  const [kind, setKind] = useState<'bar' | 'line'>('bar');
  const [y, setY] = useState(numeric[numeric.length - 1] ?? 0);
  // x: the first column that is not the y column; the row number when there is only one.
  const [x, setX] = useState(() => columns.findIndex((_, i) => i !== (numeric[numeric.length - 1] ?? 0)));
  const shape = useMemo(() => chartGeometry(rows, x, y), [rows, x, y]);
  if (numeric.length === 0) return <p class="muted">No numeric column to chart.</p>;
  const xLabel = x >= 0 ? columns[x] : 'row';
  return (
    <figure class="chart" data-testid="chart">
      <div class="row">
        <label>
          Value (y)
          <select value={y} onChange={(e) => setY(Number(e.currentTarget.value))}>
            {numeric.map((i) => (
              <option key={i} value={i}>
                {columns[i]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Against (x)
          <select value={x} onChange={(e) => setX(Number(e.currentTarget.value))}>
            {columns.map((c, i) => (
              <option key={i} value={i}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <fieldset class="inline">
          <legend>Chart</legend>
          <label>
            <input type="radio" name="chart-kind" checked={kind === 'bar'} onChange={() => setKind('bar')} /> Bars
          </label>
          <label>
            <input type="radio" name="chart-kind" checked={kind === 'line'} onChange={() => setKind('line')} /> Line
          </label>
        </fieldset>
      </div>
      <svg viewBox={`0 0 ${CHART.width} ${CHART.height}`} role="img" aria-label={`${columns[y]} by ${xLabel}, ${shape.bars.length} points`}>
        {shape.ticks.map((t, i) => (
          <g key={i} class="tick">
            <line x1={CHART.left} x2={CHART.width - CHART.right} y1={t.y} y2={t.y} />
            <text x={CHART.left - 6} y={t.y + 4} text-anchor="end">
              {t.label}
            </text>
          </g>
        ))}
        {kind === 'bar' ? (
          shape.bars.map((b, i) => (
            <rect key={i} class="bar" x={b.x} y={b.y} width={b.width} height={b.height}>
              <title>{`${b.label}: ${b.value}`}</title>
            </rect>
          ))
        ) : (
          <path class="line" d={shape.line} />
        )}
        <text x={CHART.left} y={CHART.height - 6} class="axis">
          {xLabel}: {shape.bars[0]?.label ?? ''} … {shape.bars[shape.bars.length - 1]?.label ?? ''}
        </text>
      </svg>
      <figcaption class="muted small">
        {columns[y]} against {xLabel}, first {shape.bars.length} rows.
      </figcaption>
    </figure>
  );
}
