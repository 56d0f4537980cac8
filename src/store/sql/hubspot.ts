/**
 * The HubSpot inbox's durable state (CONTRACT §18), for both engines: the custom channel's id, and
 * each hub's connection to an inbox with its place in the hub's feed.
 *
 * A connection follows its hub's change log (changes.ts) as an outgoing webhook endpoint does:
 * `published_through` is the seq up to which the hub's messages were published, set at the feed's
 * end when the hub connects. One node at a time publishes a hub (`leased_until`, taken in one
 * conditional UPDATE, so two nodes never both take it), in feed order, and moves the mark after
 * each message HubSpot took: a crash in between publishes that one message again.
 */
import type { HubspotConnection, HubspotPort, LeasedHubspotConnection } from '../store.js';
import { feedPosition } from './changes.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

interface ConnectionRow {
  hub_id: string;
  portal_id: string;
  access_token_encrypted: Buffer;
  refresh_token_encrypted: Buffer;
  token_expires_at: number;
  inbox_id: string;
  inbox_name: string;
  channel_account_id: string;
  connected_at: number;
  disconnected_at: number | null;
  published_through: number;
  published: number;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  last_error_at: number | null;
  connected_seq: number;
  backfill_from: number | null;
  backfill_to: number | null;
  backfill_through: number;
  backfill_total: number;
  backfill_published: number;
}

const COLUMNS = `hub_id, portal_id, access_token_encrypted, refresh_token_encrypted, token_expires_at, inbox_id,
  inbox_name, channel_account_id, connected_at, disconnected_at, published_through, published, attempts,
  next_attempt_at, last_error, last_error_at, connected_seq, backfill_from, backfill_to, backfill_through,
  backfill_total, backfill_published`;

function toConnection(row: ConnectionRow): HubspotConnection {
  return {
    hubId: row.hub_id,
    portalId: row.portal_id,
    accessTokenEncrypted: Buffer.from(row.access_token_encrypted),
    refreshTokenEncrypted: Buffer.from(row.refresh_token_encrypted),
    tokenExpiresAt: Number(row.token_expires_at),
    inboxId: row.inbox_id,
    inboxName: row.inbox_name,
    channelAccountId: row.channel_account_id,
    connectedAt: Number(row.connected_at),
    disconnectedAt: row.disconnected_at === null ? null : Number(row.disconnected_at),
    publishedThrough: Number(row.published_through),
    published: Number(row.published),
    attempts: row.attempts,
    nextAttemptAt: Number(row.next_attempt_at),
    lastError: row.last_error,
    lastErrorAt: row.last_error_at === null ? null : Number(row.last_error_at),
    connectedSeq: Number(row.connected_seq),
    backfill:
      row.backfill_from === null
        ? undefined
        : {
            from: Number(row.backfill_from),
            to: row.backfill_to === null ? undefined : Number(row.backfill_to),
            through: Number(row.backfill_through),
            total: Number(row.backfill_total),
            published: Number(row.backfill_published),
            done: Number(row.backfill_through) >= Number(row.connected_seq),
          },
  };
}

async function getConnection(sql: Sql, hubId: string): Promise<HubspotConnection | undefined> {
  const row = await sql.get<ConnectionRow>(`SELECT ${COLUMNS} FROM hubspot_connections WHERE hub_id = ?`, [
    hubId,
  ]);
  return row && toConnection(row);
}

