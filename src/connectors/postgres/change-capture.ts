/**
 * Change capture of a PostgreSQL table for local copies of mode `changes` (docs/copies.md), by
 * logical replication over plain SQL: a publication of the table and a logical replication slot
 * of the built-in `pgoutput` plugin, both named by the copy. The slot keeps the log from its
 * creation; its changes are peeked (not consumed), folded into the last state of each changed
 * key, and passed (pg_replication_slot_advance) only once the copy holds them.
 */
import type pg from 'pg';
import type { ColumnDef, TableDef } from '../../catalog/types.js';
import type { CaptureRefusal, CapturedChanges, CapturedRow, ChangeCaptureConnector } from '../types.js';
import { engineTypeOfPostgres } from './types.js';
import { byteaFromText, decodePgOutput, UNCHANGED, type PgOutputMessage, type RelationColumn, type TupleValue } from './pgoutput.js';

export type CaptureQuery = (sql: string, values?: unknown[]) => Promise<pg.QueryResult>;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The slot's and the publication's name: only what PostgreSQL takes for a slot (a-z, 0-9, _). */
function checkedName(name: string): string {
  if (!/^[a-z0-9_]{1,63}$/.test(name)) throw new Error(`"${name}" is not a replication slot name`);
  return name;
}

interface CheckRow {
  wal_level: string;
  who: string;
  rolsuper: boolean;
  rolreplication: boolean;
  can_create: boolean;
  owns: boolean | null;
  relkind: string | null;
  identity: string | null;
}

export class PostgresChangeCapture implements ChangeCaptureConnector {
  constructor(private readonly query: CaptureQuery) {}

  async unavailable(table: TableDef, keyColumns: readonly ColumnDef[]): Promise<CaptureRefusal | null> {
    const { rows } = await this.query(
      `SELECT current_setting('wal_level') AS wal_level, current_user AS who, r.rolsuper, r.rolreplication,
              has_database_privilege(current_database(), 'CREATE') AS can_create,
              pg_has_role(c.relowner, 'USAGE') AS owns, c.relkind::text AS relkind, c.relreplident::text AS identity
         FROM pg_roles r LEFT JOIN pg_class c ON c.oid = to_regclass($1)
        WHERE r.rolname = current_user`,
      [table.nameInSource],
    );
    const row = rows[0] as CheckRow;
    const name = table.nameInSource;
    if (row.wal_level !== 'logical')
      return {
        reason: `The source's wal_level is ${row.wal_level}; reading changes needs wal_level = logical.`,
        hint: 'Set it at the source (ALTER SYSTEM SET wal_level = logical) and restart PostgreSQL, or use another mode.',
      };
    if (!row.rolsuper && !row.rolreplication)
      return {
        reason: `The source's user ${row.who} lacks the REPLICATION privilege, which a replication slot needs.`,
        hint: `Grant it at the source (ALTER ROLE ${quote(row.who)} REPLICATION), or use another mode.`,
      };
    if (!row.rolsuper && (!row.owns || !row.can_create))
      return {
        reason: `The source's user ${row.who} ${row.owns ? 'lacks CREATE on the database' : `does not own ${name}`}; a publication of the table needs both.`,
        hint: 'Connect the source as the table owner with CREATE on the database, or use another mode.',
      };
    if (row.relkind !== 'r')
      return { reason: `${name} is not a plain table at the source.`, hint: 'Use mode full for views and partitioned tables.' };
    if (keyColumns.length === 0 || (row.identity !== 'd' && row.identity !== 'f'))
      return {
        reason: `${name} has no primary key that identifies its changed rows${keyColumns.length ? ` (its REPLICA IDENTITY is not the default)` : ''}.`,
        hint: 'Give the table a primary key (and the default REPLICA IDENTITY), or use mode full.',
      };
    return null;
  }

  async start(name: string, table: TableDef): Promise<void> {
    const slot = checkedName(name);
    // The publication first: the slot decodes each change with the catalog as it was then.
    await this.query(`CREATE PUBLICATION ${quote(slot)} FOR TABLE ${table.nameInSource}`);
    try {
      await this.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    } catch (err) {
      await this.query(`DROP PUBLICATION IF EXISTS ${quote(slot)}`).catch(() => undefined);
      throw err;
    }
  }

  async read(name: string, table: TableDef, keyColumns: readonly ColumnDef[], limit: number): Promise<CapturedChanges> {
    const slot = checkedName(name);
    let result: pg.QueryResult<{ data: Buffer }>;
    try {
      result = await this.query(
        `SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, $2, 'proto_version', '1', 'publication_names', $3)`,
        [slot, limit, quote(slot)],
      );
    } catch (err) {
      // The slot is gone (dropped at the source) or invalidated (past max_slot_wal_keep_size): only a whole read brings the copy back.
      const code = (err as { code?: string }).code;
      if (code === '42704' || code === '55000')
        return { upTo: null, messages: 0, wholeReason: `${slot}: ${(err as Error).message}`, rows: [] };
      throw err;
    }
    const messages = result.rows.map((r) => decodePgOutput(r.data));
    if (messages.length >= limit) return { upTo: null, messages: messages.length, wholeReason: `more than ${limit} changes`, rows: [] };
    const folded = new ChangeFold(table, keyColumns);
    for (const message of messages) folded.apply(message);
    const wholeReason = folded.wholeReason ?? (await this.columnsChanged(table, folded.relations));
    return { upTo: folded.upTo, messages: messages.length, wholeReason, rows: wholeReason ? [] : folded.rows() };
  }

