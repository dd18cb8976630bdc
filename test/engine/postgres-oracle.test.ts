/**
 * PostgreSQL as the oracle. Every expression and statement of the corpus (postgres-corpus.ts) is
 * answered by PostgreSQL itself and by vdb, over constants and over the same table held in each
 * kind of source (corpus-tables.ts), and each answer is one of:
 *  - same: the same column names, the same types and the same JSON text of every value
 *    (1.5 and 1.50 differ, as PostgreSQL shows them differently);
 *  - refused: a 400 saying what is not supported;
 *  - error: any other failure (counted, reported);
 *  - silent difference: another answer without an error. There must be none.
 * Each run reports its counts; the share answered as PostgreSQL does may not fall below its floor.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oracleSession } from './oracle-session.js';
import { EXPRESSIONS, FAILING, STATEMENTS, TABLE_STATEMENTS } from './postgres-corpus.js';
import { KNOWN_SILENT } from './postgres-known-differences.js';
import { compareAnswers, type Answer } from './postgres-answers.js';

const session = oracleSession();
const oracle = (sql: string): Promise<Answer> => session.answer(sql);

/** beyond: PostgreSQL refuses the statement (over MariaDB's types, say) and vdb answers it. */
type Verdict = 'same' | 'refused' | 'error' | 'silent' | 'beyond';

const vdb = (sql: string) => session.vdb(sql);

/** A 400 that says what is not supported (the allow-list's and the translations' refusals). */
const isRefusal = (body: string) => /not (available|supported)/i.test(body);

interface Run {
  name: string;
  counts: Record<Verdict, number>;
  silent: string[];
  errors: string[];
  beyond: string[];
  refused: string[];
}

async function judge(run: Run, sql: string, pgSql: string = sql): Promise<void> {
  const expected = await oracle(pgSql).catch((err: Error) => err);
  const actual = await vdb(sql);
  let verdict: Verdict;
  let why = '';
  if (expected instanceof Error) {
    // PostgreSQL refuses it (over MariaDB's types, say): vdb must refuse it too.
    verdict = actual.status === 400 ? 'refused' : actual.answer ? 'beyond' : 'error';
    why = `PostgreSQL: ${expected.message}; vdb: ${actual.status} ${actual.body.slice(0, 200)}`;
  } else if (actual.status === 400 && isRefusal(actual.body)) verdict = 'refused';
  else if (!actual.answer) {
    verdict = 'error';
    why = `${actual.status} ${actual.body.slice(0, 300)}`;
  } else {
    const difference = compareAnswers(expected, actual.answer, !/ORDER BY/i.test(sql));
    verdict = difference ? 'silent' : 'same';
    why = difference ?? '';
  }
  run.counts[verdict]++;
  if (verdict === 'silent') run.silent.push(`${sql}\n    ${why}`);
  if (verdict === 'error') run.errors.push(`${sql}\n    ${why}`);
  if (verdict === 'beyond') run.beyond.push(`${sql}\n    ${why}`);
  if (verdict === 'refused') run.refused.push(sql);
}

const newRun = (name: string): Run => ({
  name,
  counts: { same: 0, refused: 0, error: 0, silent: 0, beyond: 0 },
  silent: [],
  errors: [],
  beyond: [],
  refused: [],
});

function report(run: Run): string {
  const total = Object.values(run.counts).reduce((a, b) => a + b, 0);
  const share = (n: number) => `${((100 * n) / total).toFixed(1)}%`;
  const { same, refused, error, silent, beyond } = run.counts;
  return [
    `${run.name}: ${total} statements; same ${same} (${share(same)}), refused ${refused} (${share(refused)}), error ${error} (${share(error)}), answered where PostgreSQL refuses ${beyond}, SILENT DIFFERENCE ${silent}`,
    ...run.errors.map((e) => `  error: ${e}`),
    ...run.beyond.map((e) => `  beyond: ${e}`),
    ...run.refused.map((e) => `  refused: ${e}`),
    ...run.silent.map((e) => `  SILENT: ${e}`),
  ].join('\n');
}

/** Lowest share of same answers each run may give (raise it as translations land). */
const FLOORS: Record<string, number> = { constants: 0.985, pg: 0.99, my: 0.99, lite: 0.99, csv: 0.99 };

function check(run: Run): void {
  console.log(report(run));
  const total = Object.values(run.counts).reduce((a, b) => a + b, 0);
  const known = KNOWN_SILENT[run.name] ?? [];
  const silent = run.silent.map((s) => s.split('\n')[0]!);
  assert.deepEqual(
    { new: silent.filter((s) => !known.includes(s)), fixed: known.filter((s) => !silent.includes(s)) },
    { new: [], fixed: [] },
    `${run.name}: a silent difference that is not known yet (new), or a known one that is gone (fixed: remove it from the list)`,
  );
  assert.ok(run.counts.same / total >= FLOORS[run.name]!, `${run.name}: share of same answers below ${FLOORS[run.name]}`);
}

test(`over constants: ${EXPRESSIONS.length} expressions and ${STATEMENTS.length} statements as PostgreSQL answers them, or a 400`, async () => {
  const run = newRun('constants');
  for (const entry of EXPRESSIONS) {
    const [expression, from = ''] = entry.split(' ;; ');
    await judge(run, `SELECT ${expression} AS v ${from}`);
  }
  for (const sql of STATEMENTS) await judge(run, sql);
  check(run);
});

for (const source of ['pg', 'my', 'lite', 'csv']) {
  test(`over the table held in source ${source}: ${TABLE_STATEMENTS.length} statements as PostgreSQL answers them`, async () => {
    const run = newRun(source);
    for (const template of TABLE_STATEMENTS)
      await judge(run, template.replaceAll('{t}', `${source}.vals`), template.replaceAll('{t}', session.oracleTable(source)));
    check(run);
  });
}

test('what PostgreSQL refuses, vdb refuses too', async () => {
  for (const sql of FAILING) {
    await assert.rejects(session.postgres().query(sql), sql);
    const answer = await vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.body}`);
  }
});

test('a negative substring length fails as in PostgreSQL', async () => {
  await assert.rejects(session.postgres().query("SELECT substr('hello', 2, -1)"), /negative substring length not allowed/);
  const answer = await vdb("SELECT substr('hello', 2, -1)");
  assert.equal(answer.status, 400);
  assert.match(answer.body, /negative substring length not allowed/);
});
