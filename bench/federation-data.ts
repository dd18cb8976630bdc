/**
 * Data of the federation benchmark (bench/federation.ts), set up idempotently:
 *
 *   - PostgreSQL `bench_orders` (id bigint primary key, customer_id int, amount numeric(12,2),
 *     status text, created date): 1,000,000 rows;
 *   - MariaDB `bench_customers` (id int primary key, name varchar(100), country char(2),
 *     segment varchar(20)): 100,000 rows, 25 % segment 'enterprise', 10 countries;
 *   - Parquet copies of both (for DuckDB used directly) in a folder under the OS temp directory.
 *
 * Every value is a function of the row id (generate_series + integer arithmetic: Lehmer-style
 * multiplicative hashes), written once per dialect with the same expressions, so the three copies
 * hold the same data. The DuckDB evaluation of those expressions is the reference: each copy is
 * compared with it by row count and a few checksums (sums over every column) and rebuilt only
 * when it is missing or differs. The tables stay in place for the next run.
 *
 *   node dist/bench/federation-data.js     (after npm run build) sets the data up and exits.
 *
 * Connection settings: BENCH_PG_HOST/PORT/DB/USER/PASSWORD (default 127.0.0.1:5432, test,
 * postgres, no password), BENCH_MY_HOST/PORT/DB/USER/PASSWORD (default 127.0.0.1:3306, test,
 * root, no password), BENCH_PARQUET_DIR (default <tmp>/vdb-bench-federation).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import mysql from 'mysql2/promise';
import pg from 'pg';

export const ORDERS_ROWS = 1_000_000;
export const CUSTOMERS_ROWS = 100_000;

export interface PgSettings {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string | undefined;
}

export interface MySettings {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}

export interface BenchData {
  pg: PgSettings;
  my: MySettings;
  parquetDir: string;
  ordersParquet: string;
  customersParquet: string;
}

const env = process.env;

export function settings(): { pg: PgSettings; my: MySettings; parquetDir: string } {
  return {
    pg: {
      host: env.BENCH_PG_HOST ?? '127.0.0.1',
      port: Number(env.BENCH_PG_PORT ?? 5432),
      database: env.BENCH_PG_DB ?? 'test',
      user: env.BENCH_PG_USER ?? 'postgres',
      password: env.BENCH_PG_PASSWORD || undefined,
    },
    my: {
      host: env.BENCH_MY_HOST ?? '127.0.0.1',
      port: Number(env.BENCH_MY_PORT ?? 3306),
      database: env.BENCH_MY_DB ?? 'test',
      user: env.BENCH_MY_USER ?? 'root',
      password: env.BENCH_MY_PASSWORD ?? '',
    },
    parquetDir: env.BENCH_PARQUET_DIR ?? path.join(os.tmpdir(), 'vdb-bench-federation'),
  };
}

// ---------------------------------------------------------------------------------------------
// The generator: the same expressions in every dialect (only integer *, %, + and CASE).

const hash = (id: string, multiplier: number) => `((${id} * ${multiplier}) % 2147483647)`;

const cases = (expr: string, values: string[]) => `CASE ${expr} ${values.map((v, i) => `WHEN ${i} THEN '${v}'`).join(' ')} END`;

const STATUSES = ['new', 'paid', 'shipped', 'cancelled', 'returned'];
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'CA', 'AU', 'NL'];

const orderExpr = {
  /** 7919 is prime to 100,000: every customer has exactly 10 orders. */
  customerId: (id: string) => `(${id} * 7919) % ${CUSTOMERS_ROWS} + 1`,
  /** Cents 0..99,999, i.e. 0.00..999.99. */
  cents: (id: string) => `(${hash(id, 48271)} % 100000)`,
  status: (id: string) => cases(`${hash(id, 69621)} % 5`, STATUSES),
  /** Days after 2023-01-01: 0..1095, so 2023-01-01..2025-12-31 (a third in 2025). */
  days: (id: string) => `(${hash(id, 16807)} % 1096)`,
};

const customerExpr = {
  name: (id: string) => `concat('Customer ', ${id})`,
  country: (id: string) => cases(`${hash(id, 16807)} % 10`, COUNTRIES),
  segment: (id: string) =>
    `CASE WHEN ${hash(id, 48271)} % 100 < 25 THEN 'enterprise' WHEN ${hash(id, 48271)} % 100 < 60 THEN 'smb' ELSE 'consumer' END`,
};

const PG_CREATE = `CREATE TABLE bench_orders (
  id bigint NOT NULL, customer_id int NOT NULL, amount numeric(12,2) NOT NULL, status text NOT NULL, created date NOT NULL)`;
