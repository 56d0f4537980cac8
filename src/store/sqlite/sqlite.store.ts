/**
 * The embedded engine: one SQLite file in WAL mode. One writer connection takes every write, one
 * at a time; one connection serves small reads, which see only committed data; a small pool of
 * read connections lets a streaming answer hold its own cursor (and a consistent snapshot) while
 * other requests go on. The queries themselves are in ../sql/, shared with PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import * as answer from '../sql/answers.js';
import { CREATED_SQL, type FeedClock, type FeedTuple, mergeFeed, OTHER_SQL } from '../sql/changes.js';
import type { Sql, Transaction } from '../sql/executor.js';
import { type DdlTypes, migrateSchema } from '../sql/schema.js';
import { SqlStore } from '../sql/sql-store.js';
import { LocalWakeups } from '../sql/wakeups.js';
import type { Change, ImportMessage, ImportOutcome, MessageQuery, MessageRow, PoolState } from '../store.js';
import { openDatabase } from './sqlite.driver.js';
import { importIntoSqlite } from './sqlite.import.js';
import { SQLITE_SEARCH } from './sqlite.search.js';
import { sqliteSql } from './sqlite.sql.js';

type Db = Database.Database;

/** How long a write waits for another process (a CLI import, say) to release the database. */
const WRITE_LOCK_WAIT_MS = 5_000;
const IDLE_READERS_KEPT = 4;
const MAX_READERS = 16;

export const SQLITE_TYPES: DdlTypes = {
  int64: 'INTEGER',
  bytes: 'BLOB',
  serialKey: 'INTEGER PRIMARY KEY',
  table: ' STRICT',
  keyedTable: ' STRICT, WITHOUT ROWID',
  isMessageId: (expr) => `(length(${expr}) BETWEEN 1 AND 64 AND ${expr} NOT GLOB '*[^A-Za-z0-9_-]*')`,
  isRowIdForm: (expr) => `(${expr} GLOB 'm[0-9]*' AND substr(${expr}, 2) NOT GLOB '*[^0-9]*')`,
  // SQLite cannot change a CHECK in place: the table is copied into one with the new check.
  allowAdminScope: `
    CREATE TABLE api_keys_v5 (
      id TEXT PRIMARY KEY,
      hub_id TEXT NOT NULL REFERENCES hubs(id),
      scope TEXT NOT NULL CHECK (scope IN ('read', 'ingest', 'admin')),
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
    INSERT INTO api_keys_v5 SELECT * FROM api_keys;
    DROP TABLE api_keys;
    ALTER TABLE api_keys_v5 RENAME TO api_keys;
    CREATE INDEX api_keys_by_hub ON api_keys(hub_id, created_at);`,
  search: SQLITE_SEARCH,
};

/** The whole hub or a long range: walk contacts in first-seen order, each one's range by index. */
const STREAM_SQL = `
  SELECT ${answer.COLUMNS}
  FROM contacts AS c
  JOIN messages AS m ON m.contact_id = c.id
  WHERE c.hub_id = ? AND m.created_at >= ? AND m.created_at < ?
  ${answer.ORDER}`;

/** A short range: read it by the (hub, time) index and sort it in memory. */
const STREAM_BY_TIME_SQL = `
  SELECT ${answer.COLUMNS}
  FROM messages AS m INDEXED BY messages_by_hub_and_time
  JOIN contacts AS c ON c.id = m.contact_id
  WHERE m.hub_id = ? AND m.created_at >= ? AND m.created_at < ?
  ${answer.ORDER}`;

const COUNT_IN_RANGE_SQL = `
  SELECT COUNT(*) FROM (
    SELECT 1 FROM messages INDEXED BY messages_by_hub_and_time
    WHERE hub_id = ? AND created_at >= ? AND created_at < ? LIMIT ?)`;

