/**
 * The result formats' pieces without a server: Accept negotiation (q-values, wildcards, order),
 * the reading of JSON row texts, CSV fields, and Arrow's dates before year 1 and infinities.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tableFromIPC } from 'apache-arrow';
import { negotiateFormat } from '../../src/results/formats.js';
import { arrayRowValues, rowTexts } from '../../src/results/json-scan.js';
import { csvField, csvLines } from '../../src/results/csv.js';
import { ArrowStreamWriter, daysFromCivil } from '../../src/results/arrow.js';
import { CsvLineEnds } from '../../src/connectors/postgres/csv-rows.js';

test('Accept: JSON by default, q-values honoured, the first listed among equals, null when nothing fits', () => {
  const cases: Array<[string | undefined, string | null]> = [
    [undefined, 'json'],
    ['', 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['garbage', 'json'],
    ['text/csv', 'csv'],
    ['TEXT/CSV', 'csv'],
    ['text/*', 'csv'],
    ['text/csv;q=0.5, application/json;q=0.6', 'json'],
    ['text/csv, application/json', 'csv'],
    ['application/json, text/csv', 'json'],
    ['application/x-ndjson;q=0.9, application/vnd.apache.arrow.stream', 'arrow'],
    ['application/vnd.apache.parquet', 'parquet'],
    ['*/*;q=0.1, application/vnd.apache.arrow.stream;q=0.2', 'arrow'],
    ['application/json;q=0, */*', 'csv'],
    ['image/png', null],
    ['text/csv;q=0', null],
    ['*/*;q=0', null],
    ['text/html, application/xml;q=0.9', null],
  ];
  for (const [accept, format] of cases) assert.equal(negotiateFormat(accept), format, String(accept));
});

test('JSON row texts: rows and values split at their own commas only, strings and nesting kept', () => {
  const chunk = '[1,"a,\\"b\\"]",null,[1,[2,3]],{"k":"}"}],[ -1.50 , true ,"",""]';
  assert.deepEqual(arrayRowValues(chunk), [
    ['1', '"a,\\"b\\"]"', 'null', '[1,[2,3]]', '{"k":"}"}'],
    ['-1.50', 'true', '""', '""'],
  ]);
  assert.deepEqual(arrayRowValues('[]'), [[]]);
  assert.deepEqual(rowTexts('{"a":"},{"},{"b":[1,2]}'), ['{"a":"},{"}', '{"b":[1,2]}']);
  assert.deepEqual(arrayRowValues('["\\\\",1]'), [['"\\\\"', '1']], 'a string ending in a backslash');
});

test('CSV: fields quoted only where needed, NULL and the empty string told apart, CRLF', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField(''), '""');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('line\nbreak'), '"line\nbreak"');
  assert.equal(csvField('cr\r'), '"cr\r"');
  assert.equal(csvField(' spaced '), ' spaced ');
  assert.equal(
    csvLines('[1,null,"",["x",2],"é\\u0001"],[2,"null",true,{"a":1},"\\n"]'),
    '1,,"","[""x"",2]",é\u0001\r\n2,null,true,"{""a"":1}","\n"\r\n',
  );
});

test('Arrow: dates and timestamps before year 1, leap days and infinities', () => {
  assert.equal(daysFromCivil(1970, 1, 1), 0);
  assert.equal(daysFromCivil(2000, 1, 1), 10957);
  assert.equal(daysFromCivil(2000, 2, 29), 11016);
  assert.equal(daysFromCivil(1, 1, 1), -719162);
  assert.equal(daysFromCivil(0, 12, 31), -719163, '1 BC is year 0');
  const writer = new ArrowStreamWriter([
    { name: 'd', type: 'DATE' },
    { name: 't', type: 'TIMESTAMP WITH TIME ZONE' },
    { name: 'n', type: 'NUMERIC' },
  ]);
  const rows =
    '["0001-12-31 BC","0001-12-31T23:59:59.5+00:00 BC","1.50"],["infinity","-infinity","NaN"],["2024-02-29","2024-02-29T12:00:00+02:00",null]';
  const table = tableFromIPC(Buffer.concat([writer.write(rows), writer.end()]));
  const days = table.getChild('d')!.data[0]!.values as Int32Array;
  assert.deepEqual([...days.subarray(0, 3)], [-719163, 2147483647, daysFromCivil(2024, 2, 29)]);
  const micros = table.getChild('t')!.data[0]!.values as BigInt64Array;
  assert.deepEqual(
    [...micros.subarray(0, 3)],
    [
      BigInt(-719163 * 86400 + 86399) * 1_000_000n + 500_000n,
      -(2n ** 63n),
      BigInt(daysFromCivil(2024, 2, 29) * 86400 + 10 * 3600) * 1_000_000n,
    ],
  );
  assert.deepEqual([...table.getChild('n')!], ['1.50', 'NaN', null], 'a numeric without scale as its text');
});

test('Arrow: a result without rows still has its schema', () => {
  const writer = new ArrowStreamWriter([{ name: 'x', type: 'INTEGER' }]);
  const table = tableFromIPC(writer.end());
  assert.equal(table.numRows, 0);
  assert.deepEqual(
    table.schema.fields.map((f) => String(f.type)),
    ['Int32'],
  );
});

