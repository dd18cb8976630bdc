/**
 * Local copies as the engine reads them (docs/copies.md): each copy's current version (a base
 * file and an optional delta file, DuckDB databases written once and never changed) attached
 * read-only in every engine generation, behind one view per copy that statements read. A new
 * version is attached and the view replaced in one step, so readers never see a half-built copy.
 * Which copy a statement may read (fresh enough for the request) is decided here for the binder.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CatalogStore } from '../catalog/store.js';
import type { CopyDef, CopyVersion, TableDef } from '../catalog/types.js';
import { quoteIdent, sqlLiteral, type DuckRuntime, type EngineGeneration } from '../runtime/duckdb.js';

/** The engine schema of the copies' views (created in every engine generation). */
export const COPIES_ENGINE_SCHEMA = 'vdb_copies';

/** How a request wants its data: live from the sources, or from copies no older than a bound. */
export interface CopyReading {
  /** Never read a copy. */
  live: boolean;
  /** Read a copy only when it is at most this many seconds old (else each copy's own bound). */
  maxStaleness: number | null;
}

export const DEFAULT_READING: CopyReading = { live: false, maxStaleness: null };
export const LIVE_READING: CopyReading = { live: true, maxStaleness: null };

/** How a request's maxStaleness (REST's parameter, pgwire's vdb.max_staleness; 0: live) reads copies; undefined: each copy's own bound. */
export function readingOf(maxStaleness: number | undefined): CopyReading | undefined {
  if (maxStaleness === undefined) return undefined;
  return maxStaleness === 0 ? LIVE_READING : { live: false, maxStaleness };
}

/** A copy a statement reads instead of its table. */
export interface CopyUse {
  copy: CopyDef;
  version: CopyVersion;
  engineSchema: string;
  engineName: string;
  /** Seconds since the version's refresh began to read the source. */
  ageSeconds: number;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export const copyEngineName = (copy: Pick<CopyDef, 'oid'>) => `c${copy.oid}`;
/** The name a copy file is attached under (one name per file: a base outlives its versions). */
export const attachAlias = (copy: Pick<CopyDef, 'oid'>, file: string) =>
  `vdb_copy_${copy.oid}_${path.basename(file, '.duckdb').replace(/\W/g, '_')}`;

/** Whether `copy` answers for statements reading with `reading` at `now` (ms). */
export function usableCopy(copy: CopyDef, reading: CopyReading, now: number): CopyUse | null {
  const version = copy.current;
  if (reading.live || !version) return null;
  const ageSeconds = Math.max(0, (now - Date.parse(version.readAt)) / 1000);
  const bound = reading.maxStaleness ?? copy.maxStaleness;
  if (bound !== null && ageSeconds > bound) return null;
  return { copy, version, engineSchema: COPIES_ENGINE_SCHEMA, engineName: copyEngineName(copy), ageSeconds };
}

/** Attaches a version's files read-only under the names `versionSql` reads (a no-op where attached). */
export function attachStatements(copies: Pick<LocalCopies, 'pathOf'>, copy: CopyDef, version: CopyVersion): string[] {
  const attach = (file: string) =>
    `ATTACH IF NOT EXISTS ${sqlLiteral(copies.pathOf(file))} AS ${quoteIdent(attachAlias(copy, file))} (READ_ONLY)`;
  return version.delta ? [attach(version.base), attach(version.delta)] : [attach(version.base)];
}

/** The first failures retry sooner than the schedule: 5 s, 10 s, 20 s ... up to the schedule (or an hour). */
const FIRST_RETRY_MS = 5000;

/**
 * When `copy`'s next scheduled refresh is due (ms): its period after the version's read, or
 * after a failed attempt its backoff; null when it is paused or refreshed only when asked.
 */
export function nextRefreshAt(copy: CopyDef): number | null {
  if (copy.paused || copy.refreshEvery === null) return null;
  const every = copy.refreshEvery * 1000;
  const attempted = copy.lastAttemptAt ? Date.parse(copy.lastAttemptAt) : null;
  if (copy.failures > 0 && attempted !== null)
    return attempted + Math.min(FIRST_RETRY_MS * 2 ** (copy.failures - 1), Math.max(every, 3600_000));
  if (!copy.current) return attempted === null ? 0 : attempted + every;
  return Date.parse(copy.current.readAt) + every;
}

/** A copy's state as SYS.Copies shows it. */
export function copyState(copy: CopyDef): string {
  if (copy.paused) return 'paused';
  if (copy.lastError !== null) return copy.current ? 'failing (last good copy kept)' : 'failing';
  return copy.current ? 'ready' : 'building';
}

/**
 * The statement that reads a version: the base, less the rows a later upsert replaced (and, mode
 * changes, the keys deleted since: the delta's table `deleted`), plus the delta.
 */
export function versionSql(copy: CopyDef, version: CopyVersion): string {
  const base = `${quoteIdent(attachAlias(copy, version.base))}.data`;
  if (!version.delta) return `SELECT * FROM ${base}`;
  const deltaFile = quoteIdent(attachAlias(copy, version.delta));
  const delta = `${deltaFile}.data`;
  if (copy.mode === 'append') return `SELECT * FROM ${base} UNION ALL SELECT * FROM ${delta}`;
  const on = (b: string, d: string) => copy.keyColumns.map((k) => `${b}.${quoteIdent(k)} = ${d}.${quoteIdent(k)}`).join(' AND ');
  const kept =
    copy.mode === 'changes'
      ? `SELECT k.* FROM (SELECT b.* FROM ${base} b ANTI JOIN ${delta} d ON ${on('b', 'd')}) k ANTI JOIN ${deltaFile}.deleted x ON ${on('k', 'x')}`
      : `SELECT b.* FROM ${base} b ANTI JOIN ${delta} d ON ${on('b', 'd')}`;
  return `${kept} UNION ALL SELECT * FROM ${delta}`;
}

/** Refreshes kept per copy for SYSLOG.CopyRefreshes. */
const HISTORY_KEPT = 20;

export class CopyExistsError extends Error {
  constructor(readonly copyName: string) {
    super(`a copy of ${copyName} exists already`);
  }
}

export class LocalCopies {
  /** The real path of the copies folder (the engine may read it). */
  readonly folder: string;
  /** Per engine generation, the version each copy's view reads (published there). */
  private readonly published = new WeakMap<EngineGeneration, Map<number, CopyVersion>>();

