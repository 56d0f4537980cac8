/**
 * The search index's queue, where the engine indexes later (SearchEngine.indexLater: SQLite), and
 * CONTRACT §12 still holds (a message is found once its request is answered): every live message is
 * queued in the transaction that stores it, and indexed a moment later in batches (SearchIndexer,
 * on the writer), hundreds a transaction, which costs FTS5 a third of what a few a commit did;
 * search reads the queued messages as candidates meanwhile (PENDING_IDS, in the engine's match).
 * The queue is in the store, so a crash loses nothing of it: the next start indexes what is left
 * (search.resumeCompaction). Migration 17 made it.
 */
import type { Sql, Transaction } from './executor.js';
import type { SearchEngine } from './search.js';

/** The ids of the messages queued: what a search reads as candidates besides the index's. */
export const PENDING_IDS = 'SELECT message_id FROM search_pending';

/** Queues new messages for the index, in the transaction that stores them (applyGroup). */
export async function queueForIndex(tx: Sql, ids: readonly number[]): Promise<void> {
  // A statement per 500 (well under either engine's limit of parameters), not one per message.
  for (let at = 0; at < ids.length; at += 500) {
    const some = ids.slice(at, at + 500);
    await tx.run(`INSERT INTO search_pending (message_id) VALUES ${some.map(() => '(?)').join(', ')}`, some);
  }
}

/**
 * Indexes up to `limit` queued messages, oldest first, and takes them off the queue, in `tx` (of the
 * store's one writer: nothing is queued meanwhile); resolves how many it took. A message deleted
 * meanwhile left the queue with it (a trigger).
 */
export async function indexPending(tx: Transaction, engine: SearchEngine, limit: number): Promise<number> {
  const rows = await tx.all<{ id: number; hub_id: string; msg: string }>(
    `SELECT p.message_id AS id, m.hub_id, m.msg FROM search_pending AS p
     JOIN messages AS m ON m.id = p.message_id
     ORDER BY p.message_id LIMIT ?`,
    [limit],
  );
  const last = rows.at(-1);
  if (!last) return 0;
  await engine.add(
    tx,
    rows.map((row) => ({ id: Number(row.id), hubId: row.hub_id, msg: row.msg })),
  );
  await tx.run('DELETE FROM search_pending WHERE message_id <= ?', [Number(last.id)]);
  return rows.length;
}

/** How long after a message is queued the queue is indexed, at most: a burst's messages go together. */
const INDEX_DELAY_MS = 200;
/** Messages queued that start indexing at once. */
const INDEX_SOON = 1_000;
/** Messages indexed in one transaction (FTS5: about 18 µs each at this size, 50 at a webhook's few). */
export const INDEX_BATCH = 2_000;
/** After a failed batch (the database away), the next try. */
const INDEX_RETRY_MS = 5_000;

/**
 * Runs indexPending where the store writes, a while after messages are queued (or at once when
 * many are), a batch a transaction until the queue is empty. Nothing is lost when it does not run:
 * the queue is in the store, and search reads it.
 */
export class SearchIndexer {
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(
    /** Indexes up to `limit` queued messages in a transaction of its own; resolves how many. */
    private readonly indexBatch: (limit: number) => Promise<number>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** `count` messages were queued (or, with 0, the queue may hold some: look soon). */
  queuedMessages(count: number): void {
    this.queued += count;
    this.start(this.queued >= INDEX_SOON || count === 0 ? 0 : INDEX_DELAY_MS);
  }

  /** Indexes everything queued now, then resolves. */
  async drain(): Promise<number> {
    await this.running;
    let done = 0;
    for (;;) {
      const count = await this.indexBatch(INDEX_BATCH);
      done += count;
      if (count < INDEX_BATCH) return done;
    }
  }

  /** Stops after the batch under way (the rest stays queued for the next start). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private start(delayMs: number): void {
    if (this.closed || this.running) return;
    if (this.timer) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.queued = 0;
      let retry = false;
      this.running = (async () => {
        while (!this.closed && (await this.indexBatch(INDEX_BATCH)) === INDEX_BATCH);
      })()
        .catch((error: unknown) => {
          retry = true;
          this.onError(error);
        })
        .finally(() => {
          this.running = undefined;
          if (retry) this.start(INDEX_RETRY_MS);
          else if (this.queued > 0) this.start(INDEX_DELAY_MS);
        });
    }, delayMs);
    this.timer.unref();
  }
}
