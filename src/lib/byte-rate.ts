/**
 * A budget of bytes per second shared by several streams (a token bucket of one second's worth):
 * each stream's chunks pass once the budget has room for them, so together the streams move at
 * most `bytesPerSecond`, each at its share. Back-pressure does the rest: a stream that waits here
 * stops reading its source. The budget may change from one moment to the next (a function: the
 * content worker's is smaller while the process is busy with clients); Infinity is no limit.
 */
import { Transform, type TransformCallback } from 'node:stream';

export class ByteRate {
  private available: number;
  private last: number;
  private queue: Promise<void> = Promise.resolve();

  private readonly budget: () => number;

  constructor(
    bytesPerSecond: number | (() => number),
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.budget = typeof bytesPerSecond === 'number' ? () => bytesPerSecond : bytesPerSecond;
    const first = this.budget();
    this.available = Number.isFinite(first) ? first : 0;
    this.last = clock();
  }

  /** Resolves once `bytes` fit in the budget (taken in the order asked). */
  take(bytes: number): Promise<void> {
    const turn = this.queue.then(() => this.wait(bytes));
    this.queue = turn;
    return turn;
  }

  private async wait(bytes: number): Promise<void> {
    for (;;) {
      const now = this.clock();
      const bytesPerSecond = this.budget();
      if (bytesPerSecond === Number.POSITIVE_INFINITY) {
        // No limit now: a limit set later starts from an empty second.
        this.available = 0;
        this.last = now;
        return;
      }
      this.available = Math.min(bytesPerSecond, this.available + ((now - this.last) * bytesPerSecond) / 1000);
      this.last = now;
      // A chunk larger than a second's budget passes once the budget is full.
      const need = Math.min(bytes, bytesPerSecond);
      if (this.available >= need) {
        this.available -= bytes;
        return;
      }
      // Looked at again at least every 250 ms: the budget may have grown meanwhile.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(250, Math.ceil(((need - this.available) * 1000) / bytesPerSecond))),
      );
    }
  }

  /** A pass-through stream whose chunks take from this budget. */
  stream(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) => {
        this.take(chunk.length).then(() => done(null, chunk), done);
      },
    });
  }
}
