/**
 * The versioned schema, written once for both engines, and the one function that brings a store
 * up to date. A released migration is never edited: add a new one.
 *
 * The engines differ only in type names and table options, which each engine gives as DdlTypes.
 *
 * Kept whole: the migrations are one ordered list, read top to bottom as the schema's history.
 */
import type { Sql, Transaction } from './executor.js';
import { fillSearchIndex, type SearchEngine } from './search.js';

export interface DdlTypes {
  /** A 64-bit integer: epoch ms, ids, counters. */
  int64: string;
  bytes: string;
  /** A 64-bit integer primary key that numbers rows in insertion order. */
  serialKey: string;
  /** After a table's closing parenthesis. */
  table: string;
  /** After the closing parenthesis of a table keyed by its primary key alone. */
  keyedTable: string;
  /** A condition true when the text `expr` is a message id: 1 to 64 of `[A-Za-z0-9_-]`. */
  isMessageId(expr: string): string;
  /** A condition true when the text `expr` is `m` and digits (the ids migration 5 assigns). */
  isRowIdForm(expr: string): string;
  /** Statements that let api_keys.scope take `admin` (SQLite rebuilds the table; PostgreSQL swaps the check). */
  allowAdminScope: string;
  /** The same for `send` (migration 18). */
  allowSendScope: string;
  /** The engine's search index (./search.ts). */
  search: SearchEngine;
}

