/**
 * The types every part of chatlog shares about what it keeps: hubs, keys, contacts, messages,
 * changes, media, webhook deliveries, audit records and logins. Types only: the store's ports
 * (store.ts) take and give them, the modules and the engines use them; nothing here runs.
 *
 * Kept whole: one file of types shared across features, as the house asks (issue 43), so that no
 * feature imports another's to name what they both hold.
 */
/** A long poll's wait for a change of its hub (store.changes.subscribe). */
export interface Waiter {
  /** Resolves true when woken, false when `ms` passed (or the waiter was cancelled) first. */
  wait(ms: number): Promise<boolean>;
  /** Stops waiting; call it once the answer is made, woken or not. */
  cancel(): void;
}

export interface Hub {
  id: string;
  timeZone: string;
  /** The LINE channel secret, encrypted under the server secret; never plain text. */
  lineChannelSecretEncrypted: Buffer | null;
  /** The LINE channel access token (for profile look-ups), encrypted; null when not set. */
  lineChannelAccessTokenEncrypted: Buffer | null;
  /** Grows with every change to the hub's contacts or messages; feeds the ETag. */
  dataVersion: number;
  /** Days of messages kept (CONTRACT §13); 0 keeps everything. */
  retentionDays: number;
  createdAt: number;
}

export type KeyScope = 'read' | 'ingest' | 'admin' | 'send';

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

/** A connection pool's state, for metrics. */
export interface PoolState {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
}

/** A login to the account screen. */
export interface AccountRecord {
  id: number;
  /** Lower-cased. */
  email: string;
  /** `scrypt$N$r$p$salt$hash` (base64url); never the password. */
  passwordHash: string;
  createdAt: number;
}

