/**
 * Outgoing webhooks' durable state (CONTRACT §10), written once for both engines: the endpoints,
 * and the outbox of deliveries.
 *
 * An endpoint follows its hub's change log (changes.ts) from the seq it was added at:
 * `dispatched_through` says up to where the hub's changes have become deliveries. Dispatching
 * reads the log after it, inserts a pending delivery per change of the endpoint's types (keyed by
 * endpoint and seq, so two nodes dispatching the same changes make the same rows once), and moves
 * the mark forward; the write path of messages is not touched.
 *
 * A delivery is attempted by one node at a time: a node leases due rows (`leased_until`, taken with
 * FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite has one writer) and settles them with the lease it
 * took, so a node that died mid-attempt leaves rows that another node takes once the lease ends.
 */
import type {
  ChangeType,
  DeliveryRecord,
  DeliverySettlement,
  DeliveryState,
  LeasedDelivery,
  WebhookEndpoint,
  WebhooksPort,
} from '../store.js';
import { changeTypesAfter, feedPosition, seqRange } from './changes.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

interface EndpointRow {
  id: string;
  hub_id: string;
  url: string;
  events: string | null;
  secret_encrypted: Buffer;
  created_at: number;
  disabled_at: number | null;
  disabled_reason: string | null;
}

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    hubId: row.hub_id,
    url: row.url,
    events: row.events === null ? null : (JSON.parse(row.events) as ChangeType[]),
    secretEncrypted: row.secret_encrypted,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
  };
}

const ENDPOINT_COLUMNS =
  'id, hub_id, url, events, secret_encrypted, created_at, disabled_at, disabled_reason';

export async function addEndpoint(
  tx: Transaction,
  endpoint: Omit<WebhookEndpoint, 'disabledAt' | 'disabledReason'>,
): Promise<WebhookEndpoint> {
  // From the feed's end as this transaction sees it: the hub is locked (FeedClock), so no change
  // commits between this read and the commit, and every later one is after it.
  const position = await feedPosition(tx, endpoint.hubId);
  if (!position) throw new Error(`hub ${endpoint.hubId} does not exist`);
  await tx.run(
    `INSERT INTO webhook_endpoints (id, hub_id, url, events, secret_encrypted, created_at, dispatched_through)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      endpoint.id,
      endpoint.hubId,
      endpoint.url,
      endpoint.events === null ? null : JSON.stringify(endpoint.events),
      endpoint.secretEncrypted,
      endpoint.createdAt,
      position.lastSeq,
    ],
  );
  return { ...endpoint, disabledAt: null, disabledReason: null };
}

export async function getEndpoint(sql: Sql, id: string): Promise<WebhookEndpoint | undefined> {
  const row = await sql.get<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ? AND removed_at IS NULL`,
    [id],
  );
  return row && toEndpoint(row);
}

export async function listEndpoints(sql: Sql, hubId: string): Promise<WebhookEndpoint[]> {
  const rows = await sql.all<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE hub_id = ? AND removed_at IS NULL
     ORDER BY created_at, id`,
    [hubId],
  );
  return rows.map(toEndpoint);
}

export async function liveEndpoints(sql: Sql, hubId?: string): Promise<WebhookEndpoint[]> {
  const rows = await sql.all<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
     WHERE removed_at IS NULL AND disabled_at IS NULL ${hubId === undefined ? '' : 'AND hub_id = ?'}
     ORDER BY created_at, id`,
    hubId === undefined ? [] : [hubId],
  );
  return rows.map(toEndpoint);
}

export async function removeEndpoint(
  tx: Transaction,
  hubId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const removed = await tx.run(
    'UPDATE webhook_endpoints SET removed_at = ? WHERE id = ? AND hub_id = ? AND removed_at IS NULL',
    [now, id, hubId],
  );
  return removed > 0;
}

export async function disableEndpoint(
  tx: Transaction,
  id: string,
  reason: string,
  now: number,
): Promise<void> {
  await tx.run(
    'UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL',
    [now, reason, id],
  );
}

/**
 * The endpoint's pending deliveries that wait for a later attempt are due at `now` (a retry at
 * once; their attempts so far still count towards the backoff); one being attempted (leased) is left
 * to its attempt. Resolves how many.
 */
export function retryDeliveriesNow(tx: Transaction, endpointId: string, now: number): Promise<number> {
  return tx.run(
    `UPDATE webhook_deliveries SET next_attempt_at = ?
     WHERE endpoint_id = ? AND state = 'pending' AND next_attempt_at > ? AND leased_until <= ?`,
    [now, endpointId, now, now],
  );
}

const wanted = (endpoint: WebhookEndpoint, type: string) =>
  endpoint.events === null || (endpoint.events as string[]).includes(type);

/** Rows per multi-row statement (well under both engines' limits on parameters). */
const ROWS_PER_STATEMENT = 200;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) out.push(items.slice(i, i + ROWS_PER_STATEMENT));
  return out;
}

