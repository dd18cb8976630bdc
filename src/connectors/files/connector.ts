import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import fs from 'node:fs';
import path from 'node:path';
import type { SourceDef, TableDef } from '../../catalog/types.js';
import { NO_PUSHDOWN, SourceUnreachableError } from '../types.js';
import type { Capabilities, EngineNativeConnector, ImportedTable } from '../types.js';
import { DECLARED_NUMERIC, declaredTypes, SCHEMA_FILE_SUFFIX } from './declared-types.js';
import { checkedDecimal, decimalColumns, decimalModeOf, isFloatType } from './decimal-columns.js';
import type { EngineQuery } from '../duckdb/connector.js';
import { confineFile, confineFolder } from './paths.js';

/** Column names and types of a DuckDB relation; given by the engine, which owns DuckDB. */
export type DescribeRelation = (relationSql: string) => Promise<Array<{ name: string; type: string }>>;
/** Parquet row count from the file footer; cheap, never a scan. */
export type ParquetRowCount = (file: string) => Promise<number | null>;

export interface FileConnectorContext {
  roots: readonly string[];
  /** vdb's data directory (catalog, secrets): never exposed by a file source. */
  stateDir?: string;
  describe: DescribeRelation;
  parquetRowCount: ParquetRowCount;
  /** Runs a statement in the engine (the import's scan of decimal columns). */
  engineQuery: EngineQuery;
}

type FileFormat = 'csv' | 'parquet' | 'json';

const FORMATS: Array<[RegExp, FileFormat]> = [
  [/\.(csv|tsv)(\.gz)?$/i, 'csv'],
  [/\.parquet$/i, 'parquet'],
  [/\.(json|jsonl|ndjson)(\.gz)?$/i, 'json'],
];

const formatOf = (file: string): FileFormat | null => FORMATS.find(([re]) => re.test(file))?.[1] ?? null;

/** SQL string literal: single quotes doubled. */

/**
 * A folder of CSV, Parquet and JSON files; each file is a table named after the file without
 * its extension. DuckDB reads the files itself (its readers push projections and filters into
 * Parquet), so this connector only describes how.
 */
export class FileConnector implements EngineNativeConnector {
  readonly kind = 'file' as const;
  readonly delivery = 'engine' as const;
  readonly capabilities: Capabilities = { ...NO_PUSHDOWN, projection: true, filters: true };

  constructor(
    readonly source: SourceDef,
    private readonly context: FileConnectorContext,
  ) {}

  private folder(): string {
    const folder = this.source.connection.ParentDirectory;
    if (!folder) throw new Error(`file source "${this.source.name}" has no ParentDirectory`);
    try {
      return confineFolder(folder, this.context.roots, this.context.stateDir);
    } catch (err) {
      throw new SourceUnreachableError(err instanceof Error ? err.message : String(err));
    }
  }

  async healthCheck(): Promise<void> {
    this.folder();
    decimalModeOf(this.source.connection);
  }

  engineFolder(): string | null {
    try {
      return this.folder();
    } catch {
      return null;
    }
  }

  setupSql(): string[] {
    return [];
  }

  /** Files of the folder (not its subfolders) that one of DuckDB's readers understands. */
  private files(): Array<{ name: string; file: string; format: FileFormat }> {
    const folder = this.folder();
    const taken = new Set<string>();
    const found: Array<{ name: string; file: string; format: FileFormat }> = [];
    for (const entry of fs.readdirSync(folder).sort()) {
      const format = entry.toLowerCase().endsWith(SCHEMA_FILE_SUFFIX) ? null : formatOf(entry);
      const file = format && confineFile(path.join(folder, entry), folder);
      if (!format || !file) continue;
      // regions.csv is table "regions"; when two files share a stem the later keeps its extension.
      const stem = entry.replace(/(\.gz)?$/i, '').replace(/\.[^.]+$/, '');
      const name = taken.has(stem.toLowerCase()) ? entry : stem;
      taken.add(name.toLowerCase());
      found.push({ name, file: entry, format });
    }
    return found;
  }

