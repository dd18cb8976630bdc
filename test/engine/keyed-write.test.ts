/**
 * The rounds of a write whose rows the engine chooses (keyed-write.ts), over a fake source: the
 * keys found are locked and looked for again until only locked keys are found; rows that keep
 * changing are a 409 with nothing written; a key that reaches no row at the source rolls back.
 * The real sources are tested in test/federation/write-row-conditions.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResolvedTable } from '../../src/sources/definitions.js';
import type { ColumnDef, SourceDef, TableDef } from '../../src/catalog/types.js';
import type { SourceDialect } from '../../src/connectors/dialect.js';
import { MYSQL_DIALECT } from '../../src/connectors/mysql/dialect.js';
import { SQLITE_DIALECT } from '../../src/connectors/sqlite/dialect.js';
import type { SourceTransaction } from '../../src/connectors/types.js';
import { writeChosenRows, type ChosenRowsWrite } from '../../src/engine/statements/keyed-write.js';
import { ApiError } from '../../src/errors.js';

const column = (name: string, type: string, position: number, sourceType?: string): ColumnDef => ({
  name,
  nameInSource: name,
  type,
  nullable: position > 1,
  position,
  sourceType,
});

const table = (key: ColumnDef): TableDef => ({
  name: 'w',
  nameInSource: '`db`.`w`',
  sourceName: { schema: 'db', table: 'w' },
  kind: 'Table',
  columns: [key, column('grp', 'VARCHAR', 2)],
  primaryKey: [key.name],
  cardinality: null,
  uid: 'u',
  oid: 1,
});

const target = (key: ColumnDef): ResolvedTable => ({ origin: 'rows', schema: 'src', table: table(key), source: {} as SourceDef });

/** A source that records what it is asked; `execute` reaches `reached(sql)` rows. */
function fakeWrite(
  keyRounds: string[][][],
  options: { excludesWriters?: boolean; reached?: (sql: string) => number; key?: ColumnDef; dialect?: SourceDialect } = {},
) {
  const log: string[] = [];
  let round = 0;
  const key = options.key ?? column('id', 'INTEGER', 1);
  const write: ChosenRowsWrite = {
    statementType: 'DeleteStmt',
    body: { relation: { relname: 'w', schemaname: 'src', inh: true, relpersistence: 'p' } },
    target: target(key),
    condition: { A_Const: { boolval: { boolval: true } } },
    statementSql: 'DELETE FROM "db"."w"',
    writer: {
      dialect: options.dialect ?? MYSQL_DIALECT,
      async inTransaction<T>(_signal: AbortSignal, work: (t: SourceTransaction) => Promise<T>): Promise<T> {
        log.push('BEGIN');
        try {
          const result = await work({
            excludesWriters: options.excludesWriters ?? false,
            lockRows: async (_table, filter) => void log.push(`LOCK ${filter}`),
            execute: async (sql) => {
              log.push(sql);
              return options.reached?.(sql) ?? sql.match(/\d+/g)?.length ?? 0;
            },
          });
          log.push('COMMIT');
          return result;
        } catch (err) {
          log.push('ROLLBACK');
          throw err;
        }
      },
    },
    selectRows: async () => {
      const keys = keyRounds[Math.min(round++, keyRounds.length - 1)]!;
      log.push(`SELECT -> ${keys.map((k) => k.join('/')).join(',') || 'none'}`);
      return {
        columns: 1,
        rows: (async function* () {
          yield keys;
        })(),
        close: () => undefined,
      };
    },
    signal: new AbortController().signal,
  };
  return { write, log };
}

test('the keys found are locked, then looked for again: stable keys are written by exact key', async () => {
  const { write, log } = fakeWrite([[['1'], ['7']]]);
  assert.deepEqual(await writeChosenRows(write), { count: 2, sql: 'DELETE FROM "db"."w" WHERE `id` IN (1, 7)' });
  assert.deepEqual(log, [
    'BEGIN',
    'SELECT -> 1,7',
    'LOCK `id` IN (1, 7)',
    'SELECT -> 1,7',
    'DELETE FROM "db"."w" WHERE `id` IN (1, 7)',
    'COMMIT',
  ]);
});

