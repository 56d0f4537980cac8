/**
 * The shared store for several nodes: PostgreSQL through `pg`. Small queries go through one pool;
 * streaming answers read from a server-side cursor on a connection of their own (from the read
 * replica when one is configured), so a big answer holds bounded memory here and on the database.
 * Concurrent live writes are committed together (group commit), each request in its own savepoint.
 */
import pg from 'pg';
import Cursor from 'pg-cursor';
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
import { LATEST_POSTGRES_VERSION, POSTGRES_MIGRATIONS } from './postgres.migrations.js';

const STREAM_BATCH_ROWS = 512;
const GROUP_COMMITS_IN_FLIGHT = 1;
const NO_LOWER_BOUND = Number.MIN_SAFE_INTEGER;
const NO_UPPER_BOUND = Number.MAX_SAFE_INTEGER;
const INT8_OID = 20;
const ACCOUNT_COLUMNS = 'id, email, password_hash AS "passwordHash", created_at AS "createdAt"';

/** BIGINT columns (epoch ms, ids) as numbers: every value chatlog stores is below 2^53. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * A long range (a whole hub): walk the hub's contacts in first-seen order and, for each, its
 * messages by the (contact, time) index. The nested loop streams from the first row with bounded
 * memory on the database; the incremental sort only orders each contact's rows, already in order.
 */
const STREAM_SQL = `
  SELECT c.id, c.line_id, c.vid, c.name, COALESCE(m.sender, NULLIF(c.name, ''), 'User'),
         m.msg, m.content_type, m.created_at
  FROM contacts AS c
  CROSS JOIN LATERAL (
    SELECT m.sender, m.msg, m.content_type, m.created_at, m.id
    FROM messages AS m
    WHERE m.contact_id = c.id AND m.created_at >= $2 AND m.created_at < $3
  ) AS m
  WHERE c.hub_id = $1
  ORDER BY c.id, m.created_at, m.id`;

/** A short range (one day): read it by the (hub, time) index and sort it. */
const STREAM_BY_TIME_SQL = `
  SELECT c.id, c.line_id, c.vid, c.name, COALESCE(m.sender, NULLIF(c.name, ''), 'User'),
         m.msg, m.content_type, m.created_at
  FROM messages AS m
  JOIN contacts AS c ON c.id = m.contact_id
  WHERE m.hub_id = $1 AND m.created_at >= $2 AND m.created_at < $3
  ORDER BY c.id, m.created_at, m.id`;

const SORT_IN_MEMORY_MAX_ROWS = 20_000;

const COUNT_IN_RANGE_SQL = `
  SELECT COUNT(*)::int AS n FROM (
    SELECT 1 FROM messages WHERE hub_id = $1 AND created_at >= $2 AND created_at < $3 LIMIT $4
  ) AS r`;

type StreamTuple = [number, string, string, string, string, string, string, number];

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
}

interface PendingIngest {
  hubId: string;
  operations: readonly IngestOperation[];
  now: number;
  resolve(outcome: IngestOutcome): void;
  reject(error: unknown): void;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly streamPool: pg.Pool;
  private readonly schema: string | undefined;
  private readonly smallQueryTimeoutMs: number;
  private pendingIngest: PendingIngest[] = [];
  /** Group commits running (measured: a second one in flight does not store more per second). */
  private flushesRunning = 0;
  private closed = false;

