/**
 * The send queue (CONTRACT §16), for both engines: each accepted reply to a LINE friend is a row,
 * kept before the 202, leased by the node that pushes it to LINE (the download queue's way, ./content.ts),
 * and settled with LINE's answer.
 *
 * - Of each contact only the oldest unfinished send is ever leased, and not while another lease
 *   holds it: a contact's sends reach LINE one at a time, in the order they were accepted (`seq`).
 * - An idempotency key names one send of the hub for a window (24 hours): a second request with it
 *   gets the first send. After the window the old send lets go of the key.
 */
import type {
  IngestOperation,
  LeasedSend,
  OutgoingMessage,
  Send,
  SendSettlement,
  SendState,
  SendsPort,
} from '../store.js';
import type { FeedClock } from './changes.js';
import type { Engine } from './engine.js';
import type { Sql, SqlValue, Transaction } from './executor.js';
import type { GroupOutcome, IngestRequest } from './ingest.js';

interface SendRow {
  id: string;
  hub_id: string;
  line_id: string;
  messages: string;
  retry_key: string;
  idempotency_key: string | null;
  state: string;
  attempts: number;
  next_attempt_at: number;
  leased_until: number;
  last_error: string | null;
  message_ids: string | null;
  hubspot_message_id: string | null;
  created_at: number;
}

const COLUMNS = `id, hub_id, line_id, messages, retry_key, idempotency_key, state, attempts, next_attempt_at,
  leased_until, last_error, message_ids, hubspot_message_id, created_at`;

/** Due sends looked at per lease, however long the queue. */
const LEASE_WINDOW = 500;

function toSend(row: SendRow): Send {
  return {
    id: row.id,
    hubId: row.hub_id,
    lineId: row.line_id,
    messages: JSON.parse(row.messages) as OutgoingMessage[],
    retryKey: row.retry_key,
    idempotencyKey: row.idempotency_key,
    hubspotMessageId: row.hubspot_message_id,
    state: row.state as SendState,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    messageIds: row.message_ids === null ? null : (JSON.parse(row.message_ids) as string[]),
    createdAt: row.created_at,
  };
}

export async function getSend(sql: Sql, hubId: string, id: string): Promise<Send | undefined> {
  const row = await sql.get<SendRow>(`SELECT ${COLUMNS} FROM sends WHERE hub_id = ? AND id = ?`, [hubId, id]);
  return row && toSend(row);
}

interface Contact {
  hubId: string;
  lineId: string;
}

/**
 * Takes the contacts' turns (PostgreSQL: advisory locks until commit, taken in one order) before a
 * change of which of their sends is the head, so that a send accepted while the one before it
 * settles on another node is made the head by one of the two.
 */
async function lockContacts(tx: Transaction, lock: string, contacts: readonly Contact[]): Promise<void> {
  if (!lock || contacts.length === 0) return;
  const keys = [...new Set(contacts.map((c) => `${c.hubId}\n${c.lineId}`))].sort();
  await tx.get(lock, [JSON.stringify(keys)]);
}

/** Each contact's oldest pending send becomes the head of its queue (after one of them ended). */
async function moveHeads(tx: Transaction, contacts: readonly Contact[]): Promise<void> {
  const byHub = new Map<string, Set<string>>();
  for (const c of contacts) byHub.set(c.hubId, (byHub.get(c.hubId) ?? new Set()).add(c.lineId));
  for (const [hubId, lineIds] of byHub) {
    const ids = [...lineIds];
    await tx.run(
      `UPDATE sends SET head = 1 WHERE head = 0 AND seq IN (SELECT MIN(seq) FROM sends
         WHERE hub_id = ? AND line_id IN (${ids.map(() => '?').join(', ')}) AND state = 'pending'
         GROUP BY line_id)`,
      [hubId, ...ids],
    );
  }
}

export async function createSend(
  tx: Transaction,
  send: Parameters<SendsPort['create']>[0],
  windowMs: number,
  lock = '',
): Promise<{ send: Send; created: boolean }> {
  if (send.idempotencyKey !== null) {
    const earlier = await tx.get<SendRow>(
      `SELECT ${COLUMNS} FROM sends WHERE hub_id = ? AND idempotency_key = ?`,
      [send.hubId, send.idempotencyKey],
    );
    if (earlier && earlier.created_at > send.createdAt - windowMs)
      return { send: toSend(earlier), created: false };
    // Its window is over: the key is free for this send.
    if (earlier) await tx.run('UPDATE sends SET idempotency_key = NULL WHERE id = ?', [earlier.id]);
  }
  // A reply refused before queueing (§18) is kept failed: never pushed, so it takes no turn of its
  // contact and is never the head of its queue. Else the head when no earlier send of the contact
  // is pending.
  const refused = send.refusedWith !== undefined;
  if (!refused) await lockContacts(tx, lock, [send]);
  const row = await tx.get<SendRow>(
    `INSERT INTO sends (id, hub_id, line_id, messages, retry_key, idempotency_key, hubspot_message_id, state,
       attempts, next_attempt_at, last_error, created_at, updated_at, head)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?,
       CASE WHEN ? = 1 OR EXISTS (SELECT 1 FROM sends WHERE hub_id = ? AND line_id = ? AND state = 'pending')
         THEN 0 ELSE 1 END)
     RETURNING ${COLUMNS}`,
    [
      send.id,
      send.hubId,
      send.lineId,
      JSON.stringify(send.messages),
      send.retryKey,
      send.idempotencyKey,
      send.hubspotMessageId ?? null,
      refused ? 'failed' : 'pending',
      send.createdAt,
      send.refusedWith ?? null,
      send.createdAt,
      send.createdAt,
      refused ? 1 : 0,
      send.hubId,
      send.lineId,
    ],
  );
  if (!row) throw new Error('the send was not stored');
  return { send: toSend(row), created: true };
}

