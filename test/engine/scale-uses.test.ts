/**
 * plan/scale-uses.ts: which columns a statement shows or computes with (their scale matters),
 * and which it only compares, counts, orders, groups or casts to a fixed scale.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { scaleUses } from '../../src/engine/plan/scale-uses.js';

before(() => initParser());

const shown = (sql: string, column = 'n') => scaleUses(parseStatement(sql)).shown(column);

test('only compared, counted, ordered, grouped or cast to a fixed scale: not shown', () => {
  for (const sql of [
    'SELECT id FROM t WHERE n > 2 AND n <> 1.5 ORDER BY n',
    'SELECT id FROM t WHERE n BETWEEN 1 AND 3 OR n IN (1, 2) OR n IS NULL OR n IS DISTINCT FROM 3',
    'SELECT count(n), count(DISTINCT n) FROM t GROUP BY n',
    'SELECT n::numeric(10,2), n::float8, CAST(n AS integer) FROM t',
    'SELECT a.id FROM t a JOIN u b ON a.n = b.m',
    'SELECT id FROM t WHERE n IN (SELECT m FROM u)',
    'SELECT row_number() OVER (PARTITION BY n ORDER BY n) FROM t',
    'SELECT CASE WHEN n > 1 THEN 1 ELSE 0 END FROM t',
  ])
    assert.equal(shown(sql), false, sql);
});

test('shown or computed with: shown', () => {
  for (const sql of [
    'SELECT n FROM t',
    'SELECT t.n FROM t',
    'SELECT n + 1 FROM t',
    'SELECT sum(n), min(n) FROM t',
    'SELECT id FROM t WHERE n + 1 > 2',
    'SELECT n::text FROM t',
    'SELECT n::numeric FROM t',
    'SELECT coalesce(n, 0) FROM t',
    'SELECT DISTINCT ON (n) id FROM t',
    // Every column: a star, a whole row, a table renamed with column aliases.
    'SELECT * FROM t',
    'SELECT t.* FROM t',
    'SELECT row_to_json(t) FROM t',
    'SELECT x FROM t AS s(x)',
    // A comparison inside a value that is shown.
    'SELECT CASE WHEN id > 1 THEN n END FROM t',
  ])
    assert.equal(shown(sql), true, sql);
  // Another column's use does not count.
  assert.equal(shown('SELECT m FROM t WHERE n > 1'), false);
});
