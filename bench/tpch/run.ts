/**
 * TPC-H over two sources (issue 26): the 22 queries through vdb over PostgreSQL (lineitem,
 * orders, partsupp, part) and MariaDB (customer, supplier, nation, region), against PostgreSQL
 * with the MariaDB tables as mysql_fdw foreign tables, and against PostgreSQL holding all eight
 * (the floor). vdb's answer must equal PostgreSQL all-local's (compare.ts); any difference is
 * printed. For each query, the statements vdb's EXPLAIN sends its sources, with the reads of a
 * large table without a condition marked (plans.ts).
 *
 *   npm run build && node dist/bench/tpch/run.js
 *   BENCH_SF=0.1 BENCH_RUNS=5 node dist/bench/tpch/run.js     (scale, default 1; timed runs, default 3)
 *   BENCH_QUERIES=1,3,18 node dist/bench/tpch/run.js          (some queries only)
 *   BENCH_FDW=off ...                                          (leave the mysql_fdw peer out)
 *
 * Each query: one warm-up run, then BENCH_RUNS timed runs (only one when the warm-up took more
 * than BENCH_SLOW_MS, default 20,000), median. A statement has BENCH_TIMEOUT_MS (default 300,000).
 * Prints figures; fails (exit code 1) only when vdb answers differently from PostgreSQL.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { difference, paddedColumns, parseVdbRows, pgRows, TEXT_TYPES, unpad, type Rows } from './compare.js';
import { connections, load, type Loaded } from './load.js';
import { formatStatements, fullReadThreshold, sourceStatements, type SourceStatement } from './plans.js';
import { QUERIES, schemaNames, vdbNames, type Query } from './queries.js';
import { sourceBodies } from './sources.js';
import { median, table } from '../measure.js';
import { agent, CLI, login, request, ROOT, startVdb, text, type Auth, type VdbServer } from '../vdb-server.js';

const env = process.env;
const SF = Number(env.BENCH_SF ?? 1);
const RUNS = Math.max(1, Number(env.BENCH_RUNS ?? 3) || 3);
const SLOW_MS = Number(env.BENCH_SLOW_MS ?? 20_000);
const TIMEOUT_MS = Number(env.BENCH_TIMEOUT_MS ?? 300_000);
const ONLY = env.BENCH_QUERIES ? new Set(env.BENCH_QUERIES.split(',').map(Number)) : null;

const log = (message: string) => process.stderr.write(`${message}\n`);

/** A peer's outcome for one query: times, or why there are none. */
interface Outcome {
  ms: number[];
  rows: Rows | null;
  error: string | null;
}

/** Runs a statement once for warm-up and RUNS times (once when slow); keeps the last answer. */
async function timed(run: () => Promise<Rows>): Promise<Outcome> {
  const ms: number[] = [];
  let rows: Rows | null = null;
  try {
    let start = performance.now();
    rows = await run();
    const warmup = performance.now() - start;
    const runs = warmup > SLOW_MS ? 0 : RUNS;
    if (runs === 0) ms.push(warmup);
    for (let i = 0; i < runs; i++) {
      start = performance.now();
      rows = await run();
      ms.push(performance.now() - start);
    }
    return { ms, rows, error: null };
  } catch (err) {
    return { ms, rows, error: err instanceof Error ? err.message : String(err) };
  }
}

function pgRunner(client: pg.Client, sql: string, padded: { columns: number[] }) {
  return async (): Promise<Rows> => {
    const result = await client.query<unknown[]>({ text: sql, rowMode: 'array', types: TEXT_TYPES });
    padded.columns = paddedColumns(result);
    return pgRows(result);
  };
}