const PG_FILL = `INSERT INTO bench_orders
  SELECT id, (${orderExpr.customerId('id')})::int, (${orderExpr.cents('id')} / 100.0)::numeric(12,2),
         ${orderExpr.status('id')}, DATE '2023-01-01' + (${orderExpr.days('id')})::int
    FROM generate_series(1::bigint, ${ORDERS_ROWS}) AS g(id)`;

const MY_CREATE = `CREATE TABLE bench_customers (
  id int NOT NULL PRIMARY KEY, name varchar(100) NOT NULL, country char(2) NOT NULL, segment varchar(20) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;
const DIGITS = `(SELECT 0 AS d UNION ALL ${[1, 2, 3, 4, 5, 6, 7, 8, 9].map((d) => `SELECT ${d}`).join(' UNION ALL ')})`;
const MY_FILL = `INSERT INTO bench_customers (id, name, country, segment)
  SELECT id, ${customerExpr.name('id')}, ${customerExpr.country('id')}, ${customerExpr.segment('id')}
    FROM (SELECT d1.d + 10 * d2.d + 100 * d3.d + 1000 * d4.d + 10000 * d5.d + 1 AS id
            FROM ${DIGITS} d1, ${DIGITS} d2, ${DIGITS} d3, ${DIGITS} d4, ${DIGITS} d5) AS g`;

const DUCK_ORDERS = `SELECT CAST(id AS BIGINT) AS id, CAST(${orderExpr.customerId('id')} AS INTEGER) AS customer_id,
       CAST(CAST(${orderExpr.cents('id')} AS DECIMAL(18,0)) * 0.01 AS DECIMAL(12,2)) AS amount,
       ${orderExpr.status('id')} AS status, DATE '2023-01-01' + CAST(${orderExpr.days('id')} AS INTEGER) AS created
  FROM range(1, ${ORDERS_ROWS + 1}) AS g(id)`;
const DUCK_CUSTOMERS = `SELECT CAST(id AS INTEGER) AS id, ${customerExpr.name('id')} AS name,
       ${customerExpr.country('id')} AS country, ${customerExpr.segment('id')} AS segment
  FROM range(1, ${CUSTOMERS_ROWS + 1}) AS g(id)`;

// Checksums: the same SQL in all dialects; results compared as strings.
const ORDERS_CHECK = (from: string) => `SELECT count(*) AS n, sum(id) AS ids, sum(customer_id) AS customers,
  sum(CAST(amount * 100 AS BIGINT)) AS cents, sum(created - DATE '2023-01-01') AS days,
  sum(length(status)) AS status_len, sum(CASE WHEN status = 'paid' THEN id ELSE 0 END) AS paid_ids
  FROM ${from}`;
const CUSTOMERS_CHECK = (from: string) => `SELECT count(*) AS n, sum(id) AS ids, sum(length(name)) AS name_len,
  sum(CASE WHEN segment = 'enterprise' THEN id ELSE 0 END) AS enterprise_ids,
  sum(CASE WHEN segment = 'smb' THEN id ELSE 0 END) AS smb_ids,
  sum(ascii(country) * id) AS country1, sum(ascii(substr(country, 2, 1)) * id) AS country2
  FROM ${from}`;

type Checksum = string[];
const asChecksum = (row: Record<string, unknown> | unknown[] | undefined): Checksum =>
  row === undefined ? [] : Object.values(row).map((v) => (v === null || v === undefined ? 'null' : String(v)));
const same = (a: Checksum, b: Checksum) => a.length === b.length && a.every((v, i) => v === b[i]);

const log = (message: string) => process.stderr.write(`${message}\n`);
const sqlPath = (file: string) => `'${file.replace(/'/g, "''")}'`;

// ---------------------------------------------------------------------------------------------

async function duckChecksum(connection: DuckDBConnection, sql: string): Promise<Checksum> {
  const reader = await connection.runAndReadAll(sql);
  return asChecksum(reader.getRowsJS()[0]);
}

