/**
 * Configuration: defaults, overridden by an optional JSON file (VDB_CONFIG, or vdb.config.json in
 * the data directory), overridden by environment variables. Every key is documented in
 * docs/configuration.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LIMIT_NAMES, type RoleLimits } from './security/statement-limits.js';
import { DEFAULT_STATEMENT_SIZE } from './engine/front/statement-size.js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /**
   * Where local copies are kept (docs/copies.md): default `copies` in the data directory; a
   * folder every instance reads when several share a catalog.
   */
  copiesFolder: string;
  /** /readyz fails when the data directory's disk has fewer bytes free (0: only the write probe counts). */
  dataDirMinFreeBytes: number;
  /** Name of the virtual database, shown as VDBName in the system tables. */
  vdbName: string;
  /** Password for the `admin` user on first start; generated and printed when unset. */
  adminPassword: string | null;
  /** Folders that file sources may live in; DuckDB can read nothing outside them. */
  fileRoots: string[];
  /** Attach the demo data set on first start. */
  demo: boolean;
  /** Largest accepted request body in bytes (413 above). */
  bodyLimit: number;
  /** Default statement timeout in ms (the `timeout` parameter overrides it per request). */
  queryTimeoutMs: number;
  /** How long connecting to a PostgreSQL or MySQL source may take (a source's connectTimeoutMs overrides it). */
  connectTimeoutMs: number;
  /**
   * How long a statement waits for a connection of a PostgreSQL or MySQL source whose pool is in
   * use (maxConnections) before a 503 "Data source busy" (a source's poolWaitMs overrides it).
   */
  poolWaitMs: number;
  /**
   * Results a source streams (statements it runs whole) are read ahead of a slow client, so that
   * the source's connection goes back to its pool: in memory, then in the data directory.
   */
  resultSpool: {
    /** Bytes of one result held in memory ahead of its client; beyond it the rest goes to disk. */
    memoryBytes: number;
    /** Bytes on disk of all results together; beyond it the source waits for the client. */
    diskBytes: number;
  };
  /** Longest a source's metadata import may take when it is added, altered or refreshed. */
  metadataTimeoutMs: number;
  /** First wait before an unavailable source is checked again in the background; it doubles up to sourceRetryMaxMs. */
  sourceRetryMs: number;
  /** Longest wait between two background checks of an unavailable source. */
  sourceRetryMaxMs: number;
  pagination: {
    /** Rows per chunk when a paginated request gives no `limit`. */
    defaultLimit: number;
    /** Largest `limit` accepted in pagination mode (larger values are capped). */
    maxLimit: number;
    /** A cursor not read for this long is dropped. */
    cursorIdleMs: number;
    /** Most cursors kept at once; the least recently used is dropped beyond it. */
    maxCursors: number;
    /** Most cursors one user keeps at once; beyond it the user's own least recently used is dropped. */
    maxCursorsPerUser: number;
    /**
     * Bytes of results one user's cursors take together (memory and spill folder, or Redis);
     * beyond it the user's own least recently used go first, and a larger result alone is refused
     * (413). null: a quarter of the store's byte budget (memoryBytes + diskBytes, or cursors.maxBytes).
     */
    maxBytesPerUser: number | null;
    /** Local cursors: bytes of results kept in memory; beyond it they go to the spill folder. */
    memoryBytes: number;
    /** Local cursors: bytes of results in the spill folder; the least recently used go first beyond it. */
    diskBytes: number;
  };
  /** Shared cursors (and sign-in throttling and statement counts) in Redis, for several instances. */
  cursors: {
    /** redis://host:port/db; null: this process keeps them (pagination.memoryBytes, diskBytes). */
    redisUrl: string | null;
    /** Prefix of every key vdb writes; instances that share state use the same one. */
    keyPrefix: string;
    /** Bytes of results in Redis, all instances together; the least recently read go first beyond it. */
    maxBytes: number;
    /** Bytes of chunks each instance keeps of what it read from Redis (a cursor's chunks never change). */
    cacheBytes: number;
  };
  /** Statement limits per role (security/statement-limits.ts); "*" applies to roles not listed. */
  roleLimits: Record<string, RoleLimits>;
  /** Limits every statement meets, whoever sends it (statement-size.ts, security/statement-limits.ts). */
  statements: {
    /** Most bytes (UTF-8) of SQL text in one statement. */
    maxBytes: number;
    /** Most nodes of a statement's syntax tree. */
    maxSyntaxNodes: number;
    /** Most terms of one select list or VALUES row. */
    maxSelectListTerms: number;
    /** Statements a user runs at once when their roles set no maxConcurrentStatements; admins have no such limit. */
    maxPerUser: number;
    /** Statements running at once in this instance, all users together; more wait in a queue. */
    maxRunning: number;
    /** Statements waiting for a place at most; more are refused (503). */
    maxQueued: number;
    /** Longest wait in the queue (ms); then the statement is refused (503). */
    maxQueueMs: number;
  };
  /** Honour X-Forwarded-Proto/Host when building absolute links (only behind a trusted proxy). */
  trustProxy: boolean;
  /** DuckDB memory limit, e.g. "4GB"; work beyond it spills to the data directory. Default: a share of the machine's (or cgroup's) memory. */
  engineMemoryLimit: string;
  /** Disk the engine's spill files may take, e.g. "10GB". */
  engineSpillLimit: string;
  /** Bytes of the largest value the engine builds or a result carries (engine/exec/value-bounds.ts). */
  valueLimit: number;
  logLevel: string;
  /** Failed sign-ins (Basic, login) allowed per user name and per client address. */
  throttle: {
    maxFailures: number;
    windowMs: number;
    /** How long a name or address is refused after too many failures. */
    lockMs: number;
  };
  queryLog: {
    /** Most statements kept in SYSLOG.QueryLog. */
    maxEntries: number;
    /** Statements older than this are dropped. */
    maxAgeMs: number;
  };
  dependentJoin: {
    /** A joined table's distinct keys are sent to the other source when there are at most this many. */
    maxKeys: number;
    /** Keys per statement (IN list); more keys make more statements. */
    batchSize: number;
    /** Most rows of a small table sent to PostgreSQL as arrays so that it runs the join whole; 0: never. */
    maxShippedRows: number;
    /** Shipped rows with dense unique integer keys go to PostgreSQL as a lookup array indexed by the key. */
    lookupArrays: boolean;
    /** Dependent-join keys go to MySQL/MariaDB as a lookup (a byte per key) where they are many and dense. */
    keyLookups: boolean;
  };
  /**
   * PostgreSQL's wire protocol (docs/pgwire.md): a second listener in the same process. port null:
   * the HTTP port + 1 (0 when the HTTP port is 0); host null: the HTTP host. Password sign-in needs
   * TLS (the tls certificate) unless the listener is on loopback or allowPlainPasswords is set.
   */
  pgwire: { enabled: boolean; host: string | null; port: number | null; allowPlainPasswords: boolean };
  /** Serve HTTPS with this certificate and key (PEM files) instead of plain HTTP; null: HTTP. */
  tls: { certFile: string; keyFile: string } | null;
  /** Push projections and conditions down to the sources; off reads whole tables (for diagnosis). */
  pushdown: boolean;
  /** Write small results of statements MySQL/MariaDB or SQLite run whole without the engine; off for diagnosis. */
  directRows: boolean;
  /** Serve GET /metrics on this port of its own instead of the main port (null: the main port). */
  metricsPort: number | null;
  /** On SIGTERM: how long running statements may finish before they are cancelled at their sources. */
  shutdownGraceMs: number;
  /**
   * Data sources to create at start when the catalog lacks them (the body of POST
   * /rest/api/source). String values may use ${env:NAME} to take a secret from the environment.
   */
  sources: Array<Record<string, unknown>>;
  /** The shared catalog (docs/deploy.md): a PostgreSQL database instead of the data directory's files. */
  catalog: {
    /** postgres:// URL of the catalog database; null: catalog.json and secrets.json in the data directory. */
    url: string | null;
    /** The schema of that database the catalog lives in. */
    schema: string;
  };
}

