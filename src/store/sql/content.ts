/**
 * The media download queue and where each message's content is (CONTRACT §11), for both engines.
 *
 * - A message with content LINE holds gets a `content_items` row in the transaction that stores it
 *   (queueContent), so a download is never lost and never blocks the write.
 * - Downloads are leased: a node takes due rows by setting `leased_until` in an UPDATE that checks
 *   the row is still free, so of two nodes only one gets a row (PostgreSQL re-checks the condition
 *   after a concurrent update; SQLite has one writer). The outcome is stored under the lease taken.
 * - A blob is held by the rows that name its hash. When the last of a hub's rows that held one goes
 *   (unsend, erasure, retention: releaseContent), a `content_releases` row asks the content worker
 *   to delete the bytes.
 */
import type {
  ContentItem,
  ContentKind,
  ContentPort,
  ContentRequest,
  ContentState,
  ContentStatus,
  DownloadSettlement,
  LeasedDownload,
} from '../store.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

interface ItemRow {
  hub_id: string;
  message_id: string;
  line_message_id: string;
  kind: string;
  file_name: string | null;
  state: string;
  attempts: number;
  next_attempt_at: number;
  leased_until: number;
  last_error: string | null;
  sha256: string | null;
  media_type: string | null;
  size: number | null;
  created_at: number;
}

const ITEM_COLUMNS = `hub_id, message_id, line_message_id, kind, file_name, state, attempts, next_attempt_at,
  leased_until, last_error, sha256, media_type, size, created_at`;

function toItem(row: ItemRow): ContentItem {
  return {
    hubId: row.hub_id,
    messageId: row.message_id,
    lineMessageId: row.line_message_id,
    kind: row.kind as ContentKind,
    fileName: row.file_name,
    state: row.state as ContentState,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    sha256: row.sha256,
    mediaType: row.media_type,
    size: row.size,
    createdAt: row.created_at,
  };
}

/** Queues the download of a message just stored (in its transaction). */
export async function queueContent(
  tx: Transaction,
  hubId: string,
  messageId: string,
  content: ContentRequest,
  now: number,
): Promise<void> {
  await tx.run(
    `INSERT INTO content_items (hub_id, message_id, line_message_id, kind, file_name, state,
       next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT DO NOTHING`,
    [hubId, messageId, content.lineMessageId, content.kind, content.fileName, now, now, now],
  );
}

/**
 * The content of these messages of the hub goes with them (in the transaction that deletes them):
 * a blob no other message of the hub holds is released, for the content worker to delete.
 */
export async function releaseContent(
  tx: Transaction,
  hubId: string,
  messageIds: readonly string[],
  now: number,
): Promise<void> {
  const blobs: Array<string | null> = [];
  for (let i = 0; i < messageIds.length; i += RELEASE_CHUNK) {
    const chunk = messageIds.slice(i, i + RELEASE_CHUNK);
    const rows = await tx.all<{ sha256: string | null }>(
      `DELETE FROM content_items WHERE hub_id = ? AND message_id IN (${chunk.map(() => '?').join(', ')})
       RETURNING sha256`,
      [hubId, ...chunk],
    );
    blobs.push(...rows.map((row) => row.sha256));
  }
  await releaseBlobs(tx, hubId, blobs, now);
}

/** Message ids per statement of releaseContent. */
const RELEASE_CHUNK = 500;

/**
 * Blobs whose content items were just deleted: each one no other message of the hub holds is
 * released, for the content worker to delete (unsend, erasure, retention).
 */
export async function releaseBlobs(
  tx: Transaction,
  hubId: string,
  sha256s: Iterable<string | null>,
  now: number,
): Promise<void> {
  for (const sha256 of new Set(sha256s)) {
    if (sha256 === null || (await holds(tx, hubId, sha256))) continue;
    await tx.run(
      'INSERT INTO content_releases (hub_id, sha256, released_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      [hubId, sha256, now],
    );
  }
}

async function holds(sql: Sql, hubId: string, sha256: string): Promise<boolean> {
  return (
    (await sql.get('SELECT 1 AS one FROM content_items WHERE hub_id = ? AND sha256 = ? LIMIT 1', [
      hubId,
      sha256,
    ])) !== undefined
  );
}

export async function getContentItem(
  sql: Sql,
  hubId: string,
  messageId: string,
): Promise<ContentItem | undefined> {
  const row = await sql.get<ItemRow>(
    `SELECT ${ITEM_COLUMNS} FROM content_items WHERE hub_id = ? AND message_id = ?`,
    [hubId, messageId],
  );
  return row ? toItem(row) : undefined;
}

