/** Versioned schema of the PostgreSQL store. A migration is never edited once released: add a new one. */
import type { Migration } from '../sqlite/sqlite.migrations.js';

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'hubs, contacts, messages, api keys',
    sql: `
      CREATE TABLE hubs (
        id TEXT PRIMARY KEY,
        time_zone TEXT NOT NULL DEFAULT 'UTC',
        line_channel_secret_encrypted BYTEA,
        data_version BIGINT NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE contacts (
        id BIGSERIAL PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        line_id TEXT NOT NULL,
        vid TEXT NOT NULL DEFAULT '',
        name TEXT NOT NULL DEFAULT '',
        created_at BIGINT NOT NULL,
        UNIQUE (hub_id, line_id)
      );
      CREATE INDEX contacts_by_hub_in_first_seen_order ON contacts(hub_id, id);
      CREATE TABLE messages (
        id BIGSERIAL PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        contact_id BIGINT NOT NULL REFERENCES contacts(id),
        created_at BIGINT NOT NULL,
        sender TEXT,
        msg TEXT NOT NULL,
        content_type TEXT NOT NULL,
        source_id TEXT NOT NULL,
        UNIQUE (hub_id, source_id)
      );
      CREATE INDEX messages_by_contact_and_time ON messages(contact_id, created_at, id);
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        scope TEXT NOT NULL CHECK (scope IN ('read', 'ingest')),
        label TEXT NOT NULL DEFAULT '',
        key_hash BYTEA NOT NULL UNIQUE,
        key_encrypted BYTEA NOT NULL,
        key_start TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT,
        revoked_at BIGINT,
        rate_limit_requests INTEGER,
        rate_limit_per_seconds INTEGER
      );
      CREATE INDEX api_keys_by_hub ON api_keys(hub_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'LINE webhooks: source of messages, unsent messages, follow state, channel access token',
    sql: `
      ALTER TABLE hubs ADD COLUMN line_channel_access_token_encrypted BYTEA;
      ALTER TABLE contacts ADD COLUMN followed_at BIGINT;
      ALTER TABLE contacts ADD COLUMN unfollowed_at BIGINT;
      ALTER TABLE messages ADD COLUMN source_kind TEXT;
      ALTER TABLE messages ADD COLUMN source_chat_id TEXT;
      CREATE TABLE unsent_messages (
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        source_id TEXT NOT NULL,
        unsent_at BIGINT NOT NULL,
        PRIMARY KEY (hub_id, source_id)
      );
    `,
  },
  {
    version: 3,
    name: 'time index for short ranges',
    sql: `
      -- Lets the planner read one day of a hub with many contacts by time, and sort it.
      CREATE INDEX messages_by_hub_and_time ON messages(hub_id, created_at, id);
    `,
  },
  {
    version: 4,
    name: 'account screen: accounts, their hubs, sessions',
    sql: `
      CREATE TABLE accounts (
        id BIGSERIAL PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE account_hubs (
        account_id BIGINT NOT NULL REFERENCES accounts(id),
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        PRIMARY KEY (account_id, hub_id)
      );
      -- The hash of the session id, never the id the browser holds.
      CREATE TABLE sessions (
        id_hash BYTEA PRIMARY KEY,
        account_id BIGINT NOT NULL REFERENCES accounts(id),
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX sessions_by_expiry ON sessions(expires_at);
    `,
  },
];

export const LATEST_POSTGRES_VERSION = POSTGRES_MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