export interface Migration {
  version: number;
  name: string;
  sql(t: DdlTypes): string;
  /** Work the SQL alone cannot do (computing index tokens in JS), run after it in the same transaction. */
  fill?(tx: Transaction, t: DdlTypes): Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'hubs, contacts, messages, api keys',
    sql: (t) => `
      CREATE TABLE hubs (
        id TEXT PRIMARY KEY,
        time_zone TEXT NOT NULL DEFAULT 'UTC',
        line_channel_secret_encrypted ${t.bytes},
        data_version ${t.int64} NOT NULL DEFAULT 0,
        created_at ${t.int64} NOT NULL
      )${t.table};

      -- id grows with every new contact, so it is the order in which the hub first saw them.
      CREATE TABLE contacts (
        id ${t.serialKey},
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        line_id TEXT NOT NULL,
        vid TEXT NOT NULL DEFAULT '',
        name TEXT NOT NULL DEFAULT '',
        created_at ${t.int64} NOT NULL,
        UNIQUE (hub_id, line_id)
      )${t.table};
      CREATE INDEX contacts_by_hub_in_first_seen_order ON contacts(hub_id, id);

      -- id is the arrival sequence; sender NULL means "the friend" (rendered with the contact's name).
      CREATE TABLE messages (
        id ${t.serialKey},
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        contact_id ${t.int64} NOT NULL REFERENCES contacts(id),
        created_at ${t.int64} NOT NULL,
        sender TEXT,
        msg TEXT NOT NULL,
        content_type TEXT NOT NULL,
        source_id TEXT NOT NULL,
        UNIQUE (hub_id, source_id)
      )${t.table};
      -- Answers "one hub, one time range, in answer order" by walking contacts in first-seen
      -- order and seeking each contact's range: no sort, no temporary b-tree.
      CREATE INDEX messages_by_contact_and_time ON messages(contact_id, created_at, id);

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        scope TEXT NOT NULL CHECK (scope IN ('read', 'ingest')),
        label TEXT NOT NULL DEFAULT '',
        key_hash ${t.bytes} NOT NULL UNIQUE,
        key_encrypted ${t.bytes} NOT NULL,
        key_start TEXT NOT NULL,
        created_at ${t.int64} NOT NULL,
        last_used_at ${t.int64},
        revoked_at ${t.int64},
        rate_limit_requests INTEGER,
        rate_limit_per_seconds INTEGER
      )${t.table};
      CREATE INDEX api_keys_by_hub ON api_keys(hub_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'LINE webhooks: source of messages, unsent messages, follow state, channel access token',
    sql: (t) => `
      ALTER TABLE hubs ADD COLUMN line_channel_access_token_encrypted ${t.bytes};
      ALTER TABLE contacts ADD COLUMN followed_at ${t.int64};
      ALTER TABLE contacts ADD COLUMN unfollowed_at ${t.int64};
      -- Where a LINE message was said: 'user' (one-to-one), 'group' or 'room', and that chat's id.
      ALTER TABLE messages ADD COLUMN source_kind TEXT;
      ALTER TABLE messages ADD COLUMN source_chat_id TEXT;
      -- Messages the friend took back (LINE's unsend): never stored again, even when redelivered.
      CREATE TABLE unsent_messages (
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        source_id TEXT NOT NULL,
        unsent_at ${t.int64} NOT NULL,
        PRIMARY KEY (hub_id, source_id)
      )${t.keyedTable};
    `,
  },
  {
    version: 3,
    name: 'time index for short ranges',
    sql: () => `
      -- One day of a hub with many contacts: read the range by time and sort it in memory,
      -- instead of visiting every contact of the hub.
      CREATE INDEX messages_by_hub_and_time ON messages(hub_id, created_at, id);
    `,
  },
  {
    version: 4,
    name: 'account screen: accounts, their hubs, sessions',
    sql: (t) => `
      CREATE TABLE accounts (
        id ${t.serialKey},
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        created_at ${t.int64} NOT NULL
      )${t.table};
      CREATE TABLE account_hubs (
        account_id ${t.int64} NOT NULL REFERENCES accounts(id),
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        PRIMARY KEY (account_id, hub_id)
      )${t.keyedTable};
      -- The hash of the session id, never the id the browser holds.
      CREATE TABLE sessions (
        id_hash ${t.bytes} PRIMARY KEY,
        account_id ${t.int64} NOT NULL REFERENCES accounts(id),
        created_at ${t.int64} NOT NULL,
        expires_at ${t.int64} NOT NULL
      )${t.keyedTable};
      CREATE INDEX sessions_by_expiry ON sessions(expires_at);
    `,
  },
  {
    version: 5,
    name: 'change feed: per-hub sequence, message ids, changes, admin keys, outgoing webhooks',
    sql: (t) => `
      -- The hub's feed position: the seq of its newest change. A write locks its hubs' rows first
      -- and numbers its changes after this, so seq order is commit order on every engine.
      ALTER TABLE hubs ADD COLUMN last_seq ${t.int64} NOT NULL DEFAULT 0;
      -- Deletion and contact changes up to this seq were dropped (CHATLOG_CHANGES_KEEP_DAYS): a
      -- cursor before it has missed some (410 cursor_expired).
      ALTER TABLE hubs ADD COLUMN changes_dropped_through ${t.int64} NOT NULL DEFAULT 0;

      -- A stored message is its own message.created change: seq and the commit time (at) live on
      -- its row, so that change disappears with the message (unsend, erasure, retention).
      ALTER TABLE messages ADD COLUMN seq ${t.int64} NOT NULL DEFAULT 0;
      ALTER TABLE messages ADD COLUMN changed_at ${t.int64} NOT NULL DEFAULT 0;
      -- The message id of CONTRACT part two (1-64 of [A-Za-z0-9_-], unique in the hub).
      ALTER TABLE messages ADD COLUMN public_id TEXT;
      -- LINE's own {"source", "message"} of a webhook message, as JSON.
      ALTER TABLE messages ADD COLUMN line_json TEXT;
      -- Messages stored before the feed existed: numbered in arrival order; LINE's id, or the
      -- ingest id when it is a message id no LINE message of the hub has, else m<row id>
      -- (ingest ids of that form are left to the last rule, so no two messages share an id).
      UPDATE messages SET seq = id, changed_at = created_at, public_id = CASE
        WHEN source_id LIKE 'line:%' AND ${t.isMessageId('substr(source_id, 6)')} THEN substr(source_id, 6)
        WHEN source_id LIKE 'ingest:%' AND ${t.isMessageId('substr(source_id, 8)')}
          AND NOT ${t.isRowIdForm('substr(source_id, 8)')}
          AND NOT EXISTS (SELECT 1 FROM messages AS o
                          WHERE o.hub_id = messages.hub_id AND o.source_id = 'line:' || substr(messages.source_id, 8))
          THEN substr(source_id, 8)
        ELSE 'm' || id END;
      UPDATE hubs SET last_seq = COALESCE((SELECT MAX(seq) FROM messages WHERE hub_id = hubs.id), 0);
      CREATE UNIQUE INDEX messages_by_public_id ON messages(hub_id, public_id);
      CREATE INDEX messages_in_feed_order ON messages(hub_id, seq);

      -- The feed's other changes: message.deleted, contact.updated (named by contact_id, so the
      -- contact's erasure hides them), contact.erased (line_id), retention.applied (before).
      CREATE TABLE changes (
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        seq ${t.int64} NOT NULL,
        type TEXT NOT NULL,
        at ${t.int64} NOT NULL,
        contact_id ${t.int64},
        line_id TEXT,
        message_id TEXT,
        reason TEXT,
        before_at ${t.int64},
        PRIMARY KEY (hub_id, seq)
      )${t.keyedTable};
      CREATE INDEX changes_by_time ON changes(at);

      ${t.allowAdminScope}

      -- Outgoing webhooks (CONTRACT §10). An endpoint follows its hub's feed from the seq it was
      -- added at; each change it wants becomes a delivery, tried on its own schedule.
      CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        url TEXT NOT NULL,
        -- JSON array of change types; NULL: every type.
        events TEXT,
        secret_encrypted ${t.bytes} NOT NULL,
        created_at ${t.int64} NOT NULL,
        -- The seq up to which the hub's changes have become deliveries.
        dispatched_through ${t.int64} NOT NULL,
        -- A node that is turning changes into deliveries holds this lease.
        dispatch_lease_until ${t.int64} NOT NULL DEFAULT 0,
        disabled_at ${t.int64},
        disabled_reason TEXT,
        removed_at ${t.int64}
      )${t.table};
      CREATE INDEX webhook_endpoints_by_hub ON webhook_endpoints(hub_id, created_at);

