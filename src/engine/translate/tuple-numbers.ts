/**
 * Numbers distinct tuples of values 1, 2, ... in the order first seen, through a tree of maps
 * with one level per value, so no text is built per tuple. Values are compared as map keys
 * (SameValueZero): callers map values that must stay apart (-0) to keys of their own.
 */
export class TupleNumbers<Row> {
  private readonly root = new Map<unknown, unknown>();
  /** Distinct tuples seen so far (the last number given). */
  count = 0;

  /** Tuples of `width` values; `valueOf(row, k)` gives a row's k-th (no function made per row). */
  constructor(
    private readonly width: number,
    private readonly valueOf: (row: Row, k: number) => unknown,
  ) {}

  /** The number of the row's tuple; every tuple is alike when `width` is 0. */
  numberOf(row: Row): number {
    if (this.width === 0) return (this.count = 1);
    let level = this.root;
    for (let k = 0; k < this.width - 1; k++) {
      const value = this.valueOf(row, k);
      let next = level.get(value) as Map<unknown, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map()));
      level = next;
    }
    const last = this.valueOf(row, this.width - 1);
    let number = level.get(last) as number | undefined;
    if (number === undefined) level.set(last, (number = ++this.count));
    return number;
  }
}