export type ConfigOverrides = Partial<
  Omit<Config, 'pgwire' | 'pagination' | 'queryLog' | 'dependentJoin' | 'throttle' | 'catalog' | 'cursors' | 'statements' | 'resultSpool'>
> & {
  pgwire?: Partial<Config['pgwire']>;
  resultSpool?: Partial<Config['resultSpool']>;
  statements?: Partial<Config['statements']>;
  catalog?: Partial<Config['catalog']>;
  cursors?: Partial<Config['cursors']>;
  throttle?: Partial<Config['throttle']>;
  dependentJoin?: Partial<Config['dependentJoin']>;
  pagination?: Partial<Config['pagination']>;
  queryLog?: Partial<Config['queryLog']>;
};

const int = (value: string | undefined, name: string): number | undefined => {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
};

const bool = (value: string | undefined): boolean | undefined =>
  value === undefined || value === '' ? undefined : /^(1|true|yes|on)$/i.test(value);

const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** Where the PostgreSQL listener listens: its own host and port, else the HTTP host and the next port. */
export function pgwireAddress(config: Config): { host: string; port: number } {
  const port = config.pgwire.port ?? (config.port === 0 ? 0 : config.port + 1);
  return { host: config.pgwire.host ?? config.host, port };
}

/** The longest delay Node's timers hold (2^31 - 1 ms); a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The default folder of file sources: a folder of its own inside the data directory, where the demo data goes. */
export const defaultFileRoot = (dataDir: string) => path.join(dataDir, 'files');

