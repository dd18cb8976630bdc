/**
 * PostgreSQL functions as procedures of a source: imported from pg_proc (scalar functions and
 * set-returning ones, with their parameters' names, types and defaults), called as
 * `SELECT ... FROM schema.fn($1::type, name => $2::type)` with the arguments bound, read in
 * batches through a cursor. Functions that are not VOLATILE run in a READ ONLY transaction, so a
 * function declared STABLE that writes is refused by PostgreSQL itself.
 */
import type pg from 'pg';
import type { ProcedureDef } from '../../catalog/types.js';
import { badRequest } from '../../errors.js';
import { leasedRows, type Lease } from '../lease.js';
import type { ImportedProcedure, ProcedureConnector, ProcedureRows, StatementColumn } from '../types.js';
import { engineTypeOfPostgres, rawTypeOfPostgres } from './types.js';

const FETCH_ROWS = 2048;

/** Values as PostgreSQL's text: the driver converts nothing (the engine casts, as for COPY). */
const AS_TEXT = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig;

/**
 * Function signatures of the import: inputs (modes i, b; v for VARIADIC, which is left out),
 * outputs (o, b, t), the result type and whether it is a set. Overloaded names, polymorphic and
 * pseudo types (record without OUT parameters, trigger, void, any*) are not imported: they have
 * no one signature to call by name.
 */
const FUNCTIONS_SQL = `
SELECT n.nspname AS schema, p.proname AS name, p.provolatile AS volatility, p.proretset AS returns_set,
       p.pronargdefaults AS defaults, rt.typtype AS return_kind, format_type(p.prorettype, NULL) AS return_type,
       obj_description(p.oid, 'pg_proc') AS description,
       (SELECT count(*) FROM pg_proc o WHERE o.pronamespace = p.pronamespace AND o.proname = p.proname) AS overloads,
       (SELECT coalesce(json_agg(json_build_object('name', a.name, 'mode', a.mode, 'type', format_type(a.type, NULL),
                                                   'kind', (SELECT typtype FROM pg_type WHERE oid = a.type)) ORDER BY a.i), '[]')
          FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
                      coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[cardinality(p.proargtypes::oid[])])),
                      coalesce(p.proargnames, array_fill(''::text, ARRAY[cardinality(coalesce(p.proallargtypes, p.proargtypes::oid[]))])))
               WITH ORDINALITY AS a(type, mode, name, i)) AS args,
       (SELECT coalesce(json_agg(json_build_object('name', at.attname, 'type', format_type(at.atttypid, at.atttypmod)) ORDER BY at.attnum), '[]')
          FROM pg_attribute at WHERE at.attrelid = rt.typrelid AND at.attnum > 0 AND NOT at.attisdropped) AS composite
  FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_type rt ON rt.oid = p.prorettype
 WHERE p.prokind = 'f' AND n.nspname LIKE ANY ($1::text[]) AND p.proname LIKE $2
 ORDER BY n.nspname, p.proname`;

interface FunctionRow {
  schema: string;
  name: string;
  volatility: string;
  returns_set: boolean;
  defaults: number;
  return_kind: string;
  return_type: string;
  description: string | null;
  overloads: string;
  args: Array<{ name: string; mode: string; type: string; kind: string }>;
  composite: Array<{ name: string; type: string }>;
}

/** What the connector lends: its pooled connections, the import patterns and its quoting. */
export interface PostgresAccess {
  acquire(signal: AbortSignal): Promise<Lease<pg.PoolClient>>;
  query(sql: string, values: unknown[]): Promise<pg.QueryResult>;
  schemas(): string[];
  model(): Record<string, string>;
  quote(name: string): string;
  statementError(err: unknown, lease: Lease<pg.PoolClient>): Error;
}

export class PostgresProcedures implements ProcedureConnector {
  constructor(private readonly access: PostgresAccess) {}

  async importProcedures(): Promise<ImportedProcedure[]> {
    if (/^(false|0|no)$/i.test(this.access.model()['importer.importProcedures'] ?? '')) return [];
    const patterns = this.access.schemas();
    const namePattern = this.access.model()['importer.procedureNamePattern'] ?? '%';
    const result = await this.access.query(FUNCTIONS_SQL, [patterns, namePattern]);
    const rows = result.rows as FunctionRow[];
    const schemas = new Set(rows.map((r) => r.schema));
    return rows.flatMap((row) => {
      const procedure = this.procedureOf(row, row.schema === 'public' || schemas.size === 1);
      return procedure ? [procedure] : [];
    });
  }

