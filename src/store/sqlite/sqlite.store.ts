/**
 * The embedded engine: one SQLite file in WAL mode. One writer connection, on a thread of its own
 * (sqlite.writer-thread.ts), takes every write, one at a time, so that statements, COMMIT and its
 * fsync never hold the event loop that answers requests; one connection serves small reads, which
 * see only committed data; a small pool of read connections lets a streaming answer hold its own
 * cursor (and a consistent snapshot) while other requests go on. The queries themselves are in
 * ../sql/, shared with PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { CREATED_SQL, type FeedClock, type FeedTuple, mergeFeed, OTHER_SQL } from '../sql/changes.js';
import type { Sql, Transaction } from '../sql/executor.js';
import { type DdlTypes, migrateSchema } from '../sql/schema.js';
import { SqlStore, type WriteOptions } from '../sql/sql-store.js';
import { LocalWakeups } from '../sql/wakeups.js';
import type {
  Change,
  FeedJsonPage,
  ImportMessage,
  ImportOutcome,
  MessageQuery,
  MessageRow,
  PoolState,
} from '../store.js';
import { openReader, SqliteAnswerReaders, STREAM_SQL } from './sqlite.answers.js';
import { openDatabase } from './sqlite.driver.js';
import { type FeedJsonReader, feedJsonReader } from './sqlite.feed.js';
import { importIntoSqlite } from './sqlite.import.js';
import { compactSearch, holdsDeletedEntries, SQLITE_SEARCH, worthCompacting } from './sqlite.search.js';
import { SearchCompactor } from './sqlite.search-compactor.js';
import { sqliteSql } from './sqlite.sql.js';
import { WalSync } from './sqlite.wal-sync.js';
import { WriterThread } from './sqlite.writer-thread.js';

type Db = Database.Database;

/** How long a write waits for another process (a CLI import, say) to release the database. */
const WRITE_LOCK_WAIT_MS = 5_000;

/** api_keys copied into a table whose scope CHECK takes `scopes` (migrations 5 and 18). */
function apiKeysWithScopes(copy: string, scopes: readonly string[]): string {
  return `
    CREATE TABLE ${copy} (
      id TEXT PRIMARY KEY,
      hub_id TEXT NOT NULL REFERENCES hubs(id),
      scope TEXT NOT NULL CHECK (scope IN (${scopes.map((scope) => `'${scope}'`).join(', ')})),
      label TEXT NOT NULL DEFAULT '',
      key_hash BLOB NOT NULL UNIQUE,
      key_encrypted BLOB NOT NULL,
      key_start TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER,
      revoked_at INTEGER,
      rate_limit_requests INTEGER,
      rate_limit_per_seconds INTEGER
    ) STRICT;
    INSERT INTO ${copy} SELECT * FROM api_keys;
    DROP TABLE api_keys;
    ALTER TABLE ${copy} RENAME TO api_keys;
    CREATE INDEX api_keys_by_hub ON api_keys(hub_id, created_at);`;
}

export const SQLITE_TYPES: DdlTypes = {
  int64: 'INTEGER',
  bytes: 'BLOB',
  serialKey: 'INTEGER PRIMARY KEY',
  table: ' STRICT',
  keyedTable: ' STRICT, WITHOUT ROWID',
  isMessageId: (expr) => `(length(${expr}) BETWEEN 1 AND 64 AND ${expr} NOT GLOB '*[^A-Za-z0-9_-]*')`,
  isRowIdForm: (expr) => `(${expr} GLOB 'm[0-9]*' AND substr(${expr}, 2) NOT GLOB '*[^0-9]*')`,
  // SQLite cannot change a CHECK in place: the table is copied into one with the new check.
  allowAdminScope: apiKeysWithScopes('api_keys_v5', ['read', 'ingest', 'admin']),
  allowSendScope: apiKeysWithScopes('api_keys_v18', ['read', 'ingest', 'admin', 'send']),
  search: SQLITE_SEARCH,
};

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_BUSY_RECOVERY';
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface SqliteStoreOptions {
  /** Directory of `chatlog.db`; ':memory:' is not supported (readers need a shared file). */
  dataDir: string;
  /** Ranges of at most this many rows are read by time and sorted in memory (tests force a path). */
  shortRangeMaxRows?: number;
  /** False: writes add no search index rows (`npm run bench -- search` measures the index's cost). */
  searchIndex?: boolean;
  /**
   * True (the default): writes run on the writer thread. False: on the calling thread, which is
   * what the writer thread's own store does (sqlite.writer.ts).
   */
  writerThread?: boolean;
}

