/**
 * How a live change (a LINE webhook event, an ingest API message) becomes stored data, written
 * once for both engines: one request's operations applied together, and many requests committed
 * together (group commit: one disk sync or round trip for all, each request still all-or-nothing).
 */
import type { IngestOperation, IngestOutcome } from '../store.js';
import { assignedMessageId, type FeedClock, logChange, MESSAGE_ID } from './changes.js';
import { contactIdOf, setFollowing } from './contacts.js';
import { queueContent, releaseContent } from './content.js';
import { inSavepoint, type Transaction, TransactionAborted } from './executor.js';
import type { IndexedMessage, SearchEngine } from './search.js';
import { queueForIndex } from './search-queue.js';

export interface IngestRequest {
  hubId: string;
  operations: readonly IngestOperation[];
  now: number;
}

/** What a request of a group came to: its outcome, or the error that undid it alone. */
export type GroupOutcome = IngestOutcome | { failed: unknown };

/**
 * The index rows a group's messages still need (`add` at the group's end), by message row id. A
 * message deleted after it was stored (an unsend later in the group) leaves the list, and a row id
 * given again after that (SQLite reuses the highest) is the new message's.
 */
export class PendingIndexRows {
  readonly rows = new Map<number, IndexedMessage>();
  readonly removed = new Set<number>();

  stored(message: IndexedMessage): void {
    this.rows.set(message.id, message);
  }

  deleted(id: number): void {
    this.rows.delete(id);
    this.removed.add(id);
  }

  /** Takes on what a request that succeeded left (its deletions first, then its messages). */
  merge(request: PendingIndexRows): void {
    for (const id of request.removed) this.deleted(id);
    for (const message of request.rows.values()) this.stored(message);
  }
}

/**
 * Applies one request's operations in `tx`, its changes numbered by `clock` (which has locked the
 * hub). Its messages' index rows are left in `index`, for the group to write after every request's
 * savepoint (applyGroup).
 */
