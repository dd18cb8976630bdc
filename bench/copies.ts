/**
 * Benchmark: local copies (docs/copies.md), side by side with their peers, in one run.
 *
 *   (a) The broad join of bench/federation.ts (PostgreSQL bench_orders, 1M rows, with MariaDB
 *       bench_customers, 100k rows) with both tables accelerated, through POST /rest/api/query,
 *       against DuckDB over local Parquet copies of the same tables (target ≤ 1.5x), and live.
 *   (b) A full refresh of the 1M-row bench_orders against `psql -c "\copy (SELECT * FROM
 *       bench_orders) TO '/dev/null'"` (target ≤ 1.5x); the server's peak resident memory during
 *       the refreshes, against its resident memory before.
 *       The bound: Node receiving the same COPY into a file (vdb reads PostgreSQL that way).
 *   (c) An incremental refresh (append by id) bringing 1,000 new rows in, against the source's
 *       own query for those rows (target: ≤ 100 ms beyond it).
 *   (d) The same with mode changes (logical replication): 1,000 changed rows (500 inserted, 250
 *       updated, 250 deleted) against the source's own query for the rows changed (same target).
 *
 *   npm run build && node dist/bench/copies.js
 *   BENCH_RUNS=5 node dist/bench/copies.js      (timed runs, default 3, after 1 warm-up)
 *
 * Data: bench/federation-data.ts (set up on the first run, reused afterwards). Prints figures
 * and ratios; never asserts on timings. See bench/README.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { setUpData } from './federation-data.js';
import { median, table } from './measure.js';
import { addSqlSources, agent, expectStatus, login, request, startVdb, text, type Auth, type VdbServer } from './vdb-server.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3) || 3);
const PSQL = process.env.BENCH_PSQL ?? '/usr/bin/psql';
const NEW_ROWS = 1000;

const log = (message: string) => process.stderr.write(`${message}\n`);
const joinSql = (orders: string, customers: string) =>
  `SELECT c.country, count(*), sum(o.amount) FROM ${orders} o JOIN ${customers} c ON c.id = o.customer_id ` +
  `WHERE c.segment = 'enterprise' AND o.created >= DATE '2025-01-01' GROUP BY c.country ORDER BY c.country`;

async function vdbRows(server: VdbServer, auth: Auth, sql: string, query = ''): Promise<unknown[][]> {
  const answer = await request(`${server.url}/rest/api/query${query}`, 'POST', auth, { sql });
  expectStatus(answer, 200, sql.slice(0, 60));
  return JSON.parse(text(answer)) as unknown[][];
}

/** Median milliseconds of `RUNS` runs of `run` after one warm-up; the last run's result kept. */
async function timed<T>(name: string, run: () => Promise<T>): Promise<{ ms: number; last: T }> {
  log(`  ${name} ...`);
  let last = await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    last = await run();
    times.push(performance.now() - start);
  }
  return { ms: median(times), last };
}

