/**
 * A copy's refresh (docs/copies.md): a new version written once, aside, by the engine, then made
 * current in the catalog and in the engine in one step; a failed refresh leaves the last good
 * version in place. The rows come the way a statement reads the table: the federated plan's load
 * of the source, with its pushed conditions and its casts, so a copy holds exactly the values a
 * live statement would compute with.
 *  - full: the whole table into a new base file;
 *  - incremental (append, upsert): the rows past the watermark into a new delta file, which holds
 *    every row added or changed since the base; a delta grown past a share of the base is folded
 *    into a new base, locally.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CopyDef, CopyRefreshRecord, CopyVersion, UserDef } from '../../catalog/types.js';
import { ApiError, messageOf } from '../../errors.js';
import { quoteIdent, sqlLiteral, type EngineGeneration } from '../../runtime/duckdb.js';
import { AccessPolicy } from '../../security/permissions.js';
import { ADMIN_ROLE } from '../../security/users.js';
import { attachAlias, attachStatements, LIVE_READING, versionSql, type LocalCopies } from '../../sources/copies.js';
import type { SourceRegistry } from '../../sources/registry.js';
import type { DuckRuntime } from '../../runtime/duckdb.js';
import { bindStatement } from '../access/bind.js';
import { openFederatedExecution, type Execution } from '../exec/execute.js';
import type { DependentJoinLimits } from '../exec/load.js';
import { parseStatement } from '../front/parse.js';
import { planFederated } from '../plan/federated.js';
import { ChangeRefresh, type Made } from './copy-changes.js';

export interface CopyRefreshContext {
  registry: SourceRegistry;
  runtime: DuckRuntime;
  vdbName: string;
  options: { pushdown: boolean; dependentJoin: DependentJoinLimits };
  /** This instance's name, for the refresh history. */
  instance: string;
  /** Told of every refresh this instance ran (the metrics). */
  observe?: (copy: string, record: CopyRefreshRecord) => void;
}

/** A delta holding more rows than this share of its base is folded into a new base. */
const COMPACT_SHARE = 0.2;

/** Refreshes read every row of the source, whoever asked: what a user sees is decided when a statement reads the copy. */
const REFRESH_USER: UserDef = {
  name: 'vdb-copies',
  kind: 'password',
  passwordHash: null,
  tokenSecret: '',
  databaseUsername: 'vdb-copies',
  rest: false,
  linkToken: '',
  roles: [ADMIN_ROLE],
  createdAt: new Date(0).toISOString(),
};

/** Whether a refresh of `copy` now reads the whole table (else only its changes). */
export function refreshesWhole(copy: CopyDef, asked: 'full' | 'auto', now: number): boolean {
  if (asked === 'full' || copy.mode === 'full' || !copy.current) return true;
  if (copy.fullRefreshEvery === null || !copy.lastFullAt) return false;
  return now - Date.parse(copy.lastFullAt) >= copy.fullRefreshEvery * 1000;
}

/**
 * Refreshes `copy`: writes a new version and makes it current. Returns the copy as stored after,
 * or null when it was dropped meanwhile. A failure is recorded on the copy and thrown.
 */
export async function refreshCopy(
  copy: CopyDef,
  asked: 'full' | 'auto',
  context: CopyRefreshContext,
  signal: AbortSignal,
): Promise<CopyDef | null> {
  const copies = context.registry.copies;
  const started = Date.now();
  const whole = refreshesWhole(copy, asked, started);
  const writer = new VersionWriter(copy, context, new Date(started).toISOString(), signal);
  let made: Made;
  let changes: ChangeRefresh | null = null;
  try {
    if (copy.mode === 'changes') changes = new ChangeRefresh(copy, context.registry, writer);
    made = changes ? await changes.refresh(whole) : whole ? await writer.full() : await writer.incremental();
  } catch (err) {
    writer.discard();
    await changes?.discard();
    const error = messageOf(err);
    const failed = record(started, whole ? 'full' : 'incremental', 0, 'failed', error, context.instance);
    await copies.change(copy.oid, (c) => {
      c.failures += 1;
      c.lastError = error;
      c.lastAttemptAt = new Date(started).toISOString();
      c.history.push(failed);
    });
    context.observe?.(copy.name, failed);
    throw err;
  }
  const done = record(started, made.kind, made.rows, 'ok', null, context.instance);
  const updated = await copies.change(copy.oid, (c) => {
    c.current = made.version;
    c.failures = 0;
    c.lastError = null;
    c.lastAttemptAt = new Date(started).toISOString();
    if (made.kind === 'full') c.lastFullAt = made.version.readAt;
    c.history.push(done);
  });
  context.observe?.(copy.name, done);
  if (!updated) {
    writer.discard();
    await changes?.discard();
    return null;
  }
  await copies.publish(updated);
  await changes?.settle();
  const previous = copy.current;
  copies.removeStaleFiles(updated, [made.version.base, made.version.delta, previous?.base, previous?.delta].filter((f) => !!f) as string[]);
  return updated;
}

