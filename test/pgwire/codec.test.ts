/**
 * The DataRows of a chunk of rows written at once (codec.ts, dataRows): the same bytes as the
 * rows written one by one, ASCII or not, with NULLs and empty texts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataRow, dataRows } from '../../src/pgwire/codec.js';

test('a chunk of DataRows is the same bytes as its rows one by one', () => {
  const long = 'x'.repeat(70_000);
  const chunks: Array<Array<Array<string | null>>> = [
    [
      ['1', 'item 1', '4.50', null, ''],
      ['2', null, '', '2024-01-03 00:00:00', long],
    ],
    [
      ['3', 'Zürich', '€ 5'],
      ['4', null, '日本'],
    ],
    [[]],
    [],
  ];
  for (const rows of chunks) assert.deepEqual(dataRows(rows), Buffer.concat(rows.map(dataRow)));
});
