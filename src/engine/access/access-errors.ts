/**
 * What a user is told when a statement over data narrowed for them fails. A binder error about
 * a hidden column is the 403 it really is; any other error raised while the statement runs is
 * withheld unless it is about names, because the engine or a source may evaluate the user's
 * expressions on rows before the row condition removes them, and a failing expression quotes
 * the value it failed on.
 */
import { randomBytes } from 'node:crypto';
import { ApiError, forbidden } from '../../errors.js';
import type { HiddenColumns } from './access.js';

/**
 * A binder error about a column the rewrite hid becomes the 403 it really is: the column
 * exists, the user may not read it.
 */
export function explainHiddenColumn(err: unknown, hidden: HiddenColumns, userName: string): unknown {
  if (!(err instanceof ApiError) || (err.status !== 400 && err.status !== 404) || hidden.size === 0) return err;
  for (const [name, qualified] of hidden) {
    const pattern = new RegExp(`(^|[^\\w$])"?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?([^\\w$]|$)`, 'i');
    if (pattern.test(err.description)) return hiddenColumnDenial(qualified, userName);
  }
  return err;
}

/** The 403 of a statement naming a column hidden from its user. */
export const hiddenColumnDenial = (qualified: string, userName: string) =>
  forbidden(
    `Permission READ on column ${qualified} is missing for user "${userName}".`,
    'An administrator can grant it with SYSADMIN.setPermissions.',
  );

/**
 * Messages vdb's own checks raise inside a statement (the INSERT row check). Each holds a random
 * tag, so that a user's error('...') cannot pass as one; registered while the check runs.
 */
const ownMessages = new Set<string>();

/** A message of one of vdb's own in-statement checks: shown even where errors are withheld. */
export function ownMessage(text: string): { text: string; release(): void } {
  const tagged = `${text} [check ${randomBytes(6).toString('hex')}]`;
  ownMessages.add(tagged);
  return { text: tagged, release: () => ownMessages.delete(tagged) };
}

/** Errors raised while a statement runs, by the engine or a source: they may quote values. */
const EXECUTION_ERRORS = new Set(['Invalid query', 'Data source error', 'Write refused']);
/** Messages about names and the statement's shape, which quote no value: kept. */
const NAME_ERROR =
  /referenced column|not found in FROM clause|does not have a column|column "?[\w.]+"? does not exist|relation "?[\w.]+"? does not exist|no function matches|syntax error|ambiguous|must appear in the GROUP BY|cannot be used in an aggregate|aggregate functions are not allowed/i;

/**
 * An error of a statement that reads data narrowed for its user, without its message unless it
 * is about names: the engine or a source may evaluate the user's expressions on rows before the
 * row condition removes them, and failing expressions (casts, arithmetic, date units, regular
 * expressions, error()) quote the value they failed on.
 */
export function withholdDataErrors(err: unknown): unknown {
  if (!(err instanceof ApiError) || !EXECUTION_ERRORS.has(err.title) || NAME_ERROR.test(err.description)) return err;
  if ([...ownMessages].some((message) => err.description.includes(message))) return err;
  return new ApiError(
    err.status,
    err.title,
    'The statement failed. The details are withheld: the statement reads data narrowed by your permissions.',
    'Check the casts, the arithmetic and the functions of the statement.',
  );
}
