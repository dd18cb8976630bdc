/**
 * The server process's memory under the statements of issue 23: a 10M-row stream, and statements
 * of a few bytes that would build giant values. vdb runs as a child process; its resident memory
 * is read from /proc every 20 ms. For each statement: the answer, its time, how far the process
 * grew while it ran (peak over the RSS before it) and how much it kept afterwards.
 *
 *   npm run build && node dist/bench/resource-limits.js
 *   BENCH_ONLY=streamed node dist/bench/resource-limits.js   # the cases whose names contain it
 */
import fs from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { table } from './measure.js';
import { BASIC, startVdb } from './vdb-server.js';

const rssMb = (pid: number): number => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
};

/** Posts a statement and reads the answer without keeping it: status, bytes, ms. */
function run(url: string, sql: string): Promise<{ status: number; bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const payload = JSON.stringify({ sql });
    const req = http.request(
      `${url}/rest/api/query`,
      { method: 'POST', headers: { ...BASIC, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - start }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const CASES: Array<[string, string[]]> = [
  ['10M rows streamed (select list)', [`SELECT g, 'row ' || g FROM generate_series(1, 10000000) g`]],
  ['10M rows streamed (FROM series)', [`SELECT * FROM generate_series(1, 10000000)`]],
  ['repeat 600M characters', [`SELECT repeat('x', 600000000)`]],
  ['a 1G-character text split into a list', [`SELECT cardinality(string_to_array(repeat('a', 1000000000), NULL))`]],
  ['lpad to 1G characters', [`SELECT lpad('x', 1000000000)`]],
  ['60 MB values for 2,048 rows at once', [`SELECT sum(length(repeat('x', 60000000 + g % 2))) FROM generate_series(1, 3000) g`]],
  [
    'a doubling chain of 30 CTEs',
    [
      `WITH s0 AS (SELECT 'x' AS v), ${Array.from({ length: 30 }, (_, i) => `s${i + 1} AS (SELECT v || v AS v FROM s${i})`).join(', ')} SELECT length(v) FROM s30`,
    ],
  ],
  ['6 giant statements at once', Array.from({ length: 6 }, (_, i) => `SELECT length(repeat('y', 500000000 + ${i}))`)],
];

// BENCH_ONLY=streamed: only the cases whose names contain it (e.g. to run them against an older build).
const only = process.env.BENCH_ONLY;
const server = await startVdb({ demo: true });
try {
  const rows: string[][] = [];
  for (const [name, statements] of CASES.filter(([name]) => !only || name.includes(only))) {
    const before = rssMb(server.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 20);
    const started = performance.now();
    const answers = await Promise.all(statements.map((sql) => run(server.url, sql)));
    const ms = performance.now() - started;
    clearInterval(sampler);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = rssMb(server.pid);
    const statuses = [...new Set(answers.map((a) => a.status))].join(',');
    const bytes = answers.reduce((sum, a) => sum + a.bytes, 0);
    rows.push([
      name,
      statuses,
      `${(bytes / 1e6).toFixed(1)}`,
      ms.toFixed(0),
      before.toFixed(0),
      `+${(peak - before).toFixed(0)}`,
      `${after - before >= 0 ? '+' : ''}${(after - before).toFixed(0)}`,
    ]);
    process.stderr.write(`${name}: ${statuses} in ${ms.toFixed(0)} ms\n`);
  }
  const probe = await run(server.url, 'SELECT 1');
  console.log(table(['statement', 'status', 'MB sent', 'ms', 'RSS before (MB)', 'peak growth (MB)', 'kept 1 s after (MB)'], rows));
  console.log(`\nAfterwards SELECT 1 answers ${probe.status} in ${probe.ms.toFixed(1)} ms.`);
} finally {
  await server.stop();
}
