/**
 * The corpus's table `vals`, the same rows held in every kind of source: a PostgreSQL schema
 * (which is also the oracle), a MariaDB database, a SQLite file and a CSV folder (with a schema
 * file declaring PostgreSQL's column types). Each call makes uniquely named objects and returns
 * a cleanup.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { mysqlConnection, pgClient, uniqueTag } from '../connectors/db.js';

/** id bigint, i bigint (SQLite's integers are 64-bit), b bigint, n numeric(10,2), f float8, t text, v varchar(20), d date, ts timestamp, flag boolean */
export const VALS: ReadonlyArray<readonly unknown[]> = [
  [1, 1, 10000000000, '1.50', 0.5, 'apple', 'Alpha', '2024-01-31', '2024-01-31 10:00:00', true],
  [2, -7, -3, '-2.25', -1.25, 'Banana', 'beta', '2023-12-01', '2023-12-01 00:00:00', false],
  [3, null, null, null, null, null, null, null, null, null],
  [4, 7, 42, '0.00', 3, 'cherry pie', 'gamma ', '2024-02-29', '2024-02-29 23:59:59.5', true],
  [5, 7, 0, '99.99', 0.001, 'a_b%c', 'ä', '2000-01-01', '2000-01-01 12:30:00', false],
  [6, 2, 5, '10.10', 2.5, 'apple', 'Alpha', '1999-12-31', '1999-12-31 23:00:00', true],
];

const COLUMNS = ['id', 'i', 'b', 'n', 'f', 't', 'v', 'd', 'ts', 'flag'];

export interface CorpusTables {
  /**
   * The table in PostgreSQL as the oracle names it, per source: PostgreSQL holding the same data
   * with the types vdb reads from that source (MariaDB's integers are int4).
   */
  oracleTables: Record<string, string>;
  /** Source descriptions for POST /rest/api/source, by source name. */
  sources: Array<{ name: string; body: Record<string, string> }>;
  cleanup(): Promise<void>;
}

export async function createCorpusTables(fileRoot: string): Promise<CorpusTables> {
  const tag = uniqueTag();
  const postgres = await pgClient();
  await postgres.query(`CREATE SCHEMA ${tag}`);
  await postgres.query(
    `CREATE TABLE ${tag}.vals (id bigint PRIMARY KEY, i bigint, b bigint, n numeric(10,2), f float8, t text, v varchar(20), d date, ts timestamp, flag boolean)`,
  );
  for (const row of VALS)
    await postgres.query(`INSERT INTO ${tag}.vals VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(',')})`, [...row]);
  // The oracle of MariaDB's table: integers of MariaDB's widths (its tinyint(1) is read as boolean).
  await postgres.query(`CREATE TABLE ${tag}.vals_my AS SELECT id::int AS id, i::int AS i, b, n, f, t, v, d, ts, flag FROM ${tag}.vals`);
  await postgres.end();

  const my = await mysqlConnection();
  await my.query(`CREATE DATABASE ${tag} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  await my.query(
    `CREATE TABLE ${tag}.vals (id int PRIMARY KEY, i int, b bigint, n decimal(10,2), f double, t text, v varchar(20), d date, ts datetime(6), flag boolean)`,
  );
  for (const row of VALS) await my.query(`INSERT INTO ${tag}.vals VALUES (${COLUMNS.map(() => '?').join(',')})`, [...row]);
  await my.end();

  const sqliteFile = path.join(fileRoot, `${tag}.sqlite`);
  const db = new Database(sqliteFile);
  db.exec(
    'CREATE TABLE vals (id INTEGER PRIMARY KEY, i INTEGER, b BIGINT, n DECIMAL(10,2), f DOUBLE, t TEXT, v VARCHAR(20), d DATE, ts TIMESTAMP, flag BOOLEAN)',
  );
  const insert = db.prepare(`INSERT INTO vals VALUES (${COLUMNS.map(() => '?').join(',')})`);
  for (const row of VALS) insert.run(...row.map((v, i) => (typeof v === 'boolean' ? Number(v) : i === 3 && v !== null ? Number(v) : v)));
  db.close();

  const folder = path.join(fileRoot, `${tag}_files`);
  fs.mkdirSync(folder);
  const csv = (v: unknown) => (v === null ? '' : /[",\s]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  fs.writeFileSync(path.join(folder, 'vals.csv'), [COLUMNS.join(','), ...VALS.map((row) => row.map(csv).join(','))].join('\n') + '\n');
  fs.writeFileSync(
    path.join(folder, 'vals.schema.json'),
    JSON.stringify({
      columns: {
        id: 'bigint',
        i: 'bigint',
        b: 'bigint',
        n: 'numeric(10,2)',
        f: 'float8',
        t: 'text',
        v: 'varchar(20)',
        d: 'date',
        ts: 'timestamp',
        flag: 'boolean',
      },
    }),
  );

  return {
    oracleTables: { pg: `${tag}.vals`, my: `${tag}.vals_my`, lite: `${tag}.vals`, csv: `${tag}.vals` },
    sources: [
      {
        name: 'pg',
        body: {
          template: 'postgresql',
          connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
          modelProps: `importer.schemaPattern=${tag}`,
        },
      },
      { name: 'my', body: { template: 'mysql', connectionProps: `host=127.0.0.1,port=3306,db=${tag},user-name=root` } },
      { name: 'lite', body: { template: 'sqlite', connectionProps: `path=${sqliteFile}` } },
      { name: 'csv', body: { template: 'file', connectionProps: `ParentDirectory=${folder}` } },
    ],
    async cleanup() {
      const c = await pgClient();
      await c.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
      await c.end();
      const m = await mysqlConnection();
      await m.query(`DROP DATABASE IF EXISTS ${tag}`);
      await m.end();
      fs.rmSync(sqliteFile, { force: true });
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}
