/** Builds the connector for a source definition: the one place that knows every kind. */
import type { SourceDef } from '../catalog/types.js';
import { badRequest } from '../errors.js';
import { DuckdbConnector, type DuckdbConnectorContext } from './duckdb/connector.js';
import { FileConnector, type FileConnectorContext } from './files/connector.js';
import { MysqlConnector } from './mysql/connector.js';
import { PostgresConnector } from './postgres/connector.js';
import { SqliteConnector } from './sqlite/connector.js';
import type { Connector } from './types.js';
import type { Pooling } from './pool-gate.js';

export interface ConnectorContext extends FileConnectorContext, DuckdbConnectorContext {
  /** Decrypts a secret of a source definition (stored sealed in the catalog). */
  openSecret(sealed: string): string;
  /** Encrypts a secret for storage in the catalog. */
  sealSecret(plain: string): string;
  /** Default connect timeout of networked sources (configuration connectTimeoutMs). */
  connectTimeoutMs?: number;
  /** Longest row text a source may send whole (configuration valueLimit). */
  valueLimit?: number;
  /** Networked sources' pools: the default wait for a connection (poolWaitMs), and where the metrics find them. */
  pooling?: Pooling;
}

export const SUPPORTED_KINDS = ['postgresql', 'mysql', 'sqlite', 'file', 'duckdb'] as const;

export function createConnector(source: SourceDef, context: ConnectorContext): Connector {
  const secret = (key: string) => (source.secrets[key] === undefined ? undefined : context.openSecret(source.secrets[key]));
  switch (source.kind) {
    case 'postgresql':
      return new PostgresConnector(source, secret('password'), context.connectTimeoutMs, context.valueLimit, context.pooling);
    case 'mysql':
      return new MysqlConnector(source, secret('password'), context.connectTimeoutMs, context.pooling);
    case 'sqlite':
      return new SqliteConnector(source, context.roots);
    case 'file':
      return new FileConnector(source, context);
    case 'duckdb':
      return new DuckdbConnector(source, context);
    default:
      throw badRequest(`Data sources of kind "${source.kind}" are not supported yet.`, `Supported kinds: ${SUPPORTED_KINDS.join(', ')}.`);
  }
}
