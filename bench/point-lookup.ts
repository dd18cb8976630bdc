/**
 * Small requests, side by side in one run (issue 11): point lookups by primary key on a
 * 1M-row PostgreSQL table and `SELECT 1`, through vdb's /rest/api/query with token
 * authentication, against a bare fastify + pg handler doing the same (baseline-server.ts).
 * 50 connections; the load comes from a process of its own (load.ts). Prints requests/s,
 * latency percentiles, the ratios to the reference, the machine's load and the loader's CPU
 * share (a loader near 100% of a core measures itself, not the server), and the server process's
 * CPU time per request (what a request costs the server, however busy the machine is; the
 * PostgreSQL backends' own time is not in it).
 *
 * Usage: npm run build && node dist/bench/point-lookup.js   (BENCH_SECONDS=10, BENCH_WARMUP=2, BENCH_CONNECTIONS=50, BENCH_ONLY=<row>)
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { table } from './measure.js';
import type { LoadResult } from './load.js';
import fs from 'node:fs';
import {
  addLookupSource,
  addRowSources,
  child,
  CONNECTIONS,
  cpuMs,
  dropRowTables,
  ensureRowTables,
  ensureTable,
  load,
  log,
  ROWS,
  SECONDS,
  WARMUP_SECONDS,
} from './lookup-setup.js';
import { expectStatus, request, startVdb, text } from './vdb-server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

await ensureTable();
// The SQLite file lives in a folder of its own, a file root of both servers.
const rowFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bench-rows-'));
const sqliteFile = await ensureRowTables(rowFolder);
const vdb = await startVdb({ demo: false, env: { VDB_FILE_ROOTS: rowFolder } });
// The same server with the rows of MySQL/SQLite statements always loaded into the engine (before issue 11's direct path).
const vdbEngine = await startVdb({ demo: false, env: { VDB_FILE_ROOTS: rowFolder, VDB_DIRECT_ROWS: 'false' } });
const baseline = await child([path.join(HERE, 'baseline-server.js')], /listening on (http:\/\/\S+)/);
const baselineUrl = /listening on (http:\/\/\S+)/.exec(baseline.line)![1]!;
try {
  await addLookupSource(vdb.url);
  await addRowSources(vdb.url, sqliteFile);
  await addRowSources(vdbEngine.url, sqliteFile);
  const tokenOf = async (url: string) => {
    const login = await request(`${url}/api/login`, 'POST', {}, { username: 'admin', password: 'bench-admin-password-1' });
    expectStatus(login, 200, 'login');
    return { 'x-auth-token': (JSON.parse(text(login)) as { token: string }).token };
  };
  const token = await tokenOf(vdb.url);
  const engineToken = await tokenOf(vdbEngine.url);
  const rowLookup = (url: string, headers: Record<string, string>, table: string) => ({
    url: `${url}/rest/api/query`,
    headers,
    bodyTemplate: `{"sql":"SELECT * FROM ${table} WHERE id = {ID}"}`,
    maxId: ROWS,
  });

  const runs: Array<[string, string, Parameters<typeof load>[0]]> = [
    ['fastify, constant JSON', '', { url: `${baselineUrl}/constant`, headers: {}, bodyTemplate: '{}', maxId: 1 }],
    [
      'vdb SELECT 1',
      'fastify, constant JSON',
      { url: `${vdb.url}/rest/api/query`, headers: token, bodyTemplate: '{"sql":"SELECT 1"}', maxId: 1 },
    ],
    ['fastify + pg lookup', '', { url: `${baselineUrl}/lookup`, headers: {}, bodyTemplate: '{"id":{ID}}', maxId: ROWS }],
    [
      'vdb lookup (literal)',
      'fastify + pg lookup',
      {
        url: `${vdb.url}/rest/api/query`,
        headers: token,
        bodyTemplate: '{"sql":"SELECT * FROM pg.bench_lookup WHERE id = {ID}"}',
        maxId: ROWS,
      },
    ],
    [
      'vdb lookup (params)',
      'fastify + pg lookup',
      {
        url: `${vdb.url}/rest/api/query`,
        headers: token,
        bodyTemplate: '{"sql":"SELECT * FROM pg.bench_lookup WHERE id = $1","params":[{ID}]}',
        maxId: ROWS,
      },
    ],
    ['vdb MariaDB lookup, engine path', '', rowLookup(vdbEngine.url, engineToken, 'my.bench_lookup_my')],
    ['vdb MariaDB lookup, direct', 'vdb MariaDB lookup, engine path', rowLookup(vdb.url, token, 'my.bench_lookup_my')],
    ['vdb SQLite lookup, engine path', '', rowLookup(vdbEngine.url, engineToken, 'lite.bench_lookup')],
    ['vdb SQLite lookup, direct', 'vdb SQLite lookup, engine path', rowLookup(vdb.url, token, 'lite.bench_lookup')],
  ];
  const results = new Map<string, LoadResult>();
  const rows: string[][] = [];
  // BENCH_ONLY=<text>: only the rows whose name contains it (and their references), e.g. for a profile.
  const only = process.env.BENCH_ONLY;
  const chosen = only ? runs.filter(([name]) => name.includes(only)) : runs;
  for (const [name, reference, spec] of chosen) {
    log(`${name}: ${WARMUP_SECONDS} s warm-up, ${SECONDS} s, ${CONNECTIONS} connections...`);
    if (WARMUP_SECONDS > 0) await load(spec, WARMUP_SECONDS);
    const loadBefore = os.loadavg()[0]!;
    const server = name.endsWith('engine path') ? vdbEngine.pid : name.startsWith('vdb') ? vdb.pid : baseline.pid;
    const cpuBefore = cpuMs(server);
    const result = await load(spec);
    const serverCpu = (cpuMs(server) - cpuBefore) / Math.max(1, result.requests);
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
      (serverCpu * 1000).toFixed(0),
      loadBefore.toFixed(2),
      ratio ? `${ratio}x` : '',
    ]);
  }
  process.stdout.write(`\n${os.cpus().length} cores, Node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per row\n\n`);
  process.stdout.write(
    `${table(['run', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'loader CPU', 'server CPU µs/req', 'load avg', '÷ reference'], rows)}\n`,
  );
} finally {
  baseline.stop();
  await vdb.stop();
  await vdbEngine.stop();
  fs.rmSync(rowFolder, { recursive: true, force: true });
  if (process.env.BENCH_DROP_ROW_TABLES === '1') await dropRowTables();
}
