/**
 * Date, time, timestamp and interval input (issue 27) against PostgreSQL itself (DateStyle ISO,
 * MDY; TimeZone UTC; IntervalStyle postgres): every statement is answered exactly as PostgreSQL
 * answers it (names, types, JSON text), over constants and over the corpus table in each kind of
 * source; what PostgreSQL fails fails in vdb with a 400; what vdb refuses is a 400 saying it is
 * not supported. Random inputs check the readers (datetime-input.ts, interval-input.ts) beyond
 * the listed ones: no answer may differ from PostgreSQL's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareAnswers } from './postgres-answers.js';
import { oracleSession, randomFrom, testSameAnswers } from './oracle-session.js';

/** Over constants: answered as PostgreSQL answers them. */
const SAME: readonly string[] = [
  // Dates in other forms than ISO 8601 (MDY order).
  "SELECT date 'January 8, 1999', date '1/8/1999', date '1999-Jan-08', date '08-Jan-1999', date 'Jan-08-1999', date '19990108', date '990108'",
  "SELECT date '8 January 1999', date 'January 8 99', date 'Jan 8, 69', date 'Jan 8, 70', date '1/8/99', date '12/31/9', date '1.8.1999'",
  "SELECT date 'Friday, January 8, 1999', date 'Sept 30 2020', date '1999/01/08', date '1999.01.08', date '08-jan-99', date '13/jan/8'",
  "SELECT date 'J2451187', date 'J 2451187', date 'epoch', date 'infinity', date '-infinity', date 'January 8, 1999 BC', date '1/8/0044 BC'",
  "SELECT date '1999-01-08 04:05:06 PST', date 'January 8 1999 11:59 PM', date '0099-01-08', date '099-01-08', date 'Feb 29 2024'",
  "SELECT '1/8/1999'::date, CAST('January 8, 1999' AS date), date '  jan 8 1999  '",
  // Timestamps and times.
  "SELECT timestamp 'January 8 04:05:06 1999 PST', timestamp '1999-01-08 04:05:06.789', timestamp '1999-01-08T04:05:06', timestamp 'epoch'",
  "SELECT timestamp '1/8/1999 4:05 PM', timestamp '1/8/1999 12:05 am', timestamp '1999-Jan-08 04:05:06.1234567'",
  "SELECT timestamp 'Jan 8 1999 04:05:06 BC', timestamp 'J2451187', timestamp 'infinity', timestamp '-infinity', timestamp '990108 23:59:59.999999'",
  "SELECT timestamptz '1999-01-08 04:05:06 PST', timestamptz 'January 8 04:05:06 1999 PST', timestamptz '1999-01-08 04:05:06-8:00', timestamptz 'epoch'",
  "SELECT timestamptz '1999-01-08 04:05:06 America/New_York', timestamptz '2024-07-01 12:00 Europe/Berlin', timestamptz '1/8/1999 04:05 CET', timestamptz '1999-01-08 04:05:06 z'",
  "SELECT timestamptz 'Jan 8 1999 04:05:06 +0530', timestamptz '1999-01-08 04:05:06 Asia/Kolkata', timestamptz 'July 4 2024 EDT', timestamptz '2024-07-04 10:00 -03:30'",
  "SELECT timestamptz '1999-01-08 04:05:06 EST', timestamptz '1999-01-08 04:05:06 UTC', timestamptz '1999-01-08 04:05:06 GMT', timestamptz '1999-06-08 04:05 MDT', timestamptz '1999-06-08 04:05 CEST'",
  "SELECT timestamptz '1999-06-08 04:05 EEST', timestamptz '1999-06-08 04:05 EET', timestamptz '1999-06-08 04:05 JST', timestamptz '1999-06-08 04:05 HST'",
  "SELECT timestamptz '1999-06-08 04:05 CST', timestamptz '1999-06-08 04:05 CDT', timestamptz '1999-06-08 04:05 MST', timestamptz '1999-06-08 04:05 PDT', timestamptz '1999-06-08 04:05 WET', timestamptz '1999-06-08 04:05 zulu', timestamptz '1999-06-08 04:05 UT'",
  "SELECT timestamptz '1950-07-01 12:00 Europe/London', timestamptz '1918-07-01 12:00 America/New_York', timestamptz '2024-10-27 01:30 Europe/Berlin'",
  "SELECT timestamptz 'Jan 8 44 04:05 BC PST', timestamptz 'March 15, 44 BC 10:00 +02', timestamp '1/8/1999 23:59:59.9999999', timestamp 'Dec 31 1999 23:59:60', timestamptz '12/31/1999 23:59:60 -01'",
  "SELECT time 'allballs', time '04:05 PM', time '4:05:06.789 am', time '23:59:59.9999994'",
  // Relative to the statement's date, as PostgreSQL reads them.
  "SELECT date 'today' = current_date, date 'tomorrow' = current_date + 1, date 'yesterday' = current_date - 1, date 'now' = current_date",
  "SELECT timestamp 'today' = current_date::timestamp, timestamp 'tomorrow' - timestamp 'yesterday', timestamptz 'today' = current_date::timestamptz",
  "SELECT timestamp 'now' <= localtimestamp, timestamptz 'now' <= now(), timestamptz 'now' > now() - interval '1 hour'",
  // Intervals: PostgreSQL's forms and fractions.
  "SELECT interval '-1 +02:03', interval '1.5 weeks', interval '@ 1 day ago', interval '1 day 2 hours', interval '1 2:03:04', interval '2:03.5'",
  "SELECT interval 'P1Y2M3DT4H5M6S', interval 'P0001-02-03T04:05:06', interval 'P1.5Y', interval 'P1W', interval 'P1Y-2M', interval 'PT1.5H', interval 'P-1DT-2H'",
  "SELECT interval '1.5 months', interval '1.7 years', interval '1.99 years', interval '0.5 decades', interval '1.1 hours', interval '0.3 days', interval '1.01 weeks'",
  "SELECT interval '1.000001 seconds', interval '0.0000005 seconds', interval '0.0000015 seconds', interval '1:2:3.4567891', interval '1.5 months 1.5 days', interval '1. days', interval '25:59:60 0.1 d'",
  "SELECT interval '-1 years -2 mons +3 days -04:05:06', interval '-1 days 2 hours', interval '-1 year 2 days', interval '-1 mons 1 day', interval '1 day -1 hours'",
  "SELECT interval '5min', interval '1day 2hours', interval '1', interval '1 millennium', interval '2 centuries', interval '3 decades', interval '1 us', interval '2 msec'",
  "SELECT interval '1 day ago', interval '@ 1 hour 2 mins ago', interval '-1 day ago', interval '2 weeks ago', interval '-1.5 days', interval '-0.5 months'",
  // Fields and precision.
  "SELECT interval '1 2' day to hour, interval '1-2' year to month, interval '-1-2' year to month, interval '1:2.5' minute to second, interval '1:2' minute to second",
  "SELECT interval '1:2' hour to minute, interval '1:2' hour to second, interval '1 2:03:04' day to second, interval '1 2:03' day to minute",
  "SELECT interval '100 hours' day to hour, interval '1 day 3 hours 4 minutes' hour, interval '1 year 5 months 3 days' year, interval '2' hour, interval '2' month",
  "SELECT interval(2) '1.23456 seconds', interval '1.23456 seconds' second(2), interval '1.235 seconds' second(2), interval '-1.235 seconds' second(2), interval(0) '1.5 seconds'",
  "SELECT interval '1 day 1.5 seconds' day to second(0), interval '3 4:05:06.789' day to second(1), '1.5'::interval(0), '2 1'::interval day to hour",
  // Written as text the way PostgreSQL writes intervals.
  "SELECT (interval '-1 days 2 hours')::text, (interval '-1 years 2 mons')::text, format('%s', interval '-3 days 04:00')",
  // With dates.
  "SELECT date 'January 31, 2024' + interval '1 month', timestamp 'epoch' + interval '1.5 days', date '1/8/1999' - date 'epoch'",
];

