/**
 * The rows of a MySQL/MariaDB `CALL` as they arrive: the driver's events (`fields` per result
 * set, `result` per row) fill a queue that the reader empties in batches; past a high-water
 * mark the connection stops reading its socket (backpressure), so no large answer is held here.
 * The first result set is the answer; the rows of later ones are dropped as they come.
 */
import type { FieldPacket, PoolConnection } from 'mysql2';

/** Rows queued at most before the connection pauses. */
const HIGH_WATER = 8192;

export class CallRows {
  private readonly queue: unknown[][] = [];
  private resultSets = 0;
  private ended = false;
  private failure: unknown = null;
  private paused = false;
  /** Wakes the reader waiting for rows, the end or a failure. */
  private wake: (() => void) | null = null;
  /** The first result set's columns ([] for none), once they are known. */
  readonly fields: Promise<FieldPacket[]>;

  constructor(
    private readonly connection: PoolConnection,
    sql: string,
    values: unknown[],
  ) {
    let resolveFields!: (fields: FieldPacket[]) => void;
    let rejectFields!: (err: unknown) => void;
    this.fields = new Promise((resolve, reject) => ([resolveFields, rejectFields] = [resolve, reject]));
    const call = connection.execute({ sql, values, rowsAsArray: true });
    // The status of the CALL comes as a `fields` event without fields, and a `result` that is no row.
    call.on('fields', (fields: FieldPacket[] | undefined) => {
      if (!fields) return;
      if (++this.resultSets === 1) resolveFields(fields);
    });
    call.on('result', (row: unknown) => {
      if (this.resultSets !== 1 || !Array.isArray(row)) return;
      this.queue.push(row);
      if (this.queue.length >= HIGH_WATER && !this.paused) {
        this.paused = true;
        connection.pause();
      }
      this.signal();
    });
    call.on('error', (err: unknown) => {
      this.failure = err;
      rejectFields(err);
      this.signal();
    });
    call.on('end', () => {
      this.ended = true;
      resolveFields([]);
      this.signal();
    });
  }

  /** The answer's rows, `batchRows` at a time; rejects with the driver's error. */
  async *batches(batchRows: number): AsyncGenerator<unknown[][]> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.queue.length >= batchRows || (this.ended && this.queue.length > 0)) {
        yield this.queue.splice(0, batchRows);
        continue;
      }
      if (this.ended) return;
      if (this.paused) {
        this.paused = false;
        this.connection.resume();
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
