/**
 * Benchmark (issue 12): federated joins against the floor, PostgreSQL's own scan of orders.
 *
 *   npm run build && node dist/bench/federated-joins.js
 *   BENCH_RUNS=7 node dist/bench/federated-joins.js   (timed runs, default 5, after 1 warm-up)
 *
 * Joins of PostgreSQL `bench_orders` (1M rows) with MariaDB `bench_customers` (100k rows), the
 * data of federation-data.ts: broad (25k enterprise customers), selective (818 of them, in DE)
 * and three-table joins adding the regions as a CSV file, a second MariaDB table or a SQLite table. vdb's engine runs in this process (no
 * HTTP: the plan is measured, not the transport). Each is printed against:
 *   floor     `SELECT count(*), sum(amount) FROM bench_orders WHERE created >= ...` in PostgreSQL,
 *             the scan any plan that reads PostgreSQL must do;
 *   mysql_fdw the same join in PostgreSQL over a mysql_fdw foreign table, when installed.
 * and split by step: vdb's MariaDB query and its PostgreSQL statement, each run alone with the
 * same client, and the rest (loading, arrays, the engine); with the plan chosen and the
 * estimates it was chosen on (EXPLAIN). For the two-table joins, a bound: the least any exact
 * plan spends at the sources (the small side's query, then the big side's scan narrowed by the
 * keys; or the big side grouped by key while the small side is read). Never asserts on timings; the machine's load average is
 * printed with the figures.
 *
 *   BENCH_ANALYZE=1  first collects MariaDB's engine-independent statistics of bench_customers
 *                    (ANALYZE TABLE ... PERSISTENT FOR ALL: distinct values of segment and
 *                    country, which no index gives) and removes them at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import pino from 'pino';
import { to as copyTo } from 'pg-copy-streams';
import { loadConfig } from '../src/config.js';
import { createServices } from '../src/services.js';
import { Engine } from '../src/engine/engine.js';
import { setUpData } from './federation-data.js';
import { median, table } from './measure.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5) || 5);
const CREATED = "o.created >= DATE '2025-01-01'";
const FLOOR = `SELECT count(*), sum(amount) FROM bench_orders o WHERE ${CREATED}`;
const join = (customers: string, extra = '') =>
  `SELECT c.country, count(*), sum(o.amount) FROM pg.bench_orders o JOIN ${customers} c ON c.id = o.customer_id WHERE c.segment = 'enterprise' AND ${CREATED}${extra} GROUP BY c.country`;
/** The swapped sizes: the same shape with MariaDB holding the 1M orders, PostgreSQL the 100k customers. */
const SWAPPED = `SELECT c.country, count(*), sum(o.amount) FROM my.bench_orders_my o JOIN pg.bench_customers_pg c ON c.id = o.customer_id WHERE c.segment = 'enterprise' AND ${CREATED} GROUP BY c.country`;
const SWAPPED_FLOOR = `SELECT count(*), sum(amount) FROM bench_orders_my o WHERE ${CREATED}`;
/** The swapped sizes over every order: no condition on the orders, so MariaDB groups them (partial aggregation). */
const SWAPPED_ALL = SWAPPED.replace(` AND ${CREATED}`, '');
const SWAPPED_ALL_FLOOR = 'SELECT count(*), sum(amount) FROM bench_orders_my';

/** Which floor a join is measured against: PostgreSQL's scan of its orders, or MariaDB's (with or without the date). */
type Floor = 'pg' | 'my' | 'my, every order';

/**
 * A join, the floor it is measured against, and for the bound (`least` below) the statement that
 * gives the small side's keys at its own database.
 */