test('a key found after the lock is locked in turn; one gone since is not written', async () => {
  const { write, log } = fakeWrite([
    [['1'], ['7']],
    [['1'], ['9']],
    [['1'], ['9']],
  ]);
  assert.equal((await writeChosenRows(write)).count, 2);
  assert.deepEqual(log, [
    'BEGIN',
    'SELECT -> 1,7',
    'LOCK `id` IN (1, 7)',
    'SELECT -> 1,9',
    'LOCK `id` IN (9)',
    'SELECT -> 1,9',
    'DELETE FROM "db"."w" WHERE `id` IN (1, 9)',
    'COMMIT',
  ]);
});

test('rows that keep changing: 409, nothing written', async () => {
  const { write, log } = fakeWrite([[['1']], [['2']], [['3']], [['4']], [['5']]]);
  await assert.rejects(writeChosenRows(write), (err: unknown) => err instanceof ApiError && err.status === 409);
  assert.ok(!log.some((l) => l.startsWith('DELETE')));
  assert.equal(log.at(-1), 'ROLLBACK');
});

test('a source that holds off other writers is read once', async () => {
  const key = column('id', 'BIGINT', 1, 'INTEGER PRIMARY KEY');
  const { write, log } = fakeWrite([[['1']]], { excludesWriters: true, dialect: SQLITE_DIALECT, key });
  assert.equal((await writeChosenRows(write)).count, 1);
  assert.deepEqual(log, ['BEGIN', 'SELECT -> 1', 'DELETE FROM "db"."w" WHERE "id" IN (1)', 'COMMIT']);
});

test('a key that reaches no row at the source rolls the write back (400)', async () => {
  const { write, log } = fakeWrite([[['1'], ['2']]], { reached: () => 1 });
  await assert.rejects(writeChosenRows(write), (err: unknown) => err instanceof ApiError && err.status === 400);
  assert.equal(log.at(-1), 'ROLLBACK');
});

test('MySQL text keys match by their UTF-8 bytes, SQLite ones bytewise and of their class', () => {
  const key = column('k', 'VARCHAR', 1);
  assert.equal(
    MYSQL_DIALECT.exactKeyMatch([key], [['á '], ["O'\\"]]),
    "`k` IN (_utf8mb4 X'C3A120', _utf8mb4 X'4F275C') AND HEX(CONVERT(`k` USING utf8mb4)) IN ('C3A120', '4F275C')",
  );
  assert.equal(SQLITE_DIALECT.exactKeyMatch([key], [['a']]), `typeof("k") = 'text' AND "k" COLLATE BINARY IN ('a')`);
  assert.equal(SQLITE_DIALECT.exactKeyMatch([column('k', 'VARCHAR', 1, 'TEXT')], [['a']]), `"k" COLLATE BINARY IN ('a')`);
  assert.equal(SQLITE_DIALECT.exactKeyMatch([column('n', 'BIGINT', 1, 'INTEGER')], [['5']]), `typeof("n") = 'integer' AND "n" IN (5)`);
  assert.equal(SQLITE_DIALECT.exactKeyMatch([column('n', 'BIGINT', 1, 'INTEGER PRIMARY KEY')], [['5']]), `"n" IN (5)`);
  assert.equal(MYSQL_DIALECT.exactKeyMatch([column('d', 'DATE', 1)], [['2025-01-01']]), null);
  assert.equal(
    MYSQL_DIALECT.exactKeyMatch(
      [column('a', 'INTEGER', 1), column('b', 'BIGINT', 2)],
      [
        ['1', '2'],
        ['3', '4'],
      ],
    ),
    '(`a` IN (1) AND `b` IN (2)) OR (`a` IN (3) AND `b` IN (4))',
  );
});
