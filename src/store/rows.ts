/** Table rows as both stores return them (same column names), and their mapping to records. */
import type { ApiKeyRecord, Hub, KeyScope } from './store.js';

export interface HubRow {
  id: string;
  time_zone: string;
  line_channel_secret_encrypted: Buffer | null;
  line_channel_access_token_encrypted: Buffer | null;
  data_version: number;
  created_at: number;
}

export interface KeyRow {
  id: string;
  hub_id: string;
  scope: KeyScope;
  label: string;
  key_hash: Buffer;
  key_encrypted: Buffer;
  key_start: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  rate_limit_requests: number | null;
  rate_limit_per_seconds: number | null;
}

export function toHub(row: HubRow): Hub {
  return {
    id: row.id,
    timeZone: row.time_zone,
    lineChannelSecretEncrypted: row.line_channel_secret_encrypted,
    lineChannelAccessTokenEncrypted: row.line_channel_access_token_encrypted,
    dataVersion: row.data_version,
    createdAt: row.created_at,
  };
}

export function toKey(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    hubId: row.hub_id,
    scope: row.scope,
    label: row.label,
    keyHash: row.key_hash,
    keyEncrypted: row.key_encrypted,
    keyStart: row.key_start,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    rateLimit:
      row.rate_limit_requests !== null && row.rate_limit_per_seconds !== null
        ? { requests: row.rate_limit_requests, perSeconds: row.rate_limit_per_seconds }
        : null,
  };
}

/** The columns of api_keys in insert order, and a record's values in that order (an INSERT in either store). */
export const KEY_COLUMNS =
  'id, hub_id, scope, label, key_hash, key_encrypted, key_start, created_at, last_used_at, revoked_at, rate_limit_requests, rate_limit_per_seconds';

export function keyRowValues(key: ApiKeyRecord): Array<string | number | Buffer | null> {
  return [
    key.id,
    key.hubId,
    key.scope,
    key.label,
    key.keyHash,
    key.keyEncrypted,
    key.keyStart,
    key.createdAt,
    key.lastUsedAt,
    key.revokedAt,
    key.rateLimit?.requests ?? null,
    key.rateLimit?.perSeconds ?? null,
  ];
}