export async function leaseSends(
  tx: Transaction,
  now: number,
  leasedUntil: number,
  max: number,
): Promise<LeasedSend[]> {
  // The oldest due sends that are their contact's oldest unfinished one, the head of its queue
  // (which may be leased by another node: then it is not due here), through sends_heads_due, marked
  // in the same statement (a round trip a step was most of a lease's time on PostgreSQL). Still
  // free: of two nodes that chose the same row, the second updates nothing (PostgreSQL checks the
  // condition again on the row it waited for).
  const rows = await tx.all<SendRow & { seq: number }>(
    `UPDATE sends SET leased_until = ?
     WHERE id IN (SELECT s.id FROM sends AS s
       WHERE s.state = 'pending' AND s.head = 1 AND s.next_attempt_at <= ? AND s.leased_until <= ?
       ORDER BY s.next_attempt_at, s.seq LIMIT ?)
     AND state = 'pending' AND leased_until <= ?
     RETURNING ${COLUMNS}, seq`,
    [leasedUntil, now, now, Math.min(max, LEASE_WINDOW), now],
  );
  // In the queue's order.
  return rows
    .sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at) || Number(a.seq) - Number(b.seq))
    .map((row) => ({ ...toSend(row), leasedUntil }));
}

/** A send still pending under the lease that pushed it (its values: heldBy). */
const LEASE_HELD = 'WHERE id = ? AND leased_until = ? AND state = ?';
const heldBy = (result: { id: string; leasedUntil: number }): SqlValue[] => [
  result.id,
  result.leasedUntil,
  'pending',
];

export async function settleSend(
  tx: Transaction,
  result: SendSettlement,
  now: number,
  lock = '',
): Promise<boolean> {
  const where = LEASE_HELD;
  const key = heldBy(result);
  if (result.state === 'pending') {
    return (
      (await tx.run(
        `UPDATE sends SET attempts = ?, next_attempt_at = ?, last_error = ?, leased_until = 0, updated_at = ? ${where}`,
        [result.attempts, result.nextAttemptAt, result.lastError, now, ...key],
      )) > 0
    );
  }
  // Sent or failed: the contact's next pending send becomes the head of its queue.
  const contact = await tx.get<{ hub_id: string; line_id: string }>(
    'SELECT hub_id, line_id FROM sends WHERE id = ?',
    [result.id],
  );
  if (!contact) return false;
  const of = { hubId: contact.hub_id, lineId: contact.line_id };
  await lockContacts(tx, lock, [of]);
  const settled =
    result.state === 'sent'
      ? await markSent(tx, result, now, where, key)
      : await markFailed(tx, result, now, where, key);
  if (settled) await moveHeads(tx, [of]);
  return settled;
}

async function markSent(
  tx: Transaction,
  result: Extract<SendSettlement, { state: 'sent' }>,
  now: number,
  where: string,
  key: SqlValue[],
): Promise<boolean> {
  const changed = await tx.run(
    `UPDATE sends SET state = 'sent', message_ids = ?, last_error = NULL, attempts = attempts + 1,
       leased_until = 0, updated_at = ? ${where}`,
    [JSON.stringify(result.messageIds), now, ...key],
  );
  return changed > 0;
}

async function markFailed(
  tx: Transaction,
  result: Extract<SendSettlement, { state: 'failed' }>,
  now: number,
  where: string,
  key: SqlValue[],
): Promise<boolean> {
  const changed = await tx.run(
    `UPDATE sends SET state = 'failed', attempts = ?, last_error = ?, leased_until = 0, updated_at = ? ${where}`,
    [result.attempts, result.lastError, now, ...key],
  );
  return changed > 0;
}

export async function nextSendDue(sql: Sql): Promise<number | undefined> {
  const row = await sql.get<{ next: number | null }>(
    `SELECT MIN(next_attempt_at) AS next FROM sends WHERE state = 'pending'`,
  );
  return row?.next ?? undefined;
}

/** What the store does for a sent send's messages: ingest's own transaction work, and after it. */
export interface SentMessagesHooks {
  /** Stores requests of live writes in `tx` (ingest.ts's applyGroup, with the store's index). */
  store(tx: Transaction, clock: FeedClock, requests: readonly IngestRequest[]): Promise<GroupOutcome[]>;
  /** Once committed (the search indexer told of the messages queued). */
  stored(outcome: GroupOutcome): void;
}

