/**
 * The row count of a cursor. The pagination headers give no total (docs/rest.md), but an offset
 * past the end answers []: doubling, then halving, finds the count in about 2·log2(n) one-row reads.
 */

/**
 * Smallest n >= known such that row n does not exist, given that rows 0..known-1 exist.
 * `exists(i)` tells whether row i exists.
 */
export async function countRows(known: number, exists: (index: number) => Promise<boolean>): Promise<number> {
  let present = known - 1; // highest index known to exist (-1: none)
  let absent = Math.max(known, 1);
  while (await exists(absent)) {
    present = absent;
    absent *= 2;
  }
  while (absent - present > 1) {
    const mid = Math.floor((present + absent) / 2);
    if (await exists(mid)) present = mid;
    else absent = mid;
  }
  return present + 1;
}
