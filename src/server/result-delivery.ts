/**
 * Delivering results over HTTP, shared by the query and source endpoints: rows streamed for a
 * plain request, a cursor plus the pagination headers of spec 4.5 for a paginated one; in JSON,
 * or in the format the Accept header chooses (results/formats.ts), with the counts Prefer asks
 * for (counts.ts).
 */
import { readingOf } from '../sources/copies.js';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TableDef, UserDef } from '../catalog/types.js';
import { countPreference, exactCount, setCount, tableEstimate, type CountMethod } from './counts.js';
import { ApiError, badRequest, SourceFailure, timeoutError } from '../errors.js';
import { queryLogFields, type Execution } from '../engine/exec/execute.js';
import { cursorHeaderRow, type Cursor, type CursorColumn } from '../results/cursors.js';
import { columnTypeName, headerRow, type ResultColumn, type RowShape } from '../results/json.js';
import { CONTENT_TYPES, negotiateFormat, SUPPORTED_TYPES, type ResultFormat } from '../results/formats.js';
import { csvHeader, csvLines } from '../results/csv.js';
import { ndjsonLines } from '../results/ndjson.js';
import { ArrowStreamWriter, type TypedName } from '../results/arrow.js';
import { concurrencyOf, limitsOf, roleTimeout, tooManyRows } from '../security/statement-limits.js';
import type { Services } from '../services.js';
import { originOf } from './errors.js';
import type { ParamValue } from '../engine/front/params.js';
import type { ResultParams } from './params.js';

export type Endpoint = 'query' | 'source';

/** Header-safe text: printable ASCII, everything else escaped as \uXXXX. */
const headerText = (text: string) => text.replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The most bytes of a result's own header (types, warnings). Clients and proxies limit a
 * response's headers (Node's fetch 16 KB in all, nginx one 4 KB buffer by default), and a
 * result of a thousand columns would pass them: its rows would never arrive.
 */
export const RESULT_HEADER_BYTES = 8192;

/** The SQL-Warnings header of `warnings`: within RESULT_HEADER_BYTES, cut with a count when longer; null for none. */
export function warningsHeader(warnings: readonly string[]): string | null {
  if (warnings.length === 0) return null;
  const text = headerText(warnings.join('; '));
  if (text.length <= RESULT_HEADER_BYTES) return text;
  const more = ` (and more: ${warnings.length} warnings in all)`;
  // Not inside an escape (\uXXXX) the cut would leave half of.
  return text.slice(0, RESULT_HEADER_BYTES - more.length).replace(/\\u[0-9a-f]{0,3}$|\\$/, '') + more;
}

function setWarnings(reply: FastifyReply, warnings: readonly string[]): void {
  const header = warningsHeader(warnings);
  if (header !== null) reply.header('SQL-Warnings', header);
}

type TypedColumns = ReadonlyArray<ResultColumn | CursorColumn>;

/** The header of each list of columns: a known statement's columns are the same list each time. */
const columnTypeHeaders = new WeakMap<TypedColumns, string>();

/** The result's SQL types, a JSON array in column order: rows carry JSON values only (the console shows them). */
function setColumnTypes(reply: FastifyReply, columns: TypedColumns) {
  let header = columnTypeHeaders.get(columns);
  if (header === undefined) {
    header = headerText(JSON.stringify(columns.map((c) => (typeof c.type === 'string' ? c.type : columnTypeName(c.type)))));
    columnTypeHeaders.set(columns, header);
  }
  // Past the budget the types are left out (SYS.Columns has a table's); the rows still come.
  if (header.length <= RESULT_HEADER_BYTES) reply.header('SQL-Column-Types', header);
}

const sourceQueriesOf = queryLogFields;

/** The resource a cursor belongs to: the path after any hosted-link prefix, without query. */
const resourceOf = (request: FastifyRequest) => (request.url.split('?')[0] ?? '').replace(/^.*?(\/rest\/api\/)/, '$1').replace(/\/+$/, '');

