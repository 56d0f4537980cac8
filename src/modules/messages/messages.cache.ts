/**
 * Small answers kept in memory, keyed by their ETag (hub, change counter, range) and encoding:
 * the same question about unchanged data ("yesterday", asked by a dashboard every minute) is
 * answered from memory. A change to the hub changes the counter, so a stale entry is never used;
 * it just ages out. Bounded in bytes (`CHATLOG_ANSWER_CACHE_MB`, 0 turns it off); an answer larger
 * than a sixteenth of the cache is never kept, so one export cannot flush everything else.
 *
 * A change of a hub's history (an unsend, an erasure, retention: whatever deletes) also drops the
 * hub's answers at once (`forgetHub`, called by watchHistory): what was deleted does not stay in
 * memory until it would have aged out.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { AnswerCount } from '../../store/store.js';

/** An answer kept: its bytes as sent, and its count of messages (the audit's, CONTRACT §13). */
export interface CachedAnswer {
  body: Buffer;
  messages: number | undefined;
}

interface Entry extends CachedAnswer {
  hubId: string;
}

export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  /** The keys of each hub's answers. */
  private readonly byHub = new Map<string, Set<string>>();
  /** Moves at each forgetHub: an answer begun before is not kept when it ends. */
  private readonly generations = new Map<string, number>();
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

  get(key: string): CachedAnswer | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, hubId: string, body: Buffer, messages?: number): void {
    if (body.length > this.maxEntryBytes || this.entries.has(key)) return;
    this.entries.set(key, { hubId, body, messages });
    let keys = this.byHub.get(hubId);
    if (!keys) {
      keys = new Set();
      this.byHub.set(hubId, keys);
    }
    keys.add(key);
    this.bytes += body.length;
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  /** True while the cache holds answers of the hub. */
  holds(hubId: string): boolean {
    return this.byHub.has(hubId);
  }

  /** The hub's answers held, by key (`<ETag> <encoding>`), as sent: for tests that look inside. */
  answersOf(hubId: string): Array<[string, Buffer]> {
    return [...(this.byHub.get(hubId) ?? [])].flatMap((key) => {
      const entry = this.entries.get(key);
      return entry ? [[key, entry.body] as [string, Buffer]] : [];
    });
  }

  /** The hubs whose answers the cache holds. */
  hubs(): string[] {
    return [...this.byHub.keys()];
  }

  /** Drops every answer of the hub, and those of it being made now when they end. */
  forgetHub(hubId: string): void {
    this.generations.set(hubId, (this.generations.get(hubId) ?? 0) + 1);
    for (const key of this.byHub.get(hubId) ?? []) this.delete(key);
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.body.length;
    const keys = this.byHub.get(entry.hubId);
    keys?.delete(key);
    if (keys?.size === 0) this.byHub.delete(entry.hubId);
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
   * waited for it (pending) go on. `count` is the answer's (AnswerSource.json's), kept with it.
   */
  recorder(
    key: string,
    hubId: string,
    count: AnswerCount,
  ): { measure: Transform; keep: Transform; done: () => void } {
    const generation = this.generations.get(hubId) ?? 0;
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
        const forgotten = (this.generations.get(hubId) ?? 0) !== generation;
        if (!forgotten && jsonBytes <= this.maxEntryBytes && size <= this.maxEntryBytes) {
          this.set(key, hubId, Buffer.concat(chunks, size), count.messages);
        }
        callback();
      },
    });
    return { measure, keep, done: () => finish() };
  }
}

/** How soon after a change of a hub its history version is looked at, at most (one look per hub). */
const HISTORY_LOOK_MS = 100;

/**
 * Drops a hub's cached answers when its history changes, on any node: after a change of a hub
 * the cache holds answers of, the hub's history version is read (once per HISTORY_LOOK_MS at
 * most), and if it is not the one seen before, the hub's answers go. New messages (appends) leave
 * the version, and "last month", as they were. Returns the function that stops watching.
 */
export function watchHistory(
  cache: AnswerCache,
  onChange: (listener: (hubId: string | undefined) => void) => () => void,
  historyVersion: (hubId: string) => Promise<number | undefined>,
  onError: (error: unknown) => void,
): () => void {
  const seen = new Map<string, number>();
  const looking = new Set<string>();
  /** Hubs changed again while being looked at: looked at once more after (the read may be older). */
  const again = new Set<string>();
  let stopped = false;
  const look = (hubId: string) => {
    if (looking.has(hubId)) {
      again.add(hubId);
      return;
    }
    looking.add(hubId);
    setTimeout(() => {
      historyVersion(hubId)
        .then((version) => {
          if (stopped) return;
          if (version === undefined || seen.get(hubId) !== version) cache.forgetHub(hubId);
          if (version === undefined) seen.delete(hubId);
          else seen.set(hubId, version);
        })
        // The answers stay keyed by version: never served stale, only kept longer.
        .catch(onError)
        .finally(() => {
          looking.delete(hubId);
          if (again.delete(hubId) && !stopped) look(hubId);
        });
    }, HISTORY_LOOK_MS).unref();
  };
  const unlisten = onChange((hubId) => {
    if (hubId === undefined) {
      for (const held of cache.hubs()) look(held);
    } else if (cache.holds(hubId)) look(hubId);
  });
  return () => {
    stopped = true;
    unlisten();
  };
}
