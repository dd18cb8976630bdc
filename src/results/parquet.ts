/**
 * Results as Parquet files (application/vnd.apache.parquet): Parquet's footer comes last, so the
 * rows are first written as CSV (csv.ts, the same values as the JSON answer) to a file in the
 * data directory's tmp/parquet, then an engine of its own (DuckDB, confined to that folder: the
 * statements' engine may touch no file) turns it into Parquet with the result's types, and the
 * file is streamed and deleted. Neither file is ever held in memory.
 *
 * Types kept: booleans, integers, FLOAT/DOUBLE, DECIMAL(p,s), DATE, TIMESTAMP (with time zone),
 * BLOB; any other type is written as text (VARCHAR), as the CSV holds it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteIdent, sqlLiteral } from '../runtime/duckdb.js';
import type { TypedName } from './arrow.js';
import { csvHeader, csvLines } from './csv.js';

/** SQL types the Parquet file keeps; any other is written as VARCHAR. */
const KEPT =
  /^(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DATE|TIMESTAMP(_S|_MS|_NS)?|TIMESTAMP WITH TIME ZONE|DECIMAL\(\d+,\s*\d+\))$/;

/** The expression of one column of the CSV (read as text, named c0, c1, ...) in the Parquet file. */
function parquetValueSql(column: TypedName, i: number): string {
  const c = quoteIdent(`c${i}`);
  const type = column.type.toUpperCase();
  // Years before 1 are written "0044-03-15 BC" (as PostgreSQL); the engine reads "(BC)".
  if (type === 'DATE' || type.startsWith('TIMESTAMP')) return `CAST(replace(${c}, ' BC', ' (BC)') AS ${type})`;
  if (KEPT.test(type)) return `CAST(${c} AS ${type})`;
  if (type === 'BLOB') return `from_base64(${c})`;
  return c;
}

/** The CSV text of the rows (JSON array rows, or CSV lines a source wrote), its header naming the columns c0, c1, ... */
async function* csvText(columns: readonly TypedName[], rows: AsyncIterable<string>, form: 'json' | 'csv'): AsyncGenerator<string> {
  yield csvHeader(columns.map((_, i) => `c${i}`));
  for await (const chunk of rows) yield form === 'csv' ? chunk : csvLines(chunk);
}

/** Parquet files of results, made in `dir` by an engine that may touch nothing else. */
export class ParquetFiles {
  constructor(readonly dir: string) {
    // Files are deleted once sent; what is left is from a process that died.
    fs.rmSync(dir, { recursive: true, force: true });
  }

  /** An engine for one file (opened in a few milliseconds; nothing of it outlives the request). */
  private async engine(): Promise<DuckDBInstance> {
    const instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    const setup = await instance.connect();
    try {
      for (const statement of [
        `SET memory_limit = '512MB'`,
        `SET threads = 1`,
        `SET temp_directory = ${sqlLiteral(path.join(this.dir, 'spill'))}`,
        `SET GLOBAL TimeZone = 'UTC'`,
        `SET allowed_directories = [${sqlLiteral(this.dir + path.sep)}]`,
        `SET enable_external_access = false`,
        `SET lock_configuration = true`,
      ])
        await setup.run(statement);
    } catch (err) {
      instance.closeSync();
      throw err;
    } finally {
      setup.closeSync();
    }
    return instance;
  }

  /**
   * Writes the rows (chunks of JSON array rows, or of CSV lines) as a Parquet file; returns its
   * path and a function that deletes it. The CSV in between is deleted in any case.
   */
  async write(
    columns: readonly TypedName[],
    rows: AsyncIterable<string>,
    form: 'json' | 'csv' = 'json',
  ): Promise<{ file: string; remove: () => void }> {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const name = randomBytes(12).toString('hex');
    const csv = path.join(this.dir, `${name}.csv`);
    const file = path.join(this.dir, `${name}.parquet`);
    const remove = () => fs.rmSync(file, { force: true });
    try {
      await pipeline(Readable.from(csvText(columns, rows, form)), fs.createWriteStream(csv, { mode: 0o600 }));
      const types = columns.map((_, i) => `${sqlLiteral(`c${i}`)}: 'VARCHAR'`).join(', ');
      const list = columns.map((column, i) => `${parquetValueSql(column, i)} AS ${quoteIdent(column.name)}`).join(', ');
      const instance = await this.engine();
      const connection = await instance.connect();
      try {
        await connection.run(
          `COPY (SELECT ${list || '1 AS "?"'} FROM read_csv(${sqlLiteral(csv)}, header = true, delim = ',', quote = '"', escape = '"', ` +
            `allow_quoted_nulls = false, columns = {${types}}, strict_mode = true)) ` +
            `TO ${sqlLiteral(file)} (FORMAT parquet)`,
        );
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
      return { file, remove };
    } catch (err) {
      remove();
      throw err;
    } finally {
      fs.rmSync(csv, { force: true });
    }
  }
}
