/**
 * Loads the TPC-H tables of generate.ts, split over two databases as issue 26 asks:
 *
 * | where | tables |
 * |---|---|
 * | PostgreSQL (db `test`), schema `<prefix>` | lineitem, orders, partsupp, part (COPY) |
 * | MariaDB, database `<prefix>` | customer, supplier, nation, region (LOAD DATA LOCAL INFILE) |
 * | PostgreSQL schema `<prefix>_local` | all eight: views of the four above, tables of the other four (COPY) — the "all local" peer |
 * | PostgreSQL schema `<prefix>_fdw` (only when mysql_fdw is available) | views of the four PostgreSQL tables, mysql_fdw foreign tables of the MariaDB four |
 *
 * Idempotent: each loaded table carries a comment naming the generator version, the scale and
 * its row count; a table whose comment and count(*) match is kept, any other is made again.
 * The prefix is `tpch` for the benchmark; the test uses its own, so neither reloads the other's.
 *
 *   node dist/bench/tpch/load.js [sf]        (default 1; BENCH_PG_* / BENCH_MY_* as federation-data.ts)
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { chunks, GENERATOR_VERSION, lineitemCount, rowCount, scale, type Scale, type TableName } from './generate.js';

export const PG_TABLES = ['lineitem', 'orders', 'partsupp', 'part'] as const;
export const MY_TABLES = ['customer', 'supplier', 'nation', 'region'] as const;

/** Column definitions with the specification's types (clause 1.4.1), the same in both dialects. */
const COLUMNS: Record<TableName, string> = {
  part: `p_partkey integer NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL, p_brand char(10) NOT NULL,
    p_type varchar(25) NOT NULL, p_size integer NOT NULL, p_container char(10) NOT NULL,
    p_retailprice decimal(15,2) NOT NULL, p_comment varchar(23) NOT NULL`,
  supplier: `s_suppkey integer NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL, s_nationkey integer NOT NULL,
    s_phone char(15) NOT NULL, s_acctbal decimal(15,2) NOT NULL, s_comment varchar(101) NOT NULL`,
  partsupp: `ps_partkey integer NOT NULL, ps_suppkey integer NOT NULL, ps_availqty integer NOT NULL,
    ps_supplycost decimal(15,2) NOT NULL, ps_comment varchar(199) NOT NULL`,
  customer: `c_custkey integer NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL, c_nationkey integer NOT NULL,
    c_phone char(15) NOT NULL, c_acctbal decimal(15,2) NOT NULL, c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL`,
  orders: `o_orderkey integer NOT NULL, o_custkey integer NOT NULL, o_orderstatus char(1) NOT NULL, o_totalprice decimal(15,2) NOT NULL,
    o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL, o_clerk char(15) NOT NULL, o_shippriority integer NOT NULL,
    o_comment varchar(79) NOT NULL`,
  lineitem: `l_orderkey integer NOT NULL, l_partkey integer NOT NULL, l_suppkey integer NOT NULL, l_linenumber integer NOT NULL,
    l_quantity decimal(15,2) NOT NULL, l_extendedprice decimal(15,2) NOT NULL, l_discount decimal(15,2) NOT NULL,
    l_tax decimal(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL,
    l_commitdate date NOT NULL, l_receiptdate date NOT NULL, l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL,
    l_comment varchar(44) NOT NULL`,
  nation: `n_nationkey integer NOT NULL, n_name char(25) NOT NULL, n_regionkey integer NOT NULL, n_comment varchar(152) NOT NULL`,
  region: `r_regionkey integer NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152) NOT NULL`,
};

const PRIMARY_KEYS: Record<TableName, string> = {
  part: 'p_partkey',
  supplier: 's_suppkey',
  partsupp: 'ps_partkey, ps_suppkey',
  customer: 'c_custkey',
  orders: 'o_orderkey',
  lineitem: 'l_orderkey, l_linenumber',
  nation: 'n_nationkey',
  region: 'r_regionkey',
};

/**
 * Indexes on foreign keys (clause 1.4.2.3 allows them) where PostgreSQL's plans of the correlated
 * subqueries of Q17, Q20 and Q22 need them: without, each outer row scans lineitem or orders.
 */
const FOREIGN_KEY_INDEXES: Partial<Record<TableName, string[]>> = {
  lineitem: ['l_partkey, l_suppkey'],
  orders: ['o_custkey'],
};

export interface Connections {
  pg: pg.ClientConfig & { host: string; port: number; database: string; user: string };
  my: { host: string; port: number; user: string; password: string };
}

