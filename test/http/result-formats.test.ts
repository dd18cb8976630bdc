/**
 * Results in the format the client accepts (issue 28): CSV, NDJSON, Arrow IPC stream and Parquet
 * from a real PostgreSQL source, through the statement PostgreSQL runs whole and through the
 * engine. Every format's body is read back (CSV by an RFC 4180 reader written here, Arrow by
 * apache-arrow's reader, Parquet by DuckDB) and compared value by value with the JSON answer of
 * the same statement; 406 for a type vdb does not write; pages in CSV; Prefer: count.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC, type Table } from 'apache-arrow';
import type pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, expectOkText, PG, pgClient, uniqueTag } from '../connectors/db.js';

const tag = uniqueTag();
let server: TestServer;
let pgAdmin: pg.Client;

/** Rows of the table: generated ones, then NULLs, edges and awkward text. */
const GENERATED = 1000;
const TOTAL = GENERATED + 4;

before(async () => {
  pgAdmin = await pgClient();
  await pgAdmin.query(`
    CREATE SCHEMA ${tag};
    CREATE TABLE ${tag}.t (id int PRIMARY KEY, amount numeric(12,2), big_amount numeric(30,4), ratio double precision,
      day date, at timestamp, atz timestamptz, name text, flag boolean, big bigint);
    INSERT INTO ${tag}.t SELECT g, g * 1.25, ('12345678901234567890.' || lpad((g % 10000)::text, 4, '0'))::numeric(30,4), g / 3.0,
      DATE '2024-01-01' + g, TIMESTAMP '2024-01-01' + g * interval '1 minute 0.123456 second',
      TIMESTAMPTZ '2024-01-01 00:00:00+00' + g * interval '1 hour', 'row ' || g, g % 2 = 0, g::bigint * 1000000000000
      FROM generate_series(1, ${GENERATED}) g;
    INSERT INTO ${tag}.t VALUES
      (1001, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      (1002, -0.01, -1.0001, 'NaN', '0044-03-15 BC', '2000-02-29 23:59:59.999999', '2000-01-01 00:00:00+02', '', true, -9223372036854775808),
      (1003, 0, 0, 1e300, '9999-12-31', '1970-01-01', '1970-01-01 00:00:00+00',
        'quote " comma , newline' || chr(10) || 'and CR' || chr(13) || chr(10) || ' tab' || chr(9) || ' é 日本 🎉', false, 9223372036854775807),
      (1004, 9999999999.99, 99999999999999999999999999.9999, '-Infinity', 'infinity', '1999-12-31 23:59:59', '1999-12-31 23:59:59+00', 'null', NULL, 0);
    CREATE VIEW ${tag}.v AS SELECT * FROM ${tag}.t WHERE id <= 10;
    CREATE TABLE ${tag}.padded (id int PRIMARY KEY, code char(5), label varchar(10), flag boolean);
    INSERT INTO ${tag}.padded VALUES (1, 'ab', 'x', true), (2, 'a,b', 'y "z"', false), (3, NULL, '', NULL), (4, '     ', ' lead', true);
    ANALYZE ${tag}.t;
  `);
  server = await startTestServer({ demo: false });
  const added = await server.request('/rest/api/source', {
    body: {
      name: 'pgf',
      template: 'postgresql',
      connectionProps: `host=127.0.0.1,port=${PG.port},db=test,user-name=postgres`,
      modelProps: `importer.schemaPattern=${tag}`,
    },
  });
  assert.equal(added.status, 201, await added.text());
});

after(async () => {
  await server?.close();
  await pgAdmin?.query(`DROP SCHEMA IF EXISTS ${tag} CASCADE`);
  await pgAdmin?.end();
});

/** The statement PostgreSQL runs whole, and one the engine computes (SYS is local). */
const STATEMENTS = {
  whole: 'SELECT * FROM pgf.t ORDER BY id',
  engine: `SELECT t.* FROM pgf.t AS t CROSS JOIN (SELECT "Name" FROM SYS."Schemas" WHERE "Name" = 'pgf') AS s ORDER BY t.id`,
};

const query = (sql: string, accept?: string, search = '', headers: Record<string, string> = {}) =>
  server.request(`/rest/api/query${search}`, { body: { sql }, headers: { ...(accept ? { accept } : {}), ...headers } });

interface JsonAnswer {
  names: string[];
  types: string[];
  rows: unknown[][];
}