/** Over the corpus table (corpus-tables.ts) in each source, written `{t}`. */
const TABLE_SAME: readonly string[] = [
  "SELECT id FROM {t} WHERE d < date 'January 1, 2024' ORDER BY id",
  "SELECT id FROM {t} WHERE d BETWEEN date '12/1/2023' AND date 'Feb 29 2024' ORDER BY id",
  "SELECT id FROM {t} WHERE ts >= timestamp 'Jan 31 2024 10:00 AM' ORDER BY id",
  "SELECT id, d - date 'epoch', ts - timestamp 'epoch' FROM {t} ORDER BY id",
  "SELECT id, d + interval '1.5 months', ts + interval '-1 +02:03' FROM {t} ORDER BY id",
  'SELECT id, d::text::date AS d, ts::text::timestamp AS ts, ts::text::timestamptz AS tz FROM {t} ORDER BY id',
  "SELECT id, (d > date 'yesterday') FROM {t} ORDER BY id",
  // Text of the table read per value as PostgreSQL reads it.
  "SELECT id, (i || ' days')::interval AS a, (n || ' months')::interval AS b, (f || ' hours')::interval AS c FROM {t} ORDER BY id",
  "SELECT id, ('@ ' || i || ' years ' || n || ' mons ago')::interval(0) AS a, (i || ' ' || b || ':30')::interval day to hour AS c FROM {t} WHERE b < 100 ORDER BY id",
  "SELECT id, ('Dec ' || extract(day from d) || ', ' || extract(year from d))::date AS a, (extract(day from d) || '-Dec-' || extract(year from d) || ' 04:05:06 PM PST')::timestamptz AS b FROM {t} ORDER BY id",
  "SELECT id, (extract(month from d) || '/' || extract(day from d) || '/' || extract(year from d))::date AS a FROM {t} ORDER BY id",
];