/** Due rows looked at per lease: the oldest, so a long queue costs no more than a short one. */
const LEASE_WINDOW = 200;

/** Due and free, of hubs with an access token. */
const DUE = `i.state = 'pending' AND i.next_attempt_at <= ? AND i.leased_until <= ?
  AND EXISTS (SELECT 1 FROM hubs AS h WHERE h.id = i.hub_id AND h.line_channel_access_token_encrypted IS NOT NULL)`;

export async function leaseDownloads(
  tx: Transaction,
  now: number,
  leasedUntil: number,
  max: number,
  perHub: number,
): Promise<LeasedDownload[]> {
  // The oldest due rows (a bounded window, however long the queue), each hub's ranked oldest first,
  // less the rows the hub already has leased on any node.
  const candidates = await tx.all<{ hub_id: string; message_id: string }>(
    `SELECT hub_id, message_id FROM (
       SELECT d.hub_id, d.message_id, d.next_attempt_at,
              ROW_NUMBER() OVER (PARTITION BY d.hub_id ORDER BY d.next_attempt_at, d.message_id) AS rank,
              (SELECT COUNT(*) FROM content_items AS busy
                WHERE busy.hub_id = d.hub_id AND busy.state = 'pending' AND busy.leased_until > ?) AS leased
       FROM (SELECT i.hub_id, i.message_id, i.next_attempt_at FROM content_items AS i WHERE ${DUE}
             ORDER BY i.next_attempt_at LIMIT ?) AS d
     ) AS ranked
     WHERE rank + leased <= ?
     ORDER BY next_attempt_at, hub_id, message_id LIMIT ?`,
    [now, now, now, Math.max(LEASE_WINDOW, max * 10), perHub, max],
  );
  const leased: LeasedDownload[] = [];
  for (const candidate of candidates) {
    // Still free: of two nodes that chose the same row, the second updates nothing.
    const row = await tx.get<ItemRow>(
      `UPDATE content_items SET leased_until = ?
       WHERE hub_id = ? AND message_id = ? AND state = 'pending' AND leased_until <= ?
       RETURNING ${ITEM_COLUMNS}`,
      [leasedUntil, candidate.hub_id, candidate.message_id, now],
    );
    if (row) leased.push({ ...toItem(row), leasedUntil });
  }
  return leased;
}

export async function extendDownload(
  tx: Transaction,
  hubId: string,
  messageId: string,
  leasedUntil: number,
  until: number,
): Promise<boolean> {
  const moved = await tx.run(
    `UPDATE content_items SET leased_until = ?
     WHERE hub_id = ? AND message_id = ? AND leased_until = ? AND state = 'pending'`,
    [until, hubId, messageId, leasedUntil],
  );
  return moved > 0;
}

export async function settleDownload(
  tx: Transaction,
  result: DownloadSettlement,
  now: number,
): Promise<boolean> {
  const where = 'WHERE hub_id = ? AND message_id = ? AND leased_until = ?';
  const key = [result.hubId, result.messageId, result.leasedUntil];
  let changed: number;
  if (result.state === 'done') {
    changed = await tx.run(
      `UPDATE content_items SET state = 'done', sha256 = ?, media_type = ?, size = ?, last_error = NULL,
         leased_until = 0, updated_at = ? ${where}`,
      [result.sha256, result.mediaType, result.size, now, ...key],
    );
    // A release of these bytes asked for before this message came to hold them is void.
    if (changed > 0)
      await tx.run('DELETE FROM content_releases WHERE hub_id = ? AND sha256 = ?', [
        result.hubId,
        result.sha256,
      ]);
  } else if (result.state === 'pending') {
    changed = await tx.run(
      `UPDATE content_items SET attempts = ?, next_attempt_at = ?, last_error = ?, leased_until = 0,
         updated_at = ? ${where}`,
      [result.attempts, result.nextAttemptAt, result.lastError, now, ...key],
    );
  } else {
    changed = await tx.run(
      `UPDATE content_items SET state = ?, attempts = ?, last_error = ?, leased_until = 0, updated_at = ? ${where}`,
      [result.state, result.attempts, result.lastError, now, ...key],
    );
  }
  return changed > 0;
}

