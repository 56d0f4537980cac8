/**
 * The change feed's pages as their JSON on SQLite (changes.ts feedJsonSql), read by the store's
 * own reader and by the answer threads' (src/answers/), each on its own connection.
 */
import type Database from 'better-sqlite3';
import {
  type FeedJsonRow,
  feedJsonHalvesSql,
  feedJsonPage,
  type JsonDialect,
  mergeFeedJson,
} from '../sql/changes.js';
import type { FeedJsonPage } from '../store.js';

/** JSON as JSON.stringify and formatTimestamp write it, in SQLite (json_quote escapes the same). */
export const SQLITE_JSON: JsonDialect = {
  quote: (text) => `json_quote(${text})`,
  // Floored to the second before 1970 as after, as toISOString does.
  time: (epochMs) => {
    const millis = `((${epochMs} % 1000) + 1000) % 1000`;
    return `strftime('"%Y-%m-%dT%H:%M:%S', (${epochMs} - ${millis}) / 1000, 'unixepoch')
      || printf('.%03dZ"', ${millis})`;
  },
};

export type FeedJsonReader = (hubId: string, afterSeq: number, limit: number) => FeedJsonPage;

/**
 * Reads a page on `db`: the feed's two halves, each in seq order by its index, merged here (one
 * UNION statement sorts both in temporary b-trees), in one read transaction (one snapshot).
 * Synchronous: nothing else runs on the connection in between.
 */
export function feedJsonReader(db: Database.Database): FeedJsonReader {
  const sql = feedJsonHalvesSql(SQLITE_JSON);
  const created = db.prepare<[string, number, number], FeedJsonRow>(sql.created).raw(true);
  const other = db.prepare<[string, number, number, number], FeedJsonRow>(sql.other).raw(true);
  const read = db.transaction((hubId: string, afterSeq: number, n: number) => {
    const messages = created.all(hubId, afterSeq, n);
    // A full page of messages ends the page at its last seq: no other change past it is needed.
    const through =
      messages.length === n ? (messages.at(-1)?.[0] ?? Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
    return mergeFeedJson(messages, other.all(hubId, afterSeq, through, n), n);
  });
  return (hubId, afterSeq, limit) => feedJsonPage(read(hubId, afterSeq, limit + 1), limit);
}
