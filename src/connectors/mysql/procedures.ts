/**
 * MySQL/MariaDB stored procedures as procedures of a source: imported from
 * information_schema.ROUTINES and PARAMETERS (those with input parameters only), called as a
 * prepared `CALL db.proc(?, ...)` with the arguments bound. The first result set is the answer;
 * its columns are known only once called. A procedure that does not declare MODIFIES SQL DATA
 * runs in a READ ONLY transaction. The rows stream as they arrive (call-rows.ts).
 */
import type { FieldPacket, PoolConnection, RowDataPacket } from 'mysql2';
import type { ProcedureDef } from '../../catalog/types.js';
import { leasedRows, type Lease } from '../lease.js';
import type { ImportedProcedure, ProcedureConnector, ProcedureRows, StatementColumn } from '../types.js';
import { CallRows } from './call-rows.js';
import { engineTypeOfMysql, rawTypeOfMysql } from './types.js';

const BATCH_ROWS = 2048;

/** What the connector lends: its pooled connections, the import patterns and its quoting. */
export interface MysqlAccess {
  acquire(signal: AbortSignal): Promise<Lease<PoolConnection>>;
  query(sql: string, values: unknown[]): Promise<RowDataPacket[]>;
  patterns(): string[];
  /** The connection's own database: its procedures are named bare. */
  database(): string;
  model(): Record<string, string>;
  quote(name: string): string;
  statementError(err: unknown, lease: Lease<PoolConnection>): Error;
}

/** The protocol's column type codes, spelled as information_schema's COLUMN_TYPE (then mapped as columns are). */
const TYPE_NAMES: Record<number, string> = {
  1: 'tinyint',
  2: 'smallint',
  3: 'int',
  4: 'float',
  5: 'double',
  7: 'timestamp',
  8: 'bigint',
  9: 'mediumint',
  10: 'date',
  11: 'time',
  12: 'datetime',
  13: 'year',
  14: 'date',
  16: 'bit',
  245: 'json',
};
const BINARY_CHARSET = 63;
const UNSIGNED_FLAG = 32;

/** A result column's type from its field packet. */
export function columnTypeOfField(field: FieldPacket): string {
  const code = Number(field.columnType);
  const unsigned = (Number(field.flags) & UNSIGNED_FLAG) !== 0 ? ' unsigned' : '';
  const binary = field.characterSet === BINARY_CHARSET;
  if (code === 0 || code === 246) {
    const scale = Number(field.decimals);
    const precision = Number(field.columnLength) - (scale > 0 ? 1 : 0) - (unsigned ? 0 : 1);
    return `decimal(${precision},${scale})${unsigned}`;
  }
  if (code === 1 && Number(field.columnLength) === 1) return `tinyint(1)${unsigned}`;
  const name = TYPE_NAMES[code];
  if (name) return `${name}${unsigned}`;
  if (code >= 249 && code <= 252) return binary ? 'blob' : 'text';
  if (code === 15 || code === 253 || code === 254) return binary ? 'varbinary' : 'varchar';
  return 'text';
}

