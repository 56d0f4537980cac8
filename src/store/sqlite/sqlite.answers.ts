/**
 * The read API's answers on SQLite: a small pool of read connections, each streaming one answer
 * with its own cursor and snapshot, so that other requests go on meanwhile. The store's own
 * `messages.stream` reads through one (exports, the account screen); the answer threads
 * (src/store/sqlite/answers/) each keep another, so that the answers of the read API are read and encoded off
 * the event loop that serves requests.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import * as answer from '../sql/answers.js';
import {
  type AnswerCount,
  countAnswer,
  type FeedJsonPage,
  type MessageQuery,
  type MessageRow,
  type PoolState,
} from '../store.js';
import { openDatabase } from './sqlite.driver.js';
import { type FeedJsonReader, feedJsonReader, SQLITE_JSON, wellFormed } from './sqlite.feed.js';

type Db = Database.Database;

const IDLE_READERS_KEPT = 16;
const ANSWER_MMAP_BYTES = 2 ** 40;
/** An answer's chunks: 64 KiB or more (a piece of a short range may be megabytes). */
const CHUNK_BYTES = 64 * 1024;
/** A long range's pieces: at most this many messages of one contact each (bounded memory). */
const CONTACT_PIECE_MESSAGES = 1024;
const MAX_READERS = 16;

/** Contacts by id, both ends included. */
export interface ContactIds {
  from: number;
  to: number;
}

export interface AnswerReadersOptions {
  /** Ranges of at most this many rows are read by time and sorted in memory (tests force a path). */
  shortRangeMaxRows?: number;
  /** A long range's pieces: messages of one contact at most, and bytes a chunk (tests make them small). */
  piece?: { cap?: number; bytes?: number };
}

/** The whole hub or a long range: walk contacts in first-seen order, each one's range by index. */
export const STREAM_SQL = `
  SELECT ${answer.COLUMNS}
  FROM contacts AS c
  JOIN messages AS m ON m.contact_id = c.id
  WHERE c.hub_id = ? AND m.created_at >= ? AND m.created_at < ?
  ${answer.ORDER}`;

/** A short range: read it by the (hub, time) index and sort it in memory. */
const STREAM_BY_TIME_SQL = `
  SELECT ${answer.COLUMNS}
  FROM messages AS m INDEXED BY messages_by_hub_and_time
  JOIN contacts AS c ON c.id = m.contact_id
  WHERE m.hub_id = ? AND m.created_at >= ? AND m.created_at < ?
  ${answer.ORDER}`;

/**
 * The same rows as the read API's JSON, made by SQLite: the contact's opening
 * (`{"lineId":…,"messages":[`) and the message's object, byte for byte what
 * modules/messages/messages.serializer.ts writes (json_quote escapes as JSON.stringify does; the
 * time as toISOString writes it, floored to the second before 1970 as after). `c` is the contact,
 * `m` the message; a message without a sender of its own is the contact's, by `contactName`.
 */
const OPENING_JSON = `'{"lineId":' || json_quote(c.line_id) || ',"vid":' || json_quote(c.vid)
  || ',"name":' || json_quote(c.name) || ',"messages":['`;
const messageJson = (
  contactName: string,
) => `'{"sender":' || json_quote(COALESCE(m.sender, NULLIF(${contactName}, ''), 'User'))
  || ',"msg":' || json_quote(m.msg) || ',"contentType":' || json_quote(m.content_type)
  || ',"createdAt":' || ${SQLITE_JSON.time('m.created_at')} || '}'`;

/**
 * A short range's answer as one piece of JSON joined by SQLite, and its count of messages: for each contact from @lo to @hi
 * (ids) `]},` (the first one's is cut off), its opening and its messages. No JavaScript value per
 * row: this is most of what makes a day fast. A short range is at most SORT_IN_MEMORY_MAX_ROWS rows, which SQLite's
 * sort holds anyway. The groups come in the sorted subquery's order (SQLite reads it as a
 * co-routine, in order; the tests compare every answer with the serializer's). A message's contact
 * is looked up only when it has no sender of its own (COALESCE stops at the first value).
 */
export const BY_TIME_JSON_SQL = `
  SELECT CAST(group_concat(piece, '') AS BLOB), sum(n) FROM (
    SELECT ']},' || (SELECT ${OPENING_JSON} FROM contacts AS c WHERE c.id = cid)
      || group_concat(message, ',') AS piece, count(*) AS n
    FROM (
      SELECT m.contact_id AS cid, ${messageJson('(SELECT name FROM contacts WHERE id = m.contact_id)')} AS message
      FROM messages AS m INDEXED BY messages_by_hub_and_time
      WHERE m.hub_id = @hub AND m.created_at >= @from AND m.created_at < @to
        AND m.contact_id BETWEEN @lo AND @hi
      ORDER BY m.contact_id, m.created_at, m.id)
    GROUP BY cid ORDER BY cid)`;

