/**
 * The read API's answers on SQLite, read and encoded on worker threads (issue 20: both cores, and
 * writes that never wait behind reads). better-sqlite3 is synchronous: a whole day's answer read
 * and encoded on the event loop holds every other request, a webhook's included, for as long as it
 * takes. Here each thread keeps its own read connections, where SQLite writes the answer's JSON
 * (sqlite.answers.ts, byte for byte the serializer's); the main thread only moves the bytes to the
 * socket. A thread sends a few chunks ahead and then one per chunk the main thread takes, so a
 * slow client holds back its own answer and nothing else; a client that leaves cancels it.
 *
 * The change feed's pages are read and encoded there too, each a single message both ways (its
 * body transferred): a catch-up's server work leaves the event loop as an export's does.
 *
 * Answers are spread over the threads by how many each is streaming now, and a range asked while
 * every thread is idle is read in two halves at once; until one has loaded, they
 * are made on the main thread, the same bytes (`meanwhile`). A thread that dies fails
 * the answers it was streaming (their clients see a cut answer, as with any failure mid-stream)
 * and is started again for the next one.
 */
import type { Worker } from 'node:worker_threads';
import {
  type AnswerCount,
  type AnswerSource,
  countAnswer,
  type FeedJsonPage,
  type FeedSource,
  type MessageQuery,
} from '../../store.js';
import { type ContactIds, joinAnswer } from '../sqlite.answers.js';
import { deserializeError, startThread } from '../sqlite.thread.js';
import {
  type AnswerThreadOptions,
  type FromThread,
  SECOND_HALF_CHUNKS_AHEAD,
  type ToThread,
} from './answers.protocol.js';

interface Incoming {
  chunks: Buffer[];
  done: boolean;
  /** Its count of messages, once done. */
  messages: number;
  error: Error | undefined;
  wake: (() => void) | undefined;
}

interface PendingPage {
  resolve: (page: FeedJsonPage) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  streams: Map<number, Incoming>;
  /** Pages of the change feed asked for and not yet answered. */
  pages: Map<number, PendingPage>;
  /** Its code loaded and its first connection open: until then, answers are made here. */
  ready: boolean;
}

const MIDDLES_KEPT = 10_000;
/**
 * A whole hub's answer asked while the threads still load (just after a start) waits this long at
 * most for one to be ready rather than being made on the main thread: it would stay there to its
 * end (2,000,000 messages: 120-160k messages/s there against 215-285k on a thread, and the main
 * thread busy all along). A thread is ready within about a second; smaller answers do not wait.
 */
const WHOLE_HUB_WAITS_MS = 3_000;

/**
 * Where to split a hub's contact ids [low, high] next, after a split at `middle` gave halves of
 * `first` and `second` bytes: the point that halves them if each half's bytes were spread evenly
 * over its ids, half way there (one answer is not every answer). Always in [low, high - 1].
 */
export function balancedMiddle(
  low: number,
  high: number,
  middle: number,
  first: number,
  second: number,
): number {
  const total = first + second;
  if (total === 0) return middle;
  const share = first / total;
  const target =
    share > 0.5
      ? low + (middle - low) * (0.5 / share)
      : middle + (high - middle) * ((0.5 - share) / (1 - share));
  return Math.min(high - 1, Math.max(low, Math.round((middle + target) / 2)));
}

/** What a thread has in hand: answers it streams and feed pages it reads. */
const load = (thread: Thread) => thread.streams.size + thread.pages.size;

export class AnswerThreads implements AnswerSource, FeedSource {
  private readonly threads: Array<Thread | undefined>;
  private nextId = 1;
  /** Per hub, where its answers' halves split (balancedMiddle), for at most MIDDLES_KEPT hubs. */
  private readonly middles = new Map<string, number>();
  private halvesRead = 0;
  private closed = false;
  /** Called when a thread becomes ready (answers waiting for one). */
  private readyWaiters: Array<() => void> = [];

