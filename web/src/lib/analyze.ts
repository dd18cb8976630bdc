/**
 * EXPLAIN ANALYZE in the console. vdb's SQL refuses EXPLAIN ANALYZE (docs/sql.md#explain), so the
 * console does what it would: it reads the plan (EXPLAIN), runs the statement into a cursor (the
 * whole result is computed, its rows are not sent to the browser), and reads what the run took
 * from SYSLOG.QueryLog: vdb's time, the rows, and the statements the sources actually received.
 * The run carries a comment with a fresh tag so that its log entry is found exactly. As in
 * PostgreSQL, the statement really runs: a write writes.
 */
import type { Api } from './api.js';
import { consoleSql } from './catalog.js';
import { sqlLiteral } from './sql.js';

export interface Analysis {
  /** From the request to the cursor's first chunk, in the browser. */
  elapsedMs: number;
  /** vdb's time for the statement (SYSLOG.QueryLog DurationMs), if its entry was found. */
  durationMs: number | null;
  rows: number | null;
  /** One `source: statement` each, as sent; null when the log withholds them from this user. */
  sourceQueries: string[] | null;
}

/** `EXPLAIN ANALYZE <q>` or `EXPLAIN (ANALYZE …) <q>`: the statement to analyze, else null. */
export function analyzed(sql: string): string | null {
  const match = /^\s*explain\s+(?:analy[sz]e\b(?:\s+verbose\b)?|\(\s*analy[sz]e\b[^)]*\))\s*([\s\S]+)$/i.exec(sql);
  return match ? match[1]!.trim() : null;
}

/** The lines of QueryLog's SourceQueries: a line that starts with `name: ` begins a statement. */
export function sourceLines(text: string | null): string[] | null {
  if (text === null) return null;
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (out.length === 0 || /^[^\s:]+: /.test(line)) out.push(line);
    else out[out.length - 1] += `\n${line}`;
  }
  return out;
}

export async function analyze(api: Api, sql: string, signal: AbortSignal): Promise<Analysis> {
  const tag = `/* explain analyze ${Math.random().toString(36).slice(2, 10)} */`;
  const started = Date.now();
  await api.openCursor(`${tag} ${sql}`, 1, signal);
  const elapsedMs = Date.now() - started;
  const lookup = consoleSql(
    `SELECT "DurationMs", "RowCount", "SourceQueries" FROM SYSLOG.QueryLog WHERE "Statement" LIKE ${sqlLiteral(`${tag}%`)} ORDER BY "ID" DESC LIMIT 1`,
  );
  // The entry is written as the statement ends; give it a moment if it is not there yet.
  for (let attempt = 0; attempt < 5; attempt++) {
    const [row] = (await api.query(lookup, signal)).rows;
    if (row) {
      const [duration, rows, sources] = row;
      return {
        elapsedMs,
        durationMs: duration === null ? null : Number(String(duration)),
        rows: rows === null ? null : Number(String(rows)),
        sourceQueries: sourceLines(sources === null || sources === undefined ? null : String(sources)),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
  }
  return { elapsedMs, durationMs: null, rows: null, sourceQueries: null };
}
