/**
 * The forms dependent-join keys can take at MySQL/MariaDB and SQLite, timed alone with each
 * driver (no vdb), alternating run by run: 1M orders grouped by customer for 25,000 of their
 * 100,000 customer ids, the statement vdb sends for the swapped sizes of federated-joins.ts.
 *
 *   IN list, batches of N   `customer_id IN (<N literals>)`, one statement per batch, as vdb
 *                           sends them (dependentJoin.batchSize)
 *   temporary table         the keys inserted into a temporary table with a primary key, joined
 *   IN (SELECT temporary)   the same table as an IN subquery
 *   json_each (SQLite)      `IN (SELECT value FROM json_each('[...]'))`: one literal
 *
 * MariaDB's table is `bench_orders_my` of federated-joins.js (run that first); SQLite's is a
 * file of the same shape this bench writes to the temporary directory (and removes).
 *
 *   npm run build && node dist/bench/key-forms.js     # BENCH_RUNS=7 for more runs (default 5)
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { settings } from './federation-data.js';
import { median, table } from './measure.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5) || 5);
const KEYS = Array.from({ length: 25_000 }, (_, i) => i * 4 + 1);
const BATCHES = [5_000, 12_500, 25_000];
const GROUPED = 'SELECT customer_id, count(*), sum(amount) FROM';

const batches = (size: number) => Array.from({ length: Math.ceil(KEYS.length / size) }, (_, i) => KEYS.slice(i * size, (i + 1) * size));

/** Runs each form RUNS times after a warm-up, alternating; the median ms and the rows of each. */
async function alternate(forms: Array<[string, () => Promise<number>]>): Promise<string[][]> {
  const times = forms.map(() => [] as number[]);
  const rows = forms.map(() => 0);
  for (let run = 0; run <= RUNS; run++) {
    for (const [i, [, form]] of forms.entries()) {
      const start = performance.now();
      rows[i] = await form();
      if (run > 0) times[i]!.push(performance.now() - start);
    }
  }
  return forms.map(([name], i) => [name, median(times[i]!).toFixed(1), rows[i]!.toLocaleString('en-US')]);
}

async function mariadb(): Promise<string[][] | null> {
  const my = await mysql.createConnection({ ...settings().my });
  try {
    const [found] = (await my.query(
      "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'bench_orders_my'",
    )) as unknown as [Array<{ n: number }>];
    if (Number(found[0]?.n) === 0) return null;
    const count = async (sql: string) => ((await my.query(sql)) as unknown as [unknown[]])[0].length;
    const forms: Array<[string, () => Promise<number>]> = [
      ['scan alone (no keys, no grouping)', () => count('SELECT count(*), sum(amount) FROM bench_orders_my')],
    ];
    for (const size of BATCHES) {
      forms.push([
        `IN list, batches of ${size.toLocaleString('en-US')}`,
        async () => {
          let total = 0;
          for (const keys of batches(size))
            total += await count(`${GROUPED} bench_orders_my WHERE customer_id IN (${keys.join(',')}) GROUP BY customer_id`);
          return total;
        },
      ]);
    }
    const withTemporary = async (query: string) => {
      await my.query('CREATE TEMPORARY TABLE bench_keys (id int PRIMARY KEY)');
      try {
        await my.query(`INSERT INTO bench_keys VALUES ${KEYS.map((k) => `(${k})`).join(',')}`);
        return await count(query);
      } finally {
        await my.query('DROP TEMPORARY TABLE bench_keys');
      }
    };
    forms.push([
      'temporary table, joined',
      () => withTemporary(`${GROUPED} bench_orders_my o JOIN bench_keys k ON k.id = o.customer_id GROUP BY customer_id`),
    ]);
    forms.push([
      'IN (SELECT temporary table)',
      () => withTemporary(`${GROUPED} bench_orders_my WHERE customer_id IN (SELECT id FROM bench_keys) GROUP BY customer_id`),
    ]);
    return await alternate(forms);
  } finally {
    await my.end();
  }
}

async function sqlite(): Promise<string[][]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-key-forms-'));
  const db = new Database(path.join(dir, 'orders.db'));
  try {
    db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount REAL NOT NULL)');
    db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000000)
             INSERT INTO orders SELECT i, i % 100000 + 1, (i * 7919 % 100000) / 100.0 FROM s`);
    db.exec('ANALYZE');
    const count = (sql: string) => db.prepare(sql).all().length;
    const forms: Array<[string, () => Promise<number>]> = [
      ['scan alone (no keys, no grouping)', async () => count('SELECT count(*), sum(amount) FROM orders')],
    ];
    for (const size of BATCHES) {
      forms.push([
        `IN list, batches of ${size.toLocaleString('en-US')}`,
        async () =>
          batches(size).reduce(
            (total, keys) => total + count(`${GROUPED} orders WHERE customer_id IN (${keys.join(',')}) GROUP BY customer_id`),
            0,
          ),
      ]);
    }
    forms.push([
      'json_each, one literal',
      async () => count(`${GROUPED} orders WHERE customer_id IN (SELECT value FROM json_each('[${KEYS.join(',')}]')) GROUP BY customer_id`),
    ]);
    forms.push([
      'temporary table, joined',
      async () => {
        db.exec('CREATE TEMP TABLE bench_keys (id INTEGER PRIMARY KEY)');
        try {
          db.exec(`INSERT INTO bench_keys VALUES ${KEYS.map((k) => `(${k})`).join(',')}`);
          return count(`${GROUPED} orders o JOIN bench_keys k ON k.id = o.customer_id GROUP BY customer_id`);
        } finally {
          db.exec('DROP TABLE bench_keys');
        }
      },
    ]);
    return await alternate(forms);
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`25,000 keys of 100,000 customer ids against 1M orders, grouped by customer; median of ${RUNS} runs, alternating\n`);
  const my = await mariadb();
  if (my) console.log(`MariaDB (bench_orders_my)\n${table(['form', 'ms', 'rows'], my)}\n`);
  else console.log('MariaDB: no bench_orders_my (node dist/bench/federated-joins.js creates it)\n');
  console.log(`SQLite (a file of the same shape)\n${table(['form', 'ms', 'rows'], await sqlite())}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
