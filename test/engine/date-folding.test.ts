/**
 * Constant date arithmetic folded for the sources (plan/date-folding.ts), against PostgreSQL
 * itself: for every date and interval below, the folded date is PostgreSQL's `date + interval`
 * (or `-`), which must be a midnight timestamp; and what is not folded is left untouched.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import type { Node } from '@pgsql/types';
import type { ColumnDef } from '../../src/catalog/types.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { foldDateArithmetic } from '../../src/engine/plan/date-folding.js';
import { asKind, statementOf } from '../../src/engine/tree/ast.js';
import { pgClient } from '../connectors/db.js';

let client: pg.Client;

before(async () => {
  await initParser();
  client = await pgClient();
});

after(async () => {
  await client?.end();
});

const DATE_COLUMN = { name: 'd', type: 'DATE' } as ColumnDef;
const TEXT_COLUMN = { name: 't', type: 'VARCHAR' } as ColumnDef;
const columns = (fields: string[]) => [DATE_COLUMN, TEXT_COLUMN].find((c) => c.name === fields[fields.length - 1]);

function whereOf(condition: string): Node {
  return asKind(statementOf(parseStatement(`SELECT 1 FROM t WHERE ${condition}`)), 'SelectStmt')!.whereClause!;
}

/** The date the comparison's right side was folded to, or null when it was left as it is. */
function foldedRight(expression: string): string | null {
  const condition = whereOf(`d < ${expression}`);
  const folded = foldDateArithmetic(condition, columns);
  if (folded === condition) return null;
  const cast = asKind(asKind(folded, 'A_Expr')!.rexpr, 'TypeCast');
  return cast ? String(asKind(cast.arg, 'A_Const')?.sval?.sval) : null;
}

const DATES = [
  '1994-01-01',
  '1992-01-31',
  '1996-02-29',
  '1998-12-01',
  '2000-02-28',
  '1900-03-01',
  '0001-01-01',
  '2024-12-31',
  '1999-08-31',
];
const INTERVALS = [
  "interval '1' year",
  "interval '3' month",
  "interval '90' day",
  "interval '1 year'",
  "interval '1 month'",
  "interval '13 months'",
  "interval '2 weeks'",
  "interval '1 year 1 month 1 day'",
  "interval '-1 month'",
  "interval '+45 days'",
  "interval '120 mons'",
  "interval '0 days'",
];

test("folded dates are PostgreSQL's date ± interval, for month ends, leap days and year boundaries", async () => {
  const cases: Array<{ expression: string; folded: string | null }> = [];
  for (const date of DATES) {
    for (const interval of INTERVALS) {
      for (const op of ['+', '-']) {
        const expression = `date '${date}' ${op} ${interval}`;
        cases.push({ expression, folded: foldedRight(expression) });
      }
    }
  }
  // An interval on the left of + as well.
  cases.push({ expression: "interval '1 month' + date '1992-01-31'", folded: foldedRight("interval '1 month' + date '1992-01-31'") });
  const sql = `SELECT ${cases.map((c, i) => `to_char(${c.expression}, 'YYYY-MM-DD HH24:MI:SS') AS c${i}`).join(', ')}`;
  const row = (await client.query<Record<string, string>>(sql)).rows[0]!;
  for (const [i, c] of cases.entries()) {
    const answer = row[`c${i}`]!;
    // Year 1 minus a month is BC: not folded (PostgreSQL answers a BC date).
    if (c.folded === null) {
      assert.match(c.expression, /^date '0001-01-01' /, `${c.expression} was not folded (PostgreSQL: ${answer})`);
      continue;
    }
    assert.equal(`${c.folded} 00:00:00`, answer, c.expression);
  }
});

test('what is not folded stays as it is: hours, timestamps, a text column, other operators, unknown units', () => {
  for (const expression of [
    "date '1994-01-01' + interval '1 hour'",
    "date '1994-01-01' + interval '1 day 2 hours'",
    "timestamp '1994-01-01 00:00' + interval '1' year",
    "date '1994-01-01' + 7",
    "date '1994-1-1' + interval '1' year",
    "date '1994-01-01' + interval '1' hour",
    "date '1994-01-01' * interval '1' year",
    "interval '1' year - date '1994-01-01'",
    "date '1994-01-01' + interval '1 fortnight'",
    "date '1994-02-30' + interval '1 day'",
  ]) {
    assert.equal(foldedRight(expression), null, expression);
  }
  const onText = whereOf("t < date '1994-01-01' + interval '1' year");
  assert.equal(foldDateArithmetic(onText, columns), onText);
  const notComparison = whereOf("d + interval '1' year < date '1995-01-01'");
  assert.equal(foldDateArithmetic(notComparison, columns), notComparison);
});

test('BETWEEN bounds and a column on the right are folded too', () => {
  const between = asKind(
    foldDateArithmetic(whereOf("d BETWEEN date '1994-01-31' + interval '1 month' AND date '1995-01-01' - interval '1 day'"), columns),
    'A_Expr',
  )!;
  const bounds = asKind(between.rexpr, 'List')!.items!.map((b) => asKind(asKind(b, 'TypeCast')!.arg, 'A_Const')!.sval!.sval);
  assert.deepEqual(bounds, ['1994-02-28', '1994-12-31']);
  const left = asKind(foldDateArithmetic(whereOf("date '1994-01-01' + interval '3' month > d"), columns), 'A_Expr')!;
  assert.equal(asKind(asKind(left.lexpr, 'TypeCast')!.arg, 'A_Const')!.sval!.sval, '1994-04-01');
});