      CREATE TABLE webhook_deliveries (
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
        seq ${t.int64} NOT NULL,
        type TEXT NOT NULL,
        -- pending, delivered, failed (every attempt used), skipped (the change was deleted first).
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at ${t.int64} NOT NULL,
        leased_until ${t.int64} NOT NULL DEFAULT 0,
        last_status INTEGER,
        last_error TEXT,
        created_at ${t.int64} NOT NULL,
        updated_at ${t.int64} NOT NULL,
        PRIMARY KEY (endpoint_id, seq)
      )${t.keyedTable};
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';
      CREATE INDEX webhook_deliveries_recent ON webhook_deliveries(endpoint_id, updated_at);
    `,
  },
  {
    version: 6,
    name: 'answer versions that a new message does not change for earlier days',
    sql: (t) => `
      -- The answer cache and ETags (CONTRACT §3): a message that comes after every other (the common
      -- case: LINE webhooks) changes only answers whose range reaches its time. history_version
      -- counts every other change (a deletion, a contact's new name, a message older than the newest,
      -- an import, a new time zone); append_floor is the oldest createdAt of the messages appended
      -- since (NULL: none), moved up (append_epoch counting the moves) once the newest is a day past
      -- it, so that ranges keep becoming stable; max_created_at is the newest createdAt of the hub.
      ALTER TABLE hubs ADD COLUMN history_version ${t.int64} NOT NULL DEFAULT 0;
      ALTER TABLE hubs ADD COLUMN append_floor ${t.int64};
      ALTER TABLE hubs ADD COLUMN append_epoch ${t.int64} NOT NULL DEFAULT 0;
      ALTER TABLE hubs ADD COLUMN max_created_at ${t.int64};
      UPDATE hubs SET max_created_at = (SELECT MAX(created_at) FROM messages WHERE hub_id = hubs.id);