async function connect(
  tx: Transaction,
  c: Parameters<HubspotPort['connect']>[0],
): Promise<HubspotConnection> {
  // From the feed's end as this transaction sees it: the hub is locked (FeedClock), so every
  // message committed after this read has a later seq.
  const position = await feedPosition(tx, c.hubId);
  if (!position) throw new Error(`hub ${c.hubId} does not exist`);
  await tx.run('DELETE FROM hubspot_connections WHERE hub_id = ?', [c.hubId]);
  await tx.run(
    `INSERT INTO hubspot_connections (hub_id, portal_id, access_token_encrypted, refresh_token_encrypted,
       token_expires_at, inbox_id, inbox_name, channel_account_id, connected_at, published_through, connected_seq)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      c.hubId,
      c.portalId,
      c.accessTokenEncrypted,
      c.refreshTokenEncrypted,
      c.tokenExpiresAt,
      c.inboxId,
      c.inboxName,
      c.channelAccountId,
      c.connectedAt,
      position.lastSeq,
      position.lastSeq,
    ],
  );
  const connection = await getConnection(tx, c.hubId);
  if (!connection) throw new Error('the connection was not stored');
  return connection;
}

async function lease(
  tx: Transaction,
  now: number,
  leasedUntil: number,
  max: number,
): Promise<LeasedHubspotConnection[]> {
  const rows = await tx.all<ConnectionRow>(
    `UPDATE hubspot_connections SET leased_until = ?
     WHERE hub_id IN (
       SELECT c.hub_id FROM hubspot_connections AS c JOIN hubs AS h ON h.id = c.hub_id
       WHERE c.disconnected_at IS NULL AND c.leased_until <= ? AND c.next_attempt_at <= ?
         AND (c.published_through < h.last_seq
           OR (c.backfill_from IS NOT NULL AND c.backfill_through < c.connected_seq) OR EXISTS (
           SELECT 1 FROM sends AS s WHERE s.hub_id = c.hub_id AND s.hubspot_message_id IS NOT NULL
             AND s.hubspot_reported = 0 AND s.state <> 'pending'))
       ORDER BY c.next_attempt_at LIMIT ?)
     AND leased_until <= ? AND disconnected_at IS NULL
     RETURNING ${COLUMNS}`,
    [leasedUntil, now, now, max, now],
  );
  return rows.map((row) => ({ ...toConnection(row), leasedUntil }));
}

export function hubspotPort(engine: Engine): HubspotPort {
  return engine.port(
    'hubspot',
    {
      channelId: async () =>
        (
          await engine.reads.get<{ value: string }>(
            "SELECT value FROM hubspot_settings WHERE name = 'channel_id'",
          )
        )?.value,
      setChannelId: (id) =>
        engine.write(async (tx) => {
          await tx.run("DELETE FROM hubspot_settings WHERE name = 'channel_id'");
          await tx.run("INSERT INTO hubspot_settings (name, value) VALUES ('channel_id', ?)", [id]);
        }),
      connect: (connection) => engine.writeChanges([connection.hubId], (tx) => connect(tx, connection)),
      get: (hubId) => getConnection(engine.reads, hubId),
      connectedHubs: async () =>
        (
          await engine.reads.all<{ hub_id: string }>(
            'SELECT hub_id FROM hubspot_connections WHERE disconnected_at IS NULL',
          )
        ).map((row) => row.hub_id),
      disconnect: (hubId, now) =>
        engine.write(
          async (tx) =>
            (await tx.run(
              'UPDATE hubspot_connections SET disconnected_at = ? WHERE hub_id = ? AND disconnected_at IS NULL',
              [now, hubId],
            )) > 0,
        ),
      setTokens: (hubId, tokens) =>
        engine.write(async (tx) => {
          await tx.run(
            `UPDATE hubspot_connections SET access_token_encrypted = ?, refresh_token_encrypted = ?,
               token_expires_at = ? WHERE hub_id = ?`,
            [tokens.accessTokenEncrypted, tokens.refreshTokenEncrypted, tokens.tokenExpiresAt, hubId],
          );
        }),
      lease: (now, leasedUntil, max) => engine.write((tx) => lease(tx, now, leasedUntil, max)),
      advance: ({ hubId, leasedUntil, renewedUntil, seq, messages, skipped }) =>
        engine.write(
          async (tx) =>
            (await tx.run(
              `UPDATE hubspot_connections SET published_through = ?, published = published + ?, attempts = 0,
                 leased_until = ?, last_error = ${skipped ? '?' : 'last_error'},
                 last_error_at = ${skipped ? '?' : 'last_error_at'}
               WHERE hub_id = ? AND leased_until = ? AND published_through <= ?`,
              [
                seq,
                messages,
                renewedUntil,
                ...(skipped ? [skipped.error, skipped.at] : []),
                hubId,
                leasedUntil,
                seq,
              ],
            )) > 0,
        ),
      release: (hubId, leasedUntil, failure) =>
        engine.write(async (tx) => {
          await tx.run(
            failure
              ? `UPDATE hubspot_connections SET leased_until = 0, attempts = ?, next_attempt_at = ?, last_error = ?,
                   last_error_at = ? WHERE hub_id = ? AND leased_until = ?`
              : 'UPDATE hubspot_connections SET leased_until = 0 WHERE hub_id = ? AND leased_until = ?',
            failure
              ? [failure.attempts, failure.nextAttemptAt, failure.error, failure.at, hubId, leasedUntil]
              : [hubId, leasedUntil],
          );
        }),
      byChannelAccount: async (channelAccountId) => {
        const row = await engine.reads.get<ConnectionRow>(
          `SELECT ${COLUMNS} FROM hubspot_connections WHERE channel_account_id = ?`,
          [channelAccountId],
        );
        return row && toConnection(row);
      },
      replies: async (hubId, since) => {
        const rows = await engine.reads.all<{ message_ids: string }>(
          `SELECT message_ids FROM sends WHERE hub_id = ? AND hubspot_message_id IS NOT NULL AND updated_at >= ?
             AND state = 'sent'`,
          [hubId, since],
        );
        return new Set(rows.flatMap((row) => JSON.parse(row.message_ids) as string[]));
      },
      unreported: async (hubId, max) =>
        (
          await engine.reads.all<{
            id: string;
            hubspot_message_id: string;
            state: string;
            last_error: string | null;
          }>(
            `SELECT id, hubspot_message_id, state, last_error FROM sends
             WHERE hub_id = ? AND hubspot_message_id IS NOT NULL AND hubspot_reported = 0 AND state <> 'pending'
             ORDER BY updated_at LIMIT ?`,
            [hubId, max],
          )
        ).map((row) => ({
          sendId: row.id,
          hubspotMessageId: row.hubspot_message_id,
          state: row.state === 'sent' ? 'sent' : 'failed',
          lastError: row.last_error,
        })),
      reported: (sendId) =>
        engine.write(async (tx) => {
          await tx.run('UPDATE sends SET hubspot_reported = 1 WHERE id = ?', [sendId]);
        }),
      beginAuthorization: (state) =>
        engine.write(async (tx) => {
          await tx.run('DELETE FROM hubspot_oauth_states WHERE expires_at <= ?', [state.now]);
          await tx.run(
            'INSERT INTO hubspot_oauth_states (state_hash, hub_id, account_id, expires_at) VALUES (?, ?, ?, ?)',
            [state.stateHash, state.hubId, state.accountId, state.expiresAt],
          );
        }),
      useAuthorization: (stateHash, accountId, now) =>
        engine.write(async (tx) => {
          const row = await tx.get<{ hub_id: string }>(
            `UPDATE hubspot_oauth_states SET used = 1
             WHERE state_hash = ? AND account_id = ? AND used = 0 AND expires_at > ? RETURNING hub_id`,
            [stateHash, accountId, now],
          );
          return row && { hubId: row.hub_id };
        }),
      holdTokens: (stateHash, tokens) =>
        engine.write(async (tx) => {
          await tx.run(
            `UPDATE hubspot_oauth_states SET portal_id = ?, access_token_encrypted = ?, refresh_token_encrypted = ?,
               token_expires_at = ? WHERE state_hash = ? AND used = 1`,
            [
              tokens.portalId,
              tokens.accessTokenEncrypted,
              tokens.refreshTokenEncrypted,
              tokens.tokenExpiresAt,
              stateHash,
            ],
          );
        }),
      heldTokens: async (stateHash, accountId, now) => {
        const row = await engine.reads.get<{
          hub_id: string;
          portal_id: string | null;
          access_token_encrypted: Buffer | null;
          refresh_token_encrypted: Buffer | null;
          token_expires_at: number | null;
        }>(
          `SELECT hub_id, portal_id, access_token_encrypted, refresh_token_encrypted, token_expires_at
           FROM hubspot_oauth_states WHERE state_hash = ? AND account_id = ? AND used = 1 AND expires_at > ?`,
          [stateHash, accountId, now],
        );
        if (!row?.portal_id || !row.access_token_encrypted || !row.refresh_token_encrypted) return undefined;
        return {
          hubId: row.hub_id,
          portalId: row.portal_id,
          accessTokenEncrypted: Buffer.from(row.access_token_encrypted),
          refreshTokenEncrypted: Buffer.from(row.refresh_token_encrypted),
          tokenExpiresAt: Number(row.token_expires_at),
        };
      },
      endAuthorization: (stateHash, now) =>
        engine.write(async (tx) => {
          await tx.run('DELETE FROM hubspot_oauth_states WHERE state_hash = ? OR expires_at <= ?', [
            stateHash,
            now,
          ]);
        }),
      startBackfill: (hubId, from) =>
        engine.write(async (tx) => {
          const connection = await getConnection(tx, hubId);
          if (!connection || connection.disconnectedAt !== null) return undefined;
          const running = connection.backfill;
          // One running at a time; one asked for days already covered has nothing to add.
          if (running && (!running.done || from >= running.from)) return connection;
          const to = running?.from ?? null;
          const total = await tx.get<{ n: number }>(
            `SELECT COUNT(*) AS n FROM messages WHERE hub_id = ? AND seq <= ? AND created_at >= ?
               ${to === null ? '' : 'AND created_at < ?'}`,
            [hubId, connection.connectedSeq, from, ...(to === null ? [] : [to])],
          );
          await tx.run(
            `UPDATE hubspot_connections SET backfill_from = ?, backfill_to = ?, backfill_through = 0,
               backfill_total = ?, backfill_published = 0, next_attempt_at = 0 WHERE hub_id = ?`,
            [from, to, Number(total?.n ?? 0), hubId],
          );
          return getConnection(tx, hubId);
        }),
      advanceBackfill: ({ hubId, leasedUntil, renewedUntil, seq, messages }) =>
        engine.write(
          async (tx) =>
            (await tx.run(
              `UPDATE hubspot_connections SET backfill_through = ?, backfill_published = backfill_published + ?,
                 attempts = 0, leased_until = ?
               WHERE hub_id = ? AND leased_until = ? AND backfill_through <= ?`,
              [seq, messages, renewedUntil, hubId, leasedUntil, seq],
            )) > 0,
        ),
      totals: async (now) => {
        const connections = await engine.reads.get<{ connected: number; failing: number }>(
          `SELECT COUNT(*) AS connected, COALESCE(SUM(CASE WHEN attempts > 0 AND next_attempt_at > ? THEN 1 ELSE 0 END), 0)
             AS failing FROM hubspot_connections WHERE disconnected_at IS NULL`,
          [now],
        );
        const waiting = await engine.reads.get<{ n: number }>(
          `SELECT COUNT(*) AS n FROM hubspot_connections AS c JOIN messages AS m
             ON m.hub_id = c.hub_id AND m.seq > c.published_through
           WHERE c.disconnected_at IS NULL`,
        );
        return {
          connected: Number(connections?.connected ?? 0),
          waiting: Number(waiting?.n ?? 0),
          failing: Number(connections?.failing ?? 0),
        };
      },
      waiting: async (hubId) =>
        (
          await engine.reads.get<{ n: number }>(
            `SELECT COUNT(*) AS n FROM messages WHERE hub_id = ? AND seq > (
               SELECT published_through FROM hubspot_connections WHERE hub_id = ? AND disconnected_at IS NULL)`,
            [hubId, hubId],
          )
        )?.n ?? 0,
    },
    [
      'setChannelId',
      'connect',
      'disconnect',
      'setTokens',
      'lease',
      'advance',
      'release',
      'reported',
      'startBackfill',
      'advanceBackfill',
      'beginAuthorization',
      'useAuthorization',
      'holdTokens',
      'endAuthorization',
    ],
  );
}