  constructor(
    private readonly options: AnswerThreadOptions,
    count: number,
    /**
     * The same bytes made on this thread, for the answers asked before any thread is ready (the
     * first one after a start need not wait for a thread to load its code).
     */
    private readonly meanwhile: AnswerSource,
    /** The feed's pages read here, likewise (the store). */
    private readonly feedMeanwhile: FeedSource,
    /**
     * The lowest and highest of a hub's contact ids (an answer's halves run on two threads when both
     * are idle, split between them); undefined when the hub has fewer than two contacts.
     */
    private readonly contactIds?: (hubId: string) => [low: number, high: number] | undefined,
  ) {
    this.threads = Array.from({ length: Math.max(1, count) }, () => undefined);
  }

  /** Starts every thread now rather than at the first answer (a server about to listen). */
  start(): void {
    for (let i = 0; i < this.threads.length; i++) this.thread(i);
  }

  /** Resolves once every thread is ready (tests that must see answers made on a thread). */
  async whenReady(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.threads.every((thread) => thread?.ready)) {
      if (this.closed) throw new Error('the answer threads are closed');
      if (Date.now() > deadline) throw new Error(`the answer threads were not ready within ${timeoutMs} ms`);
      // Again each time: a thread that died while loading is started anew.
      this.start();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** How many answers were read in two halves at once, since the start. */
  get answersInHalves(): number {
    return this.halvesRead;
  }

  /** How many answers the threads are streaming now (feed pages being read not counted). */
  get streaming(): number {
    return this.threads.reduce((n, thread) => n + (thread?.streams.size ?? 0), 0);
  }

  async *json(query: MessageQuery, count?: AnswerCount): AsyncGenerator<Buffer> {
    if (this.closed) throw new Error('the server is stopping');
    // Every thread idle (one client, or a quiet moment): a range's answer in two halves by contact,
    // each read on a thread of its own at once, so that one answer has both cores. Not a whole hub:
    // the stream already outruns a scan of it, and a second thread reading costs ~50 MiB more.
    // The halves are two read transactions: each contact's part of the answer is from one snapshot.
    const idle = this.threads.every((thread) => thread?.ready && load(thread) === 0);
    const bounded = query.fromMs !== undefined || query.toMsExclusive !== undefined;
    const ids = idle && bounded && this.threads.length >= 2 ? this.contactIds?.(query.hubId) : undefined;
    if (ids) {
      const [low, high] = ids;
      const kept = this.middles.get(query.hubId);
      const middle = kept !== undefined && kept >= low && kept < high ? kept : Math.floor((low + high) / 2);
      this.halvesRead += 1;
      const halves = [
        this.open(this.thread(0), query, { from: Number.MIN_SAFE_INTEGER, to: middle }),
        this.open(
          this.thread(1),
          query,
          { from: middle + 1, to: Number.MAX_SAFE_INTEGER },
          SECOND_HALF_CHUNKS_AHEAD,
        ),
      ];
      const bytes: [number, number] = [0, 0];
      try {
        yield* joinAnswer(
          halves.map((half) => half.chunks),
          bytes,
        );
      } finally {
        for (const half of halves) half.cancel();
      }
      for (const half of halves) countAnswer(count, half.messages());
      // Where the next answer of this hub splits: moved so that its halves weigh the same.
      if (this.middles.size >= MIDDLES_KEPT) this.middles.clear();
      this.middles.set(query.hubId, balancedMiddle(low, high, middle, ...bytes));
      return;
    }
    const thread = this.leastBusy() ?? (bounded ? undefined : await this.readyWithin(WHOLE_HUB_WAITS_MS));
    if (!thread) {
      yield* this.meanwhile.json(query, count);
      return;
    }
    const stream = this.open(thread, query);
    try {
      yield* stream.chunks;
    } finally {
      stream.cancel();
    }
    countAnswer(count, stream.messages());
  }

  /**
   * Asks `thread` for an answer (or, with `part`, the pieces of those contacts) now; its chunks as
   * they come, each taken giving the thread credit for one more. `cancel` tells the thread to stop
   * if it has not finished (a client that left), whether or not the chunks were read.
   */
  private open(
    thread: Thread,
    query: MessageQuery,
    part?: ContactIds,
    ahead?: number,
  ): { chunks: AsyncGenerator<Buffer>; cancel: () => void; messages: () => number } {
    const id = this.nextId++;
    const incoming: Incoming = { chunks: [], done: false, messages: 0, error: undefined, wake: undefined };
    thread.streams.set(id, incoming);
    const send = (message: ToThread) => thread.worker.postMessage(message);
    send({ open: id, query, ...(part && { part }), ...(ahead && { ahead }) });
    async function* chunks(): AsyncGenerator<Buffer> {
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
    }
    const cancel = () => {
      if (!incoming.done && !incoming.error && thread.streams.has(id)) send({ cancel: id });
      thread.streams.delete(id);
    };
    return { chunks: chunks(), cancel, messages: () => incoming.messages };
  }

  /** A page of the change feed as its JSON, read and encoded on the least busy thread. */
  pageJson(hubId: string, afterSeq: number, limit: number): Promise<FeedJsonPage> {
    if (this.closed) return Promise.reject(new Error('the server is stopping'));
    const thread = this.leastBusy();
    if (!thread) return this.feedMeanwhile.pageJson(hubId, afterSeq, limit);
    const id = this.nextId++;
    return new Promise<FeedJsonPage>((resolve, reject) => {
      thread.pages.set(id, { resolve, reject });
      thread.worker.postMessage({ feed: id, hubId, afterSeq, limit } satisfies ToThread);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((thread) => thread?.worker.terminate()));
  }

  /** The least busy thread once one is ready, or undefined after `ms` (or when closed). */
  private async readyWithin(ms: number): Promise<Thread | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const thread = this.leastBusy();
      const left = deadline - Date.now();
      if (thread || this.closed || left <= 0) return thread;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.readyWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The ready thread streaming the fewest answers; undefined while none is ready (all started). */
  private leastBusy(): Thread | undefined {
    let best: Thread | undefined;
    for (let i = 0; i < this.threads.length; i++) {
      const thread = this.thread(i);
      if (thread.ready && (!best || load(thread) < load(best))) best = thread;
    }
    return best;
  }

  private thread(index: number): Thread {
    const existing = this.threads[index];
    if (existing) return existing;
    const worker = startThread(new URL('./answers.thread.js', import.meta.url), this.options);
    const thread: Thread = { worker, streams: new Map(), pages: new Map(), ready: false };
    worker.on('message', (message: FromThread) => {
      if ('ready' in message) {
        thread.ready = true;
        for (const wake of this.readyWaiters.splice(0)) wake();
        return;
      }
      const page = thread.pages.get(message.id);
      if (page) {
        thread.pages.delete(message.id);
        if ('page' in message) {
          const { body } = message.page;
          page.resolve({ ...message.page, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) });
        } else if ('error' in message) page.reject(deserializeError(message.error));
        return;
      }
      const incoming = thread.streams.get(message.id);
      if (!incoming) return;
      if ('chunk' in message) {
        const { chunk } = message;
        incoming.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      } else if ('end' in message) {
        incoming.done = true;
        incoming.messages = message.messages;
      } else if ('error' in message) incoming.error = deserializeError(message.error);
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
      for (const page of thread.pages.values()) page.reject(error);
      thread.pages.clear();
    };
    worker.on('error', lost);
    // Its answers and pages failed, not the request: 503, asked again.
    worker.on('exit', (code) =>
      lost(
        Object.assign(new Error(`an answer thread stopped (exit code ${code})`), {
          code: 'CHATLOG_ANSWERS_LOST',
        }),
      ),
    );
    // An idle thread does not keep the process alive; an answer in progress has its socket that does.
    worker.unref();
    this.threads[index] = thread;
    return thread;
  }
}