/** What PostgreSQL fails: vdb fails too (a 400). */
const FAILING: readonly string[] = [
  "SELECT date '2001-02-30'",
  "SELECT date '2/30/2001'",
  "SELECT date '13/8/1999'",
  "SELECT date '99-Jan-08'",
  "SELECT date 'Feb 29 2023'",
  "SELECT date '0000-01-01'",
  "SELECT timestamp '1999-01-08 25:00'",
  "SELECT timestamp '1999-01-08 13:00 PM'",
  "SELECT time '12:60'",
  "SELECT interval 'bogus'",
  "SELECT interval '1day2hours'",
  "SELECT interval '1 2 days'",
  "SELECT interval '1 day 1 day'",
  "SELECT interval '1 hour 02:00'",
  "SELECT interval '1:60'",
  "SELECT interval '1-12' year to month",
  "SELECT interval '1 ago'",
  "SELECT interval '3000000000 days'",
  "SELECT interval '3000000000 months'",
  "SELECT interval 'P'",
  "SELECT interval 'infinity'",
];

/** What vdb refuses (a 400 saying it is not supported). */
const REFUSED: readonly string[] = [
  "SELECT t::timestamp FROM (VALUES ('now')) v(t)",
  // Untyped, where it meets an interval the engine would read a fraction of years otherwise.
  "SELECT x FROM (VALUES (interval '2 years')) v(x) WHERE x = '1.99 years'",
  "SELECT x::interval hour FROM (VALUES (interval '1 day 2 hours')) v(x)",
  "SELECT date '1999.008'",
  "SELECT timestamp '19990108 040506'",
  "SELECT timestamp 'Jan 8 1999 24:00:00'",
  "SELECT timestamptz '2024-03-31 02:30 Europe/Berlin'",
  "SELECT date 'today 04:05'",
];

const oracle = oracleSession(["SET DateStyle = 'ISO, MDY'", "SET IntervalStyle = 'postgres'"]);
testSameAnswers(oracle, SAME, TABLE_SAME);