/**
 * A long range's answer from a row on (@contact, @time, @id), contact by contact: per contact (from
 * @contact on) its next @cap messages as one piece of JSON, prefixed with their count and `:`
 * (`3:]},{"lineId":…`), or NULL when it has none. A count of @cap means the contact may have more:
 * they are asked for again after the last of them (NTH_KEY_SQL), so that no piece holds more than
 * @cap messages. The first piece starts at @contact -1. Contacts from @lo to @hi (ids).
 */
const BY_CONTACT_JSON_SQL = `
  SELECT c.id, (
    SELECT CAST(count(*) || ':' || CASE WHEN c.id = @contact THEN ',' ELSE ']},' || ${OPENING_JSON} END
      || group_concat(message, ',') AS BLOB)
    FROM (
      SELECT ${messageJson('c.name')} AS message
      FROM messages AS m INDEXED BY messages_by_contact_and_time
      WHERE m.contact_id = c.id AND m.created_at >= @from AND m.created_at < @to
        AND (c.id > @contact OR (m.created_at, m.id) > (@time, @id))
      ORDER BY m.created_at, m.id LIMIT @cap))
  FROM contacts AS c WHERE c.hub_id = @hub AND c.id >= @contact AND c.id BETWEEN @lo AND @hi
  ORDER BY c.id`;

/** Where a contact's piece of @cap messages ended (BY_CONTACT_JSON_SQL's same rows, by the index alone). */
const NTH_KEY_SQL = `
  SELECT created_at, id FROM messages INDEXED BY messages_by_contact_and_time
  WHERE contact_id = @piece AND created_at >= @from AND created_at < @to
    AND (@piece > @contact OR (created_at, id) > (@time, @id))
  ORDER BY created_at, id LIMIT 1 OFFSET @cap - 1`;

/** BY_*_JSON_SQL's parameters: the range, its contacts, and the last row sent (contact -1: none). */
interface After {
  hub: string;
  from: number;
  to: number;
  lo: number;
  hi: number;
  contact: number;
  time: number;
  id: number;
  cap: number;
}

const COUNT_IN_RANGE_SQL = `
  SELECT COUNT(*) FROM (
    SELECT 1 FROM messages INDEXED BY messages_by_hub_and_time
    WHERE hub_id = ? AND created_at >= ? AND created_at < ? LIMIT ?)`;

interface Reader {
  db: Db;
  stream: Database.Statement<[string, number, number], answer.Tuple>;
  streamByTime: Database.Statement<[string, number, number], answer.Tuple>;
  countInRange: Database.Statement<[string, number, number, number], [number]>;
  jsonByTime: Database.Statement<[After], [Buffer | null, number | null]>;
  jsonByContact: Database.Statement<[After], [number, Buffer | null]>;
  nthKey: Database.Statement<[After & { piece: number }], [number, number]>;
  /** The cursor being read, so close() can end it (a connection with an open cursor cannot close). */
  cursor?: IterableIterator<unknown> | undefined;
}

/**
 * A connection that only reads. `busyWaitMs`: how long it waits (blocking) while SQLite recovers the
 * WAL, which is rare and short: a stream's reader waits; the small reads of every request fail at
 * once (503, retried by the client) rather than hold the event loop.
 */
export function openReader(file: string, busyWaitMs: number): Db {
  const db = openDatabase(file, { fileMustExist: true });
  db.pragma('query_only = ON');
  db.pragma(`busy_timeout = ${busyWaitMs}`);
  return db;
}

/**
 * An answer from its parts (bare pieces of JSON, each contact's starting with `]},`: json() with a
 * `part`, in order): `[`, the first piece with its `]},` cut off, the rest, `]}]` (or `[]` when
 * there was none). `bytes`, when given, counts each part's bytes.
 */
export async function* joinAnswer(parts: AsyncIterable<Buffer>[], bytes?: number[]): AsyncGenerator<Buffer> {
  let first = true;
  for (const [i, part] of parts.entries()) {
    for await (const chunk of part) {
      if (bytes) bytes[i] = (bytes[i] ?? 0) + chunk.length;
      if (first) {
        first = false;
        yield OPEN_BRACKET;
        yield chunk.subarray(3);
      } else yield chunk;
    }
  }
  yield first ? EMPTY_ANSWER : CLOSE_ANSWER;
}
const OPEN_BRACKET = Buffer.from('[');
const EMPTY_ANSWER = Buffer.from('[]');
const CLOSE_ANSWER = Buffer.from(']}]');

