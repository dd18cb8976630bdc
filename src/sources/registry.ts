/**
 * The virtual database's sources through their lifecycle: started, added, refreshed, altered,
 * removed, and brought in line with a catalog other instances share. It composes their live
 * connectors (live-connectors.ts), their health (source-health.ts) and their tables published to
 * the engine (publishing.ts); names resolve in definitions.ts. Adding a source imports its
 * metadata first and persists only when everything succeeded.
 */
import type { Logger } from 'pino';
import type { ConnectorContext } from '../connectors/factory.js';
import type { Connector, ImportedProcedure, ImportedTable } from '../connectors/types.js';
import { SourceUnreachableError } from '../connectors/types.js';
import { ApiError, badRequest, messageOf, notFound, sourceFailed } from '../errors.js';
import { SourceHealth, type SourceStatus } from './source-health.js';
import { SystemTableCopies } from './system-copies.js';
import type { DuckRuntime } from '../runtime/duckdb.js';
import type { QueryLogEntry } from '../catalog/query-log.js';
import type { AuditEntry } from '../catalog/audit-log.js';
import { parseResource } from '../security/permissions.js';
import type { CatalogStore } from '../catalog/store.js';
import { same, SourceDefinitions } from './definitions.js';
import { LiveConnectors } from './live-connectors.js';
import { SourcePublishing } from './publishing.js';
import { LocalCopies, type CopyReading, type CopyUse } from './copies.js';
import os from 'node:os';
import path from 'node:path';
import { QUERYABLE_SYSTEM_SCHEMAS } from './catalog-relations.js';
import { formatProps, type SystemValue } from './system-tables.js';
import type { PermissionDef, ProcedureDef, SourceDef, SourceKind, TableDef, UserDef, ViewDef } from '../catalog/types.js';

export interface ConnectionChange {
  connection?: Record<string, string>;
  /** Secret settings in plain text (sealed before they are stored); each replaces the stored one of its name, others stay. */
  secrets?: Record<string, string>;
}

/** How vdb follows its sources' availability (configuration sourceRetryMs, sourceRetryMaxMs, metadataTimeoutMs). */
export interface SourceLifecycleOptions {
  /** Where local copies are kept (docs/copies.md); default `copies` in the data directory. */
  copiesFolder?: string;
  retryMs: number;
  retryMaxMs: number;
  /** Longest a source's metadata import may take (adding, altering, refreshing a source). */
  metadataTimeoutMs: number;
}

const DEFAULT_LIFECYCLE: SourceLifecycleOptions = { retryMs: 5000, retryMaxMs: 60_000, metadataTimeoutMs: 60_000 };

export interface NewSource {
  name: string;
  kind: SourceKind;
  connection: Record<string, string>;
  /** Secret settings in plain text; sealed before they are stored. */
  secrets?: Record<string, string>;
  model?: Record<string, string>;
  translator?: Record<string, string>;
  description?: string | null;
  readOnly?: boolean;
}

