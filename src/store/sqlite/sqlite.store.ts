/**
 * The embedded store: one SQLite file in WAL mode. One writer connection for every write,
 * and a small pool of read connections so a streaming answer holds its own cursor
 * (and a consistent snapshot) while other requests go on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { UserError } from '../../lib/errors.js';
import { type HubRow, KEY_COLUMNS, type KeyRow, keyRowValues, toHub, toKey } from '../rows.js';
import type {
  AccountRecord,
  Contact,
  HubSettings,
  ImportMessage,
  ImportOutcome,
  IngestOperation,
  IngestOutcome,
  MessageQuery,
  MessageRow,
  PoolState,
  RateLimit,
  SessionRecord,
  Store,
} from '../store.js';
import { openDatabase } from './sqlite.driver.js';
import { LATEST_SQLITE_VERSION, SQLITE_MIGRATIONS } from './sqlite.migrations.js';

type Db = Database.Database;

const STREAM_BATCH_ROWS = 512;
/** How long a write waits for another process (a CLI import, say) to release the database. */
const WRITE_LOCK_WAIT_MS = 5_000;
const IDLE_READERS_KEPT = 4;
const MAX_READERS = 16;
const NO_LOWER_BOUND = Number.MIN_SAFE_INTEGER;
const NO_UPPER_BOUND = Number.MAX_SAFE_INTEGER;

const ACCOUNT_COLUMNS = 'id, email, password_hash AS passwordHash, created_at AS createdAt';

const STREAM_SQL = `
  SELECT c.id, c.line_id, c.vid, c.name, COALESCE(m.sender, NULLIF(c.name, ''), 'User'),
         m.msg, m.content_type, m.created_at
  FROM contacts AS c
  JOIN messages AS m ON m.contact_id = c.id
  WHERE c.hub_id = ? AND m.created_at >= ? AND m.created_at < ?
  ORDER BY c.id, m.created_at, m.id`;

/**
 * A short range (one day of a big hub) is cheaper read through the time index and sorted in
 * memory than by visiting every contact of the hub: up to this many rows, it is.
 */
const SORT_IN_MEMORY_MAX_ROWS = 20_000;

const COUNT_IN_RANGE_SQL = `
  SELECT COUNT(*) FROM (
    SELECT 1 FROM messages INDEXED BY messages_by_hub_and_time
    WHERE hub_id = ? AND created_at >= ? AND created_at < ? LIMIT ?)`;

const STREAM_BY_TIME_SQL = `
  SELECT c.id, c.line_id, c.vid, c.name, COALESCE(m.sender, NULLIF(c.name, ''), 'User'),
         m.msg, m.content_type, m.created_at
  FROM messages AS m INDEXED BY messages_by_hub_and_time
  JOIN contacts AS c ON c.id = m.contact_id
  WHERE m.hub_id = ? AND m.created_at >= ? AND m.created_at < ?
  ORDER BY c.id, m.created_at, m.id`;

type StreamTuple = [number, string, string, string, string, string, string, number];

interface Reader {
  db: Db;
  stream: Database.Statement<[string, number, number], StreamTuple>;
  streamByTime: Database.Statement<[string, number, number], StreamTuple>;
  countInRange: Database.Statement<[string, number, number, number], [number]>;
  /** The cursor being read, so close() can end it (a connection with an open cursor cannot close). */
  cursor?: IterableIterator<StreamTuple> | undefined;
}

