/**
 * The embedded store's one writer, on a thread of its own (CONTRACT: nothing lost; issue 20: writes
 * never wait behind reads). Every write of the store (a port's writes, sql/engine.ts) is sent to a worker thread
 * that owns the write connection and runs it there: the statements, the search tokens, COMMIT and
 * its fsync all happen off the event loop that answers requests, and requests that arrive while a
 * group commits form the next group (one fsync for all of them).
 *
 * The protocol is small: { id, method, args } in, { id, result } or { id, error } out, and
 * { wake: hubId } for each hub a commit changed (sent before the result, so a write that resolved
 * has woken its long polls). Arguments and results cross as sqlite.thread.ts says. Each side sends
 * what it has for the other as one message a turn of its event loop, an array in order (`Outbox`):
 * a thread message costs about as much as a small write's statements, and under load the writes of
 * many requests, and their results, travel together.
 */
import type { Worker } from 'node:worker_threads';
import { deserializeError, revive, type SerializedError, startThread } from './sqlite.thread.js';

/** What the thread runs besides the Store's write methods. */
export const THREAD_COMMANDS = ['migrate', 'close'] as const;

/**
 * A write method of the ports by its path (`keys.insert`: every one the store names a write,
 * sql/engine.ts), or a command of the thread's. A write's arguments are copied to the thread when
 * the turn of the event loop that called it ends (Outbox), not at the call: a caller must not change
 * them meanwhile, and one object given to two writes of a turn arrives as one.
 */
export type WriterMethod = string | (typeof THREAD_COMMANDS)[number];

export interface WriterOptions {
  dataDir: string;
  searchIndex: boolean;
}

export interface WriterRequest {
  id: number;
  method: WriterMethod;
  args: unknown[];
}

export type WriterReply =
  | { id: number; result: unknown }
  | { id: number; error: SerializedError }
  | { wake: string | undefined };

/**
 * Messages for the other thread, sent together once this turn of the event loop is over (its I/O
 * callbacks included: the requests read in one poll go as one message), in the order given. A
 * message that cannot be cloned (a function in it, say) does not hold back the others of its turn:
 * they are sent one by one, and `refused` is told of each that could not go.
 */
export class Outbox<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(
    private readonly port: { postMessage(items: T[]): void },
    private readonly refused: (item: T, error: Error) => void,
  ) {}

  push(item: T): void {
    this.items.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is waiting now. */
  flush(): void {
    this.scheduled = false;
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    try {
      this.port.postMessage(items);
    } catch {
      for (const item of items) {
        try {
          this.port.postMessage([item]);
        } catch (error) {
          this.refused(item, error as Error);
        }
      }
    }
  }
}

/** The code of the error a write gets when the thread died under it (503: try again). */
export const WRITER_LOST = 'CHATLOG_WRITER_LOST';

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** The main thread's end: calls the writer thread's store and hears of its commits. */
export class WriterThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private outbox: Outbox<WriterRequest> | undefined;

  constructor(
    private readonly options: WriterOptions,
    /** Told of each hub a commit on the thread changed (undefined: any may have). */
    private readonly onWake: (hubId: string | undefined) => void,
  ) {}

  call(method: WriterMethod, args: unknown[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // A call in flight keeps the process alive (an idle thread does not).
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject });
      this.outbox?.push({ id, method, args });
    });
  }

  /** Lets the writes in flight finish, closes the thread's connection, ends the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    const worker = this.worker;
    if (worker) await this.call('close', []).catch(() => undefined);
    this.closed = true;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread(new URL('./sqlite.writer.js', import.meta.url), this.options);
    // Arguments that cannot cross: only that call fails.
    const outbox = new Outbox<WriterRequest>(worker, (request, error) => {
      const pending = this.pending.get(request.id);
      this.pending.delete(request.id);
      pending?.reject(error);
      if (this.pending.size === 0) worker.unref();
    });
    worker.on('message', (replies: WriterReply[]) => {
      for (const reply of replies) {
        if ('wake' in reply) {
          // A listener that throws must not keep the other replies of the turn from their callers.
          try {
            this.onWake(reply.wake);
          } catch (error) {
            queueMicrotask(() => {
              throw error;
            });
          }
          continue;
        }
        const pending = this.pending.get(reply.id);
        if (!pending) continue;
        this.pending.delete(reply.id);
        if (this.pending.size === 0) worker.unref();
        if ('error' in reply) pending.reject(deserializeError(reply.error));
        else pending.resolve(revive(reply.result));
      }
    });
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.outbox = undefined;
      // Whatever was in flight may or may not have committed: its callers are told it failed (a
      // webhook is then retried by LINE and deduplicated), and the next write starts a new thread.
      for (const pending of this.pending.values()) pending.reject(error);
      this.pending.clear();
      this.onWake(undefined);
    };
    worker.on('error', (error) => lost(Object.assign(error, { code: WRITER_LOST })));
    worker.on('exit', (code) =>
      lost(Object.assign(new Error(`the writer thread stopped (exit code ${code})`), { code: WRITER_LOST })),
    );
    // Unref'd while idle: an open store does not keep the process alive (a connection would not).
    worker.unref();
    this.worker = worker;
    this.outbox = outbox;
    return worker;
  }
}
