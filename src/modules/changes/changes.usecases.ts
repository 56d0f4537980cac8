/**
 * The change feed (CONTRACT §9): the checks in their order, then one page of a hub's changes after
 * a cursor, held (long polling) until a change commits on any node or the wait is over.
 */

import type { AppError } from '../../lib/errors.js';
import type { FeedJsonPage, FeedPosition, FeedSource, Store } from '../../store/store.js';
import type { AuditSlot } from '../audit/audit.slot.js';
import { type AuthorizeDeps, authorizePartTwo, partTwoEndpoint } from '../keys/keys.authorize.js';
import { decodeCursor, encodeCursor } from './changes.cursor.js';
import { changeErrors } from './changes.errors.js';
import type { FeedReadAhead } from './changes.read-ahead.js';
import { serializeChange } from './changes.serializer.js';

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 500;
export const MAX_WAIT_SECONDS = 30;
/** At most this many changes left after the cursor: the page is read on this thread (readChanges). */
const READ_HERE_MAX = 64;

/** The codes of the checks in their order (the OpenAPI document shows it). */
export const CHANGES_CHECK_ORDER = [
  'ambiguous_credentials',
  'missing_api_key',
  'invalid_api_key',
  'insufficient_scope',
  'invalid_hub_id',
  'forbidden',
  'duplicate_parameter',
  'invalid_cursor',
  'invalid_limit',
  'invalid_wait',
  'cursor_expired',
  'rate_limited',
] as const satisfies readonly AppError['code'][];

const FEED = partTwoEndpoint('read', 'read the change feed', false);

const SINGLE_VALUED = ['cursor', 'limit', 'wait'] as const;
const WHOLE_NUMBER = /^\d{1,7}$/;

export interface ChangesDeps {
  store: Pick<Store, 'changes'>;
  authorize: AuthorizeDeps;
  /** CHATLOG_CHANGES_KEEP_DAYS, for the words of cursor_expired. */
  keepDays: number;
}

export interface ChangesRequest {
  hubId: string;
  /** The raw query string, without "?". */
  query: string;
  authorization: string | undefined;
  audit?: AuditSlot | undefined;
}

export interface CheckedChangesRequest {
  hubId: string;
  /** The seq the cursor names; undefined: from the oldest change kept. */
  after: number | undefined;
  limit: number;
  waitMs: number;
  /** The feed's position as the checks read it (with a cursor), before any page was read. */
  position?: FeedPosition | undefined;
  /** Headers every answer carries (a limited key's rate-limit fields). */
  headers: Record<string, string>;
}

export async function checkChangesRequest(
  deps: ChangesDeps,
  request: ChangesRequest,
): Promise<CheckedChangesRequest> {
  const params = new URLSearchParams(request.query);
  const { refuse, admit } = await authorizePartTwo(deps.authorize, FEED, {
    hubId: request.hubId,
    params,
    authorization: request.authorization,
    audit: request.audit,
  });
  for (const name of SINGLE_VALUED) {
    if (params.getAll(name).length > 1) throw await refuse(changeErrors.duplicateParameter(name));
  }
  const cursor = params.get('cursor');
  let after: number | undefined;
  if (cursor !== null) {
    after = decodeCursor(request.hubId, cursor);
    if (after === undefined) throw await refuse(changeErrors.invalidCursor());
  }
  const limit = wholeNumber(params.get('limit'), DEFAULT_LIMIT);
  if (limit === undefined || limit < 1 || limit > MAX_LIMIT)
    throw await refuse(changeErrors.invalidLimit(MAX_LIMIT));
  const wait = wholeNumber(params.get('wait'), 0);
  if (wait === undefined || wait > MAX_WAIT_SECONDS)
    throw await refuse(changeErrors.invalidWait(MAX_WAIT_SECONDS));
  let position: FeedPosition | undefined;
  if (after !== undefined) {
    position = await deps.store.changes.position(request.hubId);
    // A seq past the feed's end was never handed out by this store.
    if (!position || after > position.lastSeq) throw await refuse(changeErrors.invalidCursor());
    if (after < position.droppedThrough) throw await refuse(changeErrors.cursorExpired(deps.keepDays));
  }
  const headers = await admit();
  return { hubId: request.hubId, after, limit, waitMs: wait * 1000, position, headers };
}

function wholeNumber(text: string | null, absent: number): number | undefined {
  if (text === null) return absent;
  return WHOLE_NUMBER.test(text) ? Number(text) : undefined;
}

export interface ChangesPage {
  /** The changes as the feed serves them, comma-separated (FeedJsonPage). */
  body: Uint8Array;
  count: number;
  cursor: string;
  hasMore: boolean;
}

/**
 * One page after the request's cursor. With a wait, an empty look subscribes first and is done
 * again each time the hub changes (on any node), until something comes, the time is up, or
 * `signal` aborts (the client left, the server stops). With `readAhead`, a full page starts reading
 * the next one, and the first look takes it when it was read ahead for it.
 */
export async function readChanges(
  store: Pick<Store, 'changes'>,
  request: CheckedChangesRequest,
  signal?: AbortSignal,
  readAhead?: FeedReadAhead,
  source: FeedSource = store.changes,
): Promise<ChangesPage> {
  const { hubId, limit } = request;
  const deadline = Date.now() + request.waitMs;
  // Read before any page of this request: what a page read ahead is checked against (see FeedReadAhead).
  const position = request.position ?? (await store.changes.position(hubId));
  // No cursor: an empty answer hands out the feed's end, as it stood before the look.
  const end = request.after === undefined ? (position?.lastSeq ?? 0) : undefined;
  const after = request.after ?? 0;
  for (let look = 0; ; look++) {
    const remaining = deadline - Date.now();
    const waiter = remaining > 0 && !signal?.aborted ? store.changes.subscribe(hubId) : undefined;
    try {
      // A few changes (a follower at the end, woken by a commit) are read as values and
      // serialized here, as a webhook's are: on SQLite the answer threads run below the main
      // thread's priority and a busy writer would hold the long poll's answer back behind them;
      // on PostgreSQL the page's COPY costs more than the few rows
      // (bench/results/2026-11-27-issue-16-feed-json.md).
      const few = look > 0 || (position !== undefined && position.lastSeq - after <= READ_HERE_MAX);
      const found =
        (look === 0 && position && (await readAhead?.take(hubId, after, limit, position.historyVersion))) ||
        (few ? await pageHere(store, hubId, after, limit) : await source.pageJson(hubId, after, limit));
      if (found.count > 0 || !waiter) {
        const last = found.lastSeq ?? end ?? after;
        if (found.hasMore && position) readAhead?.start(hubId, last, limit, position.historyVersion);
        const { body, count, hasMore } = found;
        return { body, count, cursor: encodeCursor(hubId, last), hasMore };
      }
      const stop = () => waiter.cancel();
      signal?.addEventListener('abort', stop, { once: true });
      try {
        await waiter.wait(remaining);
      } finally {
        signal?.removeEventListener('abort', stop);
      }
    } finally {
      waiter?.cancel();
    }
  }
}

/** A page read as values and serialized on this thread (FeedJsonPage's bytes, the same). */
async function pageHere(
  store: Pick<Store, 'changes'>,
  hubId: string,
  after: number,
  limit: number,
): Promise<FeedJsonPage> {
  const read = await store.changes.page(hubId, after, limit + 1);
  const changes = read.slice(0, limit);
  return {
    body: Buffer.from(changes.map(serializeChange).join(','), 'utf8'),
    count: changes.length,
    lastSeq: changes.at(-1)?.seq,
    hasMore: read.length > limit,
  };
}
