/**
 * What the engine and the catalog may know of a kind of source from its definition alone, with
 * no connector at hand: its SQL dialect (the type questions planners ask of a column), whether
 * vdb writes to it, and whether it is reached over the network. The one place besides the
 * connector factory that names the kinds; everything else asks here or asks the connector.
 */
import type { ColumnDef, SourceKind } from '../catalog/types.js';
import type { SourceDialect } from './dialect.js';
import { MYSQL_DIALECT } from './mysql/dialect.js';
import { POSTGRES_DIALECT } from './postgres/dialect.js';
import { SQLITE_DIALECT } from './sqlite/dialect.js';

interface KindTraits {
  /** The dialect vdb writes the source's SQL in; null where the engine reads the source itself (files, DuckDB). */
  dialect: SourceDialect | null;
  /** INSERT, UPDATE and DELETE go to the source. */
  writable: boolean;
  /** Reached over the network (host, port, pool); `socketFolders`: a host may also be a Unix socket's folder. */
  network: { socketFolders: boolean } | null;
}

const TRAITS: Record<SourceKind, KindTraits> = {
  postgresql: { dialect: POSTGRES_DIALECT, writable: true, network: { socketFolders: true } },
  mysql: { dialect: MYSQL_DIALECT, writable: true, network: { socketFolders: false } },
  sqlite: { dialect: SQLITE_DIALECT, writable: true, network: null },
  file: { dialect: null, writable: false, network: null },
  duckdb: { dialect: null, writable: false, network: null },
};

const traitsOf = (source: { kind: string }): KindTraits | undefined => TRAITS[source.kind as SourceKind];

/** The dialect of a source's kind; null where the engine reads the source itself. */
export const dialectOf = (source: { kind: string }): SourceDialect | null => traitsOf(source)?.dialect ?? null;

/** Whether vdb writes to sources of this kind (INSERT, UPDATE, DELETE). */
export const writableKind = (kind: string): boolean => traitsOf({ kind })?.writable ?? false;

/** How a networked kind is reached; null for the others. */
export const networkOf = (kind: string): KindTraits['network'] => traitsOf({ kind })?.network ?? null;

/** Whether a column of the source may hold char(n) values padded with spaces (compared without them there). */
export const paddedChar = (column: Pick<ColumnDef, 'type' | 'sourceType'>, source: { kind: string }): boolean =>
  dialectOf(source)?.paddedChar(column) ?? false;

/** Whether the source compares the column with a char(n) as a char(n), without trailing spaces. */
export const comparesAsChar = (column: Pick<ColumnDef, 'type' | 'sourceType'>, source: { kind: string }): boolean =>
  dialectOf(source)?.comparesAsChar(column) ?? false;

/** Whether the column's values carry their own scale at the source, read from their text. */
export const scaleFromValues = (column: Pick<ColumnDef, 'type'>, source: { kind: string }): boolean =>
  dialectOf(source)?.scaleFromValues(column) ?? false;

/** Whether the column's source type is unknown (imported before vdb recorded it). */
export const sourceTypeUnknown = (column: Pick<ColumnDef, 'sourceType'>): boolean => column.sourceType === undefined;
