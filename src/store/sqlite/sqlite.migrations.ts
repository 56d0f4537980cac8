/**
 * Versioned schema of the SQLite store. A migration is never edited once released: add a new one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'hubs, contacts, messages, api keys',
    sql: `
      CREATE TABLE hubs (
        id TEXT PRIMARY KEY,
        time_zone TEXT NOT NULL DEFAULT 'UTC',
        line_channel_secret_encrypted BLOB,
        data_version INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
      ) STRICT;

      -- id grows with every new contact, so it is the order in which the hub first saw them.
      CREATE TABLE contacts (
        id INTEGER PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        line_id TEXT NOT NULL,
        vid TEXT NOT NULL DEFAULT '',
        name TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        UNIQUE (hub_id, line_id)
      ) STRICT;
      CREATE INDEX contacts_by_hub_in_first_seen_order ON contacts(hub_id, id);

      -- id is the arrival sequence; sender NULL means "the friend" (rendered with the contact's name).
      CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        contact_id INTEGER NOT NULL REFERENCES contacts(id),
        created_at INTEGER NOT NULL,
        sender TEXT,
        msg TEXT NOT NULL,
        content_type TEXT NOT NULL,
        source_id TEXT NOT NULL,
        UNIQUE (hub_id, source_id)
      ) STRICT;
      -- Answers "one hub, one time range, in answer order" by walking contacts in first-seen
      -- order and seeking each contact's range: no sort, no temporary b-tree.
      CREATE INDEX messages_by_contact_and_time ON messages(contact_id, created_at, id);

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        scope TEXT NOT NULL CHECK (scope IN ('read', 'ingest')),
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
      CREATE INDEX api_keys_by_hub ON api_keys(hub_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'LINE webhooks: source of messages, unsent messages, follow state, channel access token',
    sql: `
      ALTER TABLE hubs ADD COLUMN line_channel_access_token_encrypted BLOB;
      ALTER TABLE contacts ADD COLUMN followed_at INTEGER;
      ALTER TABLE contacts ADD COLUMN unfollowed_at INTEGER;
      -- Where a LINE message was said: 'user' (one-to-one), 'group' or 'room', and that chat's id.
      ALTER TABLE messages ADD COLUMN source_kind TEXT;
      ALTER TABLE messages ADD COLUMN source_chat_id TEXT;
      -- Messages the friend took back (LINE's unsend): never stored again, even when redelivered.
      CREATE TABLE unsent_messages (
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        source_id TEXT NOT NULL,
        unsent_at INTEGER NOT NULL,
        PRIMARY KEY (hub_id, source_id)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: 'time index for short ranges',
    sql: `
      -- One day of a hub with many contacts: read the range by time and sort it in memory,
      -- instead of visiting every contact of the hub.
      CREATE INDEX messages_by_hub_and_time ON messages(hub_id, created_at, id);
    `,
  },
  {
    version: 4,
    name: 'account screen: accounts, their hubs, sessions',
    sql: `
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE account_hubs (
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        hub_id TEXT NOT NULL REFERENCES hubs(id),
        PRIMARY KEY (account_id, hub_id)
      ) STRICT, WITHOUT ROWID;
      -- The hash of the session id, never the id the browser holds.
      CREATE TABLE sessions (
        id_hash BLOB PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX sessions_by_expiry ON sessions(expires_at);
    `,
  },
];

export const LATEST_SQLITE_VERSION = SQLITE_MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
