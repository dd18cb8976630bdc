/**
 * Benchmark: the engine's restructuring (issue 25: plan values, stages, connectors' facets)
 * must cost nothing. This build and the build before (BENCH_BEFORE_CLI=<its dist/src/cli.js>),
 * side by side in one run, the runs alternating (each build first in every other run), on the federation benchmark's data
 * (federation-data.ts: PostgreSQL bench_orders, 1M rows; MariaDB bench_customers, 100k rows):
 *
 *   - `SELECT 1` and point lookups by primary key (sequential requests, the time of one);
 *   - a federated join with aggregation across PostgreSQL and MariaDB;
 *   - a 1M-row result streamed (PostgreSQL runs it whole) and 1M rows through the engine.
 *
 * It prints each workload's median per build and their ratio, and never asserts.
 *
 *   npm run build && BENCH_BEFORE_CLI=/path/to/before/dist/src/cli.js node dist/bench/restructure.js
 *   BENCH_RUNS=7 ...   (timed runs per build and workload, default 5, after 1 warm-up)
 *   BENCH_ONLY=join ... (only the workloads whose name contains it)
 */
import { setUpData, type BenchData } from './federation-data.js';
import { median, table } from './measure.js';
import { expectStatus, login, request, startVdb, type Auth, type VdbServer } from './vdb-server.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5) || 5);
/** Requests per run of the small workloads: their time is the mean of these. */
const SMALL_REQUESTS = 200;

interface Workload {
  name: string;
  /** Milliseconds of one run: one request, or the mean of SMALL_REQUESTS sequential ones. */
  run(server: VdbServer, auth: Auth): Promise<number>;
}

async function timed(server: VdbServer, auth: Auth, sql: string): Promise<number> {
  const start = performance.now();
  const answer = await request(`${server.url}/rest/api/query`, 'POST', auth, { sql });
  const ms = performance.now() - start;
  expectStatus(answer, 200, sql);
  return ms;
}

async function meanOf(server: VdbServer, auth: Auth, sql: (i: number) => string): Promise<number> {
  let total = 0;
  for (let i = 0; i < SMALL_REQUESTS; i++) total += await timed(server, auth, sql(i));
  return total / SMALL_REQUESTS;
}

const WORKLOADS: Workload[] = [
  { name: 'SELECT 1 (ms per request)', run: (s, a) => meanOf(s, a, () => 'SELECT 1') },
  {
    name: 'point lookup, PostgreSQL (ms per request)',
    run: (s, a) => meanOf(s, a, (i) => `SELECT * FROM pg.bench_orders WHERE id = ${1 + ((i * 7919) % 1_000_000)}`),
  },
  {
    name: 'point lookup, MariaDB (ms per request)',
    run: (s, a) => meanOf(s, a, (i) => `SELECT * FROM my.bench_customers WHERE id = ${1 + ((i * 7919) % 100_000)}`),
  },
  {
    name: 'federated join, grouped (ms)',
    run: (s, a) =>
      timed(
        s,
        a,
        "SELECT c.country, count(*), sum(o.amount) FROM pg.bench_orders o JOIN my.bench_customers c ON c.id = o.customer_id WHERE c.segment = 'enterprise' GROUP BY c.country ORDER BY c.country",
      ),
  },
  { name: '1M rows, whole at PostgreSQL (ms)', run: (s, a) => timed(s, a, 'SELECT id, customer_id, amount FROM pg.bench_orders') },
  {
    name: '1M rows through the engine (ms)',
    run: (s, a) => timed(s, a, 'SELECT o.id, o.amount FROM pg.bench_orders o JOIN my.bench_customers c ON c.id = o.customer_id'),
  },
];

async function addSources(server: VdbServer, auth: Auth, data: BenchData): Promise<void> {
  const sources = [
    {
      name: 'pg',
      template: 'postgresql',
      connectionProps: `host=${data.pg.host},port=${data.pg.port},db=${data.pg.database},user-name=${data.pg.user}`,
      modelProps: 'importer.schemaPattern=public',
    },
    {
      name: 'my',
      template: 'mysql',
      connectionProps: `host=${data.my.host},port=${data.my.port},db=${data.my.database},user-name=${data.my.user}`,
      modelProps: '',
    },
  ];
  for (const source of sources) {
    const answer = await request(`${server.url}/rest/api/source`, 'POST', auth, source);
    expectStatus(answer, 201, `adding source ${source.name}`);
  }
}

async function main(): Promise<void> {
  process.stderr.write('setting up the data...\n');
  const data = await setUpData();
  const builds: Array<{ name: string; cli?: string }> = [{ name: 'this build' }];
  if (process.env.BENCH_BEFORE_CLI) builds.push({ name: 'build before', cli: process.env.BENCH_BEFORE_CLI });
  const servers: Array<{ server: VdbServer; auth: Auth }> = [];
  try {
    for (const build of builds) {
      const server = await startVdb({ demo: false, cli: build.cli });
      const auth = await login(server);
      await addSources(server, auth, data);
      servers.push({ server, auth });
    }
    const rows: string[][] = [];
    for (const workload of WORKLOADS.filter((w) => w.name.includes(process.env.BENCH_ONLY ?? ''))) {
      const runs = builds.map(() => [] as number[]);
      for (const { server, auth } of servers) await workload.run(server, auth); // warm-up
      for (let r = 0; r < RUNS; r++) {
        process.stderr.write(`${workload.name}: run ${r + 1}/${RUNS}\n`);
        // ABBA: each build goes first in every other run, so that neither gains from the other's warmth.
        const order = r % 2 === 0 ? [...servers.keys()] : [...servers.keys()].reverse();
        for (const i of order) runs[i]!.push(await workload.run(servers[i]!.server, servers[i]!.auth));
      }
      const medians = runs.map(median);
      rows.push([
        workload.name,
        ...medians.map((m) => m.toFixed(m < 10 ? 2 : 0)),
        ...(medians.length === 2 ? [(medians[0]! / medians[1]!).toFixed(2)] : []),
      ]);
    }
    const headers = ['workload', ...builds.map((b) => `${b.name} median`), ...(builds.length === 2 ? ['ratio'] : [])];
    process.stdout.write(`\n${RUNS} alternating runs per build after a warm-up (small workloads: mean of ${SMALL_REQUESTS} requests):\n\n`);
    process.stdout.write(`${table(headers, rows)}\n`);
  } finally {
    for (const { server } of servers) await server.stop();
  }
}

await main();
