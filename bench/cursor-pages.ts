/**
 * Pages of a paginated result (issue 11): a cursor over the 1M rows of `pg.bench_lookup`
 * (lookup-setup.ts), then pages read with `requestId`: one client at offsets 0, 500k and 999k
 * (latency percentiles of 1,000-row and 25-row pages), and 50 clients reading 25-row pages at
 * random offsets at once (pages/s, from a load process of its own), with the server process's
 * CPU time per page (all its threads: the engine's too). It measures and prints;
 * it asserts nothing.
 *
 * Usage: npm run build && node dist/bench/cursor-pages.js   (BENCH_SECONDS=10, BENCH_CONNECTIONS=50, BENCH_PAGES=200)
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { median, table } from './measure.js';
import { addLookupSource, CONNECTIONS, cpuMs, ensureTable, load, log, ROWS, SECONDS } from './lookup-setup.js';
import { expectStatus, login, request, startVdb, text } from './vdb-server.js';

const PAGES = Number(process.env.BENCH_PAGES ?? 200);

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

await ensureTable();
const vdb = await startVdb({ demo: false });
try {
  await addLookupSource(vdb.url);
  const token = await login(vdb);

  log(`creating the cursor (${ROWS} rows)...`);
  const started = performance.now();
  const first = await request(`${vdb.url}/rest/api/query?pagination=true&limit=25`, 'POST', token, {
    sql: 'SELECT * FROM pg.bench_lookup ORDER BY id',
  });
  expectStatus(first, 200, 'creating the cursor');
  const createMs = performance.now() - started;
  const requestId = String(first.headers.requestid);
  const page = (offset: number, limit: number) => `/rest/api/query?requestId=${requestId}&limit=${limit}&offset=${offset}`;

  const rows: string[][] = [];
  for (const limit of [1000, 25]) {
    for (const offset of [0, 500_000, ROWS - limit]) {
      const times: number[] = [];
      const cpuBefore = cpuMs(vdb.pid);
      for (let i = 0; i < PAGES; i++) {
        const t = performance.now();
        const answer = await request(`${vdb.url}${page(offset, limit)}`, 'GET', token);
        times.push(performance.now() - t);
        expectStatus(answer, 200, `page at ${offset}`);
        if (i === 0) {
          const got = JSON.parse(text(answer)) as unknown[][];
          if (got.length !== limit || got[0]![0] !== offset + 1) throw new Error(`page at ${offset}: unexpected rows`);
        }
      }
      rows.push([
        `${limit} rows at offset ${offset}`,
        median(times).toFixed(2),
        percentile(times, 0.99).toFixed(2),
        (((cpuMs(vdb.pid) - cpuBefore) / PAGES) * 1000).toFixed(0),
        os.loadavg()[0]!.toFixed(2),
      ]);
    }
  }

  log(`${CONNECTIONS} clients paging, ${SECONDS} s...`);
  const loadBefore = os.loadavg()[0]!;
  const cpuBefore = cpuMs(vdb.pid);
  const paging = await load({
    url: vdb.url,
    method: 'GET',
    pathTemplate: page(0, 25).replace('offset=0', 'offset={ID}'),
    headers: token,
    bodyTemplate: '',
    maxId: ROWS - 26,
  });
  const pagingCpu = ((cpuMs(vdb.pid) - cpuBefore) / Math.max(1, paging.requests)) * 1000;

  process.stdout.write(
    `\n${os.cpus().length} cores, Node ${process.version}; cursor of ${ROWS} rows created in ${createMs.toFixed(0)} ms\n\n`,
  );
  process.stdout.write(`${table(['one client, GET requestId', 'p50 ms', 'p99 ms', 'server CPU µs/page', 'load avg'], rows)}\n\n`);
  process.stdout.write(
    `${table(
      ['concurrent pages', 'pages/s', 'p50 ms', 'p99 ms', 'errors', 'loader CPU', 'server CPU µs/page', 'load avg'],
      [
        [
          `${CONNECTIONS} clients, 25 rows, random offsets`,
          paging.requestsPerSecond.toFixed(0),
          String(paging.p50),
          String(paging.p99),
          String(paging.errors + paging.non2xx),
          `${(paging.loaderCpuShare * 100).toFixed(0)}%`,
          pagingCpu.toFixed(0),
          loadBefore.toFixed(2),
        ],
      ],
    )}\n`,
  );
} finally {
  await vdb.stop();
}
