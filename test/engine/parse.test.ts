import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ApiError } from '../../src/errors.js';
import { initParser, lineAndColumn, parseStatement, SYNTAX_ERROR_TITLE } from '../../src/engine/front/parse.js';

before(() => initParser());

const failure = (sql: string): ApiError => {
  try {
    parseStatement(sql);
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err;
  }
  assert.fail(`expected ${sql} to fail`);
};

test('line and column of an offset', () => {
  assert.deepEqual(lineAndColumn('select\n  x from', 0), { line: 1, column: 1 });
  assert.deepEqual(lineAndColumn('select\n  x from', 9), { line: 2, column: 3 });
});

test('a syntax error is a 400 with the parser message and its position', () => {
  const err = failure('SELECT *\nFROM t WHERE (a = 1');
  assert.equal(err.status, 400);
  assert.equal(err.title, SYNTAX_ERROR_TITLE);
  assert.match(err.description, /syntax error at end of input \(line 2, column \d+\)/);
  assert.match(err.hint ?? '', /ends too early/);
});

test('the position points at the offending token', () => {
  const err = failure('SELECT a,\n  FROM t');
  assert.match(err.description, /at or near "FROM" \(line 2, column 3\)/);
  assert.match(err.hint ?? '', /trailing comma/);
});

test('exactly one statement is accepted', () => {
  assert.match(failure('SELECT 1; SELECT 2').description, /2 statements/);
  assert.match(failure('   ').description, /no SQL statement/);
  assert.equal(parseStatement('SELECT 1;').stmts?.length, 1);
});
