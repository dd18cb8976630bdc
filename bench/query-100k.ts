/**
 * Benchmark: 100,000 rows (demo files/events.parquet, 6 columns incl. DECIMAL and TIMESTAMP) as
 * JSON through vdb's REST API, side by side with DuckDB used directly from Node. It prints
 * figures and ratios and never asserts: the numbers depend on the machine.
 *
 *   npm run bench            (= npm run build && node dist/bench/query-100k.js)
 *   BENCH_RUNS=9 npm run bench
 *
 * vdb runs as a child process (`node dist/src/cli.js serve`) over a fresh temporary data
 * directory, so the server's JSON work and this client's never share a JS thread. See
 * bench/README.md for what each row measures.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { jsonRowsSql, type ResultColumn } from '../src/results/json.js';
import { defineValueChecks } from '../src/runtime/value-macros.js';
import {
  agent,
  BASIC,
  CLI,
  expectStatus,
  login,
  request,
  ROOT,
  startVdb,
  type Auth,
  type HttpAnswer,
  type VdbServer,
} from './vdb-server.js';
import { median, table, type Measured, type RunResult } from './measure.js';

const WARMUP = 2;
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5) || 5);
const EXPECTED_ROWS = 100_000;
const SQL = 'SELECT * FROM files.events';
const PAGE_LIMIT = 10_000;

// ---------------------------------------------------------------------------------------------
// Measurement

async function measure(name: string, run: () => Promise<RunResult>, verify: () => void): Promise<Measured> {
  for (let i = 0; i < WARMUP; i++) await run();
  const runs: RunResult[] = [];
  for (let i = 0; i < RUNS; i++) {
    // A collection of the previous run's garbage should not land inside this one.
    if (typeof global.gc === 'function') global.gc();
    runs.push(await run());
  }
  verify(); // outside the timing: parses the last run's output once
  process.stderr.write(`  done: ${name} (median ${median(runs.map((r) => r.ms)).toFixed(1)} ms)\n`);
  return { name, runs };
}

// ---------------------------------------------------------------------------------------------
// vdb over HTTP

const expectOk = (answer: HttpAnswer, what: string) => expectStatus(answer, 200, what);

function parseRows(chunks: Buffer[], what: string): unknown[] {
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (!Array.isArray(parsed)) throw new Error(`${what}: the body is not a JSON array`);
  return parsed;
}

function checkRows(rows: unknown[], what: string, shape: 'array' | 'object'): void {
  if (rows.length !== EXPECTED_ROWS) throw new Error(`${what}: expected ${EXPECTED_ROWS} rows, got ${rows.length}`);
  const first = rows[0];
  const ok =
    shape === 'array'
      ? Array.isArray(first) && first.length === 6
      : !!first && typeof first === 'object' && !Array.isArray(first) && Object.keys(first).length === 6;
  if (!ok) throw new Error(`${what}: unexpected row shape: ${JSON.stringify(first)}`);
}

/** A one-row query: the fixed cost of one request (auth, parse, bind, plan, HTTP). */
function vdbTiny(server: VdbServer, auth: Auth) {
  let last: Buffer[] = [];
  const run = async (): Promise<RunResult> => {
    const start = performance.now();
    const answer = await request(`${server.url}/rest/api/query`, 'POST', auth, { sql: 'SELECT 1 AS one' });
    const ms = performance.now() - start;
    expectOk(answer, 'SELECT 1');
    last = answer.body;
    return { ms, bytes: answer.bytes, ttfbMs: answer.ttfbMs };
  };
  const verify = () => {
    const text = Buffer.concat(last).toString('utf8');
    if (text !== '[[1]]') throw new Error(`SELECT 1: unexpected body ${text}`);
  };
  return { run, verify };
}

function vdbQuery(server: VdbServer, array: boolean, auth: Auth = BASIC) {
  let last: Buffer[] = [];
  const what = `vdb ${array ? 'arrays' : 'objects'}`;
  const run = async (): Promise<RunResult> => {
    const start = performance.now();
    const answer = await request(`${server.url}/rest/api/query${array ? '' : '?array=false'}`, 'POST', auth, { sql: SQL });
    const ms = performance.now() - start;
    expectOk(answer, what);
    last = answer.body;
    return { ms, bytes: answer.bytes, ttfbMs: answer.ttfbMs };
  };
  const verify = () => checkRows(parseRows(last, what), what, array ? 'array' : 'object');
  return { run, verify };
}

