/**
 * The next page of a catch-up, read while the client is still receiving this one. A client follows
 * the feed one request after the other (the next cursor is in the answer), so without this the
 * database, this server and the client take turns; with it, the database reads page n+1 while the
 * client reads page n (bench/results/2026-11-27-issue-16.md).
 *
 * Never a stale page. A page is read ahead only after a full page (more changes known to follow),
 * and kept with the hub's history version as it was read *before* the look ahead began. It is
 * served only to the request for exactly that page (hub, cursor, limit) whose own checks, later,
 * read the same history version: no change other than an appended message committed in between (an
 * unsend, an erasure, retention, a contact's new name all move the version), and an appended
 * message has a seq past every change of a full page (seq order is commit order). Anything else, a
 * page no change was seen to follow included, is read again. A page is taken once, and dropped unread after
 * KEEP_MS, so what an erasure removed does not stay here.
 */
import type { FeedJsonPage } from '../../store/store.js';
import type { FeedSource } from './changes.usecases.js';

/** Read-ahead pages kept at once (one per client catching up); a new one past it drops the oldest. */
const MAX_PAGES = 16;
/** A page not asked for within this time is dropped. */
const KEEP_MS = 5_000;

interface Ahead {
  version: number;
  limit: number;
  page: Promise<FeedJsonPage | undefined>;
  timer: NodeJS.Timeout;
}

export class FeedReadAhead {
  private readonly pages = new Map<string, Ahead>();
  /** Pages served from here, and pages read ahead but read again (history moved, or not full). */
  readonly counts = { served: 0, readAgain: 0 };

  constructor(private readonly source: FeedSource) {}

  /**
   * Reads the `limit` changes after `afterSeq` now (and whether more follow), for a request to come. `version` is the hub's
   * history version read before this call.
   */
  start(hubId: string, afterSeq: number, limit: number, version: number): void {
    const key = keyOf(hubId, afterSeq, limit);
    this.drop(key);
    const oldest = this.pages.keys().next();
    if (this.pages.size >= MAX_PAGES && !oldest.done) this.drop(oldest.value);
    const page = new Promise<FeedJsonPage | undefined>((resolve) => {
      // After the answer in hand has been handed to the socket (SQLite's store reads synchronously).
      setImmediate(() => {
        this.source.pageJson(hubId, afterSeq, limit).then(resolve, () => resolve(undefined));
      });
    });
    const timer = setTimeout(() => this.drop(key), KEEP_MS).unref();
    this.pages.set(key, { version, limit, page, timer });
  }

  /**
   * The page read ahead for exactly this look, if the hub's history version read for it (before
   * it) is the one the page was read under and more changes followed it; otherwise undefined: read it.
   */
  async take(
    hubId: string,
    afterSeq: number,
    limit: number,
    version: number,
  ): Promise<FeedJsonPage | undefined> {
    const key = keyOf(hubId, afterSeq, limit);
    const ahead = this.pages.get(key);
    if (!ahead) return undefined;
    this.drop(key);
    const page = ahead.version === version ? await ahead.page : undefined;
    if (!page?.hasMore) {
      this.counts.readAgain += 1;
      return undefined;
    }
    this.counts.served += 1;
    return page;
  }

  private drop(key: string): void {
    const ahead = this.pages.get(key);
    if (!ahead) return;
    clearTimeout(ahead.timer);
    this.pages.delete(key);
  }
}

const keyOf = (hubId: string, afterSeq: number, limit: number) => `${hubId}/${afterSeq}/${limit}`;
