/**
 * One statement of a wire client through vdb's request stages, as POST /rest/api/query runs it
 * (server/result-delivery.ts): admitted under the user's limits (their roles' timeout and row
 * limit, statements at once per user, a place among the instance's running statements), opened
 * by the engine (permissions, row conditions, masks), cancelled at its deadline, by a
 * CancelRequest or when the client goes, one query-log record per statement, result bytes
 * counted in the metrics. The rows come as PostgreSQL's texts, a chunk at a time.
 */
import { readingOf } from '../sources/copies.js';
import { ApiError, SourceFailure } from '../errors.js';
import type { UserDef } from '../catalog/types.js';
import { queryLogFields, type Execution } from '../engine/exec/execute.js';
import type { ParamValue } from '../engine/front/params.js';
import { arrayRowValues } from '../results/json-scan.js';
import { concurrencyOf, limitsOf, roleTimeout, tooManyRows } from '../security/statement-limits.js';
import { timeoutError } from '../errors.js';
import type { Services } from '../services.js';
import { columnTexts } from './types.js';

/** Who runs the statement, as the session signed in. */
export interface Caller {
  user: UserDef;
  /** Signed in with an API key as the password: its read-only flag. */
  apiKey: { readOnly: boolean } | null;
}

/** A statement opened and ready to read; `end` must be called once, whatever happens. */
export interface OpenStatement {
  execution: Execution;
  /** The rows as PostgreSQL's texts, in chunks; each row counted toward the user's row limit. */
  rows: AsyncGenerator<Array<Array<string | null>>>;
  /** Rows read so far. */
  readonly sent: number;
  /** Cancels the statement (the client's CancelRequest, the client gone). */
  cancel(reason: ApiError): void;
  /** Logs the outcome and frees what the statement holds (its places, the engine's connection). */
  end(error?: unknown): Promise<void>;
  /** The error to tell the client for `err` met while reading. */
  translate(err: unknown): unknown;
}

/** A statement's "does not exist" (a 404 of the catalog) is the statement's fault, as REST answers it: a 400. */
function statementError(err: unknown): unknown {
  if (err instanceof ApiError && err.status === 404) return new ApiError(400, 'Invalid query', err.description, err.hint);
  return err;
}

export const clientGone = () => new ApiError(499, 'Client closed request', 'The client went away.');
export const cancelledByClient = () => new ApiError(499, 'Query cancelled', 'canceling statement due to user request');

const sourceQueriesOf = queryLogFields;

/** The places the statement holds: the user's statements at once, then one of the instance's. */
async function admit(
  services: Services,
  user: UserDef,
  limits: ReturnType<typeof limitsOf>,
  timeoutMs: number,
  gone: AbortSignal,
): Promise<() => void> {
  const concurrency = concurrencyOf(user, limits, services.config.statements.maxPerUser);
  const userReleased = concurrency
    ? await services.statements.acquire(user.name, concurrency.max, Date.now() + timeoutMs, concurrency.setting)
    : () => undefined;
  try {
    const placeReleased = await services.admission.acquire(user.name, Date.now() + timeoutMs, gone);
    return () => {
      placeReleased();
      userReleased();
    };
  } catch (err) {
    userReleased();
    throw err;
  }
}

/**
 * Opens `sql` for `caller`. `cancel` is the statement's own: the session aborts it with an
 * ApiError (a CancelRequest, the client gone), and so does its deadline. Errors are thrown as
 * ApiErrors, already logged.
 */
