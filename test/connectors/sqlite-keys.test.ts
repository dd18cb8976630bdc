/**
 * Dependent-join keys for SQLite: integer keys go as one JSON literal read by json_each, and
 * select the same rows as the list of literals, whatever SQLite's dynamic typing put in the
 * column (text that reads as a number, text that does not, reals, NULL, integers beyond 2^53).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { ColumnDef } from '../../src/catalog/types.js';
import { SourceDialect } from '../../src/connectors/dialect.js';
import { SQLITE_DIALECT } from '../../src/connectors/sqlite/dialect.js';

const column = (type: string): ColumnDef => ({ name: 'k', nameInSource: 'k', type, nullable: true, position: 2 });

test('integer keys: one json_each literal, the same rows as the list', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-sqlite-keys-'));
  const db = new Database(path.join(dir, 'keys.db'));
  try {
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER)');
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    const values: unknown[] = [1, -5, 9007199254740993n, '7', ' 8', 'abc', 2.5, 3.0, null, 0, 123456789012345678n];
    values.forEach((value, i) => insert.run(i + 1, value));
    const keys = ['-5', '0', '1', '3', '7', '8', '9007199254740993', '123456789012345678', '42'];
    const filter = SQLITE_DIALECT.keyInList(column('BIGINT'), keys)!;
    assert.match(filter, /^"k" IN \(SELECT value FROM json_each\('\[-5,0,1,3,7,8,9007199254740993,123456789012345678,42\]'\)\)$/);
    const list = SourceDialect.prototype.keyInList.call(SQLITE_DIALECT, column('BIGINT'), keys)!;
    assert.match(list, /^"k" IN \(-5, 0, 1/);
    const ids = (where: string) => db.prepare(`SELECT id FROM t WHERE ${where} ORDER BY id`).pluck().all();
    assert.deepEqual(ids(filter), ids(list));
    assert.deepEqual(ids(filter), [1, 2, 3, 4, 5, 8, 10, 11]);
    // Text keys and numbers beyond 18 digits keep the list.
    assert.match(SQLITE_DIALECT.keyInList(column('VARCHAR'), ['a'])!, /^"k" IN \('a'\)$/);
    assert.match(SQLITE_DIALECT.keyInList(column('BIGINT'), ['1234567890123456789'])!, /^"k" IN \(1234567890123456789\)$/);
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
