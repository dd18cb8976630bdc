/**
 * What the small-request benchmarks share (point-lookup.ts, cursor-pages.ts, cluster.ts): the 1M-row
 * PostgreSQL table they read, the source `pg` over it, child processes, and the load generator run
 * in a process of its own.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { LoadResult, LoadSpec } from './load.js';
import { BASIC, expectStatus, request } from './vdb-server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Seconds of the same load before each measured row, not measured (JIT, pools, prepared statements). */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 2);
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
export function child(args: string[], ready?: RegExp): Promise<{ line: string; pid: number; stop: () => void }> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    process_.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = ready?.exec(output);
      if (match) resolve({ line: match[0], pid: process_.pid!, stop: () => process_.kill('SIGTERM') });
    });
    process_.once('exit', (code) => {
      if (ready) reject(new Error(`${args[0]} exited with ${code}: ${output}`));
      else if (code === 0) resolve({ line: output.trim().split('\n').pop() ?? '', pid: 0, stop: () => undefined });
      else reject(new Error(`${args[0]} exited with ${code}: ${output}`));
    });
  });
}

export async function load(spec: Omit<LoadSpec, 'connections' | 'seconds'>, seconds = SECONDS): Promise<LoadResult> {
  const { line } = await child([path.join(HERE, 'load.js'), JSON.stringify({ ...spec, connections: CONNECTIONS, seconds })]);
  return JSON.parse(line) as LoadResult;
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (Linux; 0 elsewhere).
 * Per request, it tells what a server costs whatever else the machine runs at the time.
 */
export function cpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ", in clock ticks.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
const TICKS_PER_SECOND = 100;

/** Adds the PostgreSQL source `pg` (database test, where the table lives) to the vdb at `url`. */
export async function addLookupSource(url: string): Promise<void> {
  const added = await request(`${url}/rest/api/source`, 'POST', BASIC, {
    name: 'pg',
    template: 'postgresql',
    connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
  });
  expectStatus(added, 201, `adding the PostgreSQL source at ${url}`);
}
