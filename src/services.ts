/**
 * Start-up: builds every long-lived part of vdb from the configuration, in dependency order,
 * and tears them down again. The HTTP layer receives the finished `Services`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { sourceFromSpec } from './sources/source-spec.js';
import { SourceRegistry } from './sources/registry.js';
import { SYSTEM_ENGINE_SCHEMA } from './sources/definitions.js';
import { CopySchedule } from './operations/copy-schedule.js';
import { messageOf } from './errors.js';
import type { CatalogStore } from './catalog/store.js';
import type { QueryLogEntry } from './catalog/query-log.js';
import type { AuditEntry } from './catalog/audit-log.js';
import { openCatalog } from './catalog/open.js';
import { defaultFileRoot, parquetDir, resultSpoolDir, type Config } from './config.js';
import { ParquetFiles } from './results/parquet.js';
import { PoolGates } from './connectors/pool-gate.js';
import type { ConnectorContext } from './connectors/factory.js';
import { Spools } from './results/spool.js';
import { DuckRuntime, sqlLiteral } from './runtime/duckdb.js';
import { Engine } from './engine/engine.js';
import { initParser } from './engine/front/parse.js';
import { QueryLog } from './catalog/query-log.js';
import { CURSOR_SCHEMA, type CursorStore } from './results/cursors.js';
import { RedisCursorStore } from './results/redis-cursors.js';
import { Lifecycle } from './operations/lifecycle.js';
import { Metrics } from './operations/metrics.js';
import { lockDataDir } from './operations/data-dir-lock.js';
import { openSecret, sealSecret } from './security/secret-box.js';
import { withEnvKey } from './catalog/server-secrets.js';
import { rotateExposedSecrets } from './security/rotation.js';
import { ApiKeyService } from './security/api-keys.js';
import { AuditLog } from './catalog/audit-log.js';
import { InviteService } from './security/invites.js';
import type { SignInThrottle } from './security/throttle.js';
import { createSharedStores } from './operations/shared-stores.js';
import { freeBytes } from './operations/data-dir.js';
import { Admission, type StatementGate } from './security/statement-limits.js';
import { deriveSigningKey } from './security/tokens.js';
import { UserService } from './security/users.js';

export interface Services {
  config: Config;
  version: string;
  store: CatalogStore;
  runtime: DuckRuntime;
  registry: SourceRegistry;
  engine: Engine;
  cursors: CursorStore;
  queryLog: QueryLog;
  auditLog: AuditLog;
  /** Prometheus metrics (GET /metrics). */
  metrics: Metrics;
  /** Results read ahead of slow clients, so that their sources' connections go back (resultSpool). */
  spools: Spools;
  /** Parquet files of results, made in the data directory's tmp/parquet (results/parquet.ts). */
  parquet: ParquetFiles;
  /** Stopping or not, and the statements in flight (graceful shutdown). */
  lifecycle: Lifecycle;
  throttle: SignInThrottle;
  /** Running statements per user, for the roles' maxConcurrentStatements. */
  statements: StatementGate;
  /** The instance's places for running statements (statements.maxRunning, maxQueued, maxQueueMs). */
  admission: Admission;
  apiKeys: ApiKeyService;
  invites: InviteService;
  users: UserService;
  /** Set on the first start when the admin password was generated: print it once. */
  generatedAdminPassword: string | null;
  close(): Promise<void>;
}

/** The project folder: the nearest folder above this module with a package.json (src/ or dist/src/). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

const ROOT = projectRoot();

export function appVersion(): string {
  const file = path.join(ROOT, 'package.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version : '0.0.0';
}

/** The demo data shipped in the repository (demo/). */
export const DEMO_DIR = path.join(ROOT, 'demo');

export async function createServices(config: Config, log: Logger): Promise<Services> {
  // The data directory holds secrets and cached results: only its owner may read it.
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // One server per data directory (its catalog, spill and cursor files are this process's).
  const unlock = lockDataDir(config.dataDir);
  try {
    return await buildServices(config, log, unlock);
  } catch (err) {
    unlock();
    throw err;
  }
}