/**
 * A statement's errors are the client's statement's (spec 7, an illegal query): a 400, never a
 * 404, which is kept for the REST resources (a requestId, /source/{name}). The catalog's "does
 * not exist" answers for names in a statement (schema, table, column, function, procedure,
 * source...) become 400 "Invalid query" with their description.
 */
export function statementError(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.status === 404) return new ApiError(400, 'Invalid query', err.description, err.hint, err.headers);
  return err;
}

/** A statement request as read from HTTP: what to run, for whom, and how to answer. */
interface StatementRequest {
  user: UserDef;
  sql: string;
  params: ResultParams;
  /** Values of the statement's $1, $2, ... (the body's "params"). */
  values?: readonly ParamValue[];
  endpoint: Endpoint;
  /** The resource a cursor of the result belongs to. */
  resource: string;
  /** The format the client accepts (Accept). */
  format: ResultFormat;
  /** The count the client asks for (Prefer: count=...), or null. */
  count: CountMethod | null;
  /** The table whose rows are asked for (GET /source/{schema}/{table}). */
  table?: TableDef;
  /** Opens the result instead of `sql`, which the log shows (a procedure's calls: GET, POST /source/{schema}/{procedure}). */
  open?: Opener;
}

/** Opens a result that is not one statement's text (a batch of procedure calls). */
export type Opener = (signal: AbortSignal, access: { readOnly?: boolean; apiKey: boolean }) => Promise<Execution>;

/** The request's one query-log record: the statement's outcome, written once whatever the path. */
interface RequestLog {
  ok(rows: number, execution: Execution): void;
  failed(err: unknown, execution?: Execution, cancelled?: boolean): void;
}

function requestLog(services: Services, request: StatementRequest): RequestLog {
  const record = services.queryLog.begin(request.user.name, request.sql);
  return {
    ok: (rows, execution) => record({ rows, status: 'ok', error: null, ...sourceQueriesOf(execution), narrowed: execution.narrowed }),
    failed: (err, execution, cancelled = false) =>
      record({
        rows: null,
        status: cancelled ? 'cancelled' : 'error',
        error: err instanceof ApiError ? err.description : err instanceof Error ? err.message : String(err),
        ...sourceQueriesOf(execution),
        failedSource: err instanceof SourceFailure ? err.source : undefined,
        narrowed: execution?.narrowed,
      }),
  };
}

/** A statement admitted to run: its time, its row limit, and the places it holds until it ends. */
interface Admitted {
  timeoutMs: number;
  /** The error of running out of time: the request's timeout, or a role's. */
  timedOut(): ApiError;
  /** Rows a statement of this user may answer (configuration roleLimits); null: any number. */
  maxRows: number | null;
  release(): void;
}

/**
 * Admits the statement: the roles' limits (a shorter timeout, fewer rows), the user's statements
 * at once (their roles', else statements.maxPerUser), then a place among the instance's running
 * statements (statement-limits.ts, Admission): never all of them.
 */
async function admit(services: Services, reply: FastifyReply, request: StatementRequest): Promise<Admitted> {
  const { user, params } = request;
  const limits = limitsOf(user, services.config.roleLimits);
  const roleCapsTime = limits.statementTimeoutMs !== null && limits.statementTimeoutMs < params.timeoutMs;
  const timeoutMs = roleCapsTime ? limits.statementTimeoutMs! : params.timeoutMs;
  const concurrency = concurrencyOf(user, limits, services.config.statements.maxPerUser);
  const gone = new AbortController();
  const leftWhileWaiting = () => gone.abort(new ApiError(499, 'Client closed request', 'The client went away.'));
  reply.raw.on('close', leftWhileWaiting);
  try {
    const userReleased = concurrency
      ? await services.statements.acquire(user.name, concurrency.max, Date.now() + timeoutMs, concurrency.setting)
      : () => undefined;
    let placeReleased: () => void;
    try {
      placeReleased = await services.admission.acquire(user.name, Date.now() + timeoutMs, gone.signal);
    } catch (err) {
      userReleased();
      throw err;
    }
    return {
      timeoutMs,
      timedOut: () => (roleCapsTime ? roleTimeout(user.name, timeoutMs) : timeoutError(timeoutMs)),
      maxRows: limits.maxRowsPerStatement,
      release: () => {
        placeReleased();
        userReleased();
      },
    };
  } finally {
    reply.raw.off('close', leftWhileWaiting);
  }
}

