/**
 * The embedded engine: in-process DuckDB, locked down at start: no extension downloads, and file
 * access confined to the folders of the file sources, so even a statement that slipped past the
 * allow-list could not read another file. Its spill folder is not among them: the engine writes
 * and reads its own temporary files without the external-access check.
 *
 * DuckDB fixes the folders it may read once external access is off, so a change of the file
 * sources' folders starts a new engine (a generation), prepared by the caller before statements
 * move to it. Statements and cursors that began on the previous one finish there; it is closed
 * when no cursor needs it any more (DuckDB keeps a closed engine alive for open connections).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBConnection, DuckDBInstance, type DuckDBPreparedStatement, type DuckDBResult, type DuckDBType } from '@duckdb/node-api';
import { tooManyColumns } from '../errors.js';
import { NUMERIC_MACROS } from './numeric-macros.js';
import { FUNCTION_MACROS, registerExactRemainder } from './function-macros.js';
import { defineValueChecks } from './value-macros.js';
import { registerNumberFormat } from './number-format.js';
import { registerDateTimeInput } from './datetime-functions.js';
import { registerByteaInput } from './bytea-input.js';
import { registerJsonParts } from './json-parts.js';
import { registerNumericLogarithms } from './numeric-logarithms.js';
import { registerFloatStatistics } from './float-statistics.js';

/** The values one batch of a statement builds may take this share of the engine's memory. */
const BATCH_SHARE = 16;

const UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** Bytes of a size as the engine reads it ("4GB", "512MiB"); the configuration checked its form. */
export function engineBytes(size: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i.exec(size.trim());
  return match ? Number(match[1]) * (UNITS[match[2]!.toLowerCase()] ?? 1) : 0;
}

export interface DuckRuntimeOptions {
  spillDir: string;
  memoryLimit: string;
  /** Disk the spill folder may take. */
  spillLimit: string;
  /** Bytes of the largest value a statement may build (value-macros.ts). */
  valueLimit: number;
  /** Schemas of vdb's own that every generation starts with (system tables, cursors). */
  schemas: readonly string[];
}

/** DuckDB string literal. */
export const sqlLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;
/** DuckDB / PostgreSQL quoted identifier. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Idle connections kept for reuse by statements that leave nothing behind on them. */
const MAX_IDLE_CONNECTIONS = 16;

/** One DuckDB instance, with the folders it was allowed to read. */
export class EngineGeneration {
  private retired = false;
  private closed = false;
  private holds = 0;
  private readonly idle: DuckDBConnection[] = [];

  constructor(
    private readonly instance: DuckDBInstance,
    /** Real paths, sorted. */
    readonly folders: readonly string[],
  ) {}

  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  /** A connection for one statement: an idle one when there is one (no round trip), else a new one. */
  async acquire(): Promise<DuckDBConnection> {
    return this.idle.pop() ?? this.instance.connect();
  }

  /**
   * Gives a statement's connection back. Only a connection that holds nothing of the statement
   * (no temporary tables or views, no interrupt under way) is kept for the next one.
   */
  releaseConnection(connection: DuckDBConnection, reusable: boolean): void {
    if (reusable && !this.closed && this.idle.length < MAX_IDLE_CONNECTIONS) this.idle.push(connection);
    else connection.closeSync();
  }

  /** Runs `work` on a fresh connection that is closed afterwards (temp objects vanish). */
  async withConnection<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await this.connect();
    try {
      return await work(connection);
    } finally {
      connection.closeSync();
    }
  }

  /** Runs DDL/utility statements in order on one connection. */
  async runAll(statements: readonly string[]): Promise<void> {
    await this.withConnection(async (connection) => {
      for (const statement of statements) await connection.run(statement);
    });
  }

  /** Whether the engine still runs statements: DuckDB refuses every one after a fatal error of its own. */
  async answers(): Promise<boolean> {
    try {
      await this.withConnection((connection) => connection.run('SELECT 1'));
      return true;
    } catch {
      return false;
    }
  }

  /** Keeps this generation open (for an open statement, a cursor stored in it) until `release`. */
  hold(): void {
    this.holds++;
  }

  release(): void {
    this.holds--;
    this.closeIfUnused();
  }

  /** Called when a newer generation takes over. */
  retire(): void {
    this.retired = true;
    this.closeIfUnused();
  }

  private closeIfUnused(): void {
    if (this.retired && this.holds <= 0) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.closeSync();
    this.instance.closeSync();
  }
}