test("PostgreSQL's CSV: line ends outside quotes become CRLF, across chunks and split characters; rows counted and bounded", () => {
  const csv = Buffer.from('1,"a\nb",x\n2,"say ""é""\r\nz",\n3,,""\n');
  for (let cut = 0; cut <= csv.length; cut++) {
    const lines = new CsvLineEnds(100, () => new Error('too large'));
    const first = lines.convert(csv.subarray(0, cut));
    const second = lines.convert(csv.subarray(cut));
    assert.equal(first.text + second.text + lines.end(), '1,"a\nb",x\r\n2,"say ""é""\r\nz",\r\n3,,""\r\n', `cut at ${cut}`);
    assert.equal(first.rows + second.rows, 3);
    // Whole rows only: each text ends where a row ends.
    for (const { text } of [first, second]) assert.ok(text === '' || text.endsWith('\r\n'), `cut at ${cut}: ${JSON.stringify(text)}`);
  }
  const bounded = new CsvLineEnds(5, () => new Error('too large'));
  assert.equal(bounded.convert(Buffer.from('1,2\n')).rows, 1);
  assert.throws(() => bounded.convert(Buffer.from('123')) && bounded.convert(Buffer.from('456\n')), /too large/);
});

test('Arrow: integers and decimals exact, the short ones read in place and the long ones through BigInt', () => {
  const writer = new ArrowStreamWriter([
    { name: 'i', type: 'BIGINT' },
    { name: 'd0', type: 'DECIMAL(10,0)' },
    { name: 'd', type: 'DECIMAL(38,10)' },
    { name: 'u', type: 'UBIGINT' },
  ]);
  const chunk =
    '[-1,123,-0.5,0],[999999999999999,-5,12345678901234567890.1234567891,18446744073709551615],' +
    '[-9223372036854775808,0,-0.0000000001,9007199254740993],[9007199254740991,null,99999.1,1]';
  const table = tableFromIPC(Buffer.concat([writer.write(chunk), writer.end()]));
  const int64 = table.getChild('i')!.data[0]!.values as BigInt64Array;
  assert.deepEqual([...int64.subarray(0, 4)], [-1n, 999999999999999n, -(2n ** 63n), 9007199254740991n]);
  const unscaled = (name: string) => {
    const words = table.getChild(name)!.data[0]!.values as Uint32Array;
    return [0, 1, 2, 3].map((row) => {
      let n = 0n;
      for (let w = 3; w >= 0; w--) n = (n << 32n) | BigInt(words[row * 4 + w]!);
      return BigInt.asIntN(128, n);
    });
  };
  assert.deepEqual(unscaled('d0').slice(0, 3), [123n, -5n, 0n]);
  assert.equal(table.getChild('d0')!.isValid(3), false);
  assert.deepEqual(unscaled('d'), [-5000000000n, 123456789012345678901234567891n, -1n, 999991000000000n]);
  const uint64 = table.getChild('u')!.data[0]!.values as BigUint64Array;
  assert.deepEqual([...uint64.subarray(0, 4)], [0n, 2n ** 64n - 1n, 9007199254740993n, 1n]);
});

test('Arrow from CSV lines reads as from the JSON rows: quoted fields, doubled quotes, NULL and the empty string', () => {
  const columns = [
    { name: 's', type: 'VARCHAR' },
    { name: 'd', type: 'DATE' },
    { name: 't', type: 'TIMESTAMP WITH TIME ZONE' },
    { name: 'n', type: 'DECIMAL(12,2)' },
    { name: 'b', type: 'BOOLEAN' },
  ];
  const json = new ArrowStreamWriter(columns);
  const csv = new ArrowStreamWriter(columns, 'csv');
  const fromJson = tableFromIPC(
    Buffer.concat([
      json.write(
        '["a,\\"b\\"\\r\\nc","2024-02-29","2024-01-01T10:00:00.5+00:00",-1.50,true],["",null,null,null,false],[null,"0044-03-15 BC","infinity",0.01,null]',
      ),
      json.end(),
    ]),
  );
  const fromCsv = tableFromIPC(
    Buffer.concat([
      csv.write('"a,""b""\r\nc",2024-02-29,2024-01-01T10:00:00.5+00:00,-1.50,true\r\n"",,,,false\r\n,0044-03-15 BC,infinity,0.01,\r\n'),
      csv.end(),
    ]),
  );
  assert.equal(fromCsv.numRows, 3);
  for (const { name } of columns) {
    const a = fromJson.getChild(name)!;
    const b = fromCsv.getChild(name)!;
    for (let row = 0; row < 3; row++) {
      assert.equal(b.isValid(row), a.isValid(row), `${name} ${row} NULL`);
      // Timestamps by their 64-bit values (get() turns infinity into an error).
      const value = (v: typeof a) => String(name === 't' ? (v.data[0]!.values as BigInt64Array)[row] : v.get(row));
      assert.equal(value(b), value(a), `${name} ${row}`);
    }
  }
  assert.equal(fromCsv.getChild('s')!.get(1), '', 'the empty string, not NULL');
});
