/**
 * The store's ports, one small interface per feature (hubs, keys, messages, search, conversations,
 * changes, content, webhooks, audit, retention, contacts, accounts, sessions), and `Store`: all of
 * them, with the store's own life (migrate, ready, warm up, close). Every method is asynchronous and
 * big reads are AsyncIterables of row batches, so both engines fit the same shape. A use case is
 * given the ports it uses (`Pick<Store, 'keys' | 'hubs'>`), not the whole store. The types they take
 * and give are in types.ts, re-exported here.
 */
import type { HubspotPort } from './ports/hubspot.js';
import type { ReportsPort } from './ports/reports.js';
import type {
  AccountRecord,
  AnswerCount,
  AnswerVersions,
  ApiKeyRecord,
  AuditQuery,
  AuditRecord,
  Change,
  ChangeType,
  Contact,
  ContactChanges,
  ContactsPage,
  ContactsPageQuery,
  ContentItem,
  ContentStatus,
  ConversationPage,
  ConversationQuery,
  DeliveryRecord,
  DeliverySettlement,
  DownloadSettlement,
  FeedJsonPage,
  FeedPosition,
  Hub,
  HubSettings,
  ImportMessage,
  ImportOutcome,
  IngestOperation,
  IngestOutcome,
  LeasedDelivery,
  LeasedDownload,
  LeasedSend,
  MessageQuery,
  MessageRow,
  NewSend,
  PoolState,
  RateLimit,
  RetentionPreview,
  RetentionRun,
  SearchHit,
  SearchQuery,
  Send,
  SendSettlement,
  SessionRecord,
  Waiter,
  WebhookEndpoint,
} from './types.js';

export type { HubspotPort } from './ports/hubspot.js';
export type {
  ReportChange,
  ReportMessage,
  ReportPosition,
  ReportsPort,
  WaitingContact,
} from './ports/reports.js';
export type * from './types.js';

/**
 * The text search compares (CONTRACT §12): Unicode NFKC, then JavaScript's toLowerCase(). Done in JS
 * for the query, the index and the final check alike, on both stores: SQLite's and PostgreSQL's own
 * lower-casing differ from it (and from each other).
 */
export const normaliseText = (text: string): string => text.normalize('NFKC').toLowerCase();

export const CHANGE_TYPES: readonly ChangeType[] = [
  'message.created',
  'message.deleted',
  'contact.updated',
  'contact.erased',
  'retention.applied',
];

/** Adds `n` to `count` (an answer written whole, or its part). */
export function countAnswer(count: AnswerCount | undefined, n: number): void {
  if (count) count.messages = (count.messages ?? 0) + n;
}

export interface HubsPort {
  get(id: string): Promise<Hub | undefined>;
  /** Creates the hub, or updates only the settings given. */
  upsert(id: string, settings: HubSettings, now: number): Promise<{ hub: Hub; created: boolean }>;
}

export interface KeysPort {
  insert(key: ApiKeyRecord): Promise<void>;
  findByHash(keyHash: Buffer): Promise<ApiKeyRecord | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  listByHub(hubId: string): Promise<ApiKeyRecord[]>;
  /** Returns false when no live key has that id. */
  revoke(id: string, now: number): Promise<boolean>;
  setRateLimit(id: string, limit: RateLimit | null): Promise<boolean>;
  /** Records when keys were last used, many at once (never one write per request). */
  recordLastUsed(uses: ReadonlyMap<string, number>): Promise<void>;
}

export interface MessagesPort {
  /**
   * The hub's answer versions as the streaming reads see them (the read replica when there is
   * one), so an ETag never claims data that the answer does not hold yet.
   */
  versions(hubId: string): Promise<AnswerVersions>;
  /** The createdAt (epoch ms) of the hub's newest message, or undefined when it has none. */
  latestAt(hubId: string): Promise<number | undefined>;
  /** How much the hub holds: its contacts, its messages, and the first and last message's createdAt. */
  stats(
    hubId: string,
  ): Promise<{ contacts: number; messages: number; firstAt: number | null; lastAt: number | null }>;
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
}