/** Each user's quota of cursors and bytes in the cursor store (pagination.maxCursorsPerUser, maxBytesPerUser). */
export function cursorQuota(config: Config): { cursors: number; bytes: number } {
  const { maxCursorsPerUser, maxBytesPerUser, memoryBytes, diskBytes } = config.pagination;
  const budget = config.cursors.redisUrl === null ? memoryBytes + diskBytes : config.cursors.maxBytes;
  return { cursors: maxCursorsPerUser, bytes: maxBytesPerUser ?? Math.max(1, Math.floor(budget / 4)) };
}

/** Where local cursors spill: in the data directory, never inside a file root (checkFileRoots). */
export const cursorSpillDir = (dataDir: string) => path.join(dataDir, 'cursors');

/** Where results wait for slow clients (resultSpool): in the data directory, emptied at start. */
export const resultSpoolDir = (dataDir: string) => path.join(dataDir, 'tmp', 'results');

/** Where Parquet answers are made before they are sent (results/parquet.ts): emptied at start. */
export const parquetDir = (dataDir: string) => path.join(dataDir, 'tmp', 'parquet');

/**
 * The engine may read the file roots: none may be the data directory or a folder above it,
 * which holds the secrets and the catalog, nor the cursors' spill folder or a folder in it.
 */
function checkFileRoots(config: Config): void {
  // Real paths where they exist, so that a symbolic link cannot hide the data directory.
  const real = (folder: string) => (fs.existsSync(folder) ? fs.realpathSync(folder) : folder);
  for (const root of config.fileRoots) {
    const relative = path.relative(real(root), real(config.dataDir));
    if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) {
      throw new Error(
        `configuration fileRoots: ${root} holds the data directory ${config.dataDir} (its secrets and catalog); use a folder inside it, such as ${defaultFileRoot(config.dataDir)}, or elsewhere`,
      );
    }
    const spill = path.relative(real(cursorSpillDir(config.dataDir)), real(root));
    if (spill === '' || (!spill.startsWith('..') && !path.isAbsolute(spill))) {
      throw new Error(
        `configuration fileRoots: ${root} lies in the cursors' spill folder ${cursorSpillDir(config.dataDir)}, which the engine must not read; use a folder elsewhere`,
      );
    }
  }
}

/** The memory the process may use: the machine's, or its cgroup's when that is less. */
export function availableMemory(): number {
  let memory = os.totalmem();
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const limit = Number(fs.readFileSync(file, 'utf8').trim());
      if (Number.isFinite(limit) && limit > 0) memory = Math.min(memory, limit);
    } catch {
      // No such cgroup file: not limited there.
    }
  }
  return memory;
}

/** 40% of the available memory: the rest is the process's own (results, cursors, connections) and other users'. */
const defaultEngineMemoryLimit = () => `${Math.max(256, Math.floor((availableMemory() * 0.4) / 1024 / 1024))}MB`;

/** A size the engine reads, such as "4GB", "512MB" or "1.5GiB". */
const ENGINE_SIZE = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

