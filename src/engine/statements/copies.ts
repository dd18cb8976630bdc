/**
 * Local copies managed (docs/copies.md): defining an accelerated table, refreshing a copy (one
 * refresh of a copy at a time, here and across instances sharing the catalog), pausing,
 * resuming and dropping it, and which copies are due for a scheduled refresh. The refresh itself
 * is copy-refresh.ts; how the engine reads copies is sources/copies.ts.
 */
import { randomBytes } from 'node:crypto';
import type { CopyDef, CopyMode, CopyRefreshRecord, TableDef, UserDef } from '../../catalog/types.js';
import { ApiError, badRequest, messageOf, notFound } from '../../errors.js';
import { CopyExistsError, nextRefreshAt } from '../../sources/copies.js';
import { captureOf } from './copy-changes.js';
import { refreshCopy, type CopyRefreshContext } from './copy-refresh.js';

/** What SYSADMIN.accelerateTable takes, as given. */
export interface AccelerateArgs {
  tableName: string;
  mode: string | null;
  refreshEvery: string | null;
  maxStaleness: string | null;
  changeColumn: string | null;
  keyColumns: string | null;
  fullRefreshEvery: string | null;
}

const MODES: readonly CopyMode[] = ['full', 'append', 'upsert', 'changes'];

const UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
};

/** Seconds of a duration given as seconds (`90`) or as a number and a unit (`10 minutes`, `1h`); null for none. */
export function durationSeconds(text: string | null, what: string): number | null {
  if (text === null || text.trim() === '' || text.trim().toLowerCase() === 'null') return null;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = match ? UNITS[(match[2] || 's').toLowerCase()] : undefined;
  if (!match || unit === undefined || Number(match[1]) <= 0) {
    throw badRequest(
      `${what} "${text}" is not a duration.`,
      "Give seconds (e.g. 600) or a number and a unit (e.g. '10 minutes', '1 hour').",
    );
  }
  return Math.round(Number(match[1]) * unit);
}

export class CopyService {
  /** Refreshes under way in this process, by copy oid (a second request waits for the first). */
  private readonly running = new Map<number, Promise<CopyDef | null>>();

  private readonly context: CopyRefreshContext;
  private readonly observers: Array<(copy: string, record: CopyRefreshRecord) => void> = [];

  constructor(context: Omit<CopyRefreshContext, 'observe'>) {
    this.context = { ...context, observe: (copy, record) => this.observers.forEach((observer) => observer(copy, record)) };
  }

  /** Tells `observer` of every refresh this instance runs (the metrics). */
  onRefresh(observer: (copy: string, record: CopyRefreshRecord) => void): void {
    this.observers.push(observer);
  }

  private get copies() {
    return this.context.registry.copies;
  }

  /** The copy named `name`, or a 404. */
  require(name: string): CopyDef {
    const copy = this.copies.find(name);
    if (!copy) throw notFound(`No copy of "${name}" is kept.`, 'SYS.Copies lists the copies.', 'Unknown copy');
    return copy;
  }

  /** Defines a local copy of a source's table; its first refresh starts at once (`refreshCopy` waits for one). */
  async accelerate(args: AccelerateArgs, owner: UserDef): Promise<CopyDef> {
    const { registry } = this.context;
    const parts = args.tableName.split('.');
    if (parts.length !== 2) throw badRequest(`"${args.tableName}" is not a table name.`, 'Name it as schema.table, e.g. pg.orders.');
    const resolved = registry.resolve(parts[0], parts[1]!);
    if (resolved.origin !== 'rows') {
      throw badRequest(
        `${resolved.schema}.${resolved.table.name} is not a table of a database source.`,
        'Tables of PostgreSQL, MySQL/MariaDB and SQLite sources can be copied; files and DuckDB sources are read locally already.',
      );
    }
    const table = resolved.table;
    const mode = (args.mode?.trim().toLowerCase() || 'full') as CopyMode;
    if (!MODES.includes(mode)) throw badRequest(`Mode "${args.mode}" is not a refresh mode.`, `Modes: ${MODES.join(', ')}.`);
    const columnOf = (name: string) => {
      const column = table.columns.find((c) => c.name.toLowerCase() === name.trim().toLowerCase());
      if (!column) throw notFound(`Column "${name.trim()}" of ${resolved.schema}.${table.name} does not exist.`, null, 'Unknown column');
      return column.name;
    };
    const changeColumn = args.changeColumn?.trim() ? columnOf(args.changeColumn) : null;
    if (mode === 'changes')
      await this.checkCapture(
        resolved.schema,
        table,
        changeColumn,
        args.keyColumns?.trim() ? args.keyColumns.split(',').map(columnOf) : null,
      );
    else if (mode !== 'full' && !changeColumn) {
      throw badRequest(
        `Mode ${mode} needs a change column.`,
        mode === 'append'
          ? 'Name a column whose values only grow (an id, an insertion time).'
          : 'Name the column a change sets to a later value (updated_at).',
      );
    }
    const keyColumns = args.keyColumns?.trim() ? args.keyColumns.split(',').map(columnOf) : [...table.primaryKey];
    if (mode === 'upsert' && keyColumns.length === 0) {
      throw badRequest(`${resolved.schema}.${table.name} has no primary key.`, 'Name the columns that identify a row with keyColumns.');
    }
    try {
      const copy = await this.copies.define({
        name: `${resolved.schema}.${table.name}`,
        schema: resolved.schema,
        table: table.name,
        kind: 'table',
        sql: null,
        columns: null,
        mode,
        changeColumn,
        keyColumns,
        refreshEvery: durationSeconds(args.refreshEvery, 'refreshEvery'),
        fullRefreshEvery: durationSeconds(args.fullRefreshEvery, 'fullRefreshEvery'),
        maxStaleness: durationSeconds(args.maxStaleness, 'maxStaleness'),
        paused: false,
        current: null,
        lastError: null,
        failures: 0,
        lastAttemptAt: null,
        lastFullAt: null,
        history: [],
        owner: owner.name,
        createdAt: new Date().toISOString(),
      });
      // Its captures at the source are named by the copy (and a random part: several catalogs may share a source).
      const defined =
        mode === 'changes'
          ? ((await this.copies.change(copy.oid, (c) => (c.capturePrefix = `vdb_c${c.oid}_${randomBytes(3).toString('hex')}`))) ?? copy)
          : copy;
      void this.refresh(copy.name, 'auto').catch(() => undefined);
      return defined;
    } catch (err) {
      if (err instanceof CopyExistsError) {
        throw new ApiError(409, 'Conflict', `A copy of ${err.copyName} is kept already.`, 'SYSADMIN.dropCopy removes it first.');
      }
      throw err;
    }
  }

