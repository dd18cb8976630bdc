/**
 * A signed-in client's session: the simple query (several statements in one text, each its
 * rows and tag, the first error ends the text) and the extended query (Parse, Bind, Describe,
 * Execute with a row limit, Sync, Close, Flush; named statements and portals). A portal holds its
 * open statement: an Execute with a row limit sends that many rows and PortalSuspended, and the
 * next Execute goes on from there without computing the result again.
 */
import type { ParamValue } from '../engine/front/params.js';
import type { Services } from '../services.js';
import { BodyReader, commandComplete, dataRow, dataRows, emptyMessage, MessageWriter, parameterStatus, readyForQuery } from './codec.js';
import type { Connection } from './connection.js';
import { errorFields, errorResponse, noticeResponse, WireError } from './errors.js';
import { cancelledByClient, clientGone, openStatement, type Caller, type OpenStatement } from './run-statement.js';
import { abortedBlock, sessionCommand, type CommandAnswer, type SessionState } from './session-commands.js';
import { SessionSettings } from './settings.js';
import { splitStatements, type Statement } from './statements.js';
import { copyHeader, copyLine, copyPlan, type CopyPlan } from './copy.js';
import type { ResultColumn } from '../results/json.js';
import { binaryValue, OID, pgTypeOf, type PgType } from './types.js';

/** A prepared statement (Parse). */
interface Prepared {
  statement: Statement;
  /** The parameter types the client declared (0: unspecified). */
  parameterTypes: number[];
  parameterCount: number;
}

/** A portal (Bind): a prepared statement with its values, opened at its first Describe or Execute. */
interface Portal {
  prepared: Prepared;
  values: ParamValue[];
  /** Per result column: binary (1) or text (0). */
  formats: number[];
  open: OpenStatement | null;
  /** A session command's answer, computed once. */
  answer: CommandAnswer | null;
  /** Rows read from the statement and not yet sent. */
  pending: Array<Array<string | null>>;
  sent: number;
  finished: boolean;
  /** A COPY ... TO STDOUT: how its rows are written. */
  copy: CopyPlan | null;
  /** The portal's statement's own: aborted by a CancelRequest, the client gone, its deadline. */
  stop: AbortController;
}

/** Statements that write: refused inside a block, which vdb could not roll back. */
const WRITES = new Set(['insert', 'update', 'delete']);
const WRITE_KEYWORDS = new Set(['CALL', 'CREATE', 'DROP', 'ALTER']);

export class Session implements SessionState {
  settings: SessionSettings;
  block: SessionState['block'] = 'idle';
  private readonly prepared = new Map<string, Prepared>();
  private readonly portals = new Map<string, Portal>();
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private skipping = false;

  constructor(
    private readonly services: Services,
    private readonly connection: Connection,
    private readonly caller: Caller,
    parameters: ReadonlyMap<string, string>,
  ) {
    this.settings = new SessionSettings(caller.user.name, parameters);
    // A client gone stops every open statement at once (their sources' queries too).
    connection.gone.signal.addEventListener('abort', () => this.stopAll(clientGone()));
  }

  private stopAll(reason: Error): void {
    for (const portal of this.portals.values()) portal.stop.abort(reason);
    for (const portal of this.simple) portal.stop.abort(reason);
  }

  /** The portals of the simple query running now (they have no name). */
  private readonly simple = new Set<Portal>();

  deallocate(name: string | null): void {
    if (name === null) this.prepared.clear();
    else this.prepared.delete(name);
  }

  /** The CancelRequest: the statement running now stops as a REST cancel stops it. */
  cancel(): void {
    this.stopAll(cancelledByClient());
  }

  /** Start-up's end: the settings, then ready. */
  greet(processId: number, secret: number): void {
    for (const [name, value] of this.settings.reported()) this.connection.send(parameterStatus(name, value));
    this.connection.send(new MessageWriter('K').int32(processId).int32(secret).end());
    this.ready();
  }

  private ready(): void {
    this.connection.send(readyForQuery(this.block === 'idle' ? 'I' : this.block === 'open' ? 'T' : 'E'));
  }

