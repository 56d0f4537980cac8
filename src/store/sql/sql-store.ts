/**
 * The Store, written once over the dialect adapter (executor.ts): every query and write rule of
 * chatlog is in this folder. An engine (sqlite/, postgres/) supplies only what truly differs:
 * its connections, how a write transaction is taken, the streaming read, bulk import, and the
 * type names of its schema.
 */
import type {
  AnswerCount,
  Change,
  FeedJsonPage,
  ImportMessage,
  ImportOutcome,
  MessageQuery,
  MessageRow,
  PoolState,
  Store,
} from '../store.js';
import {
  createSession,
  deleteSession,
  findAccountByEmail,
  findAccountById,
  findSession,
  grantHub,
  hubsOfAccount,
  upsertAccount,
} from './accounts.js';
import { latestMessageAt } from './answers.js';
import { appendAudit, listAudit, pruneAudit } from './audit.js';
import { dropChangesBefore, FeedClock, feedPosition, logChange, readChangesAt, readFeed } from './changes.js';
import { changeContact, contactIdOf, eraseContact, getContact, lineIdsOfVid } from './contacts.js';
import {
  claimRelease,
  contentReleases,
  contentStatus,
  downloadQueueDepth,
  extendDownload,
  getContentItem,
  leaseDownloads,
  nextDownloadDue,
  requeueMissing,
  retryFailedDownloads,
  settleDownload,
} from './content.js';
import { contactsPage, conversationPage } from './conversations.js';
import type { Sql, Transaction } from './executor.js';
import { answerVersions, getHub, upsertHub } from './hubs.js';
import {
  applyGroup,
  GROUPS_IN_FLIGHT,
  GroupCommit,
  type GroupOutcome,
  hubsOfGroup,
  type IngestRequest,
} from './ingest.js';
import {
  findKeyByHash,
  findKeyById,
  insertKey,
  listKeysOfHub,
  recordKeysLastUsed,
  revokeKey,
  setKeyRateLimit,
} from './keys.js';
import { finishRetention, leaseRetention, previewRetention, purgeBatch } from './retention.js';
import { LATEST_VERSION, schemaVersion } from './schema.js';
import { type SearchEngine, searchPage, withoutIndexWrites } from './search.js';
import type { Wakeups } from './wakeups.js';
import {
  addEndpoint,
  disableEndpoint,
  dispatchEndpoint,
  endpointsWithDueDeliveries,
  getEndpoint,
  leaseDeliveries,
  listEndpoints,
  liveEndpoints,
  nextDueAt,
  recentDeliveries,
  removeEndpoint,
  replayEndpoint,
  retryDeliveriesNow,
  settleDeliveries,
} from './webhooks.js';

export interface WriteOptions {
  /**
   * The work reads an iterable of the caller's (an import's batches): it runs once, never again
   * after a conflict, and on the caller's thread (SQLite's other writes run on its writer thread).
   */
  readsCallersBatches?: boolean;
  /**
   * The work only records progress that is safe to make again: an outbox lease or an attempt's
   * outcome, whose loss means a delivery is attempted again (at least once, as §10 allows). The
   * engine may answer before the commit is on disk (PostgreSQL: synchronous_commit off, at most a
   * fraction of a second lost if the database itself crashes, always the newest commits), so that
   * the outbox's bookkeeping does not add disk syncs to those of webhook ingest.
   */
  redoable?: boolean;
}

export abstract class SqlStore implements Store {
  /** Small reads of committed data (never a write transaction's uncommitted rows). */
  protected abstract readonly reads: Sql;
  /**
   * Reads consistent with the streamed answers (PostgreSQL: the read replica when there is one),
   * so that an ETag never names data its answer does not hold yet.
   */
  protected abstract readonly answerReads: Sql;
  /**
   * Runs `work` in one write transaction, committed when it resolves and undone when it throws.
   * An engine may run it again after a conflict (a deadlock), unless it reads the caller's batches
   * (WriteOptions).
   */
  protected abstract write<T>(work: (tx: Transaction) => Promise<T>, options?: WriteOptions): Promise<T>;

