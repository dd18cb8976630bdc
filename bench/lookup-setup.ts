/**
 * What the small-request benchmarks share (point-lookup.ts, cursor-pages.ts, cluster.ts): the 1M-row
 * PostgreSQL table they read, the source `pg` over it, child processes, and the load generator run
 * in a process of its own.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { LoadResult, LoadSpec } from './load.js';
import { BASIC, expectStatus, request } from './vdb-server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Seconds of the same load before each measured row, not measured (JIT, pools, prepared statements). */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 2);
export const log = (line: string) => process.stderr.write(`${line}\n`);
export const ROWS = 1_000_000;

/** The table both sides read: created once (1M rows, primary key), kept for later runs. */
export async function ensureTable(): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', user: 'postgres', database: 'test' });
  await client.connect();
  try {
    const exists = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'bench_lookup'");
    if (exists.rows[0]?.n === '1') {
      const count = await client.query<{ n: string }>('SELECT count(*) AS n FROM bench_lookup');
      if (Number(count.rows[0]?.n) === ROWS) return;
      await client.query('DROP TABLE bench_lookup');
    }
    log(`creating bench_lookup (${ROWS} rows)...`);
    await client.query(`CREATE TABLE bench_lookup AS
      SELECT g::bigint AS id, (g % 100000)::int AS customer_id, round((g % 10000) * 1.37, 2)::numeric(12,2) AS amount,
             (ARRAY['open','paid','void'])[1 + g % 3] AS status, timestamp '2025-01-01' + g * interval '1 minute' AS created
      FROM generate_series(1, ${ROWS}) g`);
    await client.query('ALTER TABLE bench_lookup ADD PRIMARY KEY (id)');
    await client.query('ANALYZE bench_lookup');
  } finally {
    await client.end();
  }
}

/**
 * The same table in MariaDB (database test, `bench_lookup_my`) and in a SQLite file under
 * `folder` (`bench_lookup.sqlite`), for the lookups of statements those sources run whole.
 * Created once, kept for later runs (BENCH_DROP_ROW_TABLES=1 after a run drops the MariaDB one).
 */
export async function ensureRowTables(folder: string): Promise<string> {
  const my = await mysql.createConnection({ host: '127.0.0.1', user: 'root', database: 'test', multipleStatements: true });
  try {
    const [found] = await my.query<mysql.RowDataPacket[]>(
      "SELECT count(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test' AND TABLE_NAME = 'bench_lookup_my'",
    );
    const exists = Number(found[0]?.n) === 1;
    const [counted] = exists ? await my.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM bench_lookup_my') : [[{ n: 0 }]];
    if (Number((counted as mysql.RowDataPacket[])[0]?.n) !== ROWS) {
      log(`creating MariaDB bench_lookup_my (${ROWS} rows)...`);
      await my.query(`DROP TABLE IF EXISTS bench_lookup_my;
        CREATE TABLE bench_lookup_my (id bigint PRIMARY KEY, customer_id int, amount decimal(12,2), status varchar(10), created datetime) ENGINE=InnoDB;
        INSERT INTO bench_lookup_my SELECT seq, seq % 100000, round((seq % 10000) * 1.37, 2), ELT(1 + seq % 3, 'open', 'paid', 'void'),
          TIMESTAMP '2025-01-01 00:00:00' + INTERVAL seq MINUTE FROM seq_1_to_${ROWS};
        ANALYZE TABLE bench_lookup_my;`);
    }
  } finally {
    await my.end();
  }
  fs.mkdirSync(folder, { recursive: true });
  const file = path.join(folder, 'bench_lookup.sqlite');
  const db = new Database(file);
  try {
    const exists = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'bench_lookup'").get() as { n: number };
    if (exists.n === 0 || (db.prepare('SELECT count(*) AS n FROM bench_lookup').get() as { n: number }).n !== ROWS) {
      log(`creating SQLite bench_lookup (${ROWS} rows)...`);
      db.exec(`DROP TABLE IF EXISTS bench_lookup;
        CREATE TABLE bench_lookup (id INTEGER PRIMARY KEY, customer_id INTEGER, amount DECIMAL(12,2), status TEXT, created DATETIME);
        WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${ROWS})
        INSERT INTO bench_lookup SELECT n, n % 100000, printf('%.2f', (n % 10000) * 1.37), CASE n % 3 WHEN 0 THEN 'open' WHEN 1 THEN 'paid' ELSE 'void' END,
          datetime('2025-01-01', '+' || n || ' minutes') FROM g;`);
    }
  } finally {
    db.close();
  }
  return file;
}

/** Drops the MariaDB table of `ensureRowTables` (the SQLite file lives in a folder of the run). */
export async function dropRowTables(): Promise<void> {
  const my = await mysql.createConnection({ host: '127.0.0.1', user: 'root', database: 'test' });
  try {
    await my.query('DROP TABLE IF EXISTS bench_lookup_my');
  } finally {
    await my.end();
  }
}

/** Adds the MariaDB source `my` and the SQLite source `lite` (the file of `ensureRowTables`) to the vdb at `url`. */
export async function addRowSources(url: string, sqliteFile: string): Promise<void> {
  const my = await request(`${url}/rest/api/source`, 'POST', BASIC, {
    name: 'my',
    template: 'mysql',
    connectionProps: 'host=127.0.0.1,port=3306,db=test,user-name=root',
  });
  expectStatus(my, 201, `adding the MariaDB source at ${url}`);
  const lite = await request(`${url}/rest/api/source`, 'POST', BASIC, {
    name: 'lite',
    template: 'sqlite',
    connectionProps: `path=${sqliteFile}`,
  });
  expectStatus(lite, 201, `adding the SQLite source at ${url}`);
}

/** Runs a child process until it prints a line matching `ready` (servers) or exits (loads). */
export function child(args: string[], ready?: RegExp): Promise<{ line: string; pid: number; stop: () => void }> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    process_.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = ready?.exec(output);
      if (match) resolve({ line: match[0], pid: process_.pid!, stop: () => process_.kill('SIGTERM') });
    });
    process_.once('exit', (code) => {
      if (ready) reject(new Error(`${args[0]} exited with ${code}: ${output}`));
      else if (code === 0) resolve({ line: output.trim().split('\n').pop() ?? '', pid: 0, stop: () => undefined });
      else reject(new Error(`${args[0]} exited with ${code}: ${output}`));
    });
  });
}

export async function load(spec: Omit<LoadSpec, 'connections' | 'seconds'>, seconds = SECONDS): Promise<LoadResult> {
  const { line } = await child([path.join(HERE, 'load.js'), JSON.stringify({ ...spec, connections: CONNECTIONS, seconds })]);
  return JSON.parse(line) as LoadResult;
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (Linux; 0 elsewhere).
 * Per request, it tells what a server costs whatever else the machine runs at the time.
 */
export function cpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ", in clock ticks.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
const TICKS_PER_SECOND = 100;

/** Adds the PostgreSQL source `pg` (database test, where the table lives) to the vdb at `url`. */
export async function addLookupSource(url: string): Promise<void> {
  const added = await request(`${url}/rest/api/source`, 'POST', BASIC, {
    name: 'pg',
    template: 'postgresql',
    connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
  });
  expectStatus(added, 201, `adding the PostgreSQL source at ${url}`);
}
