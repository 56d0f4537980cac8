/**
 * What both content stores check before a hub id or a hash names a file or a row, the error a
 * too-large source gets (a path or key is never built from an unchecked string), and how a put
 * holds its source.
 */
import type { Readable } from 'node:stream';

/** Hub ids are HubSpot portal ids: digits only (as src/modules/hubs checks them on the way in). */
const HUB_ID = /^[0-9]{1,20}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** Throws unless `hubId` is a hub id: a caller bug, never a client's input reaching here unchecked. */
export function checkHubId(hubId: string): string {
  if (!HUB_ID.test(hubId)) throw new Error(`not a hub id: ${JSON.stringify(hubId.slice(0, 40))}`);
  return hubId;
}

/** Whether `sha256` is a lowercase hex SHA-256 (anything else names no blob). */
export function isSha256(sha256: string): boolean {
  return SHA256.test(sha256);
}

export interface ContentTooLargeError extends Error {
  code: 'ECONTENTTOOLARGE';
}

export function contentTooLarge(maxBytes: number): ContentTooLargeError {
  return Object.assign(new Error(`the content is larger than ${maxBytes} bytes`), {
    code: 'ECONTENTTOOLARGE' as const,
  });
}

/** Throws unless `range` is an inclusive range within a blob of `size` bytes (the route computes it). */
export function checkRange(range: { start: number; end: number }, size: number): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end >= size) {
    throw new RangeError(`bytes ${start}-${end} are not within a blob of ${size} bytes`);
  }
}

/** A source's chunk as bytes (a source in string mode gives strings). */
export function asBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk);
  throw new TypeError('a content source must give bytes');
}

/** How long a total is reused (it is for metrics, and a walk of the files is not free). */
export const TOTAL_BYTES_TTL_MS = 5_000;

function ignore(): void {}

/**
 * A put of either store: `write` reads `source` to its end. The source may fail while the store gets
 * ready to read it: its error is kept (`write` rethrows it) instead of being thrown as an uncaught
 * exception; and a source the store stopped reading (too large, a failed write) is not left open.
 */
export async function putFrom<T>(source: Readable, write: () => Promise<T>): Promise<T> {
  source.on('error', ignore);
  try {
    return await write();
  } catch (error) {
    if (!source.destroyed) source.destroy();
    throw error;
  } finally {
    source.off('error', ignore);
  }
}