async function jsonAnswer(sql: string): Promise<JsonAnswer> {
  const response = await query(sql);
  const text = await expectOkText(response, sql);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const types = JSON.parse(response.headers.get('sql-column-types') ?? '[]') as string[];
  const objects = (await (await query(sql, undefined, '?array=false')).json()) as Array<Record<string, unknown>>;
  return { names: Object.keys(objects[0] ?? {}), types, rows: JSON.parse(text) as unknown[][] };
}

/** PostgreSQL's own text of the columns whose JSON numbers lose digits in JSON.parse. */
async function exactTexts(): Promise<Map<number, { big_amount: string | null; big: string | null }>> {
  const result = await pgAdmin.query<{ id: number; big_amount: string | null; big: string | null }>(
    `SELECT id, big_amount::text AS big_amount, big::text AS big FROM ${tag}.t`,
  );
  return new Map(result.rows.map((r) => [r.id, r]));
}

/** PostgreSQL's text of an Arrow date (milliseconds since 1970): BC years counted from 1. */
function dateText(ms: number): string {
  // vdb writes infinity and -infinity as the largest and smallest Int32 days (src/results/arrow.ts).
  if (Math.abs(ms / 86_400_000) >= 2 ** 31 - 1) return ms > 0 ? 'infinity' : '-infinity';
  const iso = new Date(ms).toISOString();
  const year = Number(iso.slice(0, iso.indexOf('-', 1)));
  const monthDay = iso.slice(iso.indexOf('-', 1), iso.indexOf('T'));
  return year > 0 ? `${String(year).padStart(4, '0')}${monthDay}` : `${String(1 - year).padStart(4, '0')}${monthDay} BC`;
}

/** An RFC 4180 reader: each field's text and whether it was quoted (NULL is the empty unquoted field). */
function readCsv(text: string): Array<Array<{ text: string; quoted: boolean }>> {
  const rows: Array<Array<{ text: string; quoted: boolean }>> = [];
  let row: Array<{ text: string; quoted: boolean }> = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    let quoted = false;
    if (text[i] === '"') {
      quoted = true;
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        assert.ok(q >= 0, 'a quoted field is closed');
        field += text.slice(i, q);
        i = q + 1;
        if (text[i] === '"') {
          field += '"';
          i++;
        } else break;
      }
    } else {
      const end = text.slice(i).search(/,|\r\n/);
      assert.ok(end >= 0, 'every line ends with CRLF');
      field = text.slice(i, i + end);
      assert.ok(!/["\r\n]/.test(field), `an unquoted field holds no quote, CR or LF: ${JSON.stringify(field)}`);
      i += end;
    }
    row.push({ text: field, quoted });
    if (text.startsWith('\r\n', i)) {
      rows.push(row);
      row = [];
      i += 2;
    } else {
      assert.equal(text[i], ',', `a field is followed by a comma or CRLF at ${i}`);
      i++;
    }
  }
  assert.equal(row.length, 0, 'the last line ends with CRLF');
  return rows;
}

/** Microseconds since 1970 of a JSON/engine timestamp text ("T" or space, fraction, offset). */
function micros(text: string): bigint {
  const m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:\.(\d+))?(?:([+-]\d\d)(?::?(\d\d))?)?$/.exec(text);
  assert.ok(m, `a timestamp: ${text}`);
  const offsetMinutes = m[4] ? Number(m[4]) * 60 + Math.sign(Number(m[4]) || 1) * Number(m[5] ?? 0) : 0;
  const ms = Date.parse(`${m[1]}T${m[2]}Z`) - offsetMinutes * 60_000;
  return BigInt(ms) * 1000n + BigInt((m[3] ?? '').padEnd(6, '0').slice(0, 6));
}

/** What the query log holds of the last run of `sql`: the sources' queries and the row count. */
async function lastLogged(sql: string): Promise<[string | null, number]> {
  const text = `SELECT "SourceQueries", "RowCount" FROM SYSLOG."QueryLog" WHERE "Statement" = '${sql.replace(/'/g, "''")}' ORDER BY "ID" DESC LIMIT 1`;
  const rows = (await (await query(text)).json()) as Array<[string | null, number]>;
  return rows[0]!;
}

const NAMES = ['id', 'amount', 'big_amount', 'ratio', 'day', 'at', 'atz', 'name', 'flag', 'big'];

