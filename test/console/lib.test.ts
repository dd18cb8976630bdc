/** The console's pure logic: CSV pages, row counting, paging, EXPLAIN trees, source forms, tabs, charts. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvBody } from '../../web/src/lib/csv.js';
import { countRows } from '../../web/src/lib/count.js';
import { PagedRows } from '../../web/src/lib/pages.js';
import { planTree } from '../../web/src/lib/explain.js';
import { KINDS, alteration, missingFields, parseProps, sourceSpec } from '../../web/src/lib/props.js';
import { sourceProblem } from '../../web/src/lib/source-errors.js';
import { ApiError } from '../../web/src/lib/api.js';
import { closeTab, loadTabs, saveTabs } from '../../web/src/lib/tabs.js';
import { chartGeometry } from '../../web/src/lib/chart.js';
import { cellText, count, isNumericColumn, rowText } from '../../web/src/lib/format.js';
import { callProcedure } from '../../web/src/lib/sql.js';
import { parseTypes } from '../../web/src/lib/api.js';
import { Num, RawJson, jsonText, parseJson } from '../../web/src/lib/json.js';
import { splitStatements, statementAt } from '../../web/src/lib/statements.js';
import { errorRange } from '../../web/src/lib/errors.js';
import { isPlainRead } from '../../web/src/lib/workbench.js';
import { compareNumbers, sortOrder, sortRows } from '../../web/src/lib/sort.js';
import { filterCursor, filterRows } from '../../web/src/lib/filter.js';
import { analyzed, sourceLines } from '../../web/src/lib/analyze.js';
import { copiesOf, freshness, schedule, size, span, utcTime } from '../../web/src/lib/copies.js';
import { may, mayAccelerate, mayManageCopy, type Grants } from '../../web/src/lib/permissions.js';

describe('console: front-end logic', () => {
  it("takes the rows of vdb's CSV after its header line, whatever the column names hold", () => {
    assert.equal(csvBody('a,b\r\n1,2\r\n'), '1,2\r\n');
    assert.equal(csvBody('"x\r\ny","say ""hi"""\r\n"1\r\n",2\r\n'), '"1\r\n",2\r\n');
    assert.equal(csvBody('a,b\r\n'), '');
    assert.equal(csvBody(''), '');
  });

  it('finds a cursor row count with few reads', async () => {
    for (const n of [1, 2, 499, 500, 501, 1000, 100_000, 1_000_003]) {
      let reads = 0;
      const found = await countRows(Math.min(n, 500), async (i) => (reads++, i < n));
      assert.equal(found, n);
      assert.ok(reads <= 2 * Math.log2(n) + 4, `${reads} reads for ${n}`);
    }
  });

  it('loads pages once, on demand, and forgets the least recently used', async () => {
    const loads: number[] = [];
    const pages = new PagedRows(
      async (offset, limit) => (loads.push(offset), Array.from({ length: limit }, (_, i) => [String(offset + i)])),
      10,
      [['0']],
      3,
    );
    await Promise.all([pages.ensure(10, 25), pages.ensure(20, 21)]);
    assert.deepEqual(loads, [10, 20]);
    assert.deepEqual(pages.get(25), ['25']);
    await pages.ensure(30, 39);
    assert.equal(pages.loadedPages, 3);
    assert.equal(pages.get(0), undefined, 'page 0 was the least recently used');
  });

  it('turns EXPLAIN rows into a tree under the engine step', () => {
    const tree = planTree({
      columns: ['Step', 'Location', 'Operation', 'Object', 'Pushed', 'SQL'],
      types: [],
      rows: [
        [new Num('1'), 'pg', 'source query', 'pg.t -> __vdb_rows_1', 'columns', 'SELECT a FROM t'],
        [new Num('2'), 'vdb engine', 'execute', 'statement over the source results', null, 'SELECT a FROM __vdb_rows_1'],
      ],
    });
    assert.equal(tree.length, 1);
    assert.equal(tree[0]!.operation, 'execute');
    assert.equal(tree[0]!.children[0]!.sql, 'SELECT a FROM t');
    assert.equal(tree[0]!.pushed, null);
  });

  it('builds a source description from a form, escaping property values', () => {
    const pg = KINDS.find((k) => k.template === 'postgresql')!;
    assert.deepEqual(missingFields(pg, { host: 'h' }), ['User']);
    assert.deepEqual(
      sourceSpec(' sales ', pg, { host: 'db', port: '5432', 'user-name': 'u', password: 'a,b=c', 'importer.schemaPattern': 'public' }),
      {
        name: 'sales',
        template: 'postgresql',
        connectionProps: 'host=db,port=5432,user-name=u',
        modelProps: 'importer.schemaPattern=public',
        encryptedProperties: 'password=a\\,b\\=c',
      },
    );
  });

  it('keeps tabs per user and always one open', () => {
    const store = new Map<string, string>();
    const kv = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) };
    const first = loadTabs(kv, 'ann');
    assert.equal(first.tabs.length, 1);
    const two = { tabs: [...first.tabs, { id: 'x', title: 'Query 2', sql: 'SELECT 2' }], active: 'x' };
    saveTabs(kv, 'ann', two);
    assert.deepEqual(loadTabs(kv, 'ann'), two);
    assert.equal(loadTabs(kv, 'bob').tabs[0]!.sql, first.tabs[0]!.sql);
    assert.equal(closeTab(two, 'x').active, first.tabs[0]!.id);
    assert.equal(closeTab(closeTab(two, 'x'), first.tabs[0]!.id).tabs.length, 1);
    store.set('vdb.console.tabs.ann', '{broken');
    assert.equal(loadTabs(kv, 'ann').tabs.length, 1);
  });

  it('parses JSON keeping every number as the text it was sent as', () => {
    const text =
      '[["a","b"],[9007199254740993,12345678901234.56789,64.10,-0.00001,1e+300,0,"2024-02-29",{"n": 12345678901234567890, "x": [1.50, null]},[],null,true,false,"\\u00e9\\"q\\""]]';
    const [names, row] = parseJson(text, 2) as [string[], unknown[]];
    assert.deepEqual(names, ['a', 'b']);
    assert.deepEqual(
      row!.map((v) => (v instanceof Num || v instanceof RawJson ? `${v.constructor.name}:${v.text}` : v)),
      [
        'Num:9007199254740993',
        'Num:12345678901234.56789',
        'Num:64.10',
        'Num:-0.00001',
        'Num:1e+300',
        'Num:0',
        '2024-02-29',
        'RawJson:{"n": 12345678901234567890, "x": [1.50, null]}',
        'RawJson:[]',
        null,
        true,
        false,
        'é"q"',
      ],
    );
    assert.equal(jsonText(parseJson(' { "k" : [ 1.10 , { "__proto__" : 2 } ] } ')), '{"k":[1.10,{"__proto__":2}]}');
    assert.equal(Number(new Num('64.10')), 64.1);
    // The same answers as JSON.parse on what it accepts, the same refusals on what it does not.
    for (const good of ['"x"', '[]', '{}', ' [1, "a\\nb", {"c": [null]}] ']) {
      assert.equal(jsonText(parseJson(good)), JSON.stringify(JSON.parse(good)));
    }
    for (const bad of ['', '[1,]', '{"a" 1}', '01', '1.', '-', '"\u0001"', '[1] x', 'nul', '{"a":1,}']) {
      assert.throws(() => parseJson(bad), SyntaxError, bad);
      assert.throws(() => JSON.parse(bad), SyntaxError, bad);
    }
  });

  it("splits a script into statements by PostgreSQL's lexical rules", () => {
    const script = "SELECT 'a;b', \"c;\" FROM t; -- x; y\nSELECT E'\\';' /* a; /* nested; */ b; */;;\n SELECT $f$;$f$, $1 ;  ";
    const parts = splitStatements(script);
    assert.deepEqual(
      parts.map((p) => p.sql),
      ['SELECT \'a;b\', "c;" FROM t', "-- x; y\nSELECT E'\\';' /* a; /* nested; */ b; */", 'SELECT $f$;$f$, $1'],
    );
    for (const p of parts) assert.equal(script.slice(p.from, p.to), p.sql);
    assert.deepEqual(splitStatements(' ; -- only a comment\n ;'), []);
    assert.deepEqual(splitStatements('SELECT 1'), [{ sql: 'SELECT 1', from: 0, to: 8 }]);
    const two = splitStatements('SELECT 1;\nSELECT 2;\n\n');
    assert.equal(statementAt(two, 0)?.sql, 'SELECT 1');
    assert.equal(statementAt(two, 9)?.sql, 'SELECT 1', 'just after the semicolon');
    assert.equal(statementAt(two, 12)?.sql, 'SELECT 2');
    assert.equal(statementAt(two, 21)?.sql, 'SELECT 2', 'in the blank lines after it');
    assert.equal(statementAt([], 3), undefined);
  });

  it('sorts numbers exactly by their digits, NULLs as PostgreSQL does', () => {
    const order = [
      '-9223372036854775808',
      '-1.5',
      '-0.00001',
      '0',
      '-0.0',
      '0.00',
      '64.1',
      '64.10',
      '9007199254740992',
      '9007199254740993',
      '12345678901234.56789',
    ];
    const sorted = [...order].sort(compareNumbers);
    assert.deepEqual(sorted, [
      '-9223372036854775808',
      '-1.5',
      '-0.00001',
      '0',
      '-0.0',
      '0.00',
      '64.1',
      '64.10',
      '12345678901234.56789',
      '9007199254740992',
      '9007199254740993',
    ]);
    assert.equal(compareNumbers('9007199254740993', '9007199254740992'), 1);
    assert.equal(compareNumbers('1e+300', '5'), 1);
    const rows = [[new Num('2')], [null], [new Num('10')]];
    assert.deepEqual(
      sortRows(rows, 0, false).map((r) => (r[0] === null ? null : String(r[0]))),
      ['2', '10', null],
    );
    assert.deepEqual(
      sortRows(rows, 0, true).map((r) => (r[0] === null ? null : String(r[0]))),
      [null, '10', '2'],
    );
  });

  it('filters rows by the text of their values, digits as sent, and reads a cursor chunk by chunk', async () => {
    const rows = [
      [new Num('0.50'), 'Apple'],
      [null, 'pear'],
      [new Num('1e+300'), new RawJson('{"a": 1.50}')],
    ];
    assert.deepEqual(filterRows(rows, '.50', 10), { rows: [rows[0], rows[2]], numbers: [10, 12] });
    assert.deepEqual(filterRows(rows, 'APPLE').numbers, [0]);
    assert.deepEqual(filterRows(rows, 'null').numbers, []);
    assert.deepEqual(filterRows(rows, 'e+3').numbers, [2]);
    assert.deepEqual(sortOrder([[new Num('2')], [null], [new Num('10')]], 0, false), [0, 2, 1]);
    const all = Array.from({ length: 25 }, (_, i) => [String(i)]);
    const reads: number[] = [];
    const load = async (offset: number, limit: number) => (reads.push(offset), all.slice(offset, offset + limit));
    const found = await filterCursor(load, '1', 25, 10, new AbortController().signal, () => undefined);
    assert.deepEqual(found.numbers, [1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21]);
    // A known count stops the reading at the end, without asking past it.
    assert.deepEqual(reads, [0, 10, 20]);
    reads.length = 0;
    await filterCursor(load, '1', null, 5, new AbortController().signal, () => undefined);
    assert.deepEqual(reads, [0, 5, 10, 15, 20, 25]);
  });

  it('recognises EXPLAIN ANALYZE in its forms, and splits the statements the sources received', () => {
    assert.equal(analyzed('EXPLAIN ANALYZE SELECT 1'), 'SELECT 1');
    assert.equal(analyzed('  explain analyse verbose\nSELECT 1'), 'SELECT 1');
    assert.equal(analyzed('EXPLAIN (ANALYZE, BUFFERS) SELECT 1'), 'SELECT 1');
    assert.equal(analyzed('EXPLAIN SELECT 1'), null);
    assert.equal(analyzed('SELECT analyze FROM t'), null);
    assert.deepEqual(sourceLines('pg: SELECT a\nFROM t\nmy: SELECT b FROM u'), ['pg: SELECT a\nFROM t', 'my: SELECT b FROM u']);
    assert.equal(sourceLines(null), null);
  });

  it('edits a connection: properties read back, other properties kept, a blank secret left alone', () => {
    assert.deepEqual(parseProps('host=h,port=5432,user-name=a\\,b\\=c,connectTimeoutMs=500'), {
      host: 'h',
      port: '5432',
      'user-name': 'a,b=c',
      connectTimeoutMs: '500',
    });
    const pg = KINDS.find((k) => k.template === 'postgresql')!;
    const before = { host: 'h', database: 'old', connectTimeoutMs: '500' };
    assert.deepEqual(alteration(pg, { host: 'h2', port: '', db: 'test', 'user-name': 'u', password: '' }, before), {
      connectionProps: 'host=h2,db=test,user-name=u,connectTimeoutMs=500',
    });
    assert.deepEqual(alteration(pg, { host: 'h', 'user-name': 'u', password: 'p,w' }, {}), {
      connectionProps: 'host=h,user-name=u',
      encryptedProperties: 'password=p\\,w',
    });
  });

  it('says source connection errors plainly, without the throw-away name of a test', () => {
    const failed = (description: string, title = 'Data source unavailable') => new ApiError(503, title, description, null);
    const values = { host: 'db.example', port: '5433' };
    const refused = sourceProblem(
      failed('Data source "console_test_x1" cannot be reached: connect ECONNREFUSED 10.0.0.1:5433'),
      values,
      'sales',
      'console_test_x1',
    )!;
    assert.equal(refused.description, 'Nothing accepts connections at db.example:5433.');
    assert.equal(refused.field, 'port');
    assert.equal(refused.said, 'connect ECONNREFUSED 10.0.0.1:5433');
    const denied = sourceProblem(
      failed(`Data source "s" failed: Access denied for user 'bob'@'10.0.0.2'`, 'Data source error'),
      values,
      's',
    )!;
    assert.equal(denied.field, 'password');
    assert.match(
      sourceProblem(failed('Data source "s" cannot be reached: getaddrinfo ENOTFOUND db.example'), values, 's')!.description,
      /"db\.example" is not known/,
    );
    assert.equal(
      sourceProblem(failed('Data source "s" failed: Received unexpected copyData message from backend.', 'Data source error'), values, 's')!
        .field,
      'port',
    );
    assert.equal(sourceProblem(failed('x', 'Conflict'), values, 's'), null);
    assert.equal(sourceProblem(new Error('Fill in: Host.'), values, 's'), null);
  });

  it('reads the first rows ahead only of plain reads', () => {
    for (const sql of ['SELECT 1', ' -- c\n/* d */ (select * from t) union select 2', 'VALUES (1)', 'TABLE shop.orders'])
      assert.ok(isPlainRead(sql), sql);
    for (const sql of [
      'SELECT 1 INTO t',
      'INSERT INTO t SELECT 1',
      'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d',
      'CALL SYSADMIN.x()',
      'EXPLAIN SELECT 1',
      'selection',
    ]) {
      assert.ok(!isPlainRead(sql), sql);
    }
  });

  it('finds where an error is from the API message', () => {
    assert.deepEqual(errorRange('syntax error at or near "FROM" (line 2, column 3)', 'SELECT 1 +\n  FROM x'), { from: 13, to: 17 });
    assert.deepEqual(errorRange('syntax error at end of input (line 1, column 9)', 'SELECT ('), { from: 7, to: 8 });
    assert.deepEqual(errorRange('Referenced column "nosuch" not found in FROM clause!', 'SELECT a, NoSuch FROM t'), { from: 10, to: 16 });
    assert.deepEqual(errorRange('Table "SYS.nosuch" does not exist.', 'SELECT * FROM sys . "nosuch"'), { from: 14, to: 28 });
    assert.deepEqual(errorRange('Schema "nos" does not exist.', 'SELECT nosy FROM nos.t'), { from: 17, to: 20 });
    assert.equal(errorRange('division by zero', 'SELECT 1/0'), null);
    assert.equal(errorRange('Table "gone" does not exist.', 'SELECT * FROM gone_too'), null);
  });

  it('formats values, counts and SQL', () => {
    assert.equal(cellText(null), 'NULL');
    assert.equal(cellText({ a: new Num('1.50') }), '{"a":1.50}');
    assert.equal(cellText(new RawJson('{"a": 1.50}')), '{"a": 1.50}');
    assert.equal(rowText([new Num('9007199254740993'), null, 'a\tb']), '9007199254740993\tNULL\ta b');
    assert.equal(count(1234567), '1,234,567');
    assert.equal(isNumericColumn('DECIMAL(10,2)', []), true);
    assert.equal(isNumericColumn(undefined, [new Num('1'), null, new Num('2')]), true);
    assert.equal(isNumericColumn(undefined, ['1']), false);
    assert.equal(isNumericColumn('VARCHAR', [new Num('1')]), false);
    assert.equal(callProcedure('addUser', "o'neil", 'pw'), "CALL SYSADMIN.addUser('o''neil', 'pw')");
    assert.deepEqual(parseTypes('["INTEGER","DECIMAL(10,2)"]', 2), ['INTEGER', 'DECIMAL(10,2)']);
    assert.deepEqual(parseTypes('["INTEGER"]', 2), []);
    assert.deepEqual(parseTypes(null, 1), []);
  });

  it('charts negative and positive values around zero', () => {
    const g = chartGeometry(
      [
        ['a', new Num('-2')],
        ['b', new Num('4.0')],
        ['c', null],
      ],
      0,
      1,
    );
    assert.equal(g.bars.length, 2);
    assert.equal(g.min, -2);
    assert.equal(g.max, 4);
    assert.ok(g.bars[0]!.height > 0 && g.bars[1]!.height > g.bars[0]!.height);
    assert.match(g.line, /^M[\d.]+,[\d.]+ L/);
  });

  it("reads SYS.Copies' rows and words a copy's age, size and schedule", () => {
    assert.equal(utcTime('2026-11-29T08:25:26.892'), Date.UTC(2026, 10, 29, 8, 25, 26, 892));
    assert.equal(utcTime('2026-11-29T08:25:26.892Z'), Date.UTC(2026, 10, 29, 8, 25, 26, 892));
    assert.equal(utcTime(null), null);
    const n = (v: number) => parseJson(String(v)) as Num;
    const [copy] = copiesOf({
      columns: [],
      types: [],
      rows: [
        [
          'pg.orders',
          'pg',
          'table',
          'append',
          'id',
          n(3600),
          n(7200),
          'ready',
          n(4),
          n(1000),
          n(536576),
          '2026-11-29T08:00:00',
          n(177),
          '2026-11-29T09:00:00',
          n(0),
          null,
        ],
      ],
    });
    assert.equal(copy!.rows, 1000);
    assert.equal(copy!.refreshedAt, Date.UTC(2026, 10, 29, 8));
    assert.equal(schedule(copy!), 'append on id · every 1 h');
    assert.equal(size(536576), '524 KiB');
    assert.equal(size(1536), '1.5 KiB');
    assert.equal(size(12), '12 B');
    assert.equal(span(42), '42 s');
    assert.equal(span(3 * 3600 + 120), '3 h 2 min');
    assert.equal(span(2 * 86400), '2 d');
    const at = (seconds: number) => Date.UTC(2026, 10, 29, 8) + seconds * 1000;
    assert.deepEqual(freshness(copy!, at(90)), { text: '1 min old', stale: false, note: 'read while at most 2 h old' });
    assert.deepEqual(freshness(copy!, at(7201)), { text: '2 h old', stale: true, note: 'older than 2 h: statements read the source' });
    assert.equal(freshness({ ...copy!, maxStaleness: null }, at(7201)).note, 'read at any age');
    assert.equal(freshness({ ...copy!, refreshedAt: null }, at(0)).text, 'no copy yet');
  });

  it('offers copy actions as vdb decides them: the most specific entry on the procedure, its schema or *', () => {
    const grants = (entries: Array<[string, string]>): Grants => ({
      admin: false,
      entries: entries.map(([resource, letters]) => ({ role: 'r', resource, letters })),
    });
    assert.equal(may(grants([['SYSADMIN', 'E']]), 'E', 'SYSADMIN.refreshCopy'), true);
    assert.equal(may(grants([['SYSADMIN.*', 'E']]), 'E', 'SYSADMIN.refreshCopy'), true);
    // The procedure's own entry decides over its schema's.
    assert.equal(
      may(
        grants([
          ['SYSADMIN', 'E'],
          ['SYSADMIN.refreshCopy', 'R'],
        ]),
        'E',
        'SYSADMIN.refreshCopy',
      ),
      false,
    );
    assert.equal(may(grants([['*', 'E']]), 'E', 'SYSADMIN.refreshCopy'), true);
    const keeper = grants([
      ['pg', 'RA'],
      ['SYSADMIN', 'E'],
    ]);
    assert.equal(mayManageCopy(keeper, 'pg', 'refreshCopy'), true);
    assert.equal(mayManageCopy(keeper, 'my', 'refreshCopy'), false);
    assert.equal(mayAccelerate(keeper), true);
    assert.equal(mayManageCopy(grants([['pg', 'RA']]), 'pg', 'dropCopy'), false);
    assert.equal(
      mayAccelerate(
        grants([
          ['pg', 'R'],
          ['SYSADMIN', 'E'],
        ]),
      ),
      false,
    );
    assert.equal(mayManageCopy({ admin: true, entries: [] }, 'pg', 'pauseCopy'), true);
  });
});
