/**
 * Local copies (docs/copies.md) as the console shows them: the rows of SYS.Copies and
 * SYSLOG.CopyRefreshes read into objects, and the words for a copy's age, size and schedule.
 */
import type { Cell, Result } from './api.js';
import { consoleSql } from './catalog.js';
import { sqlLiteral } from './sql.js';

export const COPIES_SQL = consoleSql(
  'SELECT "Name", "SchemaName", "Kind", "Mode", "ChangeColumn", "RefreshEverySeconds", "MaxStalenessSeconds", "State", ' +
    '"Version", "RowCount", "Bytes", "RefreshedAt", "LastRefreshMs", "NextRefreshAt", "Failures", "LastError" FROM SYS.Copies ORDER BY "Name"',
);

export const refreshesSql = (copy: string): string =>
  consoleSql(
    `SELECT "StartTime", "DurationMs", "Kind", "RowCount", "Status", "Error", "Instance" FROM SYSLOG.CopyRefreshes` +
      ` WHERE "CopyName" = ${sqlLiteral(copy)} ORDER BY "StartTime" DESC`,
  );

export interface Copy {
  name: string;
  schema: string;
  /** `table` (an accelerated table) or `view` (a materialized view). */
  kind: string;
  mode: string;
  changeColumn: string | null;
  refreshEvery: number | null;
  maxStaleness: number | null;
  /** building, ready, paused, failing, failing (last good copy kept). */
  state: string;
  version: number | null;
  rows: number | null;
  bytes: number | null;
  /** When the copy's rows were read from the source (ms since 1970), null before the first refresh. */
  refreshedAt: number | null;
  lastRefreshMs: number | null;
  nextRefreshAt: number | null;
  failures: number;
  lastError: string | null;
}

export interface Refresh {
  startedAt: number | null;
  durationMs: number | null;
  kind: string;
  rows: number | null;
  status: string;
  error: string | null;
  instance: string;
}

const num = (v: Cell | undefined): number | null => (v === null || v === undefined ? null : Number(String(v)));
const text = (v: Cell | undefined): string | null => (v === null || v === undefined ? null : String(v));

/** A TIMESTAMP of the system tables: UTC without a zone (`2026-11-29T08:25:26.892`). */
export function utcTime(v: Cell | undefined): number | null {
  const t = text(v);
  if (t === null) return null;
  const ms = Date.parse(/Z|[+-]\d\d:?\d\d$/.test(t) ? t : `${t.replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? null : ms;
}

export function copiesOf(result: Result): Copy[] {
  return result.rows.map((r) => ({
    name: String(r[0]),
    schema: String(r[1]),
    kind: String(r[2]),
    mode: String(r[3]),
    changeColumn: text(r[4]),
    refreshEvery: num(r[5]),
    maxStaleness: num(r[6]),
    state: String(r[7]),
    version: num(r[8]),
    rows: num(r[9]),
    bytes: num(r[10]),
    refreshedAt: utcTime(r[11]),
    lastRefreshMs: num(r[12]),
    nextRefreshAt: utcTime(r[13]),
    failures: num(r[14]) ?? 0,
    lastError: text(r[15]),
  }));
}

export function refreshesOf(result: Result): Refresh[] {
  return result.rows.map((r) => ({
    startedAt: utcTime(r[0]),
    durationMs: num(r[1]),
    kind: String(r[2]),
    rows: num(r[3]),
    status: String(r[4]),
    error: text(r[5]),
    instance: String(r[6] ?? ''),
  }));
}

/** Seconds as the largest whole unit that fits: `45 s`, `12 min`, `3 h`, `2 d`. */
export function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h${s % 3600 >= 60 ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86400)} d${s % 86400 >= 3600 ? ` ${Math.floor((s % 86400) / 3600)} h` : ''}`;
}

/** Bytes in binary units: `512 B`, `524 KiB`, `1.5 MiB`. */
export function size(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 || value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

export interface Freshness {
  /** `42 s old`, or `no copy yet`. */
  text: string;
  /** True when the copy is older than its maxStaleness: statements then read the source. */
  stale: boolean;
  /** What the bound means for statements. */
  note: string;
}

/** How old a copy is at `now` and whether statements still read it (docs/copies.md#reading-copies). */
export function freshness(copy: Copy, now: number): Freshness {
  if (copy.refreshedAt === null) return { text: 'no copy yet', stale: true, note: 'statements read the source' };
  const age = (now - copy.refreshedAt) / 1000;
  if (copy.maxStaleness === null) return { text: `${span(age)} old`, stale: false, note: 'read at any age' };
  const stale = age > copy.maxStaleness;
  return {
    text: `${span(age)} old`,
    stale,
    note: stale ? `older than ${span(copy.maxStaleness)}: statements read the source` : `read while at most ${span(copy.maxStaleness)} old`,
  };
}

/** `full`, `append on id`, `upsert on updated_at`; then `every 1 h` or `when asked`. */
export function schedule(copy: Copy): string {
  const mode = copy.changeColumn && copy.mode !== 'full' ? `${copy.mode} on ${copy.changeColumn}` : copy.mode;
  return `${mode} · ${copy.refreshEvery === null ? 'when asked' : `every ${span(copy.refreshEvery)}`}`;
}

/** A time as the console shows it, in UTC as vdb's logs: `2026-11-29 08:25:26`. */
export const timeText = (ms: number | null): string => (ms === null ? '–' : new Date(ms).toISOString().slice(0, 19).replace('T', ' '));
