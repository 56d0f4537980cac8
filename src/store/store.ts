/**
 * The one interface the modules see. Every method is asynchronous and big reads are
 * AsyncIterables of row batches, so a PostgreSQL implementation fits the same shape.
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

export type KeyScope = 'read' | 'ingest' | 'admin';

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

/**
 * The text search compares (CONTRACT §12): Unicode NFKC, then JavaScript's toLowerCase(). Done in JS
 * for the query, the index and the final check alike, on both stores: SQLite's and PostgreSQL's own
 * lower-casing differ from it (and from each other).
 */
export const normaliseText = (text: string): string => text.normalize('NFKC').toLowerCase();

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

export const CHANGE_TYPES: readonly ChangeType[] = [
  'message.created',
  'message.deleted',
  'contact.updated',
  'contact.erased',
  'retention.applied',
];

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
 * What an answer's version is made of. `all` moves with every write to the hub; `history` with every
 * change except an appended message (at or after the floor); `appendFloor` is at or below every
 * createdAt appended since `history` or `appendEpoch` last moved (null: none). A range ending at or before
 * `appendFloor` has not changed while `history` and `appendEpoch` have not (answerVersion in
 * messages.usecases.ts).
 */
/**
 * How many messages an answer held, told by whatever wrote it once it has written all of it (the
 * audit's `messages`, CONTRACT §13): added to `messages`, never set for an answer cut short.
 */
export interface AnswerCount {
  messages?: number;
}