export async function nextDownloadDue(sql: Sql): Promise<number | undefined> {
  const row = await sql.get<{ next: number | null }>(
    `SELECT MIN(i.next_attempt_at) AS next FROM content_items AS i WHERE i.state = 'pending'
       AND EXISTS (SELECT 1 FROM hubs AS h WHERE h.id = i.hub_id AND h.line_channel_access_token_encrypted IS NOT NULL)`,
  );
  return row?.next ?? undefined;
}

export async function contentStatus(sql: Sql, hubId: string): Promise<ContentStatus> {
  const rows = await sql.all<{ state: string; n: number }>(
    'SELECT state, COUNT(*) AS n FROM content_items WHERE hub_id = ? GROUP BY state',
    [hubId],
  );
  const bytes = await sql.get<{ bytes: number | null }>(
    `SELECT SUM(size) AS bytes FROM (SELECT DISTINCT sha256, size FROM content_items
       WHERE hub_id = ? AND state = 'done') AS blobs`,
    [hubId],
  );
  const status: ContentStatus = { pending: 0, done: 0, gone: 0, failed: 0, bytes: Number(bytes?.bytes ?? 0) };
  for (const row of rows) {
    if (row.state in status) status[row.state as ContentState] = Number(row.n);
  }
  return status;
}

export async function retryFailedDownloads(tx: Transaction, hubId: string, now: number): Promise<number> {
  return tx.run(
    `UPDATE content_items SET state = 'pending', attempts = 0, next_attempt_at = ?, leased_until = 0,
       updated_at = ? WHERE hub_id = ? AND state = 'failed'`,
    [now, now, hubId],
  );
}

export async function downloadQueueDepth(sql: Sql): Promise<number> {
  const row = await sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM content_items WHERE state = 'pending'");
  return Number(row?.n ?? 0);
}

export async function contentReleases(
  sql: Sql,
  max: number,
): Promise<Array<{ hubId: string; sha256: string }>> {
  const rows = await sql.all<{ hub_id: string; sha256: string }>(
    'SELECT hub_id, sha256 FROM content_releases ORDER BY released_at LIMIT ?',
    [max],
  );
  return rows.map((row) => ({ hubId: row.hub_id, sha256: row.sha256 }));
}

export async function claimRelease(tx: Transaction, hubId: string, sha256: string): Promise<boolean> {
  const taken = await tx.run('DELETE FROM content_releases WHERE hub_id = ? AND sha256 = ?', [hubId, sha256]);
  return taken > 0 && !(await holds(tx, hubId, sha256));
}

export async function requeueMissing(
  tx: Transaction,
  hubId: string,
  sha256: string,
  now: number,
): Promise<number> {
  return tx.run(
    `UPDATE content_items SET state = 'pending', sha256 = NULL, media_type = NULL, size = NULL,
       next_attempt_at = ?, leased_until = 0, updated_at = ?
     WHERE hub_id = ? AND sha256 = ? AND state = 'done'`,
    [now, now, hubId, sha256],
  );
}

/** The content port (store.ts): the media download queue and what is kept. */
export function contentPort(engine: Engine): ContentPort {
  return engine.port(
    'content',
    {
      get: (hubId, messageId) => getContentItem(engine.reads, hubId, messageId),
      lease: (now, leasedUntil, max, perHub) =>
        engine.write(async (tx) => {
          if (engine.downloadLeaseLock) await tx.get(engine.downloadLeaseLock);
          return leaseDownloads(tx, now, leasedUntil, max, perHub);
        }),
      extend: (hubId, messageId, leasedUntil, until) =>
        engine.write((tx) => extendDownload(tx, hubId, messageId, leasedUntil, until)),
      settle: (result, now) => engine.write((tx) => settleDownload(tx, result, now)),
      nextDue: () => nextDownloadDue(engine.reads),
      status: (hubId) => contentStatus(engine.reads, hubId),
      retry: (hubId, now) => engine.write((tx) => retryFailedDownloads(tx, hubId, now)),
      queueDepth: () => downloadQueueDepth(engine.reads),
      releases: (max) => contentReleases(engine.reads, max),
      claimRelease: (hubId, sha256) => engine.write((tx) => claimRelease(tx, hubId, sha256)),
      requeueMissing: (hubId, sha256, now) => engine.write((tx) => requeueMissing(tx, hubId, sha256, now)),
    },
    ['lease', 'extend', 'settle', 'retry', 'claimRelease', 'requeueMissing'],
  );
}
