/**
 * The download worker of one node (CONTRACT §11): takes due downloads from the store's queue under
 * a lease (so one node makes each), fetches the content from LINE and keeps it by its hash, and
 * deletes the bytes no message holds any more.
 *
 * - At most `concurrency` downloads at once on this node, and at most PER_HUB for one hub on every
 *   node together, so one busy hub does not starve the others. Downloads never share a transaction
 *   with webhook ingest: a slow or failing LINE holds only this worker.
 * - Video and audio are fetched once LINE says their preparation `succeeded`.
 * - A lease lasts LEASE_MS and is renewed while the download runs, so a node killed mid-download
 *   leaves its item to another node (or itself, restarted) within LEASE_MS; the bytes of an
 *   unfinished download are never kept under a hash (the content store's put).
 * - Retried with backoff (RETRY_DELAYS_MS, then every few hours) for at least RETRY_FOR_MS after the
 *   message came; LINE's 404 ends it at once (`gone`).
 */
import type { FastifyBaseLogger } from 'fastify';
import { ByteRate } from '../../lib/byte-rate.js';
import type { SecretBox } from '../../lib/secrets.js';
import type { ContentStore } from '../../store/content/content-store.js';
import type { DownloadSettlement, LeasedDownload, Store } from '../../store/store.js';
import { contentOf, type LineAnswer, transcodingOf } from './line-content.js';

/**
 * MB/s all downloads of a process write together when the content is in PostgreSQL and
 * CHATLOG_DOWNLOAD_MBPS is not set: the chunks go through the WAL every webhook's commit waits
 * for (measured: 10 downloads of 50 MB at full speed cut webhook ingest to 0.40 of its rate,
 * at 32 MB/s to 0.51-0.64 in rounds; hence BUSY_SHARE).
 */
export const PG_DOWNLOAD_MBPS = 32;
/**
 * The share of that budget left to downloads while the process is busy with clients (as webhook
 * deliveries yield: ../../lib/traffic.ts); they go on at full budget when it is quieter. 10
 * downloads of 50 MB beside webhook ingest (Q5) on PostgreSQL, Q5's ratio to Q5 alone in three
 * rounds (bench/media.ts --parts 2): 32 MB/s throughout 0.51-0.64; 1/8 of it while busy 0.75-0.89;
 * 1/32 while busy 0.86-1.04. Without a budget (files, CHATLOG_DOWNLOAD_MBPS 0) the same share of
 * PG_DOWNLOAD_MBPS while busy: on SQLite, ten 50 MB downloads at full speed left Q5 at 0.40-0.54 of
 * its rate alone, at 1 MB/s while busy 0.91-1.00 (bench/results/2026-11-27-issue-17-serving.md).
 */
export const BUSY_SHARE = 1 / 32;
/**
 * What a download costs beside its bytes (LINE's answer, the lease and settle transactions, the
 * file's fsyncs), taken from the byte budget before each: while the process is busy, small images
 * otherwise went 50 a second at 1 MB/s.
 */
export const DOWNLOAD_COST_BYTES = 64 * 1024;
/** Downloads of one hub at once, on every node together. */
export const PER_HUB = 4;
const LEASE_MS = 15_000;
const RENEW_EVERY_MS = 5_000;
/** A download (body included) that takes longer is cut and tried again. */
const DOWNLOAD_TIMEOUT_MS = 30 * 60_000;
/** After each failed attempt; then RETRY_EVERY_MS until RETRY_FOR_MS after the message came. */
export const RETRY_DELAYS_MS = [5e3, 3e4, 12e4, 6e5, 18e5, 36e5, 72e5] as const;
const RETRY_EVERY_MS = 3 * 36e5;
export const RETRY_FOR_MS = 25 * 36e5;
/** While LINE prepares a video or audio: look again after a tenth of the time so far, 2 s to 1 min. */
const preparingDelayMs = (sinceMessageMs: number) => Math.min(6e4, Math.max(2e3, sinceMessageMs / 10));
/** Content larger than this is not kept (LINE's own limits are far below). */
export const MAX_CONTENT_BYTES = 2 ** 30;
const SWEEP_MS = 5_000;
/** Passes that commits set off come this far apart at most (a busy hub commits many times a second). */
const MIN_PASS_GAP_MS = 100;
/**
 * And this far apart while the process is busy with clients: a pass is a few queries and, while
 * downloads wait for their hub's turn, a lease that finds nothing (sampled in pg_stat_activity
 * beside Q5 on PostgreSQL: the due-time look as often active as the search index's insert). New
 * downloads then start within a second, and go at BUSY_SHARE of the byte budget anyway.
 */