export class SqliteStore extends SqlStore {
  readonly file: string;
  private readonly db: Db;
  private readonly writer: Transaction;
  protected readonly reads: Sql;
  protected readonly answerReads: Sql;
  /** One process writes the file while it serves, so its own commits are all its readers wait for. */
  protected readonly wakeups = new LocalWakeups();
  protected readonly searchEngine = SQLITE_SEARCH;
  private readonly readsDb: Db;
  private feedJson: FeedJsonReader | undefined;
  private contactIds: Database.Statement<[string, string], [number | null, number | null]> | undefined;
  private feedStatements:
    | {
        created: Database.Statement<[string, number, number], FeedTuple>;
        other: Database.Statement<[string, number, number, number], FeedTuple>;
        read: (hubId: string, afterSeq: number, limit: number) => Change[];
      }
    | undefined;
  private readonly answers: SqliteAnswerReaders;
  private writeQueue: Promise<unknown> = Promise.resolve();
  private readonly thread: WriterThread | undefined;
  private readonly walSync: WalSync;
  /** Run by the store that writes (the writer thread's): its steps are writes. */
  private readonly compactor = new SearchCompactor(
    (first) => this.write((tx) => compactSearch(tx, first)),
    () => worthCompacting(this.writer),
    () => this.checkpoint(),
  );

  constructor(options: SqliteStoreOptions) {
    super();
    this.searchIndex = options.searchIndex ?? true;
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    this.file = path.join(options.dataDir, 'chatlog.db');
    // Created private: SQLite gives the -wal and -shm files the same mode.
    if (!fs.existsSync(this.file)) fs.closeSync(fs.openSync(this.file, 'a', 0o600));
    this.db = openDatabase(this.file);
    this.db.pragma('journal_mode = WAL');
    // NORMAL, and each write waits for a sync of the WAL made after its COMMIT (sqlite.wal-sync.ts):
    // a committed transaction survives a power cut, as with FULL, and the writer never waits for it.
    this.db.pragma('synchronous = NORMAL');
    this.walSync = new WalSync(`${this.file}-wal`);
    this.db.pragma('foreign_keys = ON');
    // Deleted content is overwritten with zeros, not left in free pages (CONTRACT §13: erasure).
    this.db.pragma('secure_delete = ON');
    // Never block the event loop waiting for a lock: writes retry asynchronously (beginWrite).
    this.db.pragma('busy_timeout = 0');
    this.writer = sqliteSql(this.db);
    this.readsDb = openReader(this.file, 0);
    this.answers = new SqliteAnswerReaders(this.file, { shortRangeMaxRows: options.shortRangeMaxRows });
    this.reads = sqliteSql(this.readsDb);
    this.answerReads = this.reads;
    if (options.writerThread ?? true) {
      const thread = new WriterThread({ dataDir: options.dataDir, searchIndex: this.searchIndex }, (hubId) =>
        hubId === undefined ? this.wakeups.wakeAll() : this.wakeups.wake([hubId]),
      );
      this.thread = thread;
      // Each write method of the ports (engine.ts) becomes a call to the thread's own store.
      this.forwardWrite = (path, args) => thread.call(path, args);
    }
  }

  async migrate(): Promise<void> {
    // Up to date (every start but the first after an upgrade): no need to wait for the thread.
    if (this.thread && (await this.ready())) return;
    if (this.thread) await this.thread.call('migrate', []);
    else await this.write((tx) => migrateSchema(tx, SQLITE_TYPES, 'the data directory'));
  }

  /**
   * A consistent copy of the database into `file` (created empty by the caller), taken with
   * SQLite's online backup while reads and writes go on.
   */
  async backup(file: string, onProgress?: (doneBytes: number, totalBytes: number) => void): Promise<number> {
    const pageSize = Number(this.db.pragma('page_size', { simple: true }));
    await this.db.backup(file, {
      progress: ({ totalPages, remainingPages }) => {
        onProgress?.((totalPages - remainingPages) * pageSize, totalPages * pageSize);
        return 1024;
      },
    });
    return fs.statSync(file).size;
  }

  poolState(): PoolState[] {
    return [this.answers.poolState()];
  }

  async warmUp(): Promise<void> {
    try {
      await this.answers.warmUp();
    } catch {
      // The first answer will say what is wrong.
    }
  }

  protected async closeConnections(): Promise<void> {
    await this.compactor.stop();
    await this.thread?.close();
    await this.writeQueue.catch(() => undefined);
    await this.walSync.close();
    this.answers.close();
    this.readsDb.close();
    this.db.close();
  }

