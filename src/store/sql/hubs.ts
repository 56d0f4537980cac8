/** The hubs table: a hub's settings and its change counter. */
import type { AnswerVersions, Hub, HubSettings, HubsPort } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

interface HubRow {
  id: string;
  time_zone: string;
  line_channel_secret_encrypted: Buffer | null;
  line_channel_access_token_encrypted: Buffer | null;
  data_version: number;
  retention_days: number;
  created_at: number;
}

function toHub(row: HubRow): Hub {
  return {
    id: row.id,
    timeZone: row.time_zone,
    lineChannelSecretEncrypted: row.line_channel_secret_encrypted,
    lineChannelAccessTokenEncrypted: row.line_channel_access_token_encrypted,
    dataVersion: row.data_version,
    retentionDays: Number(row.retention_days ?? 0),
    createdAt: row.created_at,
  };
}

export async function getHub(sql: Sql, id: string): Promise<Hub | undefined> {
  const row = await sql.get<HubRow>('SELECT * FROM hubs WHERE id = ?', [id]);
  return row ? toHub(row) : undefined;
}

/** Creates the hub, or updates only the settings given; a new time zone changes every answer. */
export async function upsertHub(
  tx: Transaction,
  id: string,
  settings: HubSettings,
  now: number,
): Promise<{ hub: Hub; created: boolean }> {
  const created =
    (await tx.run(
      `INSERT INTO hubs (id, time_zone, line_channel_secret_encrypted, line_channel_access_token_encrypted,
         retention_days, created_at)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
      [
        id,
        settings.timeZone ?? 'UTC',
        settings.lineChannelSecretEncrypted ?? null,
        settings.lineChannelAccessTokenEncrypted ?? null,
        settings.retentionDays ?? 0,
        now,
      ],
    )) === 1;
  if (!created) {
    if (settings.timeZone !== undefined) {
      await tx.run(
        `UPDATE hubs SET time_zone = ?, data_version = data_version + 1, history_version = history_version + 1,
           append_floor = NULL WHERE id = ?`,
        [settings.timeZone, id],
      );
    }
    if (settings.retentionDays !== undefined) {
      // Due at once: a shorter retention applies at the next pass of the worker, not in an hour.
      await tx.run('UPDATE hubs SET retention_days = ?, retention_due_at = 0 WHERE id = ?', [
        settings.retentionDays,
        id,
      ]);
    }
    if (settings.lineChannelSecretEncrypted !== undefined) {
      await tx.run('UPDATE hubs SET line_channel_secret_encrypted = ? WHERE id = ?', [
        settings.lineChannelSecretEncrypted,
        id,
      ]);
    }
    if (settings.lineChannelAccessTokenEncrypted !== undefined) {
      await tx.run('UPDATE hubs SET line_channel_access_token_encrypted = ? WHERE id = ?', [
        settings.lineChannelAccessTokenEncrypted,
        id,
      ]);
    }
  }
  const hub = await getHub(tx, id);
  if (!hub) throw new Error(`hub ${id} vanished`);
  return { hub, created };
}

/** The hub's answer versions (schema.ts migration 6), which every answer's ETag names. */
export async function answerVersions(sql: Sql, hubId: string): Promise<AnswerVersions> {
  const row = await sql.get<{
    data_version: number;
    history_version: number;
    append_floor: number | null;
    append_epoch: number;
  }>('SELECT data_version, history_version, append_floor, append_epoch FROM hubs WHERE id = ?', [hubId]);
  return {
    all: row?.data_version ?? 0,
    history: row?.history_version ?? 0,
    appendFloor: row?.append_floor ?? null,
    appendEpoch: row?.append_epoch ?? 0,
  };
}

/** Counts a change to the hubs' data (an answer cached under the old counter is never served again). */
export async function bumpDataVersion(tx: Transaction, hubId: string): Promise<void> {
  await tx.run('UPDATE hubs SET data_version = data_version + 1 WHERE id = ?', [hubId]);
}

export async function hubExists(sql: Sql, hubId: string): Promise<boolean> {
  return (await sql.get('SELECT 1 AS one FROM hubs WHERE id = ?', [hubId])) !== undefined;
}

/** The hubs port (store.ts). */
export function hubsPort(engine: Engine): HubsPort {
  return engine.port(
    'hubs',
    {
      get: (id) => getHub(engine.reads, id),
      upsert: (id, settings, now) => engine.write((tx) => upsertHub(tx, id, settings, now)),
    },
    ['upsert'],
  );
}
