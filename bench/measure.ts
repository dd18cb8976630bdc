/**
 * What both benchmarks measure and print: the result of one timed run, a benchmark's runs,
 * their median, and plain-text tables.
 */

export interface RunResult {
  ms: number;
  /** Bytes received or produced (HTTP body, COPY text, JSON); 0 when not meaningful. */
  bytes: number;
  /** Time to the response headers (HTTP only): vdb sends them with the first chunk of rows. */
  ttfbMs?: number;
  /** Requests made (pagination). */
  requests?: number;
}

export interface Measured {
  name: string;
  runs: RunResult[];
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** A table with a header rule; the first `alignLeft` columns left-aligned, the others right. */
export function table(headers: string[], rows: string[][], alignLeft = 1): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < alignLeft ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
