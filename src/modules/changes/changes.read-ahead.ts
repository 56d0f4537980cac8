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
import type { FeedJsonPage, FeedSource } from '../../store/store.js';

/** Read-ahead pages kept at once (AHEAD per client catching up); a new one past it drops the oldest. */
const MAX_PAGES = 32;
/**
 * Pages read ahead of a client: two, so the reader always has the next one to read while the
 * client receives one and asks for the next (one left the reader idle between the two).
 */
const AHEAD = 2;
/** A page not asked for within this time is dropped. */
const KEEP_MS = 5_000;

interface Ahead {
  version: number;
  limit: number;
  /** Pages to read ahead from here, this one included. */
  depth: number;
  page: Promise<FeedJsonPage | undefined>;
  /** The page once read. */
  read: FeedJsonPage | undefined;
  /** Its read failed. */
  failed: boolean;
  timer: NodeJS.Timeout;
}

export class FeedReadAhead {
  private readonly pages = new Map<string, Ahead>();
  /** Pages served from here, and pages read ahead but read again (history moved, or not full). */
  readonly counts = { served: 0, readAgain: 0 };

  constructor(private readonly source: FeedSource) {}

  /**
   * Reads the `limit` changes after `afterSeq` now (and whether more follow), for a request to come,
   * and once it is read, the page after it, up to AHEAD pages ahead of the request that started it.
   * `version` is the hub's history version read before this call. A page already being read ahead
   * under the same version is left to go on.
   */
  start(hubId: string, afterSeq: number, limit: number, version: number, depth = AHEAD): void {
    const key = keyOf(hubId, afterSeq, limit);
    const existing = this.pages.get(key);
    // Left to go on unless its read failed (then it is read again).
    if (existing?.version === version && !existing.failed) {
      if (depth > existing.depth) {
        existing.depth = depth;
        this.chain(hubId, key, existing);
      }
      return;
    }
    this.drop(key);
    const oldest = this.pages.keys().next();
    if (this.pages.size >= MAX_PAGES && !oldest.done) this.drop(oldest.value);
    const ahead: Ahead = {
      version,
      limit,
      depth,
      read: undefined,
      failed: false,
      page: new Promise<FeedJsonPage | undefined>((resolve) => {
        // After the answer in hand has been handed to the socket (SQLite's store reads synchronously).
        setImmediate(() => {
          this.source.pageJson(hubId, afterSeq, limit).then(resolve, () => resolve(undefined));
        });
      }),
      timer: setTimeout(() => this.drop(key), KEEP_MS).unref(),
    };
    this.pages.set(key, ahead);
    void ahead.page.then((read) => {
      ahead.read = read;
      ahead.failed = read === undefined;
      this.chain(hubId, key, ahead);
    });
  }

  /**
   * Once a page is read, and while it is still kept, the page after it under the same version:
   * the version a request reads later, if equal, says no history changed since before either was read.
   */
  private chain(hubId: string, key: string, ahead: Ahead): void {
    const { read } = ahead;
    if (ahead.depth > 1 && read?.hasMore && read.lastSeq !== undefined && this.pages.get(key) === ahead) {
      this.start(hubId, read.lastSeq, ahead.limit, ahead.version, ahead.depth - 1);
    }
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