const BUSY_PASS_GAP_MS = 1_000;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

export interface ContentWorkerOptions {
  store: Pick<Store, 'hubs' | 'changes' | 'content'>;
  blobs: ContentStore;
  secrets: SecretBox;
  log: FastifyBaseLogger;
  /** LINE_API_DATA_BASE_URL. */
  lineDataBaseUrl: string;
  /** Downloads at once on this node (CHATLOG_DOWNLOAD_CONCURRENCY). */
  concurrency: number;
  /** CHATLOG_DOWNLOAD_MBPS in bytes: what all downloads write together each second; 0 or none, no limit. */
  bytesPerSecond?: number;
  /** True while the process serves many requests: the downloads then write BUSY_SHARE of bytesPerSecond (of PG_DOWNLOAD_MBPS without one). */
  busy?: () => boolean;
  clock?: () => number;
  sweepMs?: number;
  /** Told of each attempt's outcome and of the bytes kept (metrics). */
  onOutcome?: (outcome: DownloadSettlement['state'] | 'preparing', bytes: number) => void;
}

export class ContentWorker {
  private readonly clock: () => number;
  private inFlight = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly downloads = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  private readonly aborts = new Set<AbortController>();
  private stopped = true;
  private lastCommitPass = 0;
  private commitTimer: NodeJS.Timeout | undefined;
  /** The last pass found due downloads and free slots, and could take none of them. */
  private blocked = false;

  private readonly rate: ByteRate | undefined;

  constructor(private readonly options: ContentWorkerOptions) {
    this.clock = options.clock ?? Date.now;
    const full = options.bytesPerSecond || Number.POSITIVE_INFINITY;
    const busy = options.busy;
    const whileBusy = (Number.isFinite(full) ? full : PG_DOWNLOAD_MBPS * 1e6) * BUSY_SHARE;
    this.rate = busy
      ? new ByteRate(() => (busy() ? whileBusy : full))
      : Number.isFinite(full)
        ? new ByteRate(full)
        : undefined;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // A stored message may have queued a download (the change commits with it).
    this.unlisten = this.options.store.changes.onChange(() => this.afterCommit());
    this.kick();
  }

  /** Stops taking work; downloads in flight are cut (their leases lapse; they are taken again). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    clearTimeout(this.timer);
    clearTimeout(this.commitTimer);
    for (const abort of this.aborts) abort.abort();
    await this.running;
    await Promise.all(this.downloads);
  }

  /** A commit may have queued a download: a pass, at most one per MIN_PASS_GAP_MS (busy: BUSY_PASS_GAP_MS) for commits. */
  private afterCommit(): void {
    if (this.commitTimer || this.stopped) return;
    const gap = this.options.busy?.() ? BUSY_PASS_GAP_MS : MIN_PASS_GAP_MS;
    const wait = this.lastCommitPass + gap - Date.now();
    const go = () => {
      this.commitTimer = undefined;
      this.lastCommitPass = Date.now();
      this.kick();
    };
    if (wait <= 0) go();
    else this.commitTimer = setTimeout(go, wait).unref();
  }

