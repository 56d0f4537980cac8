/**
 * Where the bytes of media messages are kept (CONTRACT §11), by their SHA-256, per hub: the same
 * bytes are kept once per hub however many messages hold them, and never served through another
 * hub. Two implementations behind this one interface:
 *
 * - `FileContentStore` (content-store.files.ts): files under the data directory, the embedded
 *   default. A blob is written to a temporary file, fsynced, then renamed to its hash, so a crash
 *   never leaves half a file under a hash.
 * - `PostgresContentStore` (content-store.postgres.ts): chunks in PostgreSQL
 *   (`CHATLOG_CONTENT_STORE=postgres`, the default with `DATABASE_URL`), so several nodes need no
 *   shared disk; streamed both ways, never a whole blob in memory.
 *
 * Which messages hold which blob is the store's business (the `content_items` table): this layer
 * only keeps bytes. `remove` is called once the last message of the hub that held the blob is gone.
 */
import type { Readable } from 'node:stream';

export interface StoredBlob {
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  size: number;
}

/** An inclusive byte range, as HTTP's `Range: bytes=start-end` (end ≤ size - 1). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface ContentStore {
  /** 'files' or 'postgres', for status lines and metrics. */
  readonly kind: 'files' | 'postgres';
  /**
   * Reads `source` to its end and keeps its bytes for the hub; resolves with their hash and size
   * only once they are durable (a crash after this resolves loses nothing). The same bytes put
   * twice are kept once. When `source` fails or ends early, nothing is kept under any hash and the
   * promise rejects with the source's error. `maxBytes`, when given, rejects a larger source
   * (code 'ECONTENTTOOLARGE') without keeping anything.
   */
  put(hubId: string, source: Readable, options?: { maxBytes?: number }): Promise<StoredBlob>;
  /** The blob's size, or undefined when the hub has no such blob. */
  stat(hubId: string, sha256: string): Promise<number | undefined>;
  /**
   * A stream of the blob's bytes (or of one range of them), or undefined when the hub has no such
   * blob. The stream reads as the consumer reads (back-pressure), a bounded amount in memory.
   */
  read(hubId: string, sha256: string, range?: ByteRange): Promise<Readable | undefined>;
  /** Deletes the hub's blob (no error when it is already gone). */
  remove(hubId: string, sha256: string): Promise<void>;
  /** Every blob the hub has (for a sweep of blobs no message holds, and for erasure of a hub). */
  list(hubId: string): AsyncIterable<StoredBlob>;
  /** Bytes kept for all hubs, for metrics. */
  totalBytes(): Promise<number>;
  close(): Promise<void>;
}
