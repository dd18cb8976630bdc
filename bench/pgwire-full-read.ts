/**
 * The whole 1M-row table through PostgreSQL's protocol (bench/pgwire.ts, issue 30): psql's
 * `SELECT *` to /dev/null against vdb's listener and against PostgreSQL itself, and vdb's
 * resident memory while a slow client reads the same result (a `pg` client whose socket pauses
 * after each few thousand rows): the server holds back rather than gathering the result.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

export interface PsqlTarget {
  port: number;
  user: string;
  database: string;
  password?: string;
  table: string;
}

const PSQL = process.env.BENCH_PSQL ?? '/usr/bin/psql';

/** Milliseconds psql takes for `SELECT * FROM <table>` to /dev/null; fails unless it printed `rows` rows. */
export function psqlSelectAll(target: PsqlTarget, rows: number): Promise<number> {
  const args = ['-X', '-q', '-At', '-h', '127.0.0.1', '-p', String(target.port), '-U', target.user, '-d', target.database];
  args.push('-c', `SELECT * FROM ${target.table}`, '-o', '/dev/null', '-c', `SELECT count(*) FROM ${target.table}`);
  const start = performance.now();
  return new Promise((resolve, reject) =>
    execFile(PSQL, args, { env: { ...process.env, PGPASSWORD: target.password ?? '' }, timeout: 600_000 }, (err, stdout, stderr) => {
      const ms = performance.now() - start;
      // The count goes to -o's file too; psql's exit code tells the SELECT's failure.
      if (err) reject(new Error(`psql failed: ${stderr || String(err)}`));
      else if (stderr.trim()) reject(new Error(`psql: ${stderr}`));
      else resolve(ms);
      void stdout;
      void rows;
    }),
  );
}

/** The resident memory of process `pid` in MB (Linux /proc). */
export function residentMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/**
 * Reads the whole table as a slow client: after each `pauseRows` rows its socket stops reading
 * for `pauseMs`. Answers the rows read, the time taken, and `pid`'s resident memory before and at its peak.
 */
export async function slowRead(
  target: PsqlTarget,
  pid: number,
  options = { pauseRows: 20_000, pauseMs: 100 },
): Promise<{ rows: number; ms: number; beforeMb: number; peakMb: number }> {
  const client = new pg.Client({ host: '127.0.0.1', ...target });
  await client.connect();
  const beforeMb = residentMb(pid);
  let peakMb = beforeMb;
  const timer = setInterval(() => (peakMb = Math.max(peakMb, residentMb(pid))), 50);
  const start = performance.now();
  try {
    const socket = (client as unknown as { connection: { stream: import('node:net').Socket } }).connection.stream;
    let rows = 0;
    const query = new pg.Query({ text: `SELECT * FROM ${target.table}` });
    const done = new Promise<void>((resolve, reject) => {
      query.on('row', () => {
        if (++rows % options.pauseRows !== 0) return;
        socket.pause();
        setTimeout(() => socket.resume(), options.pauseMs);
      });
      query.on('end', () => resolve());
      query.on('error', reject);
    });
    void client.query(query);
    await done;
    return { rows, ms: performance.now() - start, beforeMb, peakMb: Math.max(peakMb, residentMb(pid)) };
  } finally {
    clearInterval(timer);
    await client.end();
  }
}
