/**
 * The MCP server's tools (CONTRACT §15), apart from the protocol: what each reads and answers, for
 * one hub, the key's. They read through the use cases of sections 3, 9 and 12 (search and the feed
 * run their own checks, with the caller's key, as their endpoints do), so their messages, dates and
 * order are those of the API. Every result is bounded (`maxChars` of JSON): a page that would be
 * longer is cut at a whole item and gives a cursor; a single message longer than the bound is cut
 * and marked `truncated`. A wrong argument the schema cannot catch is a ToolError, a sentence for
 * the assistant saying what to change.
 *
 * Kept whole: the five tools share the cursor, bound and error rules above; split apart, each would
 * have to restate them.
 */
import {
  type CalendarDay,
  dayKey,
  dayRangeInZone,
  formatTimestamp,
  parseCalendarDay,
} from '../../lib/calendar.js';
import { AppError } from '../../lib/errors.js';
import type { Change, Hub, Store } from '../../store/store.js';
import { encodeCursor } from '../changes/changes.cursor.js';
import { type ChangesDeps, checkChangesRequest, readChanges } from '../changes/changes.usecases.js';
import { encodeSearchCursor } from '../search/search.cursor.js';
import { checkSearchRequest, type SearchDeps, search } from '../search/search.usecases.js';

/** An argument the schema cannot judge (a lineId the hub lacks, a reversed range, a stale cursor). */
export class ToolError extends Error {}

/** Who calls: the key's hub, and the key as its request carried it (search and the feed check it again). */
export interface McpCaller {
  hub: Hub;
  keyId: string;
  /** `Bearer <key>`: what the §9 and §12 checks read. */
  authorization: string;
  /** The request already took its turn of the key's rate limit (/mcp): the checks only look at it. */
  admitted?: boolean;
  /**
   * Whether the key still holds (stdio, where the key was checked once at start: a revoked key stops
   * at its next call, as over HTTP). Absent: checked with every request.
   */
  stillValid?: () => Promise<boolean>;
}

/** The §9 and §12 checks' key deps for this caller: a request /mcp admitted is not counted twice. */
function keyDepsOf<D extends { authorize: SearchDeps['authorize'] }>(deps: D, caller: McpCaller): D {
  if (!caller.admitted) return deps;
  const { authorize } = deps;
  return {
    ...deps,
    authorize: {
      ...authorize,
      consumeRateLimit: async (keyId, limit) => ({
        allowed: true,
        headers: await authorize.peekRateLimit(keyId, limit),
      }),
    },
  };
}

export interface McpToolDeps {
  store: Pick<Store, 'messages' | 'conversations' | 'search' | 'changes' | 'contacts'>;
  search: SearchDeps;
  changes: ChangesDeps;
  /** CHATLOG_MCP_MAX_CHARS: the longest result text. */
  maxChars: number;
}

/** A tool's answer: its structured content, and the messages it holds (the audit's count). */
export interface ToolAnswer {
  result: Record<string, unknown>;
  messages: number;
}

const CURSOR_VERSION = 1;

/** A cursor of `tool` for `hubId`: opaque to the client, and good for that tool and hub only. */
function encodeToolCursor(tool: string, hubId: string, at: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, t: tool, h: hubId, ...at }), 'utf8').toString(
    'base64url',
  );
}

function decodeToolCursor(tool: string, hubId: string, cursor: string): Record<string, unknown> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const fields = decoded as Record<string, unknown> | undefined;
  if (
    !fields ||
    typeof fields !== 'object' ||
    fields.v !== CURSOR_VERSION ||
    fields.t !== tool ||
    fields.h !== hubId
  ) {
    throw new ToolError(
      `cursor is not one that ${tool} gave for this hub: pass the cursor of the previous ${tool} result, or none to start again`,
    );
  }
  return fields;
}

const isNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value);

/**
 * The longest prefix of `items` whose result (`make`) is at most `maxChars` of JSON; at least one
 * item, cut by `shorten` when it alone is too long. `cut` says whether items were left out.
 */
