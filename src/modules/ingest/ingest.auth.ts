/** Authentication of the ingest API: `Authorization: Bearer <key>` with a key of scope `ingest` for the hub. */
import { AppError } from '../../lib/errors.js';
import type { ApiKeyRecord } from '../../store/store.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import type { RateLimiter } from '../keys/keys.ratelimit.js';
import { type KeyService, otherScopeMessage } from '../keys/keys.usecases.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="chatlog"' };

export async function authenticateIngest(
  authorization: string | undefined,
  hubId: string,
  keys: KeyService,
  rateLimiter: RateLimiter,
): Promise<{ key: ApiKeyRecord; headers: Record<string, string> }> {
  if (authorization === undefined || authorization.trim() === '') {
    throw new AppError(
      'missing_api_key',
      401,
      'send an ingest key as Authorization: Bearer <key>',
      CHALLENGE,
    );
  }
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  const key = match?.[1] ? await keys.verify(match[1]) : undefined;
  if (!key) {
    throw new AppError(
      'invalid_api_key',
      401,
      'the ingest key is not valid (mistyped, unknown or revoked)',
      CHALLENGE,
    );
  }
  if (key.scope !== 'ingest') {
    throw new AppError(
      'invalid_api_key',
      401,
      otherScopeMessage(key.scope, 'record messages', 'ingest'),
      CHALLENGE,
    );
  }
  const limit = key.rateLimit;
  if (!isValidHubId(hubId)) throw new AppError('invalid_hub_id', 400, 'hubId must be 1 to 20 digits');
  if (key.hubId !== hubId) throw new AppError('forbidden', 403, 'this key does not give access to this hub');
  let headers: Record<string, string> = {};
  if (limit) {
    const decision = await rateLimiter.consume(key.id, limit);
    if (!decision.allowed) {
      throw new AppError(
        'rate_limited',
        429,
        'too many requests for this key; retry after the time given',
        decision.headers,
      );
    }
    headers = decision.headers;
  }
  return { key, headers };
}
