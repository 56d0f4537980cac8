/**
 * The change feed's pages as their JSON on PostgreSQL, read through `COPY (FEED_SQL) TO STDOUT
 * (FORMAT binary)`: each text column arrives as its UTF-8 bytes and is written into the page as
 * they are, escaped where JSON needs it. node-postgres decodes every value of a query's answer
 * into a JavaScript string (its binary mode too), which the page then encodes again: about 5 ms
 * each way for a page of 1,000 changes with Japanese text on Node 20, the most of what a page cost
 * here (bench/results/2026-11-27-issue-16-feed-json.md). The bytes are the serializer's
 * (changes.serializer.ts), which test/store/feed-json.test.ts checks.
 *
 * COPY takes no parameters: the hub id is quoted and the numbers checked.
 */
import type pg from 'pg';
import { FEED_SQL, feedParams } from '../sql/changes.js';
import type { FeedJsonPage } from '../store.js';
import { copyHeaderEnd, copyInteger, readTuple, TRAILER } from './postgres.copy-binary.js';
import { copyOut, eachPiece } from './postgres.copy-out.js';
import { JsonBytes } from './postgres.json-bytes.js';

/** FEED_SQL's columns, in its order. */
const Column = {
  Seq: 0,
  Type: 1,
  At: 2,
  Id: 3,
  LineId: 4,
  Vid: 5,
  Name: 6,
  Sender: 7,
  Msg: 8,
  ContentType: 9,
  CreatedAt: 10,
  Line: 11,
  Reason: 12,
} as const;
const COLUMNS = 13;

export async function readFeedJsonByCopy(
  pool: pg.Pool,
  hubId: string,
  afterSeq: number,
  limit: number,
  timeoutMs: number,
): Promise<FeedJsonPage> {
  if (!Number.isSafeInteger(afterSeq) || !Number.isSafeInteger(limit) || limit < 1) {
    throw new Error('readFeedJsonByCopy: not a page');
  }
  const client = await pool.connect();
  let releaseError: Error | undefined;
  const parts: Buffer[] = [];
  try {
    const values = feedParams(hubId, afterSeq, limit + 1);
    let i = 0;
    const sql = FEED_SQL.replace(/\?/g, () => {
      const value = values[i++];
      return typeof value === 'number' ? String(value) : client.escapeLiteral(String(value));
    });
    const stream = client.query(copyOut(`COPY (${sql}) TO STDOUT (FORMAT binary)`));
    const timer = setTimeout(() => {
      // A dead network, as the driver's own query timeout would have said it (503, not 500).
      const error = Object.assign(new Error(`a page of the change feed took over ${timeoutMs} ms`), {
        code: 'ETIMEDOUT',
      });
      stream.destroy(error);
    }, timeoutMs);
    try {
      await eachPiece(stream, (part) => parts.push(part));
    } finally {
      clearTimeout(timer);
    }
  } catch (error) {
    // A COPY cut off midway leaves the connection in an unknown state: it is not reused.
    releaseError = error as Error;
    throw error;
  } finally {
    client.release(releaseError);
  }
  return pageOf(Buffer.concat(parts), limit);
}

/** The page the COPY's rows make: the first `limit` as JSON, and whether another row followed. */
function pageOf(data: Buffer, limit: number): FeedJsonPage {
  let at = copyHeaderEnd(data, malformed);
  if (at === undefined) throw malformed();
  // The JSON's keys and times add about 250 bytes a change to the values' own.
  const out = new JsonBytes(data.length + (limit + 1) * 256);
  // Where each column's value is in `data`, and its length (-1: NULL): no Buffer per value.
  const starts = new Int32Array(COLUMNS);
  const lengths = new Int32Array(COLUMNS);
  let count = 0;
  let lastSeq: number | undefined;
  let hasMore = false;
  for (;;) {
    const next = readTuple(data, at, COLUMNS, starts, lengths, malformed);
    // The whole COPY is here: a tuple cut short is not one.
    if (next === undefined) throw malformed();
    if (next === TRAILER) break;
    at = next;
    if (count === limit) {
      hasMore = true;
      continue;
    }
    if (count > 0) out.byte(0x2c);
    lastSeq = integer(data, starts[Column.Seq] as number, lengths[Column.Seq] as number);
    writeChange(out, data, starts, lengths, lastSeq);
    count += 1;
  }
  return { body: out.bytes(), count, lastSeq, hasMore };
}

/** One change as changes.serializer.ts writes it (toChange's defaults for NULLs). */
function writeChange(
  out: JsonBytes,
  data: Buffer,
  starts: Int32Array,
  lengths: Int32Array,
  seq: number,
): void {
  const start = (c: number) => starts[c] as number;
  const length = (c: number) => lengths[c] as number;
  const text = (c: number) => out.quoted(data, start(c), length(c));
  // A JSON string of what formatTimestamp writes for the instants chatlog stores.
  const time = (c: number) => {
    out.byte(0x22);
    out.time(integer(data, start(c), length(c)));
    out.byte(0x22);
  };
  const type =
    length(Column.Type) > 0
      ? data.toString('latin1', start(Column.Type), start(Column.Type) + length(Column.Type))
      : '';
  out.ascii(`{"seq":"${seq}","type":"${type}","at":`);
  time(Column.At);
  switch (type) {
    case 'message.created':
      out.ascii(',"id":');
      text(Column.Id);
      out.ascii(',"lineId":');
      text(Column.LineId);
      out.ascii(',"vid":');
      text(Column.Vid);
      out.ascii(',"name":');
      text(Column.Name);
      out.ascii(',"message":{"sender":');
      text(Column.Sender);
      out.ascii(',"msg":');
      text(Column.Msg);
      out.ascii(',"contentType":');
      text(Column.ContentType);
      out.ascii(',"createdAt":');
      time(Column.CreatedAt);
      out.byte(0x7d);
      // `line` was stored as JSON.stringify made it: valid JSON, embedded as it is.
      if (length(Column.Line) !== -1) {
        out.ascii(',"line":');
        out.raw(data, start(Column.Line), length(Column.Line));
      }
      break;
    case 'message.deleted':
      out.ascii(',"id":');
      text(Column.Id);
      out.ascii(',"lineId":');
      text(Column.LineId);
      out.ascii(',"reason":');
      if (length(Column.Reason) === -1) out.ascii('"unsend"');
      else text(Column.Reason);
      break;
    case 'contact.updated':
      out.ascii(',"lineId":');
      text(Column.LineId);
      out.ascii(',"vid":');
      text(Column.Vid);
      out.ascii(',"name":');
      text(Column.Name);
      break;
    case 'contact.erased':
      out.ascii(',"lineId":');
      text(Column.LineId);
      break;
    case 'retention.applied':
      out.ascii(',"before":');
      time(Column.CreatedAt);
      break;
    default:
      // FEED_SQL serves only the types this version knows.
      throw malformed();
  }
  out.byte(0x7d);
}

/** A BIGINT (or INTEGER) value; NULL is 0, as toChange has it. Every value chatlog stores is below 2^53. */
function integer(data: Buffer, start: number, length: number): number {
  return length === -1 ? 0 : copyInteger(data, start, length, malformed);
}

function malformed(): Error {
  return new Error('a page of the change feed: malformed COPY data');
}