function vdbPaginated(server: VdbServer, auth: Auth) {
  let pages: Buffer[][] = [];
  const what = `vdb pagination limit=${PAGE_LIMIT}`;
  const run = async (): Promise<RunResult> => {
    const collected: Buffer[][] = [];
    const start = performance.now();
    let answer = await request(`${server.url}/rest/api/query?pagination=true&limit=${PAGE_LIMIT}`, 'POST', auth, { sql: SQL });
    const ttfbMs = answer.ttfbMs;
    let bytes = 0;
    let requests = 1;
    for (;;) {
      expectOk(answer, what);
      collected.push(answer.body);
      bytes += answer.bytes;
      const next = answer.headers.nextpage;
      if (typeof next !== 'string' || next === '') break;
      answer = await request(next, 'POST', auth);
      requests++;
    }
    const ms = performance.now() - start;
    pages = collected;
    return { ms, bytes, ttfbMs, requests };
  };
  const verify = () => {
    const rows = pages.flatMap((page) => parseRows(page, what));
    checkRows(rows, what, 'array');
  };
  return { run, verify };
}

// ---------------------------------------------------------------------------------------------
// DuckDB used directly

/** What a naive app does with 64-bit integers that JSON.stringify refuses. */
const bigintReplacer = (_key: string, value: unknown) =>
  typeof value === 'bigint' ? (value >= -9007199254740991n && value <= 9007199254740991n ? Number(value) : value.toString()) : value;

function duckNaive(connection: DuckDBConnection, relation: string) {
  let last = '';
  const run = async (): Promise<RunResult> => {
    const start = performance.now();
    const reader = await connection.runAndReadAll(`SELECT * FROM ${relation}`);
    const text = JSON.stringify(reader.getRowsJS(), bigintReplacer);
    const ms = performance.now() - start;
    last = text;
    return { ms, bytes: Buffer.byteLength(text) };
  };
  const verify = () => checkRows(JSON.parse(last) as unknown[], 'duckdb naive', 'array');
  return { run, verify };
}

function duckStreamJs(connection: DuckDBConnection, relation: string) {
  let last: string[] = [];
  const run = async (): Promise<RunResult> => {
    const start = performance.now();
    const result = await connection.stream(`SELECT * FROM ${relation}`);
    const parts: string[] = ['['];
    let bytes = 2;
    let first = true;
    for await (const rows of result.yieldRowsJs()) {
      if (rows.length === 0) continue;
      const text = JSON.stringify(rows, bigintReplacer);
      const inner = first ? text.slice(1, -1) : `,${text.slice(1, -1)}`;
      first = false;
      parts.push(inner);
      bytes += Buffer.byteLength(inner);
    }
    parts.push(']');
    const ms = performance.now() - start;
    last = parts;
    return { ms, bytes };
  };
  const verify = () => checkRows(JSON.parse(last.join('')) as unknown[], 'duckdb stream', 'array');
  return { run, verify };
}

/** vdb's own encoding (json_array inside DuckDB, src/results/json.ts) without any HTTP. */
async function duckEngineJson(connection: DuckDBConnection, relation: string) {
  const described = await connection.run(`SELECT * FROM ${relation} LIMIT 0`);
  const columns: ResultColumn[] = described.columnNames().map((name, i) => ({ name, type: described.columnType(i) }));
  const aliases = columns.map((_, i) => `c${i}`).join(', ');
  const sql = jsonRowsSql(`(SELECT * FROM ${relation}) AS q(${aliases})`, columns, 'array');
  let last: string[] = [];
  const run = async (): Promise<RunResult> => {
    const start = performance.now();
    const result = await connection.stream(sql);
    const parts: string[] = ['['];
    let bytes = 2;
    let first = true;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const text = (chunk.getColumnValues(0) as string[]).join(',');
      const part = first ? text : `,${text}`;
      first = false;
      parts.push(part);
      bytes += Buffer.byteLength(part);
    }
    parts.push(']');
    const ms = performance.now() - start;
    last = parts;
    return { ms, bytes };
  };
  const verify = () => checkRows(JSON.parse(last.join('')) as unknown[], 'duckdb engine json', 'array');
  return { run, verify };
}

/** The floor under all of the above: the scan alone, chunks fetched and dropped, no JSON. */
function duckScanOnly(connection: DuckDBConnection, relation: string) {
  let rows = 0;
  const run = async (): Promise<RunResult> => {
    const start = performance.now();
    const result = await connection.stream(`SELECT * FROM ${relation}`);
    let count = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      count += chunk.rowCount;
    }
    const ms = performance.now() - start;
    rows = count;
    return { ms, bytes: 0 };
  };
  const verify = () => {
    if (rows !== EXPECTED_ROWS) throw new Error(`duckdb scan: expected ${EXPECTED_ROWS} rows, got ${rows}`);
  };
  return { run, verify };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const A = 'duckdb (a) runAndReadAll+getRowsJS+stringify';
const B = 'duckdb (b) stream yieldRowsJs+stringify';
const C = 'duckdb (c) stream json_array in engine';
const D = 'duckdb (d) stream fetchChunk only, no JSON';