const CASES: Array<{ name: string; sql: string; floor?: Floor; keys?: string }> = [
  { name: 'broad', sql: join('my.bench_customers'), keys: "SELECT id FROM bench_customers WHERE segment = 'enterprise'" },
  {
    name: 'selective',
    sql: join('my.bench_customers', " AND c.country = 'DE'"),
    keys: "SELECT id FROM bench_customers WHERE segment = 'enterprise' AND country = 'DE'",
  },
  {
    name: 'swapped sizes (MariaDB 1M orders)',
    sql: SWAPPED,
    floor: 'my',
    keys: "SELECT id FROM bench_customers_pg WHERE segment = 'enterprise'",
  },
  {
    name: 'swapped sizes, every order',
    sql: SWAPPED_ALL,
    floor: 'my, every order',
    keys: "SELECT id FROM bench_customers_pg WHERE segment = 'enterprise'",
  },
  {
    name: 'three sources (+ CSV)',
    sql: `SELECT r.region, count(*), sum(o.amount) FROM pg.bench_orders o JOIN my.bench_customers c ON c.id = o.customer_id JOIN files.regions r ON r.country = c.country WHERE c.segment = 'enterprise' AND ${CREATED} GROUP BY r.region`,
  },
  {
    name: 'two tables at MariaDB',
    sql: `SELECT r.region, count(*), sum(o.amount) FROM pg.bench_orders o JOIN my.bench_customers c ON c.id = o.customer_id JOIN my.bench_regions r ON r.country = c.country WHERE c.segment = 'enterprise' AND ${CREATED} GROUP BY r.region`,
  },
  {
    name: 'three databases (+ SQLite)',
    sql: `SELECT r.region, count(*), sum(o.amount) FROM pg.bench_orders o JOIN my.bench_customers c ON c.id = o.customer_id JOIN lite.regions r ON r.country = c.country WHERE c.segment = 'enterprise' AND ${CREATED} GROUP BY r.region`,
  },
];

const log = (message: string) => process.stderr.write(`${message}\n`);

/** Runs the timings one after another (never two statements at once). */
async function sequentially(runs: Array<() => Promise<number>>): Promise<number[]> {
  const results: number[] = [];
  for (const run of runs) results.push(await run());
  return results;
}

/** Creates the swapped tables on the first run (MariaDB's sequence engine, PostgreSQL's generate_series). */
async function setUpSwapped(client: pg.Client, my: mysql.Connection): Promise<void> {
  const [found] = (await my.query(
    `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'bench_orders_my'`,
  )) as unknown as [Array<{ n: number }>];
  if (Number(found[0]!.n) === 0) {
    log('creating MariaDB bench_orders_my (1M rows) ...');
    await my.query(
      'CREATE TABLE bench_orders_my (id int PRIMARY KEY, customer_id int NOT NULL, amount decimal(12,2) NOT NULL, created date NOT NULL)',
    );
    await my.query(
      `INSERT INTO bench_orders_my SELECT seq, seq % 100000 + 1, (seq % 100000) / 100, DATE '2024-01-01' + INTERVAL (seq % 730) DAY FROM seq_1_to_1000000`,
    );
    await my.query('ANALYZE TABLE bench_orders_my');
  }
  await client.query(
    `CREATE TABLE IF NOT EXISTS bench_customers_pg AS SELECT i AS id, (ARRAY['US','DE','FR','GB','JP','BR','IN','CA','AU','NL'])[i % 10 + 1] AS country,
       CASE WHEN i % 4 = 0 THEN 'enterprise' ELSE 'smb' END AS segment FROM generate_series(1, 100000) i`,
  );
  await client.query('ANALYZE bench_customers_pg');
  const server = await client.query(`SELECT 1 FROM pg_foreign_server WHERE srvname = 'bench_mysql'`);
  if ((server.rowCount ?? 0) > 0) {
    await client.query(
      `CREATE FOREIGN TABLE IF NOT EXISTS bench_fdw.bench_orders_my (id int, customer_id int, amount numeric(12,2), created date)
         SERVER bench_mysql OPTIONS (dbname '${my.config.database ?? 'test'}', table_name 'bench_orders_my')`,
    );
  }
}

/** The floor statements, by floor. */
const FLOOR_SQL: Record<Floor, string> = { pg: FLOOR, my: SWAPPED_FLOOR, 'my, every order': SWAPPED_ALL_FLOOR };

/** `statement` with one more condition. */
const and = (statement: string, condition: string) =>
  statement.includes(' WHERE ') ? `${statement} AND ${condition}` : `${statement} WHERE ${condition}`;

/**
 * The big side's floor statement narrowed by the small side's keys, in each form its database
 * takes them: PostgreSQL an int4 array (hashed) or a lookup array indexed by the key, MariaDB an
 * IN list or a byte per key read at the key's offset (vdb's key lookup). The least of them counts.
 */
