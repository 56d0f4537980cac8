/**
 * The Store, written once over the dialect adapter (executor.ts): every query and write rule of
 * chatlog is in this folder. An engine (sqlite/, postgres/) supplies only what truly differs:
 * its connections, how a write transaction is taken, the streaming read, bulk import, and the
 * type names of its schema.
 */
import type { ImportMessage, ImportOutcome, MessageQuery, MessageRow, PoolState, Store } from '../store.js';
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
import { changeContact, contactIdOf, getContact } from './contacts.js';
import type { Sql, Transaction } from './executor.js';
import { bumpDataVersion, dataVersion, getHub, upsertHub } from './hubs.js';
import { applyGroup, GroupCommit, type GroupOutcome, type IngestRequest } from './ingest.js';
import {
  findKeyByHash,
  findKeyById,
  insertKey,
  listKeysOfHub,
  recordKeysLastUsed,
  revokeKey,
  setKeyRateLimit,
} from './keys.js';
import { LATEST_VERSION, schemaVersion } from './schema.js';

export abstract class SqlStore implements Store {
  /** Small reads of committed data (never a write transaction's uncommitted rows). */
  protected abstract readonly reads: Sql;
  /**
   * Reads consistent with the streamed answers (PostgreSQL: the read replica when there is one),
   * so that an ETag never names data its answer does not hold yet.
   */
  protected abstract readonly answerReads: Sql;
  /** Runs `work` in one write transaction, committed when it resolves and undone when it throws. */
  protected abstract write<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;

  abstract migrate(): Promise<void>;
  abstract warmUp(): Promise<void>;
  abstract poolState(): PoolState[];
  protected abstract streamMessages(query: MessageQuery): AsyncIterable<MessageRow[]>;
  protected abstract importMessages(
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome>;
  /** Closes the engine's connections, once the writes in flight are done. */
  protected abstract closeConnections(): Promise<void>;

  private readonly liveWrites = new GroupCommit((group) => this.commitGroup(group));
  private closed = false;

  /** Commits a group of live writes; an engine may override it with a faster path it measured. */
  protected commitGroup(group: readonly IngestRequest[]): Promise<GroupOutcome[]> {
    return this.write((tx) => applyGroup(tx, group));
  }

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
    dataVersion: (hubId) => dataVersion(this.answerReads, hubId),
    latestAt: (hubId) => latestMessageAt(this.answerReads, hubId),
    stream: (query) => this.streamMessages(query),
    importAll: (hubId, batches, now) => this.importMessages(hubId, batches, now),
    ingest: (hubId, operations, now) => this.liveWrites.add(hubId, operations, now),
  };

  contacts: Store['contacts'] = {
    get: (hubId, lineId) => getContact(this.reads, hubId, lineId),
    upsert: (hubId, lineId, changes, now) =>
      this.write(async (tx) => {
        const { id, created } = await contactIdOf(tx, hubId, lineId, now);
        await changeContact(tx, id, changes);
        await bumpDataVersion(tx, hubId);
        const contact = await getContact(tx, hubId, lineId);
        if (!contact) throw new Error(`contact ${lineId} vanished`);
        return { contact, created };
      }),
  };

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
