/**
 * Search (CONTRACT §12): the checks in their order, then one page of the hub's messages that hold
 * every term, newest first. What matches and how the index finds it: ../../store/sql/search.ts.
 */

import { dayRangeInZone } from '../../lib/calendar.js';
import type { AppError } from '../../lib/errors.js';
import { normaliseText, type SearchHit, type Store } from '../../store/store.js';
import type { AuditSlot } from '../audit/audit.slot.js';
import { type AuthorizeDeps, authorizePartTwo, partTwoEndpoint } from '../keys/keys.authorize.js';
import { readDays } from '../messages/messages.checks.js';
import { messageErrors } from '../messages/messages.errors.js';
import { decodeSearchCursor, encodeSearchCursor, type SearchPosition } from './search.cursor.js';
import { searchErrors } from './search.errors.js';

export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;
export const MAX_TERMS = 16;
export const MAX_TERM_CHARS = 64;

/** The codes of the checks in their order (the OpenAPI document shows it). */
export const SEARCH_CHECK_ORDER = [
  'ambiguous_credentials',
  'missing_api_key',
  'invalid_api_key',
  'insufficient_scope',
  'invalid_hub_id',
  'forbidden',
  'duplicate_parameter',
  'invalid_query',
  'invalid_date',
  'invalid_range',
  'invalid_time_zone',
  'invalid_limit',
  'invalid_cursor',
  'rate_limited',
] as const satisfies readonly AppError['code'][];

/** Reads the hub: its time zone reads the days. */
const SEARCH = partTwoEndpoint('read', 'search messages', true);

const SINGLE_VALUED = ['q', 'from', 'to', 'tz', 'lineId', 'limit', 'cursor'] as const;
const WHOLE_NUMBER = /^\d{1,7}$/;

export interface SearchDeps {
  store: Pick<Store, 'search'>;
  authorize: AuthorizeDeps;
}

export interface SearchRequest {
  hubId: string;
  /** The raw query string, without "?". */
  query: string;
  authorization: string | undefined;
  audit?: AuditSlot | undefined;
}

export interface CheckedSearchRequest {
  hubId: string;
  /** Normalised (NFKC, lower case), each 1 to MAX_TERM_CHARS characters. */
  terms: string[];
  fromMs: number | undefined;
  toMsExclusive: number | undefined;
  lineId: string | undefined;
  limit: number;
  /** The last result of the previous page; undefined: from the newest message. */
  after: SearchPosition | undefined;
  /** Headers every answer carries (a limited key's rate-limit fields). */
  headers: Record<string, string>;
}

/** `q` as terms (CONTRACT §12): normalised, split on white space; undefined when out of bounds. */
export function termsOf(q: string | null): string[] | undefined {
  if (q === null) return undefined;
  const terms = normaliseText(q)
    .split(/\s+/u)
    .filter((term) => term !== '');
  if (terms.length < 1 || terms.length > MAX_TERMS) return undefined;
  // Characters are code points: an emoji is one, as a user counts it more nearly than UTF-16 does.
  if (terms.some((term) => Array.from(term).length > MAX_TERM_CHARS)) return undefined;
  return terms;
}

export async function checkSearchRequest(
  deps: SearchDeps,
  request: SearchRequest,
): Promise<CheckedSearchRequest> {
  const params = new URLSearchParams(request.query);
  const access = await authorizePartTwo(deps.authorize, SEARCH, {
    hubId: request.hubId,
    params,
    authorization: request.authorization,
    audit: request.audit,
  });
  const { hub, refuse } = access;
  for (const name of SINGLE_VALUED) {
    if (params.getAll(name).length > 1) throw await refuse(messageErrors.duplicateParameter(name));
  }
  const terms = termsOf(params.get('q'));
  if (!terms) throw await refuse(searchErrors.invalidQuery(MAX_TERMS, MAX_TERM_CHARS));

  const { from, to, timeZone } = await readDays(params, hub.timeZone, refuse);

  const limitText = params.get('limit');
  const limit = limitText === null ? DEFAULT_LIMIT : WHOLE_NUMBER.test(limitText) ? Number(limitText) : 0;
  if (limit < 1 || limit > MAX_LIMIT) throw await refuse(searchErrors.invalidLimit(MAX_LIMIT));

  const cursor = params.get('cursor');
  let after: SearchPosition | undefined;
  if (cursor !== null) {
    after = decodeSearchCursor(request.hubId, terms, cursor);
    if (!after) throw await refuse(searchErrors.invalidCursor());
  }

  const headers = await access.admit();
  return {
    hubId: request.hubId,
    terms,
    ...dayRangeInZone(from, to, timeZone),
    lineId: params.get('lineId') ?? undefined,
    limit,
    after,
    headers,
  };
}

export interface SearchPage {
  results: SearchHit[];
  cursor: string;
  hasMore: boolean;
}

/** One page: follow `cursor` for older results; with none found, the request's position is handed back. */
export async function search(
  store: Pick<Store, 'search'>,
  request: CheckedSearchRequest,
): Promise<SearchPage> {
  const { hits, hasMore } = await store.search.page({
    hubId: request.hubId,
    terms: request.terms,
    fromMs: request.fromMs,
    toMsExclusive: request.toMsExclusive,
    lineId: request.lineId,
    before: request.after,
    limit: request.limit,
  });
  const last = hits.at(-1);
  const position = last
    ? { createdAt: last.message.createdAt, rowId: last.rowId }
    : (request.after ?? { createdAt: Number.MAX_SAFE_INTEGER, rowId: Number.MAX_SAFE_INTEGER });
  return { results: hits, cursor: encodeSearchCursor(request.hubId, request.terms, position), hasMore };
}
