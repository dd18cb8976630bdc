/**
 * The connector conformance suite (Trino's BaseJdbcConnectorTest): one set of tests that every
 * kind of source runs against its real service, each kind with its behaviours declared as data.
 * A test checks the behaviour against the declaration: where a kind declares it does not do
 * something, the test asserts that it declines or refuses cleanly, never skips.
 *
 * Every kind builds the same fixture with its own client (conformance.test.ts): `conf_values`
 * (one column of each type, edge values), `conf_pair` (a composite key), `conf_view`,
 * `conf_writes`, `conf_long` (10,000 rows), `conf_endless` (50M rows, computed as read) and
 * `conf_slow` (sends nothing for seconds).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { ColumnDef, SourceDef, SourceKind, TableDef } from '../../src/catalog/types.js';
import { createConnector, type ConnectorContext } from '../../src/connectors/factory.js';
import { dialectOf, networkOf, writableKind } from '../../src/connectors/kinds.js';
import { CannotPushDown } from '../../src/connectors/sql/predicate.js';
import {
  castMayFail,
  SourceUnreachableError,
  type Capabilities,
  type Connector,
  type ImportedTable,
  type PartialAggregate,
  type RawType,
  type RowConnector,
  type ScanRequest,
  type SourceTransaction,
} from '../../src/connectors/types.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';
import { uniqueTag, waitUntil } from './db.js';

/** The columns of `conf_values`, in order. */
export const COLUMNS = ['id', 'big', 'amount', 'wide', 'ratio', 'flag', 'label', 'code', 'day', 'moment', 'bytes'] as const;
export type Column = (typeof COLUMNS)[number];

/** A row of `conf_values` as the engine reads it: every value as text (bytes as hex), or null. */
export type Row = Record<Column, string | null>;

export const TEXT = 'tab\there\nnew line\r\nback\\slash é 日本 😀 "quoted" \'single\'';

const row = (...values: Array<string | null>): Row => Object.fromEntries(COLUMNS.map((c, i) => [c, values[i] ?? null])) as Row;

/**
 * The rows of `conf_values`: integers beyond 2^53 and at the 64-bit limits, decimals of 38
 * digits, a double of 1e300, text with control characters and unicode, '' beside NULL, text
 * that only a case- or accent-insensitive collation (or one ignoring trailing spaces) equates,
 * empty bytes beside NULL.
 */
export const ROWS: readonly Row[] = [
  // prettier-ignore
  row('1', '9007199254740993', '1234567890.12', '1234567890123456789012345678.123456789', '0.1', 'true', TEXT, 'ab', '2024-02-29', '2024-02-29 13:45:30.123456', 'deadbeef00'),
  row('2'),
  // prettier-ignore
  row('3', '-9223372036854775808', '-0.01', '-0.0000000001', '-0.25', 'false', '', 'x', '1000-01-01', '1999-12-31 23:59:59', ''),
  // prettier-ignore
  row('4', '9223372036854775807', '9999999999.99', '9999999999999999999999999999.9999999999', '1e+300', 'true', 'Abc', 'abcde', '2000-01-01', '2000-01-01 00:00:00', '00'),
  row('5', '0', '0', '0', '0', 'false', 'abc', 'ab', '2024-01-01', '2024-01-01 00:00:00.5', null),
  row('6', '-1', '0.5', '0.5', '2.5', null, 'abc  ', null, '2024-01-02', null, '41'),
  row('7', '42', '42', '42', '42', 'true', 'ÀBC', 'c', null, '2024-01-02 03:04:05', 'ff'),
  row('8', '7', '-7', '-7', '-7', 'false', 'b', 'b', '2024-03-01', '2024-03-01 00:00:00', null),
];

/** Rows of `conf_long`, whose `id` runs from 1. */
export const LONG_ROWS = 10_000;

/** What a row kind's dialect declares (connectors/<kind>/dialect.ts); the planners ask these. */
export interface DialectBehaviours {
  /** Pushed text `=` and IN keep exactly the engine's rows, or a superset (a case-insensitive collation). */
  textEquality: 'exact' | 'superset';
  /** `<` on text is pushed (in the engine's byte order); false: declined. */
  textOrderPushed: boolean;
  /** Comparisons with dates and timestamps are pushed; false: declined. */
  datesPushed: boolean;
  /** Text ordered at the source (ORDER BY under LIMIT) is the engine's byte order. */
  textOrdersLikeEngine: boolean;
  /** Grouping by text at the source makes the engine's groups. */
  textGroupsLikeEngine: boolean;
  /** Many dependent-join keys go as one array in one statement; false: batches of IN lists. */
  keyArrays: boolean;
  /** `wide` takes its scale from its values (a numeric without declared scale). */
  scaleFromValues: boolean;
  /** `code` (char(5)) arrives padded with spaces, which the source compares without. */
  paddedChar: boolean;
}