/** A statement running: its execution, cancelled at its deadline or when the client leaves; `end` frees what it holds. */
interface Running {
  execution: Execution;
  cancel: AbortController;
  end(): void;
}

/** Opens the statement under its deadline and the lifecycle (a stopping instance cancels it). */
async function run(
  services: Services,
  http: FastifyRequest,
  reply: FastifyReply,
  request: StatementRequest,
  admitted: Admitted,
  log: RequestLog,
): Promise<Running> {
  const cancel = new AbortController();
  const finished = services.lifecycle.begin(cancel);
  const timer = setTimeout(() => cancel.abort(admitted.timedOut()), admitted.timeoutMs);
  const onClose = () => {
    if (!reply.raw.writableFinished) cancel.abort(new ApiError(499, 'Client closed request', 'The client went away.'));
  };
  reply.raw.on('close', onClose);
  const end = () => {
    clearTimeout(timer);
    reply.raw.off('close', onClose);
    finished();
    admitted.release();
  };
  let execution: Execution;
  try {
    const access = { readOnly: http.apiKey?.readOnly, apiKey: http.apiKey !== null };
    execution = request.open
      ? await request.open(cancel.signal, access)
      : await services.engine.open(request.sql, request.user, cancel.signal, {
          ...access,
          params: request.values,
          reading: readingOf(request.params.maxStaleness),
        });
  } catch (err) {
    end();
    const answer = statementError(err);
    log.failed(answer, undefined, cancel.signal.aborted);
    throw answer;
  }
  if (cancel.signal.aborted) {
    execution.close();
    end();
    log.failed(cancel.signal.reason, execution, true);
    throw cancel.signal.reason;
  }
  return { execution, cancel, end };
}

/** Keeps the whole result as a cursor and answers its first page. */
async function respondPaginated(
  services: Services,
  http: FastifyRequest,
  reply: FastifyReply,
  request: StatementRequest,
  admitted: Admitted,
  running: Running,
  log: RequestLog,
): Promise<FastifyReply> {
  const { execution } = running;
  let cursor: Cursor;
  try {
    cursor = await services.cursors.create(execution, request.user.name, request.resource);
    if (admitted.maxRows !== null && cursor.rowCount > admitted.maxRows) {
      await services.cursors.remove(cursor.id);
      throw tooManyRows(request.user.name, admitted.maxRows);
    }
    log.ok(cursor.rowCount, execution);
  } catch (err) {
    const translated = statementError(execution.translateError(err));
    log.failed(translated, execution, running.cancel.signal.aborted);
    throw translated;
  } finally {
    execution.close();
    running.end();
  }
  return sendPage(services, http, reply, cursor, request.params, request.endpoint, request.format, request.count);
}