  private procedureOf(row: FunctionRow, bare: boolean): ImportedProcedure | null {
    if (Number(row.overloads) > 1) return null;
    const pseudo = (kind: string) => kind === 'p';
    if (row.args.some((a) => a.mode === 'v' || pseudo(a.kind))) return null;
    const inputs = row.args.filter((a) => a.mode === 'i' || a.mode === 'b');
    const outputs = row.args.filter((a) => a.mode === 'o' || a.mode === 'b' || a.mode === 't');
    let columns: StatementColumn[];
    if (outputs.length > 0) {
      columns = outputs.map((a, i) => ({ name: a.name || `column${i + 1}`, sourceType: a.type, type: engineTypeOfPostgres(a.type) }));
    } else if (row.return_kind === 'c') {
      columns = row.composite.map((c) => ({ name: c.name, sourceType: c.type, type: engineTypeOfPostgres(c.type) }));
    } else if (pseudo(row.return_kind)) {
      return null; // void, record without OUT parameters, trigger, any*
    } else {
      // PostgreSQL names the one column of a scalar function after the function.
      columns = [{ name: row.name, sourceType: row.return_type, type: engineTypeOfPostgres(row.return_type) }];
    }
    if (columns.length === 0) return null;
    const required = inputs.length - Number(row.defaults);
    return {
      name: bare ? row.name : `${row.schema}.${row.name}`,
      nameInSource: `${this.access.quote(row.schema)}.${this.access.quote(row.name)}`,
      sourceName: { schema: row.schema, name: row.name },
      params: inputs.map((a, i) => ({
        name: a.name || `$${i + 1}`,
        type: engineTypeOfPostgres(a.type),
        sourceType: a.type,
        position: i + 1,
        optional: i >= required,
      })),
      columns,
      returnsSet: row.returns_set,
      modifiesData: row.volatility === 'v',
      description: row.description,
    };
  }

  /**
   * The call: arguments in order while none is left out, by name after one is (PostgreSQL's
   * mixed notation); each a bound parameter cast to its declared type.
   */
  private callText(
    procedure: ProcedureDef,
    args: ReadonlyArray<string | null | undefined>,
  ): { text: string; values: Array<string | null> } {
    const values: Array<string | null> = [];
    const list: string[] = [];
    let skipped = false;
    procedure.params.forEach((param, i) => {
      const value = args[i];
      if (value === undefined) {
        skipped = true;
        return;
      }
      values.push(value);
      const placeholder = `$${values.length}::${param.sourceType}`;
      if (!skipped) list.push(placeholder);
      else if (/^\$\d+$/.test(param.name)) {
        throw badRequest(
          `Parameter ${i + 1} of ${procedure.name} has no name and cannot follow one left out.`,
          'Give the parameters before it.',
          'Invalid procedure call',
        );
      } else list.push(`${this.access.quote(param.name)} => ${placeholder}`);
    });
    const columns = procedure.columns ?? [];
    const aliases = columns.map((_, i) => `c${i}`).join(', ');
    const select = columns.map((c, i) => (c.type === 'BLOB' ? `encode(q.c${i}, 'hex')` : `q.c${i}`)).join(', ');
    return { text: `SELECT ${select} FROM ${procedure.nameInSource}(${list.join(', ')}) AS q(${aliases})`, values };
  }

  procedureCallSql(procedure: ProcedureDef, args: ReadonlyArray<string | null | undefined>): string {
    return this.callText(procedure, args).text;
  }

  async callProcedure(
    procedure: ProcedureDef,
    args: ReadonlyArray<string | null | undefined>,
    signal: AbortSignal,
  ): Promise<ProcedureRows> {
    const { text, values } = this.callText(procedure, args);
    const columns = (procedure.columns ?? []).map((c) => ({ ...c }));
    const lease = await this.access.acquire(signal);
    const client = lease.connection;
    // A cursor in a transaction: the rows come in batches, and a function that is not VOLATILE may not write.
    let first: pg.QueryResult;
    try {
      await client.query(procedure.modifiesData ? 'BEGIN' : 'BEGIN TRANSACTION READ ONLY');
      await client.query({ text: `DECLARE vdb_procedure NO SCROLL CURSOR FOR ${text}`, values });
      first = await client.query({ text: `FETCH ${FETCH_ROWS} FROM vdb_procedure`, rowMode: 'array', types: AS_TEXT });
    } catch (err) {
      lease.broken = true;
      lease.release();
      throw signal.aborted ? signal.reason : this.access.statementError(err, lease);
    }
    const blobs = columns.map((c, i) => (c.type === 'BLOB' ? i : -1)).filter((i) => i >= 0);
    const decode = (rows: unknown[][]) => {
      for (const row of rows) for (const i of blobs) row[i] = row[i] === null ? null : Buffer.from(String(row[i]), 'hex');
      return rows;
    };
    const access = this.access;
    // Left before the end, the transaction is open on the connection: not reused.
    const { rows, close } = leasedRows(
      lease,
      async function* () {
        let batch = first.rows as unknown[][];
        while (batch.length > 0) {
          yield decode(batch);
          if (batch.length < FETCH_ROWS) break;
          batch = (await client.query({ text: `FETCH ${FETCH_ROWS} FROM vdb_procedure`, rowMode: 'array', types: AS_TEXT })).rows;
        }
      },
      () => client.query('COMMIT'),
      (err) => (signal.aborted ? signal.reason : access.statementError(err, lease)),
    );
    return { columns, rawTypes: columns.map((c) => rawTypeOfPostgres(c.type)), rows, close };
  }
}
