/**
 * Small requests, side by side in one run (issue 11): point lookups by primary key on a
 * 1M-row PostgreSQL table and `SELECT 1`, through vdb's /rest/api/query with token
 * authentication, against a bare fastify + pg handler doing the same (baseline-server.ts).
 * 50 connections; the load comes from a process of its own (load.ts). Prints requests/s,
 * latency percentiles, the ratios to the reference, the machine's load and the loader's CPU
 * share (a loader near 100% of a core measures itself, not the server).
 *
 * Usage: npm run build && node dist/bench/point-lookup.js   (BENCH_SECONDS=10, BENCH_CONNECTIONS=50, BENCH_ONLY=<row>)
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { table } from './measure.js';
import type { LoadResult, LoadSpec } from './load.js';
import { BASIC, expectStatus, request, startVdb, text } from './vdb-server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROWS = 1_000_000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The table both sides read: created once (1M rows, primary key), kept for later runs. */
async function ensureTable(): Promise<void> {
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
function child(args: string[], ready?: RegExp): Promise<{ line: string; stop: () => void }> {
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

async function load(spec: Omit<LoadSpec, 'connections' | 'seconds'>): Promise<LoadResult> {
  const { line } = await child([path.join(HERE, 'load.js'), JSON.stringify({ ...spec, connections: CONNECTIONS, seconds: SECONDS })]);
  return JSON.parse(line) as LoadResult;
}

await ensureTable();
const vdb = await startVdb({ demo: false });
const baseline = await child([path.join(HERE, 'baseline-server.js')], /listening on (http:\/\/\S+)/);
const baselineUrl = /listening on (http:\/\/\S+)/.exec(baseline.line)![1]!;
try {
  const added = await request(`${vdb.url}/rest/api/source`, 'POST', BASIC, {
    name: 'pg',
    template: 'postgresql',
    translator: 'postgresql',
    connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
  });
  expectStatus(added, 201, 'adding the PostgreSQL source');
  const login = await request(`${vdb.url}/api/login`, 'POST', {}, { username: 'admin', password: 'bench-admin-password-1' });
  expectStatus(login, 200, 'login');
  const token = { 'x-auth-token': (JSON.parse(text(login)) as { token: string }).token };

  const runs: Array<[string, string, () => Promise<LoadResult>]> = [
    ['fastify, constant JSON', '', () => load({ url: `${baselineUrl}/constant`, headers: {}, bodyTemplate: '{}', maxId: 1 })],
    [
      'vdb SELECT 1',
      'fastify, constant JSON',
      () => load({ url: `${vdb.url}/rest/api/query`, headers: token, bodyTemplate: '{"sql":"SELECT 1"}', maxId: 1 }),
    ],
    ['fastify + pg lookup', '', () => load({ url: `${baselineUrl}/lookup`, headers: {}, bodyTemplate: '{"id":{ID}}', maxId: ROWS })],
    [
      'vdb lookup (literal)',
      'fastify + pg lookup',
      () =>
        load({
          url: `${vdb.url}/rest/api/query`,
          headers: token,
          bodyTemplate: '{"sql":"SELECT * FROM pg.bench_lookup WHERE id = {ID}"}',
          maxId: ROWS,
        }),
    ],
    [
      'vdb lookup (params)',
      'fastify + pg lookup',
      () =>
        load({
          url: `${vdb.url}/rest/api/query`,
          headers: token,
          bodyTemplate: '{"sql":"SELECT * FROM pg.bench_lookup WHERE id = $1","params":[{ID}]}',
          maxId: ROWS,
        }),
    ],
  ];
  const results = new Map<string, LoadResult>();
  const rows: string[][] = [];
  // BENCH_ONLY=<text>: only the rows whose name contains it (and their references), e.g. for a profile.
  const only = process.env.BENCH_ONLY;
  const chosen = only ? runs.filter(([name]) => name.includes(only)) : runs;
  for (const [name, reference, run] of chosen) {
    log(`${name}: ${SECONDS} s, ${CONNECTIONS} connections...`);
    const loadBefore = os.loadavg()[0]!;
    const result = await run();
    results.set(name, result);
    const ratio =
      reference && results.has(reference) ? (result.requestsPerSecond / results.get(reference)!.requestsPerSecond).toFixed(2) : '';
    rows.push([
      name,
      result.requestsPerSecond.toFixed(0),
      String(result.p50),
      String(result.p99),
      String(result.errors + result.non2xx),
      `${(result.loaderCpuShare * 100).toFixed(0)}%`,
      loadBefore.toFixed(2),
      ratio ? `${ratio}x` : '',
    ]);
  }
  process.stdout.write(`\n${os.cpus().length} cores, Node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per row\n\n`);
  process.stdout.write(`${table(['run', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'loader CPU', 'load avg', '÷ reference'], rows)}\n`);
} finally {
  baseline.stop();
  await vdb.stop();
}
