/**
 * Whether MySQL/MariaDB prepared statements (mysql2 `execute`, the binary protocol) would pay for
 * the direct path of whole statements (issue 11): point lookups on `bench_lookup_my`
 * (lookup-setup.ts) by the text protocol as vdb sends them (`query`, every value as text) and by
 * `execute`, with 10 concurrent callers on a pool of 10; and what each returns for the same row:
 * the direct path needs each value's text as the text protocol gives it.
 *
 * Usage: npm run build && node dist/bench/mysql-prepared.js   (BENCH_SECONDS=5)
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import mysql from 'mysql2/promise';
import { ensureRowTables, ROWS } from './lookup-setup.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bench-prepared-'));
await ensureRowTables(folder);
fs.rmSync(folder, { recursive: true, force: true });

const pool = mysql.createPool({
  host: '127.0.0.1',
  user: 'root',
  database: 'test',
  connectionLimit: 10,
  dateStrings: true,
  supportBigNumbers: true,
  bigNumberStrings: true,
  jsonStrings: true,
});
const SQL = 'SELECT * FROM bench_lookup_my WHERE id = ?';
const randomId = () => 1 + Math.floor(Math.random() * ROWS);

async function measure(name: string, lookup: () => Promise<unknown>): Promise<string[]> {
  const end = Date.now() + SECONDS * 1000;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (Date.now() < end) {
        const started = process.hrtime.bigint();
        await lookup();
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(2);
  return [name, (latencies.length / SECONDS).toFixed(0), at(0.5), at(0.99)];
}

try {
  const rows: string[][] = [];
  for (let round = 0; round < 2; round++) {
    rows.push(await measure('query (text protocol)', () => pool.query({ sql: SQL, rowsAsArray: true }, [randomId()])));
    rows.push(await measure('execute (prepared, binary)', () => pool.execute({ sql: SQL, rowsAsArray: true }, [randomId()])));
  }
  process.stdout.write(`\n${['protocol', 'lookups/s', 'p50 ms', 'p99 ms'].join(' | ')}\n`);
  for (const row of rows) process.stdout.write(`${row.join(' | ')}\n`);
  const [asText] = await pool.query({ sql: 'SELECT * FROM bench_lookup_my WHERE id = 7', rowsAsArray: true });
  const [asBinary] = await pool.execute({ sql: SQL, rowsAsArray: true }, [7]);
  const show = (values: unknown) => JSON.stringify(values, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  process.stdout.write(`\ntext:   ${show(asText)}\nbinary: ${show(asBinary)}\n`);
} finally {
  await pool.end();
}
