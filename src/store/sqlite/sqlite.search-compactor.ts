/**
 * Rewrites the search index without the entries of deleted messages, in the background, in bounded
 * steps (each its own short write transaction with a rest twice as long after it, as retention's
 * batches: webhooks get two thirds of the writer whatever the machine). A pass rewrites the whole
 * index, so it costs what the index holds, not what was deleted: an erasure asks for one always (its
 * entries must leave the file); a retention run asks for one that is made only when `worthIt` says
 * enough of the index is deleted entries. Asked again while a pass runs, it makes another pass
 * after it (a row deleted meanwhile may be in the part already rewritten). After a whole pass
 * `afterPass` runs (SQLite: the WAL checkpointed, so the old pages are in no file).
 */

const REST_FACTOR = 2;
const MIN_REST_MS = 5;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class SearchCompactor {
  private wanted: 'none' | 'if worth it' | 'always' = 'none';
  private running: Promise<void> | undefined;
  private stopping = false;
  private failure: unknown;

  constructor(
    private readonly step: (first: boolean) => Promise<boolean>,
    private readonly worthIt: () => Promise<boolean>,
    private readonly afterPass: () => Promise<void>,
  ) {}

  /**
   * A pass is wanted (`always`: after an erasure; otherwise when worth it): started now, or after
   * the one under way.
   */
  request(always: boolean): void {
    if (always) this.wanted = 'always';
    else if (this.wanted === 'none') this.wanted = 'if worth it';
    if (this.running || this.stopping) return;
    this.failure = undefined;
    this.running = this.run()
      .catch((error: unknown) => {
        this.failure = error;
      })
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Resolves when no pass is wanted or under way; rejects with what made the last one fail. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
    if (this.failure !== undefined && !this.stopping) throw this.failure;
  }

  /** Ends the work after the step under way (a later start resumes it: the index says what is left). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private async run(): Promise<void> {
    while (this.wanted !== 'none' && !this.stopping) {
      const wanted = this.wanted;
      this.wanted = 'none';
      if (wanted === 'if worth it' && !(await this.worthIt())) continue;
      for (let first = true; !this.stopping; first = false) {
        const started = performance.now();
        if (!(await this.step(first))) break;
        await sleep(Math.max(MIN_REST_MS, REST_FACTOR * (performance.now() - started)));
      }
      if (!this.stopping) await this.afterPass();
    }
  }
}
