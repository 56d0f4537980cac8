/**
 * The engine for several nodes: PostgreSQL through `pg`. Small queries go through one pool;
 * streaming answers read from a server-side cursor on a connection of their own (from the read
 * replica when one is configured), so a big answer holds bounded memory here and on the database.
 * The queries themselves are in ../sql/, shared with SQLite.
 *
 * Kept whole: it is the one engine object (pools, transactions and their retries, the fast ingest
 * path's fallback, COPY answers); its parts that stand alone are files beside it (postgres.*.ts).
 */
import pg from 'pg';
import Cursor from 'pg-cursor';
import * as answer from '../sql/answers.js';
import { FEED_SQL, type FeedClock, type FeedTuple, feedParams, toChange } from '../sql/changes.js';
import { numberPlaceholders, type Sql, type Transaction } from '../sql/executor.js';
import { type GroupOutcome, hubsOfGroup, type IngestRequest } from '../sql/ingest.js';
import { type DdlTypes, migrateSchema } from '../sql/schema.js';
import { SqlStore, type WriteOptions } from '../sql/sql-store.js';
import type {
  AnswerCount,
  Change,
  FeedJsonPage,
  ImportMessage,
  ImportOutcome,
  MessageQuery,
  MessageRow,
  PoolState,
} from '../store.js';
import { answerJson } from './postgres.answers.js';
import { expectedFallback, onlyMessages, storeMessageGroup, storeMessages } from './postgres.fast-ingest.js';
import { readFeedJsonByCopy } from './postgres.feed.js';
import { importIntoPostgres } from './postgres.import.js';
import { POSTGRES_SEARCH } from './postgres.search.js';
import { postgresSql, StorableTextClient } from './postgres.sql.js';
import { announceChanges, PostgresWakeups } from './postgres.wakeups.js';

const INT8_OID = 20;

/** BIGINT columns (epoch ms, ids) as numbers: every value chatlog stores is below 2^53. */
export const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

const POSTGRES_TYPES: DdlTypes = {
  int64: 'BIGINT',
  bytes: 'BYTEA',
  serialKey: 'BIGSERIAL PRIMARY KEY',
  table: '',
  keyedTable: '',
  isMessageId: (expr) => `(${expr} ~ '^[A-Za-z0-9_-]{1,64}$')`,
  isRowIdForm: (expr) => `(${expr} ~ '^m[0-9]+$')`,
  allowAdminScope: `
    ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'ingest', 'admin'));`,
  allowSendScope: `
    ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'ingest', 'admin', 'send'));`,
  search: POSTGRES_SEARCH,
};

/**
 * A long range (a whole hub): walk the hub's contacts in first-seen order and, for each, its
 * messages by the (contact, time) index. The nested loop streams from the first row with bounded
 * memory on the database; the incremental sort only orders each contact's rows, already in order.
 */
export const STREAM_SQL = `
  SELECT ${answer.COLUMNS}
  FROM contacts AS c
  CROSS JOIN LATERAL (
    SELECT m.sender, m.msg, m.content_type, m.created_at, m.id
    FROM messages AS m
    WHERE m.contact_id = c.id AND m.created_at >= $2 AND m.created_at < $3
  ) AS m
  WHERE c.hub_id = $1
  ${answer.ORDER}`;

/** A short range (one day): read it by the (hub, time) index and sort it. */
export const STREAM_BY_TIME_SQL = `
  SELECT ${answer.COLUMNS}
  FROM messages AS m
  JOIN contacts AS c ON c.id = m.contact_id
  WHERE m.hub_id = $1 AND m.created_at >= $2 AND m.created_at < $3
  ${answer.ORDER}`;

