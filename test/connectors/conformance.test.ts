/**
 * The connector conformance suite (conformance.ts) for every kind of source, each against its
 * real service with its fixture made by its own client: PostgreSQL and MariaDB on loopback (a
 * schema / database of this run), SQLite, DuckDB and Parquet files in a folder of this run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import type mysql from 'mysql2/promise';
import type { Capabilities } from '../../src/connectors/types.js';
import {
  closedPort,
  COLUMNS,
  connectorConformance,
  LONG_ROWS,
  ROWS,
  sourceDef,
  type Column,
  type KindUnderTest,
  type Row,
} from './conformance.js';
import { mysqlConnection, pgClient } from './db.js';

const ALL_PUSHED: Capabilities = { projection: true, filters: true, limit: true, orderBy: true, aggregates: true, joins: true };

/** The fixture rows as parameters of the source's own client: bytes as bytes, booleans as the kind spells them. */
const parameters = (r: Row, flag: (value: boolean) => unknown) =>
  COLUMNS.map((c) => {
    const value = r[c];
    if (value === null) return null;
    if (c === 'bytes') return Buffer.from(value, 'hex');
    if (c === 'flag') return flag(value === 'true');
    return value;
  });

/** The rows of `conf_values` as DuckDB literals (for the DuckDB file and the Parquet files). */
const duckValues = () =>
  ROWS.map(
    (r) =>
      `(${COLUMNS.map((c) => {
        const value = r[c];
        if (value === null) return 'NULL';
        if (c === 'bytes') return `from_hex('${value}')`;
        return `'${value.replace(/'/g, "''")}'`;
      }).join(', ')})`,
  ).join(',\n');

const DUCK_TYPES: Record<Column, string> = {
  id: 'INTEGER',
  big: 'BIGINT',
  amount: 'DECIMAL(12,2)',
  wide: 'DECIMAL(38,10)',
  ratio: 'DOUBLE',
  flag: 'BOOLEAN',
  label: 'VARCHAR',
  code: 'VARCHAR',
  day: 'DATE',
  moment: 'TIMESTAMP',
  bytes: 'BLOB',
};

/** The fixture tables in a DuckDB database `db` (attached): PRIMARY KEYs where `keys`. */
const duckFixture = (db: string, keys: boolean) => `
  CREATE TABLE ${db}.conf_values (${COLUMNS.map((c) => `${c} ${DUCK_TYPES[c]}${keys && c === 'id' ? ' PRIMARY KEY' : ''}`).join(', ')});
  INSERT INTO ${db}.conf_values VALUES ${duckValues()};
  CREATE TABLE ${db}.conf_pair (a INTEGER, b VARCHAR, c INTEGER NOT NULL${keys ? ', PRIMARY KEY (b, a)' : ''});
  CREATE TABLE ${db}.conf_long AS SELECT (range + 1)::INTEGER AS id FROM range(${LONG_ROWS});`;

const postgres: KindUnderTest = {
  name: 'PostgreSQL',
  kind: 'postgresql',
  behaviours: {
    delivery: 'rows',
    types: { ...DUCK_TYPES },
    keys: true,
    views: true,
    statistics: { tolerance: 0 },
    exactWideDecimals: true,
    capabilities: ALL_PUSHED,
    dialect: {
      textEquality: 'exact',
      textOrderPushed: true,
      datesPushed: true,
      textOrdersLikeEngine: false,
      textGroupsLikeEngine: true,
      keyArrays: true,
      scaleFromValues: true,
      paddedChar: true,
    },
    raw: { ...(Object.fromEntries(COLUMNS.map((c) => [c, 'VARCHAR'])) as Record<Column, 'VARCHAR'>), bytes: 'BLOB' },
    batches: { rows: 2048, exact: false },
    writes: true,
    transactions: false,
    cancelsWhileComputing: true,
    unreachableMessage: /ECONNREFUSED/,
  },
  async create(tag) {
    const admin = await pgClient();
    await admin.query(`
      CREATE SCHEMA ${tag};
      CREATE TABLE ${tag}.conf_values (id integer PRIMARY KEY, big bigint, amount numeric(12,2), wide numeric,
        ratio double precision, flag boolean, label text, code char(5), day date, moment timestamp, bytes bytea);
      CREATE TABLE ${tag}.conf_pair (a int, b text, c int NOT NULL, PRIMARY KEY (b, a));
      CREATE VIEW ${tag}.conf_view AS SELECT id, label FROM ${tag}.conf_values;
      CREATE TABLE ${tag}.conf_writes (id int PRIMARY KEY, note text);
      CREATE TABLE ${tag}.conf_long AS SELECT g AS id FROM generate_series(1, ${LONG_ROWS}) g;
      CREATE VIEW ${tag}.conf_endless AS SELECT generate_series(1, 50000000) AS id;
      CREATE VIEW ${tag}.conf_slow AS SELECT g AS id FROM generate_series(1, 200) g, LATERAL (SELECT pg_sleep(0.05 + g * 0)) s;`);
    for (const r of ROWS)
      await admin.query(
        `INSERT INTO ${tag}.conf_values VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
        parameters(r, (v) => v),
      );
    await admin.query(`ANALYZE ${tag}.conf_values; ANALYZE ${tag}.conf_pair; ANALYZE ${tag}.conf_long`);
    const connection = { host: '127.0.0.1', port: '5432', db: 'test', 'user-name': 'postgres' };
    return {
      source: sourceDef('conf_pg', 'postgresql', connection, { 'importer.schemaPattern': tag }),
      unreachable: sourceDef('conf_pg_away', 'postgresql', { ...connection, port: String(await closedPort()) }),
      roots: [],
      async writtenRows() {
        const { rows } = await admin.query<{ id: number; note: string | null }>(`SELECT id, note FROM ${tag}.conf_writes ORDER BY id`);
        return rows.map((r) => [r.id, r.note]);
      },
      async readsRunning(table) {
        const { rows } = await admin.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE 'COPY%' AND position($1 IN query) > 0 AND state = 'active'`,
          [`"${tag}"."${table}"`],
        );
        return Number(rows[0]?.n);
      },
      async drop() {
        try {
          await admin.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
        } finally {
          await admin.end();
        }
      },
    };
  },
};

const mariadb: KindUnderTest = {
  name: 'MariaDB',
  kind: 'mysql',
  behaviours: {
    delivery: 'rows',
    types: { ...DUCK_TYPES },
    keys: true,
    views: true,
    // InnoDB's TABLE_ROWS is an estimate from sampled pages.
    statistics: { tolerance: 0.5 },
    exactWideDecimals: true,
    capabilities: ALL_PUSHED,
    dialect: {
      textEquality: 'superset',
      textOrderPushed: false,
      datesPushed: true,
      textOrdersLikeEngine: false,
      textGroupsLikeEngine: false,
      keyArrays: false,
      scaleFromValues: false,
      paddedChar: false,
    },
    raw: { ...(Object.fromEntries(COLUMNS.map((c) => [c, 'VARCHAR'])) as Record<Column, 'VARCHAR'>), flag: 'BIGINT', bytes: 'BLOB' },
    batches: { rows: 2048, exact: true },
    writes: true,
    transactions: { excludesWriters: false },
    cancelsWhileComputing: true,
    unreachableMessage: /ECONNREFUSED/,
  },
  async create(tag) {
    const admin = await mysqlConnection();
    await admin.query(`
      CREATE DATABASE ${tag} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
      USE ${tag};
      CREATE TABLE conf_values (id int PRIMARY KEY, big bigint, amount decimal(12,2), wide decimal(38,10), ratio double,
        flag boolean, label varchar(60), code char(5), day date, moment datetime(6), bytes varbinary(16)) ENGINE=InnoDB;
      CREATE TABLE conf_pair (a int, b varchar(10), c int NOT NULL, PRIMARY KEY (b, a)) ENGINE=InnoDB;
      CREATE VIEW conf_view AS SELECT id, label FROM conf_values;
      CREATE TABLE conf_writes (id int PRIMARY KEY, note varchar(20)) ENGINE=InnoDB;
      CREATE TABLE conf_long (id int PRIMARY KEY) ENGINE=InnoDB;
      INSERT INTO conf_long SELECT seq FROM seq_1_to_${LONG_ROWS};
      CREATE VIEW conf_endless AS SELECT seq AS id FROM seq_1_to_50000000;
      CREATE VIEW conf_slow AS SELECT seq AS id FROM seq_1_to_200 WHERE SLEEP(0.05) = 0;`);
    await admin.query(
      `INSERT INTO conf_values VALUES ${ROWS.map(() => `(${COLUMNS.map(() => '?').join(', ')})`).join(', ')}`,
      ROWS.flatMap((r) => parameters(r, (v) => (v ? 1 : 0))),
    );
    await admin.query('ANALYZE TABLE conf_values, conf_pair, conf_long');
    const connection = { host: '127.0.0.1', port: '3306', db: tag, 'user-name': 'root' };
    return {
      source: sourceDef('conf_my', 'mysql', connection),
      unreachable: sourceDef('conf_my_away', 'mysql', { ...connection, port: String(await closedPort()) }),
      roots: [],
      async writtenRows() {
        const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id, note FROM ${tag}.conf_writes ORDER BY id`);
        return rows.map((r) => [Number(r.id), r.note === null ? null : String(r.note)]);
      },
      async readsRunning(table) {
        const [rows] = await admin.query<mysql.RowDataPacket[]>(
          `SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND COMMAND = 'Query' AND ID <> CONNECTION_ID()`,
          [`SELECT%\`${tag}\`.\`${table}\`%`],
        );
        return Number(rows[0]?.n);
      },
      async drop() {
        try {
          await admin.query(`DROP DATABASE IF EXISTS ${tag}`);
        } finally {
          await admin.end();
        }
      },
    };
  },
};