  constructor(
    private readonly store: CatalogStore,
    private readonly runtime: DuckRuntime,
    folder: string,
    private readonly now: () => number = Date.now,
  ) {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    this.folder = fs.realpathSync(folder);
  }

  get all(): readonly CopyDef[] {
    return this.store.current.copies ?? [];
  }

  /** The copy named `name` (`schema.table`, case-insensitive). */
  find(name: string): CopyDef | undefined {
    return this.all.find((c) => c.name === name) ?? this.all.find((c) => same(c.name, name));
  }

  /** The copy of table (or materialized view) `table` of schema `schema`, if one is kept. */
  copyOf(schema: string, table: TableDef): CopyDef | undefined {
    return this.all.find((c) => same(c.schema, schema) && same(c.table, table.name));
  }

  /** The copy a statement reading `schema.table` with `reading` reads now, if any. */
  choose(schema: string, table: TableDef, reading: CopyReading): CopyUse | null {
    const copy = this.copyOf(schema, table);
    return copy ? usableCopy(copy, reading, this.now()) : null;
  }

  /**
   * Which copies statements reading with `reading` read now: part of the keys of what the engine
   * remembers of statements (a plan made over a copy is not one over the source).
   */
  key(reading: CopyReading): string {
    if (reading.live || this.all.length === 0) return '';
    const now = this.now();
    return this.all
      .map((c) => (usableCopy(c, reading, now) ? c.oid : null))
      .filter((oid) => oid !== null)
      .join(',');
  }

  /** Stores a new copy's definition (its first version comes with its first refresh). */
  async define(copy: Omit<CopyDef, 'oid'>): Promise<CopyDef> {
    return this.store.update((catalog) => {
      const copies = catalog.copies ?? [];
      if (copies.some((c) => same(c.name, copy.name))) throw new CopyExistsError(copy.name);
      // A materialized view's name is not a view's.
      if ((catalog.views ?? []).some((v) => same(`${v.schema}.${v.name}`, copy.name))) throw new CopyExistsError(copy.name);
      const saved: CopyDef = { ...copy, oid: catalog.nextOid++ };
      catalog.copies = [...copies, saved];
      return saved;
    });
  }

  /**
   * Applies `change` to the stored copy `oid` (a refresh's outcome, a pause); null when the copy
   * was dropped meanwhile.
   */
  async change(oid: number, change: (copy: CopyDef) => void): Promise<CopyDef | null> {
    return this.store.update((catalog) => {
      const copy = (catalog.copies ?? []).find((c) => c.oid === oid);
      if (!copy) return null;
      change(copy);
      copy.history = copy.history.slice(-HISTORY_KEPT);
      return structuredClone(copy);
    });
  }

