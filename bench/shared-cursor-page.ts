/**
 * A page of a cursor kept in Redis (shared by instances) against the same page of a cursor kept
 * in the process (issue 13; target: within 2x). Two vdb processes, one with cursors.redisUrl,
 * one without; the same 100,000-row result paginated on each, then pages of 1,000 rows at
 * spread offsets read in turn from both, one request at a time. Prints pages/s, median
 * latency and the ratio shared/local; the two pages are compared byte for byte once.
 *
 * Usage: npm run build && node dist/bench/shared-cursor-page.js
 *        (BENCH_PAGES=300, BENCH_LIMIT=1000, BENCH_REDIS_URL=redis://127.0.0.1:6379/0)
 */
import { randomUUID } from 'node:crypto';
import { median, table } from './measure.js';
import { expectStatus, login, request, startVdb, text, type Auth, type VdbServer } from './vdb-server.js';

const PAGES = Number(process.env.BENCH_PAGES ?? 300);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 1000);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const SQL = 'SELECT * FROM files.events';
const ROWS = 100_000;
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Side {
  name: string;
  server: VdbServer;
  auth: Auth;
  requestId: string;
  latencies: number[];
}

async function prepare(name: string, server: VdbServer): Promise<Side> {
  const auth = await login(server);
  const first = await request(`${server.url}/rest/api/query?pagination=true&limit=${LIMIT}`, 'POST', auth, { sql: SQL });
  expectStatus(first, 200, `${name}: paginate`);
  const requestId = first.headers.requestid;
  if (typeof requestId !== 'string') throw new Error(`${name}: no requestId`);
  return { name, server, auth, requestId, latencies: [] };
}

const pageUrl = (side: Side, offset: number) =>
  `${side.server.url}/rest/api/query?requestId=${side.requestId}&limit=${LIMIT}&offset=${offset}`;

async function main(): Promise<void> {
  log('starting two vdb processes (local cursors, Redis cursors)...');
  const [localServer, sharedServer] = await Promise.all([
    startVdb({ demo: true }),
    startVdb({ demo: true, env: { VDB_REDIS_URL: REDIS_URL, VDB_REDIS_KEY_PREFIX: `vdb-bench-${randomUUID()}:` } }),
  ]);
  try {
    const local = await prepare('local', localServer);
    const shared = await prepare('Redis', sharedServer);
    const offsets = Array.from({ length: PAGES }, (_, i) => ((i * 37) % (ROWS / LIMIT)) * LIMIT);
    // Same bytes from both stores.
    const [a, b] = await Promise.all([
      request(pageUrl(local, 5000), 'POST', local.auth),
      request(pageUrl(shared, 5000), 'POST', shared.auth),
    ]);
    if (text(a) !== text(b)) throw new Error('the two stores answered different bytes for the same page');
    // Warm-up, then the timed pages alternating between the sides (same machine load for both).
    for (const offset of offsets.slice(0, 20)) for (const side of [local, shared]) await request(pageUrl(side, offset), 'POST', side.auth);
    for (const offset of offsets) {
      for (const side of [local, shared]) {
        const started = process.hrtime.bigint();
        const answer = await request(pageUrl(side, offset), 'POST', side.auth);
        side.latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        expectStatus(answer, 200, `${side.name} page at ${offset}`);
      }
    }
    const rows = [local, shared].map((side) => {
      const total = side.latencies.reduce((sum, ms) => sum + ms, 0);
      return [side.name, (PAGES / (total / 1000)).toFixed(0), median(side.latencies).toFixed(2)];
    });
    process.stdout.write(`${PAGES} pages of ${LIMIT} rows (${SQL}), one request at a time\n\n`);
    process.stdout.write(`${table(['cursor store', 'pages/s', 'median ms'], rows)}\n\n`);
    const ratio = median(shared.latencies) / median(local.latencies);
    process.stdout.write(`Redis / local, median latency: ${ratio.toFixed(2)}x (target: within 2x)\n`);
  } finally {
    await Promise.all([localServer.stop(), sharedServer.stop()]);
  }
}

await main();
