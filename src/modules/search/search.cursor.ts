/**
 * Search cursors (CONTRACT §12): opaque to clients, naming the last result given (its createdAt and
 * row id), bound to the hub and to the query. `s1.` then base64url of
 * `<hubId>:<createdAt>:<rowId>:<query hash>`; a cursor of another hub or another q is not this one's.
 */
import { createHash } from 'node:crypto';

const PREFIX = 's1.';
const BODY = /^(\d{1,20}):(-?\d{1,16}):(\d{1,16}):([0-9a-f]{16})$/;

export interface SearchPosition {
  createdAt: number;
  rowId: number;
}

/** The query's normalised terms, hashed: a cursor does not carry what was searched. */
const queryHash = (terms: readonly string[]) =>
  createHash('sha256').update(terms.join('\u0000'), 'utf8').digest('hex').slice(0, 16);

export function encodeSearchCursor(hubId: string, terms: readonly string[], at: SearchPosition): string {
  const body = `${hubId}:${at.createdAt}:${at.rowId}:${queryHash(terms)}`;
  return PREFIX + Buffer.from(body, 'utf8').toString('base64url');
}

/** The position a cursor names; undefined when it is malformed, or of another hub or query. */
export function decodeSearchCursor(
  hubId: string,
  terms: readonly string[],
  cursor: string,
): SearchPosition | undefined {
  if (!cursor.startsWith(PREFIX) || cursor.length > 128) return undefined;
  const encoded = cursor.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  const text = Buffer.from(encoded, 'base64url').toString('utf8');
  // Only the one spelling encodeSearchCursor writes.
  if (Buffer.from(text, 'utf8').toString('base64url') !== encoded) return undefined;
  const match = BODY.exec(text);
  if (!match || match[1] !== hubId || match[4] !== queryHash(terms)) return undefined;
  const createdAt = Number(match[2]);
  const rowId = Number(match[3]);
  if (!Number.isSafeInteger(createdAt) || !Number.isSafeInteger(rowId)) return undefined;
  return { createdAt, rowId };
}