async function setUpPostgres(settings: PgSettings, expected: Checksum): Promise<void> {
  const client = new pg.Client({ ...settings, application_name: 'vdb-bench-setup' });
  await client.connect();
  try {
    const exists = await client.query(`SELECT to_regclass('public.bench_orders') IS NOT NULL AS present`);
    if (exists.rows[0].present) {
      const current = asChecksum((await client.query(ORDERS_CHECK('public.bench_orders'))).rows[0]);
      if (same(current, expected)) {
        log(`PostgreSQL bench_orders: present, ${ORDERS_ROWS.toLocaleString('en-US')} rows, checksums match (reused)`);
        return;
      }
      log(`PostgreSQL bench_orders: present but different (${current.join('/')}), rebuilding`);
    }
    const start = performance.now();
    await client.query('BEGIN');
    await client.query('DROP TABLE IF EXISTS public.bench_orders');
    await client.query(PG_CREATE);
    await client.query(PG_FILL);
    await client.query('ALTER TABLE bench_orders ADD PRIMARY KEY (id)');
    await client.query('COMMIT');
    // Hint bits and visibility map set now, not during the first timed read; planner statistics.
    await client.query('VACUUM (ANALYZE) bench_orders');
    const current = asChecksum((await client.query(ORDERS_CHECK('public.bench_orders'))).rows[0]);
    if (!same(current, expected))
      throw new Error(`PostgreSQL bench_orders differs from the reference: ${current.join('/')} vs ${expected.join('/')}`);
    log(
      `PostgreSQL bench_orders: created ${ORDERS_ROWS.toLocaleString('en-US')} rows in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

async function setUpMariadb(settings: MySettings, expected: Checksum): Promise<void> {
  const connection = await mysql.createConnection({ ...settings, supportBigNumbers: true, bigNumberStrings: true, charset: 'utf8mb4' });
  try {
    const [tables] = await connection.query<mysql.RowDataPacket[]>(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'bench_customers'`,
    );
    if (tables.length > 0) {
      const [rows] = await connection.query<mysql.RowDataPacket[]>(CUSTOMERS_CHECK('bench_customers'));
      const current = asChecksum(rows[0]);
      if (same(current, expected)) {
        log(`MariaDB bench_customers: present, ${CUSTOMERS_ROWS.toLocaleString('en-US')} rows, checksums match (reused)`);
        return;
      }
      log(`MariaDB bench_customers: present but different (${current.join('/')}), rebuilding`);
    }
    const start = performance.now();
    await connection.query('DROP TABLE IF EXISTS bench_customers');
    await connection.query(MY_CREATE);
    await connection.query(MY_FILL);
    await connection.query('ANALYZE TABLE bench_customers');
    const [rows] = await connection.query<mysql.RowDataPacket[]>(CUSTOMERS_CHECK('bench_customers'));
    const current = asChecksum(rows[0]);
    if (!same(current, expected))
      throw new Error(`MariaDB bench_customers differs from the reference: ${current.join('/')} vs ${expected.join('/')}`);
    log(
      `MariaDB bench_customers: created ${CUSTOMERS_ROWS.toLocaleString('en-US')} rows in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
  } finally {
    await connection.end();
  }
}

/** Creates or checks everything; returns where the Parquet copies are. */
export async function setUpData(): Promise<BenchData> {
  const { pg: pgSettings, my, parquetDir } = settings();
  const ordersParquet = path.join(parquetDir, 'bench_orders.parquet');
  const customersParquet = path.join(parquetDir, 'bench_customers.parquet');
  fs.mkdirSync(parquetDir, { recursive: true });

  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const expectedOrders = await duckChecksum(connection, ORDERS_CHECK(`(${DUCK_ORDERS}) AS o`));
    const expectedCustomers = await duckChecksum(connection, CUSTOMERS_CHECK(`(${DUCK_CUSTOMERS}) AS c`));
    if (expectedOrders[0] !== String(ORDERS_ROWS) || expectedCustomers[0] !== String(CUSTOMERS_ROWS)) {
      throw new Error('the reference generator produced the wrong row counts');
    }

    for (const [file, select, check, expected] of [
      [ordersParquet, DUCK_ORDERS, ORDERS_CHECK, expectedOrders],
      [customersParquet, DUCK_CUSTOMERS, CUSTOMERS_CHECK, expectedCustomers],
    ] as const) {
      const name = path.basename(file);
      if (fs.existsSync(file)) {
        const current = await duckChecksum(connection, check(`read_parquet(${sqlPath(file)})`)).catch(() => [] as Checksum);
        if (same(current, expected)) {
          log(`Parquet ${name}: present, checksums match (reused)`);
          continue;
        }
      }
      const start = performance.now();
      const temporary = `${file}.${process.pid}.tmp`;
      await connection.run(`COPY (${select} ORDER BY id) TO ${sqlPath(temporary)} (FORMAT parquet)`);
      fs.renameSync(temporary, file);
      const current = await duckChecksum(connection, check(`read_parquet(${sqlPath(file)})`));
      if (!same(current, expected)) throw new Error(`Parquet ${name} differs from the reference`);
      log(`Parquet ${name}: written in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    }

    await setUpPostgres(pgSettings, expectedOrders);
    await setUpMariadb(my, expectedCustomers);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return { pg: pgSettings, my, parquetDir, ordersParquet, customersParquet };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  setUpData()
    .then((data) => log(`data ready; Parquet copies in ${data.parquetDir}`))
    .catch((err: unknown) => {
      process.stderr.write(`data set-up failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    });
}
