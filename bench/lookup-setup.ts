/**
 * What the small-request benchmarks share (point-lookup.ts, cursor-pages.ts): the 1M-row
 * PostgreSQL table both read, child processes, and the load generator run in a process of its own.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { LoadResult, LoadSpec } from './load.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const log = (line: string) => process.stderr.write(`${line}\n`);
export const ROWS = 1_000_000;

/** The table both sides read: created once (1M rows, primary key), kept for later runs. */
export async function ensureTable(): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', user: 'postgres', database: 'test' });
  await client.connect();
  try {
    const exists = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'bench_lookup'");
    if (exists.rows[0]?.n === '1') {
      const count = await client.query<{ n: string }>('SELECT count(*) AS n FROM bench_lookup');
      if (Number(count.rows[0]?.n) === ROWS) return;
      await client.query('DROP TABLE bench_lookup');
    }
    log(`creating bench_lookup (${ROWS} rows)...`);
    await client.query(`CREATE TABLE bench_lookup AS
      SELECT g::bigint AS id, (g % 100000)::int AS customer_id, round((g % 10000) * 1.37, 2)::numeric(12,2) AS amount,
             (ARRAY['open','paid','void'])[1 + g % 3] AS status, timestamp '2025-01-01' + g * interval '1 minute' AS created
      FROM generate_series(1, ${ROWS}) g`);
    await client.query('ALTER TABLE bench_lookup ADD PRIMARY KEY (id)');
    await client.query('ANALYZE bench_lookup');
  } finally {
    await client.end();
  }
}

/** Runs a child process until it prints a line matching `ready` (servers) or exits (loads). */
export function child(args: string[], ready?: RegExp): Promise<{ line: string; stop: () => void }> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    process_.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = ready?.exec(output);
      if (match) resolve({ line: match[0], stop: () => process_.kill('SIGTERM') });
    });
    process_.once('exit', (code) => {
      if (ready) reject(new Error(`${args[0]} exited with ${code}: ${output}`));
      else if (code === 0) resolve({ line: output.trim().split('\n').pop() ?? '', stop: () => undefined });
      else reject(new Error(`${args[0]} exited with ${code}: ${output}`));
    });
  });
}

export async function load(spec: Omit<LoadSpec, 'connections' | 'seconds'>): Promise<LoadResult> {
  const { line } = await child([path.join(HERE, 'load.js'), JSON.stringify({ ...spec, connections: CONNECTIONS, seconds: SECONDS })]);
  return JSON.parse(line) as LoadResult;
}
