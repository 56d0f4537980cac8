/**
 * Drops the feed's deletion and contact changes older than CHATLOG_CHANGES_KEEP_DAYS (CONTRACT §9),
 * at start and every hour, on every node (dropping is idempotent). A message's own change stays as
 * long as the message.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../../store/store.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const EVERY_MS = 60 * 60 * 1000;

export class ChangesPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly options: {
      store: Pick<Store, 'changes'>;
      keepDays: number;
      log: FastifyBaseLogger;
      clock?: () => number;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    this.run();
    this.timer = setInterval(() => this.run(), EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Drops what is past keeping now; resolves to how many changes. */
  async pruneNow(): Promise<number> {
    const now = (this.options.clock ?? Date.now)();
    const dropped = await this.options.store.changes.dropBefore(now - this.options.keepDays * DAY_MS);
    if (dropped > 0)
      this.options.log.info({ dropped }, 'dropped feed changes past CHATLOG_CHANGES_KEEP_DAYS');
    return dropped;
  }

  private run(): void {
    this.running ??= this.pruneNow()
      .then(() => undefined)
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'dropping old feed changes failed'))
      .finally(() => {
        this.running = undefined;
      });
  }
}
