/**
 * The one error type that crosses module borders. Every failure a client can see is an
 * ApiError: an HTTP status plus the `{title, description, hint}` body of the REST contract.
 * Anything else that reaches the HTTP layer is a bug and becomes a logged 500.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly description: string,
    readonly hint: string | null = null,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(`${title}: ${description}`);
    this.name = 'ApiError';
  }

  get body(): { title: string; description: string; hint: string | null } {
    return { title: this.title, description: this.description, hint: this.hint };
  }
}

export const badRequest = (description: string, hint: string | null = null, title = 'Bad request') =>
  new ApiError(400, title, description, hint);

export const notFound = (description: string, hint: string | null = null, title = 'Not found') =>
  new ApiError(404, title, description, hint);

export const forbidden = (description: string, hint: string | null = null) => new ApiError(403, 'Forbidden', description, hint);

/** A data source failed (502) or could not be reached (503); the message names the source. */
/** A data source failed or could not be reached: the error names it (the metrics count it by source). */
export class SourceFailure extends ApiError {
  constructor(
    readonly source: string,
    detail: string,
    unreachable: boolean,
  ) {
    super(
      unreachable ? 503 : 502,
      unreachable ? 'Data source unavailable' : 'Data source error',
      `Data source "${source}" ${unreachable ? 'cannot be reached' : 'failed'}: ${detail}`,
      unreachable ? 'Check that the source is running and reachable; a defined source is tried again on the next query.' : null,
    );
  }
}

export const sourceFailed = (source: string, detail: string, unreachable: boolean) => new SourceFailure(source, detail, unreachable);

export const timeoutError = (ms: number) =>
  new ApiError(
    504,
    'Query timeout',
    `The statement was cancelled after ${ms} ms.`,
    'Raise the timeout parameter (milliseconds) or narrow the query.',
  );

/** Message of an unknown thrown value, for logs. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A statement nested too deeply for vdb (an expression of thousands of terms): a 400, whether
 * the parser's depth check finds it or a recursion runs out of stack on it later.
 */
export const statementTooComplex = () =>
  new ApiError(
    400,
    'Statement too complex',
    'The statement nests expressions or subqueries too deeply for vdb.',
    'Split long chains of operators (a + b + c ...) or deeply nested subqueries; an IN list or an array keeps a long list of values flat.',
  );

/** A result wider than PostgreSQL allows (`SELECT *` over many wide tables). */
export const tooManyColumns = (count: number, limit: number) =>
  new ApiError(
    400,
    'Too many columns',
    `The statement's result would have ${count} columns; vdb answers at most ${limit}, as PostgreSQL's target lists hold at most 1664 entries.`,
    'Name the columns you need instead of SELECT *.',
  );

/** Whether `err` is JavaScript's stack overflow. */
export const isStackOverflow = (err: unknown) => err instanceof RangeError && /call stack/i.test(err.message);

/** A value larger than the configuration's `valueLimit`: built by `what` (a function), or met in a result. */
export const valueTooLarge = (what: string, limit: number) =>
  badRequest(
    `${what} would give a value of more than ${limit} bytes, the largest value vdb builds or returns (valueLimit).`,
    'Build smaller values (a shorter length, a narrower split), or ask an administrator about the valueLimit setting.',
    'Value too large',
  );

/**
 * Every pooled connection of a source stayed in use for the whole wait (poolWaitMs): the source
 * is fine, vdb's pool for it is full. A 503 with Retry-After, never "cannot be reached".
 */
export const sourceBusy = (source: string, size: number, waitedMs: number) =>
  new ApiError(
    503,
    'Data source busy',
    `Data source "${source}" is busy: all ${size} of its connections (maxConnections) stayed in use for ${waitedMs} ms.`,
    "Try again in a moment; if it happens often, raise the source's maxConnections (or poolWaitMs) model property.",
    { 'Retry-After': String(Math.max(1, Math.ceil(waitedMs / 1000))) },
  );

/**
 * vdb's own storage failed (the data directory: catalog, secrets, the engine's spill folder,
 * cursors' spill files): the error names vdb, never a data source. A full disk or a spent spill
 * budget is a 507; a data directory that cannot be written (read-only, missing, failing) a 503.
 */
export class StorageFailure extends ApiError {
  constructor(
    readonly full: boolean,
    /** What vdb was writing, e.g. "the catalog", "spill files of the engine". */
    what: string,
    detail: string,
  ) {
    super(
      full ? 507 : 503,
      full ? "vdb's storage is full" : "vdb's storage is unavailable",
      `vdb could not write ${what} in its data directory: ${detail}`,
      full
        ? "Not a fault of the data source: the disk of vdb's data directory (or its spill budget, engineSpillLimit) is full. Retry once an operator has made room; /readyz reports it."
        : "Not a fault of the data source: vdb's data directory is read-only, missing or failing. An operator must repair it; /readyz reports it.",
    );
  }
}