const sqlite: KindUnderTest = {
  name: 'SQLite',
  kind: 'sqlite',
  behaviours: {
    delivery: 'rows',
    // SQLite's affinity rules: INTEGER is BIGINT there.
    types: { ...DUCK_TYPES, id: 'BIGINT' },
    keys: true,
    views: true,
    statistics: { tolerance: 0 },
    exactWideDecimals: false,
    capabilities: { ...ALL_PUSHED, aggregates: false },
    dialect: {
      textEquality: 'exact',
      textOrderPushed: true,
      datesPushed: false,
      textOrdersLikeEngine: true,
      textGroupsLikeEngine: true,
      keyArrays: false,
      scaleFromValues: false,
      paddedChar: false,
    },
    raw: {
      id: 'BIGINT',
      big: 'BIGINT',
      amount: 'VARCHAR',
      wide: 'VARCHAR',
      ratio: 'DOUBLE',
      flag: 'BIGINT',
      label: 'VARCHAR',
      code: 'VARCHAR',
      day: 'VARCHAR',
      moment: 'VARCHAR',
      bytes: 'BLOB',
    },
    batches: { rows: 2048, exact: true },
    writes: true,
    transactions: { excludesWriters: true },
    // Read on this process's thread, between batches: nothing computes out of reach.
    cancelsWhileComputing: false,
    unreachableMessage: /SQLite file not found/,
  },
  async create(tag) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${tag}-`));
    const file = path.join(dir, 'conf.sqlite');
    const db = new Database(file);
    db.exec(`
      CREATE TABLE conf_values (id INTEGER PRIMARY KEY, big INTEGER, amount DECIMAL(12,2), wide DECIMAL(38,10), ratio REAL,
        flag BOOLEAN, label TEXT, code CHAR(5), day DATE, moment TIMESTAMP, bytes BLOB);
      CREATE TABLE conf_pair (a INTEGER, b TEXT, c INTEGER NOT NULL, PRIMARY KEY (b, a));
      CREATE VIEW conf_view AS SELECT id, label FROM conf_values;
      CREATE TABLE conf_writes (id INTEGER PRIMARY KEY, note TEXT);
      CREATE TABLE conf_long (id INTEGER PRIMARY KEY);
      INSERT INTO conf_long WITH RECURSIVE s(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM s WHERE id < ${LONG_ROWS}) SELECT id FROM s;
      CREATE VIEW conf_endless AS WITH RECURSIVE s(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM s WHERE id < 50000000) SELECT id FROM s;`);
    const insert = db.prepare(`INSERT INTO conf_values VALUES (${COLUMNS.map(() => '?').join(', ')})`);
    for (const r of ROWS) {
      const values = parameters(r, (v) => (v ? 1 : 0));
      // Integers as integers, the double as a double; decimals as their text (NUMERIC affinity converts).
      values[1] = r.big === null ? null : BigInt(r.big);
      values[4] = r.ratio === null ? null : Number(r.ratio);
      insert.run(values);
    }
    db.exec('ANALYZE');
    db.close();
    return {
      source: sourceDef('conf_lite', 'sqlite', { path: file }),
      unreachable: sourceDef('conf_lite_away', 'sqlite', { path: path.join(dir, 'missing.sqlite') }),
      roots: [dir],
      async writtenRows() {
        const reader = new Database(file, { readonly: true });
        try {
          return (reader.prepare('SELECT id, note FROM conf_writes ORDER BY id').raw(true).all() as Array<[number, string | null]>).map(
            ([id, note]) => [id, note],
          );
        } finally {
          reader.close();
        }
      },
      async drop() {
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const duckdb: KindUnderTest = {
  name: 'DuckDB',
  kind: 'duckdb',
  behaviours: {
    delivery: 'engine',
    types: { ...DUCK_TYPES },
    keys: true,
    views: true,
    statistics: { tolerance: 0 },
    exactWideDecimals: true,
    capabilities: ALL_PUSHED,
    dialect: null,
    writes: false,
    transactions: false,
    cancelsWhileComputing: false,
    unreachableMessage: /DuckDB file not found/,
  },
  async create(tag) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${tag}-`));
    const file = path.join(dir, 'conf.duckdb');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    await connection.run(`${duckFixture('main', true)}
      CREATE VIEW conf_view AS SELECT id, label FROM conf_values;`);
    connection.closeSync();
    instance.closeSync();
    return {
      source: sourceDef('conf_duck', 'duckdb', { path: file }),
      unreachable: sourceDef('conf_duck_away', 'duckdb', { path: path.join(dir, 'missing.duckdb') }),
      roots: [dir],
      async drop() {
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const files: KindUnderTest = {
  name: 'Parquet files',
  kind: 'file',
  behaviours: {
    delivery: 'engine',
    types: { ...DUCK_TYPES },
    keys: false,
    views: false,
    // The row count of a Parquet file's footer.
    statistics: { tolerance: 0 },
    exactWideDecimals: true,
    capabilities: { projection: true, filters: true, limit: false, orderBy: false, aggregates: false, joins: false },
    dialect: null,
    writes: false,
    transactions: false,
    cancelsWhileComputing: false,
    unreachableMessage: /folder not found/,
  },
  async create(tag) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${tag}-`));
    const folder = path.join(dir, 'tables');
    fs.mkdirSync(folder);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(duckFixture('memory', false));
    for (const table of ['conf_values', 'conf_pair', 'conf_long'])
      await connection.run(`COPY ${table} TO '${path.join(folder, `${table}.parquet`)}' (FORMAT parquet)`);
    connection.closeSync();
    instance.closeSync();
    return {
      source: sourceDef('conf_files', 'file', { ParentDirectory: folder }),
      unreachable: sourceDef('conf_files_away', 'file', { ParentDirectory: path.join(dir, 'missing') }),
      roots: [dir],
      async drop() {
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

for (const kind of [postgres, mariadb, sqlite, duckdb, files]) connectorConformance(kind);
