/**
 * Refreshes of copies of mode `changes` (docs/copies.md): the source's own change log.
 *  - full: a new capture (replication slot and publication) starts, THEN the table is read whole;
 *    changes committed between the two replay later, which changes nothing.
 *  - incremental: the capture's changes since the version's, folded into the last state of each
 *    key (connectors/postgres/change-capture.ts), written as a delta of upserted rows (`data`)
 *    and deleted keys (`deleted`); the capture is passed only once the new version is current, so
 *    a failed refresh reads the same changes again. What cannot be applied row by row (a
 *    truncate, changed columns, a value the copy's column cannot hold exactly) reads whole.
 */
import { randomBytes } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { UNCONSTRAINED_NUMERIC, type CopyDef, type CopyRefreshRecord, type CopyVersion, type TableDef } from '../../catalog/types.js';
import type { CapturedChanges, ChangeCaptureConnector, RowConnector } from '../../connectors/types.js';
import { badRequest } from '../../errors.js';
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import { attachAlias, attachStatements, versionSql } from '../../sources/copies.js';
import type { SourceRegistry } from '../../sources/registry.js';
import { dropLoad, loadBatches, tryCast } from '../exec/load.js';
import type { LocalCopies } from '../../sources/copies.js';
import type { EngineGeneration } from '../../runtime/duckdb.js';

/** A refresh's new version, the rows it read from the source, and what kind of refresh it was. */
export type Made = { version: CopyVersion; rows: number; kind: CopyRefreshRecord['kind'] };

/** What writes a refresh's files (copy-refresh.ts's VersionWriter), as this module uses it. */
export interface VersionWriter {
  readonly copies: LocalCopies;
  readonly readAt: string;
  readonly nextId: number;
  readonly engine: EngineGeneration;
  file(id: number, part: 'base' | 'delta'): string;
  bytes(relative: string | null): number;
  full(): Promise<Made>;
  settle(version: CopyVersion, deltaRows: number, fetched: number): Promise<Made>;
}

/** More changes than this at once are read whole: a full read costs less than that many rows one by one. */
const MAX_CHANGES = 500_000;

/** The table of a copy of mode `changes` and its source's change capture (a 400 where the source has none). */
export function captureOf(registry: SourceRegistry, copy: Pick<CopyDef, 'schema' | 'table' | 'keyColumns'>) {
  const source = registry.findSource(copy.schema);
  const table = source?.tables.find((t) => t.name.toLowerCase() === copy.table.toLowerCase());
  const connector = source ? registry.connectorOf(source) : null;
  const capture = connector?.delivery === 'rows' ? (connector as RowConnector).changeCapture : undefined;
  if (!source || !table || !capture)
    throw badRequest(
      `Mode changes reads the change log of a PostgreSQL source; ${copy.schema}.${copy.table} is not a table of one.`,
      'Use mode full, append or upsert.',
    );
  const keys = copy.keyColumns.map((k) => table.columns.find((c) => c.name === k)!);
  return { table, capture, keys };
}

/** A new name for a capture of `copy` (a slot and a publication): its prefix and a random part. */
export const newCaptureName = (prefix: string) => `${prefix}_${randomBytes(3).toString('hex')}`;

export class ChangeRefresh {
  private readonly table: TableDef;
  private readonly capture: ChangeCaptureConnector;
  private readonly keys: TableDef['columns'];
  /** The capture this refresh started (a full read), or the one it read and the position to pass once done. */
  private started: string | null = null;
  private read: { name: string; upTo: string } | null = null;

  constructor(
    private readonly copy: CopyDef,
    registry: SourceRegistry,
    private readonly writer: VersionWriter,
  ) {
    ({ table: this.table, capture: this.capture, keys: this.keys } = captureOf(registry, copy));
  }

  async refresh(whole: boolean): Promise<Made> {
    const current = this.copy.current;
    if (whole || !current?.capture) return this.full();
    const changes = await this.capture.read(current.capture, this.table, this.keys, MAX_CHANGES);
    if (changes.wholeReason) return this.full();
    if (changes.upTo) this.read = { name: current.capture, upTo: changes.upTo };
    const made = changes.rows.length === 0 ? null : await this.apply(current, changes);
    if (made === 'whole') return this.full();
    const id = this.writer.nextId;
    if (!made) return { version: { ...current, id, readAt: this.writer.readAt }, rows: 0, kind: 'incremental' };
    return this.writer.settle({ ...current, ...made.version, id, readAt: this.writer.readAt }, made.deltaRows, changes.rows.length);
  }

  /** A new capture, then the whole table. */
  private async full(): Promise<Made> {
    this.read = null;
    const name = newCaptureName(this.copy.capturePrefix!);
    await this.capture.start(name, this.table);
    this.started = name;
    const made = await this.writer.full();
    return { ...made, version: { ...made.version, capture: name } };
  }