function record(
  started: number,
  kind: CopyRefreshRecord['kind'],
  rows: number,
  status: CopyRefreshRecord['status'],
  error: string | null,
  instance: string,
): CopyRefreshRecord {
  return { startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, kind, rows, status, error, instance };
}

/** Writes the files of one new version of a copy; `discard` removes them when the refresh fails. */
class VersionWriter {
  private readonly written: string[] = [];
  readonly copies: LocalCopies;

  constructor(
    private readonly copy: CopyDef,
    private readonly context: CopyRefreshContext,
    readonly readAt: string,
    private readonly signal: AbortSignal,
  ) {
    this.copies = context.registry.copies;
    fs.mkdirSync(path.join(this.copies.folder, String(copy.oid)), { recursive: true, mode: 0o700 });
  }

  get nextId(): number {
    return (this.copy.current?.id ?? 0) + 1;
  }

  get engine(): EngineGeneration {
    return this.context.runtime.current;
  }

  /** A new file of this copy, relative to the copies folder. */
  file(id: number, part: 'base' | 'delta'): string {
    const relative = path.join(String(this.copy.oid), `${id}-${part}.duckdb`);
    this.written.push(relative);
    return relative;
  }

  async full(): Promise<{ version: CopyVersion; rows: number; kind: 'full' }> {
    const base = this.file(this.nextId, 'base');
    const rows = await this.materialize(selectSql(this.copy, null, false), base);
    const watermark = await this.maxChange(base);
    const version: CopyVersion = {
      id: this.nextId,
      base,
      delta: null,
      rows,
      bytes: this.bytes(base),
      readAt: this.readAt,
      watermark,
      baseRows: rows,
    };
    return { version, rows, kind: 'full' };
  }

  /** The rows past the watermark, merged with the rows of the current delta into a new delta. */
  async incremental(): Promise<Made> {
    const current = this.copy.current!;
    const delta = this.file(this.nextId, 'delta');
    const fetchedTable = quoteIdent(`__vdb_fetch_${this.copy.oid}_${this.nextId}`);
    const made = await this.withSelect(selectSql(this.copy, current.watermark, this.changeIsNumeric()), async (execution) => {
      // The rows read stay in the engine's memory; one session writes the new delta from them.
      const fetched = await execution.materialize(fetchedTable);
      const names = execution.columns.map((c, i) => `c${i} AS ${quoteIdent(c.name)}`).join(', ');
      try {
        return { fetched, ...(await this.writeDelta(execution.engine, current, delta, `(SELECT ${names} FROM ${fetchedTable})`)) };
      } finally {
        await execution.engine.runAll([`DROP TABLE IF EXISTS ${fetchedTable}`]);
      }
    });
    const version: CopyVersion = {
      ...current,
      id: this.nextId,
      delta,
      rows: made.rows,
      bytes: this.bytes(current.base) + this.bytes(delta),
      readAt: this.readAt,
      watermark: maxOf(current.watermark, made.watermark, this.changeIsNumeric()),
    };
    return this.settle(version, made.deltaRows, made.fetched);
  }

  /** An incremental version as it is, or folded into a new base when its delta (`deltaRows`) grew past a share of its base. */
  async settle(version: CopyVersion, deltaRows: number, fetched: number): Promise<Made> {
    if (deltaRows <= version.baseRows * COMPACT_SHARE) return { version, rows: fetched, kind: 'incremental' };
    return { version: await this.compact(version), rows: fetched, kind: 'compaction' };
  }