/**
 * A bounded range of at most this many rows is read by time and sorted (STREAM_BY_TIME_SQL), a
 * longer one contact by contact (STREAM_SQL). PostgreSQL's sort spills to disk past work_mem, so
 * memory stays bounded either way; what differs is time. Measured on the bench's hub (20,000
 * contacts): a month of 80,084 messages took 260-340 ms by time and 530 ms by contact, three months
 * (240,000) 885 against 1,025 ms; by contact, the first row comes at once, where a sort holds it
 * back until the end. Counting up to the limit costs 40 ms for the month.
 */
export const BY_TIME_MAX_ROWS = 200_000;

const COUNT_IN_RANGE_SQL = `
  SELECT COUNT(*)::int AS n FROM (
    SELECT 1 FROM messages WHERE hub_id = $1 AND created_at >= $2 AND created_at < $3 LIMIT $4
  ) AS r`;

/**
 * A feed page as a named (prepared) statement read in rows of arrays: each connection parses it once
 * rather than on every page of a catch-up (its generic plan, like the custom one, merges the two
 * halves' index scans by seq, with no sort), and no row object is built only to be taken apart.
 */
const FEED_PAGE = {
  name: 'chatlog_feed_page',
  text: numberPlaceholders(FEED_SQL),
  rowMode: 'array',
} as const;

export interface PostgresStoreOptions {
  connectionString: string;
  /** A read replica for the read API's streaming answers; the primary when unset. */
  readConnectionString?: string | undefined;
  /** A schema of its own (created when missing); `public` when unset. */
  schema?: string | undefined;
  poolSize?: number;
  /** Server-side limit for one statement (one cursor fetch for streams). */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Told about pool errors (a dropped idle connection, say); they never crash the process. */
  onPoolError?: (error: Error) => void;
  /**
   * Told, at most once a minute, when groups of webhook messages were stored the slow way for an
   * unexpected reason (postgres.fast-ingest.ts expectedFallback), with how many since the last time.
   */
  onFastPathFailure?: (error: Error, groups: number) => void;
  /** False: writes add no search index rows (`npm run bench -- search` measures the index's cost). */
  searchIndex?: boolean;
  /** Ranges of at most this many rows are read by time and sorted; tests force a path (-1: never). */
  shortRangeMaxRows?: number;
}

/**
 * A transaction of WriteOptions.redoable: answered once its commit is in the WAL's buffers, not yet
 * on disk (one round trip with BEGIN). Measured: bench/feed.ts --parts 3, bench/results.
 */
const REDOABLE_BEGIN = 'BEGIN; SET LOCAL synchronous_commit = off';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Deadlock and serialization failures: PostgreSQL aborted one of two transactions; run it again. */
const RETRIED_CODES = new Set(['40P01', '40001']);

export class PostgresStore extends SqlStore {
  private readonly pool: pg.Pool;
  private readonly streamPool: pg.Pool;
  private readonly feedPool: pg.Pool;
  private readonly schema: string | undefined;
  /** The primary, without statement timeouts: for migrations (migrate). */
  private readonly migrationConfig: pg.PoolConfig;
  private readonly smallQueryTimeoutMs: number;
  protected readonly reads: Sql;
  protected readonly answerReads: Sql;
  private readonly shortRangeMaxRows: number;
  protected readonly wakeups: PostgresWakeups;
  protected readonly searchEngine = POSTGRES_SEARCH;
  protected override readonly skipLocked = ' FOR UPDATE SKIP LOCKED';
  /**
   * One group at a time. Every write of a hub holds its row from the group's first statement to
   * its commit, so a second group of the same hub only waits behind the first, and the writes that
   * came meanwhile went into two small groups instead of one (with `--workers`, four small groups
   * queued on the row). Webhooks at 200 a second, round trip after warm-up: p50 25-42 ms and p99
   * 98-152 ms with two, 10-27 ms and 30-57 ms with one (bench/results/2026-11-27-issue-16.md).
   */
  protected override readonly groupsInFlight = 1;
  protected override readonly downloadLeaseLock =
    "SELECT pg_advisory_xact_lock(hashtext('chatlog content lease')) AS locked";
  /** The keys in the order given (sorted: two transactions never wait on each other's). */
  protected override readonly contactSendsLock = `SELECT count(*) AS locked FROM (
      SELECT pg_advisory_xact_lock(hashtextextended('chatlog sends ' || keys.k, 0))
      FROM (SELECT k, n FROM json_array_elements_text(?::json) WITH ORDINALITY AS a(k, n) ORDER BY n OFFSET 0) AS keys
    ) AS locks`;
  /** Groups of messages the fast path gave to the shared way since the store opened (tests read it). */
  fastPathFallbacks = 0;
  private unexpectedFallbacks = 0;
  private lastUnexpected: Error | undefined;
  private fallbackToldAt = Number.NEGATIVE_INFINITY;
  private fallbackTimer: NodeJS.Timeout | undefined;
  private readonly onFastPathFailure: PostgresStoreOptions['onFastPathFailure'];
  /** The connection of each open write transaction (bulk import sends arrays on it). */
  private readonly clients = new WeakMap<Transaction, pg.PoolClient>();