  async importMetadata(): Promise<ImportedTable[]> {
    const tables: ImportedTable[] = [];
    const mode = decimalModeOf(this.source.connection);
    for (const { name, file, format } of this.files()) {
      const relation = this.relationFor(file, format, new Map());
      const columns = await this.context.describe(relation);
      if (format !== 'parquet') {
        // Floats the reader inferred (not declared) that hold decimals exactly, and columns declared
        // numeric without scale: numeric with the scale of their values (decimal-columns.ts).
        const declared = declaredTypes(this.folder(), file) ?? {};
        const numeric = columns.filter((c) => declared[c.name] === DECLARED_NUMERIC).map((c) => c.name);
        const floats =
          mode === 'numeric' ? columns.filter((c) => isFloatType(c.type) && declared[c.name] === undefined).map((c) => c.name) : [];
        const candidates = [...numeric, ...floats];
        const scanned = format === 'csv' ? this.relationFor(file, format, new Map(candidates.map((c) => [c, 'VARCHAR']))) : relation;
        const decimals = await decimalColumns(scanned, candidates, format === 'csv', this.context.engineQuery);
        const unfit = numeric.find((c) => !decimals.has(c));
        if (unfit) {
          throw new SourceUnreachableError(
            `${file}: column "${unfit}" is declared numeric, and holds values vdb's engine cannot hold exactly as numeric (an exponent, NaN, an infinity, more than 38 digits${format === 'json' ? ', or more than 15 significant digits in JSON' : ''}); declare it double precision or numeric(p,s)`,
          );
        }
        for (const column of columns) column.type = decimals.get(column.name) ?? column.type;
      }
      const cardinality = format === 'parquet' ? await this.context.parquetRowCount(path.join(this.folder(), file)) : null;
      tables.push({
        name,
        nameInSource: file,
        kind: 'Table',
        columns: columns.map((col, i) => ({
          name: col.name,
          nameInSource: col.name,
          type: col.type,
          nullable: true,
          position: i + 1,
        })),
        primaryKey: [],
        cardinality,
        description: `${format.toUpperCase()} file ${file}`,
      });
    }
    return tables;
  }

  /**
   * The reader of `file`; `read` gives CSV columns read with another type than inferred (as text,
   * to be checked as numeric).
   */
  private relationFor(file: string, format: FileFormat, read: ReadonlyMap<string, string>): string {
    const full = confineFile(path.join(this.folder(), file), this.folder());
    if (!full) throw new SourceUnreachableError(`file ${file} is missing or outside its folder`);
    const declared = format === 'parquet' ? null : declaredTypes(this.folder(), file);
    // A column declared numeric without scale is read as text (CSV) or the reader's double (JSON), then checked.
    const numericAs = format === 'csv' ? 'VARCHAR' : 'DOUBLE';
    const plain = declared && Object.fromEntries(Object.entries(declared).map(([c, t]) => [c, t === DECLARED_NUMERIC ? numericAs : t]));
    const typed = format === 'csv' ? { ...plain, ...Object.fromEntries(read) } : plain;
    // Declared columns keep their types; the others are inferred (docs/sources.md).
    const types =
      typed && Object.keys(typed).length > 0
        ? `, ${format === 'csv' ? 'types' : 'columns'} = {${Object.entries(typed)
            .map(([name, type]) => `${sqlLiteral(name)}: ${sqlLiteral(type)}`)
            .join(', ')}}`
        : '';
    switch (format) {
      case 'csv':
        return `read_csv(${sqlLiteral(full)}, header = true, auto_detect = true${types})`;
      case 'parquet':
        return `read_parquet(${sqlLiteral(full)})`;
      case 'json':
        return `read_json_auto(${sqlLiteral(full)}${types})`;
    }
  }

  relationSql(table: TableDef): string {
    const format = formatOf(table.nameInSource);
    if (!format) throw new Error(`unsupported file ${table.nameInSource}`);
    if (format === 'parquet') return this.relationFor(table.nameInSource, format, new Map());
    // Columns the import found numeric (no reader infers a DECIMAL, and declared ones are read as declared).
    const declared = declaredTypes(this.folder(), table.nameInSource) ?? {};
    const decimals = table.columns.filter(
      (c) => c.type.startsWith('DECIMAL') && (declared[c.nameInSource] === undefined || declared[c.nameInSource] === DECLARED_NUMERIC),
    );
    const text = format === 'csv';
    const relation = this.relationFor(table.nameInSource, format, new Map(decimals.map((c) => [c.nameInSource, 'VARCHAR'])));
    if (decimals.length === 0) return relation;
    const checked = decimals.map(
      (c) => `${checkedDecimal(c.nameInSource, c.type, table.nameInSource, text)} AS ${quoteIdent(c.nameInSource)}`,
    );
    return `(SELECT * REPLACE (${checked.join(', ')}) FROM ${relation})`;
  }

  async close(): Promise<void> {}
}