async function buildServices(config: Config, log: Logger, unlock: () => void): Promise<Services> {
  // The default file root holds the demo data; the engine may read it, never the data directory itself.
  fs.mkdirSync(defaultFileRoot(config.dataDir), { recursive: true, mode: 0o700 });
  // The catalog and the server secrets: in the data directory, or in the catalog database (catalog.url).
  const catalog = await openCatalog(config, log);
  const { store } = catalog;
  const loadedSecrets = withEnvKey(await catalog.secrets.loadOrCreate());
  // Once per data directory: replaces the secrets that versions before 0.2.0 exposed.
  const secrets = await rotateExposedSecrets(catalog.secrets, loadedSecrets, store, log);
  await moveDemoIntoFileRoot(config, store, log);
  await initParser();
  const runtime = await DuckRuntime.create({
    schemas: [SYSTEM_ENGINE_SCHEMA, CURSOR_SCHEMA],
    spillDir: path.join(config.dataDir, 'spill'),
    memoryLimit: config.engineMemoryLimit,
    spillLimit: config.engineSpillLimit,
    valueLimit: config.valueLimit,
  });
  const auditLog = new AuditLog(config.queryLog.maxEntries, Date.now, (entry) => catalog.logs?.audit(entry));
  // Counted as they are recorded; the cursors' gauges are read when scraped.
  let cursorStats = () => ({ count: 0, rows: 0, bytes: 0 });
  let cacheHits = (): Record<string, number> => ({});
  // The networked sources' pools, and the results read ahead of slow clients.
  const pools = new PoolGates();
  const spools = new Spools({ ...config.resultSpool, dir: resultSpoolDir(config.dataDir) });
  const parquet = new ParquetFiles(parquetDir(config.dataDir));
  const metrics = new Metrics({
    cursors: () => cursorStats(),
    cacheHits: () => cacheHits(),
    pools: () => pools.stats(),
    spools: () => spools.stats(),
    dataDirFreeBytes: () => freeBytes(config.dataDir),
    copies: () => store.current.copies ?? [],
    // The registry is made below; scrapes come later.
    sourcesAvailable: () => registry.sources.map((s) => ({ source: s.name, available: registry.statusOf(s.name).available })),
  });
  const queryLog = new QueryLog({
    maxEntries: config.queryLog.maxEntries,
    maxAgeMs: config.queryLog.maxAgeMs,
    onRecord: (entry) => {
      metrics.observeStatement(entry, entry.sources ?? []);
      catalog.logs?.query(entry);
      // A source that answered is checked at once if it was unavailable (not left for its timer).
      if (entry.status === 'ok') for (const source of entry.sources ?? []) registry.sourceAnswered(source);
    },
  });
  const registry = createRegistry(config, store, runtime, connectorContext(config, runtime, secrets.encryptionKey, pools), log, {
    queries: () => queryLog.list(),
    audits: () => auditLog.list(),
  });
  const sharedLogs = catalog.logs;
  if (sharedLogs) registry.useSharedLogs(() => sharedLogs.recent(config.queryLog.maxEntries));
  await registry.start();
  const users = new UserService(store, deriveSigningKey(secrets.serverSecret, appVersion()));
  const generatedAdminPassword = await users.ensureAdmin(config.adminPassword);
  const invites = new InviteService(store, users);
  await attachDemoOnce(config, store, registry, log);
  await createConfiguredSources(config, registry, log);
  // Cursors, sign-in failures and running statements: in Redis when configured, else here.
  const shared = await createSharedStores(config, (owner) => {
    const roles = [...(store.current.users.find((u) => u.name === owner)?.roles ?? [])].sort();
    const grants = (store.current.permissions ?? []).filter((p) => roles.includes(p.role));
    return JSON.stringify([roles, grants]);
  });
  const { cursors } = shared;
  cursorStats = () => cursors.stats();
  const engine = createEngine(config, registry, runtime, { users, invites, auditLog, cursors }, log);
  engine.copies.onRefresh((copy, r) => metrics.observeCopyRefresh(copy, r.kind, r.status, r.durationMs / 1000));
  const copySchedule = new CopySchedule(engine.copies, log);
  copySchedule.start();

  cacheHits = () => ({
    ...engine.cacheHits(),
    'login-tokens': users.tokenCacheHits,
    ...(cursors instanceof RedisCursorStore ? { 'cursor-chunks': cursors.chunks.hits } : {}),
  });
  return {
    config,
    version: appVersion(),
    store,
    runtime,
    registry,
    engine,
    cursors,
    queryLog,
    auditLog,
    metrics,
    spools,
    parquet,
    lifecycle: new Lifecycle(),
    throttle: shared.throttle,
    statements: shared.statements,
    admission: new Admission(config.statements),
    apiKeys: new ApiKeyService(store),
    invites,
    users,
    generatedAdminPassword,
    async close() {
      await copySchedule.stop();
      await shared.close();
      await registry.close();
      runtime.close();
      await catalog.logs?.close();
      await store.close();
      unlock();
    },
  };
}