/** A signed-in browser. The session id itself is never stored: only its hash. */
export interface SessionRecord {
  idHash: Buffer;
  accountId: number;
  createdAt: number;
  expiresAt: number;
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

/** One page of a search (CONTRACT §12): `terms` already normalised (normaliseText). */
export interface SearchQuery {
  hubId: string;
  terms: readonly string[];
  /** Inclusive lower bound, epoch ms. */
  fromMs?: number | undefined;
  /** Exclusive upper bound, epoch ms. */
  toMsExclusive?: number | undefined;
  /** Only this contact's messages. */
  lineId?: string | undefined;
  /** Results older than this one (the previous page's last): by createdAt, then row id. */
  before?: { createdAt: number; rowId: number } | undefined;
  limit: number;
  /** Messages read newest first without the index before it is asked (default 1,000; tests vary it). */
  scanFirst?: number | undefined;
}

/** A message a search found, `message` as the read API renders it (sender read now). */
export interface SearchHit {
  /** Arrival order within a createdAt (messages.id): the second key of the order, and of the cursor. */
  rowId: number;
  id: string;
  lineId: string;
  vid: string;
  name: string;
  message: { sender: string; msg: string; contentType: string; createdAt: number };
}

/** Where a message is in its contact's order (createdAt, then arrival): a page's edge. */
export interface MessagePosition {
  createdAt: number;
  /** messages.id: arrival order within a createdAt. */
  rowId: number;
}

/** A page of a hub's contacts, newest activity first (the account screen, CONTRACT §14). */
export interface ContactsPageQuery {
  hubId: string;
  limit: number;
  /** The previous page's last contact: its newest message's time (MIN_SAFE_INTEGER: none) and row id. */
  after?: { lastAt: number; contactId: number } | undefined;
  /**
   * Only the contacts whose name, lineId or vid contains this, compared in Unicode's NFKC form and
   * lower case (full-width letters and half-width kana match their usual forms).
   */
  matching?: string | undefined;
}

export interface ContactSummary extends Contact {
  /** contacts.id: the second key of the order, and of the next page's `after`. */
  contactId: number;
  /** The createdAt of its newest message; null while it has none. */
  lastMessageAt: number | null;
  messageCount: number;
}

export interface ContactsPage {
  contacts: ContactSummary[];
  hasMore: boolean;
}

/** A page of one contact's messages: the newest, around a message, or before or after a position. */
export interface ConversationQuery {
  hubId: string;
  lineId: string;
  at?: { around: string } | { before: MessagePosition } | { after: MessagePosition } | undefined;
  /** Inclusive lower bound, epoch ms. */
  fromMs?: number | undefined;
  /** Exclusive upper bound, epoch ms. */
  toMsExclusive?: number | undefined;
  limit: number;
}

/** A message as the conversation shows it: sender read now, and its kept content if it has some. */
export interface ConversationMessage extends MessagePosition {
  id: string;
  sender: string;
  msg: string;
  contentType: string;
  content: { kind: string; state: ContentState; mediaType: string | null; fileName: string | null } | null;
}

export interface ConversationPage {
  contact: Contact;
  /** Oldest first. */
  messages: ConversationMessage[];
  hasOlder: boolean;
  hasNewer: boolean;
  /** True when the page is around the message asked for (it is the contact's, in the range). */
  found: boolean;
}

export interface ImportOutcome {
  received: number;
  inserted: number;
  duplicates: number;
  contactsCreated: number;
}

export interface HubSettings {
  timeZone?: string | undefined;
  /** Days of messages kept (CONTRACT §13); 0 keeps everything. */
  retentionDays?: number | undefined;
  lineChannelSecretEncrypted?: Buffer | undefined;
  lineChannelAccessTokenEncrypted?: Buffer | undefined;
}

export type SourceKind = 'user' | 'group' | 'room';

/** One authorised API request, as the audit keeps it (CONTRACT §13). */
export interface AuditRecord {
  at: number;
  hubId: string;
  /** The key's id (`key_…`), never the key. */
  keyId: string;
  /** Method and route pattern: `GET /api/line/:hubId/messages`. */
  endpoint: string;
  /** The query string without `apikey`. */
  query: string;
  status: number;
  /** Messages, results or changes answered, where the endpoint counts them. */
  messages: number | null;
  /** Bytes sent (headers and body as they went on the wire). */
  bytes: number | null;
  client: string;
}

export interface AuditQuery {
  hubId: string;
  since?: number | undefined;
  keyId?: string | undefined;
  /** Records older than this one (the previous page's last): by time, then id. */
  before?: { at: number; id: number } | undefined;
  limit: number;
}

/** A hub's retention run, leased to this node. */
export interface RetentionRun {
  hubId: string;
  timeZone: string;
  retentionDays: number;
}

export interface RetentionPreview {
  messages: number;
  /** Media items (kept, pending or failed) of those messages. */
  media: number;
  /** The createdAt of the oldest and the newest of them; null when none. */
  oldest: number | null;
  newest: number | null;
}

export interface Contact {
  lineId: string;
  vid: string;
  name: string;
}

/** One change that arrives live (webhook or ingest API); a request's changes commit together. */
export type IngestOperation =
  | {
      kind: 'message';
      lineId: string;
      /** Null: the friend said it (rendered with the contact's name). */
      sender: string | null;
      msg: string;
      contentType: string;
      createdAt: number;
      /** Unique per hub: `line:<messageId>` for LINE, `ingest:<id>` for the ingest API. */
      sourceId: string;
      /**
       * The message id it should have (CONTRACT part two): LINE's message id, the ingest record's id.
       * Null, not a message id, or one the hub already has: the store assigns one.
       */
      id?: string | null | undefined;
      /** LINE's `{"source", "message"}` as JSON, for a LINE webhook message. */
      line?: string | null | undefined;
      /** Content LINE holds for this message, to download and keep (CONTRACT §11). */
      content?: ContentRequest | undefined;
      sourceKind: SourceKind | null;
      sourceChatId: string | null;
    }
  | { kind: 'follow'; lineId: string; at: number }
  | { kind: 'unfollow'; lineId: string; at: number }
  /** Removes the message with this source id from every later answer, now and if it comes again. */
  | { kind: 'unsend'; sourceId: string; at: number };

/** What a contact link or a profile look-up sets on a contact. */
export interface ContactChanges {
  vid?: string | undefined;
  name?: string | undefined;
  /** Set the name only when the contact has none yet (LINE's display name never overrides HubSpot's). */
  onlyIfNameEmpty?: boolean;
}

export interface IngestOutcome {
  stored: number;
  duplicates: number;
  removed: number;
  /** Contacts created by this call, by lineId. */
  contactsCreated: string[];
}

export type ChangeType =
  | 'message.created'
  | 'message.deleted'
  | 'contact.updated'
  | 'contact.erased'
  | 'retention.applied';

/** One change of a hub's feed (CONTRACT §9); `at` is its commit time, epoch ms. */
/** A page of the feed as its JSON (CONTRACT §9), made where its rows are read. */
export interface FeedJsonPage {
  /** The page's changes, each as the feed serves it, comma-separated, in UTF-8. */
  body: Uint8Array;
  /** How many changes `body` holds. */
  count: number;
  /** The seq of the last of them; undefined when there are none. */
  lastSeq: number | undefined;
  /** More changes follow the last (the look found more than the page's limit). */
  hasMore: boolean;
}

export type Change =
  | {
      seq: number;
      type: 'message.created';
      at: number;
      id: string;
      lineId: string;
      vid: string;
      name: string;
      /** As the read API renders it, sender read now. */
      message: { sender: string; msg: string; contentType: string; createdAt: number };
      /** LINE's `{"source", "message"}` as JSON, for a LINE webhook message; else null. */
      line: string | null;
    }
  | { seq: number; type: 'message.deleted'; at: number; id: string; lineId: string; reason: string }
  | { seq: number; type: 'contact.updated'; at: number; lineId: string; vid: string; name: string }
  | { seq: number; type: 'contact.erased'; at: number; lineId: string }
  | { seq: number; type: 'retention.applied'; at: number; before: number };

/**
 * How many messages an answer held, told by whatever wrote it once it has written all of it (the
 * audit's `messages`, CONTRACT §13): added to `messages`, never set for an answer cut short.
 */
export interface AnswerCount {
  messages?: number;
}

/**
 * Where the read API's answer bytes come from: encoded on the event loop from the store's rows or
 * written by the database (modules/messages answersEncodedHere), or read and encoded on the embedded
 * store's answer threads (sqlite/answers/), byte for byte the same.
 */
export interface AnswerSource {
  /** `count` is told the answer's messages once all of it is read. */
  json(query: MessageQuery, count?: AnswerCount): AsyncIterable<Buffer>;
  /** Gets ready for the first answer (the server is about to listen). */
  start?(): void;
  close?(): Promise<void>;
}

/** Where a page of the change feed is read and encoded: the store, or the answer threads on SQLite. */
export interface FeedSource {
  pageJson(hubId: string, afterSeq: number, limit: number): Promise<FeedJsonPage>;
}

/**
 * What an answer's version is made of. `all` moves with every write to the hub; `history` with every
 * change except an appended message (at or after the floor); `appendFloor` is at or below every
 * createdAt appended since `history` or `appendEpoch` last moved (null: none). A range ending at or before
 * `appendFloor` has not changed while `history` and `appendEpoch` have not (answerVersion in
 * messages.usecases.ts).
 */
export interface AnswerVersions {
  all: number;
  history: number;
  appendFloor: number | null;
  appendEpoch: number;
}

/** Where a hub's feed stands. */
export interface FeedPosition {
  /** The seq of the newest change (0: none yet). */
  lastSeq: number;
  /** Changes up to this seq may have been dropped: a cursor before it is expired. */
  droppedThrough: number;
  /**
   * Moves with every change other than an appended message (an unsend, an erasure, retention, a
   * contact's new name): while it stays, a page of changes read earlier is still what a read now gives,
   * up to the changes appended since.
   */
  historyVersion: number;
}

/** An outgoing webhook endpoint of a hub (CONTRACT §10). */
export interface WebhookEndpoint {
  id: string;
  hubId: string;
  url: string;
  /** The change types it is sent; null: every type. */
  events: ChangeType[] | null;
  /** The signing secret (`whsec_...`), encrypted under the server secret. */
  secretEncrypted: Buffer;
  createdAt: number;
  /** Why it is no longer sent to (an answer 410 Gone), and when; null while it is live. */
  disabledAt: number | null;
  disabledReason: string | null;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'skipped';

/** One change to send to one endpoint, and how its attempts went. */
export interface DeliveryRecord {
  endpointId: string;
  seq: number;
  type: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The media message types whose content chatlog keeps (CONTRACT §11). */
export type ContentKind = 'image' | 'video' | 'audio' | 'file';

/** What a message's content is on LINE, queued with the message. */
export interface ContentRequest {
  lineMessageId: string;
  kind: ContentKind;
  fileName: string | null;
}

/** pending: to download; done: kept; gone: LINE no longer had it; failed: every attempt used. */
export type ContentState = 'pending' | 'done' | 'gone' | 'failed';

export interface ContentItem extends ContentRequest {
  hubId: string;
  messageId: string;
  state: ContentState;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  sha256: string | null;
  mediaType: string | null;
  size: number | null;
  createdAt: number;
}

/** A download this node holds until `leasedUntil` (no other node makes it meanwhile). */
export interface LeasedDownload extends ContentItem {
  leasedUntil: number;
}

/** What one download attempt came to, as stored (dropped when its lease has passed). */
export type DownloadSettlement = { hubId: string; messageId: string; leasedUntil: number } & (
  | { state: 'done'; sha256: string; mediaType: string; size: number }
  | { state: 'pending'; attempts: number; nextAttemptAt: number; lastError: string | null }
  | { state: 'gone' | 'failed'; attempts: number; lastError: string }
);

/** A hub's content, as operators see it. */
export interface ContentStatus {
  pending: number;
  done: number;
  gone: number;
  failed: number;
  /** Bytes kept for the hub (each blob once). */
  bytes: number;
}

/** A message as LINE's push API takes it (CONTRACT §16). */
export type OutgoingMessage =
  | { type: 'text'; text: string }
  | { type: 'sticker'; packageId: string; stickerId: string };

export type SendState = 'pending' | 'sent' | 'failed';

/** A reply to a LINE friend (CONTRACT §16), as kept from its 202 to its end. */
export interface Send {
  id: string;
  hubId: string;
  lineId: string;
  messages: OutgoingMessage[];
  /** `X-Line-Retry-Key` of every attempt: chosen once. */
  retryKey: string;
  idempotencyKey: string | null;
  /** The HubSpot message an agent wrote, when the send came from HubSpot's inbox (§18). */
  hubspotMessageId: string | null;
  state: SendState;
  attempts: number;
  nextAttemptAt: number;
  /** LINE's words when it failed (or why the last attempt did not go). */
  lastError: string | null;
  /** LINE's message ids, once sent. */
  messageIds: string[] | null;
  createdAt: number;
}

/** A send as it is accepted (the store gives it its state); from HubSpot, with its message's id. */
export type NewSend = Omit<
  Send,
  'state' | 'attempts' | 'nextAttemptAt' | 'lastError' | 'messageIds' | 'hubspotMessageId'
> & {
  hubspotMessageId?: string | null;
  /**
   * An agent's reply from HubSpot that §16 refuses before queueing (no such friend, no access token,
   * a text too long): kept failed with these words, never pushed, so that HubSpot is told (§18).
   */
  refusedWith?: string;
};

/** A send this node holds until `leasedUntil` (no other node attempts it meanwhile). */
export interface LeasedSend extends Send {
  leasedUntil: number;
}

/** What one attempt came to, as stored (dropped when its lease has passed). */
export type SendSettlement = { id: string; leasedUntil: number } & (
  | { state: 'sent'; messageIds: string[] }
  | { state: 'pending'; attempts: number; nextAttemptAt: number; lastError: string }
  | { state: 'failed'; attempts: number; lastError: string }
);

/** A delivery this node holds until `leasedUntil` (no other node attempts it meanwhile). */
export interface LeasedDelivery {
  endpointId: string;
  seq: number;
  attempts: number;
  leasedUntil: number;
}

/** What one attempt came to, as stored. */
export interface DeliverySettlement {
  endpointId: string;
  seq: number;
  /** The lease the attempt was made under: a settlement of a lease that expired is dropped. */
  leasedUntil: number;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
}

/** A hub connected to a HubSpot inbox through chatlog's custom channel (CONTRACT §18). */
export interface HubspotConnection {
  hubId: string;
  /** The HubSpot account (portal) that authorised chatlog. */
  portalId: string;
  /** OAuth tokens, encrypted under the server secret; never plain text. */
  accessTokenEncrypted: Buffer;
  refreshTokenEncrypted: Buffer;
  /** When the access token runs out (epoch ms, from `expires_in`). */
  tokenExpiresAt: number;
  inboxId: string;
  inboxName: string;
  /** The channel account HubSpot made for this hub in that inbox: every publish names it. */
  channelAccountId: string;
  connectedAt: number;
  /** Set by `Disconnect HubSpot`: nothing more is published. */
  disconnectedAt: number | null;
  /** The hub's feed seq up to which messages were published. */
  publishedThrough: number;
  /** Messages published since the connection. */
  published: number;
  /** Attempts in a row that did not go (429, 5xx, the network), for the backoff. */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  lastErrorAt: number | null;
  /** The hub's feed seq when it connected: a backfill publishes what is at or before it. */
  connectedSeq: number;
  /** The backfill asked last (`chatlog hubspot backfill`), if any. */
  backfill: HubspotBackfill | undefined;
}

/** A backfill of the messages created in [from, to) that were stored before the connection. */
export interface HubspotBackfill {
  from: number;
  /** Exclusive; undefined: up to the connection. */
  to: number | undefined;
  /** How far through the feed (a seq up to connectedSeq) it went. */
  through: number;
  total: number;
  published: number;
  done: boolean;
}

/** A connection this node publishes until `leasedUntil` (no other node publishes its hub meanwhile). */
export interface LeasedHubspotConnection extends HubspotConnection {
  leasedUntil: number;
}
