/** What every way of opening a SELECT does to the execution it opens: its route marked, its errors guarded. */
import type { UserDef } from '../catalog/types.js';
import { explainHiddenColumn, withholdDataErrors } from './access/access-errors.js';
import type { HiddenColumns } from './access/access.js';
import type { Execution } from './exec/execute.js';
import type { Plan } from './plan/choose.js';

/** Marks how a SELECT was answered (metrics). */
export function routed(execution: Execution, route: Plan['route']): Execution {
  execution.route = route;
  return execution;
}

/**
 * The errors of a statement over narrowed data: a hidden column named is a 403, and what the
 * statement meets while it runs is withheld (access-errors.ts).
 */
export async function guarded<T>(
  opening: Promise<T>,
  executionOf: (opened: T) => Execution | null,
  narrowed: boolean,
  hiddenColumns: HiddenColumns,
  user: UserDef,
): Promise<T> {
  try {
    const opened = await opening;
    const execution = executionOf(opened);
    if (!narrowed || !execution) return opened;
    const translate = execution.translateError.bind(execution);
    Object.assign(execution, { narrowed, translateError: (err: unknown) => withholdDataErrors(translate(err)) });
    return opened;
  } catch (err) {
    const explained = explainHiddenColumn(err, hiddenColumns, user.name);
    throw narrowed ? withholdDataErrors(explained) : explained;
  }
}