/** What a kind declares of itself; every shared test checks it. */
export interface Behaviours {
  /** Rows delivered by the connector (`scan`), or read by the engine itself (`relationSql`). */
  delivery: 'rows' | 'engine';
  /** The engine type each column of `conf_values` is imported as. */
  types: Record<Column, string>;
  /** Primary keys (in key order) and NOT NULL are imported; false: no keys, every column nullable. */
  keys: boolean;
  /** Views are imported as views. */
  views: boolean;
  /**
   * Row counts are taken from the source's statistics (after the fixture's ANALYZE), never
   * counted, within this share of the true count (0: exact); false: none.
   */
  statistics: false | { tolerance: number };
  /** Decimals of 38 digits arrive exact; false: as doubles (SQLite's NUMERIC affinity), then castMayFail. */
  exactWideDecimals: boolean;
  /** What the capabilities say (what the planner may push). */
  capabilities: Capabilities;
  /** Row kinds: their dialect's answers; null where the engine reads the source itself. */
  dialect: DialectBehaviours | null;
  /** Row kinds: the raw class each column's values arrive in (`rawType`), losslessly. */
  raw?: Record<Column, RawType>;
  /**
   * Row kinds: rows per batch of a scan, exactly (the last may hold fewer), or at least
   * (PostgreSQL's batches end with a chunk of its COPY stream).
   */
  batches?: { rows: number; exact: boolean };
  /** INSERT, UPDATE and DELETE go to the source and answer their counts. */
  writes: boolean;
  /** Writes in one transaction, rolled back when the work throws; `excludesWriters` as declared. */
  transactions: false | { excludesWriters: boolean };
  /** A read that is still computing at the source (nothing sent yet) ends when its signal aborts. */
  cancelsWhileComputing: boolean;
  /** What a source that cannot be reached says. */
  unreachableMessage: RegExp;
}

/** The fixture of one kind, made with the source's own client under tagged names. */
export interface Fixture {
  /** The definition of a source over the fixture (tables not yet imported). */
  source: SourceDef;
  /** The same kind of source where nothing answers (a closed port, a missing file). */
  unreachable: SourceDef;
  /** The folders SQLite, DuckDB and file sources may read. */
  roots: string[];
  /** The rows of `conf_writes` as the source's own client reads them, by id. */
  writtenRows?(): Promise<Array<[number, string | null]>>;
  /** Statements reading `table` that the source is still running; where the source can say. */
  readsRunning?(table: string): Promise<number>;
  drop(): Promise<void>;
}

export interface KindUnderTest {
  /** The describe's name. */
  name: string;
  kind: SourceKind;
  behaviours: Behaviours;
  /** Creates the fixture (tagged names; `tag` is unique to this run). */
  create(tag: string): Promise<Fixture>;
}

/** A closed TCP port on loopback: one that was just free. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A source definition of `kind` with the given settings. */
export function sourceDef(
  name: string,
  kind: SourceKind,
  connection: Record<string, string>,
  model: Record<string, string> = {},
): SourceDef {
  return {
    name,
    kind,
    connection,
    secrets: {},
    model,
    translator: {},
    description: null,
    readOnly: false,
    createdAt: '2026-01-01T00:00:00Z',
    tables: [],
    oid: 1,
  };
}

// ---- the engine's reading of values ------------------------------------------------------------

/** A decimal's digits without trailing zeros of the fraction (1.50 and 1.5 are one value). */
const decimalText = (text: string) => (text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text).replace(/^-0$/, '0');

const BOOLEANS: Record<string, string> = { t: 'true', true: 'true', '1': 'true', f: 'false', false: 'false', '0': 'false' };

/** A value as the engine reads it for a column of `type`, as text (bytes as hex). */
export function engineText(value: unknown, type: string): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  const text = String(value);
  if (type === 'BLOB') return text.toLowerCase();
  if (type === 'BOOLEAN') return BOOLEANS[text.toLowerCase()] ?? `not a boolean: ${text}`;
  if (type.startsWith('DECIMAL')) return decimalText(text);
  if (type === 'DOUBLE') return String(Number(text));
  if (type === 'TIMESTAMP')
    return text
      .replace('T', ' ')
      .replace(/(\.\d*?)0+$/, '$1')
      .replace(/\.$/, '');
  return text;
}

/** Whether `value` arrives in raw class `raw` losslessly, as the engine's load appends it (exec/load.ts). */
function inRawClass(value: unknown, raw: RawType): boolean {
  if (value === null) return true;
  switch (raw) {
    case 'BIGINT':
      return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value)) || /^-?\d+$/.test(String(value));
    case 'DOUBLE':
      return typeof value === 'number' || (typeof value === 'string' && Number.isFinite(Number(value)));
    case 'VARCHAR':
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint';
    case 'BLOB':
      return value instanceof Uint8Array;
  }
}

/** UTF-8 byte order, the engine's order of text. */
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