  /** Why the relation's columns are not the table's as vdb knows them (names and engine types), or null. */
  private async columnsChanged(table: TableDef, relations: RelationColumn[][]): Promise<string | null> {
    const [columns] = relations;
    if (!columns) return null;
    const types = await this.query(
      'SELECT format_type(t, m) AS t FROM unnest($1::oid[], $2::int[]) WITH ORDINALITY AS x(t, m, i) ORDER BY i',
      [columns.map((c) => c.typeOid), columns.map((c) => c.typeModifier)],
    );
    for (const column of table.columns) {
      const at = columns.findIndex((c) => c.name === column.nameInSource);
      if (at < 0) return `column ${column.nameInSource} is gone`;
      const type = engineTypeOfPostgres(String(types.rows[at]?.t));
      if (type !== column.type) return `column ${column.nameInSource} is now ${String(types.rows[at]?.t)}`;
    }
    return null;
  }

  async advance(name: string, upTo: string): Promise<void> {
    await this.query('SELECT pg_replication_slot_advance($1, $2::pg_lsn)', [checkedName(name), upTo]);
  }

  async drop(prefix: string, keep?: string): Promise<void> {
    const slots = await this.query(
      'SELECT slot_name FROM pg_replication_slots WHERE database = current_database() AND starts_with(slot_name, $1)',
      [prefix],
    );
    for (const { slot_name: slot } of slots.rows as Array<{ slot_name: string }>) {
      if (slot !== keep) await this.query('SELECT pg_drop_replication_slot($1)', [slot]);
    }
    const publications = await this.query('SELECT pubname FROM pg_publication WHERE starts_with(pubname, $1)', [prefix]);
    for (const { pubname } of publications.rows as Array<{ pubname: string }>) {
      if (pubname !== keep) await this.query(`DROP PUBLICATION IF EXISTS ${quote(pubname)}`);
    }
  }
}

/**
 * The changes of whole transactions folded into the last state of each key: an insert or update
 * sets its row, a delete (or an update that moved the row to another key) marks its key deleted.
 * Applied to a copy holding any state between the slot's start and now, this gives the source's
 * rows as of the last commit read (replaying a change the copy holds already changes nothing).
 */
class ChangeFold {
  readonly relations: RelationColumn[][] = [];
  upTo: string | null = null;
  wholeReason: string | null = null;
  private positions: number[] | null = null;
  private keyPositions: number[] | null = null;
  private readonly last = new Map<string, { key: string[]; row: TupleValue[] | null }>();

  constructor(
    private readonly table: TableDef,
    private readonly keyColumns: readonly ColumnDef[],
  ) {}

  apply(message: PgOutputMessage): void {
    if (this.wholeReason) return;
    switch (message.kind) {
      case 'commit':
        this.upTo = message.endLsn;
        return;
      case 'relation':
        return this.relation(message.columns);
      case 'truncate':
        this.wholeReason = `${this.table.nameInSource} was truncated`;
        return;
      case 'insert':
        return this.set(message.row, message.row);
      case 'update':
        if (message.old) {
          const old = this.keyOf(message.old);
          if (old.join('\u0000') !== this.keyOf(message.row).join('\u0000')) this.last.set(JSON.stringify(old), { key: old, row: null });
        }
        return this.set(message.row, this.withUnchanged(message.row));
      case 'delete': {
        const key = this.keyOf(message.old);
        this.last.set(JSON.stringify(key), { key, row: null });
        return;
      }
      default:
    }
  }

  private relation(columns: RelationColumn[]): void {
    const same = (a: RelationColumn[], b: RelationColumn[]) =>
      a.length === b.length &&
      a.every((c, i) => c.name === b[i]!.name && c.typeOid === b[i]!.typeOid && c.typeModifier === b[i]!.typeModifier);
    if (this.relations.length > 0 && !same(this.relations[0]!, columns)) {
      this.wholeReason = `the columns of ${this.table.nameInSource} changed`;
      return;
    }
    this.relations.push(columns);
    const at = (name: string) => columns.findIndex((c) => c.name === name);
    this.positions = this.table.columns.map((c) => at(c.nameInSource));
    this.keyPositions = this.keyColumns.map((c) => at(c.nameInSource));
    const missing = [...this.table.columns, ...this.keyColumns].find((c) => at(c.nameInSource) < 0);
    if (missing) this.wholeReason = `column ${missing.nameInSource} is gone`;
  }

  private keyOf(tuple: TupleValue[]): string[] {
    return this.keyPositions!.map((p) => {
      const value = tuple[p];
      if (typeof value !== 'string') throw new Error(`a change of ${this.table.nameInSource} came without its key`);
      return value;
    });
  }

  private set(tuple: TupleValue[], row: TupleValue[] | null): void {
    const key = this.keyOf(tuple);
    this.last.set(JSON.stringify(key), { key, row });
  }

  /** An update's row with the TOASTed values it left out taken from the key's earlier change read now, where there is one. */
  private withUnchanged(row: TupleValue[]): TupleValue[] {
    if (!row.includes(UNCHANGED)) return row;
    const earlier = this.last.get(JSON.stringify(this.keyOf(row)))?.row;
    return row.map((v, i) => (v === UNCHANGED && earlier ? earlier[i]! : v));
  }

  rows(): CapturedRow[] {
    const blobs = this.table.columns.map((c) => c.type === 'BLOB');
    return [...this.last.values()].map(({ key, row }) => {
      if (!row) return { key, values: null };
      const kept = this.positions!.flatMap((p, i) => (row[p] === UNCHANGED ? [i] : []));
      const values = this.positions!.map((p, i) => {
        const value = row[p] === UNCHANGED ? null : (row[p] as string | null);
        return value !== null && blobs[i] ? byteaFromText(value) : value;
      });
      return kept.length > 0 ? { key, values, kept } : { key, values };
    });
  }
}
