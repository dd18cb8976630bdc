/**
 * The process's life as operations see it: whether it is stopping (readiness turns false first),
 * and the statements in flight, so that a shutdown can let them finish within a deadline and
 * then cancel them at their sources.
 */
import { ApiError } from '../errors.js';

export class Lifecycle {
  private stoppingSince: number | null = null;
  private readonly running = new Set<AbortController>();

  get stopping(): boolean {
    return this.stoppingSince !== null;
  }

  /** Tracks a statement until `finished` is called; refused with 503 once the process stops. */
  begin(cancel: AbortController): () => void {
    if (this.stopping) {
      throw new ApiError(
        503,
        'Shutting down',
        'This vdb instance is stopping and takes no new statements.',
        'Send the request again; another instance (or this one, restarted) answers it.',
      );
    }
    this.running.add(cancel);
    return () => this.running.delete(cancel);
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** Readiness off, new statements refused; running ones may go on. */
  beginStopping(): void {
    this.stoppingSince ??= Date.now();
  }

  /** Cancels every statement still running (at its sources too): the deadline has passed. */
  cancelRunning(): void {
    for (const cancel of this.running) {
      cancel.abort(
        new ApiError(503, 'Shutting down', 'This vdb instance stopped before the statement finished; it was cancelled.', 'Send it again.'),
      );
    }
  }
}
