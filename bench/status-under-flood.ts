/**
 * /rest/api/status and sign-in (POST /api/login) while signed-in users with no role flood vdb
 * with the largest statements it accepts, and with giant statements past its limits (the
 * issue's 60,000-term select list and IN list): latency p50 / p99 / max, idle against flooded.
 *
 *   npm run build && node dist/bench/status-under-flood.js
 *   BENCH_CLIENTS=16 BENCH_FLOOD_MS=10000 node dist/bench/status-under-flood.js
 *
 * vdb runs as a child process (vdb-server.ts): the flood's clients and the probes run here, on
 * a thread of their own, and never block the server's.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseStatement } from '../src/engine/front/parse.js';
import { DEFAULT_STATEMENT_SIZE, treeSize } from '../src/engine/front/statement-size.js';
import { initParser } from '../src/engine/front/parse.js';
import { table } from './measure.js';
import { BASIC, PASSWORD, startVdb, type VdbServer } from './vdb-server.js';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const FLOOD_MS = Number(process.env.BENCH_FLOOD_MS ?? 10_000);
const PROBE_PAUSE_MS = 20;

interface Answer {
  status: number;
  ms: number;
}

/** One request on `agent`; the body is read and dropped. */
function send(agent: http.Agent, url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(
      url,
      {
        method,
        agent,
        maxHeaderSize: 64 << 20,
        headers:
          body === undefined
            ? headers
            : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const inList = (values: number) => `SELECT 1 WHERE 1 IN (${Array.from({ length: values }, (_, i) => i).join(',')})`;
const nodesOf = (sql: string) =>
  treeSize(parseStatement(sql, { maxBytes: Infinity, maxSyntaxNodes: Infinity, maxSelectListTerms: Infinity })).nodes;

/** The longest IN list within the default limit of syntax nodes. */
function largestInList(): string {
  let low = 1;
  let high = DEFAULT_STATEMENT_SIZE.maxSyntaxNodes;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (nodesOf(inList(mid)) <= DEFAULT_STATEMENT_SIZE.maxSyntaxNodes) low = mid;
    else high = mid - 1;
  }
  return inList(low);
}

/** The statements of the flood: each client sends one kind in turn. */
function floodStatements(): Array<{ name: string; sql: string }> {
  const terms = DEFAULT_STATEMENT_SIZE.maxSelectListTerms;
  return [
    { name: 'largest IN list allowed', sql: largestInList() },
    { name: `select list of ${terms} terms (allowed)`, sql: `SELECT ${Array(terms).fill("'abcdef'").join(',')}` },
    { name: 'AND chain just under the node limit', sql: `SELECT 1 WHERE ${Array(1500).fill('1=1').join(' AND ')}` },
    { name: '60,000-term select list (refused)', sql: `SELECT ${Array(60_000).fill("'abcde'").join(',')}` },
    { name: '60,000-value IN list (refused)', sql: inList(60_000) },
    { name: '60,000-term AND chain (refused)', sql: `SELECT 1 WHERE ${Array(60_000).fill('1=1').join(' AND ')}` },
  ];
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

interface Probe {
  name: string;
  ms: number[];
  failed: number;
}

/** Probes status and sign-in, one request after another each, until `until`. */
async function probe(server: VdbServer, until: number): Promise<Probe[]> {
  const status: Probe = { name: 'GET /rest/api/status', ms: [], failed: 0 };
  const signIn: Probe = { name: 'POST /api/login', ms: [], failed: 0 };
  const loop = async (target: Probe, run: () => Promise<Answer>) => {
    while (performance.now() < until) {
      const answer = await run();
      if (answer.status === 200) target.ms.push(answer.ms);
      else target.failed++;
      await new Promise((resolve) => setTimeout(resolve, PROBE_PAUSE_MS));
    }
  };
  const statusAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const loginAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const credentials = JSON.stringify({ username: 'admin', password: PASSWORD });
  await Promise.all([
    loop(status, () => send(statusAgent, `${server.url}/rest/api/status`, 'GET', BASIC)),
    loop(signIn, () => send(loginAgent, `${server.url}/api/login`, 'POST', {}, credentials)),
  ]);
  statusAgent.destroy();
  loginAgent.destroy();
  return [status, signIn];
}

async function main(): Promise<void> {
  await initParser();
  const statements = floodStatements();
  const server = await startVdb({ demo: false });
  try {
    const admin = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const run = (sql: string) => send(admin, `${server.url}/rest/api/query`, 'POST', BASIC, JSON.stringify({ sql }));
    const users = Array.from({ length: CLIENTS }, (_, i) => `flood${i}`);
    for (const user of users) {
      const added = await run(`CALL SYSADMIN.addUser('${user}', '${user}-password-1')`);
      if (added.status !== 200) throw new Error(`addUser ${user}: HTTP ${added.status}`);
    }
    process.stderr.write(`idle: probing for ${FLOOD_MS / 2} ms\n`);
    const idle = await probe(server, performance.now() + FLOOD_MS / 2);

    process.stderr.write(`flood: ${CLIENTS} users with no role for ${FLOOD_MS} ms\n`);
    const floodEnds = performance.now() + FLOOD_MS;
    const outcomes = statements.map(() => new Map<number, number>());
    const sent = statements.map(() => [] as number[]);
    const clients = users.map(async (user, i) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const auth = { authorization: `Basic ${Buffer.from(`${user}:${user}-password-1`).toString('base64')}` };
      const bodies = statements.map((s) => JSON.stringify({ sql: s.sql }));
      for (let k = i; performance.now() < floodEnds; k++) {
        const which = k % statements.length;
        const answer = await send(agent, `${server.url}/rest/api/query`, 'POST', auth, bodies[which]);
        outcomes[which]!.set(answer.status, (outcomes[which]!.get(answer.status) ?? 0) + 1);
        sent[which]!.push(answer.ms);
      }
      agent.destroy();
    });
    // The probes start once the flood runs.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const flooded = await probe(server, floodEnds);
    await Promise.all(clients);
    admin.destroy();

    const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
    const rows: string[][] = [];
    for (const [when, probes] of [
      ['idle', idle],
      ['flooded', flooded],
    ] as const) {
      for (const p of probes) {
        const sorted = [...p.ms].sort((a, b) => a - b);
        rows.push([
          `${p.name}, ${when}`,
          String(sorted.length),
          String(p.failed),
          fmt(pct(sorted, 50)),
          fmt(pct(sorted, 99)),
          fmt(sorted.at(-1) ?? NaN),
        ]);
      }
    }
    console.log(`\n${CLIENTS} clients (users with no role), ${FLOOD_MS} ms of flood; probes one at a time, ${PROBE_PAUSE_MS} ms apart\n`);
    console.log(table(['probe', 'answers', 'failed', 'p50 ms', 'p99 ms', 'max ms'], rows));
    const floodRows = statements.map((s, i) => {
      const sorted = [...sent[i]!].sort((a, b) => a - b);
      const codes = [...outcomes[i]!].map(([code, n]) => `${code}×${n}`).join(' ');
      return [
        s.name,
        String(Math.round(Buffer.byteLength(s.sql) / 1000)),
        String(nodesOf(s.sql)),
        codes,
        fmt(pct(sorted, 50)),
        fmt(sorted.at(-1) ?? NaN),
      ];
    });
    console.log('\nThe flood\n');
    console.log(table(['statement', 'KB', 'nodes', 'answers', 'p50 ms', 'max ms'], floodRows));
  } finally {
    await server.stop();
  }
}

await main();