function validate(config: Config): void {
  for (const [name, value] of [
    ['engineMemoryLimit', config.engineMemoryLimit],
    ['engineSpillLimit', config.engineSpillLimit],
  ] as const) {
    if (typeof value !== 'string' || !ENGINE_SIZE.test(value)) {
      throw new Error(`configuration ${name} must be a size such as "4GB" or "512MB", got ${JSON.stringify(value)}`);
    }
  }
  checkFileRoots(config);
  const positive: Array<[string, unknown]> = [
    ['port', config.port],
    ['bodyLimit', config.bodyLimit],
    ['queryTimeoutMs', config.queryTimeoutMs],
    ['pagination.defaultLimit', config.pagination.defaultLimit],
    ['pagination.maxLimit', config.pagination.maxLimit],
    ['pagination.cursorIdleMs', config.pagination.cursorIdleMs],
    ['pagination.maxCursors', config.pagination.maxCursors],
    ['pagination.maxCursorsPerUser', config.pagination.maxCursorsPerUser],
    ['queryLog.maxEntries', config.queryLog.maxEntries],
    ['throttle.maxFailures', config.throttle.maxFailures],
    ['throttle.windowMs', config.throttle.windowMs],
    ['throttle.lockMs', config.throttle.lockMs],
    ['dependentJoin.batchSize', config.dependentJoin.batchSize],
    ['queryLog.maxAgeMs', config.queryLog.maxAgeMs],
    ['pagination.memoryBytes', config.pagination.memoryBytes],
    ['pagination.diskBytes', config.pagination.diskBytes],
    ['cursors.maxBytes', config.cursors.maxBytes],
    ['cursors.cacheBytes', config.cursors.cacheBytes],
    ['resultSpool.memoryBytes', config.resultSpool.memoryBytes],
    ['resultSpool.diskBytes', config.resultSpool.diskBytes],
    ['valueLimit', config.valueLimit],
    ...Object.entries(config.statements).map(([name, value]): [string, unknown] => [`statements.${name}`, value]),
  ];
  for (const [name, value] of positive) {
    const allowZero = name === 'port';
    if (typeof value !== 'number' || !Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
      throw new Error(`configuration ${name} must be an integer of at least ${allowZero ? 0 : 1}, got ${JSON.stringify(value)}`);
    }
  }
  if (
    typeof config.dataDirMinFreeBytes !== 'number' ||
    !Number.isSafeInteger(config.dataDirMinFreeBytes) ||
    config.dataDirMinFreeBytes < 0
  ) {
    throw new Error(
      `configuration dataDirMinFreeBytes must be an integer of at least 0, got ${JSON.stringify(config.dataDirMinFreeBytes)}`,
    );
  }
  const perUser = config.pagination.maxBytesPerUser;
  if (perUser !== null && (typeof perUser !== 'number' || !Number.isInteger(perUser) || perUser < 1)) {
    throw new Error(`configuration pagination.maxBytesPerUser must be an integer of at least 1 or null, got ${JSON.stringify(perUser)}`);
  }
  validateSettings(config);
}

