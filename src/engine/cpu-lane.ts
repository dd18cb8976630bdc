/**
 * One statement's JavaScript work at a time, each in a turn of the event loop of its own.
 *
 * Allow-list, permission rewrite, binding and planning run on the main thread without a pause
 * until the statement first waits for a source or the engine: up to a few tens of ms for the
 * largest statement allowed (statement-size.ts). Statements that arrive together would run those
 * stretches back to back, in one phase of the event loop, and a status request or a sign-in would
 * wait for all of them. The lane lets each statement in on a `setImmediate` turn after the one
 * before has let go, so the event loop reads sockets (and answers them) between any two.
 */
export class CpuLane {
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  /** Runs `work` (synchronous up to its first real wait) alone in its turn; returns its result. */
  async run<T>(work: () => T): Promise<T> {
    await this.enter();
    try {
      return work();
    } finally {
      this.leave();
    }
  }

  private enter(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      // Even the first waits a turn: requests read in this phase are answered first.
      return new Promise((resolve) => setImmediate(resolve));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private leave(): void {
    const next = this.waiting.shift();
    if (next) setImmediate(next);
    else this.busy = false;
  }
}