  /**
   * Refreshes copy `name` now (whole when `asked` is 'full'), after any refresh of it under way
   * here; null when another instance holds its lock (it is refreshing it).
   */
  async refresh(name: string, asked: 'full' | 'auto', signal = new AbortController().signal): Promise<CopyDef | null> {
    const oid = this.require(name).oid;
    const before = this.running.get(oid);
    const next = (async () => {
      await before?.catch(() => undefined);
      const release = await this.context.registry.lockCopy(oid);
      if (!release) return null;
      try {
        // The catalog as it is now: another instance may have refreshed it meanwhile.
        const copy = this.copies.all.find((c) => c.oid === oid);
        if (!copy) return null;
        return await refreshCopy(copy, asked, this.context, signal);
      } finally {
        await release();
      }
    })();
    this.running.set(oid, next);
    try {
      return await next;
    } finally {
      if (this.running.get(oid) === next) this.running.delete(oid);
    }
  }

  /** A 400 unless the changes of `table` can be read from its source's log, by its primary key. */
  private async checkCapture(schema: string, table: TableDef, changeColumn: string | null, keyColumns: string[] | null): Promise<void> {
    const name = `${schema}.${table.name}`;
    if (changeColumn) throw badRequest(`Mode changes reads the source's change log; it takes no change column.`, 'Leave changeColumn out.');
    if (table.primaryKey.length === 0)
      throw badRequest(
        `${name} has no primary key.`,
        'Mode changes applies changed rows by primary key: give the table one at the source, or use mode full.',
      );
    if (keyColumns && keyColumns.join(',') !== table.primaryKey.join(','))
      throw badRequest(
        `Mode changes identifies rows by the primary key of ${name} (${table.primaryKey.join(', ')}).`,
        'Leave keyColumns out.',
      );
    const { capture, keys } = captureOf(this.context.registry, { schema, table: table.name, keyColumns: table.primaryKey });
    // A deleted bytea key would reach the copy as text: refused rather than a deletion missed.
    const binary = keys.find((k) => k.type === 'BLOB');
    if (binary) throw badRequest(`The primary key of ${name} has a bytea column (${binary.name}).`, 'Use mode full or upsert.');
    const refusal = await capture.unavailable(table, keys);
    if (refusal) throw badRequest(refusal.reason, refusal.hint);
  }

  /** Ends the captures of a copy of mode `changes` at its source (they hold the source's log while they exist). */
  private async endCaptures(copy: CopyDef): Promise<void> {
    if (!copy.capturePrefix || !this.context.registry.findSource(copy.schema)) return;
    try {
      await captureOf(this.context.registry, copy).capture.drop(`${copy.capturePrefix}_`);
    } catch (err) {
      throw new ApiError(
        502,
        'Source failed',
        `The replication slots of ${copy.name} could not be dropped at ${copy.schema}: ${messageOf(err)}`,
        "The copy is kept; drop it again when the source answers (a slot left behind keeps the source's log).",
      );
    }
  }

  async setPaused(name: string, paused: boolean): Promise<CopyDef> {
    const copy = this.require(name);
    const updated = await this.copies.change(copy.oid, (c) => {
      c.paused = paused;
    });
    if (!updated) throw notFound(`No copy of "${name}" is kept.`, null, 'Unknown copy');
    return updated;
  }

  async drop(name: string): Promise<void> {
    const copy = this.require(name);
    await this.running.get(copy.oid)?.catch(() => undefined);
    await this.endCaptures(copy);
    await this.copies.drop(copy.oid);
  }

  /** Copies whose scheduled refresh is due at `now` (ms), and not under way here. */
  due(now: number): CopyDef[] {
    return this.copies.all.filter((copy) => !this.running.has(copy.oid) && isDue(copy, now));
  }

  /** Starts every due refresh; failures are recorded on their copies. */
  runDue(now = Date.now()): Promise<unknown> {
    return Promise.all(
      this.due(now).map((copy) =>
        this.refresh(copy.name, 'auto').catch((err: unknown) => {
          // Recorded on the copy (SYS.Copies.LastError); nothing else to do here.
          void messageOf(err);
        }),
      ),
    );
  }
}

/** Whether `copy`'s scheduled refresh is due at `now` (ms). */
export function isDue(copy: CopyDef, now: number): boolean {
  const next = nextRefreshAt(copy);
  return next !== null && now >= next;
}
