/**
 * The sources the planner tests plan against: a PostgreSQL, a MySQL and a SQLite source as their
 * importers would have left them (tables, columns, statistics); their hosts are never contacted.
 */
import path from 'node:path';
import type { CatalogData, ColumnDef, SourceDef, TableDef } from '../../src/catalog/types.js';

const column = (name: string, type: string, position: number): ColumnDef => ({ name, nameInSource: name, type, nullable: true, position });

export function table(name: string, nameInSource: string, cardinality: number, columns: Array<[string, string]>, oid: number): TableDef {
  return {
    name,
    nameInSource,
    kind: 'Table',
    columns: columns.map(([n, t], i) => column(n, t, i + 1)),
    primaryKey: ['id'],
    cardinality,
    uid: `t${oid}`,
    oid,
  } as TableDef;
}

/** Statistics of some columns, as an importer leaves them: name -> [distinct, NULL share]. */
export function withStatistics(def: TableDef, stats: Record<string, [number | null, number | null]>): TableDef {
  for (const c of def.columns) {
    const [distinct, nulls] = stats[c.name] ?? [null, null];
    if (distinct !== null) c.distinct = distinct;
    if (nulls !== null) c.nullFraction = nulls;
  }
  return def;
}

function withSourceTypes(def: TableDef, types: Array<string | undefined>): TableDef {
  def.columns.forEach((c, i) => {
    if (types[i] !== undefined) c.sourceType = types[i];
  });
  return def;
}

export function source(
  name: string,
  kind: SourceDef['kind'],
  connection: Record<string, string>,
  tables: TableDef[],
  oid: number,
): SourceDef {
  return {
    name,
    kind,
    connection,
    secrets: {},
    model: {},
    translator: {},
    description: null,
    readOnly: false,
    createdAt: '2026-11-23T00:00:00Z',
    tables,
    oid,
  };
}

/** The sources, with the SQLite file's path under `dataDir`. */
export function planSources(dataDir: string): SourceDef[] {
  const data: CatalogData = {
    formatVersion: 1,
    initialized: true,
    users: [],
    nextOid: 2000,
    sources: [
      source(
        'pg',
        'postgresql',
        { host: '127.0.0.1', port: '1', db: 'none', user: 'none' },
        [
          withStatistics(
            table(
              'orders',
              '"public"."orders"',
              1_000_000,
              [
                ['id', 'BIGINT'],
                ['customer_id', 'BIGINT'],
                ['amount', 'DECIMAL(12,2)'],
                ['status', 'VARCHAR'],
                ['created', 'DATE'],
              ],
              1001,
            ),
            { customer_id: [100_000, 0], status: [4, 0.2] },
          ),
          withSourceTypes(
            table(
              'customers',
              '"public"."customers"',
              100_000,
              [
                ['id', 'BIGINT'],
                ['name', 'VARCHAR'],
                ['country', 'VARCHAR'],
              ],
              1002,
            ),
            [undefined, 'text', 'character varying(2)'],
          ),
        ],
        1000,
      ),
      source(
        'my',
        'mysql',
        { host: '127.0.0.1', port: '1', db: 'none', user: 'none' },
        [
          // MySQL's COLUMN_TYPE of the text columns, as its importer records them.
          withSourceTypes(
            table(
              'customers',
              '`none`.`customers`',
              100_000,
              [
                ['id', 'BIGINT'],
                ['name', 'VARCHAR'],
                ['country', 'VARCHAR'],
                ['created', 'DATE'],
              ],
              1011,
            ),
            [undefined, 'varchar(40)', 'char(2)', undefined],
          ),
        ],
        1010,
      ),
      source(
        'lite',
        'sqlite',
        { path: path.join(dataDir, 'files', 'none.sqlite') },
        [
          // SQLite's declared types (affinities): a TEXT column's values are always text.
          withSourceTypes(
            table(
              'items',
              'items',
              500,
              [
                ['id', 'BIGINT'],
                ['label', 'VARCHAR'],
                ['made', 'DATE'],
              ],
              1021,
            ),
            ['INTEGER', 'TEXT', 'DATE'],
          ),
          // A file never analyzed (no sqlite_stat1): no row estimate.
          { ...table('unanalyzed', 'unanalyzed', 0, [['id', 'BIGINT']], 1022), cardinality: null },
        ],
        1020,
      ),
    ],
  };
  return data.sources;
}