/** The messages of the pieces made so far. */
interface Rows {
  n: number;
}

/** A short range: one piece. */
function* byTime(reader: Reader, start: After, rows: Rows): Generator<Buffer> {
  const [piece, n] = reader.jsonByTime.get(start) ?? [null, null];
  rows.n += n ?? 0;
  if (piece) yield wellFormed(piece);
}

/** A long range: a piece per contact, or more for a contact of more than `cap` messages. */
function* byContact(reader: Reader, start: After, rows: Rows): Generator<Buffer> {
  let after = start;
  for (;;) {
    let more: After | undefined;
    const contacts = reader.jsonByContact.iterate(after);
    reader.cursor = contacts;
    try {
      for (const [contact, piece] of contacts) {
        if (!piece) continue;
        const colon = piece.indexOf(0x3a);
        const n = Number(piece.toString('latin1', 0, colon));
        rows.n += n;
        yield wellFormed(piece.subarray(colon + 1));
        if (n === after.cap) {
          more = { ...after, contact };
          break;
        }
      }
    } finally {
      contacts.return?.();
      reader.cursor = undefined;
    }
    if (!more) return;
    // Where that contact's piece ended: its next piece starts after it.
    const key = reader.nthKey.get({ ...after, piece: more.contact });
    if (!key) throw new Error("a contact's piece of the answer lost its last row");
    [more.time, more.id] = key;
    after = more;
  }
}

export class SqliteAnswerReaders {
  private readonly idle: Reader[] = [];
  private readonly busy = new Set<Reader>();
  private readonly waiters: Array<() => void> = [];
  private feed: { db: Db; read: FeedJsonReader } | undefined;
  private closed = false;

  private readonly shortRangeMaxRows: number;
  private readonly piece: { cap: number; bytes: number };

  constructor(
    private readonly file: string,
    options: AnswerReadersOptions = {},
  ) {
    this.shortRangeMaxRows = options.shortRangeMaxRows ?? answer.SORT_IN_MEMORY_MAX_ROWS;
    this.piece = { cap: CONTACT_PIECE_MESSAGES, bytes: CHUNK_BYTES, ...options.piece };
  }

  poolState(): PoolState {
    return {
      pool: 'readers',
      total: this.busy.size + this.idle.length,
      idle: this.idle.length,
      waiting: this.waiters.length,
    };
  }

  /** Opens one connection ahead of the first answer. */
  async warmUp(): Promise<void> {
    this.release(await this.acquire());
  }

  /** The answer's rows in batches, from one connection's snapshot. */
  async *stream(query: MessageQuery): AsyncGenerator<MessageRow[]> {
    const { reader, rows } = await this.open(query);
    try {
      for (;;) {
        const batch: MessageRow[] = [];
        while (batch.length < answer.BATCH_ROWS) {
          const next = rows.next();
          if (next.done) break;
          batch.push(answer.toRow(next.value));
        }
        if (batch.length > 0) yield batch;
        if (batch.length < answer.BATCH_ROWS) return;
        // The cursor is synchronous and a fast client never makes us wait: give other requests
        // (and timers) their turn between batches, so one big export cannot stall the thread.
        await nextTurn();
      }
    } finally {
      rows.return?.();
      this.release(reader);
    }
  }

  /**
   * The read API's JSON answer, in chunks: pieces of JSON that SQLite joins itself
   * (BY_TIME_JSON_SQL, BY_CONTACT_JSON_SQL), read in one transaction, so from one snapshot.
   * `part`: only the contacts with ids in [from, to], as bare pieces (each contact's starting with
   * `]},`, no brackets): the answer threads read the two halves of one answer at once (answers.threads.ts).
   * `count` is told its messages once all are read.
   */
  async *json(query: MessageQuery, part?: ContactIds, count?: AnswerCount): AsyncGenerator<Buffer> {
    const reader = await this.acquire();
    try {
      const [hub, from, to] = answer.bounds(query);
      const start: After = {
        hub,
        from,
        to,
        lo: part?.from ?? Number.MIN_SAFE_INTEGER,
        hi: part?.to ?? Number.MAX_SAFE_INTEGER,
        contact: -1,
        time: 0,
        id: 0,
        cap: this.piece.cap,
      };
      reader.db.exec('BEGIN');
      const rows: Rows = { n: 0 };
      const pieces = this.chunked(
        this.isShort(reader, query) ? byTime(reader, start, rows) : byContact(reader, start, rows),
        () => countAnswer(count, rows.n),
      );
      yield* part ? pieces : joinAnswer([pieces]);
    } finally {
      reader.cursor?.return?.();
      reader.cursor = undefined;
      if (reader.db.open && reader.db.inTransaction) reader.db.exec('COMMIT');
      this.release(reader);
    }
  }

