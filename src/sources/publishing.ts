/**
 * The sources made readable in the embedded engine: every engine-read source's tables as views in
 * its own schema (after its setup SQL, e.g. attaching a DuckDB file), in each engine generation,
 * and the engine confined to those sources' folders (a change opens a new generation, prepared
 * before it takes over). Kept apart from the connectors (live-connectors.ts) and the lifecycle
 * (registry.ts) because it is the one place that decides what the engine may read and holds.
 */
import type { CatalogStore } from '../catalog/store.js';
import type { SourceDef } from '../catalog/types.js';
import type { Connector } from '../connectors/types.js';
import { messageOf, sourceFailed } from '../errors.js';
import { quoteIdent, type DuckRuntime, type EngineGeneration } from '../runtime/duckdb.js';
import { engineSchemaOf } from './definitions.js';
import type { LiveConnectors } from './live-connectors.js';
import type { SourceHealth } from './source-health.js';
import type { SystemTableCopies } from './system-copies.js';
import type { LocalCopies } from './copies.js';

export class SourcePublishing {
  /** Engine-read sources whose tables could not be published (missing folder or file). */
  private readonly unpublished = new Set<string>();

  constructor(
    private readonly runtime: DuckRuntime,
    private readonly store: CatalogStore,
    private readonly connectors: LiveConnectors,
    private readonly health: SourceHealth,
    private readonly systemCopies: SystemTableCopies,
    private readonly copies: LocalCopies,
  ) {
    // An engine renewed after a fatal error of its own is made ready as a new generation is.
    runtime.preparesWith((engine) => this.prepare(engine));
  }

  /** Publishes every engine-read source (at start), in an engine allowed to read their folders. */
  async publishAll(): Promise<void> {
    if (!(await this.confine())) await this.prepare(this.runtime.current);
  }

  /**
   * Keeps the engine confined to the folders of the engine-read sources (plus `extra`, a folder
   * about to be added): a change opens a new engine generation, prepared before it takes over.
   */
  confine(extra: readonly string[] = []): Promise<boolean> {
    return this.runtime.confineTo([...extra, ...this.connectors.engineFolders(), this.copies.folder], (engine) => this.prepare(engine));
  }

  /** Publishes every engine-read source, the system tables and the local copies in `engine`. */
  private async prepare(engine: EngineGeneration): Promise<void> {
    for (const source of this.store.current.sources) {
      const connector = this.connectors.get(source.name);
      if (connector?.delivery !== 'engine') continue;
      await this.tryPublish(source, connector, engine);
    }
    await this.systemCopies.write(engine);
    await this.copies.prepare(engine);
  }

  /** Publishes `source`, or marks it unpublished and unavailable when its folder or file is missing. */
  async tryPublish(source: SourceDef, connector: Connector, engine = this.runtime.current): Promise<void> {
    try {
      await this.publish(source, connector, engine);
      this.unpublished.delete(source.name);
      this.health.markAvailable(source.name);
    } catch (err) {
      this.unpublished.add(source.name);
      this.health.markUnavailable(source.name, messageOf(err));
    }
  }

  /**
   * Publishes an engine-read source that was not available before (it recovers by itself once
   * its folder or file is back); a 503 naming the source while it is still missing.
   */
  async ensurePublished(source: SourceDef): Promise<void> {
    if (!this.unpublished.has(source.name)) return;
    try {
      // Its folder back: an engine that may read it (publishing every source there).
      await this.confine();
      if (!this.unpublished.has(source.name)) return;
      await this.publish(source, this.connectors.connectorOf(source));
      this.unpublished.delete(source.name);
      this.health.markAvailable(source.name);
    } catch (err) {
      this.health.markUnavailable(source.name, messageOf(err));
      throw sourceFailed(source.name, messageOf(err), true);
    }
  }

  /** Makes a native source's tables visible to the engine as views in its own schema. */
  async publish(source: SourceDef, connector: Connector, engine = this.runtime.current): Promise<void> {
    if (connector.delivery !== 'engine') return;
    await connector.healthCheck();
    const schema = quoteIdent(engineSchemaOf(source));
    // e.g. attaches a DuckDB file before views can refer to it
    const statements = [...connector.setupSql(), `CREATE SCHEMA IF NOT EXISTS ${schema}`];
    for (const table of source.tables) {
      statements.push(`CREATE OR REPLACE VIEW ${schema}.${quoteIdent(table.name)} AS SELECT * FROM ${connector.relationSql(table)}`);
    }
    await engine.runAll(statements);
  }

  /** Drops a source's schema from the engine (its views; published again after a change). */
  async unpublish(source: SourceDef): Promise<void> {
    await this.runtime.runAll([`DROP SCHEMA IF EXISTS ${quoteIdent(engineSchemaOf(source))} CASCADE`]);
  }

  /** Marks `name` as still to be published (ensurePublished publishes it when a statement reads it). */
  markUnpublished(name: string): void {
    this.unpublished.add(name);
  }

  /** Marks `name` as published, or no longer to be published (a source removed or replaced). */
  markPublished(name: string): void {
    this.unpublished.delete(name);
  }
}
