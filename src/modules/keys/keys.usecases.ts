/**
 * Issuing, verifying, listing and revoking API keys. A key is never stored in plain text:
 * it is found by its keyed hash and kept encrypted only so it can be copied again.
 */
import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../../lib/secrets.js';
import type { ApiKeyRecord, KeyScope, RateLimit, Store } from '../../store/store.js';
import { keyErrors } from './keys.errors.js';
import { generateApiKey, isWellFormedApiKey, keyStart, newKeyId } from './keys.format.js';

export const KEY_SCOPES: readonly KeyScope[] = ['read', 'ingest', 'admin', 'send'];
const LAST_USED_RESOLUTION_MS = 1000;
const MAX_LABEL_LENGTH = 200;

/** What may be shown of a key: everything but the key itself and its hash. */
export interface KeySummary {
  id: string;
  hubId: string;
  scope: KeyScope;
  label: string;
  keyStart: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  rateLimit: RateLimit | null;
}

export function summarizeKey(record: ApiKeyRecord): KeySummary {
  return {
    id: record.id,
    hubId: record.hubId,
    scope: record.scope,
    label: record.label,
    keyStart: record.keyStart,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt,
    revokedAt: record.revokedAt,
    rateLimit: record.rateLimit,
  };
}

export class KeyService {
  /** Uses waiting to be written: key id → last use (ms). Written in one batch by flushLastUsed(). */
  private readonly pendingUses = new Map<string, number>();

  constructor(
    private readonly store: Pick<Store, 'keys'>,
    private readonly secrets: SecretBox,
    private readonly clock: () => number = Date.now,
  ) {}

  async issue(hubId: string, scope: KeyScope, label: string): Promise<{ key: string; summary: KeySummary }> {
    if (!KEY_SCOPES.includes(scope)) throw keyErrors.unknownScope(KEY_SCOPES);
    if (label.length > MAX_LABEL_LENGTH) throw keyErrors.labelTooLong(MAX_LABEL_LENGTH);
    const key = generateApiKey();
    const record: ApiKeyRecord = {
      id: newKeyId(),
      hubId,
      scope,
      label,
      keyHash: this.secrets.hashKey(key),
      keyEncrypted: this.secrets.encrypt(key),
      keyStart: keyStart(key),
      createdAt: this.clock(),
      lastUsedAt: null,
      revokedAt: null,
      rateLimit: null,
    };
    await this.store.keys.insert(record);
    return { key, summary: summarizeKey(record) };
  }

  /**
   * The live key record for a presented key, or undefined. A malformed key (wrong prefix,
   * length, alphabet or checksum) is refused without touching the store.
   */
  async verify(presented: string): Promise<ApiKeyRecord | undefined> {
    const record = await this.findByKey(presented);
    if (!record || record.revokedAt !== null) return undefined;
    const now = this.clock();
    if (record.lastUsedAt === null || now - record.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      this.pendingUses.set(record.id, now);
    }
    return record;
  }

  /**
   * The record of a key given in full, revoked or not, or undefined. A malformed key is refused
   * without touching the store. Not a use of the key (verify is).
   */
  async findByKey(presented: string): Promise<ApiKeyRecord | undefined> {
    if (!isWellFormedApiKey(presented)) return undefined;
    const hash = this.secrets.hashKey(presented);
    const record = await this.store.keys.findByHash(hash);
    if (!record || record.keyHash.length !== hash.length || !timingSafeEqual(record.keyHash, hash)) {
      return undefined;
    }
    return record;
  }

  async flushLastUsed(): Promise<void> {
    if (this.pendingUses.size === 0) return;
    const uses = new Map(this.pendingUses);
    this.pendingUses.clear();
    await this.store.keys.recordLastUsed(uses);
  }

  /** A hub's keys, newest first: the order the account screen and `chatlog key list` show them in. */
  async list(hubId: string): Promise<KeySummary[]> {
    return (await this.store.keys.listByHub(hubId)).map(summarizeKey).reverse();
  }

  async revoke(keyId: string): Promise<void> {
    if (await this.store.keys.revoke(keyId, this.clock())) return;
    const existing = await this.store.keys.findById(keyId);
    throw existing ? keyErrors.alreadyRevoked(keyId) : keyErrors.notFound(keyId);
  }

  async setRateLimit(keyId: string, limit: RateLimit | null): Promise<void> {
    if (!(await this.store.keys.setRateLimit(keyId, limit))) throw keyErrors.notFound(keyId);
  }

  /** The full key of a live key: for the account screen's copy icon and the demo. */
  async reveal(keyId: string): Promise<string | undefined> {
    const record = await this.store.keys.findById(keyId);
    if (!record || record.revokedAt !== null) return undefined;
    return this.secrets.decrypt(record.keyEncrypted);
  }
}
