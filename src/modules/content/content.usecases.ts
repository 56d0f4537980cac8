/**
 * Serving kept content (CONTRACT §11): the checks in their order, then what there is to answer
 * for a message: its bytes (a blob of the content store), or why not yet (202) or not (404).
 */

import type { AppError } from '../../lib/errors.js';
import type { ContentStore } from '../../store/content/content-store.js';
import type { ContentItem, Hub, Store } from '../../store/store.js';
import type { AuditSlot } from '../audit/audit.slot.js';
import { type AuthorizeDeps, authorizePartTwo, partTwoEndpoint } from '../keys/keys.authorize.js';
import { contentErrors, NOT_FOUND_REASONS } from './content.errors.js';

/** The codes of the checks in their order (the OpenAPI document shows it). */
export const CONTENT_CHECK_ORDER = [
  'ambiguous_credentials',
  'missing_api_key',
  'invalid_api_key',
  'insufficient_scope',
  'invalid_hub_id',
  'forbidden',
  'duplicate_parameter',
  'rate_limited',
  'content_not_found',
  'content_pending',
] as const satisfies readonly AppError['code'][];

const CONTENT = partTwoEndpoint('read', 'read content', true);

const MESSAGE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A pending download is asked about again after this at most (the worker may be far behind). */
const MAX_RETRY_AFTER_SECONDS = 60;

export interface ContentDeps {
  store: Pick<Store, 'content'>;
  blobs: ContentStore;
  authorize: AuthorizeDeps;
  clock: () => number;
}

export interface ContentRequest {
  hubId: string;
  messageId: string;
  /** The raw query string, without "?". */
  query: string;
  authorization: string | undefined;
  audit?: AuditSlot | undefined;
}

/** What to serve: the item (done) and its blob's size; plus the headers every answer carries. */
export interface ServableContent {
  item: ContentItem & { sha256: string; mediaType: string };
  size: number;
  headers: Record<string, string>;
}

export async function findContent(deps: ContentDeps, request: ContentRequest): Promise<ServableContent> {
  const params = new URLSearchParams(request.query);
  const { hub, refuse, admit } = await authorizePartTwo(deps.authorize, CONTENT, {
    hubId: request.hubId,
    params,
    authorization: request.authorization,
    audit: request.audit,
  });
  if (params.getAll('apikey').length > 1) throw await refuse(contentErrors.duplicateParameter('apikey'));
  return servableContent(deps, hub, request.messageId, await admit());
}

/**
 * A message's kept content, for a caller already allowed to read the hub (a key above, or the
 * account screen's session): the item and its size, or the error that says why not.
 */
export async function servableContent(
  deps: Pick<ContentDeps, 'store' | 'blobs' | 'clock'>,
  hub: Pick<Hub, 'id' | 'lineChannelAccessTokenEncrypted'>,
  messageId: string,
  headers: Record<string, string> = {},
): Promise<ServableContent> {
  const request = { hubId: hub.id, messageId };
  const withHeaders = (error: AppError) => error.withHeaders(headers);
  const item = MESSAGE_ID.test(request.messageId)
    ? await deps.store.content.get(request.hubId, request.messageId)
    : undefined;
  if (!item) throw withHeaders(contentErrors.notFound(NOT_FOUND_REASONS.unknown));
  if (item.state === 'gone') throw withHeaders(contentErrors.notFound(NOT_FOUND_REASONS.gone));
  if (item.state === 'failed') throw withHeaders(contentErrors.notFound(NOT_FOUND_REASONS.failed));
  if (item.state === 'pending' || item.sha256 === null || item.mediaType === null) {
    if (!hub.lineChannelAccessTokenEncrypted)
      throw withHeaders(contentErrors.notFound(NOT_FOUND_REASONS.noToken));
    const seconds = Math.ceil((item.nextAttemptAt - deps.clock()) / 1000);
    throw withHeaders(contentErrors.pending(Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds))));
  }
  const size = await deps.blobs.stat(request.hubId, item.sha256);
  if (size === undefined) {
    // Its bytes went a moment ago (a release just then): downloaded again.
    await deps.store.content.requeueMissing(request.hubId, item.sha256, deps.clock());
    throw withHeaders(contentErrors.pending(1));
  }
  return { item: { ...item, sha256: item.sha256, mediaType: item.mediaType }, size, headers };
}
