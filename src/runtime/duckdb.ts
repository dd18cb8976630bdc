/**
 * The embedded engine: one in-process DuckDB. It is locked down at start: no extension
 * downloads, and file access confined to the configured file roots, so even a statement that
 * slipped past the allow-list could not read other files. Its spill folder is not among them:
 * the engine writes and reads its own temporary files without the external-access check.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBConnection, DuckDBInstance, type DuckDBType } from '@duckdb/node-api';

export interface DuckRuntimeOptions {
  fileRoots: readonly string[];
  spillDir: string;
  memoryLimit: string | null;
}

/** DuckDB string literal. */
export const sqlLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;
/** DuckDB / PostgreSQL quoted identifier. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class DuckRuntime {
  private constructor(private readonly instance: DuckDBInstance) {}

  static async create(options: DuckRuntimeOptions): Promise<DuckRuntime> {
    fs.mkdirSync(options.spillDir, { recursive: true, mode: 0o700 });
    const instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    const setup = await instance.connect();
    try {
      const allowed = options.fileRoots.filter((dir) => fs.existsSync(dir)).map((dir) => sqlLiteral(fs.realpathSync(dir) + path.sep));
      const statements = [
        `SET temp_directory = ${sqlLiteral(options.spillDir)}`,
        options.memoryLimit ? `SET memory_limit = ${sqlLiteral(options.memoryLimit)}` : null,
        `SET GLOBAL TimeZone = 'UTC'`,
        // PostgreSQL semantics, the reference for every answer vdb gives.
        `SET GLOBAL integer_division = true`,
        `SET GLOBAL default_null_order = 'nulls_last_on_asc_first_on_desc'`,
        `SET allowed_directories = [${allowed.join(', ')}]`,
        `SET enable_external_access = false`,
        `SET lock_configuration = true`,
      ];
      for (const statement of statements) if (statement) await setup.run(statement);
    } finally {
      setup.closeSync();
    }
    return new DuckRuntime(instance);
  }

  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
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
  async runAll(statements: string[]): Promise<void> {
    await this.withConnection(async (connection) => {
      for (const statement of statements) await connection.run(statement);
    });
  }

  close(): void {
    this.instance.closeSync();
  }
}

/** The result columns of `sql` (names and types), from preparing it without running it. */
export async function describe(connection: DuckDBConnection, sql: string): Promise<Array<{ name: string; type: DuckDBType }>> {
  const prepared = await connection.prepare(sql);
  try {
    return Array.from({ length: prepared.columnCount }, (_, i) => ({ name: prepared.columnName(i), type: prepared.columnType(i) }));
  } finally {
    prepared.destroySync();
  }
}