interface PendingIngest {
  hubId: string;
  operations: readonly IngestOperation[];
  now: number;
  resolve(outcome: IngestOutcome): void;
  reject(error: unknown): void;
}

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
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly file: string;
  private readonly db: Db;
  private readonly idleReaders: Reader[] = [];
  private readonly busyReaders = new Set<Reader>();
  private writeQueue: Promise<unknown> = Promise.resolve();
  private pendingIngest: PendingIngest[] = [];
  private ingestFlushScheduled = false;
  private closed = false;
  private readonly shortRangeMaxRows: number;
  private readonly readerWaiters: Array<() => void> = [];

  constructor(options: SqliteStoreOptions) {
    this.shortRangeMaxRows = options.shortRangeMaxRows ?? SORT_IN_MEMORY_MAX_ROWS;
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    this.file = path.join(options.dataDir, 'chatlog.db');
    // Created private: SQLite gives the -wal and -shm files the same mode.
    if (!fs.existsSync(this.file)) fs.closeSync(fs.openSync(this.file, 'a', 0o600));
    this.db = openDatabase(this.file);
    this.db.pragma('journal_mode = WAL');
    // FULL: a committed transaction survives a power cut, not only a crash of the process.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    // Never block the event loop waiting for a lock: writes retry asynchronously (beginWrite).
    this.db.pragma('busy_timeout = 0');
  }

  async migrate(): Promise<void> {
    await this.serializeWrites(() =>
      this.inWriteTransaction(() =>
        this.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`),
      ),
    );
    await this.serializeWrites(() =>
      this.inWriteTransaction(() => {
        const current = this.schemaVersion();
        if (current > LATEST_SQLITE_VERSION) {
          throw new Error(
            `the data directory holds schema version ${current}, newer than this chatlog (${LATEST_SQLITE_VERSION}); upgrade chatlog`,
          );
        }
        for (const migration of SQLITE_MIGRATIONS) {
          if (migration.version <= current) continue;
          this.db.exec(migration.sql);
          this.sql('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
            migration.version,
            migration.name,
            Date.now(),
          );
        }
      }),
    );
  }

  private schemaVersion(): number {
    const row = this.sql('SELECT MAX(version) AS version FROM schema_migrations').get() as {
      version: number | null;
    };
    return row.version ?? 0;
  }

  async ready(): Promise<boolean> {
    try {
      return this.schemaVersion() === LATEST_SQLITE_VERSION;
    } catch {
      return false;
    }
  }

  /**
   * A consistent copy of the database into a new file (mode 0600), taken with SQLite's online
   * backup while reads and writes go on. Reports bytes copied; returns the size of the copy.
   */
  async backup(file: string, onProgress?: (doneBytes: number, totalBytes: number) => void): Promise<number> {
    try {
      fs.closeSync(fs.openSync(file, 'wx', 0o600));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new UserError(`${file} already exists: remove it or choose another name`);
      }
      throw new UserError(`cannot write ${file}: ${(error as Error).message}`);
    }
    const pageSize = Number(this.db.pragma('page_size', { simple: true }));
    try {
      await this.db.backup(file, {
        progress: ({ totalPages, remainingPages }) => {
          onProgress?.((totalPages - remainingPages) * pageSize, totalPages * pageSize);
          return 1024;
        },
      });
    } catch (error) {
      fs.rmSync(file, { force: true });
      throw error;
    }
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writeQueue.catch(() => undefined);
    for (const wake of this.readerWaiters.splice(0)) wake();
    for (const reader of [...this.idleReaders, ...this.busyReaders]) {
      reader.cursor?.return?.();
      if (reader.db.open) reader.db.close();
    }
    this.idleReaders.length = 0;
    this.busyReaders.clear();
    this.db.close();
  }

  /** SQLite's own integrity check; "ok" when the file is sound. */
  integrityCheck(): string {
    return (this.db.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
  }

  /** The query plan of the streaming read, for tests that guard the index. */
  explainStream(): string[] {
    const rows = this.sql(`EXPLAIN QUERY PLAN ${STREAM_SQL}`).all('1', 0, 1) as Array<{
      detail: string;
    }>;
    return rows.map((row) => row.detail);
  }

  private readonly statements = new Map<string, Database.Statement>();

  /** The writer connection's prepared statement for `text`, prepared once. */
  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
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

  /** Runs `work` in one write transaction; call inside serializeWrites. */
  private async inWriteTransaction<T>(work: () => T): Promise<T> {
    await this.beginWrite();
    try {
      const result = work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Runs write work one at a time, even when it awaits between statements. */
  private serializeWrites<T>(work: () => Promise<T>): Promise<T> {
    const result = this.writeQueue.then(work, work);
    this.writeQueue = result.catch(() => undefined);
    return result;
  }

  /** At most MAX_READERS answers read at once (each holds a connection and its cache); others wait their turn. */
  private async acquireReader(): Promise<Reader> {
    while (this.busyReaders.size >= MAX_READERS) {
      await new Promise<void>((resolve) => this.readerWaiters.push(resolve));
    }
    let reader = this.idleReaders.pop();
    if (!reader) {
      const db = openDatabase(this.file, { fileMustExist: true });
      db.pragma('query_only = ON');
      db.pragma('busy_timeout = 10000');
      const stream = db.prepare<[string, number, number], StreamTuple>(STREAM_SQL).raw(true);
      const streamByTime = db.prepare<[string, number, number], StreamTuple>(STREAM_BY_TIME_SQL).raw(true);
      const countInRange = db
        .prepare<[string, number, number, number], [number]>(COUNT_IN_RANGE_SQL)
        .raw(true);
      reader = { db, stream, streamByTime, countInRange };
    }
    this.busyReaders.add(reader);
    return reader;
  }

  private releaseReader(reader: Reader): void {
    this.busyReaders.delete(reader);
    this.readerWaiters.shift()?.();
    reader.cursor = undefined;
    if (this.closed || this.idleReaders.length >= IDLE_READERS_KEPT) {
      if (reader.db.open) reader.db.close();
    } else this.idleReaders.push(reader);
  }

  hubs: Store['hubs'] = {
    get: async (id) => {
      const row = this.sql('SELECT * FROM hubs WHERE id = ?').get(id) as HubRow | undefined;
      return row ? toHub(row) : undefined;
    },
    upsert: (id, settings: HubSettings, now) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(() => {
          const existing = this.sql('SELECT * FROM hubs WHERE id = ?').get(id) as HubRow | undefined;
          if (!existing) {
            this.sql(
              'INSERT INTO hubs (id, time_zone, line_channel_secret_encrypted, created_at) VALUES (?, ?, ?, ?)',
            ).run(id, settings.timeZone ?? 'UTC', settings.lineChannelSecretEncrypted ?? null, now);
          } else {
            if (settings.timeZone !== undefined) {
              this.sql('UPDATE hubs SET time_zone = ?, data_version = data_version + 1 WHERE id = ?').run(
                settings.timeZone,
                id,
              );
            }
            if (settings.lineChannelSecretEncrypted !== undefined) {
              this.sql('UPDATE hubs SET line_channel_secret_encrypted = ? WHERE id = ?').run(
                settings.lineChannelSecretEncrypted,
                id,
              );
            }
          }
          if (settings.lineChannelAccessTokenEncrypted !== undefined) {
            this.sql('UPDATE hubs SET line_channel_access_token_encrypted = ? WHERE id = ?').run(
              settings.lineChannelAccessTokenEncrypted,
              id,
            );
          }
          const row = this.sql('SELECT * FROM hubs WHERE id = ?').get(id) as HubRow;
          return { hub: toHub(row), created: !existing };
        }),
      ),
  };

  keys: Store['keys'] = {
    insert: (key) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(() => {
          this.sql(`INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
            ...keyRowValues(key),
          );
        }),
      ),
    findByHash: async (keyHash) => {
      const row = this.sql('SELECT * FROM api_keys WHERE key_hash = ?').get(keyHash) as KeyRow | undefined;
      return row ? toKey(row) : undefined;
    },
    findById: async (id) => {
      const row = this.sql('SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRow | undefined;
      return row ? toKey(row) : undefined;
    },
    listByHub: async (hubId) => {
      const rows = this.sql('SELECT * FROM api_keys WHERE hub_id = ? ORDER BY created_at, id').all(
        hubId,
      ) as KeyRow[];
      return rows.map(toKey);
    },
    revoke: (id, now) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(
          () =>
            this.sql('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id)
              .changes > 0,
        ),
      ),
    setRateLimit: (id, limit: RateLimit | null) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(
          () =>
            this.sql(
              'UPDATE api_keys SET rate_limit_requests = ?, rate_limit_per_seconds = ? WHERE id = ?',
            ).run(limit?.requests ?? null, limit?.perSeconds ?? null, id).changes > 0,
        ),
      ),
    recordLastUsed: (uses) =>
      this.serializeWrites(async () => {
        if (uses.size === 0) return;
        const update = this.sql(
          'UPDATE api_keys SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?',
        );
        await this.inWriteTransaction(() => {
          for (const [id, at] of uses) update.run(at, id);
        });
      }),
  };

  messages: Store['messages'] = {
    dataVersion: async (hubId) =>
      (
        this.sql('SELECT data_version FROM hubs WHERE id = ?').get(hubId) as
          | { data_version: number }
          | undefined
      )?.data_version ?? 0,
    // MAX over the (hub_id, created_at) index: one index probe, however many messages the hub has.
    latestAt: async (hubId) =>
      (
        this.sql('SELECT MAX(created_at) AS latest FROM messages WHERE hub_id = ?').get(hubId) as
          | { latest: number | null }
          | undefined
      )?.latest ?? undefined,
    stream: (query) => this.streamMessages(query),
    importAll: (hubId, batches, now) => this.serializeWrites(() => this.importAllNow(hubId, batches, now)),
    ingest: (hubId, operations, now) =>
      new Promise<IngestOutcome>((resolve, reject) => {
        if (this.closed) {
          reject(new Error('the store is closed'));
          return;
        }
        this.pendingIngest.push({ hubId, operations, now, resolve, reject });
        if (!this.ingestFlushScheduled) {
          this.ingestFlushScheduled = true;
          // Everything that arrives before the next turn of the event loop commits together.
          setImmediate(() => {
            this.ingestFlushScheduled = false;
            const group = this.pendingIngest;
            this.pendingIngest = [];
            void this.serializeWrites(() => this.commitIngestGroup(group));
          });
        }
      }),
  };

  contacts: Store['contacts'] = {
    get: async (hubId, lineId) =>
      this.sql('SELECT line_id AS lineId, vid, name FROM contacts WHERE hub_id = ? AND line_id = ?').get(
        hubId,
        lineId,
      ) as Contact | undefined,
  };

  accounts: Store['accounts'] = {
    upsert: (email, passwordHash, now) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(() => {
          const created =
            this.sql(
              'INSERT INTO accounts (email, password_hash, created_at) VALUES (?, ?, ?) ON CONFLICT (email) DO NOTHING',
            ).run(email, passwordHash, now).changes > 0;
          if (!created)
            this.sql('UPDATE accounts SET password_hash = ? WHERE email = ?').run(passwordHash, email);
          const row = this.sql(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = ?`).get(
            email,
          ) as AccountRecord;
          return { account: row, created };
        }),
      ),
    findByEmail: async (email) =>
      this.sql(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = ?`).get(email) as
        | AccountRecord
        | undefined,
    findById: async (id) =>
      this.sql(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).get(id) as AccountRecord | undefined,
    grantHub: (accountId, hubId) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(() => {
          this.sql('INSERT INTO account_hubs (account_id, hub_id) VALUES (?, ?) ON CONFLICT DO NOTHING').run(
            accountId,
            hubId,
          );
        }),
      ),
    hubsOf: async (accountId) =>
      (
        this.sql('SELECT hub_id FROM account_hubs WHERE account_id = ? ORDER BY length(hub_id), hub_id')
          .raw(true)
          .all(accountId) as [string][]
      ).map(([hubId]) => hubId),
  };

  sessions: Store['sessions'] = {
    create: (session, now) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(() => {
          this.sql('DELETE FROM sessions WHERE expires_at <= ?').run(now);
          this.sql(
            'INSERT INTO sessions (id_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
          ).run(session.idHash, session.accountId, session.createdAt, session.expiresAt);
        }),
      ),
    find: async (idHash, now) =>
      this.sql(
        `SELECT id_hash AS idHash, account_id AS accountId, created_at AS createdAt, expires_at AS expiresAt
         FROM sessions WHERE id_hash = ? AND expires_at > ?`,
      ).get(idHash, now) as SessionRecord | undefined,
    delete: (idHash) =>
      this.serializeWrites(() =>
        this.inWriteTransaction(() => {
          this.sql('DELETE FROM sessions WHERE id_hash = ?').run(idHash);
        }),
      ),
  };

  /**
   * Group commit: one transaction (one disk sync) for every request in the group, each request
   * in its own savepoint so that a bad one fails alone.
   */
  private async commitIngestGroup(group: PendingIngest[]): Promise<void> {
    const db = this.db;
    const outcomes: Array<IngestOutcome | { failed: unknown }> = [];
    try {
      await this.beginWrite();
      const changedHubs = new Set<string>();
      for (const item of group) {
        db.exec('SAVEPOINT request');
        try {
          const outcome = this.applyIngest(item.hubId, item.operations, item.now);
          db.exec('RELEASE request');
          outcomes.push(outcome);
          if (
            outcome.stored + outcome.removed + outcome.contactsCreated.length > 0 ||
            item.operations.length > 0
          ) {
            changedHubs.add(item.hubId);
          }
        } catch (error) {
          db.exec('ROLLBACK TO request');
          db.exec('RELEASE request');
          outcomes.push({ failed: error });
        }
      }
      const bump = this.sql('UPDATE hubs SET data_version = data_version + 1 WHERE id = ?');
      for (const hubId of changedHubs) bump.run(hubId);
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      for (const item of group) item.reject(error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome && 'failed' in outcome) item.reject(outcome.failed);
      else if (outcome) item.resolve(outcome);
    });
  }

  private applyIngest(hubId: string, operations: readonly IngestOperation[], now: number): IngestOutcome {
    const outcome: IngestOutcome = { stored: 0, duplicates: 0, removed: 0, contactsCreated: [] };
    const ids = new Map<string, number>();
    const contactId = (lineId: string): number => {
      const known = ids.get(lineId);
      if (known !== undefined) return known;
      const row = this.sql('SELECT id FROM contacts WHERE hub_id = ? AND line_id = ?').get(hubId, lineId) as
        | { id: number }
        | undefined;
      let id = row?.id;
      if (id === undefined) {
        id = Number(
          this.sql('INSERT INTO contacts (hub_id, line_id, created_at) VALUES (?, ?, ?)').run(
            hubId,
            lineId,
            now,
          ).lastInsertRowid,
        );
        outcome.contactsCreated.push(lineId);
      }
      ids.set(lineId, id);
      return id;
    };
    for (const op of operations) {
      switch (op.kind) {
        case 'message': {
          const unsent = this.sql('SELECT 1 FROM unsent_messages WHERE hub_id = ? AND source_id = ?').get(
            hubId,
            op.sourceId,
          );
          if (unsent) {
            outcome.duplicates += 1;
            break;
          }
          const result = this.sql(
            `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id,
                 source_kind, source_chat_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hub_id, source_id) DO NOTHING`,
          ).run(
            hubId,
            contactId(op.lineId),
            op.createdAt,
            op.sender,
            op.msg,
            op.contentType,
            op.sourceId,
            op.sourceKind,
            op.sourceChatId,
          );
          if (result.changes > 0) outcome.stored += 1;
          else outcome.duplicates += 1;
          break;
        }
        case 'follow':
          this.sql('UPDATE contacts SET followed_at = ?, unfollowed_at = NULL WHERE id = ?').run(
            op.at,
            contactId(op.lineId),
          );
          break;
        case 'unfollow':
          this.sql('UPDATE contacts SET unfollowed_at = ? WHERE id = ?').run(op.at, contactId(op.lineId));
          break;
        case 'unsend':
          outcome.removed += this.sql('DELETE FROM messages WHERE hub_id = ? AND source_id = ?').run(
            hubId,
            op.sourceId,
          ).changes;
          this.sql(
            'INSERT INTO unsent_messages (hub_id, source_id, unsent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
          ).run(hubId, op.sourceId, op.at);
          break;
        case 'contact': {
          const id = contactId(op.lineId);
          if (op.vid !== undefined) this.sql('UPDATE contacts SET vid = ? WHERE id = ?').run(op.vid, id);
          if (op.name !== undefined) {
            this.sql(
              op.onlyIfNameEmpty
                ? "UPDATE contacts SET name = ? WHERE id = ? AND name = ''"
                : 'UPDATE contacts SET name = ? WHERE id = ?',
            ).run(op.name, id);
          }
          break;
        }
      }
    }
    return outcome;
  }

  private async *streamMessages(query: MessageQuery): AsyncGenerator<MessageRow[]> {
    const reader = await this.acquireReader();
    const args: [string, number, number] = [
      query.hubId,
      query.fromMs ?? NO_LOWER_BOUND,
      query.toMsExclusive ?? NO_UPPER_BOUND,
    ];
    // Same rows, same order either way; only the cost differs.
    const bounded = query.fromMs !== undefined || query.toMsExclusive !== undefined;
    const short =
      bounded &&
      (reader.countInRange.get(...args, this.shortRangeMaxRows + 1)?.[0] ?? Number.POSITIVE_INFINITY) <=
        this.shortRangeMaxRows;
    const rows = (short ? reader.streamByTime : reader.stream).iterate(...args);
    reader.cursor = rows;
    try {
      for (;;) {
        const batch: MessageRow[] = [];
        while (batch.length < STREAM_BATCH_ROWS) {
          const next = rows.next();
          if (next.done) break;
          const [contactId, lineId, vid, name, sender, msg, contentType, createdAt] = next.value;
          batch.push({ contactId, lineId, vid, name, sender, msg, contentType, createdAt });
        }
        if (batch.length > 0) yield batch;
        if (batch.length < STREAM_BATCH_ROWS) return;
        // The cursor is synchronous and a fast client never makes us wait: give other requests
        // (and timers) their turn between batches, so one big export cannot stall the server.
        await nextTurn();
      }
    } finally {
      rows.return?.();
      this.releaseReader(reader);
    }
  }

  private async importAllNow(
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome> {
    const db = this.db;
    const findContact = this.sql('SELECT id, vid, name FROM contacts WHERE hub_id = ? AND line_id = ?');
    const insertContact = this.sql(
      'INSERT INTO contacts (hub_id, line_id, vid, name, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    const updateContact = this.sql('UPDATE contacts SET vid = ?, name = ? WHERE id = ?');
    const insertMessage = this.sql(
      `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hub_id, source_id) DO NOTHING`,
    );
    const contacts = new Map<string, { id: number; vid: string; name: string }>();
    const outcome: ImportOutcome = { received: 0, inserted: 0, duplicates: 0, contactsCreated: 0 };
    let contactsChanged = false;

    const storeBatch = db.transaction((batch: readonly ImportMessage[]) => {
      for (const message of batch) {
        let contact = contacts.get(message.lineId);
        if (!contact) {
          contact = findContact.get(hubId, message.lineId) as
            | { id: number; vid: string; name: string }
            | undefined;
          if (!contact) {
            const id = Number(
              insertContact.run(hubId, message.lineId, message.vid, message.name, now).lastInsertRowid,
            );
            contact = { id, vid: message.vid, name: message.name };
            outcome.contactsCreated += 1;
          }
          contacts.set(message.lineId, contact);
        }
        const vid = message.vid !== '' ? message.vid : contact.vid;
        const name = message.name !== '' ? message.name : contact.name;
        if (vid !== contact.vid || name !== contact.name) {
          updateContact.run(vid, name, contact.id);
          contact.vid = vid;
          contact.name = name;
          contactsChanged = true;
        }
        const result = insertMessage.run(
          hubId,
          contact.id,
          message.createdAt,
          message.sender,
          message.msg,
          message.contentType,
          message.sourceId,
        );
        outcome.received += 1;
        if (result.changes > 0) outcome.inserted += 1;
        else outcome.duplicates += 1;
      }
    });

    await this.beginWrite();
    try {
      const hub = this.sql('SELECT id FROM hubs WHERE id = ?').get(hubId);
      if (!hub) throw new Error(`hub ${hubId} does not exist`);
      // Nested db.transaction() calls become savepoints inside this one transaction.
      for await (const batch of batches) storeBatch(batch);
      if (outcome.inserted > 0 || outcome.contactsCreated > 0 || contactsChanged) {
        this.sql('UPDATE hubs SET data_version = data_version + 1 WHERE id = ?').run(hubId);
      }
      db.exec('COMMIT');
      return outcome;
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }
}
