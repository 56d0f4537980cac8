/**
 * The search index on SQLite (../sql/search.ts): an FTS5 table of each message's tokens, keyed by
 * messages.id (its rowid). Contentless and detail=none: it keeps only which messages hold a token
 * (no text, no positions); contentless_delete (which needs the column sizes kept) lets a trigger drop a
 * message's row in the transaction that deletes the message (unsend, erasure, retention).
 */
import type { Sql } from '../sql/executor.js';
import { type IndexedMessage, messageTokens, type SearchEngine } from '../sql/search.js';

/** Up to this many messages holding a query's tokens (in every hub), the read starts from them. */
const FEW_CANDIDATES = 10_000;

export const SQLITE_SEARCH: SearchEngine = {
  ddl: `
    CREATE VIRTUAL TABLE message_search USING fts5(
      tokens, content='', contentless_delete=1, detail=none, tokenize='unicode61');
    CREATE TRIGGER message_search_leaves AFTER DELETE ON messages BEGIN
      DELETE FROM message_search WHERE rowid = old.id;
    END;`,
  add: async (tx: Sql, messages: readonly IndexedMessage[]) => {
    for (const message of messages) {
      await tx.run('INSERT INTO message_search (rowid, tokens) VALUES (?, ?)', [
        message.id,
        messageTokens(message.msg),
      ]);
    }
  },
  // Tokens are lowercase ASCII letters and digits: bare FTS5 words, ANDed by the space.
  match: async (reads, tokens) => {
    const words = tokens.join(' ');
    // Measured on the bench's 2M hub: SQLite walks the hub's time index whatever the term, which
    // takes 300 ms for a term no message holds; up to a few thousand candidates, reading them by
    // rowid and sorting them is a few ms.
    const found = await reads.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM (SELECT 1 FROM message_search WHERE message_search MATCH ? LIMIT ?)',
      [words, FEW_CANDIDATES + 1],
    );
    return {
      sql: 'm.id IN (SELECT rowid FROM message_search WHERE message_search MATCH ?)',
      params: [words],
      few: (found?.n ?? 0) <= FEW_CANDIDATES,
    };
  },
  unindexed: (expr) => `+${expr}`,
};
