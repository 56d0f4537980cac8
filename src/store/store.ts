/**
 * The one interface the modules see. Every method is asynchronous and big reads are
 * AsyncIterables of row batches, so a PostgreSQL implementation fits the same shape.
 */

export interface Hub {
  id: string;
  timeZone: string;
  /** The LINE channel secret, encrypted under the server secret; never plain text. */
  lineChannelSecretEncrypted: Buffer | null;
  /** Grows with every change to the hub's contacts or messages; feeds the ETag. */
  dataVersion: number;
  createdAt: number;
}

export type KeyScope = 'read' | 'ingest';

export interface RateLimit {
  requests: number;
  perSeconds: number;
}

export interface ApiKeyRecord {
  id: string;
  hubId: string;
  scope: KeyScope;
  label: string;
  /** HMAC-SHA256 of the key under the server secret. */
  keyHash: Buffer;
  /** AES-256-GCM copy of the key, for the account screen's copy icon only. */
  keyEncrypted: Buffer;
  /** The key's first characters, for display. */
  keyStart: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  rateLimit: RateLimit | null;
}

/** One message of an answer, with its contact; rows come grouped by contact in first-seen order. */
export interface MessageRow {
  contactId: number;
  lineId: string;
  vid: string;
  name: string;
  sender: string;
  msg: string;
  contentType: string;
  createdAt: number;
}

export interface MessageQuery {
  hubId: string;
  /** Inclusive lower bound, epoch ms. */
  fromMs?: number | undefined;
  /** Exclusive upper bound, epoch ms. */
  toMsExclusive?: number | undefined;
}

/** A message to store in bulk (file import); `sourceId` makes a re-import harmless. */
export interface ImportMessage {
  lineId: string;
  /** Set on the contact when not empty. */
  vid: string;
  /** Set on the contact when not empty. */
  name: string;
  /** Kept as given; null means "the friend" (rendered with the contact's name). */
  sender: string | null;
  msg: string;
  contentType: string;
  createdAt: number;
  sourceId: string;
}

export interface ImportOutcome {
  received: number;
  inserted: number;
  duplicates: number;
  contactsCreated: number;
}

export interface HubSettings {
  timeZone?: string | undefined;
  lineChannelSecretEncrypted?: Buffer | undefined;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Brings the schema up to date; safe to call at every start. */
  migrate(): Promise<void>;
  /** True when the store answers and its schema is current. */
  ready(): Promise<boolean>;
  close(): Promise<void>;

  hubs: {
    get(id: string): Promise<Hub | undefined>;
    /** Creates the hub, or updates only the settings given. */
    upsert(id: string, settings: HubSettings, now: number): Promise<{ hub: Hub; created: boolean }>;
  };

  keys: {
    insert(key: ApiKeyRecord): Promise<void>;
    findByHash(keyHash: Buffer): Promise<ApiKeyRecord | undefined>;
    findById(id: string): Promise<ApiKeyRecord | undefined>;
    listByHub(hubId: string): Promise<ApiKeyRecord[]>;
    /** Returns false when no live key has that id. */
    revoke(id: string, now: number): Promise<boolean>;
    setRateLimit(id: string, limit: RateLimit | null): Promise<boolean>;
    /** Records when keys were last used, many at once (never one write per request). */
    recordLastUsed(uses: ReadonlyMap<string, number>): Promise<void>;
  };

  messages: {
    /** The hub's messages in answer order (contacts first-seen, messages oldest first), in batches. */
    stream(query: MessageQuery): AsyncIterable<MessageRow[]>;
    /**
     * Stores every message of every batch in one transaction, or none of them when the
     * iterable throws. Messages whose sourceId the hub already has are skipped.
     */
    importAll(
      hubId: string,
      batches: AsyncIterable<readonly ImportMessage[]>,
      now: number,
    ): Promise<ImportOutcome>;
  };
}

/** SQLite codes meaning the store cannot answer now (locked too long, disk or file trouble). */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|PROTOCOL|NOMEM)/;

/** True when an error means "the store cannot be reached now" (503), not a fault of ours (500). */
export function isStoreUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNAVAILABLE_CODES.test(code);
}