/** Streams the rows as they come. */
async function respondStreamed(
  services: Services,
  http: FastifyRequest,
  reply: FastifyReply,
  request: StatementRequest,
  admitted: Admitted,
  running: Running,
  log: RequestLog,
): Promise<FastifyReply> {
  const { execution, cancel } = running;
  const { params, format } = request;
  if (request.count && request.table) {
    try {
      const estimate = request.count === 'estimated' ? tableEstimate(request.table, execution) : null;
      const total =
        estimate ?? (await exactCount(services, http, request.user, request.sql, cancel.signal, readingOf(request.params.maxStaleness)));
      setCount(reply, estimate === null ? 'exact' : 'estimated', params.offset ?? 0, params.limit, total);
    } catch (err) {
      const answer = statementError(err);
      log.failed(answer, execution, cancel.signal.aborted);
      execution.close();
      running.end();
      throw answer;
    }
  }
  const shape = shapeOf(format, params);
  const header = format === 'json' && shape === 'array' && params.headers ? headerRow(execution.columns) : undefined;
  let sent = 0;
  const maxRows = admitted.maxRows;
  // With a row limit, one row more than allowed is asked for: its arrival is the refusal.
  const limit = maxRows === null || (params.limit !== undefined && params.limit <= maxRows) ? params.limit : maxRows + 1;
  const streamOptions = { cancelled: () => cancel.signal.aborted, onRows: (count: number) => (sent += count) };
  // CSV the source writes itself where it can (a statement PostgreSQL runs whole): the same text, no JSON in between;
  // Arrow and Parquet are made from it too (cheaper for the source than JSON).
  const sourceCsv = (format === 'csv' || format === 'arrow' || format === 'parquet') && execution.streamCsv !== undefined;
  const fromExecution = sourceCsv
    ? execution.streamCsv!({ limit, offset: params.offset }, streamOptions)
    : execution.stream(shape, { limit, offset: params.offset }, streamOptions);
  // Rows that come straight from a source's connection are read ahead of the client: a slow one does not hold the connection.
  const streamed = execution.streamsFromSource ? services.spools.spool(fromExecution, cancel.signal) : fromExecution;
  const rows = maxRows === null ? streamed : refuseBeyond(streamed, () => sent, maxRows, request.user.name);
  let error: unknown = null;
  const finish = () => {
    if (error === null && !cancel.signal.aborted) log.ok(sent, execution);
    else log.failed(error ?? cancel.signal.reason, execution, cancel.signal.aborted);
    execution.close();
    running.end();
  };
  setWarnings(reply, execution.warnings);
  setColumnTypes(reply, execution.columns);
  const translate = (err: unknown) => (error = statementError(execution.translateError(err)));
  if (format !== 'json') {
    const columns = execution.columns.map((c) => ({ name: c.name, type: columnTypeName(c.type) }));
    const encoded = sourceCsv ? (`${format}-from-csv` as const) : format;
    return sendFormatted(services, reply, encoded, columns, rows, finish, translate);
  }
  return sendRows(reply, rows, header, finish, translate, countBytes(services));
}

/** The shape of the JSON rows a format is written from: NDJSON's lines are objects, the others read arrays. */
const shapeOf = (format: ResultFormat, params: ResultParams): RowShape =>
  format === 'ndjson' ? 'object' : format !== 'json' || params.array ? 'array' : 'object';

/** The answer to an Accept header that names no format vdb writes. */
export const notAcceptable = (accept: string) =>
  new ApiError(
    406,
    'Not acceptable',
    `The Accept header "${headerText(accept.slice(0, 200))}" names no format vdb answers results in.`,
    `Accept one of: ${SUPPORTED_TYPES.join(', ')} (or */*, or no Accept header, for JSON).`,
  );

/**
 * Answers a result request in stages: read it, admit it (limits, places), run it, respond (a
 * cursor's page, or the rows streamed). A page of an existing cursor (requestId) is served as is.
 * One query-log record per statement.
 */
