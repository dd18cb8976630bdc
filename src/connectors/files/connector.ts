import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import fs from 'node:fs';
import path from 'node:path';
import type { SourceDef, TableDef } from '../../catalog/types.js';
import { NO_PUSHDOWN, SourceUnreachableError } from '../types.js';
import type { Capabilities, EngineNativeConnector, ImportedTable } from '../types.js';
import { DECLARED_NUMERIC, declaredTypes, SCHEMA_FILE_SUFFIX } from './declared-types.js';
import { checkedDecimal, decimalColumns, decimalModeOf, decimalType, isFloatType } from './decimal-columns.js';
import { jsonNumberFacts, LOSSY_JSON_NUMBERS, refusedJsonColumn } from './json-numbers.js';
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
    for (const { name, file, format } of this.files()) {
      const relation = this.relationFor(file, format, new Map());
      const columns: Array<{ name: string; type: string; sourceType?: string }> = await this.context.describe(relation);
      if (format === 'csv') await this.csvTypes(file, columns);
      if (format === 'json') await this.jsonTypes(file, columns);
      const cardinality = format === 'parquet' ? await this.context.parquetRowCount(path.join(this.folder(), file)) : null;
      tables.push({
        name,
        nameInSource: file,
        kind: 'Table',
        columns: columns.map((col, i) => ({
          name: col.name,
          nameInSource: col.name,
          type: col.type,
          ...(col.sourceType === undefined ? {} : { sourceType: col.sourceType }),
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

  /** Columns of a CSV file to read as numeric: floats the reader inferred (not declared) that hold decimals exactly, and columns declared numeric without scale (decimal-columns.ts). */
  private async csvTypes(file: string, columns: Array<{ name: string; type: string }>): Promise<void> {
    const { numeric, candidates } = this.decimalCandidates(file, columns);
    const scanned = this.relationFor(file, 'csv', new Map(candidates.map((c) => [c, 'VARCHAR'])));
    const decimals = await decimalColumns(scanned, candidates, this.context.engineQuery);
    const unfit = numeric.find((c) => !decimals.has(c));
    if (unfit) throw unfitNumeric(file, unfit);
    for (const column of columns) column.type = decimals.get(column.name) ?? column.type;
  }

  /**
   * The same for a JSON file, from the numbers as the file writes them (json-numbers.ts); a
   * column holding numbers the reader's doubles would round is refused when read, unless
   * declared a float or the folder reads floats.
   */
  private async jsonTypes(file: string, columns: Array<{ name: string; type: string; sourceType?: string }>): Promise<void> {
    const { numeric, candidates } = this.decimalCandidates(file, columns);
    const facts = await jsonNumberFacts(this.fullPath(file), this.context.engineQuery);
    const declared = declaredTypes(this.folder(), file) ?? {};
    const floats = decimalModeOf(this.source.connection) === 'double';
    for (const column of columns) {
      // Declared numeric(p,s) is read as the reader's double, cast from its text (relationSql).
      if (declared[column.name]?.startsWith('DECIMAL')) column.type = declared[column.name]!;
      const found = facts.get(column.name);
      const exact = found && !found.long && !found.exponent && found.whole + found.scale <= 38;
      if (candidates.includes(column.name) && (exact || (!found && numeric.includes(column.name)))) {
        column.type = decimalType(found?.whole ?? 0, found?.scale ?? 0);
        continue;
      }
      if (numeric.includes(column.name)) throw unfitNumeric(file, column.name);
      const asFloats = declared[column.name] === undefined ? floats && isFloatType(column.type) : isFloatType(declared[column.name]!);
      if (found?.lossy && !asFloats) column.sourceType = LOSSY_JSON_NUMBERS;
    }
  }

  /** Columns declared numeric without scale, and those with the floats the reader inferred where the folder reads decimals as numeric. */
  private decimalCandidates(file: string, columns: ReadonlyArray<{ name: string; type: string }>) {
    const declared = declaredTypes(this.folder(), file) ?? {};
    const numeric = columns.filter((c) => declared[c.name] === DECLARED_NUMERIC).map((c) => c.name);
    const floats =
      decimalModeOf(this.source.connection) === 'numeric'
        ? columns.filter((c) => isFloatType(c.type) && declared[c.name] === undefined).map((c) => c.name)
        : [];
    return { numeric, candidates: [...numeric, ...floats] };
  }

  private fullPath(file: string): string {
    const full = confineFile(path.join(this.folder(), file), this.folder());
    if (!full) throw new SourceUnreachableError(`file ${file} is missing or outside its folder`);
    return full;
  }

  /**
   * The reader of `file`; `read` gives CSV columns read with another type than inferred (as text,
   * to be checked as numeric).
   */
  private relationFor(file: string, format: FileFormat, read: ReadonlyMap<string, string>): string {
    const full = this.fullPath(file);
    const declared = format === 'parquet' ? null : declaredTypes(this.folder(), file);
    // A column declared numeric is read as text (CSV) or the reader's double (JSON: its own cast to
    // DECIMAL(38,30) makes 0.1 0.100000000000000009025336901632), then checked and cast from its text.
    const numericAs = (type: string) =>
      type === DECLARED_NUMERIC
        ? format === 'csv'
          ? 'VARCHAR'
          : 'DOUBLE'
        : format === 'json' && type.startsWith('DECIMAL')
          ? 'DOUBLE'
          : type;
    const plain = declared && Object.fromEntries(Object.entries(declared).map(([c, t]) => [c, numericAs(t)]));
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
    // Columns the import found numeric (no reader infers a DECIMAL), and declared ones read as text (CSV) or double (JSON).
    const declared = declaredTypes(this.folder(), table.nameInSource) ?? {};
    const found = (c: { nameInSource: string }) => declared[c.nameInSource] === undefined || declared[c.nameInSource] === DECLARED_NUMERIC;
    const text = format === 'csv';
    const decimals = table.columns.filter((c) => c.type.startsWith('DECIMAL') && (found(c) || !text));
    const refused = table.columns.filter((c) => c.sourceType === LOSSY_JSON_NUMBERS);
    const relation = this.relationFor(table.nameInSource, format, new Map(decimals.map((c) => [c.nameInSource, 'VARCHAR'])));
    if (decimals.length === 0 && refused.length === 0) return relation;
    const read = (c: (typeof table.columns)[number]) =>
      refused.includes(c)
        ? refusedJsonColumn(c.nameInSource, table.nameInSource)
        : found(c)
          ? checkedDecimal(c.nameInSource, c.type, table.nameInSource, text)
          : `CAST(CAST(${quoteIdent(c.nameInSource)} AS VARCHAR) AS ${c.type})`;
    const checked = [...refused, ...decimals.filter((c) => !refused.includes(c))].map((c) => `${read(c)} AS ${quoteIdent(c.nameInSource)}`);
    return `(SELECT * REPLACE (${checked.join(', ')}) FROM ${relation})`;
  }

  async close(): Promise<void> {}
}

const unfitNumeric = (file: string, column: string) =>
  new SourceUnreachableError(
    `${file}: column "${column}" is declared numeric, and holds values vdb's engine cannot hold exactly as numeric (an exponent, NaN, an infinity, more than 38 digits${file.match(/\.(json|jsonl|ndjson)(\.gz)?$/i) ? ', or more than 15 significant digits in JSON' : ''}); declare it double precision or numeric(p,s)`,
  );
