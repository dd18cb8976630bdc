import assert from 'node:assert/strict';
import fs from 'node:fs';
import { before, test } from 'node:test';
import { ApiError } from '../../src/errors.js';
import { initParser, lineAndColumn, parseStatement, SYNTAX_ERROR_TITLE } from '../../src/engine/front/parse.js';
import { INLINE_BYTES, parseInWorker, stopParseWorker } from '../../src/engine/front/parse-pool.js';
import { DEFAULT_STATEMENT_SIZE } from '../../src/engine/front/statement-size.js';

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

/** The nice value of each thread of this process (Linux). */
const niceOfThreads = (): Map<number, number> =>
  new Map(
    fs.readdirSync('/proc/self/task').map((tid) => {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // After the command name come the fields from the state (3rd) on: nice is the 19th.
      return [Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    }),
  );

test(
  'long statements are parsed by a worker thread at the lowest CPU priority; the main thread keeps its own',
  { skip: process.platform !== 'linux' },
  async () => {
    const before = niceOfThreads();
    const sql = `SELECT 1 WHERE 1 IN (${Array.from({ length: 2000 }, (_, i) => i).join(',')})`;
    assert.ok(sql.length > INLINE_BYTES);
    // The worker never keeps the process alive (parse-pool.ts); this test waits for it.
    const alive = setInterval(() => {}, 1000);
    try {
      const tree = await parseInWorker(sql, DEFAULT_STATEMENT_SIZE);
      assert.equal(tree.stmts?.length, 1);
      const added = [...niceOfThreads()].filter(([tid]) => !before.has(tid));
      assert.ok(
        added.some(([, nice]) => nice === 19),
        `a new thread at nice 19: ${JSON.stringify(added)}`,
      );
      assert.equal(niceOfThreads().get(process.pid), before.get(process.pid));
    } finally {
      clearInterval(alive);
      await stopParseWorker();
    }
  },
);