/** The timers, ports, names, the catalog's and Redis's addresses, role limits and TLS files. */
function validateSettings(config: Config): void {
  // Timers: Node fires a longer one at once (2^31 - 1 ms is about 24.8 days).
  for (const [name, value] of [
    ['queryTimeoutMs', config.queryTimeoutMs],
    ['connectTimeoutMs', config.connectTimeoutMs],
    ['poolWaitMs', config.poolWaitMs],
    ['metadataTimeoutMs', config.metadataTimeoutMs],
    ['sourceRetryMs', config.sourceRetryMs],
    ['sourceRetryMaxMs', config.sourceRetryMaxMs],
    ['shutdownGraceMs', config.shutdownGraceMs],
  ] as const) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMER_MS) {
      throw new Error(`configuration ${name} must be an integer from 1 to ${MAX_TIMER_MS}, got ${JSON.stringify(value)}`);
    }
  }
  for (const name of ['lookupArrays', 'keyLookups'] as const) {
    if (typeof config.dependentJoin[name] !== 'boolean') {
      throw new Error(`configuration dependentJoin.${name} must be true or false, got ${JSON.stringify(config.dependentJoin[name])}`);
    }
  }
  if (config.port > 65535) throw new Error(`configuration port must be at most 65535, got ${config.port}`);
  const pgPort = config.pgwire.port;
  if (pgPort !== null && (typeof pgPort !== 'number' || !Number.isInteger(pgPort) || pgPort < 0 || pgPort > 65535)) {
    throw new Error(`configuration pgwire.port must be a port from 0 to 65535 or null, got ${JSON.stringify(pgPort)}`);
  }
  const metricsPort = config.metricsPort;
  if (
    metricsPort !== null &&
    (typeof metricsPort !== 'number' || !Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)
  ) {
    throw new Error(`configuration metricsPort must be a port from 0 to 65535 or null, got ${JSON.stringify(metricsPort)}`);
  }
  for (const [name, value] of [
    ['host', config.host],
    ['vdbName', config.vdbName],
    ['logLevel', config.logLevel],
  ] as const) {
    if (typeof value !== 'string' || value === '') throw new Error(`configuration ${name} must be a non-empty string`);
  }
  if (!Array.isArray(config.sources)) throw new Error('configuration sources must be a list');
  if (config.catalog.url !== null && (typeof config.catalog.url !== 'string' || !/^postgres(ql)?:\/\//.test(config.catalog.url)))
    throw new Error('configuration catalog.url must be a postgres:// or postgresql:// URL, or null');
  if (typeof config.catalog.schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(config.catalog.schema))
    throw new Error(
      `configuration catalog.schema must be a lower-case identifier (letters, digits, _), got ${JSON.stringify(config.catalog.schema)}`,
    );
  validateRoleLimits(config.roleLimits);
  if (config.cursors.redisUrl !== null && !/^rediss?:\/\//.test(config.cursors.redisUrl)) {
    throw new Error(`configuration cursors.redisUrl must be a redis:// or rediss:// URL, got ${JSON.stringify(config.cursors.redisUrl)}`);
  }
  if (config.tls) {
    for (const file of [config.tls.certFile, config.tls.keyFile]) {
      if (!file || !fs.existsSync(file)) throw new Error(`TLS needs both a certificate and a key file; "${file}" does not exist`);
    }
  }
}

/** roleLimits: an object of roles, each with some of the known limits as positive integers. */
function validateRoleLimits(roleLimits: unknown): void {
  if (typeof roleLimits !== 'object' || roleLimits === null || Array.isArray(roleLimits)) {
    throw new Error('configuration roleLimits must be an object of roles');
  }
  for (const [role, limits] of Object.entries(roleLimits as Record<string, unknown>)) {
    if (typeof limits !== 'object' || limits === null) throw new Error(`configuration roleLimits.${role} must be an object`);
    for (const [name, value] of Object.entries(limits)) {
      if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
        throw new Error(`configuration roleLimits.${role}.${name} is not a limit; the limits are ${LIMIT_NAMES.join(', ')}`);
      }
      const most = name === 'statementTimeoutMs' ? MAX_TIMER_MS : Number.MAX_SAFE_INTEGER;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > most) {
        throw new Error(`configuration roleLimits.${role}.${name} must be an integer from 1 to ${most}, got ${JSON.stringify(value)}`);
      }
    }
  }
}

