/**
 * The same small data set in PostgreSQL, MariaDB and SQLite, with the traps that make pushdown
 * go wrong: letter case, trailing spaces, NULLs, dates, decimals, duplicates. Each call makes
 * its own uniquely named schema / database / file and returns a cleanup.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { UserDef } from '../../src/catalog/types.js';
import type { CopyReading } from '../../src/sources/copies.js';
import type { Engine } from '../../src/engine/engine.js';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';

export const CUSTOMERS = [
  [1, 'Alice', 'DE', 'enterprise', '10.50', '2025-01-03'],
  [2, 'alice', 'de', 'smb', '3.25', '2025-02-10'],
  [3, 'Bob ', 'US', 'enterprise', null, '2024-12-31'],
  [4, 'bob', 'US', null, '0.00', null],
  [5, "O'Brien", 'GB', 'consumer', '99.99', '2025-06-30'],
  [6, 'Zoë', null, 'enterprise', '-1.50', '2025-01-01'],
  [7, 'a_b%c', 'FR', 'smb', '7.00', '2025-03-15'],
  [8, 'ALICE', 'DE', 'consumer', '12.00', '2025-01-03'],
] as const;

/** Text whose order and case rules differ between collations. */
export const TAGS = [
  [1, 'b'],
  [2, 'B'],
  [3, 'a'],
  [4, 'Ä'],
  [5, 'ä'],
  [6, null],
  [7, 'b '],
] as const;

export const ORDERS = Array.from({ length: 40 }, (_, i) => {
  const id = i + 1;
  const customer = (i % 9) + 1; // 9 has no customer: outer joins show it
  const amount = ((i * 37) % 500) / 4;
  const status = ['paid', 'Paid', 'shipped', 'new', null][i % 5];
  const day = String((i % 28) + 1).padStart(2, '0');
  const month = String((i % 12) + 1).padStart(2, '0');
  return [id, customer, amount.toFixed(2), status, `2025-${month}-${day}`, i % 3] as const;
});

export interface Fixture {
  pgSchema: string;
  mysqlDatabase: string;
  sqliteFile: string;
  /** A folder with customers.csv: the same customers as a file source. */
  filesFolder: string;
  cleanup(): Promise<void>;
}

/** The loopback PostgreSQL and MariaDB the tests use. */
export const PG = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' };
export const MY = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