export class DuckRuntime {
  private switching: Promise<unknown> = Promise.resolve();
  /** Makes a new generation ready (the registry publishes its sources there), for a renewal. */
  private prepareNext: ((engine: EngineGeneration) => Promise<void>) | null = null;

  private constructor(
    private readonly options: DuckRuntimeOptions,
    private engine: EngineGeneration,
  ) {}

  /** A runtime whose first generation may read no files at all. */
  static async create(options: DuckRuntimeOptions): Promise<DuckRuntime> {
    fs.mkdirSync(options.spillDir, { recursive: true, mode: 0o700 });
    return new DuckRuntime(options, await DuckRuntime.open(options, []));
  }

  private static async open(options: DuckRuntimeOptions, folders: readonly string[]): Promise<EngineGeneration> {
    const instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    const setup = await instance.connect();
    try {
      const statements = [
        `SET temp_directory = ${sqlLiteral(options.spillDir)}`,
        `SET memory_limit = ${sqlLiteral(options.memoryLimit)}`,
        `SET max_temp_directory_size = ${sqlLiteral(options.spillLimit)}`,
        // Memory a statement freed goes back to the system soon after, not kept for the next one.
        `SET allocator_flush_threshold = '32MB'`,
        `SET allocator_background_threads = true`,
        `SET GLOBAL TimeZone = 'UTC'`,
        // PostgreSQL semantics, the reference for every answer vdb gives.
        `SET GLOBAL integer_division = true`,
        `SET GLOBAL default_null_order = 'nulls_last_on_asc_first_on_desc'`,
        `SET allowed_directories = [${folders.map((folder) => sqlLiteral(folder + path.sep)).join(', ')}]`,
        `SET enable_external_access = false`,
        `SET lock_configuration = true`,
        ...options.schemas.map((schema) => `CREATE SCHEMA ${quoteIdent(schema)}`),
        ...NUMERIC_MACROS,
        ...FUNCTION_MACROS,
      ];
      await defineValueChecks(setup, options.valueLimit, Math.floor(engineBytes(options.memoryLimit) / BATCH_SHARE));
      registerNumberFormat(setup);
      registerDateTimeInput(setup);
      registerByteaInput(setup);
      registerJsonParts(setup);
      registerNumericLogarithms(setup);
      registerFloatStatistics(setup);
      registerExactRemainder(setup);
      for (const statement of statements) if (statement) await setup.run(statement);
    } catch (err) {
      instance.closeSync();
      throw err;
    } finally {
      setup.closeSync();
    }
    return new EngineGeneration(instance, folders);
  }

  /** The generation new statements run on. */
  get current(): EngineGeneration {
    return this.engine;
  }

  /**
   * Confines the engine to `folders` (the file sources' folders, real paths). When they differ
   * from the current generation's, a new generation is opened, `prepare` makes it ready (views,
   * attached files, system tables), and only then do new statements move to it. Serialised:
   * one change at a time. Returns whether a new generation was made.
   */
  confineTo(folders: readonly string[], prepare: (engine: EngineGeneration) => Promise<void>): Promise<boolean> {
    const next = this.switching.then(async () => {
      const wanted = [...new Set(folders)].sort();
      if (wanted.length === this.engine.folders.length && wanted.every((f, i) => f === this.engine.folders[i])) return false;
      const engine = await DuckRuntime.open(this.options, wanted);
      try {
        await prepare(engine);
      } catch (err) {
        engine.close();
        throw err;
      }
      const previous = this.engine;
      this.engine = engine;
      previous.retire();
      return true;
    });
    this.switching = next.catch(() => undefined);
    return next;
  }