function filteredFloors(floor: Floor, ids: number[]): string[] {
  const low = Math.min(...ids);
  const high = Math.max(...ids);
  const present = new Uint8Array(high - low + 1);
  for (const id of ids) present[id - low] = 1;
  if (floor === 'pg') {
    return [
      and(FLOOR, `o.customer_id = ANY('{${ids.join(',')}}'::int4[])`),
      and(FLOOR, `(SELECT '[${low}:${high}]={${present.join(',')}}'::int4[])[o.customer_id] > 0`),
    ];
  }
  const hex = Buffer.from(present).toString('hex');
  return [
    and(FLOOR_SQL[floor], `customer_id IN (${ids.join(',')})`),
    and(
      FLOOR_SQL[floor],
      `CASE WHEN customer_id BETWEEN ${low} AND ${high} THEN ASCII(SUBSTRING(x'${hex}', customer_id - ${low - 1}, 1)) ELSE 0 END <> 0`,
    ),
  ];
}

/** The big side's floor statement grouped by the join key: what it must send in a plan that reads both sides at once. */
const groupedFloor = (floor: Floor) =>
  FLOOR_SQL[floor].replace('SELECT count(*)', 'SELECT customer_id, count(*)') + ' GROUP BY customer_id';

async function timed(run: () => Promise<unknown>): Promise<number> {
  await run(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return median(times);
}

async function main(): Promise<void> {
  const data = await setUpData();
  const client = new pg.Client({ ...data.pg });
  await client.connect();
  const my = await mysql.createConnection({ ...data.my });
  await setUpSwapped(client, my);
  const analyze = process.env.BENCH_ANALYZE === '1';
  if (analyze) await my.query('ANALYZE TABLE bench_customers PERSISTENT FOR ALL');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-joins-bench-'));
  const filesDir = path.join(dataDir, 'files');
  fs.mkdirSync(filesDir);
  const countries = (
    await my.query({ sql: 'SELECT DISTINCT country FROM bench_customers ORDER BY 1', rowsAsArray: true })
  )[0] as string[][];
  fs.writeFileSync(
    path.join(filesDir, 'regions.csv'),
    ['country,region', ...countries.map(([c], i) => `${c},region ${i % 5}`)].join('\n') + '\n',
  );
  // The same regions in MariaDB (two tables of one source) and in a SQLite database (three databases).
  await my.query('CREATE TABLE IF NOT EXISTS bench_regions (country varchar(2) PRIMARY KEY, region varchar(20) NOT NULL)');
  await my.query('DELETE FROM bench_regions');
  await my.query('INSERT INTO bench_regions VALUES ?', [countries.map(([c], i) => [c, `region ${i % 5}`])]);
  const lite = new Database(path.join(filesDir, 'regions.db'));
  lite.exec('CREATE TABLE regions (country TEXT NOT NULL, region TEXT NOT NULL)');
  const insert = lite.prepare('INSERT INTO regions VALUES (?, ?)');
  for (const [i, [c]] of countries.entries()) insert.run(c, `region ${i % 5}`);
  lite.close();
  const services = await createServices(
    loadConfig({}, { dataDir, adminPassword: 'bench-joins-pw', demo: false }),
    pino({ level: 'silent' }),
  );
  try {
    await services.registry.addSource({
      name: 'pg',
      kind: 'postgresql',
      connection: {
        host: data.pg.host,
        port: String(data.pg.port),
        db: data.pg.database,
        'user-name': data.pg.user,
        password: data.pg.password ?? '',
      },
      model: { 'importer.schemaPattern': 'public' },
    });
    await services.registry.addSource({
      name: 'my',
      kind: 'mysql',
      connection: {
        host: data.my.host,
        port: String(data.my.port),
        db: data.my.database,
        'user-name': data.my.user,
        password: data.my.password,
      },
    });
    await services.registry.addSource({ name: 'files', kind: 'file', connection: { ParentDirectory: filesDir } });
    await services.registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: path.join(filesDir, 'regions.db') } });
    const engine = services.engine;
    // The same engine without shipping (maxShippedRows 0): dependent or parallel by the estimates;
    // and with maxKeys 0 too: always parallel. For the alternating comparison.
    const unshipped = new Engine(services.registry, services.runtime, 'vdb', {
      pushdown: true,
      dependentJoin: { ...services.config.dependentJoin, maxShippedRows: 0 },
    });
    // Shipped rows always joined as rows (no lookup array), for the alternating comparison.
    const rowsOnly = new Engine(services.registry, services.runtime, 'vdb', {
      pushdown: true,
      dependentJoin: { ...services.config.dependentJoin, lookupArrays: false },
    });
    // Dependent-join keys always as IN lists, grouped by key (no key lookups at MariaDB).
    const listed = new Engine(services.registry, services.runtime, 'vdb', {
      pushdown: true,
      dependentJoin: { ...services.config.dependentJoin, keyLookups: false },
    });
    const parallelOnly = new Engine(services.registry, services.runtime, 'vdb', {
      pushdown: true,
      dependentJoin: { ...services.config.dependentJoin, maxShippedRows: 0, maxKeys: 0 },
    });
    const admin = services.users.find('admin')!;
    const vdb = async (sql: string, on: Engine = engine) => {
      const execution = await on.open(sql, admin, new AbortController().signal);
      try {
        const parts: string[] = [];
        for await (const part of execution.stream('array', {}, {})) parts.push(part);
        return { json: parts.join(','), queries: execution.sourceQueries };
      } finally {
        execution.close();
      }
    };
    const copy = (sql: string) =>
      new Promise<void>((resolve, reject) => {
        const stream = client.query(copyTo(sql.startsWith('COPY') ? sql : `COPY (${sql}) TO STDOUT`));
        stream.on('data', () => undefined);
        stream.on('end', () => resolve());
        stream.on('error', reject);
      });
    const fdw = await client
      .query(`SELECT 1 FROM pg_foreign_table t JOIN pg_class c ON c.oid = t.ftrelid WHERE c.relname = 'bench_customers'`)
      .then((r) => (r.rowCount ?? 0) > 0);
    if (!fdw)
      log('mysql_fdw: no foreign table bench_fdw.bench_customers (node dist/bench/federation.js sets it up when mysql_fdw is installed)');

    log('floors ...');
    const pgFloor = await timed(() => copy(FLOOR));
    const floors: Record<Floor, number> = {
      pg: pgFloor,
      my: await timed(() => my.query({ sql: SWAPPED_FLOOR, rowsAsArray: true })),
      'my, every order': await timed(() => my.query({ sql: SWAPPED_ALL_FLOOR, rowsAsArray: true })),
    };
    const rows: string[][] = [];
    const bounds: string[][] = [];
    const estimates: string[][] = [];
    const planOf = (sent: string) =>
      sent.includes('LATERAL (SELECT')
        ? 'shipped (lookup)'
        : sent.includes('unnest(')
          ? 'shipped'
          : /GROUP BY CASE WHEN .* THEN ASCII\(SUBSTRING\(x'/.test(sent)
            ? 'dependent (grouped by lookup)'
            : /ASCII\(SUBSTRING\(x'/.test(sent)
              ? 'dependent (lookup)'
              : /= ANY\(|IN \(/.test(sent)
                ? 'dependent'
                : 'parallel';
    /** The estimates EXPLAIN shows for a join, as `rows and keys ...; plan ms, ...: choice`. */
    const explained = async (sql: string, on: Engine) =>
      ((await vdb(`EXPLAIN ${sql}`, on)).json.match(/estimates: [^"]*?: (shipped|dependent|parallel)\)?/g) ?? ['none'])
        .map((e) => e.replace(/^estimates: /, '').replace(/\)$/, ''))
        .join(' / ');
    const only = process.env.BENCH_CASES?.split(',');
    for (const { name, sql, floor: floorOf = 'pg', keys } of CASES.filter((c) => !only || only.some((o) => c.name.startsWith(o)))) {
      log(`${name} ...`);
      const floor = floors[floorOf];
      const total = await timed(() => vdb(sql));
      const { queries } = await vdb(sql);
      const pgQuery = queries.find((q) => q.source === 'pg')?.sql ?? '';
      const myQuery = queries.find((q) => q.source === 'my')?.sql ?? '';
      const pgMs = pgQuery ? await timed(() => copy(pgQuery)) : 0;
      const myMs = myQuery ? await timed(() => my.query({ sql: myQuery, rowsAsArray: true })) : 0;
      const fdwMs =
        fdw && !sql.includes('files.') && !sql.includes('lite.') && !sql.includes('bench_regions')
          ? await timed(() =>
              client.query(
                sql
                  .replace('pg.bench_orders', 'public.bench_orders')
                  .replace('pg.bench_customers_pg', 'public.bench_customers_pg')
                  .replace('my.bench_orders_my', 'bench_fdw.bench_orders_my')
                  .replace(/my\.bench_customers/g, 'bench_fdw.bench_customers'),
              ),
            )
          : null;
      const sent = queries.map((q) => q.sql).join('\n');
      const plan = planOf(sent);
      estimates.push([name, await explained(sql, engine), await explained(sql, unshipped)]);
      rows.push([
        name,
        plan,
        total.toFixed(0),
        (total / floor).toFixed(2),
        fdwMs === null ? '-' : (total / fdwMs).toFixed(2),
        myMs.toFixed(0),
        pgMs.toFixed(0),
        Math.max(0, total - myMs - pgMs).toFixed(0),
      ]);
      if (keys) {
        // The least any exact plan spends: the small side's query, then the big side's scan narrowed
        // by its keys (no grouping, no join, no transfer counted); or both at once, the big side then
        // sending its rows grouped by the key.
        const bigAt = floorOf === 'pg' ? 'pg' : 'my';
        const smallMs = bigAt === 'pg' ? myMs : pgMs;
        const ids =
          bigAt === 'pg'
            ? ((await my.query({ sql: keys, rowsAsArray: true }))[0] as number[][]).map((r) => Number(r[0]))
            : (await client.query({ text: keys, rowMode: 'array' })).rows.map((r: unknown[]) => Number(r[0]));
        const atBig = (statement: string) => (bigAt === 'pg' ? copy(statement) : my.query({ sql: statement, rowsAsArray: true }));
        const filteredMs = Math.min(...(await sequentially(filteredFloors(floorOf, ids).map((f) => () => timed(() => atBig(f))))));
        const groupedMs = await timed(() => atBig(groupedFloor(floorOf)));
        const least = Math.min(smallMs + filteredMs, groupedMs);
        bounds.push([
          name,
          ids.length.toLocaleString('en-US'),
          smallMs.toFixed(0),
          filteredMs.toFixed(0),
          groupedMs.toFixed(0),
          least.toFixed(0),
          (least / floor).toFixed(2),
          (total / least).toFixed(2),
        ]);
      }
    }
    console.log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, ${os.cpus().length} cores; median of ${RUNS} runs`,
    );
    console.log(
      `floor: PostgreSQL's scan of its 1M orders alone ${pgFloor.toFixed(0)} ms; for the swapped sizes, MariaDB's scan of its 1M orders ${floors.my.toFixed(0)} ms (every order: ${floors['my, every order'].toFixed(0)} ms)\n`,
    );
    console.log(
      table(['join', 'plan', 'vdb ms', '÷ floor', '÷ mysql_fdw', 'MariaDB query ms', 'PostgreSQL statement ms', 'rest ms'], rows, 2),
    );
    if (bounds.length > 0)
      console.log(
        `\n${table(
          [
            'join',
            'keys',
            'small side alone ms',
            'big side narrowed by the keys ms',
            'big side grouped by key ms',
            'least ms',
            'least ÷ floor',
            'vdb ÷ least',
          ],
          bounds,
          1,
        )}`,
      );
    console.log(`\n${table(['join', 'estimates (default engine)', 'estimates (maxShippedRows 0)'], estimates, 1)}`);
    // Shipped against dependent, alternating run by run in this process (the machine's load moves both alike).
    const alternating: string[][] = [];
    for (const { name, sql } of CASES.filter((c) => !only || only.some((o) => c.name.startsWith(o)))) {
      log(`${name}: default / lookupArrays false / keyLookups false / maxShippedRows 0 / maxKeys 0, alternating ...`);
      const engines = [engine, rowsOnly, listed, unshipped, parallelOnly];
      const times: number[][] = engines.map(() => []);
      const plans = engines.map(() => '');
      for (let i = 0; i <= RUNS; i++) {
        for (const [k, on] of engines.entries()) {
          const start = performance.now();
          const { queries } = await vdb(sql, on);
          if (i > 0) times[k]!.push(performance.now() - start);
          plans[k] = planOf(queries.map((q) => q.sql).join('\n'));
        }
      }
      const medians = times.map((t) => median(t));
      alternating.push([
        name,
        ...medians.map((ms, k) => `${plans[k]} ${ms.toFixed(0)}`),
        (medians[0]! / Math.min(...medians.slice(1))).toFixed(2),
      ]);
    }
    console.log(
      `\n${table(
        [
          'join',
          'default: plan ms',
          'lookupArrays false: plan ms',
          'keyLookups false: plan ms',
          'maxShippedRows 0: plan ms',
          'maxKeys 0 too: plan ms',
          'default ÷ best other',
        ],
        alternating,
        1,
      )}`,
    );
  } finally {
    if (analyze)
      for (const stats of ['column_stats', 'index_stats', 'table_stats'])
        await my.query(`DELETE FROM mysql.${stats} WHERE db_name = DATABASE() AND table_name = 'bench_customers'`);
    await services.close();
    await client.end();
    await my.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