      -- The ids of messages that are gone (unsent; later erased or past retention): never given
      -- to another message (CONTRACT part two: ids are never reused).
      CREATE TABLE retired_message_ids (
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        public_id TEXT NOT NULL,
        PRIMARY KEY (hub_id, public_id)
      )${t.keyedTable};
    `,
  },
  {
    version: 7,
    name: 'outbox: deliveries found by their key alone',
    sql: () => `
      -- PostgreSQL chose this index over the primary key to find one delivery once the table had
      -- statistics, reading every delivery of the endpoint; recent deliveries are listed by seq.
      DROP INDEX webhook_deliveries_recent;
    `,
  },
  {
    version: 8,
    name: 'media kept: downloads queued with their message, content kept by SHA-256',
    sql: (t) => `
      -- One row per message whose content chatlog keeps (CONTRACT §11), written in the transaction
      -- that stores the message: the durable download queue, then where its bytes are.
      CREATE TABLE content_items (
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        message_id TEXT NOT NULL,
        line_message_id TEXT NOT NULL,
        -- image, video, audio or file.
        kind TEXT NOT NULL,
        file_name TEXT,
        -- pending (to download), done, gone (LINE no longer has it), failed (every attempt used).
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at ${t.int64} NOT NULL,
        leased_until ${t.int64} NOT NULL DEFAULT 0,
        last_error TEXT,
        sha256 TEXT,
        media_type TEXT,
        size ${t.int64},
        created_at ${t.int64} NOT NULL,
        updated_at ${t.int64} NOT NULL,
        PRIMARY KEY (hub_id, message_id)
      )${t.keyedTable};
      CREATE INDEX content_items_due ON content_items(next_attempt_at) WHERE state = 'pending';
      CREATE INDEX content_items_by_blob ON content_items(hub_id, sha256) WHERE sha256 IS NOT NULL;
      -- Blobs that the last message holding them left (unsend, erasure, retention), written in that
      -- transaction: the content worker deletes the bytes, unless a message holds them again.
      CREATE TABLE content_releases (
        hub_id TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        released_at ${t.int64} NOT NULL,
        PRIMARY KEY (hub_id, sha256)
      )${t.keyedTable};

