/**
 * Turns of the event loop for the JavaScript work of long statements, one statement per turn.
 *
 * Allow-list, permission rewrite, binding, planning and writing SQL run on the main thread, each
 * stage without a pause: up to tens of ms for the largest statement allowed (statement-size.ts).
 * Stages of several statements ready at the same moment would run back to back, and a status
 * request or a sign-in would wait for all of them. A long statement awaits `turn()` before each
 * expensive stage: each turn resolves one waiter, first come first served, from a `setImmediate`
 * of its own; the next is scheduled from that one, so it runs in the next iteration of the event
 * loop, after the sockets have been read (and answered) again.
 */
export class CpuLane {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  /** Resolves in a turn of its own. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /** Statements waiting for a turn (tests). */
  get length(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()!();
      this.schedule();
    });
  }
}
