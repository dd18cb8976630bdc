/**
 * Reads run together (exec/read-together.ts): the shipped tables of a statement are read at the
 * same time, and the first that fails or gives up stops the others.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readTogether } from '../../src/engine/exec/read-together.js';

/** A read that resolves with `value` after `ms`, or rejects with its signal's reason when stopped first. */
const read =
  <T>(value: T, ms: number, seen: AbortSignal[] = []) =>
  (signal: AbortSignal) =>
    new Promise<T>((resolve, reject) => {
      seen.push(signal);
      const timer = setTimeout(() => resolve(value), ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('stopped'));
      });
    });

test('every read done: their results in order', async () => {
  assert.deepEqual(await readTogether([read('a', 20), read('b', 1), read('c', 5)], new AbortController().signal), ['a', 'b', 'c']);
});

test('one gives up (null): the others are stopped at once, and the answer is null', async () => {
  const seen: AbortSignal[] = [];
  const result = await readTogether<string>([read('slow', 5_000, seen), read(null, 5)], new AbortController().signal);
  assert.equal(result, null);
  assert.ok(seen[0]!.aborted, 'the slow read was stopped, not waited for');
});

test("one fails: its error is thrown, not the stopped reads' errors", async () => {
  const seen: AbortSignal[] = [];
  const failing = () => new Promise<string>((_, reject) => setTimeout(() => reject(new Error('source down')), 5));
  await assert.rejects(readTogether([read('slow', 5_000, seen), failing], new AbortController().signal), /source down/);
  assert.ok(seen[0]!.aborted);
});

test('the request cancelled: its reason is thrown', async () => {
  const request = new AbortController();
  setTimeout(() => request.abort(new Error('client went away')), 5);
  const reason = (signal: AbortSignal) => new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  await assert.rejects(readTogether([reason, reason], request.signal), /client went away/);
});