/** Replaces ${env:NAME} in every string of a config value; a missing variable is an error. */
function substituteEnv<T>(value: T, env: NodeJS.ProcessEnv, inProps = false): T {
  if (typeof value === 'string') {
    return value.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) throw new Error(`config refers to environment variable ${name}, which is not set`);
      // Inside a key=value,key=value string the value is taken verbatim: escape its separators.
      return inProps ? found.replace(/[\\,]/g, (ch) => `\\${ch}`) : found;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => substituteEnv(v, env)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, /(Props|Properties)$/.test(k))])) as T;
  }
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): Config {
  const dataDir = path.resolve(overrides.dataDir ?? env.VDB_DATA_DIR ?? 'data');
  const configFile = env.VDB_CONFIG ?? path.join(dataDir, 'vdb.config.json');
  if (env.VDB_CONFIG && !fs.existsSync(env.VDB_CONFIG)) throw new Error(`VDB_CONFIG names ${env.VDB_CONFIG}, which does not exist`);
  const fromFile: ConfigOverrides = fs.existsSync(configFile) ? (JSON.parse(fs.readFileSync(configFile, 'utf8')) as ConfigOverrides) : {};
  const fromEnv = settingsFromEnv(env);
  const merged = { ...fromFile, ...fromEnv, ...defined(overrides) };
  const config: Config = {
    ...resultSections(env, fromFile, overrides),
    ...limitSections(env, fromFile, overrides),
    host: merged.host ?? '127.0.0.1',
    port: merged.port ?? 8080,
    dataDir,
    copiesFolder: path.resolve(merged.copiesFolder ?? path.join(dataDir, 'copies')),
    dataDirMinFreeBytes: merged.dataDirMinFreeBytes ?? 64 * 1024 * 1024,
    vdbName: merged.vdbName ?? 'vdb',
    adminPassword: merged.adminPassword ?? null,
    fileRoots: (merged.fileRoots ?? [defaultFileRoot(dataDir)]).map((root) => path.resolve(root)),
    demo: merged.demo ?? true,
    bodyLimit: merged.bodyLimit ?? 1024 * 1024,
    queryTimeoutMs: merged.queryTimeoutMs ?? 600_000,
    connectTimeoutMs: merged.connectTimeoutMs ?? 10_000,
    poolWaitMs: merged.poolWaitMs ?? 5000,
    metadataTimeoutMs: merged.metadataTimeoutMs ?? 60_000,
    sourceRetryMs: merged.sourceRetryMs ?? 5000,
    sourceRetryMaxMs: merged.sourceRetryMaxMs ?? 60_000,
    trustProxy: merged.trustProxy ?? false,
    engineMemoryLimit: merged.engineMemoryLimit ?? defaultEngineMemoryLimit(),
    engineSpillLimit: merged.engineSpillLimit ?? '10GB',
    valueLimit: merged.valueLimit ?? 64 * 1024 * 1024,
    logLevel: merged.logLevel ?? 'info',
    pushdown: merged.pushdown ?? true,
    directRows: merged.directRows ?? true,
    metricsPort: merged.metricsPort ?? null,
    shutdownGraceMs: merged.shutdownGraceMs ?? 10_000,
    tls: env.VDB_TLS_CERT || env.VDB_TLS_KEY ? { certFile: env.VDB_TLS_CERT ?? '', keyFile: env.VDB_TLS_KEY ?? '' } : (merged.tls ?? null),

    roleLimits: merged.roleLimits ?? {},
    pgwire: {
      enabled: true,
      host: null,
      port: null,
      allowPlainPasswords: false,
      ...fromFile.pgwire,
      ...defined({
        enabled: bool(env.VDB_PG_ENABLED),
        host: env.VDB_PG_HOST || undefined,
        port: int(env.VDB_PG_PORT, 'VDB_PG_PORT'),
        allowPlainPasswords: bool(env.VDB_PG_ALLOW_PLAIN_PASSWORDS),
      }),
      ...defined(overrides.pgwire ?? {}),
    },

    sources: (merged.sources ?? []).map((spec) => substituteEnv(spec, env)),
  };
  validate(config);
  return config;
}

/** The settings read from the environment (VDB_*, PORT), those given. */
function settingsFromEnv(env: NodeJS.ProcessEnv): ConfigOverrides {
  return defined({
    host: env.VDB_HOST,
    copiesFolder: env.VDB_COPIES_FOLDER,
    dataDirMinFreeBytes: int(env.VDB_DATA_DIR_MIN_FREE_BYTES, 'VDB_DATA_DIR_MIN_FREE_BYTES'),
    port: int(env.PORT, 'PORT'),
    vdbName: env.VDB_NAME,
    adminPassword: env.VDB_ADMIN_PASSWORD,
    fileRoots: env.VDB_FILE_ROOTS ? env.VDB_FILE_ROOTS.split(path.delimiter).filter(Boolean) : undefined,
    demo: bool(env.VDB_DEMO),
    bodyLimit: int(env.VDB_BODY_LIMIT, 'VDB_BODY_LIMIT'),
    queryTimeoutMs: int(env.VDB_QUERY_TIMEOUT_MS, 'VDB_QUERY_TIMEOUT_MS'),
    connectTimeoutMs: int(env.VDB_CONNECT_TIMEOUT_MS, 'VDB_CONNECT_TIMEOUT_MS'),
    poolWaitMs: int(env.VDB_POOL_WAIT_MS, 'VDB_POOL_WAIT_MS'),
    metadataTimeoutMs: int(env.VDB_METADATA_TIMEOUT_MS, 'VDB_METADATA_TIMEOUT_MS'),
    sourceRetryMs: int(env.VDB_SOURCE_RETRY_MS, 'VDB_SOURCE_RETRY_MS'),
    sourceRetryMaxMs: int(env.VDB_SOURCE_RETRY_MAX_MS, 'VDB_SOURCE_RETRY_MAX_MS'),
    trustProxy: bool(env.VDB_TRUST_PROXY),
    engineMemoryLimit: env.VDB_ENGINE_MEMORY_LIMIT,
    engineSpillLimit: env.VDB_ENGINE_SPILL_LIMIT,
    valueLimit: int(env.VDB_VALUE_LIMIT, 'VDB_VALUE_LIMIT'),
    logLevel: env.VDB_LOG_LEVEL,
    pushdown: bool(env.VDB_PUSHDOWN),
    directRows: bool(env.VDB_DIRECT_ROWS),
    metricsPort: int(env.VDB_METRICS_PORT, 'VDB_METRICS_PORT'),
    shutdownGraceMs: int(env.VDB_SHUTDOWN_GRACE_MS, 'VDB_SHUTDOWN_GRACE_MS'),
  });
}

