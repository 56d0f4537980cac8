/**
 * An answer thread's entry (answers.threads.ts says why): it reads answers from its own SQLite
 * connections and encodes them as the read API's JSON, many at once, each chunk sent when the main
 * thread has room for it.
 */
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { AnswerCount, MessageQuery } from '../../store.js';
import { type ContactIds, SqliteAnswerReaders } from '../sqlite.answers.js';
import { serializeError } from '../sqlite.thread.js';
import {
  type AnswerThreadOptions,
  CHUNKS_AHEAD,
  type FromThread,
  type ToThread,
} from './answers.protocol.js';

const port = parentPort;
if (!port) throw new Error('answers.thread.js runs as a worker thread');

/**
 * Below the main thread and the writer in the CPU's queue (nice 10, this thread only): when the
 * cores are full, a webhook's reply and small requests go first, long answers take the rest.
 * Linux names a thread by its id in /proc/thread-self; elsewhere the thread keeps its priority.
 */
const ANSWER_THREAD_NICE = 10;
try {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isSafeInteger(tid) && tid > 0) os.setPriority(tid, ANSWER_THREAD_NICE);
} catch {
  // Not Linux, or not allowed: the same priority as the rest.
}
const options = workerData as AnswerThreadOptions;
const readers = new SqliteAnswerReaders(options.file);

interface Stream {
  credit: number;
  cancelled: boolean;
  wake: (() => void) | undefined;
}
const streams = new Map<number, Stream>();
const post = (message: FromThread, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

/** Whether `bytes` is the whole of its ArrayBuffer, so that transferring it moves nothing else. */
const ownsBuffer = (bytes: Uint8Array) =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;

async function answer(
  id: number,
  query: MessageQuery,
  part: ContactIds | undefined,
  stream: Stream,
): Promise<void> {
  const count: AnswerCount = {};
  try {
    for await (const chunk of readers.json(query, part, count)) {
      while (stream.credit === 0 && !stream.cancelled) {
        await new Promise<void>((resolve) => {
          stream.wake = resolve;
        });
      }
      // Leaving the loop ends the generators: the cursor closes and its connection is free again.
      if (stream.cancelled) return;
      stream.credit -= 1;
      // Transferred, not copied, when the chunk is its own ArrayBuffer (as SQLite's pieces and
      // chunks made by concatenation are); a small one may share Node's pool and is copied.
      const own = ownsBuffer(chunk) ? chunk : new Uint8Array(chunk);
      post({ id, chunk: own }, [own.buffer as ArrayBuffer]);
    }
    post({ id, end: true, messages: count.messages ?? 0 });
  } catch (error) {
    if (!stream.cancelled) post({ id, error: serializeError(error) });
  } finally {
    streams.delete(id);
  }
}

function feedPage(id: number, hubId: string, afterSeq: number, limit: number): void {
  try {
    const page = readers.feedJson(hubId, afterSeq, limit);
    // A buffer of its own (a small one may share Node's pool), so that it can be transferred.
    const body = ownsBuffer(page.body) ? page.body : new Uint8Array(page.body);
    post({ id, page: { ...page, body } }, [body.buffer as ArrayBuffer]);
  } catch (error) {
    post({ id, error: serializeError(error) });
  }
}

port.on('message', (message: ToThread) => {
  if ('feed' in message) {
    feedPage(message.feed, message.hubId, message.afterSeq, message.limit);
    return;
  }
  if ('open' in message) {
    const stream: Stream = { credit: message.ahead ?? CHUNKS_AHEAD, cancelled: false, wake: undefined };
    streams.set(message.open, stream);
    void answer(message.open, message.query, message.part, stream);
    return;
  }
  const stream = streams.get('credit' in message ? message.credit : message.cancel);
  if (!stream) return;
  if ('credit' in message) stream.credit += 1;
  else stream.cancelled = true;
  const wake = stream.wake;
  stream.wake = undefined;
  wake?.();
});

post({ ready: true });
