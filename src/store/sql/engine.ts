/**
 * What a port of the store (store.ts) is written over: the engine's reads, its write transaction,
 * and which of the port's methods write. Each feature's file here (`keys.ts`, `webhooks.ts`, …)
 * holds its SQL and its port, made over an Engine (`keysPort(engine)`), once for both engines.
 * SqlStore (sql-store.ts) makes the Engine from whichever engine runs, and gives each port the few
 * things of the engine's own it needs besides (the streamed answer, the search index, …).
 *
 * Adding a store write: its method in the port's interface (store.ts), and its SQL and its line in
 * the port's `engine.port(…)`, its name among the writes (the feature's file here). Named a write,
 * it runs on SQLite's writer thread by itself.
 */
import type { FeedClock } from './changes.js';
import type { Sql, Transaction } from './executor.js';

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

export interface Engine {
  /** Small reads of committed data (never a write transaction's uncommitted rows). */
  readonly reads: Sql;
  /**
   * Reads consistent with the streamed answers (PostgreSQL: the read replica when there is one),
   * so that an ETag never names data its answer does not hold yet.
   */
  readonly answerReads: Sql;
  /**
   * Runs `work` in one write transaction, committed when it resolves and undone when it throws.
   * An engine may run it again after a conflict (a deadlock), unless it reads the caller's batches.
   */
  write<T>(work: (tx: Transaction) => Promise<T>, options?: WriteOptions): Promise<T>;
  /**
   * A write that appends to hubs' feeds: their rows locked first (FeedClock), the changes numbered
   * in commit order, every node told at commit, this node's readers woken after.
   */
  writeChanges<T>(
    hubIds: readonly string[],
    work: (tx: Transaction, clock: FeedClock) => Promise<T>,
    options?: WriteOptions,
  ): Promise<T>;
  /** `work`, which deletes many messages in `tx`, with the search index's statements around it. */
  deletingMany<T>(tx: Transaction, work: () => Promise<T>): Promise<T>;
  /** Makes an erasure real in the files where the engine can (SQLite: the WAL checkpointed). */
  afterErasure(cause: 'erasure' | 'retention'): Promise<void>;
  /** What a select adds to lock its rows and pass over rows another transaction holds (PostgreSQL). */
  readonly skipLocked: string;
  /**
   * A statement that makes lease transactions of downloads take turns on every node (PostgreSQL: an
   * advisory lock); SQLite has one writer: none.
   */
  readonly downloadLeaseLock: string;
  /**
   * A statement, with one `?` (a JSON array of contacts' keys, sorted), that makes the transactions changing which of that
   * contact's sends is its queue's head take turns on every node (PostgreSQL: an advisory lock);
   * SQLite has one writer: none.
   */
  readonly contactSendsLock: string;
  /**
   * The port `methods` as given, those named in `writes` each run here or where the engine runs its
   * writes (SQLite: its writer thread, which calls the same method there by its path, `keys.insert`).
   */
  port<P extends object>(name: string, methods: P, writes: readonly (keyof P & string)[]): P;
}