/** The sources' registry, with the lifecycle settings and the folder of the local copies. */
function createRegistry(
  config: Config,
  store: CatalogStore,
  runtime: DuckRuntime,
  context: ConnectorContext,
  log: Logger,
  logs: { queries: () => readonly QueryLogEntry[]; audits: () => readonly AuditEntry[] },
): SourceRegistry {
  return new SourceRegistry(store, runtime, context, config.vdbName, log, logs.queries, logs.audits, {
    retryMs: config.sourceRetryMs,
    retryMaxMs: config.sourceRetryMaxMs,
    metadataTimeoutMs: config.metadataTimeoutMs,
    copiesFolder: config.copiesFolder,
  });
}

/** The engine of statements, with the settings of pushdown and statement sizes and what its procedures change. */
function createEngine(
  config: Config,
  registry: SourceRegistry,
  runtime: DuckRuntime,
  { users, invites, auditLog, cursors }: { users: UserService; invites: InviteService; auditLog: AuditLog; cursors: CursorStore },
  log: Logger,
): Engine {
  return new Engine(
    registry,
    runtime,
    config.vdbName,
    {
      pushdown: config.pushdown,
      directRows: config.directRows,
      dependentJoin: config.dependentJoin,
      statementSize: {
        maxBytes: config.statements.maxBytes,
        maxSyntaxNodes: config.statements.maxSyntaxNodes,
        maxSelectListTerms: config.statements.maxSelectListTerms,
      },
    },
    {
      users,
      invites,
      auditLog,
      // The user is gone already; cursors Redis cannot drop now expire on their own.
      dropCursors: (owner) =>
        cursors.dropOwner(owner).catch((err: unknown) => log.warn({ owner, err: messageOf(err) }, 'cursors of a removed user not dropped')),
    },
  );
}

