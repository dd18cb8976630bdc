/**
 * The shapes of the virtual database's catalog: data sources (each a schema), their imported
 * tables and columns, and the users. Everything here is plain JSON so the catalog can be
 * persisted as one file and read back unchanged.
 */

/** Kinds of data source. The template/translator names of the REST API. */
export type SourceKind = 'sqlite' | 'file' | 'postgresql' | 'mysql' | 'duckdb';

/**
 * The catalog's type of a numeric without declared scale (PostgreSQL's `numeric`): 38 digits, 10
 * after the point, unless the source's dialect says its values carry their own scale
 * (`SourceDialect.scaleFromValues`).
 */
export const UNCONSTRAINED_NUMERIC = 'DECIMAL(38,10)';

export interface ColumnDef {
  name: string;
  /** Name of the column in the source, when it differs from `name`. */
  nameInSource: string;
  /** Type in the engine (DuckDB / PostgreSQL spelling), e.g. BIGINT, VARCHAR, DECIMAL(12,2). */
  type: string;
  nullable: boolean;
  /** 1-based position in the table. */
  position: number;
  /**
   * The type as the source declares it, where it matters beyond `type`: SQLite's affinity;
   * PostgreSQL's name of a column read as VARCHAR (`character(5)`: its values padded, compared
   * without the padding); MySQL's COLUMN_TYPE of a column read as VARCHAR (`char(15)`, `enum(...)`).
   * PostgreSQL columns imported before 0.2.0, MySQL ones by 0.2.0, have none (a refresh records it).
   */
  sourceType?: string;
  /** The source's collation of a text column, when it is not bytewise (orders text differently). */
  collation?: string | null;
  /**
   * Distinct values, estimated from the source's statistics (PostgreSQL pg_stats, MySQL/MariaDB
   * index cardinality, SQLite sqlite_stat1); absent when the source keeps none for the column.
   */
  distinct?: number | null;
  /**
   * The share of NULLs among the column's values, from the same statistics (PostgreSQL
   * pg_stats.null_frac, MariaDB mysql.column_stats.nulls_ratio); absent when not kept.
   */
  nullFraction?: number | null;
  description?: string | null;
}

/** A table's name in its source, structured: the source's dialect quotes it where SQL needs it. */
export interface SourceTableName {
  schema?: string;
  table: string;
}

export interface TableDef {
  name: string;
  /** The name as the source's SQL writes it (shown in SYS.Tables). */
  nameInSource: string;
  /** The same name, structured. Absent in catalogs written before 0.2.0 (the dialect parses nameInSource then). */
  sourceName?: SourceTableName;
  kind: 'Table' | 'View';
  columns: ColumnDef[];
  primaryKey: string[];
  /** Row estimate from the source's statistics; null when the source keeps none. */
  cardinality: number | null;
  description?: string | null;
  /** Stable identifiers shown in SYS.Tables. */
  uid: string;
  oid: number;
}

/** A parameter of a source procedure (an input; results are `ProcedureDef.columns`). */
export interface ProcedureParamDef {
  name: string;
  /** Type in the engine, as for columns. */
  type: string;
  /** The type as the source declares it (PostgreSQL: format_type spelling; MariaDB: DTD_IDENTIFIER). */
  sourceType: string;
  /** 1-based position among the inputs. */
  position: number;
  /** The source gives it a default: it may be left out. */
  optional: boolean;
}

/** A column of a procedure's result. */
export interface ProcedureColumnDef {
  name: string;
  type: string;
  sourceType: string;
}

/**
 * A procedure of a source, called with CALL, SELECT * FROM source.name(...) and over REST: a
 * PostgreSQL function or a MariaDB stored procedure. Imported with the source's tables.
 */
export interface ProcedureDef {
  name: string;
  /** The name as the source's SQL writes it (quoted). */
  nameInSource: string;
  sourceName: { schema: string; name: string };
  params: ProcedureParamDef[];
  /** The result's columns; null where the source tells them only when called (MariaDB). */
  columns: ProcedureColumnDef[] | null;
  /** Returns a set of rows (else one row, one value). */
  returnsSet: boolean;
  /** May change data (PostgreSQL VOLATILE; MariaDB MODIFIES SQL DATA): needs write permission. */
  modifiesData: boolean;
  description: string | null;
  uid: string;
  oid: number;
}

export interface SourceDef {
  name: string;
  kind: SourceKind;
  /** Connection settings that are not secret (host, port, path, ParentDirectory, ...). */
  connection: Record<string, string>;
  /** Secret settings (password, ...), each sealed with the server's encryption key. */
  secrets: Record<string, string>;
  model: Record<string, string>;
  translator: Record<string, string>;
  description: string | null;
  readOnly: boolean;
  createdAt: string;
  tables: TableDef[];
  /** Its procedures; absent in catalogs written before procedures were imported (a refresh imports them). */
  procedures?: ProcedureDef[];
  oid: number;
}

export interface UserDef {
  name: string;
  /** 'password' users may use REST; 'external' (identity provider) users may not. */
  kind: 'password' | 'external';
  /** The identity provider of an external user. */
  provider?: string;
  /** scrypt hash; null for external users. */
  passwordHash: string | null;
  /**
   * SCRAM-SHA-256 verifier for the PostgreSQL listener (security/scram.ts), made whenever vdb sees
   * the password; absent for users who have not signed in or changed their password since.
   */
  scramVerifier?: string;
  /** Random per-user secret mixed into token signatures; rotated when the password changes. */
  tokenSecret: string;
  /** The username used with HTTP Basic on the hosted link; defaults to the name. */
  databaseUsername: string;
  rest: boolean;
  /** Static hosted-link token; survives switching REST off and on. */
  linkToken: string;
  roles: string[];
  createdAt: string;
  /** Statements the user saved under a name (the console's saved queries); absent: none. */
  savedQueries?: SavedQuery[];
}

