/**
 * The cost of SQLite's storage-class supersets (connectors/sqlite/types.ts): the statements a
 * scan sends for dependent-join keys (now: OR the values of another class, otherClassesSql), a
 * point condition and a range condition (now: ranges widened by the load's rounding,
 * widenedComparison) on a 1M-row table with indexes on both columns, as before and now, on an
 * ordinary table, a STRICT one and the rowid alias (both as before).
 *
 *   npx tsc -p . && node dist/bench/sqlite-classes.js     # BENCH_RUNS=7 for more runs (default 5)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ColumnDef } from '../src/catalog/types.js';
import { SQLITE_DIALECT } from '../src/connectors/sqlite/dialect.js';
import { widenedComparison } from '../src/connectors/sqlite/types.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5) || 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const column = (name: string, type: string, sourceType: string): ColumnDef => ({
  name,
  nameInSource: name,
  type,
  sourceType,
  nullable: false,
  position: 1,
});

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-sqlite-classes-'));
  const db = new Database(path.join(dir, 'orders.db'));
  try {
    for (const [table, strict] of [
      ['orders', ''],
      ['orders_strict', ' STRICT'],
    ]) {
      db.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount REAL NOT NULL)${strict}`);
      db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000000)
               INSERT INTO ${table} SELECT i, i % 100000 + 1, (i * 7919 % 100000) / 100.0 FROM s`);
      db.exec(`CREATE INDEX ${table}_customer ON ${table} (customer_id); CREATE INDEX ${table}_amount ON ${table} (amount)`);
    }
    db.exec('ANALYZE');
    const rows = (sql: string) => {
      let n = 0;
      for (const _ of db.prepare(sql).raw(true).safeIntegers(true).iterate()) n++;
      return n;
    };
    const select = (table: string, where: string) => `SELECT "id", "customer_id", "amount" FROM ${table} WHERE ${where}`;
    const customer = column('customer_id', 'BIGINT', 'INTEGER');
    const strictCustomer = column('customer_id', 'BIGINT', 'INTEGER STRICT');
    const amount = column('amount', 'DOUBLE', 'REAL');
    const widened = (c: ColumnDef, op: string, k: string) => widenedComparison(c, `"${c.nameInSource}"`, op, [k])!;
    const keys = (n: number) => Array.from({ length: n }, (_, i) => String(i * 4 + 1));
    const forms: Array<[string, string]> = [['rowid point lookup, 1,000 statements (unchanged)', select('orders', '"id" = 424242')]];
    for (const n of [100, 25_000]) {
      const before = SQLITE_DIALECT.keyInList(customer, keys(n))!;
      forms.push([`${n} keys, before`, select('orders', `(${before})`)]);
      forms.push([`${n} keys, now`, select('orders', `(${SQLITE_DIALECT.keyFilters(customer, keys(n), 100_000)![0]})`)]);
      forms.push([
        `${n} keys, STRICT (as before)`,
        select('orders_strict', `(${SQLITE_DIALECT.keyFilters(strictCustomer, keys(n), 100_000)![0]})`),
      ]);
    }
    forms.push(['customer_id = 4242, before', select('orders', '"customer_id" = 4242')]);
    forms.push(['customer_id = 4242, now', select('orders', widened(customer, '=', '4242'))]);
    forms.push(['amount > 990 (1%), before', select('orders', '"amount" > 990')]);
    forms.push(['amount > 990 (1%), now', select('orders', widened(amount, '>', '990'))]);
    forms.push(['amount > 990 (1%), STRICT (as before)', select('orders_strict', '"amount" > 990')]);
    const times = forms.map(() => [] as number[]);
    const counts = forms.map(() => 0);
    for (let run = 0; run <= RUNS; run++) {
      for (const [i, [name, sql]] of forms.entries()) {
        const repeat = name.startsWith('rowid') ? 1000 : 1;
        const start = performance.now();
        for (let k = 0; k < repeat; k++) counts[i] = rows(sql);
        if (run > 0) times[i]!.push(performance.now() - start);
      }
    }
    console.log(`1M rows, median of ${RUNS} runs (ms; rows)`);
    for (const [i, [name]] of forms.entries()) console.log(`${name.padEnd(48)} ${median(times[i]!).toFixed(2).padStart(9)}  ${counts[i]}`);
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