  /** Removes copy `oid` from the catalog, its view from the engine and its files. */
  async drop(oid: number): Promise<void> {
    await this.store.update((catalog) => {
      catalog.copies = (catalog.copies ?? []).filter((c) => c.oid !== oid);
    });
    await this.unpublish(oid);
    this.removeAllFiles(oid);
  }

  /** The absolute path of a copy file named by its path relative to the folder. */
  pathOf(relative: string): string {
    const resolved = path.resolve(this.folder, relative);
    if (!resolved.startsWith(this.folder + path.sep)) throw new Error(`copy file "${relative}" lies outside the copies folder`);
    return resolved;
  }

  /** Publishes every copy's current version in `engine` (a new generation, or after a catalog change). */
  async prepare(engine: EngineGeneration): Promise<void> {
    for (const copy of this.all) await this.publish(copy, engine).catch(() => undefined);
  }

  /** Brings the current engine in line with the catalog: new versions attached, dropped copies' views removed. */
  async sync(engine = this.runtime.current): Promise<void> {
    const shown = this.published.get(engine);
    for (const copy of this.all) {
      if (copy.current && shown?.get(copy.oid)?.id !== copy.current.id) await this.publish(copy, engine).catch(() => undefined);
    }
    for (const oid of shown?.keys() ?? []) {
      if (!this.all.some((c) => c.oid === oid)) await this.unpublish(oid, engine);
    }
  }

  /**
   * Attaches `copy`'s current version read-only and points its view at it; versions older than
   * the one it replaces are detached (the one before stays for statements still reading it).
   */
  async publish(copy: CopyDef, engine = this.runtime.current): Promise<void> {
    const version = copy.current;
    if (!version) return;
    const statements = [`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(COPIES_ENGINE_SCHEMA)}`, ...attachStatements(this, copy, version)];
    statements.push(
      `CREATE OR REPLACE VIEW ${quoteIdent(COPIES_ENGINE_SCHEMA)}.${quoteIdent(copyEngineName(copy))} AS ${versionSql(copy, version)}`,
    );
    await engine.runAll(statements);
    const shown = this.published.get(engine) ?? new Map<number, CopyVersion>();
    const before = shown.get(copy.oid);
    shown.set(copy.oid, version);
    this.published.set(engine, shown);
    const kept = [version.base, version.delta, before?.base, before?.delta].filter((f): f is string => !!f);
    await this.detachOthers(
      engine,
      copy.oid,
      kept.map((f) => attachAlias(copy, f)),
    );
  }

  /**
   * Detaches the files of copy `oid` but those named `keep` (the current version's and the one
   * before, which statements started before the swap may still read).
   */
  private async detachOthers(engine: EngineGeneration, oid: number, keep: readonly string[]): Promise<void> {
    const prefix = `vdb_copy_${oid}_`;
    await engine.withConnection(async (connection) => {
      const reader = await connection.runAndReadAll(
        `SELECT database_name FROM duckdb_databases() WHERE starts_with(database_name, ${sqlLiteral(prefix)})`,
      );
      for (const [name] of reader.getRows()) {
        if (keep.includes(String(name))) continue;
        await connection.run(`DETACH DATABASE IF EXISTS ${quoteIdent(String(name))}`).catch(() => undefined);
      }
    });
  }

  /** Removes a dropped copy's view and detaches its files. */
  async unpublish(oid: number, engine = this.runtime.current): Promise<void> {
    await engine.runAll([`DROP VIEW IF EXISTS ${quoteIdent(COPIES_ENGINE_SCHEMA)}.${quoteIdent(`c${oid}`)}`]);
    this.published.get(engine)?.delete(oid);
    await this.detachOthers(engine, oid, []);
  }

  /**
   * Deletes the files of `copy` that neither its current version nor the one before need,
   * when they are older than `graceMs` (another instance may still be reading them).
   */
  removeStaleFiles(copy: Pick<CopyDef, 'oid' | 'current'>, keep: readonly string[], graceMs = 60_000): void {
    const dir = path.join(this.folder, String(copy.oid));
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    const kept = new Set(keep.map((k) => path.basename(k)));
    for (const name of names) {
      if (kept.has(name.replace(/\.wal$/, ''))) continue;
      const file = path.join(dir, name);
      try {
        if (this.now() - fs.statSync(file).mtimeMs >= graceMs) fs.rmSync(file, { force: true });
      } catch {
        // gone already
      }
    }
  }

  /** Removes every file of a dropped copy. */
  removeAllFiles(oid: number): void {
    fs.rmSync(path.join(this.folder, String(oid)), { recursive: true, force: true });
  }
}
