/**
 * Runs the reads at the same time under one signal: the first that fails or gives up (null: more
 * rows than the limit, a value that cannot go) stops the others at once, so that no source goes
 * on with a statement whose answer is no longer wanted. Their results in order; null when one
 * gave up; the first failure thrown (errors of the reads stopped after it are theirs to ignore).
 */
export async function readTogether<T>(reads: Array<(signal: AbortSignal) => Promise<T | null>>, signal: AbortSignal): Promise<T[] | null> {
  const group = new AbortController();
  const together = AbortSignal.any([signal, group.signal]);
  let failure: { error: unknown } | null = null;
  let gaveUp = false;
  const settled = await Promise.allSettled(
    reads.map((read) =>
      read(together).then(
        (value) => {
          if (value === null && !group.signal.aborted) {
            gaveUp = true;
            group.abort();
          }
          return value;
        },
        (error: unknown) => {
          if (!group.signal.aborted) {
            failure = { error };
            group.abort();
          }
          throw error;
        },
      ),
    ),
  );
  if (failure) throw (failure as { error: unknown }).error;
  if (gaveUp) return null;
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
}