/** What connectors are given: the file roots, secrets sealed with the encryption key, timeouts, the pools, the engine's readers of files. */
function connectorContext(config: Config, runtime: DuckRuntime, encryptionKey: Buffer, pools: PoolGates): ConnectorContext {
  return {
    roots: config.fileRoots,
    stateDir: config.dataDir,
    openSecret: (sealed) => openSecret(sealed, encryptionKey),
    sealSecret: (plain) => sealSecret(plain, encryptionKey),
    connectTimeoutMs: config.connectTimeoutMs,
    valueLimit: config.valueLimit,
    pooling: { waitMs: config.poolWaitMs, gates: pools },
    describe: async (relation) =>
      runtime.withConnection(async (connection) => {
        const reader = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${relation}`);
        return reader.getRowObjectsJS().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
      }),
    engineQuery: async (sql) =>
      runtime.withConnection(
        async (connection) => (await connection.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>,
      ),
    parquetRowCount: async (file) =>
      runtime.withConnection(async (connection) => {
        const reader = await connection.runAndReadAll(`SELECT sum(num_rows) FROM parquet_file_metadata(${sqlLiteral(file)})`);
        const value = reader.getRows()[0]?.[0];
        return value === null || value === undefined ? null : Number(value);
      }),
  };
}

/**
 * The demo is attached once, on the first start that attaches it; a failed attempt is retried at
 * the next start, and does not stop this one (e.g. fileRoots without the default file root).
 */
async function attachDemoOnce(config: Config, store: CatalogStore, registry: SourceRegistry, log: Logger): Promise<void> {
  if (store.current.initialized) return;
  // Not with a shared catalog: the demo's files would be in this instance's data directory only.
  let attached = true;
  if (config.demo && config.catalog.url === null)
    await installDemo(config, registry, log).catch((err: unknown) => {
      attached = false;
      log.warn({ err: messageOf(err) }, 'demo sources not attached (tried again at the next start)');
    });
  if (attached)
    await store.update((catalog) => {
      catalog.initialized = true;
    });
}

/** Sources of the config file that the catalog does not have yet are created now. */
async function createConfiguredSources(config: Config, registry: SourceRegistry, log: Logger): Promise<void> {
  for (const spec of config.sources) {
    const source = sourceFromSpec(spec);
    if (registry.findSource(source.name)) continue;
    try {
      await registry.addSource(source);
      log.info({ source: source.name }, 'data source from the config file created');
    } catch (err) {
      log.error({ source: source.name, err: messageOf(err) }, 'data source from the config file could not be created');
    }
  }
}

/**
 * First start only: copies the demo data into the default file root (so the repository's copy
 * is never written) and attaches it as two sources, `shop` (SQLite) and `files` (CSV/Parquet/JSON).
 */
async function installDemo(config: Config, registry: SourceRegistry, log: Logger): Promise<void> {
  if (!fs.existsSync(DEMO_DIR)) return;
  const target = path.join(defaultFileRoot(config.dataDir), 'demo');
  if (registry.findSource('shop') && registry.findSource('files')) return;
  fs.cpSync(DEMO_DIR, target, { recursive: true, dereference: true, filter: (src) => !src.endsWith('README.md') });
  if (!registry.findSource('shop'))
    await registry.addSource({
      name: 'shop',
      kind: 'sqlite',
      connection: { path: path.join(target, 'shop.sqlite') },
      description: 'Demo: a small shop (customers, products, orders) in SQLite',
    });
  if (!registry.findSource('files'))
    await registry.addSource({
      name: 'files',
      kind: 'file',
      connection: { ParentDirectory: path.join(target, 'files') },
      description: 'Demo: CSV, Parquet and JSON files',
    });
  log.info('demo sources "shop" and "files" attached');
}

/**
 * Versions before 0.2.0 kept the demo data in <data dir>/demo and let the engine read the whole
 * data directory. Now the engine reads only file roots, and the demo lives in the default one:
 * the folder is moved and the sources that point into it follow. Done in this order (folder,
 * then catalog), a start interrupted between the two completes it the next time.
 */
async function moveDemoIntoFileRoot(config: Config, store: CatalogStore, log: Logger): Promise<void> {
  const before = path.join(config.dataDir, 'demo');
  const after = path.join(defaultFileRoot(config.dataDir), 'demo');
  const inside = (value: string) => value === before || value.startsWith(before + path.sep);
  const holders = (catalog: {
    sources: Array<{ connection: Record<string, string> }>;
    connections?: Array<{ connection: Record<string, string> }>;
  }) => [...catalog.sources, ...(catalog.connections ?? [])];
  const pointing = holders(store.current).some((s) => Object.values(s.connection).some(inside));
  if (!fs.existsSync(before) && !pointing) return;
  if (fs.existsSync(before) && !fs.existsSync(after)) fs.renameSync(before, after);
  if (pointing) {
    await store.update((catalog) => {
      for (const holder of holders(catalog)) {
        for (const [key, value] of Object.entries(holder.connection))
          if (inside(value)) holder.connection[key] = after + value.slice(before.length);
      }
    });
  }
  log.info({ from: before, to: after }, 'demo data moved into the default file root');
}