  /** Look for work now. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'content worker pass failed'))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.kick();
        } else this.sleep();
      });
  }

  /**
   * Until the next pass: when the next download is due, or SWEEP_MS. Not at once while every slot
   * is taken or the last pass found due downloads it could not take (their hubs' PER_HUB under way):
   * a finished download, a commit or the sweep (which also deletes released bytes) looks again. (A pass at once each time was a loop of
   * queries on the event loop for as long as the queue was longer than the slots.)
   */
  private sleep(): void {
    const sweep = this.options.sweepMs ?? SWEEP_MS;
    clearTimeout(this.timer);
    if (this.inFlight >= this.options.concurrency) {
      this.timer = setTimeout(() => this.kick(), sweep).unref();
      return;
    }
    const blocked = this.blocked;
    void this.options.store.content
      .nextDue()
      .catch(() => undefined)
      .then((next) => {
        if (this.stopped || this.running) return;
        const wait = next === undefined ? sweep : Math.max(0, next - this.clock());
        const delay = Math.min(sweep, wait === 0 && blocked ? sweep : wait);
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.kick(), delay).unref();
      });
  }

  /**
   * Deletes released bytes, then starts as many due downloads as there is room for. Only reads
   * unless there is work: most passes follow a commit that queued nothing (a text message), and a
   * write here would wait for the writer the webhooks use.
   */
  private async pass(): Promise<void> {
    this.blocked = false;
    await this.release();
    const free = this.options.concurrency - this.inFlight;
    if (free <= 0 || this.stopped) return;
    const now = this.clock();
    const due = await this.options.store.content.nextDue();
    if (due === undefined || due > now) return;
    const leased = await this.options.store.content.lease(now, now + LEASE_MS, free, PER_HUB);
    this.blocked = leased.length === 0;
    for (const item of leased) {
      this.inFlight += 1;
      const download: Promise<void> = this.download(item)
        .catch((error: unknown) => this.options.log.warn({ err: error }, 'content download failed'))
        .finally(() => {
          this.inFlight -= 1;
          this.downloads.delete(download);
          // Its slot is taken again at once (only commits' passes are spaced).
          this.kick();
        });
      this.downloads.add(download);
    }
  }

  private async release(): Promise<void> {
    const { store, blobs } = this.options;
    for (const { hubId, sha256 } of await store.content.releases(100)) {
      if (this.stopped) return;
      if (!(await store.content.claimRelease(hubId, sha256))) continue;
      await blobs.remove(hubId, sha256);
      // A message that came to hold the same bytes meanwhile downloads them again.
      await store.content.requeueMissing(hubId, sha256, this.clock());
    }
  }

  private async download(item: LeasedDownload): Promise<void> {
    const abort = new AbortController();
    this.aborts.add(abort);
    let lease = item.leasedUntil;
    const renew = setInterval(() => {
      const next = this.clock() + LEASE_MS;
      void this.options.store.content.extend(item.hubId, item.messageId, lease, next).then(
        (kept) => {
          if (kept) lease = next;
          else abort.abort();
        },
        () => undefined,
      );
    }, RENEW_EVERY_MS).unref();
    const cut = setTimeout(() => abort.abort(), DOWNLOAD_TIMEOUT_MS).unref();
    let result: DownloadSettlement;
    try {
      result = await this.attempt(item, abort.signal);
    } finally {
      clearInterval(renew);
      clearTimeout(cut);
      this.aborts.delete(abort);
    }
    if (this.stopped && result.state === 'pending' && abort.signal.aborted) return; // taken again later
    const stored = await this.options.store.content.settle({ ...result, leasedUntil: lease }, this.clock());
    if (!stored) return;
    this.options.onOutcome?.(result.state, result.state === 'done' ? result.size : 0);
    if (result.state === 'done' && (await this.options.blobs.stat(item.hubId, result.sha256)) === undefined) {
      // The bytes were deleted as this message came to hold them (a release just then): again.
      await this.options.store.content.requeueMissing(item.hubId, result.sha256, this.clock());
    }
  }

  private async attempt(item: LeasedDownload, signal: AbortSignal): Promise<DownloadSettlement> {
    const key = { hubId: item.hubId, messageId: item.messageId, leasedUntil: item.leasedUntil };
    const hub = await this.options.store.hubs.get(item.hubId);
    if (!hub?.lineChannelAccessTokenEncrypted) {
      return this.retry(item, 'the hub has no LINE channel access token', false);
    }
    const token = this.options.secrets.decrypt(hub.lineChannelAccessTokenEncrypted);
    const base = this.options.lineDataBaseUrl;
    if (item.kind === 'video' || item.kind === 'audio') {
      const preparing = await transcodingOf(base, token, item.lineMessageId);
      if (preparing.kind !== 'ok') return this.afterRefusal(item, preparing);
      if (preparing.value === 'failed') {
        return {
          ...key,
          state: 'failed',
          attempts: item.attempts + 1,
          lastError: 'LINE could not prepare it',
        };
      }
      if (preparing.value === 'processing') {
        this.options.onOutcome?.('preparing', 0);
        return this.retry(
          item,
          'LINE is still preparing it',
          false,
          preparingDelayMs(this.clock() - item.createdAt),
        );
      }
    }
    // Each download's own work (its requests, transactions and files) counted as bytes too.
    await this.rate?.take(DOWNLOAD_COST_BYTES);
    const answer = await contentOf(base, token, item.lineMessageId, signal);
    if (answer.kind !== 'ok') return this.afterRefusal(item, answer);
    const mediaType = answer.value.mediaType.split(';')[0]?.trim().toLowerCase() ?? '';
    try {
      const source = answer.value.body;
      const body = this.rate ? source.pipe(this.rate.stream()) : source;
      if (body !== source) source.once('error', (error) => body.destroy(error));
      const blob = await this.options.blobs.put(item.hubId, body, {
        maxBytes: MAX_CONTENT_BYTES,
      });
      return {
        ...key,
        state: 'done',
        sha256: blob.sha256,
        mediaType: MEDIA_TYPE.test(mediaType) ? mediaType : 'application/octet-stream',
        size: blob.size,
      };
    } catch (error) {
      answer.value.body.destroy();
      if ((error as NodeJS.ErrnoException).code === 'ECONTENTTOOLARGE') {
        return { ...key, state: 'failed', attempts: item.attempts + 1, lastError: 'larger than 1 GiB' };
      }
      return this.retry(item, signal.aborted ? 'the download was cut' : 'the download broke off', true);
    }
  }

  private afterRefusal(item: LeasedDownload, answer: Exclude<LineAnswer<unknown>, { kind: 'ok' }>) {
    if (answer.kind === 'gone') {
      return {
        hubId: item.hubId,
        messageId: item.messageId,
        leasedUntil: item.leasedUntil,
        state: 'gone',
        attempts: item.attempts + 1,
        lastError: 'LINE no longer has it (404)',
      } as const;
    }
    return this.retry(item, answer.reason, true, answer.kind === 'retry' ? answer.retryAfterMs : undefined);
  }

  /**
   * Another try later: after the backoff step of a failed attempt (`failed`), or `delay` for one
   * that only waits (LINE preparing); failed for good once RETRY_FOR_MS have passed since the message.
   */
  private retry(item: LeasedDownload, reason: string, failed: boolean, delay?: number): DownloadSettlement {
    const now = this.clock();
    const attempts = failed ? item.attempts + 1 : item.attempts;
    const key = { hubId: item.hubId, messageId: item.messageId, leasedUntil: item.leasedUntil };
    if (now - item.createdAt >= RETRY_FOR_MS) {
      return { ...key, state: 'failed', attempts, lastError: reason };
    }
    const step = delay ?? (failed ? (RETRY_DELAYS_MS[attempts - 1] ?? RETRY_EVERY_MS) : 36e5);
    const jitter = 0.8 + 0.4 * Math.random();
    return {
      ...key,
      state: 'pending',
      attempts,
      nextAttemptAt: now + Math.round(step * jitter),
      lastError: reason,
    };
  }
}
