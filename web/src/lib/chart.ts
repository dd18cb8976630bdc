/** Geometry of the result chart: a numeric column (y) against another column (x), as SVG shapes. */
import type { Cell } from './api.js';
import { cellText } from './format.js';

export interface ChartGeometry {
  bars: Array<{ x: number; y: number; width: number; height: number; label: string; value: number }>;
  line: string;
  ticks: Array<{ y: number; label: string }>;
  min: number;
  max: number;
}

export const CHART = { width: 640, height: 260, left: 56, bottom: 24, top: 8, right: 8 };

/** Rows whose y is not a number are skipped. */
export function chartGeometry(rows: ReadonlyArray<readonly Cell[]>, x: number, y: number): ChartGeometry {
  const points = rows
    .map((r) => ({ label: cellText(r[x]), value: r[y] === null ? NaN : Number(r[y]) }))
    .filter((p) => p.value !== null && Number.isFinite(p.value)) as Array<{ label: string; value: number }>;
  const min = Math.min(0, ...points.map((p) => p.value));
  const max = Math.max(0, ...points.map((p) => p.value));
  const span = max - min || 1;
  const plotW = CHART.width - CHART.left - CHART.right;
  const plotH = CHART.height - CHART.top - CHART.bottom;
  const step = plotW / Math.max(points.length, 1);
  const yOf = (v: number) => CHART.top + plotH - ((v - min) / span) * plotH;
  const zero = yOf(0);
  const bars = points.map((p, i) => ({
    x: CHART.left + i * step + step * 0.1,
    y: Math.min(yOf(p.value), zero),
    width: Math.max(step * 0.8, 0.5),
    height: Math.abs(yOf(p.value) - zero),
    label: p.label,
    value: p.value,
  }));
  const line = points
    .map((p, i) => `${i === 0 ? 'M' : 'L'}${(CHART.left + (i + 0.5) * step).toFixed(1)},${yOf(p.value).toFixed(1)}`)
    .join(' ');
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const value = min + f * span;
    return { y: yOf(value), label: Math.abs(value) >= 1000 ? value.toExponential(1) : String(Number(value.toPrecision(3))) };
  });
  return { bars, line, ticks, min, max };
}
