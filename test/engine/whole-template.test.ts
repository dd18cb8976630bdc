/**
 * The pieces of whole-statement templates (plan/whole-template.ts) on their own: which constants
 * are filled in, which may be parameters and of which type, and templates that would not give
 * the ordinary path's text back are refused.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { deparseSync } from 'pgsql-deparser';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { constantTexts, fill, markedTree, parameterized, templateOf } from '../../src/engine/plan/whole-template.js';

before(async () => {
  await initParser();
});

/** The template of a statement as the engine makes one, deparsing instead of planning. */
function templateFor(sql: string) {
  const tree = parseStatement(sql);
  const constants = constantTexts(tree)!;
  const marked = markedTree(tree);
  const template = templateOf(deparseSync(marked.tree), constants, deparseSync(tree));
  return { constants, template: template && { ...template, parameters: marked.parameters } };
}

test('constants are written as the deparser writes them; strings needing escapes and negative numbers are not', () => {
  assert.deepEqual(constantTexts(parseStatement("SELECT 1, 2.50, 3000000000, true, false, 'x', NULL")), [
    '1',
    '2.50',
    '3000000000',
    'true',
    'false',
    "'x'",
  ]);
  assert.equal(constantTexts(parseStatement("SELECT 'it''s'")), null);
  assert.equal(constantTexts(parseStatement("SELECT 'a\\b'")), null);
  assert.equal(constantTexts(parseStatement('SELECT -1')), null);
});

test('a template filled with other constants gives what the deparser writes for them', () => {
  const { template } = templateFor("SELECT a FROM t WHERE id = 5 AND name = 'x' AND ok = true LIMIT 10");
  assert.ok(template);
  const other = parseStatement("SELECT a FROM t WHERE id = 77 AND name = 'yz' AND ok = false LIMIT 3");
  assert.equal(fill(template, constantTexts(other)!), deparseSync(other));
});

test('a template that does not give the ordinary text back is refused', () => {
  const tree = parseStatement('SELECT a FROM t WHERE id = 5');
  const marked = deparseSync(markedTree(tree).tree);
  assert.equal(templateOf(marked, ['5'], 'SELECT a FROM t WHERE id = 6'), null);
  assert.equal(templateOf(marked, [], 'SELECT a FROM t WHERE id = 5'), null, 'a hole without a constant');
});

test('numbers and booleans become parameters of the type PostgreSQL gives the constant itself', () => {
  const { template, constants } = templateFor(
    'SELECT a * 2.5 FROM t WHERE id = 5 OR big = 3000000000 OR huge = 99999999999999999999 OR ok = true',
  );
  assert.ok(template);
  const made = parameterized(template, constants)!;
  assert.deepEqual(
    { ...made, sql: made.sql.replace(/\s+/g, ' ') },
    {
      sql: 'SELECT a * $1::numeric FROM t WHERE id = $2::int4 OR big = $3::int8 OR huge = $4::numeric OR ok = $5::bool',
      values: ['2.5', '5', '3000000000', '99999999999999999999', 'true'],
    },
  );
});

test('strings become untyped parameters, typed by where they stand as PostgreSQL types the constant', () => {
  const { template, constants } = templateFor("SELECT a FROM t WHERE name = 'x' AND day > '2024-01-01'::date AND id = 5");
  assert.ok(template);
  const made = parameterized(template, constants)!;
  assert.deepEqual(
    { ...made, sql: made.sql.replace(/\s+/g, ' ') },
    { sql: 'SELECT a FROM t WHERE name = $1 AND day > $2::date AND id = $3::int4', values: ['x', '2024-01-01', '5'] },
  );
  // One untyped parameter in two places would take one type for both: each string stays its own constant.
  const twice = parameterized({ parts: ['SELECT ', ' = ', ''], holes: [0, 0], parameters: [true] }, ["'x'"]);
  assert.equal(twice, null);
});

test('strings cast to a type with modifiers, type modifiers and ORDER BY, GROUP BY and DISTINCT ON items stay written out', () => {
  // interval '1' day reads '1' as days: as a parameter it would be read as an interval first (1 second).
  assert.deepEqual(markedTree(parseStatement("SELECT a FROM t WHERE d = interval '1' day")).parameters, [false, false]);
  const cases = [
    "SELECT a FROM t WHERE b = '1'::bit(3)",
    'SELECT CAST(a AS numeric(10, 2)) FROM t',
    'SELECT a, b FROM t ORDER BY 2',
    'SELECT a, count(*) FROM t GROUP BY 1',
    'SELECT a FROM t GROUP BY ROLLUP (1)',
    'SELECT DISTINCT ON (1) a FROM t',
    'SELECT string_agg(a, b ORDER BY 1) FROM t',
    'SELECT a FROM t ORDER BY a + 1',
  ];
  for (const sql of cases) {
    const { template, constants } = templateFor(sql);
    assert.ok(template, sql);
    assert.equal(parameterized(template, constants), null, sql);
  }
  // LIMIT and OFFSET take parameters.
  const { template, constants } = templateFor('SELECT a FROM t WHERE id = 5 LIMIT 7 OFFSET 2');
  assert.deepEqual(parameterized(template!, constants)?.values, ['5', '7', '2']);
});
