/**
 * The search index on SQLite (../sql/search.ts): an FTS5 table of each message's tokens, keyed by
 * messages.id (its rowid). Contentless and detail=none: it keeps only which messages hold a token
 * (no text, no positions); contentless_delete (which needs the column sizes kept) lets a trigger drop a
 * message's row in the transaction that deletes the message (unsend, erasure, retention).
 *
 * That delete only marks the row deleted (a "tombstone"): its tokens stay in the index's pages until
 * FTS5 rewrites the segment that holds them. FTS5 would do so inside the deleting transaction once a
 * tenth of a segment is deleted ("deletemerge"): a retention batch then rewrote most of the index
 * while webhooks waited (up to 4 s with 1M messages). Migration 14 turns that off; the store
 * rewrites the index in bounded steps (`compactSearch`) after an erasure or a retention run instead,
 * so erased tokens leave the file as they do with the rest of the erasure.
 *
 * FTS5 also counts each deletion as work towards its automatic merges ("automerge"): a batch of 200
 * did up to 64 pages of merging per level, and merging segments that are mostly deleted rows reads
 * far more than it writes (1.7 s batches while webhooks came, with 1M messages being purged). So a
 * transaction that deletes many messages turns automerge off, has FTS5 write its marks (a "merge"
 * of 0 pages), and turns it back on (4, FTS5's default): new messages still merge as they come.
 */
import type { Sql } from '../sql/executor.js';
import { type IndexedMessage, messageTokens, type SearchEngine } from '../sql/search.js';
import { PENDING_IDS } from '../sql/search-queue.js';

/** Up to this many messages holding a query's tokens (in every hub), the read starts from them. */
const FEW_CANDIDATES = 10_000;

/**
 * Pages a compaction step writes. FTS5 stops a step only between two tokens, so a step takes at
 * least one token's list of messages: 70 ms median, 250 ms at most, with 1M messages here.
 */
const COMPACT_PAGES = 16;

/** FTS5 keeps its structure (segments, merges under way) in this row of message_search_data. */
const STRUCTURE_ROW = 10;
/** Tombstone pages are stored from this rowid on ((segment + 2^16) << 37, FTS5_TOMBSTONE_ROWID). */
const FIRST_TOMBSTONE_ROW = '9007199254740992';

const DDL = `
    CREATE VIRTUAL TABLE message_search USING fts5(
      tokens, content='', contentless_delete=1, detail=none, tokenize='unicode61');
    CREATE TRIGGER message_search_leaves AFTER DELETE ON messages BEGIN
      DELETE FROM message_search WHERE rowid = old.id;
    END;`;
const SETTINGS = `INSERT INTO message_search (message_search, rank) VALUES ('deletemerge', 0);`;

export const SQLITE_SEARCH: SearchEngine = {
  ddl: DDL,
  pendingDdl: `
    CREATE TABLE search_pending (message_id INTEGER PRIMARY KEY);
    CREATE TRIGGER search_pending_leaves AFTER DELETE ON messages BEGIN
      DELETE FROM search_pending WHERE message_id = old.id;
    END;`,
  // A few messages a commit made FTS5 write and merge a segment each time (search-queue.ts).
  indexLater: true,
  add: async (tx: Sql, messages: readonly IndexedMessage[]) => {
    for (const message of messages) {
      await tx.run('INSERT INTO message_search (rowid, tokens) VALUES (?, ?)', [
        message.id,
        messageTokens(message.msg),
      ]);
    }
  },
  // Tokens are lowercase ASCII letters and digits: bare FTS5 words (`abc*` a prefix), ANDed by the space.
  match: async (reads, tokens) => {
    const words = tokens.map(({ token, prefix }) => (prefix ? `${token}*` : token)).join(' ');
    // Measured on the bench's 2M hub: SQLite walks the hub's time index whatever the term, which
    // takes 300 ms for a term no message holds; up to a few thousand candidates, reading them by
    // rowid and sorting them is a few ms.
    const found = await reads.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM (SELECT 1 FROM message_search WHERE message_search MATCH ? LIMIT ?)',
      [words, FEW_CANDIDATES + 1],
    );
    return {
      sql: `m.id IN (SELECT rowid FROM message_search WHERE message_search MATCH ? UNION ALL ${PENDING_IDS})`,
      params: [words],
      few: (found?.n ?? 0) <= FEW_CANDIDATES,
    };
  },
  unindexed: (expr) => `+${expr}`,
  settings: SETTINGS,
  rebuild: {
    empty: `DROP TRIGGER message_search_leaves; DROP TABLE message_search; ${DDL} ${SETTINGS}`,
    filled: '-- SQLite: nothing more to make',
  },
  deleting: {
    before: "INSERT INTO message_search (message_search, rank) VALUES ('automerge', 0)",
    after: `INSERT INTO message_search (message_search, rank) VALUES ('merge', 0);
      INSERT INTO message_search (message_search, rank) VALUES ('automerge', 4)`,
  },
};

/**
 * One step of rewriting the index without the deleted messages' entries (SearchCompactor): a
 * negative count starts a merge of every segment into one (FTS5 leaves the deleted rows out), a
 * positive one goes on with it. Resolves false when the step changed nothing: nothing was left.
 */
export async function compactSearch(tx: Sql, first: boolean): Promise<boolean> {
  const structure = () =>
    tx.get<{ block: Uint8Array }>('SELECT block FROM message_search_data WHERE id = ?', [STRUCTURE_ROW]);
  const before = await structure();
  await tx.run("INSERT INTO message_search (message_search, rank) VALUES ('merge', ?)", [
    first ? -COMPACT_PAGES : COMPACT_PAGES,
  ]);
  const after = await structure();
  return !before || !after || Buffer.compare(Buffer.from(before.block), Buffer.from(after.block)) !== 0;
}

/** Whether the index holds entries of deleted messages: any tombstone page. */
export async function holdsDeletedEntries(sql: Sql): Promise<boolean> {
  const row = await sql.get<{ found: number }>(
    `SELECT EXISTS (SELECT 1 FROM message_search_data WHERE id >= ${FIRST_TOMBSTONE_ROW}) AS found`,
  );
  return Number(row?.found ?? 0) === 1;
}

/**
 * A rewrite of the index pays (after a retention run) from this share of its pages marking deleted
 * messages. Measured with 1M messages (the tokens of migration 16, oldest first deleted by retention):
 * a twentieth of them deleted made 1.33% of the pages tombstones, a tenth 2.6%, nine tenths 25%. A
 * pass costs what the index holds (15 s of steps with 1M messages), so passes come about every
 * twentieth of the index deleted, as FTS5's own deletemerge would (a tenth of a segment).
 */
const WORTH_A_PASS = 0.013;

/** Whether enough of the index marks deleted messages for a rewrite to pay (WORTH_A_PASS). */
export async function worthCompacting(sql: Sql): Promise<boolean> {
  const row = await sql.get<{ tombstones: number; pages: number }>(
    `SELECT (SELECT COUNT(*) FROM message_search_data WHERE id >= ${FIRST_TOMBSTONE_ROW}) AS tombstones,
            (SELECT COUNT(*) FROM message_search_data) AS pages`,
  );
  return (
    Number(row?.tombstones ?? 0) >= WORTH_A_PASS * Number(row?.pages ?? 0) && Number(row?.tombstones) > 0
  );
}
