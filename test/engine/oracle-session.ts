/**
 * A vdb server and PostgreSQL holding the corpus table (corpus-tables.ts) in every kind of source,
 * for test files that compare statements with PostgreSQL's answers (names, types, the JSON text
 * of each value): `oracleSession()` registers the before/after hooks and returns the comparisons.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { pgClient } from '../connectors/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createCorpusTables, type CorpusTables } from './corpus-tables.js';
import { compareAnswers, postgresAnswer, postgresTypeNames, vdbAnswer } from './postgres-answers.js';

export interface OracleSession {
  /** The sources holding the corpus table: pg, my, lite, csv. */
  readonly sources: readonly string[];
  /** What differs from PostgreSQL's answer to `pgSql` (null: nothing). */
  difference(sql: string, pgSql?: string): Promise<string | null>;
  /** `template` ({t} for the table) over source `source`: what differs from PostgreSQL's answer. */
  tableDifference(template: string, source: string): Promise<string | null>;
  /** The name of PostgreSQL's copy of the corpus table held in `source`. */
  oracleTable(source: string): string;
  vdb(sql: string): ReturnType<typeof vdbAnswer>;
  /** PostgreSQL's answer (names, types, values' JSON text). */
  answer(sql: string): ReturnType<typeof postgresAnswer>;
  postgres(): pg.Client;
}

/** `settings`: statements run on PostgreSQL's session first (after `SET TimeZone = 'UTC'`). */
export function oracleSession(settings: readonly string[] = []): OracleSession {
  let server: TestServer;
  let postgres: pg.Client;
  let tables: CorpusTables;
  let pgTypes: Map<number, string>;
  before(async () => {
    server = await startTestServer();
    postgres = await pgClient();
    await postgres.query("SET TimeZone = 'UTC'");
    for (const setting of settings) await postgres.query(setting);
    pgTypes = await postgresTypeNames(postgres);
    tables = await createCorpusTables(path.join(server.dataDir, 'files'));
    for (const source of tables.sources) {
      const response = await server.request('/rest/api/source', { body: { name: source.name, ...source.body } });
      assert.equal(response.status, 201, await response.text());
    }
  });
  after(async () => {
    await postgres?.end();
    await server?.close();
    await tables?.cleanup();
  });
  const difference = async (sql: string, pgSql = sql): Promise<string | null> => {
    const expected = await postgresAnswer(postgres, pgTypes, pgSql);
    const actual = await vdbAnswer(server, sql);
    if (!actual.answer) return `${sql}\n    vdb: ${actual.status} ${actual.body.slice(0, 300)}`;
    const differs = compareAnswers(expected, actual.answer, !/ORDER BY/i.test(sql));
    return differs === null ? null : `${sql}\n    ${differs}`;
  };
  return {
    sources: ['pg', 'my', 'lite', 'csv'],
    difference,
    tableDifference: (template, source) =>
      difference(template.replaceAll('{t}', `${source}.vals`), template.replaceAll('{t}', tables.oracleTables[source]!)),
    oracleTable: (source) => tables.oracleTables[source]!,
    vdb: (sql) => vdbAnswer(server, sql),
    answer: (sql) => postgresAnswer(postgres, pgTypes, sql),
    postgres: () => postgres,
  };
}

/**
 * Registers the usual two tests of a corpus: `constants` over constants, and `tables` ({t} for
 * the table) over the corpus table in every source, each answered as PostgreSQL answers it.
 */
export function testSameAnswers(oracle: OracleSession, constants: readonly string[], tables: readonly string[]): void {
  test(`${constants.length} statements over constants answered as PostgreSQL answers them`, async () => {
    const differences: string[] = [];
    for (const sql of constants) {
      const differs = await oracle.difference(sql);
      if (differs) differences.push(differs);
    }
    assert.deepEqual(differences, []);
  });
  for (const source of oracle.sources) {
    test(`${tables.length} statements over the table held in source ${source} answered as PostgreSQL answers them`, async () => {
      const differences: string[] = [];
      for (const template of tables) {
        const differs = await oracle.tableDifference(template, source);
        if (differs) differences.push(differs);
      }
      assert.deepEqual(differences, []);
    });
  }
}

/** A deterministic pseudo-random sequence (a linear congruential generator), so that a failure repeats. */
export function randomFrom(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    // The high bits: the low ones of this generator repeat with short periods.
    return Math.floor(state / 65536) % n;
  };
}
