/**
 * Result formats (issue 28): 1M rows of a PostgreSQL table through POST /rest/api/query as JSON,
 * CSV, NDJSON, Arrow and Parquet, against `psql -c "\copy (...) to file"` (CSV and PostgreSQL's
 * text format), in one run, runs interleaved. Prints medians and the ratios to psql's CSV copy.
 * Targets of the issue: JSON ≤ 2×, CSV ≤ 1.3×, Arrow ≤ 1.2× of psql COPY.
 *
 * npm run build && node dist/bench/result-formats.js      (BENCH_RUNS=5 for more timed runs; default 3)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { tableFromIPC } from 'apache-arrow';
import { setUpData, ORDERS_ROWS, type BenchData } from './federation-data.js';
import { median, table, type RunResult } from './measure.js';
import { expectStatus, login, request, startVdb, type Auth, type VdbServer } from './vdb-server.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PSQL = process.env.BENCH_PSQL ?? '/usr/bin/psql';
const SQL = 'SELECT * FROM bench_orders';
const log = (message: string) => process.stderr.write(`${message}\n`);

/** psql's \copy of the table to a file, in `format` (csv with a header line, or text). */
function psqlCopy(data: BenchData, file: string, format: 'csv' | 'text'): Promise<RunResult> {
  const options = format === 'csv' ? ' WITH (FORMAT csv, HEADER)' : '';
  const args = ['-X', '-q', '-h', data.pg.host, '-p', String(data.pg.port), '-U', data.pg.user, '-d', data.pg.database];
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(PSQL, [...args, '-c', `\\copy (${SQL}) TO '${file}'${options}`], {
      env: { ...process.env, ...(data.pg.password ? { PGPASSWORD: data.pg.password } : {}) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`psql exited with ${code}: ${errors}`));
      resolve({ ms: performance.now() - start, bytes: fs.statSync(file).size });
    });
  });
}

interface Format {
  name: string;
  accept: string;
}

const FORMATS: Format[] = [
  { name: 'JSON', accept: 'application/json' },
  { name: 'CSV', accept: 'text/csv' },
  { name: 'NDJSON', accept: 'application/x-ndjson' },
  { name: 'Arrow', accept: 'application/vnd.apache.arrow.stream' },
  { name: 'Parquet', accept: 'application/vnd.apache.parquet' },
];

/** Bodies of the last run, checked once after the timing. */
const lastBodies = new Map<string, Buffer>();

/** One request: from sending it to the last byte of the body, written to `file` as it comes (like psql's). */
async function vdbRun(server: VdbServer, auth: Auth, format: Format, file: string): Promise<RunResult> {
  const start = performance.now();
  const answer = await request(
    `${server.url}/rest/api/query`,
    'POST',
    { ...auth, accept: format.accept },
    { sql: `SELECT * FROM pg.bench_orders` },
  );
  expectStatus(answer, 200, format.name);
  const body = Buffer.concat(answer.body);
  fs.writeFileSync(file, body);
  const ms = performance.now() - start;
  lastBodies.set(format.name, body);
  return { ms, bytes: answer.bytes, ttfbMs: answer.ttfbMs };
}

/** Each body holds the million rows. */
function check(): void {
  const lines = (body: Buffer) => {
    let n = 0;
    for (let i = body.indexOf(10); i >= 0; i = body.indexOf(10, i + 1)) n++;
    return n;
  };
  const json = JSON.parse(lastBodies.get('JSON')!.toString('utf8')) as unknown[][];
  const results: Array<[string, number]> = [
    ['JSON', json.length],
    ['CSV', lines(lastBodies.get('CSV')!) - 1],
    ['NDJSON', lines(lastBodies.get('NDJSON')!)],
    ['Arrow', tableFromIPC(new Uint8Array(lastBodies.get('Arrow')!)).numRows],
  ];
  for (const [name, rows] of results) if (rows !== ORDERS_ROWS) throw new Error(`${name}: ${rows} rows, not ${ORDERS_ROWS}`);
  if (lastBodies.get('Parquet')!.subarray(0, 4).toString() !== 'PAR1') throw new Error('Parquet: not a Parquet file');
  log(`checked: ${ORDERS_ROWS} rows in JSON, CSV, NDJSON and Arrow; Parquet a Parquet file`);
}

async function main(): Promise<void> {
  if (!fs.existsSync(PSQL)) throw new Error(`no psql at ${PSQL} (BENCH_PSQL to name another)`);
  const data = await setUpData();
  const server = await startVdb({ demo: false });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bench-formats-'));
  try {
    const auth = await login(server);
    const source = {
      name: 'pg',
      template: 'postgresql',
      connectionProps: `host=${data.pg.host},port=${data.pg.port},db=${data.pg.database},user-name=${data.pg.user}${data.pg.password ? `,password=${data.pg.password}` : ''}`,
      modelProps: '',
    };
    expectStatus(await request(`${server.url}/rest/api/source`, 'POST', auth, source), 201, 'adding the source');
    const rows: Array<{ name: string; run: () => Promise<RunResult> }> = [
      { name: 'psql \\copy (...) TO file (FORMAT csv, HEADER)', run: () => psqlCopy(data, path.join(dir, 'psql.csv'), 'csv') },
      { name: 'psql \\copy (...) TO file (text)', run: () => psqlCopy(data, path.join(dir, 'psql.txt'), 'text') },
      ...FORMATS.map((format) => ({
        name: `vdb POST /rest/api/query, ${format.name}`,
        run: () => vdbRun(server, auth, format, path.join(dir, `vdb.${format.name}`)),
      })),
    ];
    const results = new Map<string, RunResult[]>(rows.map((row) => [row.name, []]));
    // One warm-up of each, then the timed runs interleaved, so drift of the machine hits all alike.
    for (let run = 0; run <= RUNS; run++) {
      for (const row of rows) {
        const result = await row.run();
        if (run > 0) results.get(row.name)!.push(result);
        log(`${run === 0 ? 'warm-up' : `run ${run}/${RUNS}`}: ${row.name} ${result.ms.toFixed(0)} ms`);
      }
    }
    check();
    const baseline = median(results.get(rows[0]!.name)!.map((r) => r.ms));
    const printed = rows.map((row) => {
      const runs = results.get(row.name)!;
      const ms = median(runs.map((r) => r.ms));
      const ttfb = runs[0]!.ttfbMs === undefined ? '-' : median(runs.map((r) => r.ttfbMs!)).toFixed(1);
      return [
        row.name,
        ms.toFixed(1),
        Math.min(...runs.map((r) => r.ms)).toFixed(1),
        ttfb,
        Math.round(ORDERS_ROWS / (ms / 1000)).toLocaleString('en-US'),
        (runs[0]!.bytes / 1e6).toFixed(1),
        `${(ms / baseline).toFixed(2)}x`,
      ];
    });
    process.stdout.write(
      `\n1,000,000 rows of pg.bench_orders (id bigint, customer_id int, amount numeric(12,2), status text, created date), ${RUNS} timed runs\n\n`,
    );
    process.stdout.write(`${table(['', 'median ms', 'min ms', 'TTFB ms', 'rows/s', 'MB', '÷ psql csv'], printed)}\n`);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
