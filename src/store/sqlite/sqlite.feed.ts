/**
 * The change feed's pages as their JSON on SQLite (changes.ts feedJsonSql), read by the store's
 * own reader and by the answer threads' (src/store/sqlite/answers/), each on its own connection.
 */
import { isUtf8 } from 'node:buffer';
import type Database from 'better-sqlite3';
import {
  CREATED_AFTER_SQL,
  createdJsonRunSql,
  type JsonDialect,
  OTHER_AFTER_SQL,
  otherJsonSql,
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

/**
 * JSON joined by SQLite as the JavaScript strings it came from encode: SQLite keeps a lone
 * surrogate of a JavaScript string as the three bytes of its code point, which are not UTF-8 (a
 * client's decoder may refuse them); read as a string, each of those bytes is a U+FFFD, and so it
 * is here. Valid UTF-8 (all but such rare text) is checked and kept as it is.
 */
export function wellFormed(json: Buffer): Buffer {
  return isUtf8(json) ? json : Buffer.from(json.toString('utf8'), 'utf8');
}

export type FeedJsonReader = (hubId: string, afterSeq: number, limit: number) => FeedJsonPage;

const COMMA = Buffer.from(',');
const NO_END = Number.MAX_SAFE_INTEGER;

/**
 * Reads pages on `db`, each in one read transaction (one snapshot), synchronously: nothing else
 * runs on the connection in between. The stored messages of a page come as one run, joined by
 * SQLite (group_concat) and handed over as one buffer, never as a value per row. The other changes
 * (deletions, contacts, retention: few) are looked for only up to where that run ends; when some
 * fall inside it, the page is read again as runs of messages between them.
 */
export function feedJsonReader(db: Database.Database): FeedJsonReader {
  const runStatement = db
    .prepare<[string, number, number, number], [number, number | null, Buffer | null]>(
      createdJsonRunSql(SQLITE_JSON, (json) => `CAST(group_concat(${json}, ',' ORDER BY seq) AS BLOB)`),
    )
    .raw(true);
  const othersOf = db
    .prepare<[string, number, number, number], [number, string]>(otherJsonSql(SQLITE_JSON))
    .raw(true);
  const createdAfter = db.prepare<[string, number], [number]>(CREATED_AFTER_SQL).raw(true);
  const otherAfter = db.prepare<[string, number], [number]>(OTHER_AFTER_SQL).raw(true);
  /** The messages with seq in (after, before), at most `limit`: how many, the last seq, their JSON. */
  const run = (hubId: string, after: number, before: number, limit: number) => {
    const [n = 0, last = null, json = null] = runStatement.get(hubId, after, before, limit) ?? [];
    return n > 0 && last !== null && json ? { n, last, json: wellFormed(json) } : undefined;
  };
  return db.transaction((hubId: string, afterSeq: number, limit: number): FeedJsonPage => {
    const first = run(hubId, afterSeq, NO_END, limit);
    // A full run ends the page at its last seq: only other changes before it belong in the page.
    const through = first?.n === limit ? first.last : NO_END;
    const others = othersOf.all(hubId, afterSeq, through, limit + 1);
    const parts: Buffer[] = [];
    let count = 0;
    let lastSeq: number | undefined;
    if (others.length === 0) {
      if (first) {
        parts.push(first.json);
        count = first.n;
        lastSeq = first.last;
      }
    } else {
      let from = afterSeq;
      for (let i = 0; count < limit; i++) {
        const other = others[i];
        const messages = run(hubId, from, other?.[0] ?? NO_END, limit - count);
        if (messages) {
          parts.push(messages.json);
          count += messages.n;
          lastSeq = messages.last;
        }
        if (count === limit || !other) break;
        parts.push(Buffer.from(other[1], 'utf8'));
        count += 1;
        lastSeq = from = other[0];
      }
    }
    const end = lastSeq;
    const hasMore =
      count === limit &&
      end !== undefined &&
      (createdAfter.get(hubId, end)?.[0] === 1 || otherAfter.get(hubId, end)?.[0] === 1);
    return { body: joined(parts), count, lastSeq, hasMore };
  });
}

function joined(parts: Buffer[]): Buffer {
  if (parts.length === 1) return parts[0] as Buffer;
  return Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [part] : [COMMA, part])));
}
