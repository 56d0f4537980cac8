/**
 * How busy the process is with clients, for background work that yields to them (webhook
 * deliveries: webhooks.worker.ts lets a backlog go a few at a time while busy). Busy is either of:
 *
 * - over BUSY_REQUESTS_PER_SECOND requests a second with the event loop over BUSY_LOOP_UTILIZATION
 *   used, in the last window of a quarter second. At 0.95 a backlog's deliveries halved webhook
 *   ingest (Q5) on SQLite; at 0.5 it was 0.92 of Q5 alone.
 * - writes queueing: a write (POST: a webhook, an ingest) arrived, on average over the last window,
 *   while BUSY_OPEN_WRITES others were open, or twice as many are open now. On PostgreSQL the
 *   process mostly waits for the database, whose CPU the deliveries share: while 32 senders kept
 *   about 25 writes open, the event loop went above and below half used from one window to the
 *   next, and each window counted as quiet let a backlog go 64 at a time. At 200 webhooks a second
 *   (the wake-up goal's rate) 3 to 9 are open. `bench/feed.ts --parts 2,3`,
 *   bench/results/2026-11-27-issue-16.md.
 */
import { performance } from 'node:perf_hooks';

const WINDOW_MS = 250;
/** A window older than this says nothing any more (no request came since). */
const STALE_MS = 1000;
const BUSY_REQUESTS_PER_SECOND = 200;
const BUSY_LOOP_UTILIZATION = 0.5;
const BUSY_OPEN_WRITES = 12;

export class TrafficMeter {
  private since: number;
  private requests = 0;
  private writes = 0;
  private openAtWrites = 0;
  private openWrites = 0;
  private loop = performance.eventLoopUtilization();
  /** The last window's figures. */
  private perSecond = 0;
  private used = 0;
  private queuedWrites = 0;
  private readonly closeWrite = () => {
    this.openWrites -= 1;
  };

  constructor(private readonly clock: () => number = Date.now) {
    this.since = clock();
  }

  /**
   * Counts a request as it arrives. A write is open until the function returned is called (when
   * its response closes, however it ends).
   */
  arrived(write: boolean): (() => void) | undefined {
    this.requests += 1;
    let close: (() => void) | undefined;
    if (write) {
      this.writes += 1;
      this.openAtWrites += this.openWrites;
      this.openWrites += 1;
      close = this.closeWrite;
    }
    const now = this.clock();
    const elapsed = now - this.since;
    if (elapsed >= WINDOW_MS) {
      this.perSecond = (this.requests * 1000) / elapsed;
      const loop = performance.eventLoopUtilization();
      this.used = performance.eventLoopUtilization(loop, this.loop).utilization;
      this.loop = loop;
      this.queuedWrites = this.writes > 0 ? this.openAtWrites / this.writes : 0;
      this.requests = 0;
      this.writes = 0;
      this.openAtWrites = 0;
      this.since = now;
    }
    return close;
  }

  busy(): boolean {
    if (this.openWrites >= 2 * BUSY_OPEN_WRITES) return true;
    if (this.clock() - this.since >= STALE_MS) return false;
    return (
      (this.perSecond > BUSY_REQUESTS_PER_SECOND && this.used > BUSY_LOOP_UTILIZATION) ||
      this.queuedWrites >= BUSY_OPEN_WRITES
    );
  }
}
