/** The api_keys table. A key itself is never stored: its HMAC, and an encrypted copy. */
import type { ApiKeyRecord, KeyScope, KeysPort, RateLimit } from '../store.js';
import type { Engine } from './engine.js';
import type { Sql, Transaction } from './executor.js';

interface KeyRow {
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

function toKey(row: KeyRow): ApiKeyRecord {
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

export async function insertKey(tx: Transaction, key: ApiKeyRecord): Promise<void> {
  await tx.run(
    `INSERT INTO api_keys (id, hub_id, scope, label, key_hash, key_encrypted, key_start, created_at,
       last_used_at, revoked_at, rate_limit_requests, rate_limit_per_seconds)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
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
    ],
  );
}

export async function findKeyByHash(sql: Sql, keyHash: Buffer): Promise<ApiKeyRecord | undefined> {
  const row = await sql.get<KeyRow>('SELECT * FROM api_keys WHERE key_hash = ?', [keyHash]);
  return row ? toKey(row) : undefined;
}

export async function findKeyById(sql: Sql, id: string): Promise<ApiKeyRecord | undefined> {
  const row = await sql.get<KeyRow>('SELECT * FROM api_keys WHERE id = ?', [id]);
  return row ? toKey(row) : undefined;
}

export async function listKeysOfHub(sql: Sql, hubId: string): Promise<ApiKeyRecord[]> {
  const rows = await sql.all<KeyRow>('SELECT * FROM api_keys WHERE hub_id = ? ORDER BY created_at, id', [
    hubId,
  ]);
  return rows.map(toKey);
}

/** False when no live key has that id. */
export async function revokeKey(tx: Transaction, id: string, now: number): Promise<boolean> {
  return (
    (await tx.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, id])) > 0
  );
}

export async function setKeyRateLimit(
  tx: Transaction,
  id: string,
  limit: RateLimit | null,
): Promise<boolean> {
  const changed = await tx.run(
    'UPDATE api_keys SET rate_limit_requests = ?, rate_limit_per_seconds = ? WHERE id = ?',
    [limit?.requests ?? null, limit?.perSeconds ?? null, id],
  );
  return changed > 0;
}

/** When keys were last used; a time never goes back (two nodes may report out of order). */
export async function recordKeysLastUsed(tx: Transaction, uses: ReadonlyMap<string, number>): Promise<void> {
  for (const [id, at] of uses) {
    await tx.run(
      'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
      [at, id, at],
    );
  }
}

/** The keys port (store.ts). */
export function keysPort(engine: Engine): KeysPort {
  return engine.port(
    'keys',
    {
      insert: (key) => engine.write((tx) => insertKey(tx, key)),
      findByHash: (keyHash) => findKeyByHash(engine.reads, keyHash),
      findById: (id) => findKeyById(engine.reads, id),
      listByHub: (hubId) => listKeysOfHub(engine.reads, hubId),
      revoke: (id, now) => engine.write((tx) => revokeKey(tx, id, now)),
      setRateLimit: (id, limit) => engine.write((tx) => setKeyRateLimit(tx, id, limit)),
      recordLastUsed: async (uses) => {
        if (uses.size > 0) await engine.write((tx) => recordKeysLastUsed(tx, uses));
      },
    },
    ['insert', 'revoke', 'setRateLimit', 'recordLastUsed'],
  );
}