  /**
   * Writes the new delta file `delta`: the current delta's rows merged with `fetched` (a relation
   * of the engine). Answers its rows, the version's rows and the largest change value among them.
   */
  private async writeDelta(
    engine: EngineGeneration,
    current: CopyVersion,
    delta: string,
    fetched: string,
  ): Promise<{ deltaRows: number; rows: number; watermark: string | null }> {
    const alias = quoteIdent(`vdb_write_${this.copy.oid}_${this.nextId}`);
    const previous = current.delta ? `${quoteIdent(attachAlias(this.copy, current.delta))}.data` : null;
    const base = `${quoteIdent(attachAlias(this.copy, current.base))}.data`;
    const change = this.copy.changeColumn ? `max(${quoteIdent(this.copy.changeColumn)})::VARCHAR` : 'NULL';
    return engine.withConnection(async (connection) => {
      for (const statement of attachStatements(this.copies, this.copy, current)) await connection.run(statement);
      await connection.run(`ATTACH ${sqlLiteral(this.copies.pathOf(delta))} AS ${alias}`);
      try {
        await connection.run(`CREATE TABLE ${alias}.main.data AS ${mergeSql(this.copy, previous, fetched)}`);
        const [deltaRows, watermark] = (await connection.runAndReadAll(`SELECT count(*), ${change} FROM ${alias}.main.data`)).getRows()[0]!;
        // Upsert: the base's rows the delta replaces are not read.
        const on = this.copy.keyColumns.map((k) => `b.${quoteIdent(k)} = d.${quoteIdent(k)}`).join(' AND ');
        const kept =
          this.copy.mode === 'upsert'
            ? Number(
                (await connection.runAndReadAll(`SELECT count(*) FROM ${base} b ANTI JOIN ${alias}.main.data d ON ${on}`)).getRows()[0]![0],
              )
            : current.baseRows;
        return { deltaRows: Number(deltaRows), rows: kept + Number(deltaRows), watermark: watermark === null ? null : String(watermark) };
      } finally {
        await connection.run(`DETACH ${alias}`);
      }
    });
  }

  /** Folds a version's delta into a new base (the copy's rows as they read now), written locally. */
  private async compact(version: CopyVersion): Promise<CopyVersion> {
    const id = version.id + 1;
    const base = this.file(id, 'base');
    const engine = this.context.runtime.current;
    const alias = quoteIdent(`vdb_write_${this.copy.oid}_${id}`);
    await engine.runAll([
      ...attachStatements(this.copies, this.copy, version),
      `ATTACH ${sqlLiteral(this.copies.pathOf(base))} AS ${alias}`,
    ]);
    let rows: number;
    try {
      await engine.runAll([`CREATE TABLE ${alias}.main.data AS ${versionSql(this.copy, version)}`]);
      rows = await countRows(engine, `${alias}.main.data`);
    } finally {
      await engine.runAll([`DETACH ${alias}`]);
    }
    return { ...version, id, base, delta: null, rows, baseRows: rows, bytes: this.bytes(base) };
  }

  /** Runs `sql` (a SELECT of the virtual database, read live) through the federated plan; `work` reads its result. */
  private async withSelect<T>(sql: string, work: (execution: Execution) => Promise<T>, bulk = false): Promise<T> {
    const { registry, runtime, vdbName, options } = this.context;
    const bound = bindStatement(parseStatement(sql), registry, vdbName, new AccessPolicy(REFRESH_USER, []), LIVE_READING);
    const plan = planFederated(bound, registry, options);
    const execution = await openFederatedExecution(plan, registry, runtime, {
      signal: this.signal,
      user: REFRESH_USER,
      ...options,
      // A whole table through a file the engine reads in parallel; a few changed rows as they come.
      bulkDir: bulk ? path.join(this.copies.folder, String(this.copy.oid)) : undefined,
    });
    try {
      return await work(execution);
    } catch (err) {
      throw execution.translateError(err);
    } finally {
      execution.close();
    }
  }

  /** Writes the result of `sql` into table `data` of the new file `file`, with the statement's column names. */
  private async materialize(sql: string, file: string): Promise<number> {
    return this.withSelect(
      sql,
      async (execution) => {
        const alias = quoteIdent(`vdb_write_${this.copy.oid}_${path.basename(file, '.duckdb')}`);
        const defined = this.copy.columns?.length;
        // A materialized view's columns are those it was created with (a `*` over a table that changed gives others).
        if (defined !== undefined && defined !== execution.columns.length)
          throw new ApiError(
            409,
            'Conflict',
            `The SELECT of ${this.copy.name} now gives ${execution.columns.length} columns; it was created with ${defined}.`,
            'Drop the materialized view and create it again.',
          );
        await execution.engine.runAll([`ATTACH ${sqlLiteral(this.copies.pathOf(file))} AS ${alias}`]);
        try {
          const rows = await execution.materialize(`${alias}.main.data`);
          await execution.engine.runAll(
            // A materialized view's columns keep the names it was created with.
            execution.columns.map(
              (c, i) => `ALTER TABLE ${alias}.main.data RENAME COLUMN c${i} TO ${quoteIdent(this.copy.columns?.[i]?.name ?? c.name)}`,
            ),
          );
          return rows;
        } finally {
          await execution.engine.runAll([`DETACH ${alias}`]);
        }
      },
      true,
    );
  }

