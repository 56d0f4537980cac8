/**
 * The read API's answers on SQLite: a small pool of read connections, each streaming one answer
 * with its own cursor and snapshot, so that other requests go on meanwhile. The store's own
 * `messages.stream` reads through one (exports, the account screen); the answer threads
 * (src/answers/) each keep another, so that the answers of the read API are read and encoded off
 * the event loop that serves requests.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import * as answer from '../sql/answers.js';
import type { FeedJsonPage, MessageQuery, MessageRow, PoolState } from '../store.js';
import { openDatabase } from './sqlite.driver.js';
import { type FeedJsonReader, feedJsonReader, SQLITE_JSON } from './sqlite.feed.js';

type Db = Database.Database;

const IDLE_READERS_KEPT = 4;
const ANSWER_MMAP_BYTES = 2 ** 40;
/** An answer's chunks: 64 Ki UTF-16 code units or more, as the serializer's. */
const CHUNK_CHARS = 64 * 1024;
const MAX_READERS = 16;

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
 * The same rows as the read API's JSON, made by SQLite: per row the contact's id, the contact's
 * opening (`{"lineId":…,"messages":[`) and the message's object, byte for byte what
 * modules/messages/messages.serializer.ts writes (json_quote escapes as JSON.stringify does; the
 * time as toISOString writes it, floored to the second before 1970 as after). One string per part
 * instead of a JavaScript value per column: the answer threads read a day about a third faster.
 */
const JSON_COLUMNS = `c.id,
  '{"lineId":' || json_quote(c.line_id) || ',"vid":' || json_quote(c.vid) || ',"name":' || json_quote(c.name)
    || ',"messages":[',
  '{"sender":' || json_quote(COALESCE(m.sender, NULLIF(c.name, ''), 'User')) || ',"msg":' || json_quote(m.msg)
    || ',"contentType":' || json_quote(m.content_type) || ',"createdAt":' || ${SQLITE_JSON.time('m.created_at')} || '}'`;

const answerSql = (rowsSql: string) => rowsSql.replace(answer.COLUMNS, JSON_COLUMNS);

type JsonTuple = [number, string, string];

const COUNT_IN_RANGE_SQL = `
  SELECT COUNT(*) FROM (
    SELECT 1 FROM messages INDEXED BY messages_by_hub_and_time
    WHERE hub_id = ? AND created_at >= ? AND created_at < ? LIMIT ?)`;

interface Reader {
  db: Db;
  stream: Database.Statement<[string, number, number], answer.Tuple>;
  streamByTime: Database.Statement<[string, number, number], answer.Tuple>;
  json: Database.Statement<[string, number, number], JsonTuple>;
  jsonByTime: Database.Statement<[string, number, number], JsonTuple>;
  countInRange: Database.Statement<[string, number, number, number], [number]>;
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

export class SqliteAnswerReaders {
  private readonly idle: Reader[] = [];
  private readonly busy = new Set<Reader>();
  private readonly waiters: Array<() => void> = [];
  private feed: { db: Db; read: FeedJsonReader } | undefined;
  private closed = false;

  constructor(
    private readonly file: string,
    /** Ranges of at most this many rows are read by time and sorted in memory (tests force a path). */
    private readonly shortRangeMaxRows: number = answer.SORT_IN_MEMORY_MAX_ROWS,
  ) {}

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
    const { reader, rows } = await this.open(query, 'rows');
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

  /** The read API's JSON answer (JSON_COLUMNS), in chunks of about 64 KiB. */
  async *json(query: MessageQuery): AsyncGenerator<Buffer> {
    const { reader, rows } = await this.open(query, 'json');
    try {
      let out = '[';
      let contact: number | undefined;
      let n = 0;
      for (;;) {
        const next = rows.next();
        if (next.done) break;
        n += 1;
        const [id, opening, message] = next.value;
        if (id !== contact) {
          out += contact === undefined ? opening : `]},${opening}`;
          contact = id;
        } else out += ',';
        out += message;
        // Cut where the serializer cuts (after a batch, once 64 KiB are there), so that even a
        // compressed answer, flushed after its first chunk, is byte for byte the same.
        if (n % answer.BATCH_ROWS === 0) {
          if (out.length >= CHUNK_CHARS) {
            yield Buffer.from(out, 'utf8');
            out = '';
          }
          await nextTurn();
        }
      }
      // The last, shorter batch is cut after too.
      if (n % answer.BATCH_ROWS !== 0 && out.length >= CHUNK_CHARS) {
        yield Buffer.from(out, 'utf8');
        out = '';
      }
      out += contact === undefined ? ']' : ']}]';
      yield Buffer.from(out, 'utf8');
    } finally {
      rows.return?.();
      this.release(reader);
    }
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

  private async open(
    query: MessageQuery,
    as: 'rows',
  ): Promise<{ reader: Reader; rows: IterableIterator<answer.Tuple> }>;
  private async open(
    query: MessageQuery,
    as: 'json',
  ): Promise<{ reader: Reader; rows: IterableIterator<JsonTuple> }>;
  private async open(
    query: MessageQuery,
    as: 'rows' | 'json',
  ): Promise<{ reader: Reader; rows: IterableIterator<answer.Tuple | JsonTuple> }> {
    const reader = await this.acquire();
    const args = answer.bounds(query);
    try {
      // Same rows, same order either way; only the cost differs.
      const short =
        answer.isBounded(query) &&
        (reader.countInRange.get(...args, this.shortRangeMaxRows + 1)?.[0] ?? Number.POSITIVE_INFINITY) <=
          this.shortRangeMaxRows;
      const statement =
        as === 'rows'
          ? short
            ? reader.streamByTime
            : reader.stream
          : short
            ? reader.jsonByTime
            : reader.json;
      const rows = (
        statement as Database.Statement<[string, number, number], answer.Tuple | JsonTuple>
      ).iterate(...args);
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
        json: db.prepare<[string, number, number], JsonTuple>(answerSql(STREAM_SQL)).raw(true),
        jsonByTime: db.prepare<[string, number, number], JsonTuple>(answerSql(STREAM_BY_TIME_SQL)).raw(true),
        countInRange: db.prepare<[string, number, number, number], [number]>(COUNT_IN_RANGE_SQL).raw(true),
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
