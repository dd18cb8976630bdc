/** A result's own headers stay within what clients and proxies take (RESULT_HEADER_BYTES). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESULT_HEADER_BYTES, warningsHeader } from '../../src/server/result-delivery.js';

test('warnings: none is no header; a few are joined as they are', () => {
  assert.equal(warningsHeader([]), null);
  assert.equal(warningsHeader(['a: 1 value(s)', 'b: 2 value(s)']), 'a: 1 value(s); b: 2 value(s)');
});

test('warnings past the budget are cut, end with their count, and never split an escape', () => {
  const warnings = Array.from(
    { length: 400 },
    (_, i) => `lab.readings.tåken_${i}: 1 value(s) are not valid DATE and were returned as NULL`,
  );
  const header = warningsHeader(warnings)!;
  assert.ok(header.length <= RESULT_HEADER_BYTES, `${header.length} bytes`);
  assert.match(header, / \(and more: 400 warnings in all\)$/);
  assert.match(header, /^lab\.readings\.t\\u00e5ken_0: /);
  assert.doesNotMatch(header.replace(/\\u[0-9a-f]{4}/g, ''), /\\/, 'no half escape is left');
  assert.match(header, /^[\x20-\x7e]+$/);
});