function fit<T>(
  items: readonly T[],
  make: (shown: readonly T[], cut: boolean) => Record<string, unknown>,
  maxChars: number,
  shorten: (item: T, chars: number) => T,
): { result: Record<string, unknown>; shown: readonly T[]; cut: boolean } {
  const size = (shown: readonly T[], cut: boolean) => JSON.stringify(make(shown, cut)).length;
  if (size(items, false) <= maxChars) return { result: make(items, false), shown: items, cut: false };
  let low = 0;
  let high = items.length - 1;
  // The most items that fit, with a cursor after them.
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (size(items.slice(0, middle), true) <= maxChars) low = middle;
    else high = middle - 1;
  }
  if (low > 0) {
    const shown = items.slice(0, low);
    return { result: make(shown, true), shown, cut: true };
  }
  // One item alone is too long: it is shown cut, as little as it takes (shorten may take a step at a time).
  const cut = items.length > 1;
  let first = items[0] as T;
  for (let step = 0; step < 4; step++) {
    const over = size([first], cut) - maxChars;
    if (over <= 0) break;
    first = shorten(first, over + 64);
  }
  return { result: make([first], cut), shown: [first], cut };
}

/** A message's text cut by about `chars` characters (never inside a surrogate pair), marked truncated. */
function cutText<M extends { msg: string }>(message: M, chars: number): M & { truncated: true } {
  const codePoints = Array.from(message.msg);
  const keep = Math.max(0, codePoints.length - chars);
  return { ...message, msg: codePoints.slice(0, keep).join(''), truncated: true };
}

function day(name: string, text: string | undefined): CalendarDay | undefined {
  if (text === undefined) return undefined;
  const parsed = parseCalendarDay(text);
  if (!parsed)
    throw new ToolError(
      `${name} must be a day as YYYY-MM-DD (for example 2026-11-28), not "${text.slice(0, 40)}"`,
    );
  return parsed;
}

function days(from: string | undefined, to: string | undefined): { from?: CalendarDay; to?: CalendarDay } {
  const first = day('from', from);
  const last = day('to', to);
  if (first && last && dayKey(first) > dayKey(last)) {
    throw new ToolError(`from (${from}) is after to (${to}): give from on or before to`);
  }
  return { ...(first && { from: first }), ...(last && { to: last }) };
}

/** A §9 or §12 check's refusal of an argument, as the assistant is told it. */
async function asToolError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    // §12 names its words `q`; the tool's argument is `query`.
    const message = error.message.replace(/^q /, 'query ');
    if (error.status === 400) throw new ToolError(message);
    if (error.code === 'cursor_expired') throw new ToolError(`${message}; call again without a cursor`);
    if (error.code === 'rate_limited')
      throw new ToolError(`${message} (Retry-After: ${error.headers['Retry-After'] ?? '?'} s)`);
    throw error;
  }
}

/** get_hub: the hub, and how much it holds. */
export async function getHub(deps: McpToolDeps, caller: McpCaller): Promise<ToolAnswer> {
  const stats = await deps.store.messages.stats(caller.hub.id);
  return {
    result: {
      hubId: caller.hub.id,
      timeZone: caller.hub.timeZone,
      contacts: stats.contacts,
      messages: stats.messages,
      firstMessageAt: stats.firstAt === null ? null : formatTimestamp(stats.firstAt),
      lastMessageAt: stats.lastAt === null ? null : formatTimestamp(stats.lastAt),
    },
    messages: 0,
  };
}

interface ContactItem {
  lineId: string;
  vid: string;
  name: string;
  messages: number;
  lastMessageAt: string | null;
  /** The order's keys, for the cursor (not shown). */
  at: { lastAt: number; contactId: number };
}

