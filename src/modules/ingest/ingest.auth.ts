/** Authentication of the ingest API: `Authorization: Bearer <key>` with a key of scope `ingest` for the hub. */
import type { ApiKeyRecord } from '../../store/store.js';
import { hubErrors } from '../hubs/hubs.errors.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import { ingestKeyErrors } from '../keys/keys.errors.js';
import type { RateLimiter } from '../keys/keys.ratelimit.js';
import type { KeyService } from '../keys/keys.usecases.js';

export async function authenticateIngest(
  authorization: string | undefined,
  hubId: string,
  keys: KeyService,
  rateLimiter: RateLimiter,
): Promise<{ key: ApiKeyRecord; headers: Record<string, string> }> {
  if (authorization === undefined || authorization.trim() === '') {
    throw ingestKeyErrors.missing();
  }
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  const key = match?.[1] ? await keys.verify(match[1]) : undefined;
  if (!key) {
    throw ingestKeyErrors.invalid();
  }
  if (key.scope !== 'ingest') {
    throw ingestKeyErrors.otherScope(key.scope);
  }
  const limit = key.rateLimit;
  if (!isValidHubId(hubId)) throw hubErrors.invalidId();
  if (key.hubId !== hubId) throw ingestKeyErrors.forbidden();
  let headers: Record<string, string> = {};
  if (limit) {
    const decision = await rateLimiter.consume(key.id, limit);
    if (!decision.allowed) {
      throw ingestKeyErrors.rateLimited(decision.headers);
    }
    headers = decision.headers;
  }
  return { key, headers };
}