export function connections(): Connections {
  const env = process.env;
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
      user: env.BENCH_MY_USER ?? 'root',
      password: env.BENCH_MY_PASSWORD ?? '',
    },
  };
}

/** Where a loaded data set lives. */
export interface Layout {
  /** PostgreSQL schema of the four PostgreSQL tables, and the MariaDB database of the other four. */
  prefix: string;
  local: string;
  fdw: string;
}

export const layout = (prefix = 'tpch'): Layout => ({ prefix, local: `${prefix}_local`, fdw: `${prefix}_fdw` });

export interface LoadOptions {
  /** Set up the mysql_fdw schema when the extension is available (default true). */
  fdw?: boolean;
  log?: (message: string) => void;
}

export interface Loaded {
  layout: Layout;
  scale: Scale;
  rows: Record<TableName, number>;
  /** Why the mysql_fdw schema is missing, or null when it is there. */
  fdwSkipped: string | null;
}

/** Bumped when the tables' definitions or indexes change. */
const LOAD_VERSION = 2;
const marker = (s: Scale, rows: number) => `vdb-tpch v${GENERATOR_VERSION}.${LOAD_VERSION} sf=${s.sf} rows=${rows}`;
const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** Loads what is missing or different; returns the layout and the row counts. */
export async function load(sf: number, prefix = 'tpch', options: LoadOptions = {}): Promise<Loaded> {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const s = scale(sf);
  const where = layout(prefix);
  const counts = {} as Record<TableName, number>;
  for (const t of [...PG_TABLES, ...MY_TABLES]) counts[t] = t === 'lineitem' ? lineitemCount(s) : rowCount(t, s);
  const conn = connections();
  const client = new pg.Client({ ...conn.pg, application_name: 'vdb-tpch-load' });
  await client.connect();
  const my = await mysql.createConnection({ ...conn.my, multipleStatements: false });
  let fdwSkipped: string | null = null;
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${where.prefix}`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${where.local}`);
    await my.query(`CREATE DATABASE IF NOT EXISTS ${where.prefix} CHARACTER SET utf8mb4`);
    for (const table of PG_TABLES) await loadPg(client, where.prefix, table, s, counts[table], log);
    for (const table of MY_TABLES) await loadMy(my, where.prefix, table, s, counts[table], log);
    for (const table of MY_TABLES) await loadPg(client, where.local, table, s, counts[table], log);
    for (const table of PG_TABLES) {
      await client.query(`CREATE OR REPLACE VIEW ${where.local}.${table} AS SELECT * FROM ${where.prefix}.${table}`);
    }
    fdwSkipped = options.fdw === false ? 'not asked for' : await setUpFdw(client, where, conn.my, counts);
    if (fdwSkipped) log(`mysql_fdw schema ${where.fdw} not set up: ${fdwSkipped}`);
  } finally {
    await client.end();
    await my.end();
  }
  return { layout: where, scale: s, rows: counts, fdwSkipped };
}