/** Compares one value of another format, as text, with the JSON value (exact: PostgreSQL's text where JSON.parse rounds). */
function sameText(
  actual: string | null,
  json: unknown,
  column: string,
  exact: { big_amount: string | null; big: string | null },
  where: string,
) {
  if (json === null) return assert.equal(actual, null, `${where}: NULL`);
  assert.notEqual(actual, null, `${where}: not NULL`);
  if (column === 'big_amount' || column === 'big') return assert.equal(actual, exact[column], `${where}: exact digits`);
  if (column === 'at' || column === 'atz') return assert.equal(micros(actual!), micros(json as string), where);
  if (typeof json === 'number') return assert.equal(Number(actual), json, where);
  if (column === 'ratio') return assert.equal(Number(actual), Number(json), where);
  assert.equal(actual, String(json), where);
}

for (const [route, sql] of Object.entries(STATEMENTS)) {
  describe(`every format reads back as the JSON answer (${route})`, () => {
    let json: JsonAnswer;
    let exact: Awaited<ReturnType<typeof exactTexts>>;
    before(async () => {
      json = await jsonAnswer(sql);
      exact = await exactTexts();
      // Each statement takes the route it stands for.
      const plan = await expectOkText(await query(`EXPLAIN ${sql}`));
      assert.match(plan, route === 'whole' ? /the whole statement/ : /vdb engine/, plan);
      assert.equal(json.rows.length, TOTAL);
      assert.deepEqual(json.names, NAMES);
    });

    test('CSV: RFC 4180, a header line, NULL empty and unquoted, the empty string quoted', async () => {
      const response = await query(sql, 'text/csv');
      const text = await expectOkText(response, 'csv');
      assert.match(response.headers.get('content-type') ?? '', /^text\/csv; charset=utf-8/);
      assert.equal(response.headers.get('sql-column-types'), JSON.stringify(json.types));
      const [header, ...rows] = readCsv(text);
      assert.deepEqual(
        header!.map((f) => f.text),
        NAMES,
      );
      assert.equal(rows.length, TOTAL);
      rows.forEach((row, r) => {
        const id = json.rows[r]![0] as number;
        row.forEach((field, c) => {
          const value = field.text === '' && !field.quoted ? null : field.text;
          sameText(value, json.rows[r]![c], NAMES[c]!, exact.get(id)!, `csv row ${id} ${NAMES[c]}`);
        });
      });
      const empty = rows.find((row) => row[0]!.text === '1002')!;
      assert.deepEqual(empty[7], { text: '', quoted: true }, 'the empty string is ""');
      assert.ok(text.includes('"quote "" comma , newline\nand CR\r\n tab\t é 日本 🎉"'), 'quotes doubled, the field quoted');
      assert.ok(text.includes(',null,'), 'the text "null" is not NULL');
      // Who wrote it: PostgreSQL (COPY ... CSV) for the statement it runs whole, vdb from the JSON rows otherwise; all rows logged.
      const [sourceQueries, rowCount] = await lastLogged(sql);
      assert.equal(/FORMAT csv/.test(sourceQueries ?? ''), route === 'whole', String(sourceQueries));
      assert.equal(rowCount, TOTAL);
    });

    test('NDJSON: one object per line, each the JSON answer’s own text', async () => {
      const response = await query(sql, 'application/x-ndjson');
      const text = await expectOkText(response, 'ndjson');
      assert.match(response.headers.get('content-type') ?? '', /^application\/x-ndjson/);
      assert.ok(text.endsWith('\n'));
      const lines = text.slice(0, -1).split('\n');
      assert.equal(lines.length, TOTAL);
      const objects = await expectOkText(await query(sql, undefined, '?array=false'));
      assert.equal(`[${lines.join(',')}]`, objects, 'the same bytes as the JSON objects');
      assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), NAMES);
    });

    test('Arrow: the types kept, every value as JSON has it', async () => {
      const response = await query(sql, 'application/vnd.apache.arrow.stream');
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/vnd.apache.arrow.stream');
      const table: Table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
      assert.deepEqual(
        table.schema.fields.map((f) => `${f.name}:${String(f.type)}`),
        [
          'id:Int32',
          'amount:Decimal[12e+2]',
          'big_amount:Decimal[30e+4]',
          'ratio:Float64',
          'day:Date32<DAY>',
          'at:Timestamp<MICROSECOND>',
          'atz:Timestamp<MICROSECOND, UTC>',
          'name:Utf8',
          'flag:Bool',
          'big:Int64',
        ],
      );
      assert.equal(table.numRows, TOTAL);
      // Read from PostgreSQL's CSV for the statement it runs whole, from the JSON rows otherwise.
      assert.equal(/FORMAT csv/.test((await lastLogged(sql))[0] ?? ''), route === 'whole');
      const columns = NAMES.map((name) => table.getChild(name)!);
      for (let r = 0; r < TOTAL; r++) {
        const id = json.rows[r]![0] as number;
        const where = (c: number) => `arrow row ${id} ${NAMES[c]}`;
        for (let c = 0; c < NAMES.length; c++) {
          const expected = json.rows[r]![c];
          const vector = columns[c]!;
          if (!vector.isValid(r)) {
            assert.equal(expected, null, where(c));
            continue;
          }
          const name = NAMES[c]!;
          if (name === 'amount' || name === 'big_amount') {
            const words = vector.get(r) as Uint32Array;
            let n = 0n;
            for (let w = 3; w >= 0; w--) n = (n << 32n) | BigInt(words[w]!);
            n = BigInt.asIntN(128, n);
            const scale = name === 'amount' ? 2 : 4;
            const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0');
            const text = `${n < 0n ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
            sameText(text, expected, name, exact.get(id)!, where(c));
          } else if (name === 'at' || name === 'atz') {
            // The raw 64-bit microseconds (get() gives milliseconds).
            const raw = vector.data[0]!.values as BigInt64Array;
            let index = r;
            let chunk = 0;
            while (index >= vector.data[chunk]!.length) index -= vector.data[chunk++]!.length;
            const value = (vector.data[chunk]!.values as BigInt64Array)[index]!;
            assert.ok(raw);
            assert.equal(value, micros(expected as string), where(c));
          } else if (name === 'day') {
            assert.equal(dateText(vector.get(r) as number), expected, where(c));
          } else if (name === 'big') {
            sameText(String(vector.get(r)), expected, name, exact.get(id)!, where(c));
          } else if (name === 'ratio') {
            const value = vector.get(r) as number;
            assert.equal(String(value), typeof expected === 'string' ? expected : String(expected), where(c));
          } else {
            assert.equal(vector.get(r), expected, where(c));
          }
        }
      }
    });

    test('Parquet: a download the engine reads back with the types kept', async () => {
      const response = await query(sql, 'application/vnd.apache.parquet');
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(response.headers.get('content-type'), 'application/vnd.apache.parquet');
      assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="result\.parquet"$/);
      assert.equal(
        /FORMAT csv/.test((await lastLogged(sql))[0] ?? ''),
        route === 'whole',
        "made from PostgreSQL's CSV where it runs the statement",
      );
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-parquet-'));
      const file = path.join(dir, 'result.parquet');
      fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      const instance = await DuckDBInstance.create(':memory:');
      const connection = await instance.connect();
      try {
        await connection.run(`SET TimeZone = 'UTC'`);
        const read = await connection.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
        assert.deepEqual(read.columnNames(), NAMES);
        assert.deepEqual(read.columnTypes().map(String), [
          'INTEGER',
          'DECIMAL(12,2)',
          'DECIMAL(30,4)',
          'DOUBLE',
          'DATE',
          'TIMESTAMP',
          'TIMESTAMP WITH TIME ZONE',
          'VARCHAR',
          'BOOLEAN',
          'BIGINT',
        ]);
        const rows = read.getRowsJson() as unknown[][];
        assert.equal(rows.length, TOTAL);
        rows.forEach((row, r) => {
          const id = json.rows[r]![0] as number;
          row.forEach((value, c) => {
            const name = NAMES[c]!;
            const expected = json.rows[r]![c];
            const where = `parquet row ${id} ${name}`;
            // The engine writes a BC date as `0044-03-15 (BC)`, PostgreSQL as `0044-03-15 BC`.
            // Infinity is the largest day a Parquet date holds, as in Arrow.
            if (name === 'day' && typeof value === 'string') {
              return assert.equal(value.replace(' (BC)', ' BC').replace('5881580-07-11', 'infinity'), expected, where);
            }
            sameText(value === null ? null : String(value), expected, name, exact.get(id)!, where);
          });
        });
      } finally {
        connection.closeSync();
        instance.closeSync();
        fs.rmSync(dir, { recursive: true, force: true });
      }
      assert.deepEqual(
        fs.readdirSync(path.join(server.dataDir, 'tmp', 'parquet')).filter((f) => !f.startsWith('spill')),
        [],
        'the files are gone',
      );
    });
  });
}

test('the JSON PostgreSQL writes is the JSON of the engine, byte for byte (integers as their text)', async () => {
  const [whole, engine] = await Promise.all([query(STATEMENTS.whole), query(STATEMENTS.engine)]);
  assert.equal(await expectOkText(whole), await expectOkText(engine));
});

test('the CSV PostgreSQL writes is the CSV vdb writes from the JSON rows, byte for byte', async () => {
  const [whole, engine] = await Promise.all([query(STATEMENTS.whole, 'text/csv'), query(STATEMENTS.engine, 'text/csv')]);
  assert.equal(await expectOkText(whole), await expectOkText(engine));
  // char(n) keeps its padding, as its JSON does; booleans are true/false.
  const padded = await expectOkText(await query('SELECT * FROM pgf.padded ORDER BY id', 'text/csv'));
  assert.equal(padded, 'id,code,label,flag\r\n1,ab   ,x,true\r\n2,"a,b  ","y ""z""",false\r\n3,,"",\r\n4,     , lead,true\r\n');
  const json = JSON.parse(await expectOkText(await query('SELECT * FROM pgf.padded ORDER BY id'))) as unknown[][];
  assert.deepEqual(json[0], [1, 'ab   ', 'x', true]);
});

describe('Accept negotiation', () => {
  test('no Accept, */*, application/json: JSON as before', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json;q=0.9, text/csv;q=0.5', 'text/html, */*;q=0.1']) {
      const response = await query('SELECT 1 AS one', accept ?? '');
      assert.equal(await expectOkText(response, String(accept)), '[[1]]');
      assert.equal(response.headers.get('vary'), 'Accept');
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    }
  });

  test('q-values choose; the first listed wins among equals', async () => {
    const cases: Array<[string, RegExp]> = [
      ['text/csv', /^text\/csv/],
      ['text/*', /^text\/csv/],
      ['application/json;q=0.5, text/csv', /^text\/csv/],
      ['text/csv;q=0.2, application/x-ndjson;q=0.8', /^application\/x-ndjson/],
      ['application/x-ndjson, text/csv', /^application\/x-ndjson/],
      ['application/json;q=0, */*', /^text\/csv/],
    ];
    for (const [accept, type] of cases) {
      const response = await query('SELECT 1 AS one', accept);
      await expectOkText(response, accept);
      assert.match(response.headers.get('content-type') ?? '', type, accept);
    }
  });

  test('a type vdb does not write: 406 with the types it does in the hint', async () => {
    for (const accept of ['image/png', 'text/csv;q=0', 'application/xml, text/html']) {
      const body = await expectError(await query('SELECT 1', accept), 406, accept);
      assert.equal(body.title, 'Not acceptable');
      for (const type of [
        'application/json',
        'text/csv',
        'application/x-ndjson',
        'application/vnd.apache.arrow.stream',
        'application/vnd.apache.parquet',
      ])
        assert.ok(body.hint?.includes(type), `${accept}: the hint names ${type}`);
    }
    // Also on the table endpoint, and before anything runs.
    await expectError(await server.request('/rest/api/source/pgf/t', { headers: { accept: 'image/png' } }), 406);
  });
});

describe('pages in every format', () => {
  test('CSV pages: the headers of JSON pages, each page a CSV with its header line', async () => {
    const sql = STATEMENTS.whole;
    const json = await jsonAnswer(sql);
    const first = await query(sql, 'text/csv', '?pagination=true&limit=10', { prefer: 'count=exact' });
    const text = await expectOkText(first, 'page 1');
    assert.equal(first.headers.get('limit'), '10');
    assert.equal(first.headers.get('offset'), '0');
    assert.ok(first.headers.get('requestid'));
    assert.equal(first.headers.get('content-range'), `0-9/${TOTAL}`);
    assert.equal(first.headers.get('preference-applied'), 'count=exact');
    const [header, ...rows] = readCsv(text);
    assert.deepEqual(
      header!.map((f) => f.text),
      NAMES,
    );
    assert.deepEqual(
      rows.map((row) => Number(row[0]!.text)),
      json.rows.slice(0, 10).map((row) => row[0]),
    );
    const next = first.headers.get('nextpage');
    assert.ok(next);
    const second = await fetch(next, { headers: { authorization: server.basic(), accept: 'text/csv', prefer: 'count=exact' } });
    const [, ...rows2] = readCsv(await expectOkText(second, 'page 2'));
    assert.deepEqual(
      rows2.map((row) => Number(row[0]!.text)),
      json.rows.slice(10, 20).map((row) => row[0]),
    );
    assert.equal(second.headers.get('content-range'), `10-19/${TOTAL}`);
    // The same cursor's page in the other formats.
    const id = first.headers.get('requestid')!;
    const ndjson = await server.request(`/rest/api/query?requestId=${id}&limit=3&offset=5`, {
      headers: { accept: 'application/x-ndjson' },
    });
    assert.deepEqual(
      (await expectOkText(ndjson))
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: number }).id),
      [6, 7, 8],
    );
    const arrow = await server.request(`/rest/api/query?requestId=${id}&limit=3&offset=5`, {
      headers: { accept: 'application/vnd.apache.arrow.stream' },
    });
    const table = tableFromIPC(new Uint8Array(await arrow.arrayBuffer()));
    assert.deepEqual([...table.getChild('id')!], [6, 7, 8]);
    assert.equal(String(table.schema.fields[1]!.type), 'Decimal[12e+2]', 'types of the cursor kept');
    const parquet = await server.request(`/rest/api/query?requestId=${id}&limit=3&offset=5`, {
      headers: { accept: 'application/vnd.apache.parquet' },
    });
    assert.equal(parquet.status, 200);
    assert.equal(
      Buffer.from(await parquet.arrayBuffer())
        .subarray(0, 4)
        .toString(),
      'PAR1',
    );
    // Past the end: no rows, the total still told.
    const past = await server.request(`/rest/api/query?requestId=${id}&limit=10&offset=${TOTAL + 5}`, {
      headers: { accept: 'text/csv', prefer: 'count=exact' },
    });
    assert.equal(readCsv(await expectOkText(past)).length, 1, 'the header line alone');
    assert.equal(past.headers.get('content-range'), `*/${TOTAL}`);
  });
});

describe('Prefer: count', () => {
  test('exact on a table read: Content-Range of the rows sent and the total', async () => {
    const response = await server.request('/rest/api/source/pgf/t?limit=25', { headers: { prefer: 'count=exact', accept: 'text/csv' } });
    const rows = readCsv(await expectOkText(response));
    assert.equal(rows.length, 26);
    assert.equal(response.headers.get('content-range'), `0-24/${TOTAL}`);
    assert.equal(response.headers.get('preference-applied'), 'count=exact');
    const offset = await server.request('/rest/api/source/pgf/t?limit=25&offset=1000', { headers: { prefer: 'count=exact' } });
    assert.equal((JSON.parse(await expectOkText(offset)) as unknown[]).length, 4);
    assert.equal(offset.headers.get('content-range'), `1000-1003/${TOTAL}`);
  });

  test('estimated: the source’s statistics for a plain table read; exact where there are none', async () => {
    const estimate = server.services.registry.resolve('pgf', 't').table.cardinality;
    assert.equal(estimate, TOTAL, 'ANALYZE made the estimate');
    // Changed behind vdb's back: the estimate is what the catalog holds, not a count.
    await pgAdmin.query(`INSERT INTO ${tag}.t (id) VALUES (5000)`);
    try {
      const response = await server.request('/rest/api/source/pgf/t?limit=5', { headers: { prefer: 'count=estimated' } });
      await expectOkText(response);
      assert.equal(response.headers.get('preference-applied'), 'count=estimated');
      assert.equal(response.headers.get('content-range'), `0-4/${TOTAL}`);
      const exact = await server.request('/rest/api/source/pgf/t?limit=5', { headers: { prefer: 'count=exact' } });
      await expectOkText(exact);
      assert.equal(exact.headers.get('content-range'), `0-4/${TOTAL + 1}`);
    } finally {
      await pgAdmin.query(`DELETE FROM ${tag}.t WHERE id = 5000`);
    }
    // A view has no statistics: counted.
    assert.equal(server.services.registry.resolve('pgf', 'v').table.cardinality, null);
    const view = await server.request('/rest/api/source/pgf/v', { headers: { prefer: 'count=estimated' } });
    await expectOkText(view);
    assert.equal(view.headers.get('preference-applied'), 'count=exact');
    assert.equal(view.headers.get('content-range'), '0-9/10');
  });

  test('not asked, or a statement that is not a table read nor paginated: no count headers', async () => {
    const plain = await server.request('/rest/api/source/pgf/t?limit=1');
    await expectOkText(plain);
    assert.equal(plain.headers.get('content-range'), null);
    const statement = await query('SELECT * FROM pgf.t', undefined, '?limit=1', { prefer: 'count=exact' });
    await expectOkText(statement);
    assert.equal(statement.headers.get('content-range'), null);
    assert.equal(statement.headers.get('preference-applied'), null);
  });
});
