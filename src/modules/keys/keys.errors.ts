/** The errors of API keys: managing them, and refusing a request for its key. */
import { AppError } from '../../lib/errors.js';
import type { KeyScope } from '../../store/store.js';

/** Asks a client of the ingest API for its key the way RFC 6750 says (every 401 of that API carries it). */
const BEARER_CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="chatlog"' };

/**
 * What a good key of the wrong scope is told: still invalid_api_key (CONTRACT §1 row 2), but its
 * holder learns why (a right key at the wrong door). `toDo`: what the endpoint does.
 */
function otherScopeMessage(scope: KeyScope, toDo: string, needed: KeyScope): string {
  return `this API key is of scope ${scope}, which cannot ${toDo}; use a key of scope ${needed}`;
}

export const keyErrors = {
  unknownScope: (scopes: readonly string[]) =>
    new AppError('bad_request', `scope must be one of ${scopes.join(', ')}`),
  labelTooLong: (max: number) => new AppError('bad_request', `label must be at most ${max} characters`),
  notFound: (keyId: string) => new AppError('not_found', `no key has the id ${keyId}`),
  alreadyRevoked: (keyId: string) => new AppError('bad_request', `key ${keyId} is already revoked`),
};

/** One endpoint's words for refusing a request for its key (keys.authorize.ts). */
export interface KeyRefusals {
  /** No key (missing_api_key, 401). */
  missing(): AppError;
  /** Not a live key of this service (invalid_api_key, 401). */
  invalid(): AppError;
  /** `apikey` given more than once (invalid_api_key, 401: CONTRACT §1 row 2). */
  repeated(): AppError;
  /** A live key of another scope. */
  otherScope(scope: KeyScope): AppError;
  /** The key is not the hub's (forbidden, 403). */
  forbidden(): AppError;
  /** The key's rate limit is used up (rate_limited, 429). */
  rateLimited(headers: Record<string, string>): AppError;
}

const APIKEY_REPEATED = 'apikey is given more than once: pass one API key, in one apikey query parameter';

/** The read API's refusals of a request for its key (`apikey` in the query; CONTRACT §1 rows 1, 2, 4, 8). */
export const readKeyErrors: KeyRefusals = {
  missing: () =>
    new AppError('missing_api_key', 'apikey is required: pass your API key as the apikey query parameter'),
  invalid: () => new AppError('invalid_api_key', 'the API key is not valid (mistyped, unknown or revoked)'),
  repeated: () => new AppError('invalid_api_key', APIKEY_REPEATED),
  otherScope: (scope: KeyScope) =>
    new AppError('invalid_api_key', otherScopeMessage(scope, 'read messages', 'read')),
  forbidden: () => new AppError('forbidden', 'this API key does not give access to this hub'),
  rateLimited: (headers: Record<string, string>) =>
    new AppError('rate_limited', 'too many requests for this API key; retry after the time given', headers),
};

/** The ingest API's (`Authorization: Bearer <key>`); its 401s carry the Bearer challenge. */
export const ingestKeyErrors: KeyRefusals = {
  missing: () =>
    new AppError('missing_api_key', 'send an ingest key as Authorization: Bearer <key>', BEARER_CHALLENGE),
  invalid: () =>
    new AppError(
      'invalid_api_key',
      'the ingest key is not valid (mistyped, unknown or revoked)',
      BEARER_CHALLENGE,
    ),
  repeated: () => new AppError('invalid_api_key', APIKEY_REPEATED, BEARER_CHALLENGE),
  otherScope: (scope: KeyScope) =>
    new AppError('invalid_api_key', otherScopeMessage(scope, 'record messages', 'ingest'), BEARER_CHALLENGE),
  forbidden: () => new AppError('forbidden', 'this key does not give access to this hub'),
  rateLimited: (headers: Record<string, string>) =>
    new AppError('rate_limited', 'too many requests for this key; retry after the time given', headers),
};

/**
 * The refusals of the endpoints of CONTRACT §9-13 (key in `apikey` or `Authorization: Bearer`): a
 * good key of the wrong scope is 403 insufficient_scope. `toDo`: what the endpoint does.
 */
export function partTwoKeyErrors(needed: KeyScope, toDo: string): KeyRefusals & { ambiguous(): AppError } {
  return {
    ambiguous: () =>
      new AppError(
        'ambiguous_credentials',
        'send the key once: either the apikey query parameter or Authorization: Bearer <key>, not both',
      ),
    missing: () =>
      new AppError(
        'missing_api_key',
        'an API key is required: send it as Authorization: Bearer <key> (or the apikey query parameter)',
        BEARER_CHALLENGE,
      ),
    invalid: () =>
      new AppError(
        'invalid_api_key',
        'the API key is not valid (mistyped, unknown or revoked)',
        BEARER_CHALLENGE,
      ),
    repeated: () => new AppError('invalid_api_key', APIKEY_REPEATED, BEARER_CHALLENGE),
    otherScope: (scope: KeyScope) =>
      new AppError(
        'insufficient_scope',
        `this API key is of scope ${scope}, which cannot ${toDo}; use a key of scope ${needed}`,
      ),
    forbidden: () => new AppError('forbidden', 'this API key does not give access to this hub'),
    rateLimited: (headers: Record<string, string>) =>
      new AppError('rate_limited', 'too many requests for this API key; retry after the time given', headers),
  };
}