/** list_contacts: the hub's contacts, most recent conversation first, `query` a substring of name, lineId or vid. */
export async function listContacts(
  deps: McpToolDeps,
  caller: McpCaller,
  args: { query?: string | undefined; cursor?: string | undefined; limit?: number | undefined },
): Promise<ToolAnswer> {
  const limit = args.limit ?? 50;
  let after: { lastAt: number; contactId: number } | undefined;
  if (args.cursor !== undefined) {
    const at = decodeToolCursor('list_contacts', caller.hub.id, args.cursor);
    if (!isNumber(at.lastAt) || !isNumber(at.contactId) || at.query !== (args.query ?? null)) {
      throw new ToolError('cursor belongs to another query: pass the same query as the call that gave it');
    }
    after = { lastAt: at.lastAt, contactId: at.contactId };
  }
  const page = await deps.store.conversations.contacts({
    hubId: caller.hub.id,
    limit,
    after,
    matching: args.query,
  });
  const items: ContactItem[] = page.contacts.map((contact) => ({
    lineId: contact.lineId,
    vid: contact.vid,
    name: contact.name,
    messages: contact.messageCount,
    lastMessageAt: contact.lastMessageAt === null ? null : formatTimestamp(contact.lastMessageAt),
    at: { lastAt: contact.lastMessageAt ?? Number.MIN_SAFE_INTEGER, contactId: contact.contactId },
  }));
  const make = (shown: readonly ContactItem[], cut: boolean) => {
    const last = shown.at(-1);
    const pageHasMore = cut || page.hasMore;
    return {
      contacts: shown.map(({ at: _at, ...contact }) => contact),
      cursor:
        pageHasMore && last
          ? encodeToolCursor('list_contacts', caller.hub.id, { ...last.at, query: args.query ?? null })
          : null,
      hasMore: pageHasMore,
    };
  };
  const { result } = fit(items, make, deps.maxChars, (contact) => ({
    ...contact,
    name: contact.name.slice(0, 200),
  }));
  return { result, messages: 0 };
}

interface MessageItem {
  id: string;
  sender: string;
  msg: string;
  contentType: string;
  createdAt: string;
  truncated?: true;
  position: { createdAt: number; rowId: number };
}

/** get_conversation: one contact's messages, oldest first, in `from`..`to` (days in the hub's zone). */
export async function getConversation(
  deps: McpToolDeps,
  caller: McpCaller,
  args: {
    lineId: string;
    from?: string | undefined;
    to?: string | undefined;
    cursor?: string | undefined;
    limit?: number | undefined;
  },
): Promise<ToolAnswer> {
  const limit = args.limit ?? 100;
  const range = days(args.from, args.to);
  let after: { createdAt: number; rowId: number } | undefined;
  if (args.cursor !== undefined) {
    const at = decodeToolCursor('get_conversation', caller.hub.id, args.cursor);
    if (
      !isNumber(at.createdAt) ||
      !isNumber(at.rowId) ||
      at.lineId !== args.lineId ||
      at.from !== (args.from ?? null) ||
      at.to !== (args.to ?? null)
    ) {
      throw new ToolError(
        'cursor belongs to another conversation or range: pass the same lineId, from and to as the call that gave it',
      );
    }
    after = { createdAt: at.createdAt, rowId: at.rowId };
  }
  const page = await deps.store.conversations.messages({
    hubId: caller.hub.id,
    lineId: args.lineId,
    ...dayRangeInZone(range.from, range.to, caller.hub.timeZone),
    // The oldest first: from the start of the range, or after the cursor's message.
    at: { after: after ?? { createdAt: Number.MIN_SAFE_INTEGER, rowId: Number.MIN_SAFE_INTEGER } },
    limit,
  });
  if (!page) {
    throw new ToolError(
      `this hub has no contact with lineId ${args.lineId.slice(0, 100)}: list_contacts gives the lineIds`,
    );
  }
  const items: MessageItem[] = page.messages.map((m) => ({
    id: m.id,
    sender: m.sender,
    msg: m.msg,
    contentType: m.contentType,
    createdAt: formatTimestamp(m.createdAt),
    position: { createdAt: m.createdAt, rowId: m.rowId },
  }));
  const make = (shown: readonly MessageItem[], cut: boolean) => {
    const last = shown.at(-1);
    const hasMore = cut || page.hasNewer;
    return {
      lineId: page.contact.lineId,
      vid: page.contact.vid,
      name: page.contact.name,
      messages: shown.map(({ position: _position, ...message }) => message),
      cursor:
        hasMore && last
          ? encodeToolCursor('get_conversation', caller.hub.id, {
              ...last.position,
              lineId: args.lineId,
              from: args.from ?? null,
              to: args.to ?? null,
            })
          : null,
      hasMore,
    };
  };
  const { result, shown } = fit(items, make, deps.maxChars, cutText);
  return { result, messages: shown.length };
}

