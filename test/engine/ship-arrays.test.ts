/** The shipped arrays written straight from source rows (exec/ship-arrays.ts): only values no cast can change. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ColumnDef } from '../../src/catalog/types.js';
import { ArrayBuilder, arrayElement, elementWriter } from '../../src/engine/exec/ship-arrays.js';

const column = (type: string, name = 'c'): ColumnDef => ({ name, nameInSource: name, type, nullable: true, position: 1 });

test('integers: in the column range as they came; other text is not exact', () => {
  const int = elementWriter(column('INTEGER'))!;
  assert.equal(int('42'), '42');
  assert.equal(int(-7), '-7');
  assert.equal(int(12n), '12');
  assert.equal(int(null), null);
  assert.equal(int('2147483647'), '2147483647');
  assert.equal(int('2147483648'), undefined);
  assert.equal(int('007'), undefined);
  assert.equal(int('1.0'), undefined);
  assert.equal(int(' 1'), undefined);
  for (const text of ['', '-', '+1', '1e3', '1 ', '--1', '-01', '１', '12a']) assert.equal(int(text), undefined, text);
  assert.equal(int('-0'), '-0');
  assert.equal(int('0'), '0');
  assert.equal(elementWriter(column('SMALLINT'))!('40000'), undefined);
  assert.equal(elementWriter(column('BIGINT'))!('-9223372036854775808'), '-9223372036854775808');
  assert.equal(elementWriter(column('BIGINT'))!('9223372036854775808'), undefined);
  assert.equal(elementWriter(column('BIGINT'))!('10000000000000000000'), undefined, '20 digits');
  assert.equal(elementWriter(column('BIGINT'))!('-9223372036854775809'), undefined);
});

test('dates: real days of years 1 to 9999 only', () => {
  const date = elementWriter(column('DATE'))!;
  assert.equal(date('2024-02-29'), '2024-02-29');
  assert.equal(date('2023-02-29'), undefined);
  assert.equal(date('1900-02-29'), undefined);
  assert.equal(date('0000-00-00'), undefined);
  assert.equal(date('2025-13-01'), undefined);
  assert.equal(date('2025-1-01'), undefined);
});

test('decimals: within precision and scale; text, NUL, booleans', () => {
  const decimal = elementWriter(column('DECIMAL(5,2)'))!;
  assert.equal(decimal('123.45'), '123.45');
  assert.equal(decimal('-1.5'), '-1.5');
  assert.equal(decimal('1.234'), undefined, 'would round');
  assert.equal(decimal('1234.5'), undefined, 'too many whole digits');
  assert.equal(decimal(1.5), undefined, 'a double may not be the decimal');
  assert.equal(elementWriter(column('DECIMAL(2,2)'))!('0.5'), '0.5');
  assert.equal(elementWriter(column('DECIMAL(2,2)'))!('1.5'), undefined);
  assert.equal(elementWriter(column('DECIMAL(4,0)'))!('12'), '12');
  assert.equal(elementWriter(column('DECIMAL(4,0)'))!('12.5'), undefined);
  const text = elementWriter(column('VARCHAR'))!;
  assert.equal(text('a"b\\c'), 'a"b\\c');
  assert.equal(text('a\0b'), undefined);
  assert.equal(text(Buffer.from('x')), undefined);
  assert.equal(elementWriter(column('BOOLEAN'))!('t'), 'true');
  assert.equal(elementWriter(column('DOUBLE')), null);
});

test('array literals: quoting, escapes, NULL, the word NULL, empty text, quotes doubled for SQL', () => {
  assert.equal(arrayElement(null), 'NULL');
  assert.equal(arrayElement('NULL'), '"NULL"');
  assert.equal(arrayElement('a"b\\c'), '"a\\"b\\\\c"');
  const builder = ArrayBuilder.for([column('INTEGER', 'id'), column('VARCHAR', 'name')])!;
  for (const row of [
    ['1', "O'Neil"],
    ['2', ''],
    [null, null],
    ['3', '{x,y}'],
    ['4', 'Zoë'],
    ['5', "O'Neil"],
  ])
    assert.equal(builder.add(row), true);
  assert.deepEqual(builder.literals(), [`'{1,2,NULL,3,4,5}'::int4[]`, `'{"O''Neil","",NULL,"{x,y}","Zoë","O''Neil"}'::text[]`]);
  assert.deepEqual([...builder.distinct(1)], ["O'Neil", '', '{x,y}', 'Zoë']);
  assert.deepEqual(builder.values[0], ['1', '2', null, '3', '4', '5'], 'the texts as they go, null for NULL');
  assert.equal(builder.add(['x', 'y']), false);
  assert.equal(builder.rows, 6);
  assert.equal(ArrayBuilder.for([column('DOUBLE')]), null);
});
