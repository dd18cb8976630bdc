/**
 * PostgreSQL's protocol under load (issue 30): pgbench's point lookups by id on the 1M-row
 * bench_lookup table, 50 clients, prepared mode, against PostgreSQL itself and against vdb's
 * PostgreSQL listener (the table through the source `pg`), and the same lookups through vdb's
 * REST API (load.ts, token sign-in, `$1` parameters). Printed as transactions per second and
 * ratios: vdb's listener to PostgreSQL, and to vdb's REST API.
 *
 * Usage: npm run build && node dist/bench/pgwire.js   (BENCH_SECONDS=5, BENCH_ROUNDS=3, BENCH_CONNECTIONS=50)
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { table } from './measure.js';
import { psqlSelectAll, slowRead } from './pgwire-full-read.js';
import { fileURLToPath } from 'node:url';
import { addLookupSource, child, CONNECTIONS, cpuMs, ensureTable, load, log, ROWS, WARMUP_SECONDS } from './lookup-setup.js';
import { expectStatus, PASSWORD, request, startVdb, text } from './vdb-server.js';

/** Seconds of each row per round, and rounds: the rows take turns. */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface PgbenchTarget {
  port: number;
  user: string;
  database: string;
  password?: string;
  table: string;
}

/** pgbench's TPS (without the initial connection time) for the lookup script against `target`. */
function pgbench(target: PgbenchTarget, seconds: number): Promise<number> {
  const script = path.join(os.tmpdir(), `vdb-pgbench-${process.pid}-${target.port}.sql`);
  fs.writeFileSync(script, `\\set id random(1, ${ROWS})\nSELECT * FROM ${target.table} WHERE id = :id;\n`);
  const args = ['-n', '-M', 'prepared', '-c', String(CONNECTIONS), '-j', '2', '-T', String(seconds), '-f', script];
  args.push('-h', '127.0.0.1', '-p', String(target.port), '-U', target.user, target.database);
  return new Promise((resolve, reject) =>
    execFile(
      'pgbench',
      args,
      { env: { ...process.env, PGPASSWORD: target.password ?? '' }, timeout: (seconds + 60) * 1000 },
      (err, stdout, stderr) => {
        fs.rmSync(script, { force: true });
        const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
        if (err || !tps) reject(new Error(`pgbench failed: ${stderr || stdout || String(err)}`));
        else resolve(Number(tps[1]));
      },
    ),
  );
}

/** The 1M rows through psql, vdb's listener against PostgreSQL itself; vdb's memory under a slow reader. */
async function fullRead(postgres: PgbenchTarget, listener: PgbenchTarget): Promise<void> {
  log('1M rows through psql: PostgreSQL, then vdb...');
  const pgMs = await psqlSelectAll(postgres, ROWS);
  const vdbMs = await psqlSelectAll(listener, ROWS);
  log('1M rows read slowly from vdb...');
  const slow = await slowRead(listener, vdb.pid);
  if (slow.rows !== ROWS) throw new Error(`the slow reader read ${slow.rows} rows`);
  process.stdout.write(
    `\n${table(
      ['1M rows, SELECT * through psql to /dev/null', 'seconds', 'vdb ÷ this'],
      [
        ['PostgreSQL', (pgMs / 1000).toFixed(1), `${(vdbMs / pgMs).toFixed(2)}x`],
        ['vdb PostgreSQL listener', (vdbMs / 1000).toFixed(1), ''],
      ],
    )}\n`,
  );
  process.stdout.write(
    `\nslow reader (pauses 100 ms per 20,000 rows, ${(slow.ms / 1000).toFixed(1)} s): vdb resident memory ${slow.beforeMb.toFixed(0)} MB before, ${slow.peakMb.toFixed(0)} MB at its peak\n`,
  );
}