  /** Once the new version is current: the capture passes what it holds, or the older captures end. */
  async settle(): Promise<void> {
    if (this.started) await this.capture.drop(`${this.copy.capturePrefix}_`, this.started).catch(() => undefined);
    // A capture not passed reads the same changes again next time (which changes nothing).
    else if (this.read) await this.capture.advance(this.read.name, this.read.upTo).catch(() => undefined);
  }

  /** The refresh failed or its copy was dropped: the capture it started ends. */
  async discard(): Promise<void> {
    if (this.started) await this.capture.drop(this.started).catch(() => undefined);
  }

  /**
   * Writes the new delta: the current one's rows and deleted keys less the keys changed now,
   * plus the rows and keys of `changes`. 'whole' when a value does not fit the copy's column exactly.
   */
  private async apply(
    current: CopyVersion,
    changes: CapturedChanges,
  ): Promise<{ version: Partial<CopyVersion>; deltaRows: number } | 'whole'> {
    const copies = this.writer.copies;
    const delta = this.writer.file(this.writer.nextId, 'delta');
    return this.writer.engine.withConnection(async (connection) => {
      for (const statement of attachStatements(copies, this.copy, current)) await connection.run(statement);
      const baseTypes = await columnTypes(connection, attachAlias(this.copy, current.base));
      const names = this.table.columns.map((c) => c.name);
      if (baseTypes.length !== names.length || baseTypes.some((c, i) => c.name !== names[i])) return 'whole';
      const load = `__vdb_changes_${this.copy.oid}_${this.writer.nextId}`;
      const columns = [
        ...this.table.columns.map((c, i) => ({
          name: c.name,
          type: baseTypes[i]!.type,
          raw: c.type === 'BLOB' ? ('BLOB' as const) : ('VARCHAR' as const),
        })),
        { name: '__vdb_deleted', type: 'BIGINT', raw: 'BIGINT' as const },
        // The columns an update left as they were (',2,5,'): their values are the copy's.
        { name: '__vdb_kept', type: 'VARCHAR', raw: 'VARCHAR' as const },
      ];
      const rows = changes.rows.map((r) => [
        ...(r.values ?? this.keyOnly(r.key)),
        r.values ? 0 : 1,
        r.kept ? `,${r.kept.join(',')},` : null,
      ]);
      const kept = changes.rows.some((r) => r.kept);
      await loadBatches(
        connection,
        load,
        columns,
        (async function* () {
          yield rows;
        })(),
        new AbortController().signal,
      );
      try {
        if (!(await this.exact(connection, `${load}_raw`, columns.slice(0, names.length)))) return 'whole';
        if (kept && !(await this.keptFound(connection, current, load))) return 'whole';
        return await this.writeDelta(connection, current, delta, kept ? this.withKept(current, load) : load);
      } finally {
        await dropLoad(connection, load);
      }
    });
  }

  /** Whether the copy holds every row whose update left values out (else they are unknown here: read whole). */
  private async keptFound(connection: DuckDBConnection, current: CopyVersion, load: string): Promise<boolean> {
    const on = this.keys.map((c) => `f.${quoteIdent(c.name)} = c.${quoteIdent(c.name)}`).join(' AND ');
    const missing = await connection.runAndReadAll(
      `SELECT count(*) FROM ${load} f ANTI JOIN (${versionSql(this.copy, current)}) c ON ${on} WHERE f.__vdb_kept IS NOT NULL`,
    );
    return Number(missing.getRows()[0]![0]) === 0;
  }

  /** The changed rows with the values their updates left out taken from the copy. */
  private withKept(current: CopyVersion, load: string): string {
    const on = this.keys.map((c) => `f.${quoteIdent(c.name)} = c.${quoteIdent(c.name)}`).join(' AND ');
    const list = this.table.columns.map((column, i) => {
      const name = quoteIdent(column.name);
      return `CASE WHEN contains(f.__vdb_kept, ',${i},') THEN c.${name} ELSE f.${name} END AS ${name}`;
    });
    return `(SELECT ${list.join(', ')}, f.__vdb_deleted FROM ${load} f LEFT JOIN (${versionSql(this.copy, current)}) c ON ${on})`;
  }

  /** A deleted row: its key's values, NULL elsewhere. */
  private keyOnly(key: string[]): Array<string | null> {
    return this.table.columns.map((c) => {
      const at = this.keys.indexOf(c);
      return at < 0 ? null : key[at]!;
    });
  }

