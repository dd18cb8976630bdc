/**
 * Whole-statement pushdown: a statement whose tables all live in one PostgreSQL source is sent
 * to it whole, translated to its own names, and its rows stream straight back (PostgreSQL
 * writes them as JSON). Only statements known to mean the same there are sent: functions and
 * casts from an allow-list (nothing that reads files, settings or other databases), and, when
 * the database's collation is not bytewise, nothing that orders text.
 */
import { deparseSync } from 'pgsql-deparser';
import type { ParseResult } from '@pgsql/types';
import type { PlanCatalog } from './plan-catalog.js';
import type { SourceDef, TableDef } from '../../catalog/types.js';
import { wholeStatementConnector, type WholeStatementConnector } from '../../connectors/types.js';
import type { BoundStatement } from '../access/bind.js';
import { everyNode, fieldNames } from '../tree/ast.js';
import { hasFact } from '../tree/functions.js';

export interface WholePlan {
  source: SourceDef;
  connector: WholeStatementConnector;
  /** The statement in the source's own names. */
  sql: string;
}

/** Types whose casts mean the same on both sides. */
export const SAFE_TYPES = new Set([
  'int',
  'int2',
  'int4',
  'int8',
  'integer',
  'smallint',
  'bigint',
  'numeric',
  'decimal',
  'real',
  'float4',
  'float8',
  'float',
  'double',
  'text',
  'varchar',
  'bpchar',
  'char',
  'date',
  'timestamp',
  'timestamptz',
  'time',
  'interval',
  'bool',
  'boolean',
  'uuid',
]);

/** Node kinds that order text (matter when the database's collation is not bytewise). */
const ORDERING_OPERATORS = new Set(['<', '>', '<=', '>=']);

export async function planWhole(bound: BoundStatement, registry: PlanCatalog): Promise<WholePlan | null> {
  if (bound.tables.length === 0) return null;
  const first = bound.tables[0]!.resolved;
  if (first.origin !== 'rows') return null;
  const source = first.source;
  if (!bound.tables.every((t) => t.resolved.origin === 'rows' && t.resolved.source === source)) return null;
  const connector = wholeStatementConnector(registry.connectorOf(source));
  if (!connector) return null;
  // Text is ordered as the engine orders it only under a bytewise collation, database and columns.
  const bytewise = (await connector.bytewiseCollation()) && bound.tables.every((t) => t.resolved.table.columns.every((c) => !c.collation));

  if (!sameAtPostgres(bound.ast.stmts?.[0]?.stmt, bytewise)) return null;

  // The same tree with the source's own table names instead of the engine's load names.
  const tree = structuredClone(bound.ast) as ParseResult;
  withSourceNames(tree, new Map(bound.tables.map((t) => [t.loadName, t.resolved.table])), connector);
  return { source, connector, sql: deparseSync(tree).replace(/;\s*$/, '') };
}

/** Replaces, in place, the engine's load names of `tree`'s relations by the source's own table names. */
export function withSourceNames(tree: unknown, loads: ReadonlyMap<string | undefined, TableDef>, connector: WholeStatementConnector): void {
  everyNode(tree, (key, node) => {
    if (key !== 'RangeVar' || typeof node.relname !== 'string' || !loads.has(node.relname)) return true;
    const { schema, table } = connector.dialect.tableName(loads.get(node.relname)!);
    if (schema === undefined) delete node.schemaname;
    else node.schemaname = schema;
    node.relname = table;
    return true;
  });
}

/**
 * Whether a tree means the same at PostgreSQL as in vdb: functions and casts of the allow-list,
 * and, unless text is ordered bytewise there (`bytewise`), nothing that orders text.
 */
export function sameAtPostgres(tree: unknown, bytewise: boolean): boolean {
  return everyNode(tree, (key, node) => {
    switch (key) {
      case 'FuncCall': {
        const parts = fieldNames(node.funcname);
        const name = parts.length === 1 ? parts[0]!.toLowerCase() : '';
        return hasFact(name, 'sameAtPostgres') && (bytewise || !hasFact(name, 'ordersText'));
      }
      case 'TypeCast':
      case 'TypeName': {
        const typeName = key === 'TypeCast' ? node.typeName : node;
        const parts = fieldNames(typeName?.names).filter((n) => n !== 'pg_catalog');
        return parts.length === 1 && SAFE_TYPES.has(parts[0]!.toLowerCase()) && !typeName?.arrayBounds;
      }
      case 'SortBy':
        return bytewise;
      case 'A_Expr':
        return (
          bytewise ||
          (!ORDERING_OPERATORS.has(fieldNames(node.name)[0] ?? '') && node.kind !== 'AEXPR_BETWEEN' && node.kind !== 'AEXPR_NOT_BETWEEN')
        );
      case 'MinMaxExpr':
        return bytewise;
      case 'SQLValueFunction':
      case 'CollateClause':
      case 'XmlExpr':
      case 'XmlSerialize':
      case 'LockingClause':
        return false;
      default:
        return true;
    }
  });
}