test('what PostgreSQL fails, vdb fails with a 400 and no refusal', async () => {
  for (const sql of FAILING) {
    await assert.rejects(oracle.postgres().query(sql), sql);
    const answer = await oracle.vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.body}`);
    assert.doesNotMatch(answer.body, /not supported/, sql);
  }
});

test('what vdb cannot answer as PostgreSQL does, it refuses with a 400 saying so', async () => {
  for (const sql of REFUSED) {
    await oracle.postgres().query(sql);
    const answer = await oracle.vdb(sql);
    assert.equal(answer.status, 400, `${sql}: ${answer.body}`);
    assert.match(answer.body, /not supported/, sql);
  }
});

/**
 * Random inputs: each answered as PostgreSQL answers it, or failing where PostgreSQL fails, or
 * refused as not supported; never another value, never PostgreSQL's error for what it reads.
 * Returns how many were answered.
 */
async function randomInputs(statements: string[]): Promise<{ answered: number; differences: string[] }> {
  const differences: string[] = [];
  let answered = 0;
  const refused: string[] = [];
  for (const sql of statements) {
    const expected = await oracle
      .postgres()
      .query({ text: sql, rowMode: 'array' })
      .then(
        () => oracle.answer(sql),
        () => 'fails' as const,
      );
    const actual = await oracle.vdb(sql);
    if (expected === 'fails') {
      if (actual.status !== 400) differences.push(`${sql}\n    PostgreSQL fails, vdb ${actual.status} ${actual.body.slice(0, 200)}`);
      continue;
    }
    if (actual.status === 400 && /not supported/.test(actual.body)) {
      refused.push(sql);
      continue;
    }
    const differs = actual.answer ? compareAnswers(expected, actual.answer, false) : `${actual.status} ${actual.body.slice(0, 200)}`;
    if (differs) differences.push(`${sql}\n    ${differs}`);
    else answered++;
  }
  console.log(
    `${statements.length} random inputs: ${answered} answered as PostgreSQL answers them, ${refused.length} that PostgreSQL answers refused, the others failing as in PostgreSQL`,
  );
  if (process.env.VDB_SHOW_REFUSED) console.log(refused.join('\n'));
  return { answered, differences };
}

const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;

test('random interval inputs as PostgreSQL reads them, or refused', async () => {
  const random = randomFrom(27);
  const numbers = ['1', '2', '-1', '+3', '1.5', '-0.5', '0.25', '10', '1.999', '100', '0.1', '7', '-2.75', '12', '0'];
  const units = ['year', 'years', 'mon', 'months', 'week', 'w', 'day', 'days', 'd', 'hour', 'h', 'hrs', 'minute', 'min', 'm', 'sec', 's'];
  const more = [
    'ms',
    'usec',
    'microseconds',
    'milliseconds',
    'decade',
    'century',
    'millennium',
    'y',
    'secs',
    'mins',
    'c',
    'dec',
    'mil',
    'yrs',
  ];
  const times = ['1:02', '01:02:03', '-1:30', '+2:03', '10:00:00.5', '0:0:0.123456789', '1:2.5', '25:59:60'];
  const fields = ['', '', '', ' year', ' month', ' day', ' hour', ' minute', ' second', ' year to month', ' day to hour', ' day to minute'];
  const moreFields = [' day to second', ' hour to minute', ' hour to second', ' minute to second', ' second(2)', ' day to second(0)'];
  const statements: string[] = [];
  for (let n = 0; n < 400; n++) {
    const parts: string[] = [];
    if (random(8) === 0) parts.push('@');
    const count = 1 + random(3);
    for (let k = 0; k < count; k++) {
      const kind = random(10);
      if (kind < 6)
        parts.push(
          `${numbers[random(numbers.length)]}${random(5) === 0 ? '' : ' '}${[...units, ...more][random(units.length + more.length)]}`,
        );
      else if (kind < 8) parts.push(times[random(times.length)]!);
      else if (kind < 9) parts.push(numbers[random(numbers.length)]!);
      else parts.push(`${random(3)}-${random(14)}`);
    }
    if (random(6) === 0) parts.push('ago');
    const iso = random(8) === 0;
    const text = iso
      ? `P${random(2) ? `${numbers[random(numbers.length)]}Y` : ''}${random(2) ? `${random(14)}M` : ''}${random(2) ? `${numbers[random(numbers.length)]}D` : ''}${random(2) ? `T${numbers[random(numbers.length)]}H${random(2) ? `${random(70)}M` : ''}` : ''}`
      : parts.join(' ');
    const precision = random(10) === 0 ? `(${random(7)})` : '';
    const restriction = precision ? '' : [...fields, ...moreFields][random(fields.length + moreFields.length)];
    statements.push(`SELECT interval${precision} ${quoted(text)}${restriction} AS v`);
    // The same text in a table: read without the fields, which then restrict the value.
    if (n % 2 === 0) statements.push(`SELECT t::interval${precision}${restriction} AS v FROM (VALUES (${quoted(text)})) x(t)`);
  }
  const { answered, differences } = await randomInputs(statements);
  assert.deepEqual(differences, []);
  assert.ok(answered > 150, `only ${answered} of ${statements.length} answered`);
});

test('random date and timestamp inputs as PostgreSQL reads them, or refused', async () => {
  const random = randomFrom(8);
  const months = ['January', 'jan', 'Feb', 'february', 'Mar', 'sept', 'Sep', 'DEC', 'may', 'June'];
  const numbers = ['1', '8', '08', '12', '13', '29', '30', '31', '99', '69', '70', '00', '2024', '1999', '0044', '099', '5'];
  const separators = ['-', '/', '.'];
  const times = ['04:05', '04:05:06', '4:05:06.789', '23:59:59.9999999', '12:00', '00:00:01.5', '13:30'];
  const tails = ['', '', '', ' AM', ' PM', ' BC', ' PST', ' +02', ' -08:00', ' Z', ' UTC', ' America/New_York', ' EDT', ' +0530'];
  const types = ['date', 'timestamp', 'timestamptz'];
  const statements: string[] = [];
  for (let n = 0; n < 400; n++) {
    const pick = <T>(list: readonly T[]) => list[random(list.length)]!;
    const shape = random(6);
    const separator = pick(separators);
    let date: string;
    if (shape === 0) date = `${pick(numbers)}${separator}${pick(numbers)}${separator}${pick(numbers)}`;
    else if (shape === 1) date = `${pick(months)} ${pick(numbers)}${random(2) ? ',' : ''} ${pick(numbers)}`;
    else if (shape === 2)
      date = `${pick(numbers)}${separator === '.' ? '-' : separator}${pick(months)}${separator === '.' ? '-' : separator}${pick(numbers)}`;
    else if (shape === 3) date = `${pick(months)}-${pick(numbers)}-${pick(numbers)}`;
    else if (shape === 4) date = `${pick(['1999', '99', '2024', '00'])}${pick(['01', '12', '13', '02'])}${pick(['08', '29', '30', '31'])}`;
    else date = `${pick(numbers)} ${pick(months)} ${pick(numbers)}`;
    const time = random(2) ? ` ${pick(times)}` : '';
    const text = `${random(8) === 0 ? 'Friday ' : ''}${date}${time}${pick(tails)}`;
    const type = pick(types);
    statements.push(`SELECT ${type} ${quoted(text)} AS v`);
    if (n % 2 === 0) statements.push(`SELECT t::${type} AS v FROM (VALUES (${quoted(text)})) x(t)`);
  }
  const { answered, differences } = await randomInputs(statements);
  assert.deepEqual(differences, []);
  assert.ok(answered > 150, `only ${answered} of ${statements.length} answered`);
});

test('random token soups as date, time and timestamp input: never another value than PostgreSQL gives', async () => {
  const random = randomFrom(31);
  const bag = [
    ...[
      'Jan',
      'january',
      'Feb',
      'Dec',
      'mon',
      'friday',
      '8',
      '08',
      '1',
      '12',
      '13',
      '31',
      '99',
      '00',
      '1999',
      '2024',
      '0044',
      '123',
      '19990108',
    ],
    ...[
      '04:05',
      '04:05:06.5',
      '12:00',
      '24:00',
      'at',
      'on',
      'BC',
      'AD',
      'AM',
      'PM',
      'T',
      'J',
      'J2451187',
      'z',
      'UTC',
      'PST',
      'EDT',
      'NZDT',
    ],
    ...['+02', '-0800', '+05:30', 'America/New_York', 'Europe/Berlin', 'epoch', 'today', 'allballs', 'infinity', '1.5', 'x'],
  ];
  const joins = [' ', ' ', ' ', '-', '/', ', ', '.', ''];
  const types = ['date', 'timestamp', 'timestamptz', 'time'];
  const statements: string[] = [];
  for (let n = 0; n < 400; n++) {
    const count = 1 + random(5);
    let text = bag[random(bag.length)]!;
    for (let k = 1; k < count; k++) text += joins[random(joins.length)]! + bag[random(bag.length)]!;
    const type = types[random(types.length)]!;
    statements.push(n % 3 === 0 ? `SELECT t::${type} AS v FROM (VALUES (${quoted(text)})) x(t)` : `SELECT ${type} ${quoted(text)} AS v`);
  }
  const { differences } = await randomInputs(statements);
  assert.deepEqual(differences, []);
});