  /** The largest value of the change column in a file's rows, as the engine writes it (null: none). */
  private async maxChange(file: string): Promise<string | null> {
    const column = this.copy.changeColumn;
    if (!column) return null;
    return this.context.runtime.current.withConnection(async (connection) => {
      const alias = quoteIdent(`vdb_read_${this.copy.oid}_${path.basename(file, '.duckdb')}`);
      await connection.run(`ATTACH ${sqlLiteral(this.copies.pathOf(file))} AS ${alias} (READ_ONLY)`);
      try {
        const reader = await connection.runAndReadAll(`SELECT max(${quoteIdent(column)})::VARCHAR FROM ${alias}.main.data`);
        const value = reader.getRows()[0]?.[0];
        return value === null || value === undefined ? null : String(value);
      } finally {
        await connection.run(`DETACH ${alias}`);
      }
    });
  }

  private changeIsNumeric(): boolean {
    return isNumericType(changeColumnType(this.copy, this.context.registry));
  }

  bytes(relative: string | null): number {
    if (!relative) return 0;
    try {
      return fs.statSync(this.copies.pathOf(relative)).size;
    } catch {
      return 0;
    }
  }

  /** Removes the files this writer made (a failed or abandoned refresh). */
  discard(): void {
    for (const relative of this.written) {
      fs.rmSync(this.copies.pathOf(relative), { force: true });
      fs.rmSync(`${this.copies.pathOf(relative)}.wal`, { force: true });
    }
  }
}

async function countRows(engine: EngineGeneration, table: string): Promise<number> {
  return engine.withConnection(async (connection) => {
    const reader = await connection.runAndReadAll(`SELECT count(*) FROM ${table}`);
    return Number(reader.getRows()[0]?.[0] ?? 0);
  });
}

/** The new delta: the previous delta's rows not replaced by the fetched ones (upsert) or all of them (append), then the fetched. */
function mergeSql(copy: CopyDef, previous: string | null, fetched: string): string {
  if (!previous) return `SELECT * FROM ${fetched}`;
  if (copy.mode === 'append') return `SELECT * FROM ${previous} UNION ALL SELECT * FROM ${fetched}`;
  const on = copy.keyColumns.map((k) => `p.${quoteIdent(k)} = f.${quoteIdent(k)}`).join(' AND ');
  return `SELECT p.* FROM ${previous} p ANTI JOIN ${fetched} f ON ${on} UNION ALL SELECT * FROM ${fetched}`;
}

const NUMERIC_TYPE = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|REAL|FLOAT|DOUBLE|DECIMAL.*)$/i;
const isNumericType = (type: string | undefined) => type !== undefined && NUMERIC_TYPE.test(type);

function changeColumnType(copy: CopyDef, registry: SourceRegistry): string | undefined {
  const source = registry.findSource(copy.schema);
  const table = source?.tables.find((t) => t.name.toLowerCase() === copy.table.toLowerCase());
  return table?.columns.find((c) => c.name === copy.changeColumn)?.type;
}

/** The larger of two watermarks (numbers compared as numbers, other values as the engine's text, which orders dates and times). */
function maxOf(a: string | null, b: string | null, numeric: boolean): string | null {
  if (a === null) return b;
  if (b === null) return a;
  if (numeric) return Number(a) >= Number(b) ? a : b;
  return a >= b ? a : b;
}

/**
 * The SELECT a refresh reads: a materialized view's own; every column of the table, in the virtual database's SQL; past the
 * watermark for an incremental one (`>` for append, whose column only grows; `>=` for upsert,
 * since rows changed at the watermark's instant may have come after the last read).
 */
export function selectSql(copy: CopyDef, watermark: string | null, numeric: boolean): string {
  if (copy.kind === 'view') return copy.sql!;
  const table = `${quoteIdent(copy.schema)}.${quoteIdent(copy.table)}`;
  if (watermark === null || !copy.changeColumn) return `SELECT * FROM ${table}`;
  const op = copy.mode === 'append' ? '>' : '>=';
  const value = numeric ? watermark : sqlLiteral(watermark);
  return `SELECT * FROM ${table} WHERE ${quoteIdent(copy.changeColumn)} ${op} ${value}`;
}