export async function createFixture(dir: string): Promise<Fixture> {
  const tag = `vdbt_${randomBytes(4).toString('hex')}`;
  const pgClient = new pg.Client(PG);
  await pgClient.connect();
  await pgClient.query(`CREATE SCHEMA ${tag}`);
  await pgClient.query(
    `CREATE TABLE ${tag}.customers (id int PRIMARY KEY, name text, country text, segment varchar(20), score numeric(10,2), created date)`,
  );
  await pgClient.query(
    `CREATE TABLE ${tag}.orders (id int PRIMARY KEY, customer_id int, amount numeric(12,2), status text, created date, qty int)`,
  );
  for (const row of CUSTOMERS) await pgClient.query(`INSERT INTO ${tag}.customers VALUES ($1,$2,$3,$4,$5,$6)`, [...row]);
  for (const row of ORDERS) await pgClient.query(`INSERT INTO ${tag}.orders VALUES ($1,$2,$3,$4,$5,$6)`, [...row]);
  // Types the engine shows as text: both paths must show the same text.
  await pgClient.query(`CREATE TABLE ${tag}.oddtypes (id int PRIMARY KEY, c char(5), ip inet, tz timetz, arr int[], v varchar(10))`);
  await pgClient.query(
    `INSERT INTO ${tag}.oddtypes VALUES (1, 'ab', '10.0.0.1/32', '10:00:00+02', '{1,2}', 'x'), (2, NULL, '10.1.0.0/16', NULL, '{}', NULL)`,
  );
  await pgClient.query(`CREATE TABLE ${tag}.tags (id int PRIMARY KEY, tag text)`);
  for (const row of TAGS) await pgClient.query(`INSERT INTO ${tag}.tags VALUES ($1,$2)`, [...row]);
  // A column in a locale collation: text order there is not the engine's byte order.
  await pgClient.query(`CREATE TABLE ${tag}.labels AS SELECT id, name::text COLLATE "en-US-x-icu" AS label FROM ${tag}.customers`);
  await pgClient.query(`ANALYZE ${tag}.customers; ANALYZE ${tag}.orders`);
  await pgClient.end();

  const my = await mysql.createConnection(MY);
  await my.query(`CREATE DATABASE ${tag} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
  await my.query(
    `CREATE TABLE ${tag}.customers (id int PRIMARY KEY, name varchar(50), country varchar(5), segment varchar(20), score decimal(10,2), created date)`,
  );
  await my.query(
    `CREATE TABLE ${tag}.orders (id int PRIMARY KEY, customer_id int, amount decimal(12,2), status varchar(20), created date, qty int)`,
  );
  for (const row of CUSTOMERS) await my.query(`INSERT INTO ${tag}.customers VALUES (?,?,?,?,?,?)`, [...row]);
  for (const row of ORDERS) await my.query(`INSERT INTO ${tag}.orders VALUES (?,?,?,?,?,?)`, [...row]);
  // A binary collation: case-sensitive there, unlike the database's default.
  await my.query(`CREATE TABLE ${tag}.tags (id int PRIMARY KEY, tag varchar(10) COLLATE utf8mb4_bin)`);
  for (const row of TAGS) await my.query(`INSERT INTO ${tag}.tags VALUES (?,?)`, [...row]);
  await my.query(`ANALYZE TABLE ${tag}.customers, ${tag}.orders`);
  await my.end();

  const sqliteFile = path.join(dir, `${tag}.sqlite`);
  const db = new Database(sqliteFile);
  db.exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, country TEXT, segment TEXT, score DECIMAL(10,2), created DATE);
           CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount DECIMAL(12,2), status TEXT, created DATE, qty INTEGER);`);
  // NOCASE: SQLite compares this column case-insensitively unless told otherwise.
  db.exec('CREATE TABLE tags (id INTEGER PRIMARY KEY, tag TEXT COLLATE NOCASE)');
  const insertTag = db.prepare('INSERT INTO tags VALUES (?,?)');
  for (const row of TAGS) insertTag.run(row[0], row[1]);
  const insertCustomer = db.prepare('INSERT INTO customers VALUES (?,?,?,?,?,?)');
  for (const row of CUSTOMERS) insertCustomer.run(row[0], row[1], row[2], row[3], row[4] === null ? null : Number(row[4]), row[5]);
  const insertOrder = db.prepare('INSERT INTO orders VALUES (?,?,?,?,?,?)');
  for (const row of ORDERS) insertOrder.run(row[0], row[1], Number(row[2]), row[3], row[4], row[5]);
  db.exec('ANALYZE');
  db.close();

  const filesFolder = path.join(dir, `${tag}_files`);
  fs.mkdirSync(filesFolder);
  const csv = (v: unknown) => (v === null ? '' : /[",]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  fs.writeFileSync(
    path.join(filesFolder, 'customers.csv'),
    ['id,name,country,segment,score,created', ...CUSTOMERS.map((row) => row.map(csv).join(','))].join('\n') + '\n',
  );

  return {
    pgSchema: tag,
    mysqlDatabase: tag,
    sqliteFile,
    filesFolder,
    async cleanup() {
      const c = new pg.Client(PG);
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
      await c.end();
      const m = await mysql.createConnection(MY);
      await m.query(`DROP DATABASE IF EXISTS ${tag}`);
      await m.end();
      fs.rmSync(sqliteFile, { force: true });
      fs.rmSync(filesFolder, { recursive: true, force: true });
    },
  };
}

/** Drops what a test made under `tag`: its PostgreSQL schema, its MariaDB database, its data directory. */
export async function dropTagged(tag: string, dataDir: string): Promise<void> {
  const client = new pg.Client(PG);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await client.end();
  const my = await mysql.createConnection(MY);
  await my.query(`DROP DATABASE IF EXISTS ${tag}`);
  await my.end();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

/** Rows (a JSON array text) in a fixed order, for comparing answers whose order is not defined. */
export const sortedJson = (json: string) => JSON.stringify((JSON.parse(json) as unknown[]).map((r) => JSON.stringify(r)).sort());

/** A statement's rows as one JSON text, what its sources received, and its result columns. */
export interface EngineRows {
  json: string;
  sourceSql: string[];
  /** The source of each statement in `sourceSql`. */
  sources: string[];
  columns: string[];
  types: string[];
}

/** A statement run on `engine` as `user` (reading copies as `reading` says, by default as configured). */
export async function engineRows(engine: Engine, user: UserDef, sql: string, reading?: CopyReading): Promise<EngineRows> {
  const execution = await engine.open(sql, user, new AbortController().signal, { reading });
  try {
    const parts: string[] = [];
    try {
      for await (const part of execution.stream('array', {}, {})) parts.push(part);
    } catch (err) {
      // As the HTTP layer does: errors met while reading become API errors.
      throw execution.translateError(err);
    }
    return {
      json: `[${parts.join(',')}]`,
      sourceSql: execution.sourceQueries.map((q) => q.sql),
      sources: execution.sourceQueries.map((q) => q.source),
      columns: execution.columns.map((c) => c.name),
      types: execution.columns.map((c) => String(c.type)),
    };
  } finally {
    execution.close();
  }
}

/** Adds the fixture's sources to `services`: `pg` and `my`, with `lite` (SQLite) and `fs` (files) where asked. */
export async function addFixtureSources(
  services: Services,
  fixture: Fixture,
  also: { lite?: boolean; files?: boolean } = {},
): Promise<void> {
  const { registry } = services;
  await registry.addSource({
    name: 'pg',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
    model: { 'importer.schemaPattern': fixture.pgSchema },
  });
  await registry.addSource({
    name: 'my',
    kind: 'mysql',
    connection: { host: '127.0.0.1', port: '3306', db: fixture.mysqlDatabase, 'user-name': 'root' },
  });
  if (also.lite) await registry.addSource({ name: 'lite', kind: 'sqlite', connection: { path: fixture.sqliteFile } });
  if (also.files) await registry.addSource({ name: 'fs', kind: 'file', connection: { ParentDirectory: fixture.filesFolder } });
}

/**
 * A user `<name>_rita` with the role `<name>_analyst`: read on the sources `pg` and `my`, then each
 * of `permissions` (the arguments of SYSADMIN.setPermissions after the role, as SQL).
 */
export async function restrictedReader(services: Services, admin: UserDef, name: string, permissions: string[]): Promise<UserDef> {
  const [user, role] = [`${name}_rita`, `${name}_analyst`];
  for (const call of [
    `CALL SYSADMIN.addUser('${user}', '${name}-rita-pw-1')`,
    `CALL SYSADMIN.addRole('${role}')`,
    `CALL SYSADMIN.addUserRole('${role}', '${user}')`,
    `CALL SYSADMIN.setPermissions('${role}', 'pg', 'R')`,
    `CALL SYSADMIN.setPermissions('${role}', 'my', 'R')`,
    ...permissions.map((p) => `CALL SYSADMIN.setPermissions('${role}', ${p})`),
  ])
    await engineRows(services.engine, admin, call);
  return services.users.find(user)!;
}

/**
 * Services over a fresh data directory with the sources `pg` (PostgreSQL schema `tag` of database
 * test) and `my` (MariaDB database `tag`), as the dependent-key and shipped-join tests use them.
 */
export async function servicesWithSources(tag: string, dataDir: string): Promise<Services> {
  const services = await createServices(loadConfig({}, { dataDir, adminPassword: `${tag}-pw`, demo: false }), pino({ level: 'silent' }));
  await services.registry.addSource({
    name: 'pg',
    kind: 'postgresql',
    connection: { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' },
    model: { 'importer.schemaPattern': tag },
  });
  await services.registry.addSource({
    name: 'my',
    kind: 'mysql',
    connection: { host: '127.0.0.1', port: '3306', db: tag, 'user-name': 'root' },
  });
  return services;
}
