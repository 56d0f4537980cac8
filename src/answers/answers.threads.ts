/**
 * The read API's answers on SQLite, read and encoded on worker threads (issue 20: both cores, and
 * writes that never wait behind reads). better-sqlite3 is synchronous: a whole day's answer read
 * and encoded on the event loop holds every other request, a webhook's included, for as long as it
 * takes. Here each thread keeps its own read connections and turns rows into the answer's JSON
 * bytes (the same serializer as everywhere else); the main thread only moves the bytes to the
 * socket. A thread sends a few chunks ahead and then one per chunk the main thread takes, so a
 * slow client holds back its own answer and nothing else; a client that leaves cancels it.
 *
 * Answers are spread over the threads by how many each is streaming now. A thread that dies fails
 * the answers it was streaming (their clients see a cut answer, as with any failure mid-stream)
 * and is started again for the next one.
 */
import type { Worker } from 'node:worker_threads';
import type { AnswerSource } from '../modules/messages/messages.usecases.js';
import { startThread } from '../store/sqlite/sqlite.writer-thread.js';
import type { MessageQuery } from '../store/store.js';
import type { AnswerThreadOptions, FromThread, ToThread } from './answers.protocol.js';

interface Incoming {
  chunks: Buffer[];
  done: boolean;
  error: Error | undefined;
  wake: (() => void) | undefined;
}

interface Thread {
  worker: Worker;
  streams: Map<number, Incoming>;
}

function toError(error: { name: string; message: string; code?: unknown }): Error {
  const result = new Error(error.message);
  result.name = error.name;
  if (error.code !== undefined) Object.assign(result, { code: error.code });
  return result;
}

export class AnswerThreads implements AnswerSource {
  private readonly threads: Array<Thread | undefined>;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly options: AnswerThreadOptions,
    count: number,
  ) {
    this.threads = Array.from({ length: Math.max(1, count) }, () => undefined);
  }

  /** Starts every thread now rather than at the first answer (a server about to listen). */
  start(): void {
    for (let i = 0; i < this.threads.length; i++) this.thread(i);
  }

  async *json(query: MessageQuery): AsyncGenerator<Buffer> {
    if (this.closed) throw new Error('the server is stopping');
    const thread = this.leastBusy();
    const id = this.nextId++;
    const incoming: Incoming = { chunks: [], done: false, error: undefined, wake: undefined };
    thread.streams.set(id, incoming);
    const send = (message: ToThread) => thread.worker.postMessage(message);
    send({ open: id, query });
    try {
      for (;;) {
        const chunk = incoming.chunks.shift();
        if (chunk) {
          send({ credit: id });
          yield chunk;
          continue;
        }
        if (incoming.error) throw incoming.error;
        if (incoming.done) return;
        await new Promise<void>((resolve) => {
          incoming.wake = resolve;
        });
      }
    } finally {
      if (!incoming.done && !incoming.error && thread.streams.has(id)) send({ cancel: id });
      thread.streams.delete(id);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((thread) => thread?.worker.terminate()));
  }

  private leastBusy(): Thread {
    let best = 0;
    for (let i = 1; i < this.threads.length; i++) {
      if ((this.threads[i]?.streams.size ?? 0) < (this.threads[best]?.streams.size ?? 0)) best = i;
    }
    return this.thread(best);
  }

  private thread(index: number): Thread {
    const existing = this.threads[index];
    if (existing) return existing;
    const worker = startThread(new URL('./answers.thread.js', import.meta.url), this.options);
    const thread: Thread = { worker, streams: new Map() };
    worker.on('message', (message: FromThread) => {
      const incoming = thread.streams.get(message.id);
      if (!incoming) return;
      if ('chunk' in message) {
        const { chunk } = message;
        incoming.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      } else if ('end' in message) incoming.done = true;
      else incoming.error = toError(message.error);
      const wake = incoming.wake;
      incoming.wake = undefined;
      wake?.();
    });
    const lost = (error: Error) => {
      if (this.threads[index] !== thread) return;
      this.threads[index] = undefined;
      for (const incoming of thread.streams.values()) {
        incoming.error = error;
        incoming.wake?.();
      }
      thread.streams.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`an answer thread stopped (exit code ${code})`)));
    // An idle thread does not keep the process alive; an answer in progress has its socket that does.
    worker.unref();
    this.threads[index] = thread;
    return thread;
  }
}