/** search_messages: §12's search, its results and cursor. */
export async function searchMessages(
  deps: McpToolDeps,
  caller: McpCaller,
  args: {
    query: string;
    lineId?: string | undefined;
    from?: string | undefined;
    to?: string | undefined;
    cursor?: string | undefined;
    limit?: number | undefined;
  },
): Promise<ToolAnswer> {
  const params = new URLSearchParams({ q: args.query });
  for (const name of ['lineId', 'from', 'to', 'cursor'] as const) {
    const value = args[name];
    if (value !== undefined) params.set(name, value);
  }
  if (args.limit !== undefined) params.set('limit', String(args.limit));
  if (args.lineId !== undefined && !(await deps.store.contacts.get(caller.hub.id, args.lineId))) {
    throw new ToolError(
      `this hub has no contact with lineId ${args.lineId.slice(0, 100)}: list_contacts gives the lineIds`,
    );
  }
  const checked = await asToolError(() =>
    checkSearchRequest(keyDepsOf(deps.search, caller), {
      hubId: caller.hub.id,
      query: params.toString(),
      authorization: caller.authorization,
    }),
  );
  const page = await search(deps.store, checked);
  type Hit = (typeof page.results)[number];
  const render = (hit: Hit & { truncated?: true }) => ({
    id: hit.id,
    lineId: hit.lineId,
    vid: hit.vid,
    name: hit.name,
    message: {
      sender: hit.message.sender,
      msg: hit.message.msg,
      contentType: hit.message.contentType,
      createdAt: formatTimestamp(hit.message.createdAt),
      ...(hit.truncated && { truncated: true }),
    },
  });
  const make = (shown: readonly (Hit & { truncated?: true })[], cut: boolean) => {
    const last = shown.at(-1);
    return {
      results: shown.map(render),
      cursor:
        cut && last
          ? encodeSearchCursor(caller.hub.id, checked.terms, {
              createdAt: last.message.createdAt,
              rowId: last.rowId,
            })
          : page.cursor,
      hasMore: cut || page.hasMore,
    };
  };
  const { result, shown } = fit(page.results, make, deps.maxChars, (hit, chars) => {
    const cut = cutText(hit.message, chars);
    return { ...hit, message: { ...hit.message, msg: cut.msg }, truncated: true as const };
  });
  return { result, messages: shown.length };
}

/** get_changes: a page of §9's feed after `cursor`. */
export async function getChanges(
  deps: McpToolDeps,
  caller: McpCaller,
  args: { cursor?: string | undefined; limit?: number | undefined },
): Promise<ToolAnswer> {
  const params = new URLSearchParams();
  if (args.cursor !== undefined) params.set('cursor', args.cursor);
  params.set('limit', String(args.limit ?? 100));
  const checked = await asToolError(() =>
    checkChangesRequest(keyDepsOf(deps.changes, caller), {
      hubId: caller.hub.id,
      query: params.toString(),
      authorization: caller.authorization,
    }),
  );
  const page = await readChanges(deps.store, checked);
  const changes = JSON.parse(`[${Buffer.from(page.body).toString('utf8')}]`) as Array<
    Change & Record<string, unknown>
  >;
  type Item = Record<string, unknown> & { seq: string; message?: { msg: string } };
  const make = (shown: readonly Item[], cut: boolean) => {
    const last = shown.at(-1);
    return {
      changes: shown,
      cursor: cut && last ? encodeCursor(caller.hub.id, Number(last.seq)) : page.cursor,
      hasMore: cut || page.hasMore,
    };
  };
  const { result, shown } = fit(changes as unknown as Item[], make, deps.maxChars, (change, chars) => {
    // LINE's own JSON repeats the text: it goes first, and the text is cut only if that was not enough.
    if ('line' in change) {
      const { line: _line, ...rest } = change;
      return rest as Item;
    }
    return change.message ? { ...change, message: cutText(change.message, chars) } : change;
  });
  return { result, messages: shown.filter((change) => change.type === 'message.created').length };
}