export async function sendResult(
  services: Services,
  http: FastifyRequest,
  reply: FastifyReply,
  user: UserDef,
  params: ResultParams,
  sql: string | undefined,
  endpoint: Endpoint,
  /** Values of the statement's $1, $2, ... (the body's "params"). */
  values?: readonly ParamValue[],
  /** The table whose rows are asked for (its rows can be counted from its statistics). */
  table?: TableDef,
  /** Opens the result instead of running `sql` (StatementRequest.open). */
  open?: Opener,
): Promise<FastifyReply> {
  const resource = resourceOf(http);
  const count = countPreference(http.headers.prefer);
  const format = negotiateFormat(http.headers.accept);
  if (format === null) throw notAcceptable(http.headers.accept ?? '');
  // The same URL answers in several formats: caches keep them apart.
  reply.header('Vary', 'Accept');
  if (params.requestId !== undefined) {
    const cursor = await services.cursors.get(params.requestId, user.name, resource);
    return sendPage(services, http, reply, cursor, params, endpoint, format, count);
  }
  if (sql === undefined) {
    throw badRequest('The body must be a JSON object with a "sql" string.', 'Example: {"sql": "SELECT 1"}', 'Missing SQL');
  }
  const request: StatementRequest = { user, sql, params, values, endpoint, resource, format, count, table, open };
  const log = requestLog(services, request);
  if (params.pagination && params.limit === 0) throw badRequest('With pagination, "limit" must be at least 1.', null, 'Invalid parameter');
  let admitted: Admitted;
  try {
    admitted = await admit(services, reply, request);
  } catch (err) {
    log.failed(err);
    throw err;
  }
  const running = await run(services, http, reply, request, admitted, log);
  return params.pagination
    ? respondPaginated(services, http, reply, request, admitted, running, log)
    : respondStreamed(services, http, reply, request, admitted, running, log);
}

/** Serves one chunk of a cursor with the pagination headers. */
async function sendPage(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  cursor: Cursor,
  params: ResultParams,
  endpoint: Endpoint,
  format: ResultFormat,
  count: CountMethod | null,
): Promise<FastifyReply> {
  const { defaultLimit, maxLimit } = services.config.pagination;
  if (params.limit === 0) throw badRequest('With pagination, "limit" must be at least 1.', null, 'Invalid parameter');
  const limit = Math.min(params.limit ?? defaultLimit, maxLimit);
  const offset = params.offset ?? 0;
  // The origin's Host was checked before the request got here (errors.ts, checkHost).
  const base = originOf(request) + (request.url.split('?')[0] ?? '/');
  const link = (linkOffset: number | null) => {
    const url = new URL(base);
    url.searchParams.set('requestId', cursor.id);
    url.searchParams.set('limit', String(limit));
    if (linkOffset !== null) url.searchParams.set('offset', String(linkOffset));
    if (endpoint === 'source') {
      // Source links set both, whatever the request had (spec 4.4: "the links set both to false").
      url.searchParams.set('array', 'false');
      url.searchParams.set('headers', 'false');
    } else {
      // Query links are requestId, limit and offset (spec 4.5), plus a shape other than the default.
      if (!params.array) url.searchParams.set('array', 'false');
      if (params.headers) url.searchParams.set('headers', 'true');
    }
    return url.toString();
  };
  reply.header('limit', String(limit)).header('offset', String(offset)).header('requestId', cursor.id);
  // Past the end, "previous" is the last real chunk.
  const prevOffset = Math.max(0, Math.min(offset, cursor.rowCount) - limit);
  reply.header('prevPage', link(offset === 0 && endpoint === 'source' ? null : prevOffset));
  if (offset + limit < cursor.rowCount) reply.header('nextPage', link(offset + limit));
  setWarnings(reply, cursor.warnings);
  setColumnTypes(reply, cursor.columns);
  // The cursor knows its rows: an estimate asked for is answered exactly.
  if (count) setCount(reply, 'exact', offset, limit, cursor.rowCount);
  const shape = shapeOf(format, params);
  if (format !== 'json') {
    return sendFormatted(
      services,
      reply,
      format,
      cursor.columns,
      services.cursors.page(cursor, offset, limit, shape),
      () => undefined,
      (e) => e,
    );
  }
  return sendRows(
    reply,
    services.cursors.page(cursor, offset, limit, shape),
    shape === 'array' && params.headers ? cursorHeaderRow(cursor) : undefined,
    () => undefined,
    (e) => e,
    countBytes(services),
  );
}

/**
 * Passes rows on while at most `max` were produced; the piece that goes beyond is never sent:
 * a 400 when it comes before the response started, else the response is cut short.
 */