export async function openStatement(
  services: Services,
  caller: Caller,
  sql: string,
  values: readonly ParamValue[],
  cancel: AbortController,
  /** The session's statement_timeout (as REST's timeout parameter); null: queryTimeoutMs. */
  sessionTimeoutMs: number | null = null,
  /** The session's vdb.max_staleness (as REST's maxStaleness parameter); undefined: each copy's own bound. */
  maxStaleness?: number,
): Promise<OpenStatement> {
  const { user } = caller;
  const limits = limitsOf(user, services.config.roleLimits);
  const requested = sessionTimeoutMs ?? services.config.queryTimeoutMs;
  const roleCapsTime = limits.statementTimeoutMs !== null && limits.statementTimeoutMs < requested;
  const timeoutMs = roleCapsTime ? limits.statementTimeoutMs! : requested;
  const record = services.queryLog.begin(user.name, sql);
  const failed = (err: unknown, execution?: Execution, cancelled = false) =>
    record({
      rows: null,
      status: cancelled ? 'cancelled' : 'error',
      error: err instanceof ApiError ? err.description : err instanceof Error ? err.message : String(err),
      ...sourceQueriesOf(execution),
      failedSource: err instanceof SourceFailure ? err.source : undefined,
      narrowed: execution?.narrowed,
    });
  let release: () => void;
  try {
    release = await admit(services, user, limits, timeoutMs, cancel.signal);
  } catch (err) {
    failed(err);
    throw err;
  }
  let finished: () => void;
  try {
    finished = services.lifecycle.begin(cancel);
  } catch (err) {
    release();
    failed(err);
    throw err;
  }
  const timer = setTimeout(() => cancel.abort(roleCapsTime ? roleTimeout(user.name, timeoutMs) : timeoutError(timeoutMs)), timeoutMs);
  const free = () => {
    clearTimeout(timer);
    finished();
    release();
  };
  let execution: Execution;
  try {
    execution = await services.engine.open(sql, user, cancel.signal, {
      readOnly: caller.apiKey?.readOnly,
      apiKey: caller.apiKey !== null,
      params: values,
      reading: readingOf(maxStaleness),
    });
    if (cancel.signal.aborted) {
      execution.close();
      throw cancel.signal.reason;
    }
  } catch (err) {
    free();
    const answer = cancel.signal.aborted ? cancel.signal.reason : statementError(err);
    failed(answer, undefined, cancel.signal.aborted);
    throw answer;
  }
  return readable(services, execution, cancel, limits.maxRowsPerStatement, user.name, record, failed, free);
}

function readable(
  services: Services,
  execution: Execution,
  cancel: AbortController,
  maxRows: number | null,
  userName: string,
  record: ReturnType<Services['queryLog']['begin']>,
  failed: (err: unknown, execution?: Execution, cancelled?: boolean) => void,
  free: () => void,
): OpenStatement {
  let sent = 0;
  const options = { cancelled: () => cancel.signal.aborted };
  // One row more than allowed is asked for: its arrival is the refusal.
  const limit = maxRows === null ? undefined : maxRows + 1;
  const streamed = execution.stream('array', { limit }, options);
  const chunks = execution.streamsFromSource ? services.spools.spool(streamed, cancel.signal) : streamed;
  const texts = columnTexts(execution.columns);
  async function* rows(): AsyncGenerator<Array<Array<string | null>>> {
    try {
      for await (const chunk of chunks) {
        services.metrics.countResultBytes(chunk.length);
        const batch = arrayRowValues(chunk).map((row) => row.map((token, i) => texts[i]!(token)));
        sent += batch.length;
        if (maxRows !== null && sent > maxRows) throw tooManyRows(userName, maxRows);
        yield batch;
      }
    } finally {
      await chunks.return(undefined);
    }
  }
  let ended = false;
  const translate = (err: unknown) => (cancel.signal.aborted ? cancel.signal.reason : statementError(execution.translateError(err)));
  return {
    execution,
    rows: rows(),
    get sent() {
      return sent;
    },
    cancel: (reason) => cancel.abort(reason),
    translate,
    async end(error?: unknown) {
      if (ended) return;
      ended = true;
      // Closing the rows closes the source's stream too, also when they were never read.
      await this.rows.return(undefined).catch(() => undefined);
      await chunks.return(undefined).catch(() => undefined);
      if (error === undefined && !cancel.signal.aborted) {
        record({ rows: sent, status: 'ok', error: null, ...sourceQueriesOf(execution), narrowed: execution.narrowed });
      } else failed(error ?? cancel.signal.reason, execution, cancel.signal.aborted);
      execution.close();
      free();
    },
  };
}