/** Search (CONTRACT §12): newest first, every result confirmed with the exact rule. */
export interface SearchPort {
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
   * server's start: a rewrite cut short by a crash, unsent messages), and the indexing of messages
   * a stop left queued.
   */
  resumeCompaction(): Promise<void>;
  /**
   * Indexes now every message queued for the index (new messages are indexed in batches a moment
   * after they are stored, and found meanwhile all the same); resolves how many. For tests and
   * benchmarks that look at the index itself.
   */
  indexQueued(): Promise<number>;
}

/** The account screen's conversations (CONTRACT §14): pages by keyset, never by offset. */
export interface ConversationsPort {
  contacts(query: ContactsPageQuery): Promise<ContactsPage>;
  /** Undefined when the hub has no such contact. */
  messages(query: ConversationQuery): Promise<ConversationPage | undefined>;
}

export interface ChangesPort {
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
}

/** Media downloads (CONTRACT §11): the durable queue and where each message's bytes are. */
export interface ContentPort {
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
}

export interface SendsPort {
  /**
   * Accepts a send (CONTRACT §16): kept durably before it resolves. With an idempotency key the hub
   * used within `idempotencyWindowMs`, the send made then instead, and nothing new (`created` false).
   */
  create(send: NewSend, idempotencyWindowMs: number): Promise<{ send: Send; created: boolean }>;
  get(hubId: string, id: string): Promise<Send | undefined>;
  /**
   * Due sends, at most `max`: of each contact only the oldest one not yet sent or failed, and none
   * while it is held by another lease (sends of one contact go one at a time, in accepted order).
   */
  lease(now: number, leasedUntil: number, max: number): Promise<LeasedSend[]>;
  /** Stores an attempt's outcome; false when its lease had passed (another node may have it). */
  settle(result: SendSettlement, now: number): Promise<boolean>;
  /**
   * LINE took the send: its messages (`operations`, as ingest takes them) stored and the send marked
   * sent, in one transaction. False, and nothing stored, when its lease had passed or it is gone
   * (its contact erased).
   */
  complete(
    result: Extract<SendSettlement, { state: 'sent' }>,
    hubId: string,
    operations: readonly IngestOperation[],
    now: number,
  ): Promise<boolean>;
  /** When the next pending send is due, or undefined. */
  nextDue(): Promise<number | undefined>;
  /** Pending sends (of every hub), for metrics. */
  queueDepth(): Promise<number>;
}

export interface WebhooksPort {
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
}

/** The audit log (CONTRACT §13). */
export interface AuditPort {
  append(records: readonly AuditRecord[]): Promise<void>;
  /** Newest first. */
  list(query: AuditQuery): Promise<Array<AuditRecord & { id: number }>>;
  /** Deletes records older than `before`; resolves how many. */
  prune(before: number): Promise<number>;
}

/** Retention (CONTRACT §13): runs leased per hub, messages removed in small batches. */
export interface RetentionPort {
  /**
   * Leases up to `max` hubs whose run is due (retention days set, due, no live lease) until
   * `leasedUntil`: each run is made by one node.
   */
  lease(now: number, leasedUntil: number, max: number): Promise<RetentionRun[]>;
  /**
   * Removes up to `limit` of the hub's messages created before `before`, oldest first, in one
   * transaction, with their search entries, media (released) and ids (retired), and the hub's
   * sends (§16) sent or failed before `before`; `announce`
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
}

export interface ContactsPort {
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
}

export interface AccountsPort {
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
}

export interface SessionsPort {
  /** Stores a new session and forgets the expired ones. */
  create(session: SessionRecord, now: number): Promise<void>;
  /** The live session with that id hash, or undefined (expired ones are not returned). */
  find(idHash: Buffer, now: number): Promise<SessionRecord | undefined>;
  delete(idHash: Buffer): Promise<void>;
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

  hubs: HubsPort;
  keys: KeysPort;
  messages: MessagesPort;
  search: SearchPort;
  conversations: ConversationsPort;
  changes: ChangesPort;
  content: ContentPort;
  webhooks: WebhooksPort;
  sends: SendsPort;
  hubspot: HubspotPort;
  reports: ReportsPort;
  audit: AuditPort;
  retention: RetentionPort;
  contacts: ContactsPort;
  accounts: AccountsPort;
  sessions: SessionsPort;
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
