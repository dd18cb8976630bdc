/**
 * A pooled connection leased for one statement, the same for every networked kind: a turn of
 * the source's pool first (pool-gate.ts: a full pool answers busy, never as an unreachable
 * source), a connect bounded by the statement's own end, the connection's errors handled (a
 * lost connection fails its statement, never the process), and on abort (timeout, client gone)
 * the statement cancelled at the source best-effort, the connection destroyed unless that is
 * done quickly. A connection that saw an error, was cancelled or left mid-statement is never
 * reused. What differs between drivers is the `PooledDriver`.
 */
import { CANCEL_GRACE_MS, ConnectionLostError, guardErrors, untilAborted, withinMs } from './abort.js';
import type { PoolGate } from './pool-gate.js';
import { SourceUnreachableError } from './types.js';

/** What a driver's pool offers a lease. */
export interface PooledDriver<C> {
  /** A connection of the pool (a new one, or an idle one). */
  connect(): Promise<C>;
  /** Gives the connection back to the pool, or (broken) removes and closes it at once. */
  release(connection: C, broken: boolean): void;
  /** Cancels the connection's running statement at the source, on a connection of its own. */
  cancel(connection: C): Promise<unknown>;
  /** Destroys the connection's socket now (never half-closed). */
  destroy(connection: C): void;
  /** The driver's error of a failed connect as the source's (SourceUnreachableError when it is away). */
  sourceError(err: unknown): Error;
}

export interface Lease<C> {
  connection: C;
  /** Not to be reused: it saw an error, was left mid-statement, or its statement was cancelled. */
  broken: boolean;
  /** The error that ended its connection, if one did. */
  lost: Error | null;
  /** Aborts when the work must stop: the statement's signal aborted, or the connection was lost. */
  stopped: AbortSignal;
  release(): void;
}

type ErrorSource = {
  on(event: 'error', listener: (err: Error) => void): unknown;
  off(event: 'error', listener: (err: Error) => void): unknown;
};

/** Leases a connection of `driver`'s pool for work that ends when `signal` aborts (also when it aborted before). */
export async function leaseConnection<C extends ErrorSource>(
  gate: PoolGate,
  driver: PooledDriver<C>,
  signal: AbortSignal,
): Promise<Lease<C>> {
  // A turn first: a full pool answers busy after poolWaitMs, never as a connect that timed out.
  const turn = await gate.enter(signal);
  let connection: C;
  const connecting = driver.connect();
  try {
    // A connect is bounded by the connect timeout, and by the statement's own end.
    connection = await untilAborted(connecting, signal);
  } catch (err) {
    if (signal.aborted) {
      // The connect goes on: a connection it brings late goes back to the pool, then the turn ends.
      connecting
        .then(
          (late) => driver.release(late, false),
          () => undefined,
        )
        .finally(turn.leave);
      throw signal.reason;
    }
    const failure = driver.sourceError(err);
    // The source is away: who waits for a turn hears it now, not after a connect of their own.
    if (failure instanceof SourceUnreachableError) gate.failWaiting(failure);
    turn.leave();
    throw failure;
  }
  turn.connected();
  guardErrors(connection);
  // Made when first asked for (most work never does): a signal costs as much as a short statement's other steps.
  let stop: AbortController | null = null;
  const stopWith = (reason: unknown) => (stop ??= new AbortController()).abort(reason);
  let released = false;
  const leased: Lease<C> = {
    connection,
    broken: false,
    lost: null,
    get stopped() {
      return (stop ??= new AbortController()).signal;
    },
    release: () => {
      if (released) return;
      released = true;
      signal.removeEventListener('abort', cancel);
      connection.off('error', onError);
      driver.release(connection, leased.broken || signal.aborted);
      turn.leave();
    },
  };
  // The connection lost under the work: its statement fails, never the process.
  const onError = (err: Error) => {
    leased.lost ??= err;
    leased.broken = true;
    stopWith(new ConnectionLostError(err.message));
    driver.destroy(connection);
  };
  connection.on('error', onError);
  // Cancelled (timeout, client gone): the work fails at once; the statement is cancelled at the
  // source best-effort, and the connection destroyed unless that is done quickly.
  const cancel = () => {
    leased.broken = true;
    stopWith(signal.reason);
    void withinMs(driver.cancel(connection), CANCEL_GRACE_MS)
      .catch(() => undefined)
      .finally(() => driver.destroy(connection));
  };
  signal.addEventListener('abort', cancel);
  if (signal.aborted) {
    leased.release();
    throw signal.reason;
  }
  return leased;
}

/**
 * Rows read on `lease` inside a transaction, for a caller that may never read them: `rows`
 * yields `batches` then runs `commit`; the lease goes back when they end, as broken when they
 * end early or fail (the transaction is still open on it), and `close` gives it back unread.
 */
export function leasedRows<C>(
  lease: Lease<C>,
  batches: () => AsyncIterable<unknown[][]>,
  commit: () => Promise<unknown>,
  failure: (err: unknown) => unknown,
): { rows: AsyncGenerator<unknown[][]>; close(): void } {
  let started = false;
  async function* rows(): AsyncGenerator<unknown[][]> {
    started = true;
    let done = false;
    try {
      yield* batches();
      await commit();
      done = true;
    } catch (err) {
      lease.broken = true;
      throw failure(err);
    } finally {
      if (!done) lease.broken = true;
      lease.release();
    }
  }
  const close = () => {
    if (started) return;
    started = true;
    lease.broken = true;
    lease.release();
  };
  return { rows: rows(), close };
}