interface Reader {
  db: Db;
  stream: Database.Statement<[string, number, number], answer.Tuple>;
  streamByTime: Database.Statement<[string, number, number], answer.Tuple>;
  countInRange: Database.Statement<[string, number, number, number], [number]>;
  /** The cursor being read, so close() can end it (a connection with an open cursor cannot close). */
  cursor?: IterableIterator<answer.Tuple> | undefined;
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_BUSY_RECOVERY';
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A connection that only reads. `busyWaitMs`: how long it waits (blocking) while SQLite recovers the
 * WAL, which is rare and short: a stream's reader waits; the small reads of every request fail at
 * once (503, retried by the client) rather than hold the event loop.
 */
function openReader(file: string, busyWaitMs: number): Db {
  const db = openDatabase(file, { fileMustExist: true });
  db.pragma('query_only = ON');
  db.pragma(`busy_timeout = ${busyWaitMs}`);
  return db;
}

export interface SqliteStoreOptions {
  /** Directory of `chatlog.db`; ':memory:' is not supported (readers need a shared file). */
  dataDir: string;
  /** Ranges of at most this many rows are read by time and sorted in memory (tests force a path). */
  shortRangeMaxRows?: number;
  /** False: writes add no search index rows (`npm run bench -- search` measures the index's cost). */
  searchIndex?: boolean;
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
  private feedStatements:
    | {
        created: Database.Statement<[string, number, number], FeedTuple>;
        other: Database.Statement<[string, number, number, number], FeedTuple>;
        read: (hubId: string, afterSeq: number, limit: number) => Change[];
      }
    | undefined;
  private readonly idleReaders: Reader[] = [];
  private readonly busyReaders = new Set<Reader>();
  private readonly readerWaiters: Array<() => void> = [];
  private writeQueue: Promise<unknown> = Promise.resolve();
  private readonly shortRangeMaxRows: number;
  private connectionsClosed = false;

  constructor(options: SqliteStoreOptions) {
    super();
    this.shortRangeMaxRows = options.shortRangeMaxRows ?? answer.SORT_IN_MEMORY_MAX_ROWS;
    this.searchIndex = options.searchIndex ?? true;
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    this.file = path.join(options.dataDir, 'chatlog.db');
    // Created private: SQLite gives the -wal and -shm files the same mode.
    if (!fs.existsSync(this.file)) fs.closeSync(fs.openSync(this.file, 'a', 0o600));
    this.db = openDatabase(this.file);
    this.db.pragma('journal_mode = WAL');
    // FULL: a committed transaction survives a power cut, not only a crash of the process.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    // Deleted content is overwritten with zeros, not left in free pages (CONTRACT §13: erasure).
    this.db.pragma('secure_delete = ON');
    // Never block the event loop waiting for a lock: writes retry asynchronously (beginWrite).
    this.db.pragma('busy_timeout = 0');
    this.writer = sqliteSql(this.db);
    this.readsDb = openReader(this.file, 0);
    this.reads = sqliteSql(this.readsDb);
    this.answerReads = this.reads;
  }

  async migrate(): Promise<void> {
    await this.write((tx) => migrateSchema(tx, SQLITE_TYPES, 'the data directory'));
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
    const busy = this.busyReaders.size;
    const idle = this.idleReaders.length;
    return [{ pool: 'readers', total: busy + idle, idle, waiting: this.readerWaiters.length }];
  }

  async warmUp(): Promise<void> {
    try {
      this.releaseReader(await this.acquireReader());
    } catch {
      // The first answer will say what is wrong.
    }
  }

  protected async closeConnections(): Promise<void> {
    await this.writeQueue.catch(() => undefined);
    this.connectionsClosed = true;
    for (const wake of this.readerWaiters.splice(0)) wake();
    for (const reader of [...this.idleReaders, ...this.busyReaders]) {
      reader.cursor?.return?.();
      if (reader.db.open) reader.db.close();
    }
    this.idleReaders.length = 0;
    this.busyReaders.clear();
    this.readsDb.close();
    this.db.close();
  }