async function insertDeliveries(
  tx: Transaction,
  endpointId: string,
  changes: ReadonlyArray<{ seq: number; type: string }>,
  now: number,
  again: boolean,
): Promise<void> {
  for (const chunk of chunks(changes)) {
    await tx.run(
      `INSERT INTO webhook_deliveries (endpoint_id, seq, type, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES ${chunk.map(() => "(?, ?, ?, 'pending', 0, ?, ?, ?)").join(', ')}
       ON CONFLICT (endpoint_id, seq) DO ${
         again
           ? "UPDATE SET state = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at, leased_until = 0, updated_at = excluded.updated_at"
           : 'NOTHING'
       }`,
      chunk.flatMap((change) => [endpointId, change.seq, change.type, now, now, now]),
    );
  }
}

/** See the file's comment; resolves to how many changes the mark moved past. */
export async function dispatchEndpoint(
  tx: Transaction,
  endpoint: WebhookEndpoint,
  now: number,
  max: number,
): Promise<number> {
  // The end first: when nothing visible follows the mark, the mark may move to it.
  const mark = await tx.get<{ dispatched_through: number; last_seq: number }>(
    `SELECT e.dispatched_through, h.last_seq FROM webhook_endpoints AS e JOIN hubs AS h ON h.id = e.hub_id
     WHERE e.id = ? AND e.removed_at IS NULL AND e.disabled_at IS NULL`,
    [endpoint.id],
  );
  if (!mark) return 0;
  const from = mark.dispatched_through;
  const end = mark.last_seq;
  if (end <= from) return 0;
  const changes = await changeTypesAfter(tx, endpoint.hubId, from, max);
  await insertDeliveries(
    tx,
    endpoint.id,
    changes.filter((change) => wanted(endpoint, change.type)),
    now,
    false,
  );
  const through = changes.length === max ? (changes.at(-1)?.seq ?? end) : end;
  await tx.run(
    `UPDATE webhook_endpoints SET dispatched_through = ? WHERE id = ? AND dispatched_through < ?`,
    [through, endpoint.id, through],
  );
  return through - from;
}

export async function replayEndpoint(
  tx: Transaction,
  endpoint: WebhookEndpoint,
  afterSeq: number,
  now: number,
): Promise<number> {
  const mark = await tx.get<{ dispatched_through: number }>(
    'SELECT dispatched_through FROM webhook_endpoints WHERE id = ?',
    [endpoint.id],
  );
  const through = mark?.dispatched_through ?? 0;
  let count = 0;
  for (let after = afterSeq; after < through; ) {
    const changes = (await changeTypesAfter(tx, endpoint.hubId, after, 1000)).filter(
      (change) => change.seq <= through,
    );
    if (changes.length === 0) break;
    const chosen = changes.filter((change) => wanted(endpoint, change.type));
    await insertDeliveries(tx, endpoint.id, chosen, now, true);
    count += chosen.length;
    after = changes.at(-1)?.seq ?? through;
  }
  return count;
}

/**
 * Leases up to `max` due deliveries of an endpoint, the soonest due first (those that came due at
 * or after `dueSince`): chosen with FOR UPDATE SKIP LOCKED on PostgreSQL, so two nodes leasing at
 * once take different rows (SQLite has one writer), then marked in one statement by their keys.
 *
 * Not one UPDATE with the choice as a subquery: with a new endpoint's statistics (one row) the
 * planner ran the subquery once per delivery of the endpoint, or joined every one of them to it
 * (100 ms to 5 s a lease with 10,000-20,000 deliveries on PostgreSQL).
 */
export async function leaseDeliveries(
  tx: Transaction,
  skipLocked: string,
  endpointId: string,
  { now, dueSince, leasedUntil, max }: { now: number; dueSince: number; leasedUntil: number; max: number },
): Promise<LeasedDelivery[]> {
  const rows = await tx.all<{ seq: number; attempts: number }>(
    `SELECT seq, attempts FROM webhook_deliveries
     WHERE endpoint_id = ? AND state = 'pending' AND next_attempt_at BETWEEN ? AND ? AND leased_until <= ?
     ORDER BY next_attempt_at, seq LIMIT ?${skipLocked}`,
    [endpointId, dueSince, now, now, max],
  );
  for (const chunk of chunks(rows)) {
    const seqs = chunk.map((row) => row.seq);
    await tx.run(
      `UPDATE webhook_deliveries SET leased_until = ?
       WHERE endpoint_id = ? AND seq BETWEEN ? AND ? AND seq IN (${seqs.map(() => '?').join(', ')})`,
      [leasedUntil, endpointId, ...seqRange(seqs), ...seqs],
    );
  }
  return rows.map((row) => ({ endpointId, seq: row.seq, attempts: row.attempts, leasedUntil }));
}

