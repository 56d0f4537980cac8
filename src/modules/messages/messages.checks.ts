/**
 * The contract's check order (CONTRACT §1) in one function: the first check that fails answers.
 *   1 missing_api_key · 2 invalid_api_key · 3 invalid_hub_id · 4 forbidden · 5 duplicate_parameter
 *   6 invalid_date · 7 invalid_range · (extension) invalid_time_zone · 8 rate_limited
 */
import {
  type CalendarDay,
  canonicalTimeZone,
  dayKey,
  dayRangeInZone,
  parseCalendarDay,
} from '../../lib/calendar.js';
import type { AppError } from '../../lib/errors.js';
import type { ApiKeyRecord, Hub, RateLimit } from '../../store/store.js';
import { hubErrors } from '../hubs/hubs.errors.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import { readKeyErrors } from '../keys/keys.errors.js';
import { messageErrors } from './messages.errors.js';

/** The codes of those checks in their order (the OpenAPI document and /docs show it). */
export const MESSAGES_CHECK_ORDER = [
  'missing_api_key',
  'invalid_api_key',
  'invalid_hub_id',
  'forbidden',
  'duplicate_parameter',
  'invalid_date',
  'invalid_range',
  'invalid_time_zone',
  'rate_limited',
] as const satisfies readonly AppError['code'][];

/** Parameters whose repetition is an error; unknown parameters are ignored, repeated or not. */
const SINGLE_VALUED = ['from', 'to', 'tz'] as const;

export interface MessagesRequestInput {
  /** The path segment as routed (percent-decoded). */
  hubId: string;
  /** The raw query string, without the leading "?". */
  query: string;
}

export interface CheckDeps {
  verifyKey(presented: string): Promise<ApiKeyRecord | undefined>;
  getHub(hubId: string): Promise<Hub | undefined>;
  consumeRateLimit(
    keyId: string,
    limit: RateLimit,
  ): Promise<{ allowed: boolean; headers: Record<string, string> }>;
  peekRateLimit(keyId: string, limit: RateLimit): Promise<Record<string, string>>;
}

export interface CheckedMessagesRequest {
  key: ApiKeyRecord;
  hub: Hub;
  timeZone: string;
  from: CalendarDay | undefined;
  to: CalendarDay | undefined;
  fromMs: number | undefined;
  toMsExclusive: number | undefined;
  /** Headers every answer to this request carries (the rate-limit fields of a limited key). */
  headers: Record<string, string>;
}

export async function checkMessagesRequest(
  input: MessagesRequestInput,
  deps: CheckDeps,
): Promise<CheckedMessagesRequest> {
  const params = new URLSearchParams(input.query);

  // 1 and 2: the key.
  const apikeys = params.getAll('apikey');
  if (apikeys.length === 0 || (apikeys.length === 1 && apikeys[0] === '')) {
    throw readKeyErrors.missing();
  }
  if (apikeys.length > 1) throw readKeyErrors.invalid();
  const key = await deps.verifyKey(apikeys[0] ?? '');
  if (!key) throw readKeyErrors.invalid();
  if (key.scope !== 'read') throw readKeyErrors.otherScope(key.scope);

  // From here on the key is known: a limited key's answers all carry its rate-limit fields.
  const limit = key.rateLimit;
  const headersNow = async () => (limit ? await deps.peekRateLimit(key.id, limit) : {});
  const fail = async (error: AppError) => error.withHeaders(await headersNow());

  // 3 and 4: the hub.
  if (!isValidHubId(input.hubId)) throw await fail(hubErrors.invalidId());
  if (key.hubId !== input.hubId) throw await fail(readKeyErrors.forbidden());
  const hub = await deps.getHub(input.hubId);
  if (!hub) throw await fail(readKeyErrors.forbidden());

  // 5: parameters given twice.
  for (const name of SINGLE_VALUED) {
    if (params.getAll(name).length > 1) {
      throw await fail(messageErrors.duplicateParameter(name));
    }
  }

  // 6 and 7: the days.
  const readDay = async (name: 'from' | 'to') => {
    const text = params.get(name);
    if (text === null) return undefined;
    const day = parseCalendarDay(text);
    if (!day) throw await fail(messageErrors.invalidDate(name, text));
    return day;
  };
  const from = await readDay('from');
  const to = await readDay('to');
  if (from && to && dayKey(from) > dayKey(to)) {
    throw await fail(messageErrors.invalidRange());
  }

  // Extension: the days may be read in another zone for this request.
  let timeZone = hub.timeZone;
  const tz = params.get('tz');
  if (tz !== null) {
    const zone = canonicalTimeZone(tz);
    if (!zone) throw await fail(messageErrors.invalidTimeZone());
    timeZone = zone;
  }

  // 8: the rate limit, only when one is set.
  let headers: Record<string, string> = {};
  if (limit) {
    const decision = await deps.consumeRateLimit(key.id, limit);
    if (!decision.allowed) {
      throw readKeyErrors.rateLimited(decision.headers);
    }
    headers = decision.headers;
  }

  const range = dayRangeInZone(from, to, timeZone);
  return { key, hub, timeZone, from, to, ...range, headers };
}