/** Adds `n` to `count` (an answer written whole, or its part). */
export function countAnswer(count: AnswerCount | undefined, n: number): void {
  if (count) count.messages = (count.messages ?? 0) + n;
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

export interface Store {
  /** Brings the schema up to date; safe to call at every start. */
  migrate(): Promise<void>;
  /** True when the store answers and its schema is current. */
  ready(): Promise<boolean>;
  /**
   * Opens what the first answer would otherwise open (connections, a reader), so that it does not
   * pay for them; servers call it once they listen. Never throws.
   */
  warmUp(): Promise<void>;
  /** Connections by pool (for /metrics). */
  poolState(): PoolState[];
  /**
   * Where the engine can copy itself while it runs (SQLite): writes a consistent copy into `file`,
   * which the caller has created empty; reports bytes copied and resolves to the copy's size.
   */
  backup?(file: string, onProgress?: (doneBytes: number, totalBytes: number) => void): Promise<number>;
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
    /**
     * The hub's answer versions as the streaming reads see them (the read replica when there is
     * one), so an ETag never claims data that the answer does not hold yet.
     */
    versions(hubId: string): Promise<AnswerVersions>;
    /** The createdAt (epoch ms) of the hub's newest message, or undefined when it has none. */
    latestAt(hubId: string): Promise<number | undefined>;
    /** The hub's messages in answer order (contacts first-seen, messages oldest first), in batches. */
    stream(query: MessageQuery): AsyncIterable<MessageRow[]>;
    /**
     * The same answer as the read API's JSON, written by the database: byte for byte what
     * modules/messages/messages.serializer.ts makes of `stream`'s rows, in chunks. Absent where the
     * engine does not write it (SQLite's answers come from the answer threads, src/store/sqlite/answers/).
     */
    json?(query: MessageQuery, count?: AnswerCount): AsyncIterable<Buffer>;
    /**
     * Stores every message of every batch in one transaction, or none of them when the
     * iterable throws. Messages whose sourceId the hub already has are skipped.
     */
    importAll(
      hubId: string,
      batches: AsyncIterable<readonly ImportMessage[]>,
      now: number,
    ): Promise<ImportOutcome>;
    /**
     * Applies one request's operations atomically and durably. Concurrent calls are committed
     * together (group commit): one disk sync for many requests, each still all-or-nothing.
     */
    ingest(hubId: string, operations: readonly IngestOperation[], now: number): Promise<IngestOutcome>;
  };

  /** Search (CONTRACT §12): newest first, every result confirmed with the exact rule. */
  search: {
    page(query: SearchQuery): Promise<{ hits: SearchHit[]; hasMore: boolean }>;
    /**
     * Resolves once the index holds no entry of a message deleted before an erasure or a retention
     * run that came before the call: SQLite rewrites its index in the background after those
     * (`chatlog contact erase` waits for it); PostgreSQL's entries go with their rows (and VACUUM).
     * Rejects when the rewrite failed.
     */
    compacted(): Promise<void>;
    /**
     * Starts that rewrite in the background if the index holds entries of deleted messages (a
     * server's start: a rewrite cut short by a crash, unsent messages).
     */
    resumeCompaction(): Promise<void>;
  };

  /** The account screen's conversations (CONTRACT §14): pages by keyset, never by offset. */
  conversations: {
    contacts(query: ContactsPageQuery): Promise<ContactsPage>;
    /** Undefined when the hub has no such contact. */
    messages(query: ConversationQuery): Promise<ConversationPage | undefined>;
  };

  changes: {
    /** The hub's feed position, or undefined when there is no such hub. */
    position(hubId: string): Promise<FeedPosition | undefined>;
    /** The changes after `afterSeq`, at most `limit`, oldest first. */
    page(hubId: string, afterSeq: number, limit: number): Promise<Change[]>;
    /** The same page as the feed serves it (its JSON), and whether more changes follow it. */
    pageJson(hubId: string, afterSeq: number, limit: number): Promise<FeedJsonPage>;
    /** The changes of these seqs that are still served (a deleted message's creation is not). */
    at(hubId: string, seqs: readonly number[]): Promise<Change[]>;
    /**
     * Until a change to the hub commits (on any node) or `ms` pass: subscribe before the look that
     * found nothing, so a commit in between still wakes (see sql/wakeups.ts).
     */
    subscribe(hubId: string): Waiter;
    /**
     * Calls `listener` with the hub of every change committed, on any node (webhook dispatch);
     * `undefined`: anything may have changed (this node lost touch with the others for a while).
     */
    onChange(listener: (hubId: string | undefined) => void): () => void;
    /** Drops deletion and contact changes committed before `before`; resolves to how many. */
    dropBefore(before: number): Promise<number>;
  };

  /** Media downloads (CONTRACT §11): the durable queue and where each message's bytes are. */
  content: {
    get(hubId: string, messageId: string): Promise<ContentItem | undefined>;
    /**
     * Due downloads of hubs that have a LINE access token, oldest due first, at most `max`, and
     * never more than `perHub` leased at once for one hub (on every node).
     */
    lease(now: number, leasedUntil: number, max: number, perHub: number): Promise<LeasedDownload[]>;
    /** Moves a lease on (a long download); false when it had passed (another node may have it). */
    extend(hubId: string, messageId: string, leasedUntil: number, until: number): Promise<boolean>;
    /** Stores an attempt's outcome; false when its lease had passed (another node may have it). */
    settle(result: DownloadSettlement, now: number): Promise<boolean>;
    /** When the next download is due (pending items of hubs with a token), or undefined. */
    nextDue(): Promise<number | undefined>;
    status(hubId: string): Promise<ContentStatus>;
    /** Failed downloads of the hub are tried again from now; how many. */
    retry(hubId: string, now: number): Promise<number>;
    /** Pending downloads (of every hub), for metrics. */
    queueDepth(): Promise<number>;
    /** Blobs that no message holds any more, to delete (at most `max`). */
    releases(max: number): Promise<Array<{ hubId: string; sha256: string }>>;
    /** Takes a release off the list; true when still no message holds the blob (delete it). */
    claimRelease(hubId: string, sha256: string): Promise<boolean>;
    /** Messages marked done with a blob that is not there: downloaded again; how many. */
    requeueMissing(hubId: string, sha256: string, now: number): Promise<number>;
  };

  webhooks: {
    /** Adds an endpoint that is sent every change committed from now on. */
    add(endpoint: Omit<WebhookEndpoint, 'disabledAt' | 'disabledReason'>): Promise<WebhookEndpoint>;
    /** The hub's endpoints (not removed), oldest first. */
    list(hubId: string): Promise<WebhookEndpoint[]>;
    /** Endpoints that are neither removed nor disabled, of one hub or of all. */
    live(hubId?: string): Promise<WebhookEndpoint[]>;
    get(id: string): Promise<WebhookEndpoint | undefined>;
    /** Removes the hub's endpoint: nothing more is sent to it. False when it has none of that id. */
    remove(hubId: string, id: string, now: number): Promise<boolean>;
    disable(id: string, reason: string, now: number): Promise<void>;
    /**
     * Turns the hub's changes the endpoint has not yet been given into pending deliveries (those of
     * its types), at most `max`; resolves to how many changes it went past (0: it was up to date).
     */
    dispatch(endpoint: WebhookEndpoint, now: number, max: number): Promise<number>;
    /** Sends again every change after `afterSeq` (replay): pending again, attempts from zero. */
    replay(endpoint: WebhookEndpoint, afterSeq: number, now: number): Promise<number>;
    /**
     * "Retry now": the endpoint's pending deliveries waiting for a later attempt are due at `now`
     * (their attempts so far kept); resolves how many. A running worker finds them at its next sweep.
     */
    retryNow(endpointId: string, now: number): Promise<number>;
    /**
     * Takes up to `max` of the endpoint's due deliveries for this node until `leasedUntil`, the
     * soonest due first; with `dueSince`, only those that came due at or after it.
     */
    lease(
      endpointId: string,
      now: number,
      leasedUntil: number,
      max: number,
      dueSince?: number,
    ): Promise<LeasedDelivery[]>;
    /** Stores what attempts came to, many at once. */
    settle(results: readonly DeliverySettlement[], now: number): Promise<void>;
    /** The endpoints with a delivery due by `before` (a node's worker looks for work). */
    due(before: number): Promise<string[]>;
    /** The earliest pending attempt of the endpoint, or undefined. */
    nextDue(endpointId: string): Promise<number | undefined>;
    /** The endpoint's deliveries of the newest changes, newest first. */
    recent(endpointId: string, limit: number): Promise<DeliveryRecord[]>;
  };

  /** The audit log (CONTRACT §13). */
  audit: {
    append(records: readonly AuditRecord[]): Promise<void>;
    /** Newest first. */
    list(query: AuditQuery): Promise<Array<AuditRecord & { id: number }>>;
    /** Deletes records older than `before`; resolves how many. */
    prune(before: number): Promise<number>;
  };

  /** Retention (CONTRACT §13): runs leased per hub, messages removed in small batches. */
  retention: {
    /**
     * Leases up to `max` hubs whose run is due (retention days set, due, no live lease) until
     * `leasedUntil`: each run is made by one node.
     */
    lease(now: number, leasedUntil: number, max: number): Promise<RetentionRun[]>;
    /**
     * Removes up to `limit` of the hub's messages created before `before`, oldest first, in one
     * transaction, with their search entries, media (released) and ids (retired); `announce`
     * appends the run's one `retention.applied` in the same transaction (when it removes any).
     * Resolves how many went.
     */
    purgeBatch(hubId: string, before: number, limit: number, now: number, announce: boolean): Promise<number>;
    /** What removing the messages created before `before` would remove. */
    preview(hubId: string, before: number): Promise<RetentionPreview>;
    /**
     * Ends the hub's run: its lease released, its next run due at `dueAt`. With `removedAny` (the
     * run, or the runs before it, removed messages), the files hold none of them where the engine
     * allows (as after an erasure; SQLite's search index when enough of it was deleted).
     */
    finish(hubId: string, dueAt: number, removedAny: boolean): Promise<void>;
  };

  contacts: {
    get(hubId: string, lineId: string): Promise<Contact | undefined>;
    /** The LINE ids of the hub's contacts linked to HubSpot contact `vid`, first seen first. */
    linkedTo(hubId: string, vid: string): Promise<string[]>;
    /** Creates the contact when the hub has none with that LINE id, and sets the fields given. */
    upsert(
      hubId: string,
      lineId: string,
      changes: ContactChanges,
      now: number,
    ): Promise<{ contact: Contact; created: boolean }>;
    /**
     * Erases the contact and everything of it (CONTRACT §13) in one transaction, with one
     * `contact.erased`; resolves the messages erased, or undefined when the hub has no such
     * contact. Once it resolves, the store's files hold none of it where the engine allows
     * (SQLite: freed pages zeroed, the WAL checkpointed).
     */
    erase(hubId: string, lineId: string, now: number): Promise<number | undefined>;
  };

  accounts: {
    /** Creates the account, or sets a new password on the existing one. */
    upsert(
      email: string,
      passwordHash: string,
      now: number,
    ): Promise<{ account: AccountRecord; created: boolean }>;
    findByEmail(email: string): Promise<AccountRecord | undefined>;
    findById(id: number): Promise<AccountRecord | undefined>;
    /** Gives the account a hub (nothing happens when it has it already). */
    grantHub(accountId: number, hubId: string): Promise<void>;
    /** The hubs the account may see, in id order. */
    hubsOf(accountId: number): Promise<string[]>;
  };

  sessions: {
    /** Stores a new session and forgets the expired ones. */
    create(session: SessionRecord, now: number): Promise<void>;
    /** The live session with that id hash, or undefined (expired ones are not returned). */
    find(idHash: Buffer, now: number): Promise<SessionRecord | undefined>;
    delete(idHash: Buffer): Promise<void>;
  };
}

/**
 * Error codes meaning "the store cannot answer now": SQLite busy or disk trouble; PostgreSQL
 * connection failures, shutdowns, too many connections, statement timeouts; network errors.
 */
const UNAVAILABLE_CODES =
  /^(SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|PROTOCOL|NOMEM)|CHATLOG_(WRITER|ANSWERS)_LOST|08\d{3}|57P0[1-3]|53300|57014|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|EAI_AGAIN)/;
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|connection timeout/i;

/** True when an error means "the store cannot be reached now" (503), not a fault of ours (500). */
export function isStoreUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}
