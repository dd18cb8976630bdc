/**
 * Benchmark: vdb over real databases, side by side with the direct alternatives.
 *
 *   (a) `SELECT * FROM pg.bench_orders` (1,000,000 rows from PostgreSQL) through
 *       POST /rest/api/query, against the `pg` driver (rowMode 'array'; default type parsers, a
 *       text passthrough parser, default parsers + JSON.stringify) and COPY ... TO STDOUT
 *       (pg-copy-streams) read in the same client.
 *   (b) A join of PostgreSQL `bench_orders` (1M rows) with MariaDB `bench_customers` (100k rows),
 *       grouped by country, through vdb, against PostgreSQL + mysql_fdw running the same join,
 *       DuckDB over local Parquet copies of both tables, and (a reference, not a peer) the
 *       dependent join + partial aggregation plan written by hand. The answers are compared.
 *       vdb's EXPLAIN of the join and the statements its sources received are printed.
 *
 *   npm run build && node dist/bench/federation.js
 *   BENCH_RUNS=5 node dist/bench/federation.js        (timed runs, default 3, after 1 warm-up)
 *   BENCH_FDW=off node dist/bench/federation.js       (leave the mysql_fdw peer out)
 *
 * Prints figures and ratios; never asserts on timings. Data: bench/federation-data.ts (set up
 * on the first run, reused afterwards). mysql_fdw (Debian package postgresql-15-mysql-fdw) is
 * optional: without it that peer is skipped with a message. See bench/README.md.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { CUSTOMERS_ROWS, ORDERS_ROWS, setUpData, type MySettings } from './federation-data.js';
import { addSqlSources, agent, CLI, expectStatus, login, request, ROOT, startVdb, text, type Auth, type VdbServer } from './vdb-server.js';
import { median, table, type Measured, type RunResult } from './measure.js';

const WARMUP = 1;
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3) || 3);

const SELECT_ALL = 'SELECT * FROM bench_orders';
const joinSql = (orders: string, customers: string) =>
  `SELECT c.country, count(*), sum(o.amount) FROM ${orders} o JOIN ${customers} c ON c.id = o.customer_id ` +
  `WHERE c.segment = 'enterprise' AND o.created >= DATE '2025-01-01' GROUP BY c.country`;
const VDB_JOIN = joinSql('pg.bench_orders', 'my.bench_customers');
const FDW_SCHEMA = 'bench_fdw';
const FDW_SERVER = 'bench_mysql';

const log = (message: string) => process.stderr.write(`${message}\n`);

// ---------------------------------------------------------------------------------------------
// Measurement

const medianMs = (m: Measured) => median(m.runs.map((r) => r.ms));

interface Bench {
  run: () => Promise<RunResult>;
  /** Called once after the timed runs, outside the timing: checks the last run's output. */
  verify: () => void | Promise<void>;
}

async function measure(name: string, bench: Bench): Promise<Measured> {
  log(`  ${name} ...`);
  for (let i = 0; i < WARMUP; i++) await bench.run();
  const runs: RunResult[] = [];
  for (let i = 0; i < RUNS; i++) {
    // A collection of the previous run's garbage should not land inside this one.
    if (typeof global.gc === 'function') global.gc();
    runs.push(await bench.run());
  }
  await bench.verify();
  const measured = { name, runs };
  log(`    median ${medianMs(measured).toFixed(1)} ms`);
  return measured;
}

// ---------------------------------------------------------------------------------------------
// vdb over HTTP (as in query-100k.ts)

/** Adds the two sources through POST /rest/api/source: `pg` (PostgreSQL) and `my` (MariaDB). */
/** A statement whose (small) answer is wanted as rows of arrays. */
/** A user who may read pg and my, and of my.bench_customers only the enterprise customers. */
async function restrictedReader(server: VdbServer, admin: Auth): Promise<Auth> {
  const password = 'bench-reader-password-1';
  for (const sql of [
    `CALL SYSADMIN.addUser('bench_reader', '${password}')`,
    `CALL SYSADMIN.addRole('bench_enterprise')`,
    `CALL SYSADMIN.addUserRole('bench_enterprise', 'bench_reader')`,
    `CALL SYSADMIN.setPermissions('bench_enterprise', 'pg', 'R')`,
    `CALL SYSADMIN.setPermissions('bench_enterprise', 'my', 'R')`,
    `CALL SYSADMIN.setPermissions('bench_enterprise', 'my.bench_customers', 'R', 'segment = ''enterprise''')`,
  ]) {
    await vdbRows(server, admin, sql);
  }
  return login(server, 'bench_reader', password);
}

