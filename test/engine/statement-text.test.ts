/** The lexer that lifts a statement's literals out of its text (statement-text.ts), and how its values are linked to a parsed statement's constants. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kindOfText, learnSlots, liftLiterals, slotConstants, variantValues } from '../../src/engine/front/statement-text.js';

const keyOf = (sql: string) => liftLiterals(sql)?.key ?? null;

test('numbers and plain strings are lifted: one key for other values of the same kinds', () => {
  const lifted = liftLiterals("SELECT * FROM pg.t WHERE id = 17 AND name = 'a b' AND amount < 12.50");
  assert.deepEqual(
    lifted?.literals.map((l) => [l.text, l.kind]),
    [
      ['17', 'i'],
      ["'a b'", 's'],
      ['12.50', 'f2.2'],
    ],
  );
  assert.equal(keyOf('SELECT * FROM t WHERE id = 17'), keyOf('SELECT * FROM t WHERE id = 2147483647'));
  assert.equal(keyOf("SELECT * FROM t WHERE d = date '2024-01-01'"), keyOf("SELECT * FROM t WHERE d = date '2025-12-31'"));
  // Another kind is another key: int4, a larger integer (a numeral), a decimal's digits, a string.
  const keys = ['id = 1', 'id = 2147483648', 'id = 1.5', 'id = 1.25', "id = '1'", 'id = true'].map((w) =>
    keyOf(`SELECT 1 FROM t WHERE ${w}`),
  );
  assert.equal(new Set(keys).size, keys.length);
  // Names, quoted names and parameters are part of the key.
  assert.notEqual(keyOf('SELECT a1 FROM t'), keyOf('SELECT a2 FROM t'));
  assert.notEqual(keyOf('SELECT "x 1" FROM t'), keyOf('SELECT "x 2" FROM t'));
  assert.notEqual(keyOf('SELECT $1, $2'), keyOf('SELECT $2, $1'));
  assert.equal(keyOf("SELECT a FROM t WHERE b = 'x' AND c = 5"), 'SELECT a FROM t WHERE b = \u0001s\u0001 AND c = \u0001i\u0001');
  assert.deepEqual(
    [...liftLiterals('SELECT $1, $2, $1')!.placeholders],
    [
      [1, 2],
      [2, 1],
    ],
  );
});

test('anything the lexer cannot read with certainty is left to the parser', () => {
  for (const sql of [
    "SELECT E'a\\n'",
    "SELECT e'a'",
    "SELECT B'101'",
    "SELECT X'1F'",
    "SELECT N'a'",
    "SELECT U&'d\\0061t'",
    "SELECT 'it''s'",
    "SELECT 'a\\b'",
    "SELECT 'a'\n'b'",
    'SELECT $$a$$',
    'SELECT $tag$a$tag$',
    'SELECT 1 -- comment',
    'SELECT /* comment */ 1',
    'SELECT 1e5',
    'SELECT .5',
    'SELECT 1.',
    'SELECT 0x1F',
    'SELECT 1_000',
    'SELECT ünïcode FROM t',
    "SELECT 'unterminated",
    'SELECT "unterminated',
    'SELECT 1\u0000',
  ])
    assert.equal(liftLiterals(sql), null, sql);
});

test('a number after a sign, or with leading zeros, stays in the key as written', () => {
  for (const sql of ['SELECT -5', 'SELECT x - 5 FROM t', 'SELECT +5', 'SELECT 007']) {
    const lifted = liftLiterals(sql)!;
    assert.deepEqual(lifted.literals, [], sql);
    assert.equal(lifted.key, sql);
  }
  assert.notEqual(keyOf('SELECT -5'), keyOf('SELECT -6'));
  // A placeholder inside a string is the string's text.
  assert.deepEqual(liftLiterals("SELECT '$1'")!.placeholders.size, 0);
});

test('constants are linked to values only where each value stands exactly where it occurs', () => {
  assert.deepEqual(learnSlots(['17', "'a'"], ["'a'", '17'], [1, 1]), [1, 0]);
  // A constant the grammar makes (FETCH FIRST ROW ONLY is a 1) or one written after a sign: fixed.
  assert.deepEqual(learnSlots(['5', '1'], ['5'], [1]), [0, '1']);
  slotConstants([0, '1'], ['9']).forEach((c, i) => assert.equal(c, ['9', '1'][i]));
  // Two values alike: which is which cannot be told.
  assert.equal(learnSlots(['1', '1'], ['1', '1'], [1, 1]), null);
  // A value seen more often than it occurs (it coincides with a constant from elsewhere), or never.
  assert.equal(learnSlots(['1', '1'], ['1'], [1]), null);
  assert.equal(learnSlots([], ['1'], [1]), null);
  // A parameter used twice is two constants.
  assert.deepEqual(learnSlots(['3', '3'], ['3'], [2]), [0, 0]);
});

test('variant values are of the same kind and unlike the values', () => {
  const kinds = ['i', 'f1.2', 'f10', 'f12', 's', 'b', 'b'];
  const values = ['1', '1.25', '3000000000', '123456789012', "'x'", 'true', 'false'];
  for (let round = 0; round < 50; round++) {
    const variants = variantValues(kinds, values)!;
    assert.deepEqual(
      variants.map((v) => kindOfText(v)),
      kinds,
      variants.join(' '),
    );
    variants.forEach((v, i) => assert.notEqual(v, values[i]));
    assert.equal(new Set(variants).size, variants.length);
    // A decimal's variant reads back as written (a parameter's 1.50 would be 1.5).
    assert.equal(String(Number(variants[1])), variants[1]);
  }
  assert.equal(variantValues(['b', 'b', 'b'], ['true', 'false', 'true']), null);
});