  /** How `renewIfBroken` makes a new generation ready. */
  preparesWith(prepare: (engine: EngineGeneration) => Promise<void>): void {
    this.prepareNext = prepare;
  }

  /**
   * After an error the engine did not expect of a statement: DuckDB invalidates its whole
   * instance on a fatal error of its own, and every later statement fails. When the current
   * generation no longer answers, a new one with the same folders is prepared and takes over
   * (what the broken one held, such as its cursors, is lost). Returns whether it did.
   */
  renewIfBroken(): Promise<boolean> {
    const next = this.switching.then(async () => {
      const broken = this.engine;
      if (await broken.answers()) return false;
      const engine = await DuckRuntime.open(this.options, broken.folders);
      try {
        await this.prepareNext?.(engine);
      } catch (err) {
        engine.close();
        throw err;
      }
      this.engine = engine;
      broken.retire();
      return true;
    });
    this.switching = next.catch(() => undefined);
    return next;
  }

  connect(): Promise<DuckDBConnection> {
    return this.engine.connect();
  }

  withConnection<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.engine.withConnection(work);
  }

  runAll(statements: readonly string[]): Promise<void> {
    return this.engine.runAll(statements);
  }

  close(): void {
    this.engine.close();
  }
}

/** Prepared statements kept per connection (pooled connections serve the same statements again). */
const PREPARED_PER_CONNECTION = 64;
const preparedByConnection = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/**
 * Starts streaming the result of one statement. Prepared once per connection and text, then
 * executed: two trips to the engine's threads fewer than `connection.stream`, which extracts and
 * prepares the text each time. DuckDB re-binds a prepared statement whose tables changed.
 */
export async function streamStatement(connection: DuckDBConnection, sql: string): Promise<DuckDBResult> {
  let cache = preparedByConnection.get(connection);
  if (!cache) preparedByConnection.set(connection, (cache = new Map()));
  let prepared = cache.get(sql);
  if (prepared) {
    cache.delete(sql);
  } else {
    prepared = await connection.prepare(sql);
    if (cache.size >= PREPARED_PER_CONNECTION) {
      const [oldest, statement] = cache.entries().next().value!;
      cache.delete(oldest);
      statement.destroySync();
    }
  }
  cache.set(sql, prepared);
  return prepared.stream();
}

/** Columns described in one turn of the event loop (each costs time in proportion to all of them). */
const DESCRIBED_PER_TURN = 256;

/** The most columns a result may have: PostgreSQL's limit of a target list, `SELECT *` expanded. */
export const MAX_RESULT_COLUMNS = 1664;

/**
 * The result columns of `sql` (names and types), from preparing it without running it. The
 * engine's description costs time quadratic in the columns (each column's type copies the list
 * of all: 1 s for 16,000), on the process's one thread, so past `maxColumns` it is refused first.
 */
export async function describe(
  connection: DuckDBConnection,
  sql: string,
  maxColumns = MAX_RESULT_COLUMNS,
): Promise<Array<{ name: string; type: DuckDBType }>> {
  const prepared = await connection.prepare(sql);
  try {
    const count = prepared.columnCount;
    if (count > maxColumns) throw tooManyColumns(count, maxColumns);
    const columns: Array<{ name: string; type: DuckDBType }> = [];
    for (let i = 0; i < count; i++) {
      // A wide result's description takes the thread for milliseconds per slice: other requests go between slices.
      if (i > 0 && i % DESCRIBED_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
      columns.push({ name: prepared.columnName(i), type: prepared.columnType(i) });
    }
    return columns;
  } finally {
    prepared.destroySync();
  }
}
