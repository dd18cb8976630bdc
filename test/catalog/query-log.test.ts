/** The query log's retention: at most maxEntries, none older than maxAgeMs, whatever order they were trimmed in. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueryLog } from '../../src/catalog/query-log.js';

const ok = { rows: 1, status: 'ok' as const, error: null, sourceQueries: null };

test('the log keeps the newest maxEntries entries', () => {
  const recorded: number[] = [];
  const log = new QueryLog({ maxEntries: 10, maxAgeMs: 60_000, onRecord: (entry) => recorded.push(entry.id) });
  for (let i = 0; i < 37; i++) log.begin('u', `SELECT ${i}`)(ok);
  assert.deepEqual(
    log.list().map((e) => e.statement),
    Array.from({ length: 10 }, (_, i) => `SELECT ${27 + i}`),
  );
  assert.equal(recorded.length, 37, 'every statement is told to the metrics');
});

test('entries older than maxAgeMs are gone when the log is read', () => {
  let now = 1_000_000;
  const log = new QueryLog({ maxEntries: 100, maxAgeMs: 10_000 }, () => now);
  log.begin('u', 'SELECT old')(ok);
  now += 5_000;
  log.begin('u', 'SELECT middle')(ok);
  now += 6_000;
  log.begin('u', 'SELECT new')(ok);
  assert.deepEqual(
    log.list().map((e) => e.statement),
    ['SELECT middle', 'SELECT new'],
  );
  now += 60_000;
  assert.deepEqual(log.list(), []);
  log.begin('u', 'SELECT again')(ok);
  assert.deepEqual(
    log.list().map((e) => e.statement),
    ['SELECT again'],
  );
});
