/**
 * Ending a source's work locally, whatever the source does. A statement's deadline (timeout, a
 * role's timeout) and a client that went away abort its signal: what waits on the source then
 * fails at once with the signal's reason, while the connector cancels the source statement
 * best-effort and destroys the connection (a hung or partitioned source never answers).
 */

/** How long a cancel at the source (pg_cancel_backend, KILL QUERY) may take before the connection is destroyed. */
export const CANCEL_GRACE_MS = 1000;

/**
 * The source's connection was lost mid-statement (the server restarted, failed over, or ended
 * the session): the statement failed there (a 502 naming the source), unlike a source that cannot
 * be reached at all (503).
 */
export class ConnectionLostError extends Error {
  constructor(detail: string) {
    super(`the connection was lost during the statement (${detail})`);
    this.name = 'ConnectionLostError';
  }
}

/**
 * Settles as `promise`, or rejects with `signal`'s reason as soon as it aborts. A value that
 * arrives after that is handed to `late` (to give back a connection); a late failure is ignored.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, late?: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    promise.then(
      (value) => late?.(value),
      () => undefined,
    );
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      settled = true;
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) late?.(value);
        else resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) reject(err as Error);
      },
    );
  });
}

/**
 * `source`'s items until `signal` aborts: then the waiting `next()` rejects with its reason at
 * once. The source is let go of in the background (its pending read ends when the connector
 * destroys the connection), never awaited after an abort.
 */
export async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      const next = await untilAborted(iterator.next(), signal);
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) {
      const closing = iterator.return?.();
      if (closing) {
        if (signal.aborted) closing.catch(() => undefined);
        else await closing;
      }
    }
  }
}

/** `promise`, or a rejection after `ms` (the promise's later failure is ignored). */
export function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A signal that never aborts, for work that has no statement of its own. */
export const NEVER = new AbortController().signal;

/** Drivers' connections whose errors are handled for good. */
const guarded = new WeakSet<object>();

/** Handles `connection`'s errors for good: an error after the last listener of a statement went must not crash the process. */
export function guardErrors(connection: { on(event: 'error', listener: () => void): unknown }): void {
  if (guarded.has(connection)) return;
  guarded.add(connection);
  connection.on('error', () => undefined);
}