const big = (v: string | null) => (v === null ? null : BigInt(v));

/** Conditions (PostgreSQL's SQL) with the rows the engine keeps, by its exact semantics. */
const CONDITIONS: ReadonlyArray<{ sql: string; keep: (r: Row) => boolean; about?: 'textEquality' | 'textOrder' | 'dates' }> = [
  { sql: 'id = 3', keep: (r) => r.id === '3' },
  { sql: 'id IN (1, 3, 5, 99)', keep: (r) => ['1', '3', '5'].includes(r.id!) },
  { sql: 'id <> 3', keep: (r) => r.id !== '3' },
  { sql: 'NOT (id = 3)', keep: (r) => r.id !== '3' },
  { sql: 'id BETWEEN 2 AND 5', keep: (r) => Number(r.id) >= 2 && Number(r.id) <= 5 },
  { sql: 'big = 9007199254740993', keep: (r) => r.big === '9007199254740993' },
  { sql: 'big > 0', keep: (r) => (big(r.big) ?? 0n) > 0n },
  { sql: 'big <= -9223372036854775808', keep: (r) => r.big === '-9223372036854775808' },
  { sql: 'amount >= 0.5', keep: (r) => r.amount !== null && Number(r.amount) >= 0.5 },
  { sql: 'ratio < 0', keep: (r) => r.ratio !== null && Number(r.ratio) < 0 },
  { sql: "label = 'abc'", keep: (r) => r.label === 'abc', about: 'textEquality' },
  { sql: "label IN ('abc', 'b')", keep: (r) => r.label === 'abc' || r.label === 'b', about: 'textEquality' },
  { sql: "label LIKE 'a%'", keep: (r) => r.label?.startsWith('a') ?? false },
  { sql: "label LIKE 'a%' ESCAPE '#'", keep: (r) => r.label?.startsWith('a') ?? false },
  { sql: "label LIKE 'a#%%' ESCAPE '#'", keep: (r) => r.label?.startsWith('a%') ?? false },
  { sql: "label NOT LIKE 'ab_' ESCAPE ''", keep: (r) => r.label !== null && !/^ab.$/su.test(r.label) },
  { sql: "label < 'b'", keep: (r) => r.label !== null && bytewise(r.label, 'b') < 0, about: 'textOrder' },
  { sql: "label <> 'abc'", keep: (r) => r.label !== null && r.label !== 'abc' },
  { sql: 'label IS NULL', keep: (r) => r.label === null },
  { sql: 'label IS NOT NULL', keep: (r) => r.label !== null },
  { sql: "day >= DATE '2024-01-01'", keep: (r) => r.day !== null && r.day >= '2024-01-01', about: 'dates' },
  {
    sql: "moment < TIMESTAMP '2000-01-01 00:00:01'",
    keep: (r) => r.moment !== null && r.moment < '2000-01-01 00:00:01',
    about: 'dates',
  },
  { sql: "id < 3 OR label = 'b'", keep: (r) => Number(r.id) < 3 || r.label === 'b' },
];

// ---- the suite ---------------------------------------------------------------------------------

