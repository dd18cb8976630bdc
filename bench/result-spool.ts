/**
 * Benchmark: what reading a source's stream ahead of the client (results/spool.ts) costs a fast
 * client, and what it gives a slow one. A 100,000-row PostgreSQL result that PostgreSQL runs
 * whole is streamed through this build and, side by side, through the build before the spool
 * (BENCH_BEFORE_CLI=<that build's dist/src/cli.js>), the runs alternating. Then, on a source of
 * two connections, two clients that read nothing after their first chunk, and the time a third
 * statement on the same source takes on each build. It prints figures and never asserts.
 *
 *   npm run build && BENCH_BEFORE_CLI=/path/to/before/dist/src/cli.js node dist/bench/result-spool.js
 *   BENCH_RUNS=9 ...     (timed runs per build, default 7, after 2 warm-ups)
 */
import http from 'node:http';
import pg from 'pg';
import { BASIC, expectStatus, request, startVdb, type VdbServer } from './vdb-server.js';
import { median, table } from './measure.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 7) || 7);
const WARMUP = 2;
const ROWS = 100_000;
const SCHEMA = 'bench_spool';
const SQL = 'SELECT * FROM pgs.rows';
const PG_URL = {
  host: process.env.BENCH_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.BENCH_PG_PORT ?? 5432),
  database: process.env.BENCH_PG_DB ?? 'test',
  user: process.env.BENCH_PG_USER ?? 'postgres',
};

async function setUp(): Promise<void> {
  const client = new pg.Client(PG_URL);
  await client.connect();
  await client.query(`
    DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE;
    CREATE SCHEMA ${SCHEMA};
    CREATE TABLE ${SCHEMA}.rows AS
      SELECT g::bigint AS id, (g * 7919 % 100000)::numeric(12,2) / 100 AS amount, md5(g::text) AS label,
             DATE '2024-01-01' + (g % 365) AS day
        FROM generate_series(1, ${ROWS}) g;
    ANALYZE ${SCHEMA}.rows;
  `);
  await client.end();
}

async function addSource(server: VdbServer): Promise<void> {
  const answer = await request(`${server.url}/rest/api/source`, 'POST', BASIC, {
    name: 'pgs',
    template: 'postgresql',
    connectionProps: `host=${PG_URL.host},port=${PG_URL.port},db=${PG_URL.database},user-name=${PG_URL.user}`,
    modelProps: `importer.schemaPattern=${SCHEMA},maxConnections=2,poolWaitMs=2000`,
  });
  expectStatus(answer, 201, 'add the source');
}

/** One full read of the result by a fast client: wall time, TTFB and bytes. */
async function timedRead(server: VdbServer): Promise<{ ms: number; ttfbMs: number; bytes: number }> {
  const start = performance.now();
  const answer = await request(`${server.url}/rest/api/query`, 'POST', BASIC, { sql: SQL });
  const ms = performance.now() - start;
  expectStatus(answer, 200, 'the query');
  return { ms, ttfbMs: answer.ttfbMs, bytes: answer.bytes };
}

/** A client that takes the first chunk and then reads nothing (until destroyed). */
function stalledClient(server: VdbServer): Promise<http.ClientRequest> {
  const url = new URL(`${server.url}/rest/api/query`);
  const body = JSON.stringify({ sql: SQL });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...BASIC, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => res.once('data', () => (res.pause(), resolve(req))),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** With two clients stalled on the source's two connections' worth of results: a third statement's answer and time. */
async function thirdStatement(server: VdbServer): Promise<string> {
  const stalled = [await stalledClient(server), await stalledClient(server)];
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const start = performance.now();
  const answer = await request(`${server.url}/rest/api/query`, 'POST', BASIC, { sql: 'SELECT count(*) FROM pgs.rows' });
  const ms = performance.now() - start;
  for (const req of stalled) req.destroy();
  const title = answer.status === 200 ? '' : ` ${(JSON.parse(Buffer.concat(answer.body).toString('utf8')) as { title: string }).title}`;
  return `${answer.status}${title} after ${ms.toFixed(0)} ms`;
}

async function main(): Promise<void> {
  process.stderr.write('setting up the PostgreSQL table...\n');
  await setUp();
  const builds: Array<{ name: string; cli?: string }> = [{ name: 'this build (spool)' }];
  if (process.env.BENCH_BEFORE_CLI) builds.push({ name: 'build before', cli: process.env.BENCH_BEFORE_CLI });
  const servers: VdbServer[] = [];
  try {
    for (const build of builds) {
      // A short connect timeout: the build before reports a full pool as a connect that timed out.
      const server = await startVdb({ demo: false, cli: build.cli, env: { VDB_CONNECT_TIMEOUT_MS: '3000' } });
      servers.push(server);
      await addSource(server);
      for (let i = 0; i < WARMUP; i++) await timedRead(server);
    }
    const runs = builds.map(() => [] as Array<{ ms: number; ttfbMs: number; bytes: number }>);
    for (let r = 0; r < RUNS; r++) {
      process.stderr.write(`run ${r + 1}/${RUNS}\n`);
      for (const [i, server] of servers.entries()) runs[i]!.push(await timedRead(server));
    }
    const rows = builds.map((build, i) => {
      const ms = runs[i]!.map((run) => run.ms);
      const bytes = runs[i]![0]!.bytes;
      return [
        build.name,
        median(ms).toFixed(1),
        Math.min(...ms).toFixed(1),
        median(runs[i]!.map((run) => run.ttfbMs)).toFixed(1),
        ((bytes / 1e6 / median(ms)) * 1000).toFixed(1),
        (bytes / 1e6).toFixed(1),
      ];
    });
    process.stdout.write(
      `\n${SQL} (${ROWS.toLocaleString('en-US')} rows, PostgreSQL runs it whole), fast client, ${RUNS} alternating runs each:\n\n`,
    );
    process.stdout.write(`${table(['build', 'median ms', 'min ms', 'TTFB ms', 'MB/s', 'MB'], rows)}\n`);
    process.stdout.write('\nTwo clients stalled after their first chunk on a source of maxConnections=2; a third statement:\n\n');
    const answers: string[][] = [];
    for (const [i, server] of servers.entries()) answers.push([builds[i]!.name, await thirdStatement(server)]);
    process.stdout.write(`${table(['build', 'third statement'], answers)}\n`);
  } finally {
    for (const server of servers) await server.stop();
    const client = new pg.Client(PG_URL);
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await client.end();
  }
}

await main();