  /**
   * Whether every changed value fits its copy column as a full read would load it: none cast to
   * NULL, no decimal rounded, and in a numeric without declared scale (whose copy column has
   * the scale its values had, load-scale.ts) none of another scale.
   */
  private async exact(connection: DuckDBConnection, raw: string, columns: ReadonlyArray<{ type: string; raw: string }>): Promise<boolean> {
    const checks = columns.flatMap((c, i) => {
      if (c.raw === c.type) return [];
      const lost = [`(c${i} IS NOT NULL AND ${tryCast(`c${i}`, c.type)} IS NULL)`];
      const scale = /^DECIMAL\(\d+,\s*(\d+)\)$/i.exec(c.type)?.[1];
      const textScale = `CASE WHEN strpos(c${i}, '.') > 0 THEN length(c${i}) - strpos(c${i}, '.') ELSE 0 END`;
      const scaled = this.table.columns[i]!.type === UNCONSTRAINED_NUMERIC;
      if (scale !== undefined) lost.push(`(c${i} IS NOT NULL AND ${textScale} ${scaled ? '<>' : '>'} ${scale})`);
      return lost;
    });
    if (checks.length === 0) return true;
    const reader = await connection.runAndReadAll(`SELECT count(*) FROM ${raw} WHERE ${checks.join(' OR ')}`);
    return Number(reader.getRows()[0]![0]) === 0;
  }

  private async writeDelta(
    connection: DuckDBConnection,
    current: CopyVersion,
    delta: string,
    load: string,
  ): Promise<{ version: Partial<CopyVersion>; deltaRows: number }> {
    const alias = quoteIdent(`vdb_write_${this.copy.oid}_${this.writer.nextId}`);
    const previous = current.delta ? quoteIdent(attachAlias(this.copy, current.delta)) : null;
    const list = this.table.columns.map((c) => quoteIdent(c.name)).join(', ');
    const keyList = this.keys.map((c) => quoteIdent(c.name)).join(', ');
    const on = this.keys.map((c) => `p.${quoteIdent(c.name)} = f.${quoteIdent(c.name)}`).join(' AND ');
    const kept = (table: string) => (previous ? `SELECT p.* FROM ${previous}.${table} p ANTI JOIN ${load} f ON ${on} UNION ALL ` : '');
    await connection.run(`ATTACH ${sqlLiteral(this.writer.copies.pathOf(delta))} AS ${alias}`);
    let deltaRows: number;
    try {
      await connection.run(`CREATE TABLE ${alias}.main.data AS ${kept('data')}SELECT ${list} FROM ${load} WHERE __vdb_deleted = 0`);
      await connection.run(
        `CREATE TABLE ${alias}.main.deleted AS ${kept('deleted')}SELECT ${keyList} FROM ${load} WHERE __vdb_deleted = 1`,
      );
      const counts = await connection.runAndReadAll(
        `SELECT (SELECT count(*) FROM ${alias}.main.data) + (SELECT count(*) FROM ${alias}.main.deleted)`,
      );
      deltaRows = Number(counts.getRows()[0]![0]);
    } finally {
      await connection.run(`DETACH ${alias}`);
    }
    const rows = current.rows + (await this.rowsAdded(connection, current, load));
    return { version: { delta, rows, bytes: this.writer.bytes(current.base) + this.writer.bytes(delta) }, deltaRows };
  }

  /** The rows the changes add to the version's count: rows set less the keys the version held (no pass over the base's rows). */
  private async rowsAdded(connection: DuckDBConnection, current: CopyVersion, load: string): Promise<number> {
    const has = (table: string, alias: string) =>
      `EXISTS (SELECT 1 FROM ${table} ${alias} WHERE ${this.keys.map((c) => `${alias}.${quoteIdent(c.name)} = f.${quoteIdent(c.name)}`).join(' AND ')})`;
    const base = has(`${quoteIdent(attachAlias(this.copy, current.base))}.data`, 'b');
    const previous = current.delta ? quoteIdent(attachAlias(this.copy, current.delta)) : null;
    // A key is in the version when its delta sets it, or its base holds it and its delta did not delete it.
    const held = previous ? `${has(`${previous}.data`, 'p')} OR (${base} AND NOT ${has(`${previous}.deleted`, 'x')})` : base;
    const reader = await connection.runAndReadAll(
      `SELECT count(*) FILTER (WHERE __vdb_deleted = 0) - count(*) FILTER (WHERE held) FROM (SELECT f.__vdb_deleted, ${held} AS held FROM ${load} f)`,
    );
    return Number(reader.getRows()[0]![0]);
  }
}

/** The columns of table `data` of an attached copy file: names and types. */
async function columnTypes(connection: DuckDBConnection, database: string): Promise<Array<{ name: string; type: string }>> {
  const reader = await connection.runAndReadAll(
    `SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ${sqlLiteral(database)} AND table_name = 'data' ORDER BY column_index`,
  );
  return reader.getRows().map(([name, type]) => ({ name: String(name), type: String(type) }));
}
