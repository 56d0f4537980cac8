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
import type { ApiKeyRecord, Hub } from '../../store/store.js';
import type { AuditSlot } from '../audit/audit.slot.js';
import { type AuthorizeDeps, authorize, type KeyedEndpoint, keyInQuery } from '../keys/keys.authorize.js';
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
  /** Told the key once it passed (the audit). */
  audit?: AuditSlot | undefined;
}

/** What the checks look up: the key, the hub and the key's rate limit. */
export type CheckDeps = AuthorizeDeps;

/** The read API's key: scope read, in `apikey`; it reads the hub (its time zone). */
const READ_API = {
  scope: 'read',
  refusals: readKeyErrors,
  readsHub: true,
  limitFieldsOnRefusals: true,
} as const satisfies KeyedEndpoint;

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

  // 1 to 4: the key and the hub.
  const access = await authorize(deps, {
    presented: keyInQuery(params),
    hubId: input.hubId,
    endpoint: READ_API,
    audit: input.audit,
  });
  const { key, hub, refuse } = access;

  // 5: parameters given twice.
  for (const name of SINGLE_VALUED) {
    if (params.getAll(name).length > 1) throw await refuse(messageErrors.duplicateParameter(name));
  }

  // 6, 7 and the time zone.
  const { from, to, timeZone } = await readDays(params, hub.timeZone, refuse);

  // 8: the rate limit, only when one is set.
  const headers = await access.admit();

  const range = dayRangeInZone(from, to, timeZone);
  return { key, hub, timeZone, from, to, ...range, headers };
}

/**
 * Checks 6 and 7 (`from`, `to`: calendar days, from not after to) and the extension after them
 * (`tz`: the days read in another zone for this request, else the hub's). Search asks the same.
 */
export async function readDays(
  params: URLSearchParams,
  hubTimeZone: string,
  refuse: (error: AppError) => Promise<AppError>,
): Promise<{ from: CalendarDay | undefined; to: CalendarDay | undefined; timeZone: string }> {
  const readDay = async (name: 'from' | 'to') => {
    const text = params.get(name);
    if (text === null) return undefined;
    const day = parseCalendarDay(text);
    if (!day) throw await refuse(messageErrors.invalidDate(name, text));
    return day;
  };
  const from = await readDay('from');
  const to = await readDay('to');
  if (from && to && dayKey(from) > dayKey(to)) throw await refuse(messageErrors.invalidRange());
  let timeZone = hubTimeZone;
  const tz = params.get('tz');
  if (tz !== null) {
    const zone = canonicalTimeZone(tz);
    if (!zone) throw await refuse(messageErrors.invalidTimeZone());
    timeZone = zone;
  }
  return { from, to, timeZone };
}