  constructor(options: PostgresStoreOptions) {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new Error(`schema "${options.schema}" must be a lower-case SQL identifier`);
    }
    this.schema = options.schema;
    const common = {
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
      statement_timeout: options.statementTimeoutMs ?? 5_000,
      idle_in_transaction_session_timeout: 60_000,
      keepAlive: true,
      application_name: 'chatlog',
      types,
      options: this.schema ? `-c search_path=${this.schema}` : undefined,
    };
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
    this.smallQueryTimeoutMs = (options.statementTimeoutMs ?? 5_000) + 2_000;
    const onError = options.onPoolError ?? (() => undefined);
    this.pool.on('error', onError);
    this.streamPool.on('error', onError);
  }

  async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      // Several nodes may start at once: one migrates, the others wait, then find nothing to do.
      // The lock comes first: two concurrent CREATE SCHEMA IF NOT EXISTS can still collide.
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [
        `chatlog migrate ${this.schema ?? 'public'}`,
      ]);
      try {
        if (this.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
        await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
        const current = await this.schemaVersion(client);
        if (current > LATEST_POSTGRES_VERSION) {
          throw new Error(
            `the database holds schema version ${current}, newer than this chatlog (${LATEST_POSTGRES_VERSION}); upgrade chatlog`,
          );
        }
        for (const migration of POSTGRES_MIGRATIONS) {
          if (migration.version <= current) continue;
          await client.query('BEGIN');
          try {
            await client.query(migration.sql);
            await client.query(
              'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
              [migration.version, migration.name, Date.now()],
            );
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [
          `chatlog migrate ${this.schema ?? 'public'}`,
        ]);
      }
    } finally {
      client.release();
    }
  }

  private async schemaVersion(client: pg.ClientBase | pg.Pool = this.pool): Promise<number> {
    const result = await client.query<{ version: number | null }>(
      'SELECT MAX(version) AS version FROM schema_migrations',
    );
    return result.rows[0]?.version ?? 0;
  }

  async ready(): Promise<boolean> {
    try {
      return (await this.schemaVersion()) === LATEST_POSTGRES_VERSION;
    } catch {
      return false;
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
    ];
  }

  async warmUp(): Promise<void> {
    // A connection in each pool, so that the first answer does not wait for one.
    await Promise.all([this.pool.query('SELECT 1'), this.streamPool.query('SELECT 1')]).catch(
      () => undefined,
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushesRunning > 0 || this.pendingIngest.length > 0)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all([this.pool.end(), this.streamPool.end()]);
  }

  /** Gathers planner statistics now (after a bulk load), rather than when autovacuum gets to it. */
  async analyze(): Promise<void> {
    await this.pool.query('ANALYZE contacts, messages');
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

  private async inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A connection lost between two statements is reported on the client, which the pool only
    // listens to while the client is idle: without this the error would end the process.
    const onLost = (error: Error) => {
      broken = error;
    };
    client.on('error', onLost);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    } finally {
      client.removeListener('error', onLost);
      client.release(broken);
    }
  }

  hubs: Store['hubs'] = {
    get: async (id) => {
      const result = await this.pool.query<HubRow>('SELECT * FROM hubs WHERE id = $1', [id]);
      return result.rows[0] ? toHub(result.rows[0]) : undefined;
    },
    upsert: (id, settings: HubSettings, now) =>
      this.inTransaction(async (client) => {
        const inserted = await client.query(
          `INSERT INTO hubs (id, time_zone, line_channel_secret_encrypted, line_channel_access_token_encrypted, created_at)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
          [
            id,
            settings.timeZone ?? 'UTC',
            settings.lineChannelSecretEncrypted ?? null,
            settings.lineChannelAccessTokenEncrypted ?? null,
            now,
          ],
        );
        const created = inserted.rowCount === 1;
        if (!created) {
          if (settings.timeZone !== undefined) {
            await client.query(
              'UPDATE hubs SET time_zone = $1, data_version = data_version + 1 WHERE id = $2',
              [settings.timeZone, id],
            );
          }
          if (settings.lineChannelSecretEncrypted !== undefined) {
            await client.query('UPDATE hubs SET line_channel_secret_encrypted = $1 WHERE id = $2', [
              settings.lineChannelSecretEncrypted,
              id,
            ]);
          }
          if (settings.lineChannelAccessTokenEncrypted !== undefined) {
            await client.query('UPDATE hubs SET line_channel_access_token_encrypted = $1 WHERE id = $2', [
              settings.lineChannelAccessTokenEncrypted,
              id,
            ]);
          }
        }
        const row = (await client.query<HubRow>('SELECT * FROM hubs WHERE id = $1', [id])).rows[0];
        if (!row) throw new Error(`hub ${id} vanished`);
        return { hub: toHub(row), created };
      }),
  };

  keys: Store['keys'] = {
    insert: async (key) => {
      await this.pool.query(
        `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        keyRowValues(key),
      );
    },
    findByHash: async (keyHash) => {
      const result = await this.pool.query<KeyRow>('SELECT * FROM api_keys WHERE key_hash = $1', [keyHash]);
      return result.rows[0] ? toKey(result.rows[0]) : undefined;
    },
    findById: async (id) => {
      const result = await this.pool.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
      return result.rows[0] ? toKey(result.rows[0]) : undefined;
    },
    listByHub: async (hubId) => {
      const result = await this.pool.query<KeyRow>(
        'SELECT * FROM api_keys WHERE hub_id = $1 ORDER BY created_at, id',
        [hubId],
      );
      return result.rows.map(toKey);
    },
    revoke: async (id, now) => {
      const result = await this.pool.query(
        'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
        [now, id],
      );
      return result.rowCount === 1;
    },
    setRateLimit: async (id, limit: RateLimit | null) => {
      const result = await this.pool.query(
        'UPDATE api_keys SET rate_limit_requests = $1, rate_limit_per_seconds = $2 WHERE id = $3',
        [limit?.requests ?? null, limit?.perSeconds ?? null, id],
      );
      return result.rowCount === 1;
    },
    recordLastUsed: async (uses) => {
      if (uses.size === 0) return;
      await this.pool.query(
        `UPDATE api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, 0), u.at)
         FROM unnest($1::text[], $2::bigint[]) AS u(id, at) WHERE k.id = u.id`,
        [[...uses.keys()], [...uses.values()]],
      );
    },
  };

  contacts: Store['contacts'] = {
    get: async (hubId, lineId) => {
      const result = await this.pool.query<Contact>(
        'SELECT line_id AS "lineId", vid, name FROM contacts WHERE hub_id = $1 AND line_id = $2',
        [hubId, lineId],
      );
      return result.rows[0];
    },
  };

  accounts: Store['accounts'] = {
    upsert: (email, passwordHash, now) =>
      this.inTransaction(async (client) => {
        const inserted = await client.query<AccountRecord>(
          `INSERT INTO accounts (email, password_hash, created_at) VALUES ($1, $2, $3)
           ON CONFLICT (email) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
          [email, passwordHash, now],
        );
        if (inserted.rows[0]) return { account: inserted.rows[0], created: true };
        const updated = await client.query<AccountRecord>(
          `UPDATE accounts SET password_hash = $2 WHERE email = $1 RETURNING ${ACCOUNT_COLUMNS}`,
          [email, passwordHash],
        );
        const account = updated.rows[0];
        if (!account) throw new Error('the account vanished while its password was set');
        return { account, created: false };
      }),
    findByEmail: async (email) =>
      (
        await this.pool.query<AccountRecord>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1`, [
          email,
        ])
      ).rows[0],
    findById: async (id) =>
      (await this.pool.query<AccountRecord>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]))
        .rows[0],
    grantHub: async (accountId, hubId) => {
      await this.pool.query(
        'INSERT INTO account_hubs (account_id, hub_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [accountId, hubId],
      );
    },
    hubsOf: async (accountId) =>
      (
        await this.pool.query<{ hub_id: string }>(
          'SELECT hub_id FROM account_hubs WHERE account_id = $1 ORDER BY length(hub_id), hub_id',
          [accountId],
        )
      ).rows.map((row) => row.hub_id),
  };

  sessions: Store['sessions'] = {
    create: (session, now) =>
      this.inTransaction(async (client) => {
        await client.query('DELETE FROM sessions WHERE expires_at <= $1', [now]);
        await client.query(
          'INSERT INTO sessions (id_hash, account_id, created_at, expires_at) VALUES ($1, $2, $3, $4)',
          [session.idHash, session.accountId, session.createdAt, session.expiresAt],
        );
      }),
    find: async (idHash, now) =>
      (
        await this.pool.query<SessionRecord>(
          `SELECT id_hash AS "idHash", account_id AS "accountId", created_at AS "createdAt", expires_at AS "expiresAt"
           FROM sessions WHERE id_hash = $1 AND expires_at > $2`,
          [idHash, now],
        )
      ).rows[0],
    delete: async (idHash) => {
      await this.pool.query('DELETE FROM sessions WHERE id_hash = $1', [idHash]);
    },
  };

  messages: Store['messages'] = {
    dataVersion: async (hubId) => {
      const result = await this.streamPool.query<{ data_version: number }>({
        text: 'SELECT data_version FROM hubs WHERE id = $1',
        values: [hubId],
        query_timeout: this.smallQueryTimeoutMs,
      } as pg.QueryConfig);
      return result.rows[0]?.data_version ?? 0;
    },
    // MAX over the (hub_id, created_at) index: one index probe, however many messages the hub has.
    latestAt: async (hubId) => {
      const result = await this.streamPool.query<{ latest: number | null }>({
        text: 'SELECT MAX(created_at) AS latest FROM messages WHERE hub_id = $1',
        values: [hubId],
        query_timeout: this.smallQueryTimeoutMs,
      } as pg.QueryConfig);
      return result.rows[0]?.latest ?? undefined;
    },
    stream: (query) => this.streamMessages(query),
    importAll: (hubId, batches, now) => this.importAllNow(hubId, batches, now),
    ingest: (hubId, operations, now) =>
      new Promise<IngestOutcome>((resolve, reject) => {
        if (this.closed) {
          reject(new Error('the store is closed'));
          return;
        }
        this.pendingIngest.push({ hubId, operations, now, resolve, reject });
        if (this.flushesRunning < GROUP_COMMITS_IN_FLIGHT) {
          this.flushesRunning += 1;
          setImmediate(() => void this.flushIngest());
        }
      }),
  };

  private async *streamMessages(query: MessageQuery): AsyncGenerator<MessageRow[]> {
    const client = await this.streamPool.connect();
    let broken: Error | undefined;
    // As in inTransaction: a connection lost while the client is checked out must not end the process.
    const onLost = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onLost);
    const args = [query.hubId, query.fromMs ?? NO_LOWER_BOUND, query.toMsExclusive ?? NO_UPPER_BOUND];
    // Same rows, same order either way; only the cost differs.
    let short = false;
    if (query.fromMs !== undefined || query.toMsExclusive !== undefined) {
      try {
        const counted = await client.query<{ n: number }>({
          text: COUNT_IN_RANGE_SQL,
          values: [...args, SORT_IN_MEMORY_MAX_ROWS + 1],
          query_timeout: this.smallQueryTimeoutMs,
        } as pg.QueryConfig);
        short = (counted.rows[0]?.n ?? Number.POSITIVE_INFINITY) <= SORT_IN_MEMORY_MAX_ROWS;
      } catch (error) {
        client.removeListener('error', onLost);
        client.release(error as Error);
        throw error;
      }
    }
    const cursor = client.query(
      new Cursor<StreamTuple>(short ? STREAM_BY_TIME_SQL : STREAM_SQL, args, { rowMode: 'array', types }),
    );
    try {
      for (;;) {
        const rows = await cursor.read(STREAM_BATCH_ROWS);
        if (rows.length > 0) {
          yield rows.map(([contactId, lineId, vid, name, sender, msg, contentType, createdAt]) => ({
            contactId,
            lineId,
            vid,
            name,
            sender,
            msg,
            contentType,
            createdAt,
          }));
        }
        if (rows.length < STREAM_BATCH_ROWS) return;
      }
    } catch (error) {
      broken = error as Error;
      throw error;
    } finally {
      // A client that went away mid-answer lands here too: the cursor is closed at once.
      await cursor.close().catch((error: Error) => {
        broken ??= error;
      });
      client.removeListener('error', onLost);
      client.release(broken);
    }
  }

  private async importAllNow(
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome> {
    const outcome: ImportOutcome = { received: 0, inserted: 0, duplicates: 0, contactsCreated: 0 };
    return this.inTransaction(async (client) => {
      const hub = await client.query('SELECT id FROM hubs WHERE id = $1', [hubId]);
      if (hub.rowCount !== 1) throw new Error(`hub ${hubId} does not exist`);
      let changed = false;
      for await (const batch of batches) {
        if (batch.length === 0) continue;
        // Contacts in the order this batch first names them; a non-empty vid or name updates.
        const latest = new Map<string, { vid: string; name: string }>();
        for (const m of batch) {
          const seen = latest.get(m.lineId) ?? { vid: '', name: '' };
          latest.set(m.lineId, {
            vid: m.vid !== '' ? m.vid : seen.vid,
            name: m.name !== '' ? m.name : seen.name,
          });
        }
        const lineIds = [...latest.keys()];
        const created = await client.query(
          `INSERT INTO contacts (hub_id, line_id, vid, name, created_at)
           SELECT $1, l, v, n, $5 FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(l, v, n, o)
           ORDER BY o
           ON CONFLICT (hub_id, line_id) DO NOTHING`,
          [
            hubId,
            lineIds,
            lineIds.map((l) => latest.get(l)?.vid ?? ''),
            lineIds.map((l) => latest.get(l)?.name ?? ''),
            now,
          ],
        );
        outcome.contactsCreated += created.rowCount ?? 0;
        const updated = await client.query(
          `UPDATE contacts AS c
           SET vid = CASE WHEN u.v <> '' THEN u.v ELSE c.vid END, name = CASE WHEN u.n <> '' THEN u.n ELSE c.name END
           FROM unnest($2::text[], $3::text[], $4::text[]) AS u(l, v, n)
           WHERE c.hub_id = $1 AND c.line_id = u.l
             AND (CASE WHEN u.v <> '' THEN u.v ELSE c.vid END, CASE WHEN u.n <> '' THEN u.n ELSE c.name END)
                 IS DISTINCT FROM (c.vid, c.name)`,
          [
            hubId,
            lineIds,
            lineIds.map((l) => latest.get(l)?.vid ?? ''),
            lineIds.map((l) => latest.get(l)?.name ?? ''),
          ],
        );
        const ids = await client.query<{ id: number; line_id: string }>(
          'SELECT id, line_id FROM contacts WHERE hub_id = $1 AND line_id = ANY($2::text[])',
          [hubId, lineIds],
        );
        const idOf = new Map(ids.rows.map((row) => [row.line_id, row.id]));
        const inserted = await client.query(
          `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id)
           SELECT $1, c, t, s, m, ct, sid
           FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
             WITH ORDINALITY AS x(c, t, s, m, ct, sid, o)
           ORDER BY o
           ON CONFLICT (hub_id, source_id) DO NOTHING`,
          [
            hubId,
            batch.map((m) => idOf.get(m.lineId)),
            batch.map((m) => m.createdAt),
            batch.map((m) => m.sender),
            batch.map((m) => m.msg),
            batch.map((m) => m.contentType),
            batch.map((m) => m.sourceId),
          ],
        );
        outcome.received += batch.length;
        outcome.inserted += inserted.rowCount ?? 0;
        outcome.duplicates += batch.length - (inserted.rowCount ?? 0);
        if ((inserted.rowCount ?? 0) > 0 || (created.rowCount ?? 0) > 0 || (updated.rowCount ?? 0) > 0)
          changed = true;
      }
      if (changed)
        await client.query('UPDATE hubs SET data_version = data_version + 1 WHERE id = $1', [hubId]);
      return outcome;
    });
  }

  /**
   * Group commit: every request waiting now is stored together. Messages only (the common case):
   * one statement, its own transaction, one round trip. Anything else, or a group whose statement
   * fails (a hub that does not exist, say), goes into one transaction with a savepoint per request,
   * so that one bad request fails alone.
   */
  private async flushIngest(): Promise<void> {
    while (this.pendingIngest.length > 0) {
      const group = this.pendingIngest;
      this.pendingIngest = [];
      let outcomes: Array<IngestOutcome | { failed: unknown }> = [];
      try {
        if (group.every((item) => item.operations.every((op) => op.kind === 'message'))) {
          outcomes = await this.withRetryOnConflict(() => this.storeMessagesInOneStatement(group)).catch(
            () => [],
          );
        }
        if (outcomes.length === 0) {
          await this.withRetryOnConflict(() => {
            outcomes = [];
            return this.inTransaction(async (client) => {
              const changedHubs = new Set<string>();
              for (const item of group) {
                await client.query('SAVEPOINT request');
                try {
                  outcomes.push(await this.applyIngest(client, item.hubId, item.operations, item.now));
                  await client.query('RELEASE SAVEPOINT request');
                  changedHubs.add(item.hubId);
                } catch (error) {
                  await client.query('ROLLBACK TO SAVEPOINT request');
                  await client.query('RELEASE SAVEPOINT request');
                  outcomes.push({ failed: error });
                }
              }
              for (const hubId of [...changedHubs].sort()) {
                await client.query('UPDATE hubs SET data_version = data_version + 1 WHERE id = $1', [hubId]);
              }
            });
          });
        }
      } catch (error) {
        for (const item of group) item.reject(error);
        continue;
      }
      group.forEach((item, i) => {
        const outcome = outcomes[i];
        if (outcome && 'failed' in outcome) item.reject(outcome.failed);
        else if (outcome) item.resolve(outcome);
      });
    }
    this.flushesRunning -= 1;
  }

  /**
   * The messages of every request of a group in one statement (atomic and durable on its own):
   * new contacts created in the order the group first names them (existing ones are only read, not
   * locked), messages inserted unless unsent or already stored, the hubs' change counters bumped.
   * Returns what was created, to credit each request.
   */
  private async storeMessagesInOneStatement(group: PendingIngest[]): Promise<IngestOutcome[]> {
    type MessageOp = Extract<IngestOperation, { kind: 'message' }>;
    const all = group.flatMap((item) => item.operations.map((op) => ({ item, op: op as MessageOp })));
    const result = await this.pool.query<{ kind: 'c' | 'm' | 'h'; hub_id: string; ref: string }>(
      `WITH x AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[],
                              $7::text[], $8::text[], $9::text[], $10::bigint[])
           WITH ORDINALITY AS x(h, l, t, s, m, ct, sid, sk, sc, now, o)),
       wanted AS (SELECT DISTINCT ON (h, l) h, l, now, o FROM x ORDER BY h, l, o),
       created AS (
         INSERT INTO contacts (hub_id, line_id, created_at)
         SELECT h, l, now FROM wanted ORDER BY o
         ON CONFLICT (hub_id, line_id) DO NOTHING
         RETURNING id, hub_id, line_id),
       contact AS (
         SELECT id, hub_id, line_id FROM created
         UNION ALL
         SELECT c.id, c.hub_id, c.line_id FROM contacts AS c JOIN wanted ON c.hub_id = wanted.h AND c.line_id = wanted.l),
       -- A contact another node created a moment ago is in neither: its NULL id fails the whole
       -- statement (NOT NULL), and the group is stored again request by request.
       message AS (
         INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id,
                               source_kind, source_chat_id)
         SELECT x.h, contact.id, x.t, x.s, x.m, x.ct, x.sid, x.sk, x.sc
         FROM x LEFT JOIN contact ON contact.hub_id = x.h AND contact.line_id = x.l
         WHERE NOT EXISTS (SELECT 1 FROM unsent_messages AS u WHERE u.hub_id = x.h AND u.source_id = x.sid)
         ORDER BY x.o
         ON CONFLICT (hub_id, source_id) DO NOTHING
         RETURNING hub_id, source_id),
       bumped AS (
         UPDATE hubs SET data_version = data_version + 1 WHERE id IN (SELECT DISTINCT h FROM x)
         RETURNING id)
       SELECT 'c' AS kind, hub_id, line_id AS ref FROM created
       UNION ALL SELECT 'm', hub_id, source_id FROM message
       UNION ALL SELECT 'h', id, '' FROM bumped`,
      [
        all.map(({ item }) => item.hubId),
        all.map(({ op }) => op.lineId),
        all.map(({ op }) => op.createdAt),
        all.map(({ op }) => op.sender),
        all.map(({ op }) => op.msg),
        all.map(({ op }) => op.contentType),
        all.map(({ op }) => op.sourceId),
        all.map(({ op }) => op.sourceKind),
        all.map(({ op }) => op.sourceChatId),
        all.map(({ item }) => item.now),
      ],
    );
    const createdContacts = new Set<string>();
    const newRows = new Set<string>();
    for (const row of result.rows) {
      if (row.kind === 'c') createdContacts.add(`${row.hub_id}\u0000${row.ref}`);
      else if (row.kind === 'm') newRows.add(`${row.hub_id}\u0000${row.ref}`);
    }
    // Credit each new row, and each new contact, to the first request that brought it.
    return group.map((item) => {
      const outcome: IngestOutcome = { stored: 0, duplicates: 0, removed: 0, contactsCreated: [] };
      for (const op of item.operations as MessageOp[]) {
        if (newRows.delete(`${item.hubId}\u0000${op.sourceId}`)) outcome.stored += 1;
        else outcome.duplicates += 1;
        if (createdContacts.delete(`${item.hubId}\u0000${op.lineId}`))
          outcome.contactsCreated.push(op.lineId);
      }
      return outcome;
    });
  }

  /** Two nodes writing the same contacts in opposite orders may deadlock: PostgreSQL aborts one; retry it. */
  private async withRetryOnConflict<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if ((code !== '40P01' && code !== '40001') || attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 10));
      }
    }
  }

  private async applyIngest(
    client: pg.PoolClient,
    hubId: string,
    operations: readonly IngestOperation[],
    now: number,
  ): Promise<IngestOutcome> {
    const outcome: IngestOutcome = { stored: 0, duplicates: 0, removed: 0, contactsCreated: [] };
    const ids = new Map<string, number>();
    const contactId = async (lineId: string): Promise<number> => {
      const known = ids.get(lineId);
      if (known !== undefined) return known;
      const inserted = await client.query<{ id: number }>(
        `INSERT INTO contacts (hub_id, line_id, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (hub_id, line_id) DO NOTHING RETURNING id`,
        [hubId, lineId, now],
      );
      let id = inserted.rows[0]?.id;
      if (id === undefined) {
        const existing = await client.query<{ id: number }>(
          'SELECT id FROM contacts WHERE hub_id = $1 AND line_id = $2',
          [hubId, lineId],
        );
        id = existing.rows[0]?.id;
        if (id === undefined) throw new Error(`contact ${lineId} vanished`);
      } else {
        outcome.contactsCreated.push(lineId);
      }
      ids.set(lineId, id);
      return id;
    };
    for (const op of operations) {
      switch (op.kind) {
        case 'message': {
          const unsent = await client.query(
            'SELECT 1 FROM unsent_messages WHERE hub_id = $1 AND source_id = $2',
            [hubId, op.sourceId],
          );
          if (unsent.rowCount) {
            outcome.duplicates += 1;
            break;
          }
          const result = await client.query(
            `INSERT INTO messages (hub_id, contact_id, created_at, sender, msg, content_type, source_id,
               source_kind, source_chat_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (hub_id, source_id) DO NOTHING`,
            [
              hubId,
              await contactId(op.lineId),
              op.createdAt,
              op.sender,
              op.msg,
              op.contentType,
              op.sourceId,
              op.sourceKind,
              op.sourceChatId,
            ],
          );
          if (result.rowCount) outcome.stored += 1;
          else outcome.duplicates += 1;
          break;
        }
        case 'follow':
          await client.query('UPDATE contacts SET followed_at = $1, unfollowed_at = NULL WHERE id = $2', [
            op.at,
            await contactId(op.lineId),
          ]);
          break;
        case 'unfollow':
          await client.query('UPDATE contacts SET unfollowed_at = $1 WHERE id = $2', [
            op.at,
            await contactId(op.lineId),
          ]);
          break;
        case 'unsend': {
          const removed = await client.query('DELETE FROM messages WHERE hub_id = $1 AND source_id = $2', [
            hubId,
            op.sourceId,
          ]);
          outcome.removed += removed.rowCount ?? 0;
          await client.query(
            'INSERT INTO unsent_messages (hub_id, source_id, unsent_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
            [hubId, op.sourceId, op.at],
          );
          break;
        }
        case 'contact': {
          const id = await contactId(op.lineId);
          if (op.vid !== undefined)
            await client.query('UPDATE contacts SET vid = $1 WHERE id = $2', [op.vid, id]);
          if (op.name !== undefined) {
            await client.query(
              op.onlyIfNameEmpty
                ? "UPDATE contacts SET name = $1 WHERE id = $2 AND name = ''"
                : 'UPDATE contacts SET name = $1 WHERE id = $2',
              [op.name, id],
            );
          }
          break;
        }
      }
    }
    return outcome;
  }
}
