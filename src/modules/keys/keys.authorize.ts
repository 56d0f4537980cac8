/**
 * Key authorisation, written once for every endpoint that takes an API key: the read API (key in
 * `apikey`), the ingest API (`Authorization: Bearer`), and the endpoints of CONTRACT §9-13 (either).
 *
 * The checks run in CONTRACT §1's order: the key is missing (1), not a live key of the endpoint's
 * scope (2), the hub id is not one (3), the key is not the hub's (4). The endpoint then checks its
 * own parameters, each refusal made through `access.refuse`, and calls `access.admit()` last: the
 * rate limit is always the final check (§1 row 8). Each endpoint words its refusals itself
 * (`KeyRefusals`, in keys.errors.ts), so today's answers keep their sentences; §9-13's will answer a
 * key of the wrong scope with 403 insufficient_scope through their own `otherScope`.
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../../lib/errors.js';
import { rawQueryOf } from '../../lib/http.js';
import type { ApiKeyRecord, Hub, KeyScope, RateLimit } from '../../store/store.js';
import type { AuditSlot } from '../audit/audit.slot.js';
import { hubErrors } from '../hubs/hubs.errors.js';
import type { HubService } from '../hubs/hubs.usecases.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import { type KeyRefusals, partTwoKeyErrors } from './keys.errors.js';
import type { RateLimiter } from './keys.ratelimit.js';
import type { KeyService } from './keys.usecases.js';

/** A key as the request presented it, before anything is looked up. */
export type PresentedKey =
  | { kind: 'none' }
  /** Something stands where a key goes, but not a key (a header not `Bearer <key>`). */
  | { kind: 'unreadable' }
  /** `apikey` given more than once: not one key (invalid_api_key, in words that say so). */
  | { kind: 'repeated' }
  | { kind: 'key'; key: string };

/** `apikey` in the query (the read API): absent or empty is none; given more than once, repeated. */
export function keyInQuery(params: URLSearchParams): PresentedKey {
  const given = params.getAll('apikey');
  if (given.length === 0 || (given.length === 1 && given[0] === '')) return { kind: 'none' };
  if (given.length > 1) return { kind: 'repeated' };
  return { kind: 'key', key: given[0] ?? '' };
}

/** `Authorization: Bearer <key>` (the ingest API): absent or blank is none. */
export function keyInBearer(authorization: string | undefined): PresentedKey {
  if (authorization === undefined || authorization.trim() === '') return { kind: 'none' };
  const key = /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
  return key ? { kind: 'key', key } : { kind: 'unreadable' };
}

/**
 * The endpoints of CONTRACT §9-13: the key in `apikey` or as `Authorization: Bearer <key>`; both at
 * once is `ambiguous` (400 ambiguous_credentials, before any other check).
 */
export function keyInQueryOrBearer(
  params: URLSearchParams,
  authorization: string | undefined,
): PresentedKey | { kind: 'ambiguous' } {
  const inQuery = params.has('apikey');
  const inHeader = authorization !== undefined && authorization.trim() !== '';
  if (inQuery && inHeader) return { kind: 'ambiguous' };
  return inHeader ? keyInBearer(authorization) : keyInQuery(params);
}

/** How one endpoint is guarded: the scope it needs and the words of its refusals. */
export interface KeyedEndpoint {
  scope: KeyScope;
  /** Other scopes the endpoint also takes (a send's status: send or read). */
  alsoScopes?: readonly KeyScope[];
  refusals: KeyRefusals;
  /** The hub must exist (the endpoint reads its settings), not only be the key's. */
  readsHub: boolean;
  /**
   * Refusals made once the key is known carry its rate-limit fields (the read API's do: "every
   * response", CONTRACT §5); the ingest API's carry them only once admitted.
   */
  limitFieldsOnRefusals: boolean;
}

export interface AuthorizeDeps {
  verifyKey(presented: string): Promise<ApiKeyRecord | undefined>;
  getHub(hubId: string): Promise<Hub | undefined>;
  consumeRateLimit(
    keyId: string,
    limit: RateLimit,
  ): Promise<{ allowed: boolean; headers: Record<string, string> }>;
  peekRateLimit(keyId: string, limit: RateLimit): Promise<Record<string, string>>;
}

export function createAuthorizeDeps(services: {
  keys: KeyService;
  hubs: HubService;
  rateLimiter: RateLimiter;
}): AuthorizeDeps {
  return {
    verifyKey: (presented) => services.keys.verify(presented),
    getHub: (hubId) => services.hubs.get(hubId),
    consumeRateLimit: (keyId, limit) => services.rateLimiter.consume(keyId, limit),
    peekRateLimit: (keyId, limit) => services.rateLimiter.peek(keyId, limit),
  };
}

/** A key that passed rows 1 to 4, for one request. */
export interface Access<H extends Hub | undefined = Hub | undefined> {
  key: ApiKeyRecord;
  /** The hub, when the endpoint reads it (KeyedEndpoint.readsHub); else undefined. */
  hub: H;
  /** The endpoint's own refusal, as this key's answers carry it. */
  refuse(error: AppError): Promise<AppError>;
  /** The last check: takes one request from the key's rate limit; the headers every answer then carries. */
  admit(): Promise<Record<string, string>>;
}