function vdbRunner(server: VdbServer, auth: Auth, sql: string) {
  return async (): Promise<Rows> => {
    const answer = await request(`${server.url}/rest/api/query`, 'POST', auth, { sql });
    const body = text(answer);
    if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${body.slice(0, 300)}`);
    return parseVdbRows(body);
  };
}

async function vdbExplain(server: VdbServer, auth: Auth, sql: string): Promise<unknown[][] | string> {
  const answer = await request(`${server.url}/rest/api/query`, 'POST', auth, { sql: `EXPLAIN ${sql}` });
  if (answer.status !== 200) return `EXPLAIN answered HTTP ${answer.status}: ${text(answer).slice(0, 300)}`;
  return JSON.parse(text(answer)) as unknown[][];
}

interface QueryReport {
  query: Query;
  local: Outcome;
  vdb: Outcome;
  fdw: Outcome | null;
  /** Null when vdb's answer is PostgreSQL's; else the difference (or why it could not be compared). */
  vdbDiff: string | null;
  fdwDiff: string | null;
  statements: SourceStatement[] | string;
}

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const med = (o: Outcome | null) => (o && o.error === null && o.ms.length > 0 ? median(o.ms) : null);
const geomean = (values: number[]) => (values.length === 0 ? null : Math.exp(values.reduce((a, v) => a + Math.log(v), 0) / values.length));

async function main(): Promise<void> {
  const started = performance.now();
  log(`TPC-H sf=${SF}: data set-up (reused when present and identical) ...`);
  const loaded: Loaded = await load(SF, 'tpch');
  const where = loaded.layout;
  const conn = connections();
  const client = new pg.Client({ ...conn.pg, application_name: 'vdb-tpch' });
  await client.connect();
  await client.query(`SET statement_timeout = ${Math.round(TIMEOUT_MS)}`);

  log(`starting vdb (${path.relative(ROOT, CLI)} serve) ...`);
  const server = await startVdb({ demo: false, env: { VDB_QUERY_TIMEOUT_MS: String(TIMEOUT_MS) } });
  const reports: QueryReport[] = [];
  try {
    const auth = await login(server);
    for (const body of sourceBodies(where, conn)) {
      const answer = await request(`${server.url}/rest/api/source`, 'POST', auth, body);
      if (answer.status !== 201) throw new Error(`adding source ${body.name}: HTTP ${answer.status}: ${text(answer).slice(0, 300)}`);
    }
    const local = schemaNames(where.local);
    const fdw = schemaNames(where.fdw);
    const through = vdbNames('pg', 'my');
    for (const query of QUERIES) {
      if (ONLY && !ONLY.has(query.number)) continue;
      log(`Q${query.number} ...`);
      const padded = { columns: [] as number[] };
      const localOutcome = await timed(pgRunner(client, query.sql(local, SF), padded));
      const explain = await vdbExplain(server, auth, query.sql(through, SF));
      const statements = typeof explain === 'string' ? explain : sourceStatements(explain, where.prefix, SF);
      const vdbOutcome = await timed(vdbRunner(server, auth, query.sql(through, SF)));
      let fdwOutcome: Outcome | null = null;
      if (loaded.fdwSkipped === null) fdwOutcome = await timed(pgRunner(client, query.sql(fdw, SF), { columns: [] }));
      const diff = (o: Outcome | null) => {
        if (!o) return null;
        if (localOutcome.rows === null) return `no PostgreSQL answer to compare with (${localOutcome.error})`;
        if (o.rows === null) return `no answer: ${o.error}`;
        return difference(unpad(localOutcome.rows, padded.columns), unpad(o.rows, padded.columns), query.order);
      };
      const report: QueryReport = {
        query,
        local: localOutcome,
        vdb: vdbOutcome,
        fdw: fdwOutcome,
        vdbDiff: vdbOutcome.error ? `refused or failed: ${vdbOutcome.error}` : diff(vdbOutcome),
        fdwDiff: fdwOutcome?.error ? `failed: ${fdwOutcome.error}` : diff(fdwOutcome),
        statements,
      };
      reports.push(report);
      log(
        `  local ${fmt(med(localOutcome) ?? NaN)} ms, vdb ${fmt(med(vdbOutcome) ?? NaN)} ms${fdwOutcome ? `, fdw ${fmt(med(fdwOutcome) ?? NaN)} ms` : ''}` +
          `; vdb answer ${report.vdbDiff === null ? 'equal' : `DIFFERS: ${report.vdbDiff}`}`,
      );
    }
  } finally {
    await server.stop();
    await client.end();
    agent.destroy();
  }
  process.stdout.write(`\n${render(reports, loaded)}\n`);
  process.stdout.write(
    `\n${RUNS} timed runs after a warm-up (1 when the warm-up took over ${SLOW_MS} ms), median ms.` +
      `\nNode ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${os.platform()} ${os.arch()}.` +
      `\ntotal bench time ${fmt((performance.now() - started) / 1000)} s\n`,
  );
  if (reports.some((r) => r.vdbDiff !== null && r.vdb.error === null)) process.exitCode = 1;
}

function render(reports: QueryReport[], loaded: Loaded): string {
  const out: string[] = [];
  const withFdw = loaded.fdwSkipped === null;
  const rows = reports.map((r) => {
    const local = med(r.local);
    const vdb = med(r.vdb);
    const fdw = med(r.fdw);
    const reads = typeof r.statements === 'string' ? '?' : String(r.statements.filter((s) => s.unconditioned.length > 0).length);
    const answer = r.vdb.error ? 'refused' : r.vdbDiff === null ? 'equal' : 'DIFFERS';
    return [
      `Q${r.query.number}`,
      r.local.rows ? String(r.local.rows.length) : '-',
      local === null ? 'error' : fmt(local),
      vdb === null ? (r.vdb.error ? 'error' : '-') : fmt(vdb),
      ...(withFdw ? [fdw === null ? (r.fdw?.error ? 'error' : '-') : fmt(fdw)] : []),
      vdb !== null && local !== null ? `${fmt(vdb / local, 2)}x` : '-',
      ...(withFdw ? [vdb !== null && fdw !== null ? `${fmt(vdb / fdw, 2)}x` : '-'] : []),
      answer,
      ...(withFdw ? [r.fdw?.error ? 'error' : r.fdwDiff === null ? 'equal' : 'differs'] : []),
      reads,
    ];
  });
  const both = reports.filter((r) => med(r.vdb) !== null && med(r.local) !== null && (!withFdw || med(r.fdw) !== null));
  const gm = (pick: (r: QueryReport) => number) => geomean(both.map(pick));
  const g = {
    local: gm((r) => med(r.local)!),
    vdb: gm((r) => med(r.vdb)!),
    fdw: withFdw ? gm((r) => med(r.fdw)!) : null,
  };
  rows.push([
    `geo. mean (${both.length})`,
    '',
    g.local === null ? '-' : fmt(g.local),
    g.vdb === null ? '-' : fmt(g.vdb),
    ...(withFdw ? [g.fdw === null ? '-' : fmt(g.fdw)] : []),
    g.vdb !== null && g.local !== null ? `${fmt(g.vdb / g.local, 2)}x` : '-',
    ...(withFdw ? [g.vdb !== null && g.fdw !== null ? `${fmt(g.vdb / g.fdw, 2)}x` : '-'] : []),
    '',
    ...(withFdw ? [''] : []),
    '',
  ]);
  out.push(
    `TPC-H sf=${SF}: vdb (pg: ${loaded.layout.prefix} in PostgreSQL, my: ${loaded.layout.prefix} in MariaDB) against PostgreSQL all-local` +
      `${withFdw ? ' and PostgreSQL + mysql_fdw' : ` (mysql_fdw skipped: ${loaded.fdwSkipped})`}\n` +
      table(
        [
          'query',
          'rows',
          'all-local ms',
          'vdb ms',
          ...(withFdw ? ['mysql_fdw ms'] : []),
          'vdb ÷ local',
          ...(withFdw ? ['vdb ÷ fdw'] : []),
          'vdb answer',
          ...(withFdw ? ['fdw answer'] : []),
          'whole reads',
        ],
        rows,
      ),
  );
  out.push(
    `"whole reads": source queries of vdb's EXPLAIN reading a table of over ${fmt(fullReadThreshold(SF), 0)} rows with no WHERE and no dependent-join keys.`,
  );
  const differing = reports.filter((r) => r.vdbDiff !== null);
  if (differing.length > 0) {
    out.push(
      `vdb's answers that are not PostgreSQL's (refused or different):\n` +
        differing.map((r) => `  Q${r.query.number}: ${r.vdbDiff!.replace(/\n/g, '\n    ')}`).join('\n'),
    );
  }
  const fdwDiffering = reports.filter((r) => r.fdw && r.fdwDiff !== null);
  if (fdwDiffering.length > 0) {
    out.push(
      `mysql_fdw's answers that are not PostgreSQL all-local's:\n` +
        fdwDiffering.map((r) => `  Q${r.query.number}: ${r.fdwDiff!.replace(/\n/g, '\n    ')}`).join('\n'),
    );
  }
  out.push(
    `statements vdb's EXPLAIN sends the sources:\n` +
      reports
        .map((r) => `  Q${r.query.number}:\n${typeof r.statements === 'string' ? `    ${r.statements}` : formatStatements(r.statements)}`)
        .join('\n'),
  );
  return out.join('\n\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