  /**
   * Pieces of JSON as chunks of CHUNK_BYTES or more: small pieces joined, a large one as it is (no
   * copy: the answer threads transfer it whole). Other answers get a turn between chunks. `whole`
   * is called once every chunk is taken.
   */
  private async *chunked(pieces: Iterable<Buffer>, whole: () => void): AsyncGenerator<Buffer> {
    const { bytes } = this.piece;
    let waiting: Buffer[] = [];
    let size = 0;
    for (const piece of pieces) {
      waiting.push(piece);
      size += piece.length;
      if (size >= bytes) {
        yield waiting.length === 1 ? piece : Buffer.concat(waiting, size);
        waiting = [];
        size = 0;
        await nextTurn();
      }
    }
    if (size > 0) yield Buffer.concat(waiting, size);
    whole();
  }

  /**
   * One page of the change feed as its JSON (sqlite.feed.ts), on a connection of its own: a page is
   * read at once, synchronously, so one connection serves every page, and a page never waits for
   * one that a slow client's answer holds.
   */
  feedJson(hubId: string, afterSeq: number, limit: number): FeedJsonPage {
    if (this.closed) throw new Error('the store is closed');
    if (!this.feed) {
      const db = openReader(this.file, 10_000);
      db.pragma(`mmap_size = ${ANSWER_MMAP_BYTES}`);
      this.feed = { db, read: feedJsonReader(db) };
    }
    return this.feed.read(hubId, afterSeq, limit);
  }

  /** Reads a range by time and sorts it in memory when it has few rows (same rows, same order). */
  private isShort(reader: Reader, query: MessageQuery): boolean {
    if (!answer.isBounded(query)) return false;
    const [count] = reader.countInRange.get(...answer.bounds(query), this.shortRangeMaxRows + 1) ?? [];
    return (count ?? Number.POSITIVE_INFINITY) <= this.shortRangeMaxRows;
  }

  private async open(query: MessageQuery): Promise<{ reader: Reader; rows: IterableIterator<answer.Tuple> }> {
    const reader = await this.acquire();
    try {
      const statement = this.isShort(reader, query) ? reader.streamByTime : reader.stream;
      const rows = statement.iterate(...answer.bounds(query));
      reader.cursor = rows;
      return { reader, rows };
    } catch (error) {
      this.release(reader);
      throw error;
    }
  }

  /** Ends the cursors still open and closes every connection. */
  close(): void {
    this.closed = true;
    for (const wake of this.waiters.splice(0)) wake();
    for (const reader of [...this.idle, ...this.busy]) {
      reader.cursor?.return?.();
      if (reader.db.open) reader.db.close();
    }
    this.idle.length = 0;
    this.busy.clear();
    if (this.feed?.db.open) this.feed.db.close();
  }

  /** At most MAX_READERS answers read at once (each holds a connection and its cache); others wait their turn. */
  private async acquire(): Promise<Reader> {
    while (this.busy.size >= MAX_READERS && !this.closed) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    if (this.closed) throw new Error('the store is closed');
    let reader = this.idle.pop();
    if (!reader) {
      const db = openReader(this.file, 10_000);
      // Pages read from the file's map, not copied into each connection's cache: a scan costs
      // no system time (SQLite caps the size at its build's limit, 2 GB by default).
      db.pragma(`mmap_size = ${ANSWER_MMAP_BYTES}`);
      reader = {
        db,
        stream: db.prepare<[string, number, number], answer.Tuple>(STREAM_SQL).raw(true),
        streamByTime: db.prepare<[string, number, number], answer.Tuple>(STREAM_BY_TIME_SQL).raw(true),
        countInRange: db.prepare<[string, number, number, number], [number]>(COUNT_IN_RANGE_SQL).raw(true),
        jsonByTime: db.prepare<[After], [Buffer | null, number | null]>(BY_TIME_JSON_SQL).raw(true),
        jsonByContact: db.prepare<[After], [number, Buffer | null]>(BY_CONTACT_JSON_SQL).raw(true),
        nthKey: db.prepare<[After & { piece: number }], [number, number]>(NTH_KEY_SQL).raw(true),
      };
    }
    this.busy.add(reader);
    return reader;
  }

  private release(reader: Reader): void {
    this.busy.delete(reader);
    this.waiters.shift()?.();
    reader.cursor = undefined;
    if (this.closed || this.idle.length >= IDLE_READERS_KEPT) {
      if (reader.db.open) reader.db.close();
    } else this.idle.push(reader);
  }
}