const NAME_RULE = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export class SourceRegistry extends SourceDefinitions {
  /** Each source's connector, built from its definition. */
  private readonly live: LiveConnectors;
  /** Engine-read sources' tables as the engine reads them, and the folders it may read. */
  private readonly publishing: SourcePublishing;
  /** The system tables as the engine reads them. */
  private readonly systemCopies: SystemTableCopies;
  /** Local copies of tables and materialized views, as the engine reads them. */
  readonly copies: LocalCopies;

  /** SYSLOG.QueryLog and SYSLOG.AuditLog read from `read` (every instance's entries) instead of this process's logs. */
  useSharedLogs(read: () => Promise<{ queries: readonly QueryLogEntry[]; audits: readonly AuditEntry[] }>): void {
    this.systemCopies.useSharedLogs(read);
  }

  /** Brings the current engine's copies of the (non-volatile) system tables up to date with the catalog. */
  ensureSystemTables(): Promise<void> {
    return this.systemCopies.ensureCurrent();
  }

  /** The rows of a volatile system table (the logs) as `viewer` may see them. */
  volatileRows(table: TableDef, viewer: UserDef): Promise<SystemValue[][]> {
    return this.systemCopies.volatileRows(table, viewer);
  }

  /** Sources this instance is adding, removing or refreshing: following other instances leaves them alone. */
  private readonly changing = new Set<string>();
  private following: Promise<void> = Promise.resolve();
  /** Which sources are available; unavailable ones are checked again in the background. */
  readonly health: SourceHealth;
  private readonly lifecycle: SourceLifecycleOptions;

  constructor(
    store: CatalogStore,
    runtime: DuckRuntime,
    private readonly context: ConnectorContext,
    private readonly vdbName: string,
    private readonly log: Logger,
    private readonly queryLog: () => readonly QueryLogEntry[] = () => [],
    private readonly auditLog: () => readonly AuditEntry[] = () => [],
    lifecycle: Partial<SourceLifecycleOptions> = {},
  ) {
    super(store);
    this.lifecycle = { ...DEFAULT_LIFECYCLE, ...lifecycle };
    this.health = new SourceHealth((name) => this.checkSource(name), this.lifecycle, log);
    this.systemCopies = new SystemTableCopies(store, runtime, this.health, vdbName, queryLog, auditLog);
    this.live = new LiveConnectors(
      context,
      (name) => this.findSource(name),
      // Built on demand: an engine-read source is published when a statement first reads it.
      (source, connector) => {
        if (connector.delivery === 'engine') this.publishing.markUnpublished(source.name);
      },
    );
    this.copies = new LocalCopies(store, runtime, this.lifecycle.copiesFolder ?? path.join(context.stateDir ?? os.tmpdir(), 'copies'));
    this.publishing = new SourcePublishing(runtime, store, this.live, this.health, this.systemCopies, this.copies);
  }

  /**
   * The lock of copy `oid`'s refresh across instances sharing the catalog (null: another holds
   * it); a catalog of this instance's own needs none beyond the refresher's own order.
   */
  async lockCopy(oid: number): Promise<(() => Promise<void>) | null> {
    if (!this.store.tryLock) return async () => undefined;
    return this.store.tryLock(`copy:${oid}`);
  }

  /** The copy a statement reading `schema.table` with `reading` reads instead of the source, if any (the binder asks). */
  copyFor(schema: string, table: TableDef, reading: CopyReading): CopyUse | null {
    return this.copies.choose(schema, table, reading);
  }

  /**
   * Brings every persisted source up, in an engine allowed to read their folders. A source that
   * fails (unreachable, outside the file roots, its file or folder missing) keeps its schema and
   * is marked unavailable: statements on it get a 503, and it is checked again in the background.
   * Networked sources are checked in the background: the start never waits for them.
   */
  async start(): Promise<void> {
    const rowSources: string[] = [];
    for (const source of this.store.current.sources) {
      try {
        const connector = this.live.build(source);
        if (connector.delivery === 'rows') rowSources.push(source.name);
      } catch (err) {
        this.health.markUnavailable(source.name, messageOf(err));
      }
    }
    await this.publishing.publishAll();
    for (const name of rowSources) void this.health.checkNow(name);
    // A shared catalog changed by another instance: its sources come and go here too.
    this.store.onChange((change) => {
      if (change.remote) this.followCatalog();
    });
  }

  /** Brings connectors and published tables in line with the catalog after another instance changed it. */
  followCatalog(): Promise<void> {
    this.following = this.following
      .then(() => this.follow())
      .catch((err: unknown) => this.log.error({ err: messageOf(err) }, 'sources not brought in line with the shared catalog'));
    return this.following;
  }

  private async follow(): Promise<void> {
    // Copies another instance refreshed, added or dropped: read here at once.
    await this.copies.sync();
    const current = new Map(this.store.current.sources.map((s) => [s.name, s]));
    const fresh: SourceDef[] = [];
    let engineSources = false;
    for (const [name, connector] of this.live.entries()) {
      if (this.changing.has(name) || this.live.builtFromSame(name, current.get(name))) continue;
      this.publishing.markPublished(name);
      this.health.forget(name);
      const was = await this.live.retire(name);
      if (was) await this.publishing.unpublish(was);
      engineSources ||= connector.delivery === 'engine';
    }
    for (const source of current.values()) {
      if (this.live.has(source.name) || this.changing.has(source.name)) continue;
      const connector = this.live.build(source);
      engineSources ||= connector.delivery === 'engine';
      if (connector.delivery === 'rows') void this.health.checkNow(source.name);
      fresh.push(source);
    }
    if (!engineSources) return;
    // A new engine generation when the readable folders changed (publishing everything), else the new ones here.
    if (await this.publishing.confine()) return;
    for (const source of fresh) {
      const connector = this.live.get(source.name);
      if (connector?.delivery !== 'engine') continue;
      await this.publishing.tryPublish(source, connector);
    }
  }

  /**
   * The schema a view or materialized view may be created in, spelled as it is already (a
   * schema's name keeps the spelling of its first view): 400 for an invalid name, 409 for a
   * source's or the system's schema.
   */
  viewSchema(schema: string): string {
    if (!NAME_RULE.test(schema))
      throw badRequest(
        `"${schema}" is not a valid schema name.`,
        'Use letters, digits and underscores, starting with a letter or underscore.',
      );
    if (QUERYABLE_SYSTEM_SCHEMAS.some((s) => same(s, schema)) || this.findSource(schema)) {
      throw new ApiError(
        409,
        'Conflict',
        `Schema "${schema}" belongs to ${this.findSource(schema) ? 'a data source' : 'the system'}; views live in virtual schemas.`,
        'Create the view in a schema of its own, e.g. views.name.',
      );
    }
    return this.virtualSchemas().find((v) => same(v, schema)) ?? schema;
  }

  /** Stores a new view (or replaces one, keeping its identity). 409 when the name is taken otherwise. */
  async saveView(view: Omit<ViewDef, 'uid' | 'oid'>, replace: boolean): Promise<ViewDef> {
    this.viewSchema(view.schema);
    return this.store.update((catalog) => {
      const views = catalog.views ?? [];
      const existing = views.find((v) => same(v.schema, view.schema) && same(v.name, view.name));
      if ((catalog.copies ?? []).some((c) => c.kind === 'view' && same(c.schema, view.schema) && same(c.table, view.name))) {
        throw new ApiError(
          409,
          'Conflict',
          `${view.schema}.${view.name} is a materialized view.`,
          'Choose another name, or DROP MATERIALIZED VIEW first.',
        );
      }
      if (existing && !replace) {
        throw new ApiError(
          409,
          'Conflict',
          `View ${existing.schema}.${existing.name} already exists.`,
          'Use CREATE OR REPLACE VIEW, or DROP VIEW first.',
        );
      }
      // A schema's name keeps the spelling of its first view.
      const schema = views.find((v) => same(v.schema, view.schema))?.schema ?? view.schema;
      const saved: ViewDef = { ...view, schema, uid: existing?.uid ?? `${schema}.${view.name}`, oid: existing?.oid ?? catalog.nextOid++ };
      catalog.views = existing ? views.map((v) => (v === existing ? saved : v)) : [...views, saved];
      return saved;
    });
  }

  /** Removes views in one catalog change. */
  async removeViews(views: readonly ViewDef[]): Promise<void> {
    const gone = (v: ViewDef) => views.some((d) => same(d.schema, v.schema) && same(d.name, v.name));
    await this.store.update((catalog) => {
      catalog.views = (catalog.views ?? []).filter((v) => !gone(v));
      for (const view of views) catalog.permissions = withoutEntriesOn(catalog.permissions, [view.schema, view.name]);
    });
  }

  /** Removes the permission entries on `schema.name` and below (a materialized view dropped: a new one of its name starts without grants). */
  async removePermissionsOn(schema: string, name: string): Promise<void> {
    await this.store.update((catalog) => {
      catalog.permissions = withoutEntriesOn(catalog.permissions, [schema, name]);
    });
  }

  protected deliveryOf(source: SourceDef): 'engine' | 'rows' {
    return this.connectorOf(source).delivery;
  }

  connectorOf(source: SourceDef): Connector {
    return this.live.connectorOf(source);
  }

  /** Creates, checks and imports a new source, then persists it. Nothing is kept on failure. */
  async addSource(input: NewSource): Promise<SourceDef> {
    if (!NAME_RULE.test(input.name)) {
      throw badRequest(
        `"${input.name}" is not a valid source name.`,
        'Use letters, digits and underscores, starting with a letter or underscore (at most 63 characters).',
      );
    }
    if (
      QUERYABLE_SYSTEM_SCHEMAS.some((s) => same(s, input.name)) ||
      this.findSource(input.name) ||
      this.virtualSchemas().some((v) => same(v, input.name))
    ) {
      throw new ApiError(
        409,
        'Conflict',
        `A schema named "${input.name}" already exists.`,
        'Choose another name or remove the existing source first.',
      );
    }
    const draft: SourceDef = {
      name: input.name,
      kind: input.kind,
      connection: input.connection,
      secrets: Object.fromEntries(Object.entries(input.secrets ?? {}).map(([k, v]) => [k, this.context.sealSecret(v)])),
      model: input.model ?? {},
      translator: input.translator ?? {},
      description: input.description ?? null,
      readOnly: input.readOnly ?? false,
      createdAt: new Date().toISOString(),
      tables: [],
      oid: 0,
    };
    const connector = this.live.create(draft);
    this.changing.add(input.name);
    try {
      const saved = await this.importAndSave(input, draft, connector);
      this.health.forget(saved.name);
      this.health.markAvailable(saved.name);
      return saved;
    } finally {
      this.changing.delete(input.name);
    }
  }

  private async importAndSave(input: NewSource, draft: SourceDef, connector: Connector): Promise<SourceDef> {
    let imported: Imported;
    try {
      // The engine reads a new file source's folder from the start (to learn its tables).
      const folder = connector.delivery === 'engine' ? connector.engineFolder() : null;
      if (folder) await this.publishing.confine([folder]);
      imported = await this.importWithin(connector);
    } catch (err) {
      await connector.close();
      await this.confineAgain();
      if (err instanceof ApiError) throw err;
      throw sourceFailed(input.name, messageOf(err), err instanceof SourceUnreachableError);
    }
    let saved: SourceDef;
    try {
      saved = await this.store.update((catalog) => {
        const source: SourceDef = { ...draft, oid: catalog.nextOid++ };
        source.tables = imported.tables.map((t) => ({ ...t, uid: `${source.name}.${t.name}`, oid: catalog.nextOid++ }));
        source.procedures = keptProcedures(source.name, imported.procedures, [], () => catalog.nextOid++);
        catalog.sources.push(source);
        return source;
      });
    } catch (err) {
      // Not saved: the engine no longer reads a new file source's folder.
      await this.confineAgain();
      throw err;
    } finally {
      // The connector was built from the draft: closed whether it was saved (rebuilt below) or not (a full disk).
      await connector.close();
    }
    const live = this.live.build(saved);
    await this.publishing.publish(saved, live);
    return saved;
  }

  /** Stores (or replaces) a named connection for a later createDataSource. */
  async saveConnection(name: string, spec: Pick<NewSource, 'kind' | 'connection' | 'secrets'>): Promise<void> {
    if (!NAME_RULE.test(name)) throw badRequest(`"${name}" is not a valid connection name.`);
    const secrets = Object.fromEntries(Object.entries(spec.secrets ?? {}).map(([k, v]) => [k, this.context.sealSecret(v)]));
    await this.store.update((catalog) => {
      const others = (catalog.connections ?? []).filter((c) => !same(c.name, name));
      catalog.connections = [...others, { name, kind: spec.kind, connection: spec.connection, secrets }];
    });
  }

  /** The stored connection `name` with its secrets opened, or a 404. */
  connection(name: string): Pick<NewSource, 'kind' | 'connection' | 'secrets'> {
    const found = (this.store.current.connections ?? []).find((c) => same(c.name, name));
    if (!found)
      throw notFound(`Connection "${name}" does not exist.`, 'Create it first with SYSADMIN.createConnection.', 'Unknown connection');
    const secrets = Object.fromEntries(Object.entries(found.secrets).map(([k, v]) => [k, this.context.openSecret(v)]));
    return { kind: found.kind, connection: found.connection, secrets };
  }

  async removeConnection(name: string): Promise<void> {
    this.connection(name);
    await this.store.update((catalog) => {
      catalog.connections = (catalog.connections ?? []).filter((c) => !same(c.name, name));
    });
  }

  /** A source as shown to clients: never its secrets, only which secret keys are set. */
  describe(source: SourceDef): Record<string, unknown> {
    const warnings = importWarnings(source);
    return {
      name: source.name,
      template: source.kind,
      translator: source.kind,
      connectionProps: formatProps(source.connection),
      modelProps: formatProps(source.model),
      translatorProps: formatProps(source.translator),
      encryptedProperties: Object.keys(source.secrets).join(','),
      readOnly: source.readOnly,
      tables: source.tables.map((t) => t.name),
      createdAt: source.createdAt,
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }

  /** Removes a source: its schema disappears, its connections close. */
  async removeSource(name: string): Promise<SourceDef> {
    const source = this.findSource(name);
    if (!source) throw notFound(`Data source "${name}" does not exist.`, 'GET /rest/api/source lists the sources.', 'Unknown source');
    this.changing.add(source.name);
    try {
      return await this.removeKnownSource(source);
    } finally {
      this.changing.delete(source.name);
    }
  }

  private async removeKnownSource(source: SourceDef): Promise<SourceDef> {
    await this.store.update((catalog) => {
      catalog.sources = catalog.sources.filter((s) => s.name !== source.name);
      // Its permission entries go with it: a new source of that name starts without grants.
      catalog.permissions = withoutEntriesOn(catalog.permissions, [source.name]);
    });
    this.publishing.markPublished(source.name);
    this.health.forget(source.name);
    await this.endCaptures(source);
    await this.live.retire(source.name);
    await this.publishing.unpublish(source);
    // Its folder is no longer readable by the engine (unless another source shares it).
    await this.publishing.confine();
    return source;
  }

  /**
   * Ends the change captures of a removed source's copies (mode changes): a replication slot left
   * behind would keep the source's log for ever. Where the source does not answer, they stay.
   */
  private async endCaptures(source: SourceDef): Promise<void> {
    const prefixes = this.copies.all.filter((c) => same(c.schema, source.name) && c.capturePrefix).map((c) => c.capturePrefix!);
    if (prefixes.length === 0) return;
    const connector = this.connectorOf(source);
    const capture = connector.delivery === 'rows' ? connector.changeCapture : undefined;
    for (const prefix of prefixes) await capture?.drop(`${prefix}_`).catch(() => undefined);
  }

  /** Imports a source's metadata again (tables added, changed or dropped at the source). */
  async refreshSource(name: string): Promise<SourceDef> {
    const source = this.findSource(name);
    if (!source) throw notFound(`Data source "${name}" does not exist.`, 'GET /rest/api/source lists the sources.', 'Unknown source');
    this.changing.add(source.name);
    try {
      return await this.reimport(source, name);
    } finally {
      this.changing.delete(source.name);
    }
  }

  private async reimport(source: SourceDef, name: string): Promise<SourceDef> {
    const connector = this.connectorOf(source);
    let imported: Imported;
    try {
      imported = await this.importWithin(connector);
    } catch (err) {
      if (err instanceof SourceUnreachableError) this.health.markUnavailable(source.name, messageOf(err));
      if (err instanceof ApiError) throw err;
      throw sourceFailed(source.name, messageOf(err), err instanceof SourceUnreachableError);
    }
    const saved = await this.store.update((catalog) => {
      const target = catalog.sources.find((s) => s.name === source.name);
      if (!target) throw notFound(`Data source "${name}" does not exist.`);
      const previous = new Map(target.tables.map((t) => [t.name, t]));
      target.tables = imported.tables.map((t) => {
        const old = previous.get(t.name);
        return { ...t, uid: old?.uid ?? `${target.name}.${t.name}`, oid: old?.oid ?? catalog.nextOid++ };
      });
      target.procedures = keptProcedures(target.name, imported.procedures, target.procedures ?? [], () => catalog.nextOid++);
      return structuredClone(target);
    });
    this.live.rebase(saved);
    await this.publishing.unpublish(saved);
    await this.publishing.publish(saved, connector);
    this.publishing.markPublished(saved.name);
    this.health.markAvailable(saved.name);
    return saved;
  }

  /**
   * Changes a source's connection (its password included): connects and imports with the new
   * settings first, and stores them only when that succeeded, so a wrong setting leaves the
   * source as it was. The source keeps its name, identity, grants, conditions, masks and the
   * views on it; tables keeping their name keep their OID and UID. The old connections are closed
   * once the new connector is in place.
   */
  async alterSource(name: string, change: ConnectionChange): Promise<SourceDef> {
    const source = this.findSource(name);
    if (!source) throw notFound(`Data source "${name}" does not exist.`, 'GET /rest/api/source lists the sources.', 'Unknown source');
    if (change.connection === undefined && change.secrets === undefined) {
      throw badRequest(
        `Nothing to change for data source "${source.name}".`,
        'Give the new connection properties, the new encrypted properties (password=...), or both.',
      );
    }
    this.changing.add(source.name);
    try {
      return await this.reconnect(source, change);
    } finally {
      this.changing.delete(source.name);
    }
  }

  private async reconnect(source: SourceDef, change: ConnectionChange): Promise<SourceDef> {
    const sealed = (secrets: Record<string, string>) =>
      Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, this.context.sealSecret(v)]));
    const draft: SourceDef = {
      ...source,
      connection: change.connection ?? source.connection,
      secrets: { ...source.secrets, ...sealed(change.secrets ?? {}) },
    };
    const candidate = this.live.create(draft);
    let imported: Imported;
    try {
      const folder = candidate.delivery === 'engine' ? candidate.engineFolder() : null;
      if (folder) await this.publishing.confine([folder]);
      imported = await this.importWithin(candidate);
    } catch (err) {
      await candidate.close();
      await this.confineAgain();
      if (err instanceof ApiError) throw err;
      throw sourceFailed(source.name, messageOf(err), err instanceof SourceUnreachableError);
    }
    await candidate.close();
    const saved = await this.store.update((catalog) => {
      const target = catalog.sources.find((s) => s.name === source.name);
      if (!target) throw notFound(`Data source "${source.name}" does not exist.`, null, 'Unknown source');
      target.connection = draft.connection;
      target.secrets = draft.secrets;
      const previous = new Map(target.tables.map((t) => [t.name, t]));
      target.tables = imported.tables.map((t) => {
        const old = previous.get(t.name);
        return { ...t, uid: old?.uid ?? `${target.name}.${t.name}`, oid: old?.oid ?? catalog.nextOid++ };
      });
      target.procedures = keptProcedures(target.name, imported.procedures, target.procedures ?? [], () => catalog.nextOid++);
      return structuredClone(target);
    });
    // The old connections are closed once the new connector is in place.
    await this.live.replace(saved, async (live) => {
      this.publishing.markPublished(saved.name);
      await this.publishing.unpublish(saved);
      // A moved folder: the engine reads the new one, no longer the old one.
      if (!(live.delivery === 'engine' && (await this.publishing.confine()))) await this.publishing.publish(saved, live);
    });
    this.health.markAvailable(saved.name);
    return saved;
  }

  /**
   * Checks a source and imports its tables, within connectTimeoutMs for the check (the
   * connectors') and metadataTimeoutMs for the import: a source that accepts connections but
   * never answers fails in time.
   */
  private async importWithin(connector: Connector): Promise<Imported> {
    await connector.healthCheck();
    const ms = this.lifecycle.metadataTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SourceUnreachableError(`its tables were not imported within metadataTimeoutMs (${ms} ms)`)), ms);
    });
    const procedures = connector.delivery === 'rows' ? connector.procedures : undefined;
    const importing = Promise.all([connector.importMetadata(), procedures?.importProcedures() ?? []]).then(([tables, found]): Imported => ({
      tables,
      procedures: found,
    }));
    // Given up at the deadline: a later failure of the import is nobody's.
    importing.catch(() => undefined);
    try {
      return await Promise.race([importing, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Checks an unavailable source (the background checks, a statement's success): an engine-read
   * source is published (its folder back in an engine that may read it), a networked one must
   * answer within its connect timeout.
   */
  private async checkSource(name: string): Promise<void> {
    const source = this.store.current.sources.find((s) => s.name === name);
    if (!source || this.changing.has(name)) return;
    const connector = this.connectorOf(source);
    if (connector.delivery === 'rows') {
      await connector.healthCheck();
      return;
    }
    // A new engine generation when the readable folders changed (it publishes every source).
    await this.publishing.confine();
    if (this.findSource(name) !== source) return;
    await this.publishing.publish(source, connector);
    this.publishing.markPublished(name);
  }

  /** A statement read `name` without failing: an unavailable source is checked at once (not left for the timer). */
  sourceAnswered(name: string): void {
    if (!this.health.isAvailable(name)) void this.health.checkNow(name);
  }

  /** The availability of `name` as vdb last found it. */
  statusOf(name: string): SourceStatus {
    return this.health.status(name);
  }

  /**
   * Publishes an engine-read source that was not available before (it recovers by itself once
   * its folder or file is back); a 503 naming the source while it is still missing.
   */
  ensurePublished(source: SourceDef): Promise<void> {
    return this.publishing.ensurePublished(source);
  }

  /** Confines the engine again after a failed change, which fails no further for it. */
  private async confineAgain(): Promise<void> {
    try {
      await this.publishing.confine();
    } catch (err) {
      this.log.error({ err: messageOf(err) }, 'engine not confined again');
    }
  }

  async close(): Promise<void> {
    this.health.close();
    await this.live.closeAll();
  }
}

/** What an import brings: the tables and the procedures of a source. */
interface Imported {
  tables: ImportedTable[];
  procedures: ImportedProcedure[];
}

/** Imported procedures with identities: those keeping their name keep their OID and UID. */
function keptProcedures(
  source: string,
  imported: readonly ImportedProcedure[],
  previous: readonly ProcedureDef[],
  nextOid: () => number,
): ProcedureDef[] {
  const old = new Map(previous.map((p) => [p.name, p]));
  return imported.map((p) => ({ ...p, uid: old.get(p.name)?.uid ?? `${source}.${p.name}()`, oid: old.get(p.name)?.oid ?? nextOid() }));
}

/** Permission entries without those on `path` and below it (names compare case-insensitively). */
function withoutEntriesOn(entries: PermissionDef[] | undefined, path: readonly string[]): PermissionDef[] | undefined {
  if (!entries) return entries;
  return entries.filter((entry) => {
    const resource = parseResource(entry.resource);
    return !(resource.length >= path.length && path.every((part, i) => same(part, resource[i]!)));
  });
}

/**
 * What a user should hear about a source just added or refreshed: a source without tables is
 * almost always a wrong database, schema pattern or missing privilege, not an empty database.
 */
export function importWarnings(source: SourceDef): string[] {
  if (source.tables.length > 0) return [];
  const where = source.model['importer.schemaPattern'] ? ` matching importer.schemaPattern=${source.model['importer.schemaPattern']}` : '';
  return [
    `No tables were found in data source "${source.name}"${where}: check the database or folder, the schema pattern and the user's privileges, then CALL SYSADMIN.refreshDataSource('${source.name}').`,
  ];
}
