/** Builds the connector for a source definition: the one place that knows every kind. */
import type { SourceDef } from '../catalog/types.js';
import { badRequest } from '../errors.js';
import { FileConnector, type FileConnectorContext } from './files/connector.js';
import { SqliteConnector } from './sqlite/connector.js';
import type { Connector } from './types.js';

export type ConnectorContext = FileConnectorContext;

export const SUPPORTED_KINDS = ['sqlite', 'file'] as const;

export function createConnector(source: SourceDef, context: ConnectorContext): Connector {
  switch (source.kind) {
    case 'sqlite':
      return new SqliteConnector(source);
    case 'file':
      return new FileConnector(source, context);
    default:
      throw badRequest(
        `Data sources of kind "${source.kind}" are not supported yet.`,
        `Supported kinds: ${SUPPORTED_KINDS.join(', ')}.`,
      );
  }
}
