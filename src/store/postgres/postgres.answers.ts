/**
 * The read API's answers on PostgreSQL, written as bytes: the answer's own rows (STREAM_SQL,
 * STREAM_BY_TIME_SQL) come by `COPY (…) TO STDOUT (FORMAT binary)`, and each text value goes into
 * the JSON as the UTF-8 bytes PostgreSQL sent, escaped where JSON needs it (JsonBytes).
 *
 * Before, a server-side cursor sent 512 rows at a time, node-postgres decoded every value into a
 * JavaScript string, and the serializer encoded them again, on the event loop, while PostgreSQL
 * waited for the next fetch. Now PostgreSQL streams the whole answer while this process writes it,
 * each on its own core. Letting PostgreSQL write the JSON itself (to_json, to_char) was measured
 * first: it doubled PostgreSQL's time for a day (27 → 54 ms), and PostgreSQL is what a day waits
 * for (bench/results/2026-11-28-issue-20-postgres.md).
 *
 * The bytes are the serializer's (modules/messages/messages.serializer.ts): test/store/answers-json.test.ts
 * compares them on hostile strings, times from year 0 to 9999 and random ranges, by both plans.
 * COPY takes no parameters: the hub id is quoted by the driver and the bounds are checked integers.
 */
import type { Readable } from 'node:stream';
import type pg from 'pg';
import * as answer from '../sql/answers.js';
import { type AnswerCount, countAnswer, type MessageQuery } from '../store.js';
import { copyHeaderEnd, copyInteger, readTuple, TRAILER } from './postgres.copy-binary.js';
import { copyOut } from './postgres.copy-out.js';
import { JsonBytes } from './postgres.json-bytes.js';

/** Chunks of the answer: about this many bytes each (the serializer's size). */
const CHUNK_BYTES = 64 * 1024;
/** Bytes written ahead of the client at most: the COPY is paused beyond this. */
const READ_AHEAD_BYTES = 1024 * 1024;

/** answer.COLUMNS, in its order. */
const Column = {
  ContactId: 0,
  LineId: 1,
  Vid: 2,
  Name: 3,
  Sender: 4,
  Msg: 5,
  ContentType: 6,
  CreatedAt: 7,
} as const;
const COLUMNS = 8;

/** The answer's keys and brackets, as the serializer writes them around the values. */
const FIRST_OPENING = Buffer.from('[{"lineId":');
const NEXT_OPENING = Buffer.from(']},{"lineId":');
const VID = Buffer.from(',"vid":');
const NAME = Buffer.from(',"name":');
const MESSAGES = Buffer.from(',"messages":[{"sender":');
const NEXT_MESSAGE = Buffer.from(',{"sender":');
const MSG = Buffer.from(',"msg":');
const CONTENT_TYPE = Buffer.from(',"contentType":');
const CREATED_AT = Buffer.from(',"createdAt":"');
const MESSAGE_END = Buffer.from('"}');

/** The COPY that sends the answer's rows: `byTime` (a short range) or `byContact`, its $1-$3 given. */
export function answerCopySql(
  escapeLiteral: (text: string) => string,
  statement: string,
  query: MessageQuery,
): string {
  const [hubId, from, to] = answer.bounds(query);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new Error('answerCopySql: not a range');
  const values = [escapeLiteral(hubId), String(from), String(to)];
  const sql = statement.replace(/\$([1-3])/g, (_, n: string) => values[Number(n) - 1] as string);
  return `COPY (${sql}) TO STDOUT (FORMAT binary)`;
}

function malformed(): Error {
  return new Error('an answer: malformed COPY data');
}

/** A BIGINT of the COPY. */
function int64(data: Buffer, start: number, length: number): number {
  if (length !== 8) throw malformed();
  return copyInteger(data, start, length, malformed);
}

/**
 * Writes the answer's rows from a binary COPY's bytes, in whatever pieces they come: each complete
 * row as JSON, the bytes of a row cut by a piece's end kept for the next; each CHUNK_BYTES or more
 * to `onChunk`.
 */
class AnswerWriter {
  private static readonly ROOM = CHUNK_BYTES + 16 * 1024;
  private out = new JsonBytes(AnswerWriter.ROOM);
  private pending: Buffer | undefined;
  private headerRead = false;
  private contactId: number | undefined;
  private ended = false;
  /** The rows written. */
  rowCount = 0;
  private readonly starts = new Int32Array(COLUMNS);
  private readonly lengths = new Int32Array(COLUMNS);

  constructor(private readonly onChunk: (chunk: Buffer) => void) {}

