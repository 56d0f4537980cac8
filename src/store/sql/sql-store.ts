/**
 * The Store, written once over the dialect adapter (executor.ts): every query and write rule of
 * chatlog is in this folder, each feature's with its port (`keysPort`, …, over the Engine of
 * engine.ts). An engine (sqlite/, postgres/) supplies only what truly differs: its connections, how
 * a write transaction is taken, the streaming read, bulk import, and the type names of its schema;
 * this class makes the Engine from it and puts the ports together.
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
import { accountsPort, sessionsPort } from './accounts.js';
import { auditPort } from './audit.js';
import { changesPort, FeedClock, readFeed } from './changes.js';
import { contactsPort } from './contacts.js';
import { contentPort } from './content.js';
import { conversationsPort } from './conversations.js';
import type { Engine, WriteOptions } from './engine.js';
import type { Sql, Transaction } from './executor.js';
import { hubsPort } from './hubs.js';
import { hubspotPort } from './hubspot.js';
import {
  applyGroup,
  GROUPS_IN_FLIGHT,
  GroupCommit,
  type GroupOutcome,
  hubsOfGroup,
  type IngestRequest,
} from './ingest.js';
import { keysPort } from './keys.js';
import { messagesPort } from './messages.js';
import { reportsPort } from './reports.js';
import { retentionPort } from './retention.js';
import { LATEST_VERSION, schemaVersion } from './schema.js';
import { type SearchEngine, searchPort, withoutIndexWrites } from './search.js';
import { indexPending, SearchIndexer } from './search-queue.js';
import { sendsPort } from './sends.js';
import type { Wakeups } from './wakeups.js';
import { webhooksPort } from './webhooks.js';

export type { WriteOptions };

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
  protected async commitGroup(group: readonly IngestRequest[]): Promise<GroupOutcome[]> {
    const outcomes = await this.writeChanges(hubsOfGroup(group), (tx, clock) =>
      applyGroup(
        tx,
        clock,
        this.searchIndex ? this.searchEngine : withoutIndexWrites(this.searchEngine),
        group,
      ),
    );
    this.queuedForIndex(outcomes);
    return outcomes;
  }

  /**
   * Stores the messages of sends LINE took, in `tx` of `writeChanges` (their hubs held by `clock`),
   * each request in its own savepoint; an engine may store them its faster way.
   */
  protected storeSentMessages(
    tx: Transaction,
    clock: FeedClock,
    requests: readonly IngestRequest[],
  ): Promise<GroupOutcome[]> {
    return applyGroup(
      tx,
      clock,
      this.searchIndex ? this.searchEngine : withoutIndexWrites(this.searchEngine),
      requests,
    );
  }

  /** Tells the indexer of the messages a group queued. */
  protected queuedForIndex(outcomes: readonly GroupOutcome[]): void {
    if (!this.searchIndex || !this.searchEngine.indexLater) return;
    const stored = outcomes.reduce((sum, outcome) => sum + ('stored' in outcome ? outcome.stored : 0), 0);
    if (stored > 0) this.indexer.queuedMessages(stored);
  }

  /** Indexes the messages queued by live writes, where this store writes (search.ts). */
  private readonly indexer = new SearchIndexer(
    (limit) => this.write((tx) => indexPending(tx, this.searchEngine, limit)),
    (error) => this.onIndexError(error),
  );

  /** Told when a batch of the index failed (it is tried again): a log line. */
  protected onIndexError(error: unknown): void {
    process.stderr.write(
      `chatlog: search index: a batch failed, tried again soon: ${(error as Error).message}\n`,
    );
  }

  /** Looks for messages queued and not yet indexed (a start after a stop, or another node's). */
  protected lookForQueuedMessages(): void {
    if (this.searchIndex && this.searchEngine.indexLater && !this.forwardWrite)
      this.indexer.queuedMessages(0);
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
  /** The same for a contact's send queue (./sends.ts): nothing on SQLite. */
  protected readonly contactSendsLock: string = '';

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
    await this.indexer.close();
    await this.wakeups.close();
    await this.closeConnections();
  }

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

  /** Makes an erasure real in the files where the engine can (SQLite: the WAL checkpointed). */
  protected async afterErasure(_cause: 'erasure' | 'retention'): Promise<void> {}

  /** Where writes go instead of running here (SQLite's writer thread); undefined: here. */
  protected forwardWrite: ((path: string, args: unknown[]) => Promise<unknown>) | undefined;
  /** Every write method of the ports, by path (`keys.insert`): what a writer thread may be asked to run. */
  readonly writeMethods = new Set<string>();

  /** The Engine the ports are written over: this store's reads, writes and hooks. */
  private readonly engine: Engine = ((store: SqlStore): Engine => ({
    get reads() {
      return store.reads;
    },
    get answerReads() {
      return store.answerReads;
    },
    get skipLocked() {
      return store.skipLocked;
    },
    get downloadLeaseLock() {
      return store.downloadLeaseLock;
    },
    get contactSendsLock() {
      return store.contactSendsLock;
    },
    write: (work, options) => store.write(work, options),
    writeChanges: (hubIds, work, options) => store.writeChanges(hubIds, work, options),
    deletingMany: (tx, work) => store.deletingMany(tx, work),
    afterErasure: (cause) => store.afterErasure(cause),
    port: (name, methods, writes) => store.port(name, methods, writes),
  }))(this);

  private port<P extends object>(name: string, methods: P, writes: readonly (keyof P & string)[]): P {
    const port = { ...methods } as Record<string, unknown>;
    for (const method of writes) {
      const path = `${name}.${method}`;
      const here = port[method] as (...args: unknown[]) => Promise<unknown>;
      this.writeMethods.add(path);
      port[method] = (...args: unknown[]) =>
        this.forwardWrite ? this.forwardWrite(path, args) : here(...args);
    }
    return port as P;
  }

  hubs = hubsPort(this.engine);
  keys = keysPort(this.engine);
  messages = messagesPort(this.engine, {
    stream: (query) => this.streamMessages(query),
    json: this.answerJson && ((query, count) => this.answerJson?.(query, count) as AsyncIterable<Buffer>),
    importMessages: (tx, clock, hubId, batches, now) => this.importMessages(tx, clock, hubId, batches, now),
    ingest: (hubId, operations, now) => this.liveWrites.add(hubId, operations, now),
  });
  search = searchPort(this.engine, {
    index: () => this.searchEngine,
    compacted: () => this.searchCompacted(),
    resumeCompaction: async () => {
      this.lookForQueuedMessages();
      await this.resumeSearchCompaction();
    },
    indexQueued: async () => (this.searchEngine.indexLater ? this.indexer.drain() : 0),
  });
  conversations = conversationsPort(this.engine);
  changes = changesPort(this.engine, {
    page: (hubId, afterSeq, limit) => this.readFeedPage(hubId, afterSeq, limit),
    pageJson: (hubId, afterSeq, limit) => this.readFeedJson(hubId, afterSeq, limit),
    wakeups: () => this.wakeups,
  });
  content = contentPort(this.engine);
  webhooks = webhooksPort(this.engine);
  sends = sendsPort(this.engine, {
    store: (tx, clock, requests) => this.storeSentMessages(tx, clock, requests),
    stored: (outcome) => this.queuedForIndex([outcome]),
  });
  hubspot = hubspotPort(this.engine);
  reports = reportsPort(this.engine);
  contacts = contactsPort(this.engine);
  audit = auditPort(this.engine);
  retention = retentionPort(this.engine);
  accounts = accountsPort(this.engine);
  sessions = sessionsPort(this.engine);
}