async function* refuseBeyond(rows: AsyncGenerator<string>, produced: () => number, max: number, user: string): AsyncGenerator<string> {
  try {
    for await (const piece of rows) {
      if (produced() > max) throw tooManyRows(user, max);
      yield piece;
    }
  } finally {
    await rows.return(undefined);
  }
}

/**
 * Sends `[header?, rows...]` as a stream. The first chunk is awaited before the status is sent,
 * so errors found early still get their proper status; a failure after that aborts the
 * connection, and the client sees a truncated body rather than a wrong one.
 */
/** Rows are gathered into writes of about this many characters (fewer system calls, same stream). */
const WRITE_BYTES = 16 * 1024;

/** Counts the bytes of what is sent (the metrics' result bytes). */
const countBytes = (services: Services) => (text: string | Buffer) => services.metrics.countResultBytes(Buffer.byteLength(text));

async function sendRows(
  reply: FastifyReply,
  rows: AsyncGenerator<string>,
  header: string | undefined,
  finish: () => void,
  translateError: (err: unknown) => unknown,
  counted: (text: string) => void,
): Promise<FastifyReply> {
  let first: IteratorResult<string>;
  let second: IteratorResult<string> | null = null;
  try {
    first = await rows.next();
    // A result of one chunk (a point lookup, SELECT 1) is sent as one string, not as a stream.
    if (!first.done) second = await rows.next();
  } catch (err) {
    finish();
    throw translateError(err);
  }
  if (first.done || second?.done) {
    finish();
    const rowsText = first.done ? '' : (first.value ?? '');
    const opening = header !== undefined ? `[${header}${rowsText ? ',' : ''}` : '[';
    const text = `${opening}${rowsText}]`;
    counted(text);
    return reply.type('application/json; charset=utf-8').send(text);
  }
  const release = releaseOnClose(reply, rows, finish);
  async function* body(): AsyncGenerator<string> {
    try {
      let separate = header !== undefined;
      // Written in pieces of at least WRITE_BYTES: a small result is one write to the socket.
      let pending = `[${header ?? ''}`;
      let next = first;
      const queued: Array<IteratorResult<string>> = [second!];
      while (!next.done) {
        if (next.value) {
          pending += separate ? `,${next.value}` : next.value;
          separate = true;
        }
        if (pending.length >= WRITE_BYTES) {
          counted(pending);
          yield pending;
          pending = '';
        }
        next = queued.shift() ?? (await rows.next());
      }
      counted(`${pending}]`);
      yield `${pending}]`;
    } catch (err) {
      // Too late for a status: the connection is aborted, so the body is visibly incomplete.
      translateError(err);
      throw err;
    } finally {
      await release();
    }
  }
  return reply.type('application/json; charset=utf-8').send(Readable.from(body(), { objectMode: false }));
}

/** A format written piece by piece from chunks of JSON rows: a beginning, each chunk's piece, an end. */
interface Encoder {
  open(): string | Buffer;
  chunk(text: string): string | Buffer;
  close(): string | Buffer;
}

/** The formats vdb writes from JSON rows, and CSV or Arrow from the CSV lines a source wrote. */
type Encoded = 'csv-from-csv' | 'arrow-from-csv' | 'parquet-from-csv' | Exclude<ResultFormat, 'json'>;

function encoderOf(format: Exclude<Encoded, 'parquet' | 'parquet-from-csv'>, columns: readonly TypedName[]): Encoder {
  if (format === 'csv-from-csv') return { open: () => csvHeader(columns.map((c) => c.name)), chunk: (lines) => lines, close: () => '' };
  if (format === 'csv') return { open: () => csvHeader(columns.map((c) => c.name)), chunk: csvLines, close: () => '' };
  if (format === 'ndjson') return { open: () => '', chunk: ndjsonLines, close: () => '' };
  const writer = new ArrowStreamWriter(columns, format === 'arrow-from-csv' ? 'csv' : 'json');
  return { open: () => Buffer.alloc(0), chunk: (text) => writer.write(text), close: () => writer.end() };
}

