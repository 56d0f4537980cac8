/**
 * What the main thread and an answer thread say to each other (answers.threads.ts says why).
 * main → thread: open a stream of an answer's JSON, give it credit for one more chunk, or cancel it;
 * or read a page of the change feed;
 * thread → main: a chunk (its ArrayBuffer transferred, not copied), the end, a page of the feed
 * (its body transferred), or what went wrong.
 */

import type { SerializedError } from '../store/sqlite/sqlite.thread.js';
import type { FeedJsonPage, MessageQuery } from '../store/store.js';

export type ToThread =
  | { open: number; query: MessageQuery }
  | { credit: number }
  | { cancel: number }
  | { feed: number; hubId: string; afterSeq: number; limit: number };

export type FromThread =
  | { ready: true }
  | { id: number; chunk: Uint8Array }
  | { id: number; end: true }
  | { id: number; page: FeedJsonPage }
  | { id: number; error: SerializedError };

export interface AnswerThreadOptions {
  /** The SQLite file (`chatlog.db`) the thread reads. */
  file: string;
}

/** Chunks a thread may send ahead of what the main thread has taken (each about 64 KiB). */
export const CHUNKS_AHEAD = 4;
