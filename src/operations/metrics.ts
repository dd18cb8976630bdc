/**
 * Prometheus metrics of one vdb process (GET /metrics, prom-client): HTTP requests by route
 * pattern and status with their latency, statements by outcome and route with their duration,
 * rows and result bytes, source queries and failures by source, open cursors, cache hits, and
 * Node's own process metrics. Route patterns, never raw
 * paths: a hosted link token is a credential and must not become a label.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueryLogEntry } from '../catalog/query-log.js';
import type { PoolStats } from '../connectors/pool-gate.js';
import type { CopyDef } from '../catalog/types.js';

/** Seconds: from a point lookup (a few ms) to a long federated statement. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface MetricsSources {
  /** Open cursors (paginated results), the rows and bytes they hold. */
  cursors: () => { count: number; rows: number; bytes: number };
  /** Hits of each cache since the start, by cache name. */
  cacheHits: () => Record<string, number>;
  /** The connection pools of the PostgreSQL and MySQL/MariaDB sources. */
  pools?: () => PoolStats[];
  /** Results read ahead of slow clients (results/spool.ts). */
  spools?: () => { open: number; memoryBytes: number; diskBytes: number; spilled: number };
  /** Each source and whether it is available (sources/source-health.ts). */
  sourcesAvailable?: () => Array<{ source: string; available: boolean }>;
  /** Bytes the data directory's disk has free (rejects when it cannot be read). */
  dataDirFreeBytes: () => Promise<number>;
  /** The local copies as the catalog holds them (docs/copies.md). */
  copies?: () => readonly CopyDef[];
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly statements: Counter<'status' | 'route'>;
  private readonly resultBytes: Counter;
  private readonly sourceErrors: Counter<'source'>;
  private readonly statementSeconds: Histogram<'status'>;
  private readonly rows: Counter;
  private readonly sourceQueries: Counter<'source'>;
  private readonly copyRefreshes: Counter<'copy' | 'kind' | 'status'>;
  private readonly copyRefreshSeconds: Histogram<'copy'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'vdb_' });
    this.copyRefreshes = new Counter({
      name: 'vdb_copy_refreshes_total',
      help: 'Refreshes of local copies run by this instance, by copy, kind (full, incremental, compaction) and status (ok, failed)',
      labelNames: ['copy', 'kind', 'status'],
      registers,
    });
    this.copyRefreshSeconds = new Histogram({
      name: 'vdb_copy_refresh_duration_seconds',
      help: 'How long refreshes of local copies took on this instance, by copy',
      labelNames: ['copy'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    copyGauges(sources, registers);
    this.requests = new Counter({
      name: 'vdb_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'vdb_http_request_duration_seconds',
      help: 'Time from request to the end of the response, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.statements = new Counter({
      name: 'vdb_statements_total',
      help: 'SQL statements run, by outcome (ok, error, cancelled) and how a SELECT was answered (constant, whole, source-select, shipped, federated; other for the rest)',
      labelNames: ['status', 'route'],
      registers,
    });
    this.resultBytes = new Counter({ name: 'vdb_result_bytes_total', help: 'Bytes of JSON results sent (rows and pages)', registers });
    this.sourceErrors = new Counter({
      name: 'vdb_source_errors_total',
      help: 'Statements ended by a data source that failed or could not be reached, by source',
      labelNames: ['source'],
      registers,
    });
    this.statementSeconds = new Histogram({
      name: 'vdb_statement_duration_seconds',
      help: 'Time a statement ran, by outcome',
      labelNames: ['status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rows = new Counter({ name: 'vdb_statement_rows_total', help: 'Rows returned by statements', registers });
    this.sourceQueries = new Counter({
      name: 'vdb_source_queries_total',
      help: 'Queries sent to data sources, by source',
      labelNames: ['source'],
      registers,
    });
    scrapedMetrics(sources, registers);
  }

  /** One answered HTTP request; `route` is the pattern (/rest/api/source/:name), or 'unmatched'. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.latency.observe({ method, route }, seconds);
  }

  /** One statement as the query log records it. */
  /** A refresh of a local copy finished (statements/copies.ts). */
  observeCopyRefresh(copy: string, kind: string, status: 'ok' | 'failed', seconds: number): void {
    this.copyRefreshes.inc({ copy, kind, status });
    this.copyRefreshSeconds.observe({ copy }, seconds);
  }

  observeStatement(entry: QueryLogEntry, sources: readonly string[]): void {
    this.statements.inc({ status: entry.status, route: entry.route ?? 'other' });
    if (entry.failedSource) this.sourceErrors.inc({ source: entry.failedSource });
    this.statementSeconds.observe({ status: entry.status }, entry.durationMs / 1000);
    if (entry.rows !== null) this.rows.inc(entry.rows);
    for (const source of sources) this.sourceQueries.inc({ source });
  }

  /** Bytes of a result sent to a client. */
  countResultBytes(bytes: number): void {
    this.resultBytes.inc(bytes);
  }

  /** The text exposition format that Prometheus scrapes. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The metrics read when scraped, so they are never stale: caches, cursors and the data directory's disk, then the sources'. */
function scrapedMetrics(sources: MetricsSources, registers: Registry[]): void {
  // Read when scraped: each cache counts its own hits.
  new Counter({
    name: 'vdb_cache_hits_total',
    help: 'Lookups answered from a cache, by cache (statement templates, result columns, login tokens, cursor chunks)',
    labelNames: ['cache'],
    registers,
    collect() {
      this.reset();
      for (const [cache, hits] of Object.entries(sources.cacheHits())) this.inc({ cache }, hits);
    },
  });
  new Gauge({
    name: 'vdb_cursors_open',
    help: 'Paginated results kept for requestId',
    registers,
    collect() {
      this.set(sources.cursors().count);
    },
  });
  new Gauge({
    name: 'vdb_cursor_rows',
    help: 'Rows held by the open paginated results',
    registers,
    collect() {
      this.set(sources.cursors().rows);
    },
  });
  new Gauge({
    name: 'vdb_data_dir_free_bytes',
    help: "Bytes free on the disk of vdb's data directory (catalog, spill files, cursors); /readyz fails below dataDirMinFreeBytes",
    registers,
    async collect() {
      try {
        this.set(await sources.dataDirFreeBytes());
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'vdb_cursor_bytes',
    help: 'Bytes held by the open paginated results (memory, spill folder or Redis)',
    registers,
    collect() {
      this.set(sources.cursors().bytes);
    },
  });
  sourceMetrics(sources, registers);
}

/** The sources' metrics read when scraped: their pools, the results read ahead of clients, whether each is available. */
function sourceMetrics(sources: MetricsSources, registers: Registry[]): void {
  const pools = sources.pools ?? (() => []);
  const poolGauge = (name: string, help: string, value: (pool: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['source'],
      registers,
      collect() {
        // Sources come and go: only the pools open now are shown.
        this.reset();
        for (const pool of pools()) this.set({ source: pool.source }, value(pool));
      },
    });
  poolGauge('vdb_source_pool_size', 'Most connections of a source (its maxConnections), by source', (p) => p.size);
  poolGauge('vdb_source_pool_in_use', 'Connections of a source held by statements now, by source', (p) => p.inUse);
  poolGauge('vdb_source_pool_idle', 'Open connections of a source waiting in its pool, by source', (p) => p.idle);
  poolGauge('vdb_source_pool_waiting', 'Statements waiting for a connection of a source, by source', (p) => p.waiting);
  new Counter({
    name: 'vdb_source_pool_busy_total',
    help: 'Statements refused with 503 Data source busy (no connection of the source freed within poolWaitMs), by source',
    labelNames: ['source'],
    registers,
    collect() {
      this.reset();
      for (const pool of pools()) this.inc({ source: pool.source }, pool.refusals);
    },
  });
  const spools = sources.spools ?? (() => ({ open: 0, memoryBytes: 0, diskBytes: 0, spilled: 0 }));
  new Gauge({
    name: 'vdb_result_spool_bytes',
    help: 'Bytes of streamed results read ahead of their clients, in memory and on disk (resultSpool)',
    labelNames: ['where'],
    registers,
    collect() {
      const now = spools();
      this.set({ where: 'memory' }, now.memoryBytes);
      this.set({ where: 'disk' }, now.diskBytes);
    },
  });
  new Counter({
    name: 'vdb_result_spool_spilled_total',
    help: 'Streamed results whose client read so slowly that part of them waited on disk',
    registers,
    collect() {
      this.reset();
      this.inc(spools().spilled);
    },
  });
  new Gauge({
    name: 'vdb_source_available',
    help: 'Whether each data source is available (1) or marked unavailable and checked again in the background (0), by source',
    labelNames: ['source'],
    registers,
    collect() {
      this.reset();
      for (const { source, available } of sources.sourcesAvailable?.() ?? []) this.set({ source }, available ? 1 : 0);
    },
  });
}

/** The local copies' state, read from the catalog when scraped: every instance shows every copy. */
function copyGauges(sources: MetricsSources, registers: Registry[]): void {
  const gauge = (name: string, help: string, value: (copy: CopyDef, now: number) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['copy'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        for (const copy of sources.copies?.() ?? []) {
          const v = value(copy, now);
          if (v !== null) this.set({ copy: copy.name }, v);
        }
      },
    });
  gauge('vdb_copy_staleness_seconds', 'Seconds since the current version of each local copy was read from its source', (c, now) =>
    c.current ? (now - Date.parse(c.current.readAt)) / 1000 : null,
  );
  gauge('vdb_copy_rows', 'Rows of the current version of each local copy', (c) => c.current?.rows ?? null);
  gauge('vdb_copy_bytes', 'Bytes of the files of the current version of each local copy', (c) => c.current?.bytes ?? null);
  gauge('vdb_copy_failures', 'Refreshes of each local copy failed in a row (0 after a good one)', (c) => c.failures);
}