  /** SQLite's own integrity check; "ok" when the file is sound. */
  integrityCheck(): string {
    return (this.db.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
  }

  /** The query plan of the streaming read, for tests that guard the index. */
  explainStream(): string[] {
    const rows = this.db.prepare(`EXPLAIN QUERY PLAN ${STREAM_SQL}`).all('1', 0, 1) as Array<{
      detail: string;
    }>;
    return rows.map((row) => row.detail);
  }

  /**
   * After an erasure: the WAL is copied into the database and truncated, so the erased rows' old
   * pages are in no file (the database's freed pages were zeroed by secure_delete). A reader in the
   * middle of an answer holds the WAL: tried again for a few seconds, then left to the next
   * checkpoint.
   */
  protected override async afterErasure(): Promise<void> {
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

  /** Write work one at a time (even when it awaits between statements), each in its own transaction. */
  protected write<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const run = () => this.inWriteTransaction(() => work(this.writer));
    const result = this.writeQueue.then(run, run);
    this.writeQueue = result.catch(() => undefined);
    return result;
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

  protected importMessages(
    tx: Transaction,
    clock: FeedClock,
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome> {
    return importIntoSqlite(this.db, tx, clock, hubId, batches, now, this.searchIndex);
  }

  /** At most MAX_READERS answers read at once (each holds a connection and its cache); others wait their turn. */
  private async acquireReader(): Promise<Reader> {
    while (this.busyReaders.size >= MAX_READERS && !this.connectionsClosed) {
      await new Promise<void>((resolve) => this.readerWaiters.push(resolve));
    }
    if (this.connectionsClosed) throw new Error('the store is closed');
    let reader = this.idleReaders.pop();
    if (!reader) {
      const db = openReader(this.file, 10_000);
      reader = {
        db,
        stream: db.prepare<[string, number, number], answer.Tuple>(STREAM_SQL).raw(true),
        streamByTime: db.prepare<[string, number, number], answer.Tuple>(STREAM_BY_TIME_SQL).raw(true),
        countInRange: db.prepare<[string, number, number, number], [number]>(COUNT_IN_RANGE_SQL).raw(true),
      };
    }
    this.busyReaders.add(reader);
    return reader;
  }

  private releaseReader(reader: Reader): void {
    this.busyReaders.delete(reader);
    this.readerWaiters.shift()?.();
    reader.cursor = undefined;
    if (this.connectionsClosed || this.idleReaders.length >= IDLE_READERS_KEPT) {
      if (reader.db.open) reader.db.close();
    } else this.idleReaders.push(reader);
  }

  protected async *streamMessages(query: MessageQuery): AsyncGenerator<MessageRow[]> {
    const reader = await this.acquireReader();
    const args = answer.bounds(query);
    let rows: IterableIterator<answer.Tuple>;
    try {
      // Same rows, same order either way; only the cost differs.
      const short =
        answer.isBounded(query) &&
        (reader.countInRange.get(...args, this.shortRangeMaxRows + 1)?.[0] ?? Number.POSITIVE_INFINITY) <=
          this.shortRangeMaxRows;
      rows = (short ? reader.streamByTime : reader.stream).iterate(...args);
    } catch (error) {
      this.releaseReader(reader);
      throw error;
    }
    reader.cursor = rows;
    try {
      for (;;) {
        const batch: MessageRow[] = [];
        while (batch.length < answer.BATCH_ROWS) {
          const next = rows.next();
          if (next.done) break;
          batch.push(answer.toRow(next.value));
        }
        if (batch.length > 0) yield batch;
        if (batch.length < answer.BATCH_ROWS) return;
        // The cursor is synchronous and a fast client never makes us wait: give other requests
        // (and timers) their turn between batches, so one big export cannot stall the server.
        await nextTurn();
      }
    } finally {
      rows.return?.();
      this.releaseReader(reader);
    }
  }
}