  /** Serves messages until the client terminates or goes away. */
  async serve(): Promise<void> {
    await this.connection.flush();
    try {
      for (let message = await this.connection.next(); message; message = await this.connection.next()) {
        const type = String.fromCharCode(message.type);
        if (type === 'X') break;
        await this.handle(type, new BodyReader(message.body));
        if (!this.connection.full && type !== 'S' && type !== 'Q' && type !== 'H') continue;
        await this.connection.flush();
      }
    } finally {
      await this.closeAll();
    }
  }

  private async handle(type: string, body: BodyReader): Promise<void> {
    // After an extended-protocol error everything up to Sync is skipped, a simple Query too.
    if (type === 'Q' && !this.skipping) return this.simpleQuery(body.cstring());
    if (type === 'S') {
      this.skipping = false;
      if (this.block === 'idle') await this.closePortals();
      return this.ready();
    }
    if (type === 'H' || this.skipping) return;
    try {
      if (type === 'P') return this.parse(body);
      if (type === 'B') return this.bind(body);
      if (type === 'D') return await this.describe(body);
      if (type === 'E') return await this.execute(body);
      if (type === 'C') return await this.close(body);
      throw new WireError('08P01', `unsupported message type "${type}"`);
    } catch (err) {
      this.fail(err);
      this.skipping = true;
    }
  }

  private fail(err: unknown, sql?: string): void {
    if (this.block === 'open') this.block = 'failed';
    this.connection.send(errorResponse(errorFields(err, sql)));
  }

  // ---- simple query ----

  private async simpleQuery(sql: string): Promise<void> {
    const statements = splitStatements(sql);
    if (statements.length === 0) this.connection.send(emptyMessage('I'));
    // Several statements run as one implicit transaction in PostgreSQL: a later failure undoes an
    // earlier write. vdb runs each on its own, so a text of several statements may only read.
    if (statements.length > 1 && statements.some((s) => this.writes(s))) {
      this.fail(
        new WireError(
          '25006',
          'vdb runs no transactions: a text of several statements may not write, since a later failure could not undo the write.',
          'Send each write as a statement of its own.',
        ),
      );
      this.ready();
      return;
    }
    for (const statement of statements) {
      const portal = this.portalOf({ statement, parameterTypes: [], parameterCount: 0 }, [], []);
      this.simple.add(portal);
      try {
        await this.describePortal(portal, true);
        await this.sendRows(portal, 0);
      } catch (err) {
        this.fail(err, statement.text);
        break;
      } finally {
        this.simple.delete(portal);
        await portal.open?.end();
      }
    }
    this.ready();
  }

  private writes(statement: Statement): boolean {
    return WRITES.has(statement.kind) || WRITE_KEYWORDS.has(statement.keyword);
  }

  private portalOf(prepared: Prepared, values: ParamValue[], formats: number[]): Portal {
    return {
      prepared,
      values,
      formats,
      open: null,
      answer: null,
      pending: [],
      sent: 0,
      finished: false,
      copy: null,
      stop: new AbortController(),
    };
  }

  // ---- extended query ----