/** The sections about results (spool, pagination, cursors), each from its defaults, the file, the environment and the overrides. */
function resultSections(
  env: NodeJS.ProcessEnv,
  fromFile: ConfigOverrides,
  overrides: ConfigOverrides,
): Pick<Config, 'resultSpool' | 'pagination' | 'cursors'> {
  const pagingEnv = defined({
    defaultLimit: int(env.VDB_PAGE_DEFAULT_LIMIT, 'VDB_PAGE_DEFAULT_LIMIT'),
    maxLimit: int(env.VDB_PAGE_MAX_LIMIT, 'VDB_PAGE_MAX_LIMIT'),
    cursorIdleMs: int(env.VDB_CURSOR_IDLE_MS, 'VDB_CURSOR_IDLE_MS'),
    maxCursors: int(env.VDB_MAX_CURSORS, 'VDB_MAX_CURSORS'),
    maxCursorsPerUser: int(env.VDB_MAX_CURSORS_PER_USER, 'VDB_MAX_CURSORS_PER_USER'),
    maxBytesPerUser: int(env.VDB_CURSOR_BYTES_PER_USER, 'VDB_CURSOR_BYTES_PER_USER'),
    memoryBytes: int(env.VDB_CURSOR_MEMORY_BYTES, 'VDB_CURSOR_MEMORY_BYTES'),
    diskBytes: int(env.VDB_CURSOR_DISK_BYTES, 'VDB_CURSOR_DISK_BYTES'),
  });
  return {
    resultSpool: {
      memoryBytes: 8 * 1024 * 1024,
      diskBytes: 2 * 1024 * 1024 * 1024,
      ...fromFile.resultSpool,
      ...defined({
        memoryBytes: int(env.VDB_RESULT_SPOOL_MEMORY_BYTES, 'VDB_RESULT_SPOOL_MEMORY_BYTES'),
        diskBytes: int(env.VDB_RESULT_SPOOL_DISK_BYTES, 'VDB_RESULT_SPOOL_DISK_BYTES'),
      }),
      ...defined(overrides.resultSpool ?? {}),
    },
    pagination: {
      defaultLimit: 1000,
      maxLimit: 100_000,
      cursorIdleMs: 10 * 60_000,
      maxCursors: 1000,
      maxCursorsPerUser: 100,
      maxBytesPerUser: null,
      memoryBytes: 256 * 1024 * 1024,
      diskBytes: 10 * 1024 * 1024 * 1024,
      ...fromFile.pagination,
      ...pagingEnv,
      ...defined(overrides.pagination ?? {}),
    },
    cursors: {
      redisUrl: null,
      keyPrefix: 'vdb:',
      maxBytes: 1024 * 1024 * 1024,
      cacheBytes: 64 * 1024 * 1024,
      ...fromFile.cursors,
      ...defined({ redisUrl: env.VDB_REDIS_URL, keyPrefix: env.VDB_REDIS_KEY_PREFIX }),
      ...defined(overrides.cursors ?? {}),
    },
  };
}