/** The friend a sent send's messages went to. */
function lineIdOf(operations: readonly IngestOperation[]): string {
  const message = operations.find((op) => op.kind === 'message');
  return message?.kind === 'message' ? message.lineId : '';
}

/** Completions stored in one transaction at most (a node pushes up to 32 sends at once). */
const COMPLETIONS_A_TRANSACTION = 64;

interface Completion {
  result: Extract<SendSettlement, { state: 'sent' }>;
  hubId: string;
  /** The friend the send went to (its messages' lineId). */
  lineId: string;
  operations: readonly IngestOperation[];
  now: number;
  resolve: (done: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * The sends port (store.ts): replies to LINE friends, queued and pushed once.
 *
 * `complete` stores the sends LINE took as webhook ingest stores requests: those that arrive while a
 * transaction is being written wait, and go together in the next one, each in its own savepoint
 * (one that fails is undone alone). Every completion writes to its hub's feed, which takes the hub's
 * row: one transaction a send made 2,000 sends to one hub queue behind each other's commit.
 */
export function sendsPort(engine: Engine, hooks: SentMessagesHooks): SendsPort {
  const waiting: Completion[] = [];
  let writing = false;
  const writeSome = async (batch: Completion[]) => {
    try {
      const outcomes = await engine.writeChanges(
        [...new Set(batch.map((c) => c.hubId))],
        async (tx, clock): Promise<Array<{ stored: GroupOutcome } | { error: unknown } | undefined>> => {
          // Still each lease's, and still there (an erasure takes a contact's sends with it); on
          // PostgreSQL locked until commit (one another transaction holds is not this batch's).
          const rows = await tx.all<{ id: string; leased_until: number }>(
            `SELECT id, leased_until FROM sends WHERE id IN (${batch.map(() => '?').join(', ')})
             AND state = 'pending'${engine.skipLocked}`,
            batch.map((c) => c.result.id),
          );
          const leases = new Map(rows.map((row) => [row.id, Number(row.leased_until)]));
          const held = batch.filter((c) => leases.get(c.result.id) === c.result.leasedUntil);
          // Their messages as one group of requests (each in its own savepoint: one that fails is
          // undone alone), then each send marked sent, in the same transaction.
          const stored = await hooks.store(
            tx,
            clock,
            held.map((c) => ({ hubId: c.hubId, operations: c.operations, now: c.now })),
          );
          const outcome = new Map<Completion, { stored: GroupOutcome } | { error: unknown }>();
          const ended: Completion[] = [];
          for (const [i, c] of held.entries()) {
            const one = stored[i] ?? { failed: new Error('nothing stored') };
            if ('failed' in one) outcome.set(c, { error: one.failed });
            else if (await markSent(tx, c.result, c.now, LEASE_HELD, heldBy(c.result))) {
              outcome.set(c, { stored: one });
              ended.push(c);
            }
          }
          // The next sends of these contacts become heads last, under their locks: the locks are held
          // from here to the commit, not for the whole batch, so a send accepted meanwhile for one of
          // these friends waits a moment, not for every completion of the batch.
          await lockContacts(tx, engine.contactSendsLock, ended);
          await moveHeads(tx, ended);
          return batch.map((c) => outcome.get(c));
        },
      );
      outcomes.forEach((outcome, i) => {
        const c = batch[i] as Completion;
        if (outcome === undefined) c.resolve(false);
        else if ('error' in outcome) c.reject(outcome.error);
        else {
          hooks.stored(outcome.stored);
          c.resolve(true);
        }
      });
    } catch (error) {
      for (const c of batch) c.reject(error);
    }
  };
  const complete: SendsPort['complete'] = (result, hubId, operations, now) =>
    new Promise<boolean>((resolve, reject) => {
      waiting.push({ result, hubId, lineId: lineIdOf(operations), operations, now, resolve, reject });
      if (writing) return;
      writing = true;
      void (async () => {
        while (waiting.length > 0) await writeSome(waiting.splice(0, COMPLETIONS_A_TRANSACTION));
        writing = false;
      })();
    });
  return engine.port(
    'sends',
    {
      create: (send, windowMs) =>
        engine.write((tx) => createSend(tx, send, windowMs, engine.contactSendsLock)),
      get: (hubId, id) => getSend(engine.reads, hubId, id),
      // A lease, a retry's schedule or a refusal lost in a crash of the database means one more push
      // with the same retry key, which LINE answers 409 (taken) or refuses again: redoable.
      lease: (now, leasedUntil, max) =>
        engine.write((tx) => leaseSends(tx, now, leasedUntil, max), { redoable: true }),
      settle: (result, now) =>
        engine.write((tx) => settleSend(tx, result, now, engine.contactSendsLock), { redoable: true }),
      complete,
      nextDue: () => nextSendDue(engine.reads),
      queueDepth: async () =>
        (await engine.reads.get<{ n: number }>(`SELECT COUNT(*) AS n FROM sends WHERE state = 'pending'`))
          ?.n ?? 0,
    },
    ['create', 'lease', 'settle', 'complete'],
  );
}