export function connectorConformance(kind: KindUnderTest): void {
  const b = kind.behaviours;
  /** The dialect's declared answers (row kinds). */
  const d = (): DialectBehaviours => {
    assert.ok(b.dialect, 'a row kind declares its dialect');
    return b.dialect;
  };
  describe(`connector conformance: ${kind.name}`, () => {
    let fixture: Fixture;
    let duck: DuckDBInstance;
    let engine: DuckDBConnection;
    let context: ConnectorContext;
    let connector: Connector;
    let tables: ImportedTable[];

    const engineRows = async (sql: string): Promise<unknown[][]> => (await engine.runAndReadAll(sql)).getRowsJS() as unknown[][];
    const tableOf = (name: string): TableDef => {
      const found = tables.find((t) => t.name === name);
      assert.ok(found, `${name} imported; have ${tables.map((t) => t.name).join(', ')}`);
      return { ...found, uid: `uid_${name}`, oid: 1 };
    };
    const columnOf = (table: TableDef, name: string): ColumnDef => {
      const found = table.columns.find((c) => c.name === name);
      assert.ok(found, `column ${name} of ${table.name}`);
      return found;
    };
    const rows = (): RowConnector => {
      assert.equal(connector.delivery, 'rows');
      return connector as RowConnector;
    };
    const scan = async (request: Omit<ScanRequest, 'signal'>, signal = new AbortController().signal): Promise<unknown[][]> => {
      const found: unknown[][] = [];
      for await (const batch of rows().scan({ ...request, signal })) found.push(...batch);
      return found;
    };
    /** `conf_values` as the engine reads it, by scan (rows kinds) or through the engine (the others). */
    const readValues = async (filter?: string): Promise<Row[]> => {
      const table = tableOf('conf_values');
      const types = table.columns.map((c) => c.type);
      const raw =
        b.delivery === 'rows'
          ? await scan({ table, columns: table.columns, filter })
          : await engineRows(
              `SELECT ${table.columns.map((c) => (c.type === 'BLOB' ? `hex("${c.name}")` : `CAST("${c.name}" AS VARCHAR)`)).join(', ')} FROM ${(
                connector as Extract<Connector, { delivery: 'engine' }>
              ).relationSql(table)}`,
            );
      return raw
        .map((values) => Object.fromEntries(table.columns.map((c, i) => [c.name, engineText(values[i], types[i]!)])) as Row)
        .sort((x, y) => Number(x.id) - Number(y.id));
    };
    /** A pushed condition as the planner writes it for this kind; null where the dialect declines it. */
    const pushed = (sql: string): { sql: string; exact: boolean } | null => {
      const table = tableOf('conf_values');
      const select = parseStatement(`SELECT 1 FROM t WHERE ${sql}`).stmts![0]!.stmt as { SelectStmt: { whereClause: never } };
      const generator = rows().dialect.predicates({
        column: (fields) => table.columns.find((c) => c.name === fields[fields.length - 1]),
        castMayFail: (column) => castMayFail(rows(), column),
      });
      try {
        return generator.generate(select.SelectStmt.whereClause);
      } catch (err) {
        if (err instanceof CannotPushDown) return null;
        throw err;
      }
    };
    const ids = (found: Row[]) => found.map((r) => Number(r.id));

    before(async () => {
      await initParser();
      fixture = await kind.create(`${uniqueTag()}_conf`);
      duck = await DuckDBInstance.create(':memory:');
      engine = await duck.connect();
      context = {
        roots: fixture.roots,
        openSecret: (sealed) => sealed,
        sealSecret: (plain) => plain,
        describe: async (relation) =>
          (await engine.runAndReadAll(`DESCRIBE SELECT * FROM ${relation}`))
            .getRowObjectsJS()
            .map((r) => ({ name: String(r.column_name), type: String(r.column_type) })),
        parquetRowCount: async (file) => {
          const [[count]] = await engineRows(`SELECT sum(num_rows) FROM parquet_file_metadata('${file.replace(/'/g, "''")}')`);
          return count === null || count === undefined ? null : Number(count);
        },
        engineQuery: async (sql) => (await engine.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>,
      };
      connector = createConnector(fixture.source, context);
      if (connector.delivery === 'engine') for (const statement of connector.setupSql()) await engine.run(statement);
      tables = await connector.importMetadata();
    });

    after(async () => {
      await connector?.close();
      engine?.closeSync();
      duck?.closeSync();
      await fixture?.drop();
    });

    test('health check answers; a source that cannot be reached is refused as unreachable, with what failed', async () => {
      await connector.healthCheck();
      const away = createConnector(fixture.unreachable, context);
      try {
        for (const attempt of [() => away.healthCheck(), () => away.importMetadata()]) {
          await assert.rejects(attempt(), (err: unknown) => {
            assert.ok(err instanceof SourceUnreachableError, `unreachable, got ${String(err)}`);
            assert.match(err.message, b.unreachableMessage);
            return true;
          });
        }
      } finally {
        await away.close();
      }
    });

    test('metadata: tables and views, columns with engine types and nullability, keys in key order, statistics', () => {
      const values = tableOf('conf_values');
      assert.equal(values.kind, 'Table');
      assert.deepEqual(
        values.columns.map((c) => [c.name, c.type, c.position]),
        COLUMNS.map((c, i) => [c, b.types[c], i + 1]),
      );
      assert.deepEqual(values.primaryKey, b.keys ? ['id'] : []);
      assert.equal(columnOf(values, 'id').nullable, !b.keys);
      assert.ok(
        values.columns.filter((c) => c.name !== 'id').every((c) => c.nullable),
        'the other columns are nullable',
      );
      const pair = tableOf('conf_pair');
      // Key columns in key order (b, a), not column order (a, b).
      assert.deepEqual(pair.primaryKey, b.keys ? ['b', 'a'] : []);
      assert.equal(columnOf(pair, 'c').nullable, !b.keys, 'c is NOT NULL');
      for (const [name, count] of [
        ['conf_values', ROWS.length],
        ['conf_long', LONG_ROWS],
      ] as const) {
        const cardinality = tableOf(name).cardinality;
        if (b.statistics === false) assert.equal(cardinality, null, `${name}: no statistics, not counted`);
        else
          assert.ok(
            cardinality !== null && Math.abs(cardinality - count) <= count * b.statistics.tolerance,
            `${name}: ${cardinality} rows`,
          );
      }
      if (b.views) {
        const view = tableOf('conf_view');
        assert.equal(view.kind, 'View');
        assert.deepEqual(
          view.columns.map((c) => [c.name, c.type]),
          [
            ['id', b.types.id],
            ['label', b.types.label],
          ],
        );
        assert.deepEqual(view.primaryKey, []);
        assert.equal(view.cardinality, null, 'a view has no statistics and is not counted');
      } else {
        assert.ok(
          tables.every((t) => t.kind === 'Table'),
          'no views',
        );
      }
    });

    test('declared dialect answers: scale from values, padded char, key arrays, text order and groups', () => {
      const values = tableOf('conf_values');
      const dialect = dialectOf(fixture.source);
      if (b.delivery === 'engine') {
        assert.equal(dialect, null, 'the engine reads the source itself: no dialect');
        assert.equal(b.dialect, null, 'nothing declared of a dialect');
        return;
      }
      const declared = d();
      assert.equal(dialect, rows().dialect, 'kinds.ts and the connector agree');
      assert.deepEqual(rows().capabilities, b.capabilities);
      assert.equal(dialect!.scaleFromValues(columnOf(values, 'wide')), declared.scaleFromValues, 'scale from values');
      assert.equal(dialect!.scaleFromValues(columnOf(values, 'amount')), false, 'a declared scale is kept');
      assert.equal(dialect!.paddedChar(columnOf(values, 'code')), declared.paddedChar, 'padded char');
      assert.equal(dialect!.paddedChar(columnOf(values, 'label')), false);
      assert.equal(dialect!.ordersLikeEngine(columnOf(values, 'label')), declared.textOrdersLikeEngine);
      assert.equal(dialect!.ordersLikeEngine(columnOf(values, 'big')), true, 'integers order alike everywhere');
      assert.equal(dialect!.groupsLikeEngine([columnOf(values, 'label')]), declared.textGroupsLikeEngine);
      assert.equal(dialect!.groupsLikeEngine([columnOf(values, 'flag')]), true);
      assert.equal(dialect!.keyArray(columnOf(values, 'id'), ['1', '2']) !== null, declared.keyArrays);
    });

    test('capabilities as declared; what the engine reads itself has no scan, dialect or writes', () => {
      assert.equal(connector.delivery, b.delivery);
      assert.deepEqual(connector.capabilities, b.capabilities);
      assert.equal(writableKind(kind.kind), b.writes, 'kinds.ts declares the same writes');
      if (b.delivery === 'engine') {
        assert.ok(!('scan' in connector) && !('dialect' in connector) && !('executeWrite' in connector));
        assert.equal(b.transactions, false);
      }
    });

    test('every value exact: integers beyond 2^53 as text, 38-digit decimals, dates, unicode, "" beside NULL', async () => {
      const table = tableOf('conf_values');
      if (b.delivery === 'rows') {
        // Each column's raw class as declared, and every value arrives in it losslessly.
        assert.deepEqual(Object.fromEntries(table.columns.map((c) => [c.name, rows().rawType(c)])), b.raw);
        const found = await scan({ table, columns: table.columns });
        for (const values of found)
          table.columns.forEach((c, i) =>
            assert.ok(inRawClass(values[i], b.raw![c.name as Column]), `${c.name}: ${String(values[i])} (${typeof values[i]})`),
          );
      }
      const found = await readValues();
      assert.deepEqual(ids(found), [1, 2, 3, 4, 5, 6, 7, 8]);
      for (const [i, expected] of ROWS.entries()) {
        const got = { ...found[i]! };
        if (!b.exactWideDecimals && expected.wide !== null) {
          // A double holds 15-17 digits: the value is near, and the engine is told a cast may fail.
          assert.ok(Math.abs(Number(got.wide) - Number(expected.wide)) <= Math.abs(Number(expected.wide)) * 1e-15, `wide ${got.wide}`);
          assert.equal(castMayFail(rows(), columnOf(table, 'wide')), true);
          got.wide = expected.wide;
        }
        if (b.dialect?.paddedChar && got.code !== null) {
          assert.equal(got.code.length, 5, `char(5) padded: "${got.code}"`);
          got.code = got.code.trimEnd();
        }
        assert.deepEqual(got, expected, `row ${expected.id}`);
      }
      // A row of NULLs is NULL in every column but its key; '' and empty bytes are not NULL.
      assert.equal(found[2]!.label, '');
      assert.equal(found[2]!.bytes, '');
    });

    test('a whole statement in the dialect gives the rows of a scan (statementRows)', async () => {
      if (b.delivery === 'engine') {
        assert.ok(!('statementRows' in connector), 'no statements at the source');
        return;
      }
      const table = tableOf('conf_values');
      const q = (name: string) => rows().dialect.quoteIdentifier(name);
      const sql = `SELECT ${q('label')}, ${q('big')} FROM ${rows().dialect.tableSql(table)} WHERE ${q('id')} IN (1, 3)`;
      const columns = ['label', 'big'].map((name) => {
        const c = columnOf(table, name);
        return { name, sourceType: c.sourceType ?? c.type, type: c.type };
      });
      const found: unknown[][] = [];
      for await (const batch of rows().statementRows(sql, columns, new AbortController().signal)) found.push(...batch);
      assert.deepEqual(
        found.map(([label, value]) => [label, String(value)]).sort((x, y) => String(x[1]).localeCompare(String(y[1]))),
        [
          ['', '-9223372036854775808'],
          [TEXT, '9007199254740993'],
        ],
      );
    });

    test('pushed conditions keep exactly the rows the engine keeps, or a declared superset; the rest is declined', async () => {
      if (b.delivery === 'engine') {
        assert.equal(dialectOf(fixture.source), null, 'conditions are the engine’s own: nothing to push through the connector');
        return;
      }
      const all = await readValues();
      for (const condition of CONDITIONS) {
        const expected = ids(all.filter(condition.keep));
        const generated = pushed(condition.sql);
        if (condition.about === 'textOrder') assert.equal(generated !== null, d().textOrderPushed, `${condition.sql}: pushed as declared`);
        if (condition.about === 'dates') assert.equal(generated !== null, d().datesPushed, `${condition.sql}: pushed as declared`);
        if (generated === null) continue;
        const got = ids(await readValues(generated.sql));
        if (condition.about === 'textEquality')
          assert.equal(generated.exact, d().textEquality === 'exact', `${condition.sql}: exact as declared`);
        if (generated.exact) assert.deepEqual(got, expected, `${condition.sql} as ${generated.sql}`);
        else
          assert.ok(
            expected.every((id) => got.includes(id)),
            `${condition.sql} as ${generated.sql}: a superset of ${expected}, got ${got}`,
          );
        if (condition.about === 'textEquality' && d().textEquality === 'superset')
          assert.ok(got.length > expected.length, `${condition.sql}: the collation matches more (${got}), as declared`);
      }
    });

    test('dependent-join keys: one array where declared, else batches; together exactly the rows of the keys', async () => {
      if (b.delivery === 'engine') {
        assert.equal(dialectOf(fixture.source), null);
        return;
      }
      const table = tableOf('conf_values');
      const id = columnOf(table, 'id');
      const keys = Array.from({ length: 100 }, (_, i) => String(i - 10));
      const filters = rows().dialect.keyFilters(id, keys, 10);
      assert.ok(filters, 'integer keys can be written');
      assert.equal(filters.length, d().keyArrays ? 1 : 10, `${filters.length} statement(s)`);
      const found: Row[] = [];
      for (const filter of filters) found.push(...(await readValues(filter)));
      assert.deepEqual(
        ids(found).sort((x, y) => x - y),
        [1, 2, 3, 4, 5, 6, 7, 8],
        'each row once',
      );
    });

    test('ORDER BY with LIMIT is pushed where declared, with the engine’s NULL placement and text order', async () => {
      if (b.delivery === 'engine') return assert.equal(dialectOf(fixture.source), null, 'the engine orders and limits itself');
      if (!b.capabilities.limit || !b.capabilities.orderBy)
        return assert.ok(!rows().capabilities.limit || !rows().capabilities.orderBy, 'not offered to the planner');
      const table = tableOf('conf_values');
      const all = await readValues();
      const order = (column: Column, descending: boolean, nullsFirst: boolean, compare: (x: string, y: string) => number) =>
        all
          .slice()
          .sort((x, y) => {
            const [p, q] = [x[column], y[column]];
            if (p === null || q === null) return p === q ? 0 : (p === null) === nullsFirst ? -1 : 1;
            return descending ? compare(q, p) : compare(p, q);
          })
          .map((r) => Number(r.id));
      const byBig = (p: string, q: string) => (BigInt(p) < BigInt(q) ? -1 : BigInt(p) > BigInt(q) ? 1 : 0);
      for (const [descending, nullsFirst] of [
        [true, false],
        [false, true],
      ] as const) {
        const request = { table, columns: table.columns, orderBy: [{ column: columnOf(table, 'big'), descending, nullsFirst }], limit: 3 };
        const found = (await scan(request)).map((r) => Number(r[0]));
        assert.deepEqual(found, order('big', descending, nullsFirst, byBig).slice(0, 3), `big ${descending ? 'DESC' : 'ASC'}`);
      }
      const byLabel = {
        table,
        columns: table.columns,
        orderBy: [{ column: columnOf(table, 'label'), descending: false, nullsFirst: false }],
        limit: 8,
      };
      const labels = (await scan(byLabel)).map((r) => Number(r[0]));
      if (d().textOrdersLikeEngine) assert.deepEqual(labels, order('label', false, false, bytewise), 'bytewise, as the engine');
      else assert.equal(labels.length, 8, 'text order is the source’s: the planner does not push it (declared)');
    });

    test('partial aggregates per group where declared; refused where not', async () => {
      if (!b.capabilities.aggregates) {
        if (b.delivery === 'engine') return assert.equal(connector.delivery, 'engine');
        const table = tableOf('conf_values');
        const request = { table, columns: [columnOf(table, 'flag')], aggregates: [{ fn: 'count' as const, column: null }] };
        assert.throws(() => rows().scanSql(request), /aggregate/, 'scanSql refuses what the source does not compute');
        await assert.rejects(scan(request), /aggregate/, 'and so does scan');
        return;
      }
      if (b.delivery === 'engine') return assert.equal(dialectOf(fixture.source), null, 'the engine aggregates itself');
      const table = tableOf('conf_values');
      const aggregates: PartialAggregate[] = [
        { fn: 'count', column: null },
        { fn: 'count', column: columnOf(table, 'label') },
        { fn: 'min', column: columnOf(table, 'id') },
        { fn: 'max', column: columnOf(table, 'big') },
        { fn: 'sum', column: columnOf(table, 'id') },
      ];
      const all = await readValues();
      for (const [filter, keep] of [
        [undefined, () => true],
        [`${rows().dialect.quoteIdentifier('id')} > 1`, (r: Row) => Number(r.id) > 1],
      ] as const) {
        const found = await scan({ table, columns: [columnOf(table, 'flag')], aggregates, filter });
        const got = found.map((r) => [engineText(r[0], 'BOOLEAN'), ...r.slice(1).map((v) => (v === null ? null : String(v)))]);
        const groups = new Map<string | null, Row[]>();
        for (const r of all.filter(keep)) groups.set(r.flag, [...(groups.get(r.flag) ?? []), r]);
        const expected = [...groups].map(([flag, members]) => {
          const bigs = members.map((r) => r.big).filter((v): v is string => v !== null);
          return [
            flag,
            String(members.length),
            String(members.filter((r) => r.label !== null).length),
            String(Math.min(...members.map((r) => Number(r.id)))),
            bigs.length === 0 ? null : bigs.reduce((x, y) => (BigInt(x) > BigInt(y) ? x : y)),
            String(members.reduce((sum, r) => sum + Number(r.id), 0)),
          ];
        });
        const key = (r: unknown[]) => String(r[0]);
        assert.deepEqual(
          got.sort((x, y) => key(x).localeCompare(key(y))),
          expected.sort((x, y) => key(x).localeCompare(key(y))),
          `filter ${filter}`,
        );
      }
    });

    test('scans come in batches, in order; a reader that stops early ends the read at the source, which stays usable', async () => {
      if (b.delivery === 'engine') return assert.equal(b.batches, undefined, 'the engine reads the source itself');
      const { rows: size, exact } = b.batches!;
      const sized = (length: number) => (exact ? length === size : length >= size);
      const long = tableOf('conf_long');
      const sizes: number[] = [];
      let last = 0;
      let ordered = true;
      for await (const batch of rows().scan({ table: long, columns: long.columns, signal: new AbortController().signal })) {
        sizes.push(batch.length);
        for (const [id] of batch) ordered &&= Number(id) === ++last;
      }
      assert.ok(sizes.slice(0, -1).every(sized) && sizes.at(-1)! <= (exact ? size : LONG_ROWS), `batches of ${sizes.join(', ')}`);
      if (exact) assert.equal(sizes.length, Math.ceil(LONG_ROWS / size));
      assert.ok(ordered && last === LONG_ROWS, 'every row once, in order');
      const endless = tableOf('conf_endless');
      const started = performance.now();
      let batches = 0;
      for await (const batch of rows().scan({ table: endless, columns: endless.columns, signal: new AbortController().signal })) {
        assert.ok(sized(batch.length), `a batch of ${batch.length}`);
        if (++batches === 3) break;
      }
      assert.ok(performance.now() - started < 10_000, 'the reader left promptly: the rest was not read');
      if (fixture.readsRunning)
        assert.ok(
          await waitUntil(async () => (await fixture.readsRunning!('conf_endless')) === 0, 5000),
          'the stopped read ended at the source',
        );
      assert.equal((await scan({ table: long, columns: long.columns })).length, LONG_ROWS, 'the source still answers');
    });

    test('cancellation: an aborted signal ends a long read promptly, also one still computing where declared', async () => {
      if (b.delivery === 'engine') return assert.equal(b.cancelsWhileComputing, false, 'the engine reads and cancels the source itself');
      const endless = tableOf('conf_endless');
      // Aborted before it starts: nothing is read.
      const aborted = AbortSignal.abort(new Error('conformance: aborted before'));
      const before: unknown[][] = [];
      await scan({ table: endless, columns: endless.columns }, aborted).then(
        (found) => before.push(...found),
        () => undefined,
      );
      assert.equal(before.length, 0, 'no rows after an abort');
      // Aborted after its first batch: the read ends (fails with the reason, or ends) at once.
      const controller = new AbortController();
      const started = performance.now();
      let read = 0;
      const reading = (async () => {
        for await (const batch of rows().scan({ table: endless, columns: endless.columns, signal: controller.signal })) {
          read += batch.length;
          controller.abort(new Error('conformance: aborted'));
        }
      })();
      await reading.catch((err: unknown) => assert.match(String(err), /conformance: aborted/));
      assert.ok(performance.now() - started < 10_000, 'ended promptly');
      assert.ok(read < 1_000_000, `stopped early (${read} rows)`);
      if (fixture.readsRunning)
        assert.ok(await waitUntil(async () => (await fixture.readsRunning!('conf_endless')) === 0, 5000), 'and at the source');
      // Still computing (nothing sent yet): only a cancel at the source ends it early.
      if (!b.cancelsWhileComputing) {
        assert.equal(networkOf(kind.kind), null, 'only a source read in this process may declare no cancel while computing');
        return;
      }
      const slow = tableOf('conf_slow');
      const stop = new AbortController();
      const pending = scan({ table: slow, columns: slow.columns }, stop.signal);
      if (fixture.readsRunning)
        assert.ok(await waitUntil(async () => (await fixture.readsRunning!('conf_slow')) === 1, 5000, 25), 'the slow read runs');
      const cancelled = performance.now();
      stop.abort(new Error('conformance: cancelled'));
      await assert.rejects(pending, /conformance: cancelled/);
      assert.ok(performance.now() - cancelled < 3000, 'the read failed at once');
      if (fixture.readsRunning)
        assert.ok(
          await waitUntil(async () => (await fixture.readsRunning!('conf_slow')) === 0, 5000),
          'the statement was cancelled at the source',
        );
      await connector.healthCheck();
    });

    test('writes answer their counts; a transaction that throws is rolled back; both refused where not declared', async () => {
      const writer = connector as Partial<{
        executeWrite(sql: string, signal: AbortSignal): Promise<number>;
        inTransaction<T>(signal: AbortSignal, work: (t: SourceTransaction) => Promise<T>): Promise<T>;
      }>;
      if (!b.writes) {
        assert.ok(!('executeWrite' in connector) && !('insertRows' in connector), 'no way to write');
        assert.ok(!('inTransaction' in connector));
        return;
      }
      const table = tableOf('conf_writes');
      const target = rows().dialect.tableSql(table);
      const signal = new AbortController().signal;
      const write = (sql: string) => writer.executeWrite!(sql, signal);
      assert.equal(await write(`INSERT INTO ${target} ("id", "note") VALUES (1, 'one'), (2, 'two'), (3, 'three')`), 3);
      assert.equal(await write(`UPDATE ${target} SET "note" = 'changed' WHERE "id" >= 2`), 2);
      assert.equal(await write(`DELETE FROM ${target} WHERE "id" = 1`), 1);
      assert.equal(await write(`DELETE FROM ${target} WHERE "id" = 99`), 0);
      await assert.rejects(write(`INSERT INTO ${target} ("id", "note") VALUES (2, 'again')`), 'a duplicate key fails');
      const kept: Array<[number, string | null]> = [
        [2, 'changed'],
        [3, 'changed'],
      ];
      assert.deepEqual(await fixture.writtenRows!(), kept);
      if (b.transactions === false) {
        assert.ok(!('inTransaction' in connector), 'no transactions: the engine refuses writes under a row condition');
        return;
      }
      const declared = b.transactions;
      const counts = await writer.inTransaction!(signal, async (t) => {
        assert.equal(t.excludesWriters, declared.excludesWriters);
        await t.lockRows(table, `"id" = 3`);
        return [
          await t.execute(`INSERT INTO ${target} ("id", "note") VALUES (4, 'four')`),
          await t.execute(`UPDATE ${target} SET "note" = 'tx' WHERE "id" = 4`),
        ];
      });
      assert.deepEqual(counts, [1, 1]);
      kept.push([4, 'tx']);
      assert.deepEqual(await fixture.writtenRows!(), kept, 'committed');
      await assert.rejects(
        writer.inTransaction!(signal, async (t) => {
          assert.equal(await t.execute(`INSERT INTO ${target} ("id", "note") VALUES (5, 'five')`), 1);
          assert.equal(await t.execute(`DELETE FROM ${target} WHERE "id" = 2`), 1);
          throw new Error('conformance: roll back');
        }),
        /conformance: roll back/,
      );
      assert.deepEqual(await fixture.writtenRows!(), kept, 'rolled back');
      assert.equal(await write(`DELETE FROM ${target}`), kept.length, 'the source still writes');
    });

    test('the connector closes cleanly, twice, also one never connected', async () => {
      const fresh = createConnector(fixture.source, context);
      await assert.doesNotReject(fresh.close());
      const used = createConnector(fixture.source, context);
      await used.healthCheck();
      await assert.doesNotReject(used.close());
      await assert.doesNotReject(used.close(), 'a second close is harmless');
    });
  });
}