  private parse(body: BodyReader): void {
    const name = body.cstring();
    const sql = body.cstring();
    const count = body.int16();
    const parameterTypes = Array.from({ length: count }, () => body.int32());
    const statements = splitStatements(sql);
    if (statements.length > 1) throw new WireError('42601', 'cannot insert multiple commands into a prepared statement');
    const statement = statements[0] ?? { text: sql, kind: 'other' as const, node: null, keyword: '' };
    const highest = Math.max(0, ...[...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    this.prepared.set(name, { statement, parameterTypes, parameterCount: Math.max(highest, count) });
    this.connection.send(emptyMessage('1'));
  }

  private bind(body: BodyReader): void {
    const portalName = body.cstring();
    const name = body.cstring();
    const prepared = this.prepared.get(name);
    if (!prepared) throw new WireError('26000', `prepared statement "${name}" does not exist`);
    const formatCount = body.int16();
    const formats = Array.from({ length: formatCount }, () => body.int16());
    const valueCount = body.int16();
    const values: ParamValue[] = [];
    for (let i = 0; i < valueCount; i++) {
      const length = body.int32();
      if (length < 0) {
        values.push(null);
        continue;
      }
      const bytes = body.bytes(length);
      const format = formats.length === 1 ? formats[0] : (formats[i] ?? 0);
      values.push(format === 1 ? binaryParameter(bytes, prepared.parameterTypes[i] ?? 0) : bytes.toString('utf8'));
    }
    const resultCount = body.int16();
    const resultFormats = Array.from({ length: resultCount }, () => body.int16());
    const existing = this.portals.get(portalName);
    if (existing && portalName !== '') throw new WireError('42P03', `cursor "${portalName}" already exists`);
    void existing?.open?.end();
    this.portals.set(portalName, this.portalOf(prepared, values, resultFormats));
    this.connection.send(emptyMessage('2'));
  }

  private async describe(body: BodyReader): Promise<void> {
    const what = String.fromCharCode(body.bytes(1)[0]!);
    const name = body.cstring();
    if (what === 'S') {
      const prepared = this.prepared.get(name);
      if (!prepared) throw new WireError('26000', `prepared statement "${name}" does not exist`);
      const types = Array.from({ length: prepared.parameterCount }, (_, i) => prepared.parameterTypes[i] || OID.text);
      const writer = new MessageWriter('t').int16(types.length);
      for (const type of types) writer.int32(type);
      this.connection.send(writer.end());
      // A query's columns are learned by opening it with NULL values, then closing it unread. Nothing
      // else is run to be described (a write would write, a SET would set): NoData.
      if (prepared.statement.kind !== 'select') {
        this.connection.send(emptyMessage('n'));
        return;
      }
      const probe = this.portalOf(
        prepared,
        types.map(() => null),
        [],
      );
      try {
        await this.describePortal(probe, false);
      } finally {
        await probe.open?.end();
      }
      return;
    }
    const portal = this.portals.get(name);
    if (!portal) throw new WireError('34000', `portal "${name}" does not exist`);
    await this.describePortal(portal, false);
  }

  private async execute(body: BodyReader): Promise<void> {
    const name = body.cstring();
    const maxRows = body.int32();
    const portal = this.portals.get(name);
    if (!portal) throw new WireError('34000', `portal "${name}" does not exist`);
    try {
      await this.ensureOpen(portal);
      await this.sendRows(portal, maxRows);
    } catch (err) {
      await portal.open?.end(err);
      portal.finished = true;
      throw err;
    }
  }

  private async close(body: BodyReader): Promise<void> {
    const what = String.fromCharCode(body.bytes(1)[0]!);
    const name = body.cstring();
    if (what === 'S') this.prepared.delete(name);
    else {
      await this.portals.get(name)?.open?.end();
      this.portals.delete(name);
    }
    this.connection.send(emptyMessage('3'));
  }

  // ---- running a portal ----

  /** Opens the portal's statement (or answers its session command) once. */
  private async ensureOpen(portal: Portal): Promise<void> {
    if (portal.open || portal.answer || portal.finished) return;
    const { statement } = portal.prepared;
    if (statement.kind === 'session' && statement.node) {
      portal.answer = sessionCommand(statement.node, this);
      for (const [name, value] of portal.answer.reported) this.connection.send(parameterStatus(name, value));
      portal.pending = portal.answer.rows;
      return;
    }
    if (this.block === 'failed') throw abortedBlock();
    let text = statement.text;
    if (statement.kind === 'copy' && statement.node && 'CopyStmt' in statement.node) {
      portal.copy = copyPlan(statement.node.CopyStmt);
      text = portal.copy.query;
    }
    if (this.block === 'open' && this.writes(statement)) {
      throw new WireError(
        '25006',
        'vdb runs no transactions: a write inside BEGIN ... COMMIT could not be rolled back.',
        'Send writes outside a transaction block (autocommit).',
      );
    }
    portal.open = await openStatement(
      this.services,
      this.caller,
      text,
      portal.values,
      portal.stop,
      this.settings.statementTimeoutMs(),
      this.settings.maxStalenessSeconds(),
    );
    for (const warning of portal.open.execution.warnings) this.connection.send(noticeResponse(warning));
  }

  /** RowDescription, or NoData for a statement without rows. `simple`: the simple query sends no NoData. */
  private async describePortal(portal: Portal, simple: boolean): Promise<void> {
    await this.ensureOpen(portal);
    if (!portal.answer && this.returnsRows(portal)) {
      this.connection.send(rowDescription(portal.open!.execution.columns, portal.formats));
      return;
    }
    const columns = portal.answer
      ? portal.answer.columns?.map((name) => ({ name, type: { oid: OID.text, size: -1, modifier: -1 } }))
      : this.returnsRows(portal)
        ? portal.open!.execution.columns.map((c) => ({ name: c.name, type: pgTypeOf(c.type) }))
        : undefined;
    if (!columns) {
      if (!simple) this.connection.send(emptyMessage('n'));
      return;
    }
    this.connection.send(describeColumns(columns, portal.formats));
  }

  private returnsRows(portal: Portal): boolean {
    return !WRITES.has(portal.prepared.statement.kind) && portal.copy === null && (portal.open?.execution.columns.length ?? 0) > 0;
  }

  private formatOf(portal: Portal, column: number): number {
    return formatIn(portal.formats, column);
  }

  /** Sends up to `maxRows` rows (0: all), then the tag, or PortalSuspended when rows remain. */
  private async sendRows(portal: Portal, maxRows: number): Promise<void> {
    if (portal.finished) {
      this.connection.send(commandComplete(this.tagOf(portal, 0)));
      return;
    }
    if (portal.copy) return this.sendCopy(portal, portal.copy);
    const rowsToClient = portal.answer !== null || this.returnsRows(portal);
    const binary = portal.open?.execution.columns.map((c, i) => (this.formatOf(portal, i) === 1 ? c.type : null));
    const anyBinary = binary?.some((t) => t !== null) ?? false;
    let count = 0;
    let firstValue: string | null = null;
    for (;;) {
      if (maxRows > 0 && count >= maxRows) {
        if (portal.pending.length === 0 && !(await this.readMore(portal))) break;
        this.connection.send(emptyMessage('s'));
        return;
      }
      if (portal.pending.length === 0 && !(await this.readMore(portal))) break;
      if (rowsToClient && maxRows <= 0 && !anyBinary) {
        // All the rows are asked for: a chunk's rows go as one buffer.
        const rows = portal.pending;
        portal.pending = [];
        this.connection.send(dataRows(rows));
        count += rows.length;
        portal.sent += rows.length;
        if (this.connection.full) await this.connection.flush();
        if (this.connection.gone.signal.aborted) throw clientGone();
        continue;
      }
      const row = portal.pending.shift()!;
      if (!rowsToClient) {
        firstValue ??= row[0] ?? null;
        continue;
      }
      this.connection.send(anyBinary ? binaryRow(row, binary!) : dataRow(row));
      count++;
      portal.sent++;
      if (this.connection.full) await this.connection.flush();
      if (this.connection.gone.signal.aborted) throw clientGone();
    }
    portal.finished = true;
    const tag = this.tagOf(portal, rowsToClient ? portal.sent : Number(firstValue ?? 0));
    await portal.open?.end();
    this.connection.send(commandComplete(tag));
  }

  /** The rows of a COPY ... TO STDOUT: CopyOutResponse, a CopyData per line, CopyDone, `COPY n`. */
  private async sendCopy(portal: Portal, plan: CopyPlan): Promise<void> {
    const columns = portal.open!.execution.columns;
    const response = new MessageWriter('H').byte(0).int16(columns.length);
    for (let i = 0; i < columns.length; i++) response.int16(0);
    this.connection.send(response.end());
    const data = (line: string) => this.connection.send(new MessageWriter('d').add(Buffer.from(line, 'utf8')).end());
    if (plan.header)
      data(
        copyHeader(
          columns.map((c) => c.name),
          plan,
        ),
      );
    while (portal.pending.length > 0 || (await this.readMore(portal))) {
      for (const row of portal.pending) data(copyLine(row, plan));
      portal.sent += portal.pending.length;
      portal.pending = [];
      if (this.connection.full) await this.connection.flush();
      if (this.connection.gone.signal.aborted) throw clientGone();
    }
    portal.finished = true;
    await portal.open?.end();
    this.connection.send(emptyMessage('c'));
    this.connection.send(commandComplete(`COPY ${portal.sent}`));
  }

  /** Reads the next chunk of the portal's rows; false at their end. */
  private async readMore(portal: Portal): Promise<boolean> {
    if (!portal.open) return false;
    let next: IteratorResult<Array<Array<string | null>>>;
    try {
      next = await portal.open.rows.next();
    } catch (err) {
      throw portal.open.translate(err);
    }
    if (next.done) return false;
    portal.pending = next.value;
    return true;
  }

  private tagOf(portal: Portal, count: number): string {
    if (portal.answer) return portal.answer.tag;
    const { kind, keyword } = portal.prepared.statement;
    if (kind === 'select') return `SELECT ${count}`;
    if (kind === 'insert') return `INSERT 0 ${count}`;
    if (kind === 'update') return `UPDATE ${count}`;
    if (kind === 'delete') return `DELETE ${count}`;
    if (keyword === 'CREATE' || keyword === 'DROP')
      return `${keyword} ${/\bVIEW\b/i.test(portal.prepared.statement.text) ? 'VIEW' : ''}`.trim();
    if (keyword === 'VALUES' || keyword === 'TABLE' || keyword === 'WITH') return `SELECT ${count}`;
    return keyword;
  }

  private async closePortals(): Promise<void> {
    for (const portal of this.portals.values()) await portal.open?.end();
    this.portals.clear();
  }

  private async closeAll(): Promise<void> {
    this.stopAll(clientGone());
    await this.closePortals();
  }
}

/** A result column's format code: one code for all, one per column, or none (text). */
const formatIn = (formats: readonly number[], column: number) => (formats.length === 1 ? formats[0]! : (formats[column] ?? 0));

/** RowDescription of columns with their types and formats. */
function describeColumns(columns: ReadonlyArray<{ name: string; type: PgType }>, formats: readonly number[]): Buffer {
  const writer = new MessageWriter('T').int16(columns.length);
  columns.forEach((column, i) => {
    writer.cstring(column.name).int32(0).int16(0).int32(column.type.oid).int16(column.type.size).int32(column.type.modifier);
    writer.int16(formatIn(formats, i));
  });
  return writer.end();
}

/** RowDescriptions of statements' result columns: a known statement's columns are the same list each time. */
const rowDescriptions = new WeakMap<readonly ResultColumn[], Map<string, Buffer>>();

function rowDescription(columns: readonly ResultColumn[], formats: readonly number[]): Buffer {
  let byFormats = rowDescriptions.get(columns);
  if (!byFormats) rowDescriptions.set(columns, (byFormats = new Map()));
  const key = formats.join(',');
  let message = byFormats.get(key);
  if (!message) {
    message = describeColumns(
      columns.map((c) => ({ name: c.name, type: pgTypeOf(c.type) })),
      formats,
    );
    // A client's formats are few; a bound on them all the same.
    if (byFormats.size >= 16) byFormats.clear();
    byFormats.set(key, message);
  }
  return message;
}

/** A parameter sent in binary: the integer, float and boolean types; others are refused. */
function binaryParameter(bytes: Buffer, type: number): ParamValue {
  if (type === OID.int2 && bytes.length === 2) return bytes.readInt16BE(0);
  if (type === OID.int4 && bytes.length === 4) return bytes.readInt32BE(0);
  if (type === OID.int8 && bytes.length === 8) return bytes.readBigInt64BE(0).toString();
  if (type === OID.float4 && bytes.length === 4) return bytes.readFloatBE(0);
  if (type === OID.float8 && bytes.length === 8) return bytes.readDoubleBE(0);
  if (type === OID.bool && bytes.length === 1) return bytes[0] !== 0;
  if (type === OID.text || type === OID.unknown) return bytes.toString('utf8');
  throw new WireError('0A000', `vdb takes parameters of type ${type} in text format only.`, 'Send the parameter in text format.');
}

/** A DataRow with the binary columns encoded. */
function binaryRow(row: ReadonlyArray<string | null>, binary: ReadonlyArray<Parameters<typeof binaryValue>[1] | null>): Buffer {
  const writer = new MessageWriter('D').int16(row.length);
  row.forEach((value, i) => {
    if (value === null) {
      writer.int32(-1);
      return;
    }
    const type = binary[i];
    const bytes = type ? binaryValue(value, type) : Buffer.from(value, 'utf8');
    writer.int32(bytes.length).add(bytes);
  });
  return writer.end();
}