/** The sections about sources and statements (dependent joins, throttle, query log, statement limits, catalog). */
function limitSections(
  env: NodeJS.ProcessEnv,
  fromFile: ConfigOverrides,
  overrides: ConfigOverrides,
): Pick<Config, 'dependentJoin' | 'throttle' | 'queryLog' | 'statements' | 'catalog'> {
  return {
    dependentJoin: {
      maxKeys: 100_000,
      batchSize: 100_000,
      maxShippedRows: 100_000,
      lookupArrays: true,
      keyLookups: true,
      ...fromFile.dependentJoin,
      ...defined({
        maxKeys: int(env.VDB_DEPENDENT_JOIN_MAX_KEYS, 'VDB_DEPENDENT_JOIN_MAX_KEYS'),
        batchSize: int(env.VDB_DEPENDENT_JOIN_BATCH_SIZE, 'VDB_DEPENDENT_JOIN_BATCH_SIZE'),
        maxShippedRows: int(env.VDB_DEPENDENT_JOIN_MAX_SHIPPED_ROWS, 'VDB_DEPENDENT_JOIN_MAX_SHIPPED_ROWS'),
        lookupArrays: bool(env.VDB_DEPENDENT_JOIN_LOOKUP_ARRAYS),
        keyLookups: bool(env.VDB_DEPENDENT_JOIN_KEY_LOOKUPS),
      }),
      ...defined(overrides.dependentJoin ?? {}),
    },
    throttle: {
      maxFailures: 10,
      windowMs: 60_000,
      lockMs: 60_000,
      ...fromFile.throttle,
      ...defined({
        maxFailures: int(env.VDB_THROTTLE_MAX_FAILURES, 'VDB_THROTTLE_MAX_FAILURES'),
        windowMs: int(env.VDB_THROTTLE_WINDOW_MS, 'VDB_THROTTLE_WINDOW_MS'),
        lockMs: int(env.VDB_THROTTLE_LOCK_MS, 'VDB_THROTTLE_LOCK_MS'),
      }),
      ...defined(overrides.throttle ?? {}),
    },
    queryLog: {
      maxEntries: 1000,
      maxAgeMs: 24 * 3600_000,
      ...fromFile.queryLog,
      ...defined({
        maxEntries: int(env.VDB_QUERY_LOG_MAX_ENTRIES, 'VDB_QUERY_LOG_MAX_ENTRIES'),
        maxAgeMs: int(env.VDB_QUERY_LOG_MAX_AGE_MS, 'VDB_QUERY_LOG_MAX_AGE_MS'),
      }),
      ...defined(overrides.queryLog ?? {}),
    },

    statements: {
      ...DEFAULT_STATEMENT_SIZE,
      maxPerUser: 4,
      // A small multiple of the engine's threads (one per core): each statement waits on sources part of the time.
      maxRunning: Math.max(8, 4 * os.availableParallelism()),
      maxQueued: 256,
      maxQueueMs: 30_000,
      ...fromFile.statements,
      ...defined({
        maxBytes: int(env.VDB_STATEMENT_MAX_BYTES, 'VDB_STATEMENT_MAX_BYTES'),
        maxSyntaxNodes: int(env.VDB_STATEMENT_MAX_SYNTAX_NODES, 'VDB_STATEMENT_MAX_SYNTAX_NODES'),
        maxSelectListTerms: int(env.VDB_STATEMENT_MAX_SELECT_LIST_TERMS, 'VDB_STATEMENT_MAX_SELECT_LIST_TERMS'),
        maxPerUser: int(env.VDB_STATEMENTS_PER_USER, 'VDB_STATEMENTS_PER_USER'),
        maxRunning: int(env.VDB_STATEMENTS_RUNNING, 'VDB_STATEMENTS_RUNNING'),
        maxQueued: int(env.VDB_STATEMENTS_QUEUED, 'VDB_STATEMENTS_QUEUED'),
        maxQueueMs: int(env.VDB_STATEMENT_QUEUE_MS, 'VDB_STATEMENT_QUEUE_MS'),
      }),
      ...defined(overrides.statements ?? {}),
    },
    catalog: {
      url: null,
      schema: 'vdb',
      ...fromFile.catalog,
      ...defined({ url: env.VDB_CATALOG_URL || undefined, schema: env.VDB_CATALOG_SCHEMA || undefined }),
      ...defined(overrides.catalog ?? {}),
    },
  };
}