  /** SQLite's own integrity check; "ok" when the file is sound. */
  integrityCheck(): string {
    return (this.db.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
  }

  /**
   * The lowest and highest of a hub's contact ids (two index probes): the answer threads read an
   * answer's two halves at once, split between them. Undefined for a hub of fewer than two
   * contacts, or when the connection is busy (the answer is then read whole).
   */
  contactIdRange(hubId: string): [low: number, high: number] | undefined {
    try {
      // Two subqueries: SQLite reads a lone min() or max() off the index's end, not both at once.
      this.contactIds ??= this.readsDb
        .prepare<[string, string], [number | null, number | null]>(
          'SELECT (SELECT min(id) FROM contacts WHERE hub_id = ?), (SELECT max(id) FROM contacts WHERE hub_id = ?)',
        )
        .raw(true);
      const [low, high] = this.contactIds.get(hubId, hubId) ?? [null, null];
      return low !== null && high !== null && high > low ? [low, high] : undefined;
    } catch {
      return undefined;
    }
  }

  /** The query plan of the streaming read, for tests that guard the index. */
  explainStream(): string[] {
    const rows = this.db.prepare(`EXPLAIN QUERY PLAN ${STREAM_SQL}`).all('1', 0, 1) as Array<{
      detail: string;
    }>;
    return rows.map((row) => row.detail);
  }

  /**
   * After an erasure (or a retention run): the WAL is copied into the database and truncated, so
   * the erased rows' old pages are in no file (the database's freed pages were zeroed by
   * secure_delete); their search entries leave the index in the background (SearchCompactor:
   * always after an erasure, when enough is deleted after retention), which checkpoints again when
   * it is done.
   */
  protected override async afterErasure(cause: 'erasure' | 'retention'): Promise<void> {
    this.compactor.request(cause === 'erasure');
    await this.checkpoint();
  }

  protected override searchCompacted(): Promise<void> {
    return this.compactor.settled();
  }

  protected override async resumeSearchCompaction(): Promise<void> {
    if (await holdsDeletedEntries(this.writer)) this.compactor.request(true);
  }

  /**
   * The WAL copied into the database and truncated. A reader in the middle of an answer holds the
   * WAL: tried again for a few seconds, then left to the next checkpoint.
   */
  private async checkpoint(): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      // In the writers' turn, outside any transaction (a checkpoint cannot run inside one).
      const checkpoint = async () => {
        const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
        return result?.busy === 0;
      };
      const turn = this.writeQueue.then(checkpoint, checkpoint);
      this.writeQueue = turn.catch(() => undefined);
      const done = await turn.catch(() => false);
      if (done) return;
      await sleep(250);
    }
  }

  /**
   * Write work one at a time (even when it awaits between statements), each in its own transaction.
   * With a writer thread, only work that reads from this thread (an import's batches) runs here;
   * every other write is the thread's (a write here would be a mistake: it would hold the event loop).
   * The next write starts at this one's COMMIT; this one resolves once its commit is on disk.
   */
  protected write<T>(work: (tx: Transaction) => Promise<T>, options?: WriteOptions): Promise<T> {
    if (this.thread && !options?.readsCallersBatches) {
      return Promise.reject(
        new Error(
          "a write outside the writer thread: name its method among its port's writes (sql/engine.ts)",
        ),
      );
    }
    const run = () => this.inWriteTransaction(() => work(this.writer));
    const committed = this.writeQueue.then(run, run);
    this.writeQueue = committed.catch(() => undefined);
    return committed.then(async (result) => {
      await this.walSync.sync();
      return result;
    });
  }

  private async inWriteTransaction<T>(work: () => Promise<T>): Promise<T> {
    await this.beginWrite();
    try {
      const result = await work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** BEGIN IMMEDIATE, waiting asynchronously (never blocking the event loop) while another process writes. */
  private async beginWrite(): Promise<void> {
    const deadline = Date.now() + WRITE_LOCK_WAIT_MS;
    for (let delay = 2; ; delay = Math.min(delay * 2, 100)) {
      try {
        this.db.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isBusy(error) || Date.now() + delay > deadline) throw error;
        await sleep(delay);
      }
    }
  }

  /**
   * The feed's two halves, each read in seq order by its index and merged here (one UNION statement
   * sorts both in temporary b-trees), in one read transaction: one snapshot, and synchronous, so
   * nothing else runs on the connection in between.
   */
  protected override readFeedPage(hubId: string, afterSeq: number, limit: number): Promise<Change[]> {
    this.feedStatements ??= {
      created: this.readsDb.prepare<[string, number, number], FeedTuple>(CREATED_SQL).raw(true),
      other: this.readsDb.prepare<[string, number, number, number], FeedTuple>(OTHER_SQL).raw(true),
      read: this.readsDb.transaction((hub: string, after: number, n: number) => {
        const statements = this.feedStatements;
        if (!statements) throw new Error('the feed statements are not prepared');
        const created = statements.created.all(hub, after, n);
        // A full page of messages ends the page at its last seq: no other change past it is needed.
        const through =
          created.length === n ? (created.at(-1)?.[0] ?? Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
        return mergeFeed(created, statements.other.all(hub, after, through, n), n);
      }),
    };
    try {
      return Promise.resolve(this.feedStatements.read(hubId, afterSeq, limit));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  protected override readFeedJson(hubId: string, afterSeq: number, limit: number): Promise<FeedJsonPage> {
    this.feedJson ??= feedJsonReader(this.readsDb);
    try {
      return Promise.resolve(this.feedJson(hubId, afterSeq, limit));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  protected importMessages(
    tx: Transaction,
    clock: FeedClock,
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome> {
    return importIntoSqlite(this.db, tx, clock, hubId, batches, now, this.searchIndex);
  }

  protected streamMessages(query: MessageQuery): AsyncGenerator<MessageRow[]> {
    return this.answers.stream(query);
  }
}
