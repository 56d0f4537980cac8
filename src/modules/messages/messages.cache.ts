/**
 * Small answers kept in memory, keyed by their ETag (hub, change counter, range) and encoding:
 * the same question about unchanged data ("yesterday", asked by a dashboard every minute) is
 * answered from memory. A change to the hub changes the counter, so a stale entry is never used;
 * it just ages out. Bounded in bytes (`CHATLOG_ANSWER_CACHE_MB`, 0 turns it off); an answer larger
 * than a sixteenth of the cache is never kept, so one export cannot flush everything else.
 */
import { Transform, type TransformCallback } from 'node:stream';

export class AnswerCache {
  private readonly entries = new Map<string, Buffer>();
  /** Answers being made now, by key: the same question asked meanwhile waits for it (built once). */
  private readonly building = new Map<string, Promise<void>>();
  private bytes = 0;
  /** The largest answer kept, measured as JSON before any compression. */
  readonly maxEntryBytes: number;

  constructor(private readonly maxBytes: number) {
    this.maxEntryBytes = Math.floor(maxBytes / 16);
  }

  get enabled(): boolean {
    return this.maxEntryBytes > 0;
  }

  get(key: string): Buffer | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, body: Buffer): void {
    if (body.length > this.maxEntryBytes || this.entries.has(key)) return;
    this.entries.set(key, body);
    this.bytes += body.length;
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= value.length;
    }
  }

  /**
   * Resolves once the answer of `key` that is being made now has ended (kept or not); undefined
   * when none is. 32 clients asking for the same day at once then read it once, not 32 times.
   */
  pending(key: string): Promise<void> | undefined {
    return this.building.get(key);
  }

  /**
   * Pass-throughs that hand the whole body to the cache when it ends, if the answer's JSON (before
   * any compression) was small: `measure` goes before the compressor, `keep` after it. `done` must
   * be called when the answer ends, however it ends (the pipeline's callback): the requests that
   * waited for it (pending) go on.
   */
  recorder(key: string): { measure: Transform; keep: Transform; done: () => void } {
    let finish = () => {};
    if (!this.building.has(key)) {
      this.building.set(
        key,
        new Promise<void>((resolve) => {
          finish = () => {
            this.building.delete(key);
            resolve();
          };
        }),
      );
    }
    let jsonBytes = 0;
    const measure = new Transform({
      transform: (chunk: Buffer, _encoding, callback: TransformCallback) => {
        jsonBytes += chunk.length;
        callback(null, chunk);
      },
    });
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = new Transform({
      transform: (chunk: Buffer, _encoding, callback: TransformCallback) => {
        size += chunk.length;
        if (size <= this.maxEntryBytes) chunks.push(chunk);
        callback(null, chunk);
      },
      flush: (callback: TransformCallback) => {
        if (jsonBytes <= this.maxEntryBytes && size <= this.maxEntryBytes) {
          this.set(key, Buffer.concat(chunks, size));
        }
        callback();
      },
    });
    return { measure, keep, done: () => finish() };
  }
}
