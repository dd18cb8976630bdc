/**
 * Two instances behind nginx against one instance, same machine, one run (issue 13): what the
 * shared stores cost. One vdb with its data directory's catalog and cursors in the process;
 * two vdb sharing a catalog database in PostgreSQL and cursors in Redis, behind Debian's nginx
 * with deploy/nginx.conf (the cluster test's harness starts it). The same load from a process
 * of its own (load.ts): point lookups on the 1M-row PostgreSQL table of point-lookup.ts, and
 * pages of 25 rows at random offsets of a 100,000-row cursor. Prints requests/s, latency
 * percentiles, the ratio cluster/single and the machine's load (2 cores run everything here:
 * two instances do not add cores, so this measures cost, not scale-out).
 *
 * Usage: npm run build && node dist/bench/cluster.js   (BENCH_SECONDS=10, BENCH_CONNECTIONS=50;
 *        needs nginx: apt-get install nginx)
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { table } from './measure.js';
import type { LoadResult } from './load.js';
import { addLookupSource, CONNECTIONS, ensureTable, load, log, ROWS, SECONDS } from './lookup-setup.js';
import { expectStatus, request, startVdb, text, type VdbServer } from './vdb-server.js';
// The cluster test's nginx harness, so that the bench runs exactly the tested configuration.
import { NGINX, startNginx, type Proxy } from '../test/cluster/cluster.js';

const CURSOR_ROWS = 100_000;
const PAGE = 25;
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

if (!NGINX) throw new Error('nginx is not installed (apt-get install nginx)');
await ensureTable();
const tag = `vdb_bench_cluster_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: `${PG_URL}/test` });
await admin.connect();
await admin.query(`CREATE DATABASE ${tag}`);
const shared = {
  VDB_CATALOG_URL: `${PG_URL}/${tag}`,
  VDB_REDIS_URL: REDIS_URL,
  VDB_REDIS_KEY_PREFIX: `${tag}:`,
  VDB_TRUST_PROXY: 'true',
};
const nginxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bench-nginx-'));
const servers: VdbServer[] = [];
let proxy: Proxy | null = null;
try {
  const single = await startVdb({ demo: false });
  servers.push(single);
  // The first shared instance creates the catalog; the second finds it.
  const a = await startVdb({ demo: false, env: shared });
  servers.push(a);
  const b = await startVdb({ demo: false, env: shared });
  servers.push(b);
  proxy = await startNginx(nginxDir, [Number(new URL(a.url).port), Number(new URL(b.url).port)]);

  for (const base of [single.url, a.url]) await addLookupSource(base);

  /** A login token and a 100,000-row cursor made through `base`. */
  async function prepare(base: string): Promise<{ token: Record<string, string>; requestId: string }> {
    const login = await request(`${base}/api/login`, 'POST', {}, { username: 'admin', password: 'bench-admin-password-1' });
    expectStatus(login, 200, `login at ${base}`);
    const token = { 'x-auth-token': (JSON.parse(text(login)) as { token: string }).token };
    const first = await request(`${base}/rest/api/query?pagination=true&limit=${PAGE}`, 'POST', token, {
      sql: `SELECT * FROM pg.bench_lookup WHERE id <= ${CURSOR_ROWS} ORDER BY id`,
    });
    expectStatus(first, 200, `paginating at ${base}`);
    return { token, requestId: String(first.headers.requestid) };
  }
  const sides = { single: { url: single.url, ...(await prepare(single.url)) }, cluster: { url: proxy.url, ...(await prepare(proxy.url)) } };

  const lookup = (side: (typeof sides)['single']) =>
    load({
      url: `${side.url}/rest/api/query`,
      headers: side.token,
      bodyTemplate: '{"sql":"SELECT * FROM pg.bench_lookup WHERE id = $1","params":[{ID}]}',
      maxId: ROWS,
    });
  const page = (side: (typeof sides)['single']) =>
    load({
      url: `${side.url}/rest/api/query?requestId=${side.requestId}&limit=${PAGE}&offset=0`,
      method: 'GET',
      pathTemplate: `/rest/api/query?requestId=${side.requestId}&limit=${PAGE}&offset={ID}`,
      headers: side.token,
      bodyTemplate: '',
      maxId: CURSOR_ROWS - PAGE,
    });

  const runs: Array<[string, () => Promise<LoadResult>]> = [
    ['lookup, one instance', () => lookup(sides.single)],
    ['lookup, two behind nginx', () => lookup(sides.cluster)],
    [`page of ${PAGE}, one instance (local cursor)`, () => page(sides.single)],
    [`page of ${PAGE}, two behind nginx (Redis cursor)`, () => page(sides.cluster)],
  ];
  const results: LoadResult[] = [];
  const rows: string[][] = [];
  for (const [name, run] of runs) {
    log(`${name}: ${SECONDS} s, ${CONNECTIONS} connections...`);
    const loadBefore = os.loadavg()[0]!;
    const result = await run();
    results.push(result);
    const reference = results.length % 2 === 0 ? results[results.length - 2]! : null;
    rows.push([
      name,
      Math.round(result.requestsPerSecond).toLocaleString('en-US'),
      String(result.p50),
      String(result.p99),
      String(result.errors + result.non2xx),
      `${Math.round(result.loaderCpuShare * 100)}%`,
      loadBefore.toFixed(1),
      reference ? `${(result.requestsPerSecond / reference.requestsPerSecond).toFixed(2)}x` : '',
    ]);
  }
  process.stdout.write(
    `${table(['run', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'loader CPU', 'load', 'cluster ÷ single (req/s)'], rows)}\n`,
  );
} finally {
  await proxy?.stop();
  for (const server of servers.reverse()) await server.stop();
  fs.rmSync(nginxDir, { recursive: true, force: true });
  await admin.query(`DROP DATABASE IF EXISTS ${tag} WITH (FORCE)`);
  await admin.end();
}