await ensureTable();
const pgPort = 20000 + Math.floor(Math.random() * 20000);
const vdb = await startVdb({ demo: false, env: { VDB_PG_PORT: String(pgPort) } });
const proxy = await child([path.join(path.dirname(fileURLToPath(import.meta.url)), 'pass-through.js'), '5432'], /listening on (\d+)/);
try {
  await addLookupSource(vdb.url);
  const login = await request(`${vdb.url}/api/login`, 'POST', {}, { username: 'admin', password: PASSWORD });
  expectStatus(login, 200, 'login');
  const token = { 'x-auth-token': (JSON.parse(text(login)) as { token: string }).token };
  const postgres: PgbenchTarget = { port: 5432, user: 'postgres', database: 'test', table: 'bench_lookup' };
  const passThrough: PgbenchTarget = { ...postgres, port: Number(/\d+/.exec(proxy.line)![0]) };
  const listener: PgbenchTarget = { port: pgPort, user: 'admin', database: 'vdb', password: PASSWORD, table: 'pg.bench_lookup' };
  const restSpec = {
    url: `${vdb.url}/rest/api/query`,
    headers: token,
    bodyTemplate: '{"sql":"SELECT * FROM pg.bench_lookup WHERE id = $1","params":[{ID}]}',
    maxId: ROWS,
  };
  const runs: Array<{ name: string; run: (seconds: number) => Promise<number>; server?: number }> = [
    { name: 'PostgreSQL (pgbench, prepared)', run: (s) => pgbench(postgres, s) },
    { name: 'Node.js pass-through proxy to PostgreSQL (pgbench, prepared)', run: (s) => pgbench(passThrough, s), server: proxy.pid },
    { name: 'vdb PostgreSQL listener (pgbench, prepared)', run: (s) => pgbench(listener, s), server: vdb.pid },
    { name: 'vdb REST API (params)', run: async (s) => (await load(restSpec, s)).requestsPerSecond, server: vdb.pid },
  ];
  for (const { name, run } of runs) {
    log(`${name}: ${WARMUP_SECONDS} s warm-up...`);
    if (WARMUP_SECONDS > 0) await run(WARMUP_SECONDS);
  }
  // The rows take turns, round after round: a machine shared with other work slows them alike.
  const lookups = runs.map(() => 0);
  const serverCpu = runs.map(() => 0);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, { name, run, server }] of runs.entries()) {
      log(`round ${round}/${ROUNDS}: ${name}, ${SECONDS} s, ${CONNECTIONS} clients...`);
      const cpuBefore = server ? cpuMs(server) : 0;
      lookups[i]! += (await run(SECONDS)) * SECONDS;
      serverCpu[i]! += server ? cpuMs(server) - cpuBefore : 0;
    }
  }
  const tps = lookups.map((n) => n / (SECONDS * ROUNDS));
  const [pgTps, proxyTps, wireTps] = tps as [number, number, number];
  process.stdout.write(
    `\n${os.cpus().length} cores, Node ${process.version}, ${CONNECTIONS} clients, ${ROUNDS} rounds of ${SECONDS} s per row, load average ${os.loadavg()[0]!.toFixed(1)}\n\n`,
  );
  process.stdout.write(
    `${table(
      ['run', 'lookups/s', 'vdb listener ÷ this', 'server CPU ms per lookup'],
      runs.map(({ name, server }, i) => [
        name,
        tps[i]!.toFixed(0),
        name.includes('listener') ? '' : `${(wireTps / tps[i]!).toFixed(2)}x`,
        server ? (serverCpu[i]! / lookups[i]!).toFixed(3) : '',
      ]),
    )}\n`,
  );
  // No Node.js server in between answers more than the proxy: the bound of the listener's ratio to PostgreSQL here.
  process.stdout.write(`\nbound: the pass-through proxy ÷ PostgreSQL = ${(proxyTps / pgTps).toFixed(2)}x\n`);
  if (process.env.BENCH_FULL_READ !== '0') await fullRead(postgres, listener);
} finally {
  proxy.stop();
  await vdb.stop();
}