/** The resident memory of process `pid` in MB (Linux /proc). */
function residentMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Runs `work` while sampling the resident memory of `pid`; answers its peak. */
async function peakMemory<T>(pid: number, work: () => Promise<T>): Promise<{ peakMb: number; result: T }> {
  let peakMb = residentMb(pid);
  const timer = setInterval(() => (peakMb = Math.max(peakMb, residentMb(pid))), 20);
  try {
    const result = await work();
    return { peakMb, result };
  } finally {
    clearInterval(timer);
  }
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
const ms = (value: number) => value.toFixed(0);

async function main(): Promise<void> {
  log('data set-up (reused when present and identical) ...');
  const data = await setUpData();
  const client = new pg.Client(data.pg);
  await client.connect();
  const server = await startVdb({ demo: false });
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const lines: string[] = [];
  try {
    const auth = await login(server);
    await addSqlSources(server, auth, data);
    const call = (sql: string) => vdbRows(server, auth, sql);

    // (b) first: it builds the copies (a) reads.
    log('(b) full refresh of pg.bench_orders against psql \\copy');
    await call(`CALL SYSADMIN.accelerateTable('pg.bench_orders', 'append', null, null, 'id')`);
    await call(`CALL SYSADMIN.accelerateTable('my.bench_customers', 'full')`);
    await call(`CALL SYSADMIN.refreshCopy('my.bench_customers')`);
    const before = residentMb(server.pid);
    const refresh = await peakMemory(server.pid, () =>
      timed('vdb  full refresh', () => call(`CALL SYSADMIN.refreshCopy('pg.bench_orders', true)`)),
    );
    const env = { ...process.env, PGHOST: data.pg.host, PGPORT: String(data.pg.port), PGUSER: data.pg.user, PGDATABASE: data.pg.database };
    const psql = await timed('psql \\copy to /dev/null', async () => {
      const result = spawnSync(PSQL, ['-X', '-q', '-c', "\\copy (SELECT * FROM bench_orders) TO '/dev/null'"], { env });
      if (result.status !== 0) throw new Error(`psql failed: ${String(result.stderr)}`);
    });
    // The bound: Node itself receiving the same COPY (one protocol message per row) into a file.
    const sink = path.join(os.tmpdir(), `vdb-bench-copy-${process.pid}.csv`);
    const nodeCopy = await timed('pg COPY (FORMAT csv) received by Node into a file', async () => {
      await pipeline(client.query(copyTo('COPY (SELECT * FROM bench_orders) TO STDOUT WITH (FORMAT csv)')), fs.createWriteStream(sink));
    });
    fs.rmSync(sink, { force: true });
    const [[refreshRows]] = (await call(`SELECT RowCount FROM SYS.Copies WHERE Name = 'pg.bench_orders'`)) as [[number]];

    // (c) incremental: 1,000 new rows.
    log(`(c) incremental refresh of ${NEW_ROWS} new rows`);
    const increments: number[] = [];
    const sourceQueries: number[] = [];
    try {
      for (let i = 0; i <= RUNS; i++) {
        const base = 2_000_000 + i * NEW_ROWS;
        await client.query(
          `INSERT INTO bench_orders SELECT g, 1, 1.00, 'new', DATE '2025-06-01' FROM generate_series(${base + 1}::bigint, ${base + NEW_ROWS}) g`,
        );
        const startSource = performance.now();
        await client.query({ text: `SELECT * FROM bench_orders WHERE id > ${base}`, rowMode: 'array' });
        const sourceMs = performance.now() - startSource;
        const start = performance.now();
        await call(`CALL SYSADMIN.refreshCopy('pg.bench_orders')`);
        if (i > 0) {
          increments.push(performance.now() - start);
          sourceQueries.push(sourceMs);
        }
      }
    } finally {
      await client.query('DELETE FROM bench_orders WHERE id > 1000000');
    }
    const [[kind, rowsRead]] = (await call(
      `SELECT Kind, RowCount FROM SYSLOG.CopyRefreshes WHERE CopyName = 'pg.bench_orders' ORDER BY StartTime DESC LIMIT 1`,
    )) as [[string, number]];
    await call(`CALL SYSADMIN.refreshCopy('pg.bench_orders', true)`);

    // (a) the join over copies, DuckDB over Parquet, live.
    log('(a) the broad join: copies, DuckDB over Parquet, live');
    await duck.run(`CREATE VIEW bench_orders AS SELECT * FROM read_parquet('${data.ordersParquet}')`);
    await duck.run(`CREATE VIEW bench_customers AS SELECT * FROM read_parquet('${data.customersParquet}')`);
    const vdbJoin = joinSql('pg.bench_orders', 'my.bench_customers');
    const plan = JSON.stringify(await call(`EXPLAIN ${vdbJoin}`));
    if (!plan.includes('local copy')) throw new Error(`the join does not read the copies: ${plan}`);
    const copies = await timed('vdb over copies', () => call(vdbJoin));
    const parquet = await timed('DuckDB over Parquet', async () =>
      (await duck.runAndReadAll(joinSql('bench_orders', 'bench_customers'))).getRows(),
    );
    const live = await timed('vdb live (maxStaleness=0)', () => vdbRows(server, auth, vdbJoin, '?maxStaleness=0'));
    const same = JSON.stringify(copies.last) === JSON.stringify(live.last);
    // DuckDB answers decimals as objects whose text keeps the scale (70.50), vdb's JSON as numbers (70.5).
    const plain = (rows: unknown[][]) => JSON.stringify(rows.map((r) => [r[0], Number(r[1]), Number(String(r[2]))]));
    const duckSame = plain(copies.last) === plain(parquet.last);
    const capture = await changeCapture(client, call, (sql) => vdbRows(server, auth, sql, '?maxStaleness=0'));

    lines.push(`Local copies (bench/copies.ts), median of ${RUNS} runs after 1 warm-up`);
    lines.push('');
    lines.push(
      table(
        ['Measure', 'vdb ms', 'Peer', 'Peer ms', 'Ratio', 'Target'],
        [
          [
            '(a) broad join, both tables accelerated',
            ms(copies.ms),
            'DuckDB over Parquet',
            ms(parquet.ms),
            ratio(copies.ms, parquet.ms),
            '≤ 1.5x',
          ],
          ['(a) the same join read live', ms(live.ms), 'DuckDB over Parquet', ms(parquet.ms), ratio(live.ms, parquet.ms), ''],
          [
            `(b) full refresh, ${refreshRows.toLocaleString('en-US')} rows`,
            ms(refresh.result.ms),
            'psql \\copy',
            ms(psql.ms),
            ratio(refresh.result.ms, psql.ms),
            '≤ 1.5x',
          ],
          ['(b) bound: the same COPY received by Node', ms(nodeCopy.ms), 'psql \\copy', ms(psql.ms), ratio(nodeCopy.ms, psql.ms), ''],
          [
            `(c) incremental refresh, ${NEW_ROWS} new rows (${kind}, ${rowsRead} read)`,
            ms(median(increments)),
            "source's own query",
            ms(median(sourceQueries)),
            `+${ms(median(increments) - median(sourceQueries))} ms`,
            '≤ +100 ms',
          ],
          [
            `(d) change capture, ${NEW_ROWS} changed rows (${capture.kind}, ${capture.rowsRead} read)`,
            ms(capture.refreshMs),
            "source's own query",
            ms(capture.sourceMs),
            `+${ms(capture.refreshMs - capture.sourceMs)} ms`,
            '≤ +100 ms',
          ],
        ],
      ),
    );
    lines.push('');
    lines.push(`Server resident memory: ${ms(before)} MB before the full refreshes, peak ${ms(refresh.peakMb)} MB during them.`);
    lines.push(
      `Answers: copies = live ${same ? 'yes' : 'NO'}; copies = DuckDB over Parquet ${duckSame ? 'yes' : 'NO'}; ` +
        `change-capture copy = live ${capture.same ? 'yes' : 'NO'}.`,
    );
    const psqlVersion = execFileSync(PSQL, ['--version']).toString().trim();
    lines.push(`Peers: ${psqlVersion}; DuckDB (node-api) over ${data.parquetDir}.`);
  } finally {
    await server.stop();
    await client.end();
    duck.closeSync();
    agent.destroy();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * (d) bench_orders accelerated in mode changes: each run inserts 500 rows, updates 250 of the
 * previous run's and deletes its other 250 (1,000 changed rows), then refreshes. The peer: the
 * source's own query for the rows of those ids. The rows added are removed after.
 */
async function changeCapture(
  client: pg.Client,
  call: (sql: string) => Promise<unknown[][]>,
  live: (sql: string) => Promise<unknown[][]>,
): Promise<{ refreshMs: number; sourceMs: number; kind: string; rowsRead: number; same: boolean }> {
  log(`(d) change capture: ${NEW_ROWS} changed rows`);
  await call(`CALL SYSADMIN.dropCopy('pg.bench_orders')`);
  await call(`CALL SYSADMIN.accelerateTable('pg.bench_orders', 'changes')`);
  await call(`CALL SYSADMIN.refreshCopy('pg.bench_orders')`);
  const refreshes: number[] = [];
  const sourceQueries: number[] = [];
  const half = NEW_ROWS / 2;
  try {
    for (let i = 0; i <= RUNS + 1; i++) {
      const base = 3_000_000 + i * half;
      const previous = base - half;
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO bench_orders SELECT g, 1, 1.00, 'new', DATE '2025-06-01' FROM generate_series(${base + 1}::bigint, ${base + half}) g`,
      );
      if (i > 0) {
        await client.query(
          `UPDATE bench_orders SET amount = 2.50, status = 'changed' WHERE id > ${previous} AND id <= ${previous + half / 2}`,
        );
        await client.query(`DELETE FROM bench_orders WHERE id > ${previous + half / 2} AND id <= ${base}`);
      }
      await client.query('COMMIT');
      const startSource = performance.now();
      await client.query({ text: `SELECT * FROM bench_orders WHERE id > ${previous}`, rowMode: 'array' });
      const sourceMs = performance.now() - startSource;
      const start = performance.now();
      await call(`CALL SYSADMIN.refreshCopy('pg.bench_orders')`);
      // The first run warms up; the first with updates and deletes is the second.
      if (i > 1) {
        refreshes.push(performance.now() - start);
        sourceQueries.push(sourceMs);
      }
    }
    const [[kind, rowsRead]] = (await call(
      `SELECT Kind, RowCount FROM SYSLOG.CopyRefreshes WHERE CopyName = 'pg.bench_orders' ORDER BY StartTime DESC LIMIT 1`,
    )) as [[string, number]];
    const check = 'SELECT count(*), sum(amount), sum(id) FROM pg.bench_orders';
    const same = JSON.stringify(await call(check)) === JSON.stringify(await live(check));
    return { refreshMs: median(refreshes), sourceMs: median(sourceQueries), kind, rowsRead, same };
  } finally {
    await client.query('DELETE FROM bench_orders WHERE id > 1000000');
    await call(`CALL SYSADMIN.dropCopy('pg.bench_orders')`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