export interface SavedQuery {
  name: string;
  sql: string;
  /** ISO-8601 time of the last save. */
  savedAt: string;
}

/** A connection created by SYSADMIN.createConnection, waiting for createDataSource. */
export interface ConnectionDef {
  name: string;
  kind: SourceKind;
  connection: Record<string, string>;
  /** Sealed like a source's secrets. */
  secrets: Record<string, string>;
}

/** An API key of a user (application authentication); only its hash is kept. */
export interface ApiKeyDef {
  id: string;
  owner: string;
  name: string;
  hash: string;
  expiresAt: string | null;
  readOnly: boolean;
  createdAt: string;
}

/** An invitation to become a password user; only the token's hash is kept. */
export interface InviteDef {
  name: string;
  hash: string;
  expiresAt: string;
  createdAt: string;
  usedAt: string | null;
}

/** What a role may do with a resource (SYSADMIN.setPermissions); see security/permissions.ts. */
export interface PermissionDef {
  role: string;
  /** `*`, `schema`, `schema.table`, `schema.table.column` or `SYSADMIN.procedure`, as given. */
  resource: string;
  /** Letters of CRUDEA in that order; '' grants nothing (and hides what a wider entry grants). */
  permissions: string;
  /** Table entries: the rows the role sees. Column entries: where the mask applies. */
  condition: string | null;
  /** Column entries: the expression shown instead of the column's value. */
  mask: string | null;
  /** Masks of several roles apply highest order first. */
  maskOrder: number | null;
}

/**
 * A virtual view (CREATE VIEW): a SELECT over the virtual database, stored as its text and
 * expanded wherever it is read. Its schema is virtual (no source); the schema exists while it
 * holds a view. Columns are worked out when the view is created.
 */
export interface ViewDef extends TableDef {
  kind: 'View';
  schema: string;
  /** The SELECT, as written. */
  sql: string;
  owner: string;
  createdAt: string;
}

/** How a local copy takes in the source's changes (docs/copies.md). */
export type CopyMode = 'full' | 'append' | 'upsert' | 'changes';

/**
 * One file set of a copy: a base file and, after incremental refreshes, a delta file with the
 * rows added (append) or changed (upsert, changes) since the base, and (changes) the keys deleted. Paths are relative to the copies folder.
 */
export interface CopyVersion {
  id: number;
  base: string;
  delta: string | null;
  rows: number;
  bytes: number;
  /** When the refresh that made this version began to read the source: the copy is as new as that. */
  readAt: string;
  /** The largest value of the change column the copy holds (incremental modes), as the engine writes it. */
  watermark: string | null;
  /** The base's row count (a delta grown past a share of it is folded into a new base). */
  baseRows: number;
  /** changes: the capture (replication slot and publication) whose changes come after this version's full read. */
  capture?: string;
}

/** One refresh of a copy, kept for SYSLOG.CopyRefreshes. */
export interface CopyRefreshRecord {
  startedAt: string;
  durationMs: number;
  kind: 'full' | 'incremental' | 'compaction';
  /** Rows read from the source. */
  rows: number;
  status: 'ok' | 'failed';
  error: string | null;
  instance: string;
}

/**
 * A local copy kept in the engine's storage: of a source table (an accelerated table) or of a
 * SELECT (a materialized view). Statements read it instead of the source while it is fresh enough.
 */
export interface CopyDef {
  /** `schema.table` of the accelerated table, or of the materialized view. */
  name: string;
  schema: string;
  table: string;
  kind: 'table' | 'view';
  /** A materialized view's SELECT, as written; its columns in `columns`. */
  sql: string | null;
  columns: ColumnDef[] | null;
  mode: CopyMode;
  /** append: the column whose values only grow; upsert: the column a change sets to a later value. */
  changeColumn: string | null;
  /** upsert, changes: the columns that identify a row (the table's primary key by default). */
  keyColumns: string[];
  /** changes: the prefix of its captures' names at the source (`vdb_c<oid>_<random>`; one capture per full read). */
  capturePrefix?: string;
  /** Seconds between scheduled refreshes; null: refreshed only when asked. */
  refreshEvery: number | null;
  /** Seconds between full refreshes of an incremental copy (they catch deletions); null: never by schedule. */
  fullRefreshEvery: number | null;
  /** How old (seconds) the copy may be for a statement to read it instead of the source; null: any age. */
  maxStaleness: number | null;
  paused: boolean;
  current: CopyVersion | null;
  lastError: string | null;
  /** Refreshes failed in a row (the next waits longer). */
  failures: number;
  lastAttemptAt: string | null;
  lastFullAt: string | null;
  history: CopyRefreshRecord[];
  owner: string;
  createdAt: string;
  oid: number;
}

export interface CatalogData {
  formatVersion: 1;
  sources: SourceDef[];
  connections?: ConnectionDef[];
  apiKeys?: ApiKeyDef[];
  /** Roles besides the built-in `admin`. */
  roles?: string[];
  permissions?: PermissionDef[];
  views?: ViewDef[];
  /** Local copies of tables and materialized views (docs/copies.md). */
  copies?: CopyDef[];
  invites?: InviteDef[];
  users: UserDef[];
  /** Set once the first start finished (demo attached); a failed first start is retried. */
  initialized?: boolean;
  /** Next object id for SYS.Tables.OID and friends. */
  nextOid: number;
}

export const emptyCatalog = (): CatalogData => ({ formatVersion: 1, sources: [], users: [], nextOid: 1000 });
