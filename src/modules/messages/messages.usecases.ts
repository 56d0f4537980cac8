/**
 * The read use case: which messages answer a question, for the read API and `chatlog export` alike.
 * A question names whole days in a time zone; they become one interval of instants
 * (dayRangeInZone, CONTRACT §2), and the answer is the hub's messages in it, grouped by contact
 * (store.messages.stream). The API asks through its checks in CONTRACT §1's order
 * (messages.checks.ts); the command line through its options, read in its own words. How the answer
 * is sent (ETag, encoding, HEAD, streaming) is the route's business, not this file's.
 */
import {
  type CalendarDay,
  canonicalTimeZone,
  dayKey,
  dayRangeInZone,
  parseCalendarDay,
} from '../../lib/calendar.js';
import type { AnswerSource, AnswerVersions, MessageQuery, MessageRow, Store } from '../../store/store.js';
import type { HubService } from '../hubs/hubs.usecases.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import type { AuthorizeDeps } from '../keys/keys.authorize.js';
import { checkMessagesRequest, type MessagesRequestInput } from './messages.checks.js';
import { messageErrors } from './messages.errors.js';
import { serializeMessages } from './messages.serializer.js';

/** The rows that answer a question: a hub's messages created in [fromMs, toMsExclusive). */
export interface MessagesRange {
  hubId: string;
  fromMs: number | undefined;
  toMsExclusive: number | undefined;
}

/** Whole days `from` to `to` (both included, either open) in `timeZone`, as the hub's rows. */
export function messagesRange(
  hubId: string,
  from: CalendarDay | undefined,
  to: CalendarDay | undefined,
  timeZone: string,
): MessagesRange {
  return { hubId, ...dayRangeInZone(from, to, timeZone) };
}

/** The answer's rows, grouped by contact in answer order, read from a cursor in batches. */
export function messageRows(
  store: Pick<Store, 'messages'>,
  range: MessageQuery,
): AsyncIterable<MessageRow[]> {
  return store.messages.stream(range);
}

export function answersEncodedHere(store: Pick<Store, 'messages'>): AnswerSource {
  const written = store.messages.json;
  // PostgreSQL writes the JSON itself (Store's messages.json): the same bytes, cheaper here.
  if (written) return { json: (range, count) => written(range, count) };
  return { json: (range, count) => serializeMessages(messageRows(store, range), count) };
}

export interface AskedMessages {
  range: MessagesRange;
  /** The answer's version (answerVersion), read before the rows: the answer holds at least this. */
  dataVersion: string;
  /** Headers every answer to this request carries (the rate-limit fields of a limited key). */
  headers: Record<string, string>;
}

/**
 * The version of an answer whose range ends at `toMsExclusive` (undefined: no end). Messages that
 * came after every other since history (or the epoch) last changed all have createdAt >= appendFloor,
 * so a range ending at or before it holds none of them: its answer is what it was at that history
 * and epoch. A busy hub's new messages then leave "last month" cached, and its ETag unchanged (until
 * the floor moves up, once a day).
 */
export function answerVersion(versions: AnswerVersions, toMsExclusive: number | undefined): string {
  const { appendFloor } = versions;
  const untouched = appendFloor === null || (toMsExclusive !== undefined && toMsExclusive <= appendFloor);
  return untouched ? `h${versions.history}.${versions.appendEpoch}` : `a${versions.all}`;
}

/**
 * The read API's question (GET /api/line/:hubId/messages): the checks in their order, then the
 * range. The hub and its change counter are read while the key is checked, not after: one round
 * trip to PostgreSQL instead of three. Nothing read for a request that then fails its checks
 * reaches the client.
 */
export async function askMessages(
  deps: { store: Pick<Store, 'messages'>; authorize: AuthorizeDeps },
  input: MessagesRequestInput,
): Promise<AskedMessages> {
  const { store, authorize } = deps;
  const early = isValidHubId(input.hubId);
  const hub = early ? authorize.getHub(input.hubId) : undefined;
  const version = early ? store.messages.versions(input.hubId) : undefined;
  hub?.catch(() => undefined);
  version?.catch(() => undefined);
  const checked = await checkMessagesRequest(input, hub ? { ...authorize, getHub: () => hub } : authorize);
  const versions = await (version ?? store.messages.versions(checked.hub.id));
  const range = { hubId: checked.hub.id, fromMs: checked.fromMs, toMsExclusive: checked.toMsExclusive };
  return {
    range,
    dataVersion: answerVersion(versions, range.toMsExclusive),
    headers: checked.headers,
  };
}

/** `chatlog export`'s days, read before the store is opened: a mistyped date needs no store. */
export function exportDays(options: { from?: string | undefined; to?: string | undefined }): {
  from: CalendarDay | undefined;
  to: CalendarDay | undefined;
} {
  const day = (option: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const parsed = parseCalendarDay(text);
    if (!parsed) throw messageErrors.invalidDate(option, text);
    return parsed;
  };
  const from = day('--from', options.from);
  const to = day('--to', options.to);
  if (from && to && dayKey(from) > dayKey(to)) throw messageErrors.invalidRange('--from', '--to');
  return { from, to };
}

/** `chatlog export <hubId>`: the hub must exist; `--tz` reads the days in another zone. */
export async function exportRange(
  hubs: HubService,
  input: {
    hubId: string;
    from: CalendarDay | undefined;
    to: CalendarDay | undefined;
    tz?: string | undefined;
  },
): Promise<MessagesRange> {
  const hub = await hubs.require(input.hubId);
  let zone = hub.timeZone;
  if (input.tz !== undefined) {
    const canonical = canonicalTimeZone(input.tz);
    if (!canonical) throw messageErrors.invalidTimeZone('--tz', input.tz);
    zone = canonical;
  }
  return messagesRange(hub.id, input.from, input.to, zone);
}
