/**
 * PostgreSQL's protocol under load (issue 30): pgbench's point lookups by id on the 1M-row
 * bench_lookup table, 50 clients, prepared mode, against PostgreSQL itself and against vdb's
 * PostgreSQL listener (the table through the source `pg`), and the same lookups through vdb's
 * REST API (load.ts, token sign-in, `$1` parameters). Printed as transactions per second and
 * ratios: vdb's listener to PostgreSQL, and to vdb's REST API.
 *
 * Usage: npm run build && node dist/bench/pgwire.js   (BENCH_SECONDS=10, BENCH_CONNECTIONS=50)
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { table } from './measure.js';
import { addLookupSource, CONNECTIONS, ensureTable, load, log, ROWS, SECONDS, WARMUP_SECONDS } from './lookup-setup.js';
import { expectStatus, PASSWORD, request, startVdb, text } from './vdb-server.js';

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

await ensureTable();
const pgPort = 20000 + Math.floor(Math.random() * 20000);
const vdb = await startVdb({ demo: false, env: { VDB_PG_PORT: String(pgPort) } });
try {
  await addLookupSource(vdb.url);
  const login = await request(`${vdb.url}/api/login`, 'POST', {}, { username: 'admin', password: PASSWORD });
  expectStatus(login, 200, 'login');
  const token = { 'x-auth-token': (JSON.parse(text(login)) as { token: string }).token };
  const postgres: PgbenchTarget = { port: 5432, user: 'postgres', database: 'test', table: 'bench_lookup' };
  const listener: PgbenchTarget = { port: pgPort, user: 'admin', database: 'vdb', password: PASSWORD, table: 'pg.bench_lookup' };
  const restSpec = {
    url: `${vdb.url}/rest/api/query`,
    headers: token,
    bodyTemplate: '{"sql":"SELECT * FROM pg.bench_lookup WHERE id = $1","params":[{ID}]}',
    maxId: ROWS,
  };
  const results: Array<[string, number]> = [];
  for (const [name, run] of [
    ['PostgreSQL (pgbench, prepared)', (s: number) => pgbench(postgres, s)],
    ['vdb PostgreSQL listener (pgbench, prepared)', (s: number) => pgbench(listener, s)],
    ['vdb REST API (params)', async (s: number) => (await load(restSpec, s)).requestsPerSecond],
  ] as const) {
    log(`${name}: ${WARMUP_SECONDS} s warm-up, ${SECONDS} s, ${CONNECTIONS} clients...`);
    if (WARMUP_SECONDS > 0) await run(WARMUP_SECONDS);
    results.push([name, await run(SECONDS)]);
  }
  const [pgTps, wireTps, restTps] = results.map(([, tps]) => tps) as [number, number, number];
  process.stdout.write(`\n${os.cpus().length} cores, Node ${process.version}, ${CONNECTIONS} clients, ${SECONDS} s per row\n\n`);
  process.stdout.write(
    `${table(
      ['run', 'lookups/s', 'vdb listener ÷ this'],
      results.map(([name, tps]) => [name, tps.toFixed(0), name.includes('listener') ? '' : `${(wireTps / tps).toFixed(2)}x`]),
    )}\n`,
  );
  void pgTps;
  void restTps;
} finally {
  await vdb.stop();
}