  /** Writes every complete row of what came so far and `piece`. */
  write(piece: Buffer): void {
    if (this.ended) throw malformed();
    const data = this.pending ? Buffer.concat([this.pending, piece]) : piece;
    let at = 0;
    if (!this.headerRead) {
      const end = copyHeaderEnd(data, malformed);
      if (end === undefined) {
        this.pending = data;
        return;
      }
      at = end;
      this.headerRead = true;
    }
    at = this.rows(data, at);
    this.pending = at < data.length ? data.subarray(at) : undefined;
  }

  /** The answer's last bytes, once the COPY has ended. */
  end(): Buffer {
    if (!this.ended || this.pending) throw malformed();
    this.out.ascii(this.contactId === undefined ? '[]' : ']}]');
    return this.out.bytes();
  }

  /** Writes the complete rows of `data` from `at`; returns where the first incomplete one starts. */
  private rows(data: Buffer, at: number): number {
    const { starts, lengths, out } = this;
    for (;;) {
      const next = readTuple(data, at, COLUMNS, starts, lengths, malformed);
      if (next === undefined) return at;
      if (next === TRAILER) {
        this.ended = true;
        return data.length;
      }
      at = next;
      const contactId = int64(data, starts[Column.ContactId] as number, lengths[Column.ContactId] as number);
      this.rowCount += 1;
      if (contactId !== this.contactId) {
        out.constant(this.contactId === undefined ? FIRST_OPENING : NEXT_OPENING);
        out.quoted(data, starts[Column.LineId] as number, lengths[Column.LineId] as number);
        out.constant(VID);
        out.quoted(data, starts[Column.Vid] as number, lengths[Column.Vid] as number);
        out.constant(NAME);
        out.quoted(data, starts[Column.Name] as number, lengths[Column.Name] as number);
        out.constant(MESSAGES);
        this.contactId = contactId;
      } else {
        out.constant(NEXT_MESSAGE);
      }
      out.quoted(data, starts[Column.Sender] as number, lengths[Column.Sender] as number);
      out.constant(MSG);
      out.quoted(data, starts[Column.Msg] as number, lengths[Column.Msg] as number);
      out.constant(CONTENT_TYPE);
      out.quoted(data, starts[Column.ContentType] as number, lengths[Column.ContentType] as number);
      out.constant(CREATED_AT);
      out.time(int64(data, starts[Column.CreatedAt] as number, lengths[Column.CreatedAt] as number));
      out.constant(MESSAGE_END);
      if (out.length >= CHUNK_BYTES) this.onChunk(out.take(AnswerWriter.ROOM));
    }
  }
}

/**
 * The answer's JSON in chunks of about CHUNK_BYTES, written from the binary COPY `stream` (of any
 * pieces). Writes ahead of the consumer by READ_AHEAD_BYTES at most (the stream paused beyond).
 * `count` is told the rows once all are written. Rejects with the stream's error, or when its data is not the answer's rows; returning early
 * destroys it.
 */
export async function* answerFromCopy(stream: Readable, count?: AnswerCount): AsyncGenerator<Buffer> {
  const ready: Buffer[] = [];
  let readyBytes = 0;
  const writer = new AnswerWriter((chunk) => {
    ready.push(chunk);
    readyBytes += chunk.length;
  });
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const onPiece = (piece: Buffer) => {
    try {
      writer.write(piece);
    } catch (error) {
      failure ??= error as Error;
      stream.destroy();
    }
    if (readyBytes >= READ_AHEAD_BYTES) stream.pause();
    // The consumer is woken for a chunk, not for each row's piece (a promise per row cost more than the row).
    if (ready.length > 0 || failure) wake?.();
  };
  stream.on('data', onPiece);
  stream.once('end', () => {
    ended = true;
    wake?.();
  });
  stream.once('error', (error: Error) => {
    failure ??= error;
    wake?.();
  });
  stream.once('close', () => {
    if (!ended) failure ??= new Error("an answer's COPY closed before its end");
    wake?.();
  });
  try {
    for (;;) {
      if (ready.length > 0) {
        const chunk = ready.shift() as Buffer;
        readyBytes -= chunk.length;
        if (readyBytes < READ_AHEAD_BYTES && stream.isPaused()) stream.resume();
        yield chunk;
        continue;
      }
      if (failure) throw failure;
      if (ended) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    yield writer.end();
    countAnswer(count, writer.rowCount);
  } finally {
    stream.off('data', onPiece);
    if (!ended) stream.destroy();
  }
}

/** The answer to `query` by `statement` (its $1-$3 the hub and bounds), read on `client` by COPY. */
export function answerJson(
  client: pg.PoolClient,
  statement: string,
  query: MessageQuery,
  count?: AnswerCount,
): AsyncGenerator<Buffer> {
  const sql = answerCopySql((text) => client.escapeLiteral(text), statement, query);
  return answerFromCopy(client.query(copyOut(sql)), count);
}