export async function applyIngest(
  tx: Transaction,
  clock: FeedClock,
  index: PendingIndexRows,
  { hubId, operations, now }: IngestRequest,
): Promise<IngestOutcome> {
  const outcome: IngestOutcome = { stored: 0, duplicates: 0, removed: 0, contactsCreated: [] };
  const ids = new Map<string, number>();
  const contactId = async (lineId: string): Promise<number> => {
    let id = ids.get(lineId);
    if (id === undefined) {
      const contact = await contactIdOf(tx, hubId, lineId, now);
      if (contact.created) outcome.contactsCreated.push(lineId);
      id = contact.id;
      ids.set(lineId, id);
    }
    return id;
  };
  for (const op of operations) {
    switch (op.kind) {
      case 'message': {
        // A message the friend took back is never stored again, even when LINE redelivers it.
        const unsent = await tx.get(
          'SELECT 1 AS one FROM unsent_messages WHERE hub_id = ? AND source_id = ?',
          [hubId, op.sourceId],
        );
        if (unsent) {
          outcome.duplicates += 1;
          break;
        }
        const contact = await contactId(op.lineId);
        const seq = clock.next(hubId);
        const wanted = op.id ?? '';
        for (let attempt = MESSAGE_ID.test(wanted) ? 0 : 1; ; attempt++) {
          const id = attempt === 0 ? wanted : assignedMessageId(op.sourceId, attempt - 1);
          if (attempt > 8) throw new Error(`no free message id for ${op.sourceId}`);
          // The id of a message that is gone is never given again.
          if (await isRetired(tx, hubId, id)) continue;
          const stored = await tx.get<{ id: number }>(
            `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id,
               source_kind, source_chat_id, seq, changed_at, public_id, line_json)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
            [
              hubId,
              contact,
              op.createdAt,
              op.sender,
              op.msg,
              op.contentType,
              op.sourceId,
              op.sourceKind,
              op.sourceChatId,
              seq,
              now,
              id,
              op.line ?? null,
            ],
          );
          if (stored) {
            outcome.stored += 1;
            // Searchable once the request is answered: indexed in its transaction (./search.ts).
            index.stored({ id: Number(stored.id), hubId, msg: op.msg });
            clock.stored(hubId, op.createdAt);
            if (op.content) await queueContent(tx, hubId, id, op.content, now);
            break;
          }
          // Not stored: a redelivery, or another message of the hub has that id (try the next).
          const again = await tx.get('SELECT 1 AS one FROM messages WHERE hub_id = ? AND source_id = ?', [
            hubId,
            op.sourceId,
          ]);
          if (again) {
            outcome.duplicates += 1;
            break;
          }
          // An ingest record naming a message chatlog holds from LINE (received, or sent by a send
          // under LINE's id) is that message again, not a second one (CONTRACT §16).
          if (attempt === 0 && op.sourceId === `ingest:${wanted}`) {
            const fromLine = await tx.get(
              'SELECT 1 AS one FROM messages WHERE hub_id = ? AND source_id = ?',
              [hubId, `line:${wanted}`],
            );
            if (fromLine) {
              outcome.duplicates += 1;
              break;
            }
          }
        }
        break;
      }
      case 'follow':
      case 'unfollow':
        await setFollowing(tx, await contactId(op.lineId), op.kind === 'follow', op.at);
        break;
      case 'unsend': {
        const removed = await tx.all<{ id: number; contact_id: number; public_id: string }>(
          'DELETE FROM messages WHERE hub_id = ? AND source_id = ? RETURNING id, contact_id, public_id',
          [hubId, op.sourceId],
        );
        for (const message of removed) index.deleted(Number(message.id));
        await releaseContent(
          tx,
          hubId,
          removed.map((message) => message.public_id),
          now,
        );
        for (const message of removed) {
          await retireMessageId(tx, hubId, message.public_id);
          await logChange(tx, clock, hubId, now, {
            type: 'message.deleted',
            contactId: message.contact_id,
            messageId: message.public_id,
            reason: 'unsend',
          });
        }
        outcome.removed += removed.length;
        await tx.run(
          'INSERT INTO unsent_messages (hub_id, source_id, unsent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
          [hubId, op.sourceId, op.at],
        );
        break;
      }
    }
  }
  return outcome;
}

export async function isRetired(tx: Transaction, hubId: string, id: string): Promise<boolean> {
  return (
    (await tx.get('SELECT 1 AS one FROM retired_message_ids WHERE hub_id = ? AND public_id = ?', [
      hubId,
      id,
    ])) !== undefined
  );
}

export async function retireMessageId(tx: Transaction, hubId: string, id: string): Promise<void> {
  await tx.run('INSERT INTO retired_message_ids (hub_id, public_id) VALUES (?, ?) ON CONFLICT DO NOTHING', [
    hubId,
    id,
  ]);
}

/** The hubs a group writes to, which its transaction locks first (FeedClock). */
export const hubsOfGroup = (group: readonly IngestRequest[]) =>
  group.filter((request) => request.operations.length > 0).map((request) => request.hubId);

/**
 * A group's requests in one transaction, each in its own savepoint so that a bad one fails alone;
 * `clock` holds the group's hubs (hubsOfGroup), locked before anything else was written.
 *
 * The search index rows of the group's messages are written last, in the same transaction, after
 * every savepoint: FTS5 writes what it holds to a new segment at each savepoint, so a group of 32
 * requests indexed as it went made 32 one-message segments (and their merges) where one will do.
 * Should that write fail, the whole group fails (no index row of a message LINE sends is known to).
 */
export async function applyGroup(
  tx: Transaction,
  clock: FeedClock,
  search: SearchEngine,
  group: readonly IngestRequest[],
): Promise<GroupOutcome[]> {
  const outcomes: GroupOutcome[] = [];
  const index = new PendingIndexRows();
  for (const request of group) {
    const own = new PendingIndexRows();
    try {
      outcomes.push(await inSavepoint(tx, () => applyIngest(tx, clock, own, request)));
      index.merge(own);
    } catch (error) {
      // The transaction itself is lost: every request of the group fails with what went wrong first.
      if (error instanceof TransactionAborted) throw error.original;
      outcomes.push({ failed: error });
    }
  }
  if (search.indexLater) await queueForIndex(tx, [...index.rows.keys()]);
  else await search.add(tx, [...index.rows.values()]);
  return outcomes;
}

interface Waiting extends IngestRequest {
  resolve(outcome: IngestOutcome): void;
  reject(error: unknown): void;
}

/**
 * How many groups may be on their way at once, by default: one syncing to disk while the next is
 * applied, and no more, so that what arrives meanwhile forms one group. An engine may hold fewer
 * (PostgresStore: one).
 */
export const GROUPS_IN_FLIGHT = 2;

/**
 * The queue of live writes. Everything that arrives while the groups in flight commit (or before
 * the next turn of the event loop) forms the next group: the busier the store, the more each
 * commit carries.
 */
export class GroupCommit {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private scheduled = false;
  private closed = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly commit: (group: readonly IngestRequest[]) => Promise<GroupOutcome[]>,
    /** Groups on their way at most (read at each turn). */
    private readonly groupsInFlight: () => number = () => GROUPS_IN_FLIGHT,
  ) {}

  add(hubId: string, operations: readonly IngestOperation[], now: number): Promise<IngestOutcome> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ hubId, operations, now, resolve, reject });
      this.schedule();
    });
  }

  /** Takes no more requests; resolves once those already taken are committed. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight === 0 && this.waiting.length === 0 && !this.scheduled) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.groupsInFlight() || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    if (this.inFlight >= this.groupsInFlight() || this.waiting.length === 0) {
      this.settleIdle();
      return;
    }
    const group = this.waiting;
    this.waiting = [];
    this.inFlight += 1;
    this.commit(group)
      .then(
        (outcomes) =>
          group.forEach((request, i) => {
            const outcome = outcomes[i];
            if (outcome === undefined) request.reject(new Error('the group commit lost a request'));
            else if ('failed' in outcome) request.reject(outcome.failed);
            else request.resolve(outcome);
          }),
        (error: unknown) => {
          for (const request of group) request.reject(error);
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        this.schedule();
        this.settleIdle();
      });
    this.schedule();
  }

  private settleIdle(): void {
    if (this.inFlight > 0 || this.waiting.length > 0 || this.scheduled) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