  constructor(options: PostgresStoreOptions) {
    super();
    this.searchIndex = options.searchIndex ?? true;
    this.onFastPathFailure = options.onFastPathFailure;
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new Error(`schema "${options.schema}" must be a lower-case SQL identifier`);
    }
    this.schema = options.schema;
    this.smallQueryTimeoutMs = (options.statementTimeoutMs ?? 5_000) + 2_000;
    this.shortRangeMaxRows = options.shortRangeMaxRows ?? BY_TIME_MAX_ROWS;
    const common = {
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
      statement_timeout: options.statementTimeoutMs ?? 5_000,
      idle_in_transaction_session_timeout: 60_000,
      keepAlive: true,
      application_name: 'chatlog',
      types,
      Client: StorableTextClient,
      options: this.schema ? `-c search_path=${this.schema}` : undefined,
    };
    this.migrationConfig = { ...common, statement_timeout: 0, connectionString: options.connectionString };
    // A query that hangs on a dead network ends a little after the server-side timeout would have.
    this.pool = new pg.Pool({
      ...common,
      connectionString: options.connectionString,
      query_timeout: (options.statementTimeoutMs ?? 5_000) + 2_000,
    });
    // A cursor's statement lasts as long as its answer (the timeout would not restart at each
    // fetch), so streams have no statement timeout; a client that stops reading is cut by the
    // HTTP idle timeout, which closes the cursor. The small queries here carry their own timeout.
    this.streamPool = new pg.Pool({
      ...common,
      statement_timeout: 0,
      connectionString: options.readConnectionString ?? options.connectionString,
    });
    // The feed's pages come through COPY (postgres.feed.ts), which node-postgres's query timeout
    // does not know how to end (its timer would fire long after the COPY has, on whatever the
    // connection does by then): a pool of their own, with the server's statement timeout and
    // postgres.feed.ts's own timer for a dead network.
    this.feedPool = new pg.Pool({ ...common, connectionString: options.connectionString });
    this.reads = postgresSql(this.pool);
    this.answerReads = postgresSql(this.streamPool, this.smallQueryTimeoutMs);
    const onError = options.onPoolError ?? (() => undefined);
    // Listens only once something waits for changes (a long poll, the webhook dispatcher).
    this.wakeups = new PostgresWakeups({
      connectionString: options.connectionString,
      schema: this.schema,
      onError,
    });
    this.pool.on('error', onError);
    this.streamPool.on('error', onError);
    this.feedPool.on('error', onError);
  }

  protected override async readFeedPage(hubId: string, afterSeq: number, limit: number): Promise<Change[]> {
    const result = await this.pool.query<FeedTuple>({
      ...FEED_PAGE,
      values: feedParams(hubId, afterSeq, limit),
      query_timeout: this.smallQueryTimeoutMs,
    } as pg.QueryArrayConfig);
    return result.rows.flatMap((row) => toChange(row) ?? []);
  }

  protected override readFeedJson(hubId: string, afterSeq: number, limit: number): Promise<FeedJsonPage> {
    return readFeedJsonByCopy(this.feedPool, hubId, afterSeq, limit, this.smallQueryTimeoutMs);
  }

  async migrate(): Promise<void> {
    // On a connection of its own to the primary, without the everyday statements' timeouts: a
    // migration may build an index over every message (migration 16's GIN index: a minute with
    // 2.3M messages here). The stream pool has none either, but may be a read replica's.
    const pool = new pg.Pool({ ...this.migrationConfig, max: 1 });
    pool.on('error', () => undefined);
    try {
      await this.retryingConflicts(() =>
        this.inTransaction(
          async (client) => {
            const tx = postgresSql(client);
            // Several nodes may start at once: one migrates, the others wait here, then find
            // nothing to do. The lock comes first: two concurrent CREATE SCHEMA IF NOT EXISTS can
            // still collide.
            await tx.get('SELECT pg_advisory_xact_lock(hashtext(?))', [
              `chatlog migrate ${this.schema ?? 'public'}`,
            ]);
            if (this.schema) await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
            await migrateSchema(tx, POSTGRES_TYPES, 'the database');
          },
          'BEGIN',
          pool,
        ),
      );
    } finally {
      await pool.end();
    }
  }

  poolState(): PoolState[] {
    return [
      {
        pool: 'main',
        total: this.pool.totalCount,
        idle: this.pool.idleCount,
        waiting: this.pool.waitingCount,
      },
      {
        pool: 'stream',
        total: this.streamPool.totalCount,
        idle: this.streamPool.idleCount,
        waiting: this.streamPool.waitingCount,
      },
      {
        pool: 'feed',
        total: this.feedPool.totalCount,
        idle: this.feedPool.idleCount,
        waiting: this.feedPool.waitingCount,
      },
    ];
  }

  async warmUp(): Promise<void> {
    // A connection in each pool, so that the first answer does not wait for one.
    await Promise.all([this.pool.query('SELECT 1'), this.streamPool.query('SELECT 1')]).catch(
      () => undefined,
    );
  }

  protected async closeConnections(): Promise<void> {
    clearTimeout(this.fallbackTimer);
    await Promise.all([this.pool.end(), this.streamPool.end(), this.feedPool.end()]);
  }

  /**
   * After a bulk load, what autovacuum would do in time: planner statistics, and the visibility map
   * without which every index-only scan (a contact's messages counted, its newest found) reads the
   * table's pages too (list_contacts' counts: 318 ms for 50 contacts before, 8 ms after).
   */
  async analyze(): Promise<void> {
    await this.pool.query('VACUUM (ANALYZE) contacts, messages, changes, webhook_deliveries');
  }

  /** Drops the schema and everything in it: for tests that made a schema of their own. */
  async dropSchema(): Promise<void> {
    if (!this.schema) throw new Error('refusing to drop the public schema');
    await this.pool.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
  }

  /** The query plan of the streaming read, for tests that guard the index. */
  async explainStream(): Promise<string[]> {
    const result = await this.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${STREAM_SQL}`, ['1', 0, 1]);
    return result.rows.map((row) => row['QUERY PLAN']);
  }

  protected write<T>(work: (tx: Transaction) => Promise<T>, options?: WriteOptions): Promise<T> {
    const once = () =>
      this.inTransaction(
        (client) => {
          const tx = postgresSql(client);
          this.clients.set(tx, client);
          return work(tx);
        },
        options?.redoable ? REDOABLE_BEGIN : 'BEGIN',
      );
    return options?.readsCallersBatches ? once() : this.retryingConflicts(once);
  }

  protected override announce(tx: Transaction, hubIds: readonly string[]): Promise<void> {
    return announceChanges(tx, this.schema, hubIds);
  }

  /** Messages only (the common case): three round trips; any other group, or if it fails, the shared path. */
  protected override async commitGroup(group: readonly IngestRequest[]): Promise<GroupOutcome[]> {
    // A group of empty requests (the ingest API's `[]`) has nothing for the fast path.
    if (onlyMessages(group) && hubsOfGroup(group).length > 0) {
      const stored = await this.withClient(this.pool, (client, drop) =>
        storeMessageGroup(
          client,
          group,
          {
            schema: this.schema,
            searchIndex: this.searchIndex,
            statementTimeoutMs: this.smallQueryTimeoutMs,
          },
          drop,
        ),
      ).catch((error: unknown) => {
        this.fellBack(error);
        return undefined;
      });
      if (stored) {
        if (stored.grown.length > 0) this.wakeups.wake(stored.grown);
        return stored.outcomes;
      }
    }
    return super.commitGroup(group);
  }

  /**
   * Sent sends' messages as the fast path stores webhooks' (one statement for all of them, in the
   * transaction that holds their hubs), in a savepoint: if it gives up (a message id another message
   * has), the shared way stores them, each request alone. A batch of 16 took about 180 statements
   * the shared way (11 a send, 0.5 ms each under load): PostgreSQL stored fewer sends a second than
   * 200 a second accepted.
   */
  protected override async storeSentMessages(
    tx: Transaction,
    clock: FeedClock,
    requests: readonly IngestRequest[],
  ): Promise<GroupOutcome[]> {
    const client = this.clients.get(tx);
    if (!client || requests.length === 0 || !onlyMessages(requests))
      return super.storeSentMessages(tx, clock, requests);
    await tx.exec('SAVEPOINT sent_messages');
    try {
      const outcomes = await storeMessages(client, clock, requests, this.searchIndex);
      await tx.exec('RELEASE SAVEPOINT sent_messages');
      return outcomes;
    } catch (error) {
      // Its seqs are left unused: a gap in the feed, which is allowed (FeedClock.next).
      await tx.exec('ROLLBACK TO SAVEPOINT sent_messages');
      await tx.exec('RELEASE SAVEPOINT sent_messages');
      this.fellBack(error);
      return super.storeSentMessages(tx, clock, requests);
    }
  }

  /**
   * Counts a group the fast path gave up. A PostgreSQL error the shared way does not expect is told,
   * with how many groups, at once and then at most once a minute. Other errors (the database out of
   * reach, the store closing) fail the shared way too, and are told there.
   */
  private fellBack(error: unknown): void {
    this.fastPathFallbacks += 1;
    if (expectedFallback(error) || !(error instanceof pg.DatabaseError)) return;
    this.unexpectedFallbacks += 1;
    this.lastUnexpected = error;
    if (this.fallbackTimer) return;
    const tell = () => {
      this.fallbackTimer = undefined;
      if (this.lastUnexpected) this.onFastPathFailure?.(this.lastUnexpected, this.unexpectedFallbacks);
      this.unexpectedFallbacks = 0;
      this.fallbackToldAt = Date.now();
    };
    const wait = this.fallbackToldAt + 60_000 - Date.now();
    if (wait <= 0) tell();
    else this.fallbackTimer = setTimeout(tell, wait).unref();
  }

  protected importMessages(
    tx: Transaction,
    clock: FeedClock,
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome> {
    const client = this.clients.get(tx);
    if (!client) throw new Error('an import runs in a write transaction of this store');
    return importIntoPostgres(client, tx, clock, hubId, batches, now, this.searchIndex);
  }

  private async retryingConflicts<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (!RETRIED_CODES.has((error as { code?: string }).code ?? '') || attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 10));
      }
    }
  }

  private inTransaction<T>(
    work: (client: pg.PoolClient) => Promise<T>,
    begin = 'BEGIN',
    pool = this.pool,
  ): Promise<T> {
    return this.withClient(pool, async (client, drop) => {
      try {
        await client.query(begin);
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(drop);
        throw error;
      }
    });
  }

  /**
   * `work` on a connection of `pool`, given back after. It is dropped, not reused, when it was lost
   * meanwhile or `work` called `drop`.
   */
  private async withClient<T>(
    pool: pg.Pool,
    work: (client: pg.PoolClient, drop: (error: Error) => void) => Promise<T>,
  ): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    // A connection lost between two statements is reported on the client, which the pool only
    // listens to while the client is idle: without this the error would end the process.
    const drop = (error: Error) => {
      broken ??= error;
    };
    client.on('error', drop);
    try {
      return await work(client, drop);
    } finally {
      client.removeListener('error', drop);
      client.release(broken);
    }
  }

  /**
   * Whether `query` is short: bounded, and at most BY_TIME_MAX_ROWS rows (read by time and
   * sorted). Same rows, same order either way; only the cost differs.
   */
  private async isShortRange(client: pg.PoolClient, query: MessageQuery): Promise<boolean> {
    if (!answer.isBounded(query) || this.shortRangeMaxRows < 0) return false;
    const counted = await client.query<{ n: number }>({
      text: COUNT_IN_RANGE_SQL,
      values: [...answer.bounds(query), this.shortRangeMaxRows + 1],
      query_timeout: this.smallQueryTimeoutMs,
    } as pg.QueryConfig);
    return (counted.rows[0]?.n ?? Number.POSITIVE_INFINITY) <= this.shortRangeMaxRows;
  }

  /**
   * `read` on a connection of the streaming pool (the read replica's, when there is one). The
   * connection is dropped, not reused, when `read` failed or called `drop`.
   */
  private async *onStreamConnection<T>(
    read: (client: pg.PoolClient, drop: (error: Error) => void) => AsyncGenerator<T>,
  ): AsyncGenerator<T> {
    const client = await this.streamPool.connect();
    let broken: Error | undefined;
    // As in withClient: a connection lost while the client is checked out must not end the process.
    const onLost = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onLost);
    try {
      yield* read(client, onLost);
    } catch (error) {
      broken ??= error as Error;
      throw error;
    } finally {
      client.removeListener('error', onLost);
      client.release(broken);
    }
  }

  protected streamMessages(query: MessageQuery): AsyncGenerator<MessageRow[]> {
    return this.onStreamConnection(
      async function* (this: PostgresStore, client: pg.PoolClient, drop: (error: Error) => void) {
        const short = await this.isShortRange(client, query);
        const cursor = client.query(
          new Cursor<answer.Tuple>(short ? STREAM_BY_TIME_SQL : STREAM_SQL, answer.bounds(query), {
            rowMode: 'array',
            types,
          }),
        );
        try {
          for (;;) {
            const rows = await cursor.read(answer.BATCH_ROWS);
            if (rows.length > 0) yield rows.map(answer.toRow);
            if (rows.length < answer.BATCH_ROWS) return;
          }
        } finally {
          // A client that went away mid-answer lands here too: the cursor is closed at once.
          await cursor.close().catch(drop);
        }
      }.bind(this),
    );
  }

  protected override answerJson(query: MessageQuery, count?: AnswerCount): AsyncGenerator<Buffer> {
    return this.onStreamConnection(
      async function* (this: PostgresStore, client: pg.PoolClient, drop: (error: Error) => void) {
        const short = await this.isShortRange(client, query);
        let whole = false;
        try {
          yield* answerJson(client, short ? STREAM_BY_TIME_SQL : STREAM_SQL, query, count);
          whole = true;
        } finally {
          // A client that went away mid-answer: a COPY cut off leaves the connection in a state not
          // worth a round trip to learn (a cursor is closed cleanly instead).
          if (!whole) drop(new Error('an answer was left midway'));
        }
      }.bind(this),
    );
  }
}