async function vdbRows(server: VdbServer, auth: Auth, sql: string): Promise<unknown[][]> {
  const answer = await request(`${server.url}/rest/api/query`, 'POST', auth, { sql });
  expectStatus(answer, 200, sql.slice(0, 60));
  return JSON.parse(text(answer)) as unknown[][];
}

function vdbQuery(server: VdbServer, auth: Auth, sql: string, verify: (rows: unknown[][]) => void): Bench {
  let last: Buffer[] = [];
  return {
    run: async () => {
      const start = performance.now();
      const answer = await request(`${server.url}/rest/api/query`, 'POST', auth, { sql });
      const ms = performance.now() - start;
      expectStatus(answer, 200, `vdb ${sql.slice(0, 40)}`);
      last = answer.body;
      return { ms, bytes: answer.bytes, ttfbMs: answer.ttfbMs };
    },
    verify: () => {
      const rows = JSON.parse(Buffer.concat(last).toString('utf8')) as unknown[][];
      last = [];
      verify(rows);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// (a) 1M rows: pg driver and COPY

function checkOrders(rows: unknown[][], what: string): void {
  if (!Array.isArray(rows) || rows.length !== ORDERS_ROWS) throw new Error(`${what}: expected ${ORDERS_ROWS} rows, got ${rows?.length}`);
  const first = rows[0];
  if (!Array.isArray(first) || first.length !== 5) throw new Error(`${what}: unexpected row shape: ${JSON.stringify(first)}`);
}

type TypeParsers = NonNullable<pg.QueryConfig['types']>;
const TEXT_PASSTHROUGH = { getTypeParser: () => (value: string) => value } as unknown as TypeParsers;

function pgDriver(client: pg.Client, mode: 'default' | 'text' | 'json'): Bench {
  let rows: unknown[][] = [];
  return {
    run: async () => {
      rows = [];
      const start = performance.now();
      const result = await client.query<unknown[]>({
        text: SELECT_ALL,
        rowMode: 'array',
        ...(mode === 'text' ? { types: TEXT_PASSTHROUGH } : {}),
      });
      let bytes = 0;
      if (mode === 'json') bytes = Buffer.byteLength(JSON.stringify(result.rows));
      const ms = performance.now() - start;
      rows = result.rows;
      return { ms, bytes };
    },
    verify: () => {
      checkOrders(rows, `pg driver (${mode})`);
      rows = [];
    },
  };
}

function pgCopy(client: pg.Client): Bench {
  let lines = 0;
  return {
    run: async () => {
      const start = performance.now();
      const stream = client.query(copyTo(`COPY (${SELECT_ALL}) TO STDOUT`));
      let bytes = 0;
      let newlines = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        // Counting lines touches every byte once, as any consumer must; cheap (memchr-like).
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++;
      }
      const ms = performance.now() - start;
      lines = newlines;
      return { ms, bytes };
    },
    verify: () => {
      if (lines !== ORDERS_ROWS) throw new Error(`COPY: expected ${ORDERS_ROWS} lines, got ${lines}`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// (b) the join: mysql_fdw and DuckDB

/** country -> "count|sum" with the sum rounded to cents, for comparing answers. */
type Groups = Map<string, string>;

function groupsOf(rows: unknown[][], what: string): Groups {
  const groups: Groups = new Map();
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== 3) throw new Error(`${what}: unexpected row ${JSON.stringify(row)}`);
    groups.set(String(row[0]), `${Number(row[1])}|${Number(row[2]).toFixed(2)}`);
  }
  if (groups.size === 0) throw new Error(`${what}: no groups`);
  return groups;
}

function sameGroups(a: Groups, b: Groups): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

const sqlString = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * Creates (again) the mysql_fdw server, user mapping and foreign table in schema bench_fdw.
 * Returns null when ready, or why the mysql_fdw peer is skipped. Never throws.
 */
async function setUpFdw(client: pg.Client, my: MySettings): Promise<string | null> {
  if (/^(0|false|no|off)$/i.test(process.env.BENCH_FDW ?? '')) return 'BENCH_FDW=off';
  try {
    const available = await client.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'mysql_fdw'`);
    if (available.rowCount === 0) {
      return 'the mysql_fdw extension is not available in this PostgreSQL (Debian: apt-get install postgresql-15-mysql-fdw)';
    }
    await client.query('BEGIN');
    await client.query('CREATE EXTENSION IF NOT EXISTS mysql_fdw');
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${FDW_SCHEMA}`);
    await client.query(`DROP SERVER IF EXISTS ${FDW_SERVER} CASCADE`);
    await client.query(
      `CREATE SERVER ${FDW_SERVER} FOREIGN DATA WRAPPER mysql_fdw OPTIONS (host ${sqlString(my.host)}, port ${sqlString(String(my.port))})`,
    );
    await client.query(
      `CREATE USER MAPPING FOR CURRENT_USER SERVER ${FDW_SERVER} OPTIONS (username ${sqlString(my.user)}, password ${sqlString(my.password)})`,
    );
    await client.query(
      `CREATE FOREIGN TABLE ${FDW_SCHEMA}.bench_customers (id int, name varchar(100), country char(2), segment varchar(20))
         SERVER ${FDW_SERVER} OPTIONS (dbname ${sqlString(my.database)}, table_name 'bench_customers')`,
    );
    await client.query('COMMIT');
    const count = await client.query(`SELECT count(*)::int AS n FROM ${FDW_SCHEMA}.bench_customers`);
    if (count.rows[0].n !== CUSTOMERS_ROWS) return `mysql_fdw answers ${count.rows[0].n} customers, expected ${CUSTOMERS_ROWS}`;
    return null;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    return `mysql_fdw could not be set up: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function pgJoin(client: pg.Client, sql: string, onRows: (rows: unknown[][]) => void): Bench {
  let last: unknown[][] = [];
  return {
    run: async () => {
      const start = performance.now();
      const result = await client.query<unknown[]>({ text: sql, rowMode: 'array' });
      const ms = performance.now() - start;
      last = result.rows;
      return { ms, bytes: 0 };
    },
    verify: () => onRows(last),
  };
}

function duckJoin(connection: DuckDBConnection, sql: string, onRows: (rows: unknown[][]) => void): Bench {
  let last: unknown[][] = [];
  return {
    run: async () => {
      const start = performance.now();
      const reader = await connection.runAndReadAll(sql);
      last = reader.getRowsJS() as unknown[][];
      const ms = performance.now() - start;
      return { ms, bytes: 0 };
    },
    verify: () => onRows(last),
  };
}

/** The EXPLAIN rows, one step a line and its SQL indented below. */
function formatExplain(rows: unknown[][]): string {
  return rows
    .map((r) => {
      const [step, location, operation, object, pushed, sql] = r.map((v) => (v === null || v === undefined ? '' : String(v)));
      const head = `  ${step}. ${location} | ${operation} | ${object}${pushed ? ` | pushed: ${pushed}` : ''}`;
      return `${head}\n${sql!.replace(/\s+/g, ' ').trim().replace(/^/, '       ')}`;
    })
    .join('\n');
}

/**
 * How many rows each source query of the EXPLAIN sends: the same statement wrapped in
 * count(*), run directly on the source (outside any timing).
 */
async function rowsMoved(explainRows: unknown[][], client: pg.Client, my: MySettings): Promise<string[]> {
  const out: string[] = [];
  for (const row of explainRows) {
    if (row[2] !== 'source query') continue;
    const source = String(row[1]);
    const sql = String(row[5]);
    try {
      if (source === 'pg') {
        const inner = /^COPY \((.*)\) TO STDOUT$/s.exec(sql)?.[1] ?? sql;
        const result = await client.query(`SELECT count(*)::bigint AS n FROM (${inner}) AS q`);
        out.push(`pg ${Number(result.rows[0].n).toLocaleString('en-US')} of ${ORDERS_ROWS.toLocaleString('en-US')}`);
      } else if (source === 'my') {
        const connection = await mysql.createConnection({ ...my });
        try {
          const [result] = await connection.query<mysql.RowDataPacket[]>(`SELECT count(*) AS n FROM (${sql}) AS q`);
          out.push(`my ${Number(result[0]!.n).toLocaleString('en-US')} of ${CUSTOMERS_ROWS.toLocaleString('en-US')}`);
        } finally {
          await connection.end();
        }
      }
    } catch (err) {
      out.push(`${source}: (not counted: ${err instanceof Error ? err.message : String(err)})`);
    }
  }
  return out;
}

/**
 * Reference, not a peer: the plan the issue asks vdb for, written by hand in this client. The
 * enterprise customers (id, country) come from MariaDB; their ids go to PostgreSQL as one
 * `customer_id = ANY('{...}')` (a dependent join, here a single batch) with the date condition,
 * and PostgreSQL groups by customer_id (partial aggregation below the join); the final join and
 * grouping by country of the ~23k partial rows happen in JS. What the best plan costs here.
 */
function handPlan(client: pg.Client, my: mysql.Connection, onRows: (rows: unknown[][]) => void): Bench {
  let last: unknown[][] = [];
  return {
    run: async () => {
      const start = performance.now();
      const [customers] = await my.query<mysql.RowDataPacket[]>({
        sql: `SELECT id, country FROM bench_customers WHERE segment = 'enterprise'`,
        rowsAsArray: true,
      });
      const countryOf = new Map<number, string>();
      for (const row of customers as unknown as Array<[number, string]>) countryOf.set(row[0], row[1]);
      const ids = `{${[...countryOf.keys()].join(',')}}`;
      const partial = await client.query<[number, string, string]>({
        text:
          `SELECT customer_id, count(*), sum(amount) FROM bench_orders ` +
          `WHERE created >= DATE '2025-01-01' AND customer_id = ANY('${ids}'::int[]) GROUP BY customer_id`,
        rowMode: 'array',
      });
      const groups = new Map<string, { count: number; cents: number }>();
      for (const [customerId, count, sum] of partial.rows) {
        const country = countryOf.get(customerId);
        if (country === undefined) continue;
        const group = groups.get(country) ?? { count: 0, cents: 0 };
        group.count += Number(count);
        group.cents += Math.round(Number(sum) * 100);
        groups.set(country, group);
      }
      last = [...groups].map(([country, g]) => [country, g.count, (g.cents / 100).toFixed(2)]);
      const ms = performance.now() - start;
      return { ms, bytes: 0 };
    },
    verify: () => onRows(last),
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function report(
  title: string,
  results: Measured[],
  rowCount: number | null,
  baselines: Array<{ label: string; of: Measured | null }>,
): string {
  const headers = [title, 'median ms', 'min ms', 'TTFB ms', ...(rowCount ? ['rows/s', 'MB'] : []), ...baselines.map((b) => `÷ ${b.label}`)];
  const rows = results.map((r) => {
    const med = medianMs(r);
    const bytes = median(r.runs.map((x) => x.bytes));
    const ttfb = r.runs[0]!.ttfbMs === undefined ? '-' : fmt(median(r.runs.map((x) => x.ttfbMs!)));
    return [
      r.name,
      fmt(med),
      fmt(Math.min(...r.runs.map((x) => x.ms))),
      ttfb,
      ...(rowCount ? [fmt((rowCount / med) * 1000, 0), bytes > 0 ? fmt(bytes / 1e6, 1) : '-'] : []),
      ...baselines.map((b) => (b.of ? `${fmt(med / medianMs(b.of), 2)}x` : '-')),
    ];
  });
  return table(headers, rows);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  log('data set-up (reused when present and identical) ...');
  const data = await setUpData();

  const client = new pg.Client({ ...data.pg, application_name: 'vdb-bench' });
  await client.connect();
  log('mysql_fdw set-up ...');
  let fdwSkipped = await setUpFdw(client, data.my);
  if (fdwSkipped) log(`SKIPPING the mysql_fdw peer: ${fdwSkipped}`);

  log(`starting vdb (${path.relative(ROOT, CLI)} serve) ...`);
  const server = await startVdb({ demo: false });
  let instance: DuckDBInstance | null = null;
  let duck: DuckDBConnection | null = null;
  const partA: Measured[] = [];
  const partB: Measured[] = [];
  let vdbA: Measured | null = null;
  let driverA: Measured | null = null;
  let copyA: Measured | null = null;
  let vdbB: Measured | null = null;
  let fdwB: Measured | null = null;
  let duckB: Measured | null = null;
  const notes: string[] = [];
  let explainRows: unknown[][] = [];
  let explainA: unknown[][] = [];
  let loggedSourceQueries = '';
  let fdwPlan = '';
  let sampleRow = '';
  let groupsTable = '';
  let moved: string[] = [];
  try {
    const auth = await login(server);
    await addSqlSources(server, auth, data);
    log(`vdb at ${server.url}; sources pg (PostgreSQL) and my (MariaDB) added`);

    // (a) ---------------------------------------------------------------------------------
    log(`(a) ${ORDERS_ROWS.toLocaleString('en-US')} rows: ${SELECT_ALL}; ${WARMUP} warm-up + ${RUNS} timed runs each`);
    explainA = await vdbRows(server, auth, 'EXPLAIN SELECT * FROM pg.bench_orders');
    vdbA = await measure(
      'vdb  POST /rest/api/query',
      vdbQuery(server, auth, `SELECT * FROM pg.bench_orders`, (rows) => {
        checkOrders(rows, 'vdb');
        sampleRow = JSON.stringify(rows.find((r) => Number(r[0]) === 1));
      }),
    );
    partA.push(vdbA);
    driverA = await measure("pg driver, rowMode 'array', default parsers", pgDriver(client, 'default'));
    partA.push(driverA);
    partA.push(await measure("pg driver, rowMode 'array', text passthrough", pgDriver(client, 'text')));
    partA.push(await measure('pg driver, default parsers + JSON.stringify', pgDriver(client, 'json')));
    copyA = await measure('pg COPY (SELECT ...) TO STDOUT, text', pgCopy(client));
    partA.push(copyA);

    // (b) ---------------------------------------------------------------------------------
    log(`(b) join PostgreSQL bench_orders x MariaDB bench_customers`);
    instance = await DuckDBInstance.create(':memory:');
    duck = await instance.connect();
    await duck.run(`CREATE VIEW bench_orders AS SELECT * FROM read_parquet(${sqlString(data.ordersParquet)})`);
    await duck.run(`CREATE VIEW bench_customers AS SELECT * FROM read_parquet(${sqlString(data.customersParquet)})`);
    const answers: Array<{ name: string; groups: Groups }> = [];
    const keep = (name: string) => (rows: unknown[][]) => void answers.push({ name, groups: groupsOf(rows, name) });

    explainRows = await vdbRows(server, auth, `EXPLAIN ${VDB_JOIN}`);
    vdbB = await measure('vdb  POST /rest/api/query (pg x my)', vdbQuery(server, auth, VDB_JOIN, keep('vdb')));
    partB.push(vdbB);
    const logged = await vdbRows(
      server,
      auth,
      `SELECT "SourceQueries", "DurationMs", "RowCount" FROM SYSLOG."QueryLog" WHERE "Statement" = ${sqlString(VDB_JOIN)} AND "Status" = 'ok' ORDER BY "ID" DESC LIMIT 1`,
    ).catch((err: unknown) => [[`(query log not readable: ${(err as Error).message})`]]);
    // Array literals of shipped rows run to hundreds of kilobytes: shown by their length.
    loggedSourceQueries = String(logged[0]?.[0] ?? '(none logged)').replace(
      /'\{[^']{200,}\}'/g,
      (text) => `'{<${text.length - 4} characters>}'`,
    );
    moved = await rowsMoved(explainRows, client, data.my);

    // The same statement by a user whose permission carries a row condition on the customers
    // (the statement's own segment filter, so the answer is the same): the cost of row security.
    const reader = await restrictedReader(server, auth);
    partB.push(await measure('vdb  (pg x my), user with a row condition', vdbQuery(server, reader, VDB_JOIN, keep('vdb, row condition'))));

    if (!fdwSkipped) {
      // mysql_fdw must never make the bench fail: an error here drops that peer with a message.
      const fdwJoin = joinSql('public.bench_orders', `${FDW_SCHEMA}.bench_customers`);
      try {
        fdwB = await measure('PostgreSQL + mysql_fdw', pgJoin(client, fdwJoin, keep('mysql_fdw')));
        partB.push(fdwB);
        const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (VERBOSE, COSTS OFF) ${fdwJoin}`);
        fdwPlan = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      } catch (err) {
        const reason = `the mysql_fdw join failed: ${err instanceof Error ? err.message : String(err)}`;
        log(`mysql_fdw peer: ${reason}`);
        if (fdwB === null) fdwSkipped = reason;
        else fdwPlan = `(not available: ${reason})`;
        await client.query('ROLLBACK').catch(() => undefined);
      }
    }
    duckB = await measure('DuckDB over local Parquet copies', duckJoin(duck, joinSql('bench_orders', 'bench_customers'), keep('duckdb')));
    partB.push(duckB);
    const myConnection = await mysql.createConnection({ ...data.my });
    try {
      partB.push(
        await measure('reference: hand-written dependent join + partial agg.', handPlan(client, myConnection, keep('hand-written plan'))),
      );
    } finally {
      await myConnection.end();
    }

    const reference = answers[0]!;
    for (const other of answers.slice(1)) {
      if (!sameGroups(reference.groups, other.groups)) {
        throw new Error(
          `the join answers differ: ${reference.name} ${JSON.stringify([...reference.groups])} vs ${other.name} ${JSON.stringify([...other.groups])}`,
        );
      }
    }
    notes.push(
      `join answers identical (${answers.map((a) => a.name).join(', ')}): ${reference.groups.size} groups, count and sum rounded to cents`,
    );
    groupsTable = table(
      ['country', 'count', 'sum(amount)'],
      [...reference.groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, ...v.split('|')]),
    );
  } finally {
    duck?.closeSync();
    instance?.closeSync();
    await server.stop();
    await client.end();
    agent.destroy();
  }

  const out: string[] = [];
  out.push(
    report(`(a) ${ORDERS_ROWS.toLocaleString('en-US')} rows from PostgreSQL`, partA, ORDERS_ROWS, [
      { label: 'pg driver', of: driverA },
      { label: 'COPY', of: copyA },
    ]),
  );
  out.push(`vdb row id=1 as JSON: ${sampleRow}`);
  out.push(`vdb EXPLAIN SELECT * FROM pg.bench_orders:\n${formatExplain(explainA)}`);
  out.push(
    report('(b) join PostgreSQL x MariaDB', partB, null, [
      { label: 'mysql_fdw', of: fdwB },
      { label: 'DuckDB Parquet', of: duckB },
    ]),
  );
  if (fdwSkipped) out.push(`mysql_fdw peer skipped: ${fdwSkipped}`);
  out.push(...notes);
  out.push(groupsTable);

  const ratio = (a: Measured | null, b: Measured | null) => (a && b ? medianMs(a) / medianMs(b) : null);
  const targetA = ratio(vdbA, driverA);
  const targetB = ratio(vdbB, fdwB);
  out.push(
    [
      'targets:',
      `  (a) vdb / pg driver = ${targetA === null ? '-' : `${fmt(targetA, 2)}x`} (target <= 1.0x: ${targetA === null ? '-' : targetA <= 1 ? 'met' : 'not met'})`,
      `  (b) vdb / mysql_fdw = ${targetB === null ? '- (mysql_fdw skipped)' : `${fmt(targetB, 2)}x (target <= 0.5x: ${targetB <= 0.5 ? 'met' : 'not met'})`}`,
    ].join('\n'),
  );
  out.push(`vdb EXPLAIN of the join (Step | Location | Operation | Object | Pushed, then SQL):\n${formatExplain(explainRows)}`);
  out.push(`statements vdb's sources received for the join (SYSLOG.QueryLog):\n${loggedSourceQueries.replace(/^/gm, '  ')}`);
  if (moved.length > 0) out.push(`rows the sources sent to vdb for the join: ${moved.join('; ')}`);
  if (fdwPlan) out.push(`PostgreSQL + mysql_fdw plan (EXPLAIN VERBOSE, COSTS OFF):\n${fdwPlan.replace(/^/gm, '  ')}`);
  out.push(
    `${WARMUP} warm-up + ${RUNS} timed runs each; MB = 10^6 bytes received (vdb: JSON body; COPY: text) or produced (JSON.stringify).` +
      `\n"÷ x" = this row's median / the median of x: below 1 is faster than x.` +
      `\nNode ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${os.platform()} ${os.arch()}.` +
      `\ntotal bench time ${fmt((performance.now() - started) / 1000)} s`,
  );
  process.stdout.write(`\n${out.join('\n\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
