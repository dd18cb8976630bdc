/**
 * Row counts a client asks for with `Prefer: count=exact` or `count=estimated` (as PostgREST):
 * answered in `Content-Range: <first>-<last>/<total>` (`*\/<total>` when the response holds no
 * row) and `Preference-Applied: count=<how it was counted>`.
 *
 * | request | exact | estimated |
 * |---|---|---|
 * | paginated (`pagination=true`, a `requestId` page) | the cursor's row count | the same (it is exact and known) |
 * | a table's rows (GET /source/{schema}/{table}), not paginated | `SELECT count(*)` of the table as the user sees it | the source's statistics (the catalog's row estimate) when the table has one and the user sees the table whole; else exact |
 * | anything else | not counted (no headers) | not counted |
 */
import type { CopyReading } from '../sources/copies.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TableDef, UserDef } from '../catalog/types.js';
import type { Execution } from '../engine/exec/execute.js';
import type { Services } from '../services.js';

export type CountMethod = 'exact' | 'estimated';

/** The count the request prefers (Prefer: count=exact | count=estimated), or null. */
export function countPreference(prefer: string | string[] | undefined): CountMethod | null {
  const text = Array.isArray(prefer) ? prefer.join(',') : (prefer ?? '');
  for (const token of text.split(/[,;]/)) {
    const m = /^\s*count\s*=\s*"?(exact|estimated)"?\s*$/i.exec(token);
    if (m) return m[1]!.toLowerCase() as CountMethod;
  }
  return null;
}

/** The rows [offset, offset + limit) of `total` as Content-Range writes them. */
export function contentRange(offset: number, limit: number | undefined, total: number): string {
  const rows = Math.max(0, Math.min(limit ?? Number.POSITIVE_INFINITY, total - offset));
  return rows > 0 ? `${offset}-${offset + rows - 1}/${total}` : `*/${total}`;
}

export function setCount(reply: FastifyReply, method: CountMethod, offset: number, limit: number | undefined, total: number): void {
  reply.header('Content-Range', contentRange(offset, limit, total)).header('Preference-Applied', `count=${method}`);
}

/** A table's estimate from its source's statistics, where it may be shown: null when it has none or the user sees part of it. */
export function tableEstimate(table: TableDef, execution: Execution): number | null {
  if (execution.narrowed) return null;
  const estimate = table.cardinality;
  return estimate === null || !Number.isFinite(estimate) || estimate < 0 ? null : Math.round(estimate);
}

/** The rows of `sql` as `user` sees them, counted by the engine (a count the sources compute where they can). */
export async function exactCount(
  services: Services,
  http: FastifyRequest,
  user: UserDef,
  sql: string,
  signal: AbortSignal,
  /** Read as the statement counted is (local copies or live). */
  reading?: CopyReading,
): Promise<number> {
  const execution = await services.engine.open(`SELECT count(*) FROM (${sql}) AS counted`, user, signal, {
    readOnly: http.apiKey?.readOnly,
    apiKey: http.apiKey !== null,
    reading,
  });
  try {
    let text = '';
    for await (const chunk of execution.stream('array', {}, { cancelled: () => signal.aborted })) text += chunk;
    const [[count]] = JSON.parse(`[${text}]`) as [[number]];
    return Number(count);
  } catch (err) {
    throw execution.translateError(err);
  } finally {
    execution.close();
  }
}