/** A value of the binary protocol as the text the load reads (numbers exactly as the server sent them). */
function asText(value: unknown): unknown {
  if (value === null || value === undefined || typeof value === 'string' || Buffer.isBuffer(value)) return value ?? null;
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/** A boolean argument (tinyint(1)) as the number MySQL stores: true and false as PostgreSQL spells them. */
function booleanText(value: string): string {
  if (/^\s*(t|true|y|yes|on|1)\s*$/i.test(value)) return '1';
  if (/^\s*(f|false|n|no|off|0)\s*$/i.test(value)) return '0';
  return value;
}

export class MysqlProcedures implements ProcedureConnector {
  constructor(private readonly access: MysqlAccess) {}

  async importProcedures(): Promise<ImportedProcedure[]> {
    const model = this.access.model();
    if (/^(false|0|no)$/i.test(model['importer.importProcedures'] ?? '')) return [];
    const patterns = this.access.patterns();
    const namePattern = model['importer.procedureNamePattern'] ?? '%';
    const where = (column: string) => `(${patterns.map(() => `${column} LIKE ?`).join(' OR ')})`;
    const routines = await this.access.query(
      `SELECT ROUTINE_SCHEMA AS db, ROUTINE_NAME AS name, SQL_DATA_ACCESS AS access, ROUTINE_COMMENT AS description
         FROM information_schema.ROUTINES
        WHERE ROUTINE_TYPE = 'PROCEDURE' AND ${where('ROUTINE_SCHEMA')} AND ROUTINE_NAME LIKE ?
        ORDER BY ROUTINE_SCHEMA, ROUTINE_NAME`,
      [...patterns, namePattern],
    );
    const params = await this.access.query(
      `SELECT SPECIFIC_SCHEMA AS db, SPECIFIC_NAME AS name, PARAMETER_MODE AS mode, PARAMETER_NAME AS param, DTD_IDENTIFIER AS type
         FROM information_schema.PARAMETERS
        WHERE ROUTINE_TYPE = 'PROCEDURE' AND ORDINAL_POSITION > 0 AND ${where('SPECIFIC_SCHEMA')}
        ORDER BY SPECIFIC_SCHEMA, SPECIFIC_NAME, ORDINAL_POSITION`,
      patterns,
    );
    const databases = new Set(routines.map((r) => String(r.db)));
    const booleans = !/^(false|0|no)$/i.test(model['importer.tinyint1AsBoolean'] ?? '');
    return routines.flatMap((routine): ImportedProcedure[] => {
      const own = params.filter((p) => p.db === routine.db && p.name === routine.name);
      // OUT and INOUT parameters answer through session variables, not a result set: not imported.
      if (own.some((p) => String(p.mode) !== 'IN')) return [];
      const bare = routine.db === this.access.database() || databases.size === 1;
      return [
        {
          name: bare ? String(routine.name) : `${routine.db}.${routine.name}`,
          nameInSource: `${this.access.quote(String(routine.db))}.${this.access.quote(String(routine.name))}`,
          sourceName: { schema: String(routine.db), name: String(routine.name) },
          params: own.map((p, i) => ({
            name: String(p.param),
            type: engineTypeOfMysql(String(p.type), booleans),
            sourceType: String(p.type),
            position: i + 1,
            optional: false,
          })),
          columns: null,
          returnsSet: true,
          modifiesData: String(routine.access) === 'MODIFIES SQL DATA',
          description: routine.description ? String(routine.description) : null,
        },
      ];
    });
  }

  procedureCallSql(procedure: ProcedureDef): string {
    return `CALL ${procedure.nameInSource}(${procedure.params.map(() => '?').join(', ')})`;
  }

  async callProcedure(
    procedure: ProcedureDef,
    args: ReadonlyArray<string | null | undefined>,
    signal: AbortSignal,
  ): Promise<ProcedureRows> {
    const lease = await this.access.acquire(signal);
    const db = lease.connection.promise();
    const access = this.access;
    let call: CallRows;
    let fields: FieldPacket[];
    try {
      await db.query(procedure.modifiesData ? 'START TRANSACTION' : 'START TRANSACTION READ ONLY');
      const values = args.map((a, i) => (procedure.params[i]!.type === 'BOOLEAN' && a ? booleanText(a) : (a ?? null)));
      call = new CallRows(lease.connection, this.procedureCallSql(procedure), values);
      fields = await call.fields;
    } catch (err) {
      lease.broken = true;
      lease.release();
      throw signal.aborted ? signal.reason : access.statementError(err, lease);
    }
    const booleans = !/^(false|0|no)$/i.test(access.model()['importer.tinyint1AsBoolean'] ?? '');
    const columns: StatementColumn[] = fields.map((f) => {
      const sourceType = columnTypeOfField(f);
      return { name: f.name, sourceType, type: engineTypeOfMysql(sourceType, booleans) };
    });
    // Left before the end, the call and its transaction are open on the connection: not reused.
    const { rows, close } = leasedRows(
      lease,
      async function* () {
        for await (const batch of call.batches(BATCH_ROWS)) yield batch.map((row) => row.map(asText));
      },
      () => db.query('COMMIT'),
      (err) => (signal.aborted ? signal.reason : access.statementError(err, lease)),
    );
    return { columns, rawTypes: columns.map((c) => rawTypeOfMysql(c.type)), rows, close };
  }
}
