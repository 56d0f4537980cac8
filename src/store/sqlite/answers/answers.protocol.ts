/**
 * What the main thread and an answer thread say to each other (answers.threads.ts says why).
 * main → thread: open a stream of an answer's JSON, give it credit for one more chunk, or cancel it;
 * or read a page of the change feed;
 * thread → main: a chunk (its ArrayBuffer transferred, not copied), the end (with its count of
 * messages), a page of the feed
 * (its body transferred), or what went wrong.
 */

import type { FeedJsonPage, MessageQuery } from '../../store.js';
import type { ContactIds } from '../sqlite.answers.js';
import type { SerializedError } from '../sqlite.thread.js';

export type ToThread =
  /**
   * `part`: only these contacts, as bare pieces (half of an answer, the other half on another
   * thread); `ahead`: chunks it may send before the first credit (default CHUNKS_AHEAD).
   */
  | { open: number; query: MessageQuery; part?: ContactIds; ahead?: number }
  | { credit: number }
  | { cancel: number }
  | { feed: number; hubId: string; afterSeq: number; limit: number };

export type FromThread =
  | { ready: true }
  | { id: number; chunk: Uint8Array }
  | { id: number; end: true; messages: number }
  | { id: number; page: FeedJsonPage }
  | { id: number; error: SerializedError };

export interface AnswerThreadOptions {
  /** The SQLite file (`chatlog.db`) the thread reads. */
  file: string;
}

/** Chunks a thread may send ahead of what the main thread has taken (each 64 KiB or more). */
export const CHUNKS_AHEAD = 4;

/**
 * The second half of an answer read in two (answers.threads.ts) is made while the first is sent:
 * it may run this many chunks ahead (8 MiB or more), so that a month's halves are read at once; a
 * longer answer's second half waits, bounded, for its turn.
 */
export const SECOND_HALF_CHUNKS_AHEAD = 128;