function report(results: Measured[], overhead: Measured[]): void {
  const medianOf = (name: string) => median(results.find((r) => r.name === name)!.runs.map((r) => r.ms));
  const baselines = [
    { label: '(a)', name: A },
    { label: '(b)', name: B },
    { label: '(c)', name: C },
  ];
  const ttfb = (r: Measured) => (r.runs[0]!.ttfbMs !== undefined ? fmt(median(r.runs.map((x) => x.ttfbMs!))) : '-');
  const headers = ['100k rows', 'median ms', 'min ms', 'rows/s', 'MB/s', 'MB', 'TTFB ms', ...baselines.map((b) => `÷ ${b.label}`)];
  const rows = results.map((r) => {
    const ms = r.runs.map((x) => x.ms);
    const med = median(ms);
    const bytes = median(r.runs.map((x) => x.bytes));
    return [
      r.name,
      fmt(med),
      fmt(Math.min(...ms)),
      fmt((EXPECTED_ROWS / med) * 1000, 0),
      bytes > 0 ? fmt(bytes / 1e6 / (med / 1000)) : '-',
      bytes > 0 ? fmt(bytes / 1e6, 2) : '-',
      ttfb(r),
      ...baselines.map((b) => `${fmt(med / medianOf(b.name), 2)}x`),
    ];
  });
  process.stdout.write(`\n${table(headers, rows)}\n`);
  const small = overhead.map((r) => {
    const ms = r.runs.map((x) => x.ms);
    return [r.name, fmt(median(ms)), fmt(Math.min(...ms)), ttfb(r)];
  });
  process.stdout.write(`\n${table(['fixed cost of one request', 'median ms', 'min ms', 'TTFB ms'], small)}\n`);
  const pages = results.find((r) => r.name.includes('pagination'))?.runs[0]?.requests;
  process.stdout.write(
    `\n${EXPECTED_ROWS.toLocaleString('en-US')} rows of files.events; ${WARMUP} warm-up + ${RUNS} timed runs each; MB = 10^6 bytes of JSON produced.` +
      `\nrows/s and MB/s from the median. "÷ (x)" = this row's median / the median of baseline (x): below 1 is faster than (x).` +
      `\nTTFB = time to the response headers of the first request (vdb sends them with the first chunk of rows).` +
      (pages ? `\nPagination: ${pages} requests per walk (the first creates the cursor and returns page 1).` : '') +
      `\nNode ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${os.platform()} ${os.arch()}.\n`,
  );
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  process.stderr.write(`starting vdb (${path.relative(ROOT, CLI)} serve) ...\n`);
  const server = await startVdb();
  let instance: DuckDBInstance | null = null;
  let connection: DuckDBConnection | null = null;
  const results: Measured[] = [];
  const overhead: Measured[] = [];
  try {
    process.stderr.write(`vdb at ${server.url}, data dir ${server.dataDir}\n`);
    const token = await login(server);
    const add = async (into: Measured[], name: string, bench: { run: () => Promise<RunResult>; verify: () => void }) =>
      into.push(await measure(name, bench.run, bench.verify));

    await add(overhead, 'vdb  SELECT 1, HTTP Basic', vdbTiny(server, BASIC));
    await add(overhead, 'vdb  SELECT 1, x-auth-token', vdbTiny(server, token));

    await add(results, 'vdb  POST /query (arrays)', vdbQuery(server, true));
    await add(results, 'vdb  POST /query array=false', vdbQuery(server, false));
    await add(results, 'vdb  POST /query (arrays), x-auth-token', vdbQuery(server, true, token));
    await add(results, `vdb  pagination limit=${PAGE_LIMIT}, Basic`, vdbPaginated(server, BASIC));
    await add(results, `vdb  pagination limit=${PAGE_LIMIT}, x-auth-token`, vdbPaginated(server, token));

    // Same file vdb reads: the copy inside its data directory.
    const parquet = path.join(server.dataDir, 'files', 'demo', 'files', 'events.parquet');
    const file = fs.existsSync(parquet) ? parquet : path.join(ROOT, 'demo', 'files', 'events.parquet');
    const relation = `read_parquet('${file.replace(/'/g, "''")}')`;
    instance = await DuckDBInstance.create(':memory:');
    connection = await instance.connect();
    // vdb's engine macros, which jsonRowsSql's size check of each row calls (its defaults).
    await defineValueChecks(connection, 64 * 1024 * 1024, 1024 * 1024 * 1024);
    await add(results, A, duckNaive(connection, relation));
    await add(results, B, duckStreamJs(connection, relation));
    await add(results, C, await duckEngineJson(connection, relation));
    await add(results, D, duckScanOnly(connection, relation));
  } finally {
    connection?.closeSync();
    instance?.closeSync();
    await server.stop();
    agent.destroy();
  }
  report(results, overhead);
  process.stdout.write(`total bench time ${fmt((performance.now() - started) / 1000)} s\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