      -- The bytes, when they are kept in the database (CHATLOG_CONTENT_STORE=postgres): a blob is
      -- its chunks, in order; its row is written last, in the transaction that wrote the chunks.
      CREATE TABLE content_blobs (
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        sha256 TEXT NOT NULL,
        size ${t.int64} NOT NULL,
        chunk_size INTEGER NOT NULL,
        created_at ${t.int64} NOT NULL,
        PRIMARY KEY (hub_id, sha256)
      )${t.keyedTable};
      CREATE TABLE content_chunks (
        hub_id TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        n INTEGER NOT NULL,
        bytes ${t.bytes} NOT NULL,
        PRIMARY KEY (hub_id, sha256, n)
      )${t.keyedTable};
    `,
  },
  {
    version: 9,
    name: 'search index: unigrams and bigrams of each message',
    // The tokens are made in JS (./search.ts), so existing messages are indexed by fill().
    sql: (t) => t.search.ddl,
    fill: (tx, t) => fillSearchIndex(tx, t.search),
  },
  {
    version: 10,
    name: 'media downloads: the leased items of a hub counted by an index',
    sql: () => `
      -- A lease counts the hub's downloads under way; through the primary key that read every item
      -- the hub ever had (600 ms a lease with 50,000 kept, on SQLite, on the event loop).
      CREATE INDEX content_items_leased ON content_items(hub_id, leased_until) WHERE state = 'pending';
    `,
  },
  {
    version: 11,
    name: 'retention: days kept per hub, and its runs leased one node at a time',
    sql: (t) => `
      -- 0 keeps everything. A run is due at retention_due_at; a node runs it while it holds the
      -- lease (retention_leased_until), so each run is made by one node, and one that died is
      -- taken over once its lease has passed.
      ALTER TABLE hubs ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE hubs ADD COLUMN retention_due_at ${t.int64} NOT NULL DEFAULT 0;
      ALTER TABLE hubs ADD COLUMN retention_leased_until ${t.int64} NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 12,
    name: 'audit: every authorised API request, by hub and time',
    sql: (t) => `
      -- Written in batches off the request path; never a key, only its id. No foreign key: a
      -- record outlives its key's revocation, and is kept CHATLOG_AUDIT_KEEP_DAYS.
      CREATE TABLE audit_log (
        id ${t.serialKey},
        at ${t.int64} NOT NULL,
        hub_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        query TEXT NOT NULL,
        status INTEGER NOT NULL,
        messages INTEGER,
        bytes ${t.int64},
        client TEXT NOT NULL
      )${t.table};
      CREATE INDEX audit_by_hub_and_time ON audit_log(hub_id, at, id);
      CREATE INDEX audit_by_time ON audit_log(at);
    `,
  },
  {
    version: 13,
    name: 'outbox: the due deliveries of one endpoint found without reading the others',
    sql: () => `
      -- A lease reads one endpoint's pending deliveries, soonest due first. Through the due index
      -- it read every endpoint's (a removed endpoint's backlog included) and filtered: 20 ms a
      -- lease behind 30,000 others on PostgreSQL.
      CREATE INDEX webhook_deliveries_due_by_endpoint
        ON webhook_deliveries(endpoint_id, next_attempt_at, seq) WHERE state = 'pending';
    `,
  },
  {
    version: 14,
    name: 'search index: no rewrite of the index inside a deletion',
    // SQLite: a retention batch that crossed FTS5's deletemerge threshold rewrote most of the
    // index in its transaction (up to 4 s with 1M messages, webhooks waiting behind it); the
    // store now rewrites it in bounded steps after an erasure or a retention run.
    sql: (t) => t.search.settings,
  },
  {
    version: 15,
    name: "outbox: a lease reads only its endpoint's deliveries, whatever the statistics say",
    sql: () => `
      -- No query reads the due deliveries of every endpoint any more (version 13). With the
      -- planner's statistics taken before a new endpoint had deliveries (one row expected), a
      -- lease still went through this index: every endpoint's pending deliveries read and sorted,
      -- 11-16 ms a lease behind 17,000 of its own on PostgreSQL.
      DROP INDEX webhook_deliveries_due;
    `,
  },
  {
    version: 16,
    name: 'search index: made again with bigram tokens of 5 characters',
    // The tokens changed (./search.ts): fewer and shorter, they cost an import or a webhook less
    // and take less room. Every message is indexed again, with progress on stderr.
    sql: (t) => t.search.rebuild.empty,
    fill: async (tx, t) => {
      await fillSearchIndex(tx, t.search);
      await tx.exec(t.search.rebuild.filled);
    },
  },
  {
    version: 17,
    name: 'search index: new messages queued in their transaction, indexed in batches after it',
    // A webhook's message was indexed in its request's transaction: a few messages a commit made
    // FTS5 write a segment and merge each time (about 50 µs a message). Queued, they are indexed
    // hundreds at a time; search reads the queue's messages as candidates meanwhile (./search.ts).
    sql: (t) => t.search.pendingDdl,
  },
  {
    version: 18,
    name: 'sends: replies to LINE friends, queued durably and pushed to LINE once (CONTRACT §16)',
    // `seq` orders a contact's sends as they were accepted; `id` is the public one. A send is leased
    // (leased_until) by the node that pushes it; its retry key stays the same for every attempt.
    sql: (t) => `
      ${t.allowSendScope}
      CREATE TABLE sends (
        seq ${t.serialKey},
        id TEXT NOT NULL UNIQUE,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        line_id TEXT NOT NULL,
        messages TEXT NOT NULL,
        retry_key TEXT NOT NULL,
        idempotency_key TEXT,
        state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at ${t.int64} NOT NULL,
        leased_until ${t.int64} NOT NULL DEFAULT 0,
        last_error TEXT,
        message_ids TEXT,
        created_at ${t.int64} NOT NULL,
        updated_at ${t.int64} NOT NULL
      )${t.table};
      CREATE UNIQUE INDEX sends_by_idempotency_key ON sends(hub_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE INDEX sends_pending_by_contact ON sends(hub_id, line_id, seq) WHERE state = 'pending';
      CREATE INDEX sends_due ON sends(next_attempt_at) WHERE state = 'pending';`,
  },
  {
    version: 19,
    name: "sends: each contact's queue head marked, and found by hub and time for retention",
    // A lease looked for due sends that no earlier pending send of their contact held back: with a
    // deep queue for a few contacts (2,000 sends to 20 friends), every lease went through all of
    // them. `head` marks each contact's oldest pending send, so a lease reads only heads.
    sql: () => `
      ALTER TABLE sends ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
      UPDATE sends SET head = 1 WHERE state = 'pending' AND NOT EXISTS (
        SELECT 1 FROM sends AS e WHERE e.hub_id = sends.hub_id AND e.line_id = sends.line_id
          AND e.state = 'pending' AND e.seq < sends.seq);
      CREATE INDEX sends_heads_due ON sends(next_attempt_at, seq) WHERE state = 'pending' AND head = 1;
      CREATE INDEX sends_by_hub_and_time ON sends(hub_id, created_at);`,
  },
  {
    version: 20,
    name: 'HubSpot inbox: the custom channel, and each hub connected to an inbox (CONTRACT §18)',
    // A connection follows its hub's feed as an outgoing webhook endpoint does: `published_through`
    // is the seq up to which messages were published, moved after each publish HubSpot answered
    // (a crash between the two sends that one message again, the only repeat §18 allows). One node
    // publishes a hub at a time (leased_until), in feed order, so a contact's messages keep theirs.
    sql: (t) => `
      CREATE TABLE hubspot_settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      )${t.keyedTable};
      CREATE TABLE hubspot_connections (
        hub_id TEXT PRIMARY KEY REFERENCES hubs(id),
        portal_id TEXT NOT NULL,
        access_token_encrypted ${t.bytes} NOT NULL,
        refresh_token_encrypted ${t.bytes} NOT NULL,
        token_expires_at ${t.int64} NOT NULL,
        inbox_id TEXT NOT NULL,
        inbox_name TEXT NOT NULL,
        channel_account_id TEXT NOT NULL,
        connected_at ${t.int64} NOT NULL,
        disconnected_at ${t.int64},
        published_through ${t.int64} NOT NULL,
        published ${t.int64} NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at ${t.int64} NOT NULL DEFAULT 0,
        leased_until ${t.int64} NOT NULL DEFAULT 0,
        last_error TEXT,
        last_error_at ${t.int64},
        -- The feed's end when the hub connected: what chatlog hubspot backfill may publish is at or
        -- before it. A backfill publishes the messages created in [backfill_from, backfill_to)
        -- (backfill_to NULL: no end), going through the feed up to connected_seq (backfill_through).
        connected_seq ${t.int64} NOT NULL DEFAULT 0,
        backfill_from ${t.int64},
        backfill_to ${t.int64},
        backfill_through ${t.int64} NOT NULL DEFAULT 0,
        backfill_total ${t.int64} NOT NULL DEFAULT 0,
        backfill_published ${t.int64} NOT NULL DEFAULT 0
      )${t.keyedTable};
      -- An owner on HubSpot's authorize page: the state given there (as its hash), for one use and
      -- ten minutes; after the code's exchange, the tokens wait here while the owner picks an inbox.
      CREATE TABLE hubspot_oauth_states (
        state_hash TEXT PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        account_id ${t.int64} NOT NULL,
        expires_at ${t.int64} NOT NULL,
        used INTEGER NOT NULL DEFAULT 0,
        portal_id TEXT,
        access_token_encrypted ${t.bytes},
        refresh_token_encrypted ${t.bytes},
        token_expires_at ${t.int64}
      )${t.keyedTable};
      -- A send an agent wrote in HubSpot: its HubSpot message, whose status is set once the send
      -- ends (hubspot_reported), and whose stored messages are not published back.
      ALTER TABLE sends ADD COLUMN hubspot_message_id TEXT;
      ALTER TABLE sends ADD COLUMN hubspot_reported INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX sends_from_hubspot ON sends(hub_id, updated_at) WHERE hubspot_message_id IS NOT NULL;`,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

export async function schemaVersion(sql: Sql): Promise<number> {
  const row = await sql.get<{ version: number | null }>(
    'SELECT MAX(version) AS version FROM schema_migrations',
  );
  return row?.version ?? 0;
}

/**
 * Applies every migration the store lacks, in one transaction (the caller's, which holds the
 * engine's write lock). `holder` names the store in the error a newer schema gets.
 */
export async function migrateSchema(tx: Transaction, t: DdlTypes, holder: string): Promise<void> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ${t.int64} NOT NULL)${t.table}`);
  const current = await schemaVersion(tx);
  if (current > LATEST_VERSION) {
    throw new Error(
      `${holder} holds schema version ${current}, newer than this chatlog (${LATEST_VERSION}); upgrade chatlog`,
    );
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    await tx.exec(migration.sql(t));
    await migration.fill?.(tx, t);
    await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      migration.version,
      migration.name,
      Date.now(),
    ]);
  }
}
