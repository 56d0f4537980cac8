/**
 * What both engines share of the read API's answer: the columns of a row, its order, the batch
 * size, and when a range is read by time rather than by contact. How the rows are read (SQLite's
 * synchronous statement, PostgreSQL's server-side cursor) and each engine's plan stay in the engine.
 */
import type { MessageQuery, MessageRow } from '../store.js';
import type { Sql } from './executor.js';

/** Rows per batch of a stream: big enough to amortise a fetch, small enough to bound memory. */
export const BATCH_ROWS = 512;

/**
 * A short range (one day of a big hub) is cheaper read through the time index and sorted in
 * memory than by visiting every contact of the hub: up to this many rows, it is.
 */
export const SORT_IN_MEMORY_MAX_ROWS = 20_000;

/** The select list of an answer row (`c` the contact, `m` the message); see Tuple. */
export const COLUMNS = `c.id, c.line_id, c.vid, c.name, COALESCE(m.sender, NULLIF(c.name, ''), 'User'),
         m.msg, m.content_type, m.created_at`;

/** Answer order: contacts in first-seen order, each one's messages oldest first. */
export const ORDER = 'ORDER BY c.id, m.created_at, m.id';

export type Tuple = [number, string, string, string, string, string, string, number];

export function toRow([
  contactId,
  lineId,
  vid,
  name,
  sender,
  msg,
  contentType,
  createdAt,
]: Tuple): MessageRow {
  return { contactId, lineId, vid, name, sender, msg, contentType, createdAt };
}

/** The query's bounds as statement parameters (hub, from inclusive, to exclusive), open ends filled. */
export function bounds(query: MessageQuery): [string, number, number] {
  return [
    query.hubId,
    query.fromMs ?? Number.MIN_SAFE_INTEGER,
    query.toMsExclusive ?? Number.MAX_SAFE_INTEGER,
  ];
}

/** Only a bounded query can be short; an unbounded one is the whole hub. */
export const isBounded = (query: MessageQuery) =>
  query.fromMs !== undefined || query.toMsExclusive !== undefined;

/** The createdAt of the hub's newest message: MAX over the (hub_id, created_at) index, one probe. */
export async function latestMessageAt(sql: Sql, hubId: string): Promise<number | undefined> {
  const row = await sql.get<{ latest: number | null }>(
    'SELECT MAX(created_at) AS latest FROM messages WHERE hub_id = ?',
    [hubId],
  );
  return row?.latest ?? undefined;
}
