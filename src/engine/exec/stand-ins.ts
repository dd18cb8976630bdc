/**
 * A statement's result columns over the catalog's types: each table it reads stands in as an
 * empty view of its columns, so the engine describes the statement without any row.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ResultColumn } from '../../results/json.js';
import type { BoundStatement } from '../access/bind.js';
import { describe, quoteIdent } from '../../runtime/duckdb.js';
import { engineSql } from '../translate/engine-dialect.js';
import { withNumericValues } from '../translate/numeric-values.js';
import { typedSql } from '../translate/probed-types.js';

/** The engine's own result columns for the statement, over empty stand-ins of its tables. */
export async function standInColumns(connection: DuckDBConnection, bound: BoundStatement): Promise<ResultColumn[]> {
  // Tables without a load name are the engine's own (files): read as they are.
  const loads = bound.tables.flatMap(({ loadName, resolved }) => (loadName ? [{ loadName, resolved }] : []));
  for (const { loadName, resolved } of loads) {
    const list = resolved.table.columns.map((c) => `CAST(NULL AS ${c.type}) AS ${quoteIdent(c.name)}`).join(', ');
    await connection.run(`CREATE TEMP VIEW ${loadName} AS SELECT ${list || 'NULL AS none'} WHERE FALSE`);
  }
  // Written as execution writes it (per-value numerics, PostgreSQL's types), so that the types match.
  const tree = await withNumericValues(connection, bound.ast, engineSql);
  const columns = await describe(connection, await typedSql(connection, () => engineSql(tree)));
  for (const { loadName } of loads) await connection.run(`DROP VIEW ${loadName}`);
  return columns;
}
