/** The engine's front: SQL text in, an open execution out (parse -> bind -> execute). */
import type { SourceRegistry } from '../catalog/sources.js';
import { bindStatement } from './bind.js';
import type { DuckRuntime } from './duckdb.js';
import { openExecution, type Execution } from './execute.js';
import { parseStatement } from './parse.js';

export class Engine {
  constructor(
    readonly registry: SourceRegistry,
    readonly runtime: DuckRuntime,
    private readonly vdbName: string,
  ) {}

  /** Parses and binds `sql`, loads what sources must supply, and prepares the result. */
  async open(sql: string, signal: AbortSignal): Promise<Execution> {
    const tree = parseStatement(sql);
    const bound = bindStatement(tree, this.registry, this.vdbName);
    return openExecution(bound, this.registry, this.runtime, { signal });
  }
}
