/**
 * The schedule of the local copies' refreshes: every tick, the copies whose refresh is due
 * (statements/copies.ts `isDue`: their period has passed, or a failed refresh waited out its
 * backoff) are refreshed. Every instance runs it; the copy's lock lets one refresh at a time.
 */
import type { Logger } from 'pino';
import type { CopyService } from '../engine/statements/copies.js';
import { messageOf } from '../errors.js';

/** How often the schedule looks for due copies. */
const TICK_MS = 1000;

export class CopySchedule {
  private timer: NodeJS.Timeout | null = null;
  /** Refreshes started by the schedule and not finished. */
  private readonly started = new Set<Promise<unknown>>();

  constructor(
    private readonly copies: CopyService,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** Starts the due refreshes; a copy being refreshed is not due again until it finished. */
  private tick(): void {
    if (this.copies.due(Date.now()).length === 0) return;
    const run = this.copies.runDue().catch((err: unknown) => this.log.warn({ err: messageOf(err) }, 'scheduled copy refreshes failed'));
    this.started.add(run);
    void run.finally(() => this.started.delete(run));
  }

  /** Stops scheduling and waits for the refreshes under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(this.started);
  }
}
