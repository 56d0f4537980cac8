/**
 * How a live change (a LINE webhook event, an ingest API message) becomes stored data, written
 * once for both engines: one request's operations applied together, and many requests committed
 * together (group commit: one disk sync or round trip for all, each request still all-or-nothing).
 */
import type { IngestOperation, IngestOutcome } from '../store.js';
import { contactIdOf, setFollowing } from './contacts.js';
import { inSavepoint, type Transaction, TransactionAborted } from './executor.js';
import { bumpDataVersion } from './hubs.js';

export interface IngestRequest {
  hubId: string;
  operations: readonly IngestOperation[];
  now: number;
}

/** What a request of a group came to: its outcome, or the error that undid it alone. */
export type GroupOutcome = IngestOutcome | { failed: unknown };

/** Applies one request's operations in `tx`; the caller commits (and bumps the hub's counter). */
export async function applyIngest(
  tx: Transaction,
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
        const stored = await tx.run(
          `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id,
             source_kind, source_chat_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hub_id, source_id) DO NOTHING`,
          [
            hubId,
            await contactId(op.lineId),
            op.createdAt,
            op.sender,
            op.msg,
            op.contentType,
            op.sourceId,
            op.sourceKind,
            op.sourceChatId,
          ],
        );
        if (stored > 0) outcome.stored += 1;
        else outcome.duplicates += 1;
        break;
      }
      case 'follow':
      case 'unfollow':
        await setFollowing(tx, await contactId(op.lineId), op.kind === 'follow', op.at);
        break;
      case 'unsend':
        outcome.removed += await tx.run('DELETE FROM messages WHERE hub_id = ? AND source_id = ?', [
          hubId,
          op.sourceId,
        ]);
        await tx.run(
          'INSERT INTO unsent_messages (hub_id, source_id, unsent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
          [hubId, op.sourceId, op.at],
        );
        break;
    }
  }
  return outcome;
}

/**
 * A group's requests in one transaction, each in its own savepoint so that a bad one fails alone;
 * then each hub that changed counts one change (in id order: two nodes never lock hubs crosswise).
 */
export async function applyGroup(tx: Transaction, group: readonly IngestRequest[]): Promise<GroupOutcome[]> {
  const outcomes: GroupOutcome[] = [];
  const changedHubs = new Set<string>();
  for (const request of group) {
    try {
      outcomes.push(await inSavepoint(tx, () => applyIngest(tx, request)));
      if (request.operations.length > 0) changedHubs.add(request.hubId);
    } catch (error) {
      // The transaction itself is lost: every request of the group fails with what went wrong first.
      if (error instanceof TransactionAborted) throw error.original;
      outcomes.push({ failed: error });
    }
  }
  for (const hubId of [...changedHubs].sort()) await bumpDataVersion(tx, hubId);
  return outcomes;
}

interface Waiting extends IngestRequest {
  resolve(outcome: IngestOutcome): void;
  reject(error: unknown): void;
}

/**
 * The queue of live writes. Everything that arrives while a group commits (or before the next turn
 * of the event loop) forms the next group: the busier the store, the more each commit carries.
 */
export class GroupCommit {
  private waiting: Waiting[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly commit: (group: readonly IngestRequest[]) => Promise<GroupOutcome[]>) {}

  add(hubId: string, operations: readonly IngestOperation[], now: number): Promise<IngestOutcome> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ hubId, operations, now, resolve, reject });
      this.flushing ??= new Promise<void>((started) => setImmediate(started)).then(() => this.flush());
    });
  }

  /** Takes no more requests; resolves once those already taken are committed. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.waiting.length > 0) {
      const group = this.waiting;
      this.waiting = [];
      let outcomes: GroupOutcome[];
      try {
        outcomes = await this.commit(group);
      } catch (error) {
        for (const request of group) request.reject(error);
        continue;
      }
      group.forEach((request, i) => {
        const outcome = outcomes[i];
        if (outcome === undefined) request.reject(new Error('the group commit lost a request'));
        else if ('failed' in outcome) request.reject(outcome.failed);
        else request.resolve(outcome);
      });
    }
    this.flushing = undefined;
  }
}