  abstract migrate(): Promise<void>;
  abstract warmUp(): Promise<void>;
  abstract poolState(): PoolState[];
  /** Where this node hears of the changes committed on every node (long polls, webhook dispatch). */
  protected abstract readonly wakeups: Wakeups;
  protected abstract streamMessages(query: MessageQuery): AsyncIterable<MessageRow[]>;
  /** The read API's answer written by the database (Store's messages.json), where the engine does. */
  protected answerJson?(query: MessageQuery, count?: AnswerCount): AsyncIterable<Buffer>;
  /** Call inside `writeChanges` (the hub is locked; number the messages with `clock`). */
  protected abstract importMessages(
    tx: Transaction,
    clock: FeedClock,
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome>;
  /** The engine's search index (./search.ts): written with each message, read by search.page. */
  protected abstract readonly searchEngine: SearchEngine;
  /** Whether writes add index rows: false only to measure what indexing costs (the bench). */
  protected searchIndex = true;
  /** Closes the engine's connections, once the writes in flight are done. */
  protected abstract closeConnections(): Promise<void>;

  /** Live write groups on their way at once (GroupCommit). */
  protected readonly groupsInFlight: number = GROUPS_IN_FLIGHT;
  private readonly liveWrites = new GroupCommit(
    (group) => this.commitGroup(group),
    () => this.groupsInFlight,
  );
  private closed = false;

  /** Commits a group of live writes; an engine may override it with a faster path it measured. */
  protected commitGroup(group: readonly IngestRequest[]): Promise<GroupOutcome[]> {
    return this.writeChanges(hubsOfGroup(group), (tx, clock) =>
      applyGroup(
        tx,
        clock,
        this.searchIndex ? this.searchEngine : withoutIndexWrites(this.searchEngine),
        group,
      ),
    );
  }

  /**
   * A write that appends to hubs' feeds: their rows locked first (FeedClock), the changes numbered
   * in commit order, the other nodes told at commit (`announce`), this node's readers woken after.
   */
  protected async writeChanges<T>(
    hubIds: readonly string[],
    work: (tx: Transaction, clock: FeedClock) => Promise<T>,
    options?: WriteOptions,
  ): Promise<T> {
    let changed: string[] = [];
    const result = await this.write(async (tx) => {
      const clock = new FeedClock(tx);
      await clock.lock(hubIds);
      const value = await work(tx, clock);
      changed = await clock.finish();
      if (changed.length > 0) await this.announce(tx, changed);
      return value;
    }, options);
    if (changed.length > 0) this.wakeups.wake(changed);
    return result;
  }

  /** One page of the feed, in one snapshot; an engine may read it its own faster way. */
  protected readFeedPage(hubId: string, afterSeq: number, limit: number): Promise<Change[]> {
    return readFeed(this.reads, hubId, afterSeq, limit);
  }

  /**
   * One page of the feed as its JSON (`limit + 1` rows looked at, so the page knows whether more
   * follow), in one snapshot, made by the engine's SQL (changes.ts feedJsonSql).
   */
  protected abstract readFeedJson(hubId: string, afterSeq: number, limit: number): Promise<FeedJsonPage>;

  /** What a select adds to lock its rows and pass over rows another transaction holds (PostgreSQL). */
  protected readonly skipLocked: string = '';

  /**
   * A statement that makes lease transactions of downloads take turns on every node (PostgreSQL: an
   * advisory lock), so that two nodes never both count a hub's leases before either commits and
   * together pass its cap. SQLite has one writer: nothing.
   */
  protected readonly downloadLeaseLock: string = '';

  /** Tells the other nodes, at commit, which hubs changed (PostgreSQL); one node needs nothing. */
  protected async announce(_tx: Transaction, _hubIds: readonly string[]): Promise<void> {}

  async ready(): Promise<boolean> {
    try {
      return (await schemaVersion(this.reads)) === LATEST_VERSION;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.liveWrites.close();
    await this.wakeups.close();
    await this.closeConnections();
  }

  hubs: Store['hubs'] = {
    get: (id) => getHub(this.reads, id),
    upsert: (id, settings, now) => this.write((tx) => upsertHub(tx, id, settings, now)),
  };

  keys: Store['keys'] = {
    insert: (key) => this.write((tx) => insertKey(tx, key)),
    findByHash: (keyHash) => findKeyByHash(this.reads, keyHash),
    findById: (id) => findKeyById(this.reads, id),
    listByHub: (hubId) => listKeysOfHub(this.reads, hubId),
    revoke: (id, now) => this.write((tx) => revokeKey(tx, id, now)),
    setRateLimit: (id, limit) => this.write((tx) => setKeyRateLimit(tx, id, limit)),
    recordLastUsed: async (uses) => {
      if (uses.size > 0) await this.write((tx) => recordKeysLastUsed(tx, uses));
    },
  };

  messages: Store['messages'] = {
    versions: (hubId) => answerVersions(this.answerReads, hubId),
    latestAt: (hubId) => latestMessageAt(this.answerReads, hubId),
    stream: (query) => this.streamMessages(query),
    ...(this.answerJson && {
      json: (query: MessageQuery, count?: AnswerCount) =>
        this.answerJson?.(query, count) as AsyncIterable<Buffer>,
    }),
    importAll: (hubId, batches, now) =>
      this.writeChanges([hubId], (tx, clock) => this.importMessages(tx, clock, hubId, batches, now), {
        readsCallersBatches: true,
      }),
    ingest: (hubId, operations, now) => this.liveWrites.add(hubId, operations, now),
  };

  search: Store['search'] = {
    page: (query) => searchPage(this.reads, this.searchEngine, query),
    compacted: () => this.searchCompacted(),
    resumeCompaction: () => this.resumeSearchCompaction(),
  };

  /** `work`, which deletes many messages in `tx`, with the search engine's statements around it. */
  private async deletingMany<T>(tx: Transaction, work: () => Promise<T>): Promise<T> {
    const around = this.searchEngine.deleting;
    if (around) await tx.exec(around.before);
    const result = await work();
    if (around) await tx.exec(around.after);
    return result;
  }

  /** The engine's rewrite of its search index after deletions, where it has one (SQLite). */
  protected async searchCompacted(): Promise<void> {}
  protected async resumeSearchCompaction(): Promise<void> {}

  conversations: Store['conversations'] = {
    contacts: (query) => contactsPage(this.reads, query),
    messages: (query) => conversationPage(this.reads, query),
  };

  changes: Store['changes'] = {
    position: (hubId) => feedPosition(this.reads, hubId),
    page: (hubId, afterSeq, limit) => this.readFeedPage(hubId, afterSeq, limit),
    pageJson: (hubId, afterSeq, limit) => this.readFeedJson(hubId, afterSeq, limit),
    at: (hubId, seqs) => readChangesAt(this.reads, hubId, seqs),
    subscribe: (hubId) => this.wakeups.subscribe(hubId),
    onChange: (listener) => this.wakeups.listen(listener),
    dropBefore: (before) => this.write((tx) => dropChangesBefore(tx, before)),
  };

  content: Store['content'] = {
    get: (hubId, messageId) => getContentItem(this.reads, hubId, messageId),
    lease: (now, leasedUntil, max, perHub) =>
      this.write(async (tx) => {
        if (this.downloadLeaseLock) await tx.get(this.downloadLeaseLock);
        return leaseDownloads(tx, now, leasedUntil, max, perHub);
      }),
    extend: (hubId, messageId, leasedUntil, until) =>
      this.write((tx) => extendDownload(tx, hubId, messageId, leasedUntil, until)),
    settle: (result, now) => this.write((tx) => settleDownload(tx, result, now)),
    nextDue: () => nextDownloadDue(this.reads),
    status: (hubId) => contentStatus(this.reads, hubId),
    retry: (hubId, now) => this.write((tx) => retryFailedDownloads(tx, hubId, now)),
    queueDepth: () => downloadQueueDepth(this.reads),
    releases: (max) => contentReleases(this.reads, max),
    claimRelease: (hubId, sha256) => this.write((tx) => claimRelease(tx, hubId, sha256)),
    requeueMissing: (hubId, sha256, now) => this.write((tx) => requeueMissing(tx, hubId, sha256, now)),
  };

  webhooks: Store['webhooks'] = {
    add: (endpoint) => this.writeChanges([endpoint.hubId], (tx) => addEndpoint(tx, endpoint)),
    list: (hubId) => listEndpoints(this.reads, hubId),
    live: (hubId) => liveEndpoints(this.reads, hubId),
    get: (id) => getEndpoint(this.reads, id),
    remove: (hubId, id, now) => this.write((tx) => removeEndpoint(tx, hubId, id, now)),
    disable: (id, reason, now) => this.write((tx) => disableEndpoint(tx, id, reason, now)),
    dispatch: (endpoint, now, max) => this.write((tx) => dispatchEndpoint(tx, endpoint, now, max)),
    replay: (endpoint, afterSeq, now) => this.write((tx) => replayEndpoint(tx, endpoint, afterSeq, now)),
    retryNow: (endpointId, now) => this.write((tx) => retryDeliveriesNow(tx, endpointId, now)),
    lease: (endpointId, now, leasedUntil, max, dueSince = 0) =>
      this.write(
        (tx) => leaseDeliveries(tx, this.skipLocked, endpointId, { now, dueSince, leasedUntil, max }),
        { redoable: true },
      ),
    settle: async (results, now) => {
      if (results.length > 0)
        await this.write((tx) => settleDeliveries(tx, results, now), { redoable: true });
    },
    due: (before) => endpointsWithDueDeliveries(this.reads, before),
    nextDue: (endpointId) => nextDueAt(this.reads, endpointId),
    recent: (endpointId, limit) => recentDeliveries(this.reads, endpointId, limit),
  };

  contacts: Store['contacts'] = {
    get: (hubId, lineId) => getContact(this.reads, hubId, lineId),
    linkedTo: (hubId, vid) => lineIdsOfVid(this.reads, hubId, vid),
    upsert: (hubId, lineId, changes, now) =>
      this.writeChanges([hubId], async (tx, clock) => {
        const { id, created } = await contactIdOf(tx, hubId, lineId, now);
        if (await changeContact(tx, id, changes)) {
          await logChange(tx, clock, hubId, now, { type: 'contact.updated', contactId: id });
        }
        const contact = await getContact(tx, hubId, lineId);
        if (!contact) throw new Error(`contact ${lineId} vanished`);
        return { contact, created };
      }),
    erase: async (hubId, lineId, now) => {
      const erased = await this.writeChanges([hubId], (tx, clock) =>
        this.deletingMany(tx, () => eraseContact(tx, clock, hubId, lineId, now)),
      );
      if (erased !== undefined) await this.afterErasure('erasure');
      return erased;
    },
  };

  audit: Store['audit'] = {
    append: (records) => this.write((tx) => appendAudit(tx, records)),
    list: (query) => listAudit(this.reads, query),
    prune: (before) => this.write((tx) => pruneAudit(tx, before)),
  };

  retention: Store['retention'] = {
    lease: (now, leasedUntil, max) => this.write((tx) => leaseRetention(tx, now, leasedUntil, max)),
    purgeBatch: (hubId, before, limit, now, announce) =>
      this.writeChanges([hubId], (tx, clock) =>
        this.deletingMany(tx, () => purgeBatch(tx, clock, hubId, before, limit, now, announce)),
      ),
    preview: (hubId, before) => previewRetention(this.reads, hubId, before),
    finish: async (hubId, dueAt, removedAny) => {
      await this.write((tx) => finishRetention(tx, hubId, dueAt));
      if (removedAny) await this.afterErasure('retention');
    },
  };

  /** Makes an erasure real in the files where the engine can (SQLite: the WAL checkpointed). */
  protected async afterErasure(_cause: 'erasure' | 'retention'): Promise<void> {}

  accounts: Store['accounts'] = {
    upsert: (email, passwordHash, now) => this.write((tx) => upsertAccount(tx, email, passwordHash, now)),
    findByEmail: (email) => findAccountByEmail(this.reads, email),
    findById: (id) => findAccountById(this.reads, id),
    grantHub: (accountId, hubId) => this.write((tx) => grantHub(tx, accountId, hubId)),
    hubsOf: (accountId) => hubsOfAccount(this.reads, accountId),
  };

  sessions: Store['sessions'] = {
    create: (session, now) => this.write((tx) => createSession(tx, session, now)),
    find: (idHash, now) => findSession(this.reads, idHash, now),
    delete: (idHash) => this.write((tx) => deleteSession(tx, idHash)),
  };
}
