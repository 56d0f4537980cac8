/**
 * Retention (CONTRACT §13), written once for both engines: which hubs' runs are due (leased to one
 * node at a time, a dead node's lease passing to another), and the removal of a hub's oldest
 * messages in small batches, each its own short transaction, so that webhooks never wait long
 * behind a purge, and of its settled sends (§16) from before the same cutoff. A message removed takes its search entry (SQLite's trigger, PostgreSQL's
 * cascade), its `message.created` (it is that row), its media (released to the content worker
 * when no other message of the hub holds the bytes) and its id (retired, never given again).
 */
import type { RetentionPort, RetentionPreview, RetentionRun } from '../store.js';
import { type FeedClock, logChange } from './changes.js';
import { releaseContent } from './content.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

/**
 * The due hubs are read without locking them: a hub's row is locked by every write of its messages
 * (FeedClock), so FOR UPDATE SKIP LOCKED passed over a hub that received webhooks at that moment,
 * and a large purge of a busy hub stopped after its first run. Each is taken by an UPDATE that
 * checks the lease again on the row (PostgreSQL waits for the write, then re-reads the row): of two
 * nodes, one takes it.
 */
export async function leaseRetention(
  tx: Transaction,
  now: number,
  leasedUntil: number,
  max: number,
): Promise<RetentionRun[]> {
  const due = await tx.all<{ id: string; time_zone: string; retention_days: number }>(
    `SELECT id, time_zone, retention_days FROM hubs
     WHERE retention_days > 0 AND retention_due_at <= ? AND retention_leased_until <= ?
     ORDER BY retention_due_at, id LIMIT ?`,
    [now, now, max],
  );
  const runs: RetentionRun[] = [];
  for (const hub of due) {
    // Taken only if no other node took it meanwhile (the same condition, on the row).
    const taken = await tx.run(
      'UPDATE hubs SET retention_leased_until = ? WHERE id = ? AND retention_leased_until <= ?',
      [leasedUntil, hub.id, now],
    );
    if (taken === 1) {
      runs.push({ hubId: hub.id, timeZone: hub.time_zone, retentionDays: Number(hub.retention_days) });
    }
  }
  return runs;
}

export async function finishRetention(tx: Transaction, hubId: string, dueAt: number): Promise<void> {
  await tx.run('UPDATE hubs SET retention_leased_until = 0, retention_due_at = ? WHERE id = ?', [
    dueAt,
    hubId,
  ]);
}

export async function purgeBatch(
  tx: Transaction,
  clock: FeedClock,
  hubId: string,
  before: number,
  limit: number,
  now: number,
  announce: boolean,
): Promise<number> {
  // Replies sent or failed before the cutoff go too (their messages are the hub's to purge; a
  // failed one's text is nowhere else). A pending one stays: it is stored as new once it is sent.
  await tx.run(`DELETE FROM sends WHERE hub_id = ? AND created_at < ? AND state <> 'pending'`, [
    hubId,
    before,
  ]);
  // The oldest first, through messages_by_hub_and_time.
  const rows = await tx.all<{ id: number; public_id: string }>(
    'SELECT id, public_id FROM messages WHERE hub_id = ? AND created_at < ? ORDER BY created_at, id LIMIT ?',
    [hubId, before, limit],
  );
  if (rows.length === 0) return 0;
  const ids = rows.map((row) => Number(row.id));
  const publicIds = rows.map((row) => row.public_id);
  const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
  await releaseContent(tx, hubId, publicIds, now);
  await tx.run(
    `INSERT INTO retired_message_ids (hub_id, public_id)
     SELECT hub_id, public_id FROM messages WHERE id IN (${marks(ids.length)}) ON CONFLICT DO NOTHING`,
    ids,
  );
  const removed = await tx.run(`DELETE FROM messages WHERE id IN (${marks(ids.length)})`, ids);
  // Messages of any time went: every cached answer of the hub is stale (logChange says so too).
  clock.changedHistory(hubId);
  if (announce) await logChange(tx, clock, hubId, now, { type: 'retention.applied', before });
  return removed;
}

export async function previewRetention(sql: Sql, hubId: string, before: number): Promise<RetentionPreview> {
  const messages = await sql.get<{ n: number; oldest: number | null; newest: number | null }>(
    'SELECT COUNT(*) AS n, MIN(created_at) AS oldest, MAX(created_at) AS newest FROM messages WHERE hub_id = ? AND created_at < ?',
    [hubId, before],
  );
  const media = await sql.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM content_items AS ci JOIN messages AS m ON m.hub_id = ci.hub_id AND m.public_id = ci.message_id
     WHERE ci.hub_id = ? AND m.created_at < ?`,
    [hubId, before],
  );
  const toNumber = (value: number | null | undefined) =>
    value === null || value === undefined ? null : Number(value);
  return {
    messages: Number(messages?.n ?? 0),
    media: Number(media?.n ?? 0),
    oldest: toNumber(messages?.oldest),
    newest: toNumber(messages?.newest),
  };
}

/** The retention port (store.ts): runs leased per hub, purged in short batches. */
export function retentionPort(engine: Engine): RetentionPort {
  return engine.port(
    'retention',
    {
      lease: (now, leasedUntil, max) => engine.write((tx) => leaseRetention(tx, now, leasedUntil, max)),
      purgeBatch: (hubId, before, limit, now, announce) =>
        engine.writeChanges([hubId], (tx, clock) =>
          engine.deletingMany(tx, () => purgeBatch(tx, clock, hubId, before, limit, now, announce)),
        ),
      preview: (hubId, before) => previewRetention(engine.reads, hubId, before),
      finish: async (hubId, dueAt, removedAny) => {
        await engine.write((tx) => finishRetention(tx, hubId, dueAt));
        if (removedAny) await engine.afterErasure('retention');
      },
    },
    ['lease', 'purgeBatch', 'finish'],
  );
}