export async function settleDeliveries(
  tx: Transaction,
  results: readonly DeliverySettlement[],
  now: number,
): Promise<void> {
  // One statement per outcome shape (delivered, retried, ...): most of a batch shares one.
  const groups = new Map<string, DeliverySettlement[]>();
  for (const result of results) {
    const key = JSON.stringify([
      result.endpointId,
      result.leasedUntil,
      result.state,
      result.attempts,
      result.nextAttemptAt,
      result.lastStatus,
      result.lastError,
    ]);
    const group = groups.get(key);
    if (group) group.push(result);
    else groups.set(key, [result]);
  }
  for (const group of groups.values()) {
    const first = group[0] as DeliverySettlement;
    for (const chunk of chunks(group)) {
      const seqs = chunk.map((result) => result.seq);
      await tx.run(
        `UPDATE webhook_deliveries
         SET state = ?, attempts = ?, next_attempt_at = ?, leased_until = 0, last_status = ?, last_error = ?, updated_at = ?
         WHERE endpoint_id = ? AND seq BETWEEN ? AND ? AND leased_until = ? AND seq IN (${seqs.map(() => '?').join(', ')})`,
        [
          first.state,
          first.attempts,
          first.nextAttemptAt,
          first.lastStatus,
          first.lastError,
          now,
          first.endpointId,
          ...seqRange(seqs),
          first.leasedUntil,
          ...seqs,
        ],
      );
    }
  }
}

export async function endpointsWithDueDeliveries(sql: Sql, before: number): Promise<string[]> {
  // One index probe per live endpoint: never a read of every due delivery (a removed endpoint's
  // backlog stays pending, and this runs every few seconds on every node).
  const rows = await sql.all<{ id: string }>(
    `SELECT e.id FROM webhook_endpoints AS e
     WHERE e.removed_at IS NULL AND e.disabled_at IS NULL AND EXISTS (
       SELECT 1 FROM webhook_deliveries AS d
       WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= ?)`,
    [before],
  );
  return rows.map((row) => row.id);
}

export async function nextDueAt(sql: Sql, endpointId: string): Promise<number | undefined> {
  const row = await sql.get<{ next: number | null }>(
    `SELECT MIN(CASE WHEN leased_until > next_attempt_at THEN leased_until ELSE next_attempt_at END) AS next
     FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending'`,
    [endpointId],
  );
  return row?.next ?? undefined;
}

interface DeliveryRow {
  endpoint_id: string;
  seq: number;
  type: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export async function recentDeliveries(
  sql: Sql,
  endpointId: string,
  limit: number,
): Promise<DeliveryRecord[]> {
  const rows = await sql.all<DeliveryRow>(
    `SELECT endpoint_id, seq, type, state, attempts, next_attempt_at, last_status, last_error, created_at, updated_at
     FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ?`,
    [endpointId, limit],
  );
  return rows.map((row) => ({
    endpointId: row.endpoint_id,
    seq: row.seq,
    type: row.type,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}

/** The webhooks port (store.ts): endpoints and the outbox of their deliveries. */
export function webhooksPort(engine: Engine): WebhooksPort {
  return engine.port(
    'webhooks',
    {
      add: (endpoint) => engine.writeChanges([endpoint.hubId], (tx) => addEndpoint(tx, endpoint)),
      list: (hubId) => listEndpoints(engine.reads, hubId),
      live: (hubId) => liveEndpoints(engine.reads, hubId),
      get: (id) => getEndpoint(engine.reads, id),
      remove: (hubId, id, now) => engine.write((tx) => removeEndpoint(tx, hubId, id, now)),
      disable: (id, reason, now) => engine.write((tx) => disableEndpoint(tx, id, reason, now)),
      dispatch: (endpoint, now, max) => engine.write((tx) => dispatchEndpoint(tx, endpoint, now, max)),
      replay: (endpoint, afterSeq, now) => engine.write((tx) => replayEndpoint(tx, endpoint, afterSeq, now)),
      retryNow: (endpointId, now) => engine.write((tx) => retryDeliveriesNow(tx, endpointId, now)),
      lease: (endpointId, now, leasedUntil, max, dueSince = 0) =>
        engine.write(
          (tx) => leaseDeliveries(tx, engine.skipLocked, endpointId, { now, dueSince, leasedUntil, max }),
          { redoable: true },
        ),
      settle: async (results, now) => {
        if (results.length > 0)
          await engine.write((tx) => settleDeliveries(tx, results, now), { redoable: true });
      },
      due: (before) => endpointsWithDueDeliveries(engine.reads, before),
      nextDue: (endpointId) => nextDueAt(engine.reads, endpointId),
      recent: (endpointId, limit) => recentDeliveries(engine.reads, endpointId, limit),
    },
    ['add', 'remove', 'disable', 'dispatch', 'replay', 'retryNow', 'lease', 'settle'],
  );
}