export async function authorize<E extends KeyedEndpoint>(
  deps: AuthorizeDeps,
  /** `hubId` undefined: the key's own hub (an endpoint whose path names none, as /mcp). */
  request: { presented: PresentedKey; hubId: string | undefined; endpoint: E; audit?: AuditSlot | undefined },
): Promise<Access<E['readsHub'] extends true ? Hub : undefined>> {
  const { presented, endpoint } = request;
  const { refusals } = endpoint;

  // 1 and 2: the key.
  if (presented.kind === 'none') throw refusals.missing();
  if (presented.kind === 'unreadable') throw refusals.invalid();
  if (presented.kind === 'repeated') throw refusals.repeated();
  const key = await deps.verifyKey(presented.key);
  if (!key) throw refusals.invalid();
  if (key.scope !== endpoint.scope && !endpoint.alsoScopes?.includes(key.scope))
    throw refusals.otherScope(key.scope);

  // From here on the key is known.
  const limit = key.rateLimit;
  const refuse = async (error: AppError) =>
    limit && endpoint.limitFieldsOnRefusals
      ? error.withHeaders(await deps.peekRateLimit(key.id, limit))
      : error;

  // 3 and 4: the hub.
  const hubId = request.hubId ?? key.hubId;
  if (!isValidHubId(hubId)) throw await refuse(hubErrors.invalidId());
  if (key.hubId !== hubId) throw await refuse(refusals.forbidden());
  let hub: Hub | undefined;
  if (endpoint.readsHub) {
    hub = await deps.getHub(hubId);
    if (!hub) throw await refuse(refusals.forbidden());
  }
  // The key check passed: the request is the audit's (rate-limited or not, whatever it answers).
  if (request.audit) {
    request.audit.keyId = key.id;
    request.audit.hubId = hubId;
  }

  const admit = async () => {
    if (!limit) return {};
    const decision = await deps.consumeRateLimit(key.id, limit);
    if (!decision.allowed) throw refusals.rateLimited(decision.headers);
    return decision.headers;
  };
  // readsHub true: the hub was read and found above; false: it is undefined.
  return { key, hub: hub as E['readsHub'] extends true ? Hub : undefined, refuse, admit };
}

/**
 * An endpoint of CONTRACT §9-13: the key in `apikey` or `Authorization: Bearer` (not both), a good
 * key of another scope 403, the key's rate-limit fields on every refusal once it is known.
 * `toDo`: what the endpoint does, in its refusals' words.
 */
export interface PartTwoEndpoint<R extends boolean = boolean> extends KeyedEndpoint {
  refusals: KeyRefusals & { ambiguous(): AppError };
  readsHub: R;
  limitFieldsOnRefusals: true;
}

export function partTwoEndpoint<R extends boolean>(
  scope: KeyScope,
  toDo: string,
  readsHub: R,
): PartTwoEndpoint<R> {
  return { scope, refusals: partTwoKeyErrors(scope, toDo), readsHub, limitFieldsOnRefusals: true };
}

/** Rows 1 to 4 of a §9-13 endpoint for one request (the key from the query or the header). */
export function authorizePartTwo<R extends boolean>(
  deps: AuthorizeDeps,
  endpoint: PartTwoEndpoint<R>,
  request: {
    hubId: string;
    params: URLSearchParams;
    authorization: string | undefined;
    audit?: AuditSlot | undefined;
  },
): Promise<Access<R extends true ? Hub : undefined>> {
  const presented = keyInQueryOrBearer(request.params, request.authorization);
  if (presented.kind === 'ambiguous') throw endpoint.refusals.ambiguous();
  return authorize(deps, { presented, hubId: request.hubId, endpoint, audit: request.audit });
}

/** The hub a key check hook read for a request (its endpoint reads the hub), for the handler. */
const hubsChecked = new WeakMap<FastifyRequest, Hub>();

/** The hub keyCheckHook found for this request, when its endpoint reads the hub. */
export function checkedHub(request: FastifyRequest): Hub | undefined {
  return hubsChecked.get(request);
}

/**
 * The onRequest hook of a scope of §9-13 routes whose whole work needs the key (webhooks' admin API,
 * erasure): the key checked from the headers and query before the path's parameters and before any
 * body is read, then the rate limit; its fields on the answer. Every answer varies by Authorization.
 */
export function keyCheckHook(
  deps: AuthorizeDeps,
  endpoint: PartTwoEndpoint,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    reply.header('Vary', 'Authorization');
    const access = await authorizePartTwo(deps, endpoint, {
      hubId: (request.params as { hubId: string }).hubId,
      params: new URLSearchParams(rawQueryOf(request.raw.url ?? '')),
      authorization: request.headers.authorization,
      audit: request.audit ?? undefined,
    });
    if (access.hub) hubsChecked.set(request, access.hub);
    reply.headers(await access.admit());
  };
}
