/**
 * The fixture of the tests of failing and busy sources: under one tag, a PostgreSQL schema and a
 * MariaDB database each holding `big` (a view of `rows` generated rows, for reads that stream for
 * a while) and `small` (three rows), plus any tables the test adds, and a fault-injecting proxy
 * in front of each server (fault-proxy.ts). `drop` undoes it all.
 */
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { mysqlConnection, MY, PG, pgClient } from '../connectors/db.js';
import { FaultProxy } from './fault-proxy.js';

export interface SourceFixture {
  pgAdmin: pg.Client;
  myAdmin: mysql.Connection;
  pgProxy: FaultProxy;
  myProxy: FaultProxy;
  /** Lets the proxies through, closes the server (`closeServer`, whose connections pass them), then undoes the fixture. */
  drop(closeServer: () => Promise<void>): Promise<void>;
}

export async function sourceFixture(tag: string, rows: number, extraTables: string[] = []): Promise<SourceFixture> {
  const pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE VIEW ${tag}.big AS SELECT g AS id, repeat('x', 40) AS pad FROM generate_series(1, ${rows}) g;
    CREATE TABLE ${tag}.small (id int PRIMARY KEY);
    INSERT INTO ${tag}.small VALUES (1), (2), (3);
  `);
  const myAdmin = await mysqlConnection();
  await myAdmin.query(`CREATE DATABASE ${tag}`);
  await myAdmin.query(`CREATE VIEW ${tag}.big AS SELECT seq AS id, REPEAT('x', 40) AS pad FROM test.seq_1_to_${rows}`);
  await myAdmin.query(`CREATE TABLE ${tag}.small (id int PRIMARY KEY)`);
  await myAdmin.query(`INSERT INTO ${tag}.small VALUES (1), (2), (3)`);
  for (const table of extraTables) {
    await pgAdmin.query(`CREATE TABLE ${tag}.${table} (id int PRIMARY KEY); INSERT INTO ${tag}.${table} VALUES (1);`);
    await myAdmin.query(`CREATE TABLE ${tag}.${table} (id int PRIMARY KEY)`);
    await myAdmin.query(`INSERT INTO ${tag}.${table} VALUES (1)`);
  }
  const pgProxy = await FaultProxy.start(PG.port);
  const myProxy = await FaultProxy.start(MY.port);
  return {
    pgAdmin,
    myAdmin,
    pgProxy,
    myProxy,
    async drop(closeServer) {
      pgProxy.resume();
      myProxy.resume();
      await closeServer();
      await pgProxy.close();
      await myProxy.close();
      await pgAdmin.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
      await pgAdmin.end();
      await myAdmin.query(`DROP DATABASE IF EXISTS ${tag}`);
      await myAdmin.end();
    },
  };
}