/** Pieces joined for one write. */
const joined = (parts: ReadonlyArray<string | Buffer>): string | Buffer =>
  parts.every((p) => typeof p === 'string')
    ? parts.join('')
    : Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));

/**
 * Sends the rows in a format other than JSON (CSV, NDJSON, Arrow streamed; Parquet as a file).
 * As sendRows: the first chunk is awaited before the status, so early errors keep their status;
 * a failure later aborts the connection.
 */
async function sendFormatted(
  services: Services,
  reply: FastifyReply,
  format: Encoded,
  columns: readonly TypedName[],
  rows: AsyncGenerator<string>,
  finish: () => void,
  translateError: (err: unknown) => unknown,
): Promise<FastifyReply> {
  if (format === 'parquet' || format === 'parquet-from-csv') {
    return sendParquet(services, reply, columns, rows, format === 'parquet' ? 'json' : 'csv', finish, translateError);
  }
  const counted = countBytes(services);
  const encoder = encoderOf(format, columns);
  let first: IteratorResult<string>;
  try {
    first = await rows.next();
  } catch (err) {
    finish();
    throw translateError(err);
  }
  const release = releaseOnClose(reply, rows, finish);
  async function* body(): AsyncGenerator<string | Buffer> {
    try {
      let parts: Array<string | Buffer> = [encoder.open()];
      let size = parts[0]!.length;
      let next = first;
      while (!next.done) {
        const piece = encoder.chunk(next.value);
        parts.push(piece);
        size += piece.length;
        if (size >= WRITE_BYTES) {
          const out = joined(parts);
          counted(out);
          yield out;
          parts = [];
          size = 0;
        }
        next = await rows.next();
      }
      parts.push(encoder.close());
      const out = joined(parts);
      counted(out);
      yield out;
    } catch (err) {
      translateError(err);
      throw err;
    } finally {
      await release();
    }
  }
  const type = CONTENT_TYPES[format === 'csv-from-csv' ? 'csv' : format === 'arrow-from-csv' ? 'arrow' : format];
  return reply.type(type).send(Readable.from(body(), { objectMode: false }));
}

/** Writes the whole result as a Parquet file (its footer comes last), then sends it as a download. */
async function sendParquet(
  services: Services,
  reply: FastifyReply,
  columns: readonly TypedName[],
  rows: AsyncGenerator<string>,
  form: 'json' | 'csv',
  finish: () => void,
  translateError: (err: unknown) => unknown,
): Promise<FastifyReply> {
  let written: { file: string; remove: () => void };
  try {
    written = await services.parquet.write(columns, rows, form);
  } catch (err) {
    throw translateError(err);
  } finally {
    await rows.return(undefined).catch(() => undefined);
    finish();
  }
  // Opened, then deleted at once: the file goes with the response, whatever becomes of it.
  let fd: number;
  try {
    fd = fs.openSync(written.file, 'r');
  } finally {
    written.remove();
  }
  const size = fs.fstatSync(fd).size;
  services.metrics.countResultBytes(size);
  return reply
    .type(CONTENT_TYPES.parquet)
    .header('content-length', String(size))
    .header('content-disposition', 'attachment; filename="result.parquet"')
    .send(fs.createReadStream('', { fd }));
}

/**
 * Lets go of the rows (they hold a source's connection or the engine's) once, when the response
 * ends, also when the client left before the body was ever read (then the body never starts).
 */
function releaseOnClose(reply: FastifyReply, rows: AsyncGenerator<unknown>, finish: () => void): () => Promise<void> {
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      await rows.return(undefined);
    } finally {
      finish();
    }
  };
  if (reply.raw.closed || reply.raw.destroyed) void release().catch(() => undefined);
  else reply.raw.once('close', () => void release().catch(() => undefined));
  return release;
}