async function loadPg(client: pg.Client, schema: string, table: TableName, s: Scale, rows: number, log: (m: string) => void) {
  const name = `${schema}.${table}`;
  const expected = marker(s, rows);
  const present = await client.query<{ comment: string | null }>(`SELECT obj_description(to_regclass($1), 'pg_class') AS comment`, [name]);
  if (present.rows[0]?.comment === expected) {
    const count = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
    if (Number(count.rows[0]!.n) === rows) return;
  }
  const started = performance.now();
  await client.query(`DROP VIEW IF EXISTS ${name}`).catch(() => undefined);
  await client.query(`DROP TABLE IF EXISTS ${name} CASCADE`);
  await client.query(`CREATE TABLE ${name} (${COLUMNS[table]})`);
  const stream = client.query(copyFrom(`COPY ${name} FROM STDIN`));
  await pipeline(Readable.from(chunks(table, s)), stream);
  await client.query(`ALTER TABLE ${name} ADD PRIMARY KEY (${PRIMARY_KEYS[table]})`);
  for (const columns of FOREIGN_KEY_INDEXES[table] ?? []) {
    await client.query(`CREATE INDEX ON ${name} (${columns})`);
  }
  await client.query(`ANALYZE ${name}`);
  const count = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
  if (Number(count.rows[0]!.n) !== rows) throw new Error(`${name}: loaded ${count.rows[0]!.n} rows, expected ${rows}`);
  await client.query(`COMMENT ON TABLE ${name} IS ${quote(expected)}`);
  log(`  PostgreSQL ${name}: ${rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function loadMy(my: mysql.Connection, database: string, table: TableName, s: Scale, rows: number, log: (m: string) => void) {
  const name = `${database}.${table}`;
  const expected = marker(s, rows);
  const [present] = await my.query<mysql.RowDataPacket[]>(
    `SELECT TABLE_COMMENT AS comment FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
    [database, table],
  );
  if (present[0]?.comment === expected) {
    const [count] = await my.query<mysql.RowDataPacket[]>(`SELECT count(*) AS n FROM ${name}`);
    if (Number(count[0]!.n) === rows) return;
  }
  const started = performance.now();
  await my.query(`DROP TABLE IF EXISTS ${name}`);
  await my.query(`CREATE TABLE ${name} (${COLUMNS[table]}, PRIMARY KEY (${PRIMARY_KEYS[table]})) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  await my.query({
    sql: `LOAD DATA LOCAL INFILE 'tpch-${table}.tsv' INTO TABLE ${name}`,
    // mysql2 sends the stream's chunks as they are: Buffers, not strings.
    infileStreamFactory: () => Readable.from(bufferChunks(table, s)),
  });
  await my.query(`ANALYZE TABLE ${name}`);
  const [count] = await my.query<mysql.RowDataPacket[]>(`SELECT count(*) AS n FROM ${name}`);
  if (Number(count[0]!.n) !== rows) throw new Error(`MariaDB ${name}: loaded ${count[0]!.n} rows, expected ${rows}`);
  await my.query(`ALTER TABLE ${name} COMMENT = ${my.escape(expected)}`);
  log(`  MariaDB ${name}: ${rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

function* bufferChunks(table: TableName, s: Scale): Generator<Buffer> {
  for (const chunk of chunks(table, s)) yield Buffer.from(chunk, 'utf8');
}

/**
 * The mysql_fdw peer: views of the PostgreSQL tables and foreign tables of MariaDB's, made
 * again on every load (cheap). Returns null when ready, or why it is skipped; never throws.
 */
async function setUpFdw(
  client: pg.Client,
  where: Layout,
  my: Connections['my'],
  counts: Record<TableName, number>,
): Promise<string | null> {
  if (/^(0|false|no|off)$/i.test(process.env.BENCH_FDW ?? '')) return 'BENCH_FDW=off';
  const server = `${where.prefix}_mysql`;
  try {
    const available = await client.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'mysql_fdw'`);
    if (available.rowCount === 0) return 'the mysql_fdw extension is not installed (Debian: apt-get install postgresql-15-mysql-fdw)';
    await client.query('BEGIN');
    await client.query('CREATE EXTENSION IF NOT EXISTS mysql_fdw');
    await client.query(`DROP SCHEMA IF EXISTS ${where.fdw} CASCADE`);
    await client.query(`CREATE SCHEMA ${where.fdw}`);
    await client.query(`DROP SERVER IF EXISTS ${server} CASCADE`);
    await client.query(
      `CREATE SERVER ${server} FOREIGN DATA WRAPPER mysql_fdw OPTIONS (host ${quote(my.host)}, port ${quote(String(my.port))})`,
    );
    await client.query(
      `CREATE USER MAPPING FOR CURRENT_USER SERVER ${server} OPTIONS (username ${quote(my.user)}, password ${quote(my.password)})`,
    );
    for (const table of MY_TABLES) {
      const columns = COLUMNS[table].replace(/ NOT NULL/g, '');
      await client.query(
        `CREATE FOREIGN TABLE ${where.fdw}.${table} (${columns}) SERVER ${server} OPTIONS (dbname ${quote(where.prefix)}, table_name ${quote(table)})`,
      );
    }
    for (const table of PG_TABLES) await client.query(`CREATE VIEW ${where.fdw}.${table} AS SELECT * FROM ${where.prefix}.${table}`);
    await client.query('COMMIT');
    const count = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${where.fdw}.customer`);
    if (Number(count.rows[0]!.n) !== counts.customer) return `mysql_fdw answers ${count.rows[0]!.n} customers, expected ${counts.customer}`;
    return null;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    return `mysql_fdw could not be set up: ${err instanceof Error ? err.message : String(err)}`;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sf = Number(process.argv[2] ?? 1);
  const started = performance.now();
  load(sf)
    .then((loaded) => {
      process.stderr.write(
        `TPC-H sf=${sf} ready in ${((performance.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(loaded.rows)}` +
          `${loaded.fdwSkipped ? `; no mysql_fdw schema (${loaded.fdwSkipped})` : ''}\n`,
      );
    })
    .catch((err: unknown) => {
      process.stderr.write(`load failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    });
}
