/**
 * The search index on PostgreSQL (../sql/search.ts): each message's tokens as a tsvector with a GIN
 * index, dropped with its message (ON DELETE CASCADE). The tokens are ASCII words made in JS, given
 * as tsvector text (nothing for a text search configuration to change); the hub is kept beside them
 * (for a per-hub index, should one be measured to pay).
 */
import type { Sql, SqlValue } from '../sql/executor.js';
import { type IndexedMessage, messageTokens, type SearchEngine } from '../sql/search.js';
import { storable } from './postgres.sql.js';

/** Index rows of many messages in one statement (also the import's); numbered for a raw client too. */
export const INSERT_SEARCH_ROWS = `
  INSERT INTO message_search (message_id, hub_id, tokens)
  SELECT i, h, t::tsvector FROM unnest($1::bigint[], $2::text[], $3::text[]) AS x(i, h, t)`;

/** Tokens of the text as PostgreSQL keeps it (postgres.sql.ts storable), which a search reads. */
export function searchRowParams(messages: readonly IndexedMessage[]): [number[], string[], string[]] {
  return [
    messages.map((m) => m.id),
    messages.map((m) => m.hubId),
    messages.map((m) => messageTokens(storable(m.msg))),
  ];
}

const GIN = 'CREATE INDEX message_search_tokens ON message_search USING gin (tokens);';

export const POSTGRES_SEARCH: SearchEngine = {
  keptText: storable,
  // Each message indexed in its own transaction: the GIN index keeps a pending list of its own, and a
  // queue of ours cost PostgreSQL more than it saved (247 -> 394 µs of its CPU a webhook, on a
  // store of 300,000: npm run bench -- webhook-ingest --store postgres).
  indexLater: false,
  pendingDdl: '-- PostgreSQL: no queue (indexLater false)',
  ddl: `
    CREATE TABLE message_search (
      message_id BIGINT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      hub_id TEXT NOT NULL,
      tokens tsvector NOT NULL
    );
    ${GIN}`,
  add: async (tx: Sql, messages: readonly IndexedMessage[]) => {
    if (messages.length === 0) return;
    // pg sends arrays as PostgreSQL arrays; the adapter's type names only scalars.
    await tx.run(INSERT_SEARCH_ROWS, searchRowParams(messages) as unknown as SqlValue[]);
  },
  // PostgreSQL's planner weighs the GIN index against the time index itself. Not correlated with
  // m (no `hub_id = m.hub_id`): correlated, it scanned message_search once per message (bench, 2M hub).
  match: async (_reads, tokens) => ({
    sql: 'm.id IN (SELECT message_id FROM message_search WHERE tokens @@ ?::tsquery)',
    params: [tokens.map(({ token, prefix }) => (prefix ? `${token}:*` : token)).join(' & ')],
    few: false,
  }),
  unindexed: (expr) => expr,
  settings: '-- PostgreSQL: a GIN index has no settings to make',
  // Built once over every row, a GIN index is made far faster than row by row, and faster still with
  // more memory than PostgreSQL's default 64 MB (for this transaction only).
  rebuild: {
    empty: 'DROP INDEX message_search_tokens; TRUNCATE message_search;',
    filled: `SET LOCAL maintenance_work_mem = '256MB'; ${GIN}`,
  },
};
