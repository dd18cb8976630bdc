/**
 * Engine (DuckDB) errors in the terms of the REST contract: the statement's fault is a 400,
 * an interruption is the caller's timeout or cancellation, a full or unwritable spill folder
 * vdb's storage failure (507/503), anything else a logged 500.
 * Internal relation names in messages are turned back into the names the user wrote.
 */
import { ApiError, badRequest, sourceFailed, valueTooLarge } from '../../errors.js';
import { BATCH_LIMIT_MARK, VALUE_LIMIT_MARK } from '../../runtime/value-macros.js';
import { engineStorageFailure } from '../../runtime/storage-errors.js';

const USER_ERRORS =
  /^(Parser|Binder|Catalog|Conversion|Invalid Input|Out of Range|Not implemented|Constraint|Syntax|Dependency|Invalid type|Type mismatch|Mismatch Type) Error:/i;

/**
 * The engine's messages quote the SQL it ran (a LINE excerpt with a caret): that is vdb's
 * rewritten statement, not the user's, so the excerpt is dropped.
 */
export const withoutExcerpt = (message: string) =>
  message
    .split(/\n\s*\nLINE \d+:|\nLINE \d+:/)[0]!
    // Candidates name only the columns vdb loaded for this statement, not the table's columns.
    .replace(/\n?Candidate bindings:.*$/s, '')
    .trim();

export function engineError(
  err: unknown,
  rename: (message: string) => string,
  /** The data source a failed file read belongs to, if any. */
  sourceOfFile: (message: string) => string | null = () => null,
): ApiError | null {
  if (err instanceof ApiError) return err;
  const message = withoutExcerpt(err instanceof Error ? err.message : String(err));
  // The engine's spill files are vdb's own storage: never a file source's failure, nor memory.
  const storage = engineStorageFailure(message);
  if (storage) return storage;
  if (/^IO Error:/.test(message)) {
    const source = sourceOfFile(message);
    if (source) return sourceFailed(source, message.replace(/^IO Error:\s*/, ''), /No files found|Cannot open|No such file/i.test(message));
  }
  if (/Overflow in (multiplication|addition|subtraction) of INT128/.test(message)) {
    // The engine's numeric arithmetic (runtime/numeric-macros.ts) holds 38 digits, PostgreSQL's more.
    return new ApiError(
      400,
      'Invalid query',
      `A numeric value of more than 38 digits is not supported by vdb's engine (${message.replace(/^[A-Za-z ]+Error:\s*/, '')}).`,
      'Cast to double precision (x::float8), or round the values first.',
    );
  }
  const tooLarge = valueLimitError(message);
  if (tooLarge) return tooLarge;
  if (USER_ERRORS.test(message)) {
    const [kind, ...rest] = message.split(':');
    const description = rename(rest.join(':').trim());
    return new ApiError(400, 'Invalid query', description, hintFor(kind ?? '', description));
  }
  if (/^Permission Error:/.test(message)) {
    return new ApiError(403, 'Forbidden', rename(message.replace(/^Permission Error:\s*/, '')), null);
  }
  if (/^Out of Memory Error:/.test(message)) {
    return new ApiError(
      503,
      'Out of memory',
      'The engine ran out of memory for this statement.',
      'Narrow the query, or use pagination with a smaller result.',
    );
  }
  return null;
}

/** A value refused by the macros of runtime/value-macros.ts, as the 400 that names the limit. */
function valueLimitError(message: string): ApiError | null {
  const value = new RegExp(`${VALUE_LIMIT_MARK}:([^:]+):(\\d+)`).exec(message);
  if (value)
    return valueTooLarge(
      value[1]!.includes(' ') ? `${value[1]![0]!.toUpperCase()}${value[1]!.slice(1)}` : `${value[1]}()`,
      Number(value[2]),
    );
  const batch = new RegExp(`${BATCH_LIMIT_MARK}:(\\d+)`).exec(message);
  if (!batch) return null;
  return badRequest(
    `The statement would build more than ${batch[1]} bytes of values for one batch of 2,048 rows, its share of the engine's memory (engineMemoryLimit).`,
    'Build smaller values, or fewer rows of them (LIMIT, conditions).',
    'Values too large',
  );
}

function hintFor(kind: string, description: string): string | null {
  if (/Catalog/i.test(kind) && /Function/i.test(description)) return 'Check the function name and its argument types.';
  if (/Binder/i.test(kind) && /column/i.test(description)) return 'SYS.Columns lists the columns of every table.';
  if (/Conversion/i.test(kind))
    return 'A value does not fit the type it is converted to; check the data or convert with a CASE that skips such values.';
  return null;
}

export const isInterrupt = (err: unknown) => err instanceof Error && /^INTERRUPT Error/i.test(err.message);
