/**
 * The live connector of each source: built from its definition, held while that definition
 * holds, replaced when it changes and closed when it goes. One place owns the connectors (and
 * the definition each was built from) so no source is ever served by two, and none is left open.
 * What a change means for the engine or the catalog is registry.ts's and publishing.ts's.
 */
import type { SourceDef } from '../catalog/types.js';
import { createConnector, type ConnectorContext } from '../connectors/factory.js';
import type { Connector } from '../connectors/types.js';

export class LiveConnectors {
  private readonly held = new Map<string, Connector>();
  /** The source definition each connector was built from (a change made elsewhere replaces the connector). */
  private readonly builtFrom = new Map<string, SourceDef>();

  constructor(
    private readonly context: ConnectorContext,
    /** The catalog's current definition of a source: only it may get a connector on demand. */
    private readonly current: (name: string) => SourceDef | undefined,
    /** Told of a connector built on demand (connectorOf), e.g. to publish it later. */
    private readonly builtOnDemand: (source: SourceDef, connector: Connector) => void = () => undefined,
  ) {}

  /** A connector that is not held (a draft or a candidate definition): its caller closes it. */
  create(source: SourceDef): Connector {
    return createConnector(source, this.context);
  }

  /** Builds and holds the connector of `source` (a new source's, or one just retired). */
  build(source: SourceDef): Connector {
    const connector = this.create(source);
    this.hold(source, connector);
    return connector;
  }

  /**
   * Holds a new connector for `source`'s changed definition, lets `install` put it in place (the
   * engine reading it), and only then closes the one it replaces: statements never find none.
   */
  async replace(source: SourceDef, install: (live: Connector) => Promise<void>): Promise<Connector> {
    const previous = this.held.get(source.name);
    const live = this.build(source);
    await install(live);
    await previous?.close();
    return live;
  }

  /** The held connector of `source`, built on demand for the catalog's current definition. */
  connectorOf(source: SourceDef): Connector {
    const connector = this.held.get(source.name);
    if (connector) return connector;
    if (this.current(source.name) !== source) throw new Error(`no connector for source ${source.name}`);
    // A source another instance has just added, asked for before following the catalog reached it.
    const created = this.build(source);
    this.builtOnDemand(source, created);
    return created;
  }

  get(name: string): Connector | undefined {
    return this.held.get(name);
  }

  has(name: string): boolean {
    return this.held.has(name);
  }

  /** The held connectors by source name, as they are now (safe to change them while iterating). */
  entries(): Array<[string, Connector]> {
    return [...this.held];
  }

  /** Whether the held connector of `name` was built from a definition equal to `now`. */
  builtFromSame(name: string, now: SourceDef | undefined): boolean {
    const was = this.builtFrom.get(name);
    return now !== undefined && was !== undefined && JSON.stringify(now) === JSON.stringify(was);
  }

  /** Records that `source` (its tables imported again, the same connection) is what its connector now serves. */
  rebase(source: SourceDef): void {
    this.builtFrom.set(source.name, source);
  }

  /** The folders the engine must read for the held engine-read connectors. */
  engineFolders(): string[] {
    const folders: string[] = [];
    for (const connector of this.held.values()) {
      const folder = connector.delivery === 'engine' ? connector.engineFolder() : null;
      if (folder) folders.push(folder);
    }
    return folders;
  }

  /** Stops holding `name`'s connector and closes it; answers the definition it was built from. */
  async retire(name: string): Promise<SourceDef | undefined> {
    const connector = this.held.get(name);
    const was = this.builtFrom.get(name);
    this.held.delete(name);
    this.builtFrom.delete(name);
    await connector?.close();
    return was;
  }

  async closeAll(): Promise<void> {
    for (const connector of this.held.values()) await connector.close();
  }

  private hold(source: SourceDef, connector: Connector): void {
    this.held.set(source.name, connector);
    this.builtFrom.set(source.name, source);
  }
}
