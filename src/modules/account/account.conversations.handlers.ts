/**
 * The conversation pages over HTTP (CONTRACT §14), inside the account screen's scope (its CSP,
 * no-store, CSRF and session rules): a hub's contacts and search, one conversation, the downloads
 * (`.csv`, `.json`) of a conversation or of a range of the hub, a message's kept media, and
 * erasing a contact. A hub that is not the account's is a page saying "not found".
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type CalendarDay, dayKey, parseCalendarDay } from '../../lib/calendar.js';
import { AppError } from '../../lib/errors.js';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import type { MessageRow } from '../../store/store.js';
import { attachment } from '../content/content.range.js';
import { sendContent } from '../content/content.reply.js';
import { serializeCsv } from '../messages/messages.csv.js';
import { serializeMessages } from '../messages/messages.serializer.js';
import { MAX_TEXT_CHARS } from '../sends/sends.usecases.js';
import { auditPage, auditPath } from './account.audit.pages.js';
import { CONVERSATION_WORDS, type ConversationWords } from './account.conversations.i18n.js';
import { type AccountConversations, type ConversationAt, parsePosition } from './account.conversations.js';
import {
  confirmErasePage,
  conversationPage,
  conversationPath,
  conversationsPage,
  conversationsPath,
  type DownloadProblem,
} from './account.conversations.pages.js';
import type { PageKit } from './account.kit.js';
import { messagePage } from './account.pages.js';
import type { ReplyBox } from './account.reply.pages.js';
import type { SignedIn } from './account.usecases.js';

/** What the account screen's routes share: the language, the session, the form checks. */

type HubParams = { hubId: string };
type ContactParams = { hubId: string; lineId: string };
type Query = Record<string, string | undefined>;

const FORMATS = {
  csv: 'text/csv; charset=utf-8',
  json: JSON_TYPE,
} as const;
type Format = keyof typeof FORMATS;

/**
 * `from` and `to` of a download: days, either empty; a day that is not one (each is named) or a
 * reversed range is a problem, said with what was typed (a date field drops what it cannot show).
 */
function daysOf(
  query: Query,
  cw: ConversationWords,
): { days: { from?: CalendarDay | undefined; to?: CalendarDay | undefined } } | { problem: DownloadProblem } {
  const typed = { from: query.from ?? '', to: query.to ?? '' };
  const day = (name: 'from' | 'to') => (typed[name] === '' ? undefined : parseCalendarDay(typed[name]));
  const from = day('from');
  const to = day('to');
  const bad = (['from', 'to'] as const).filter((name) => typed[name] !== '' && !{ from, to }[name]);
  if (bad.length > 0) {
    return {
      problem: {
        ...typed,
        field: bad.length === 2 ? 'both' : (bad[0] as 'from' | 'to'),
        message: bad.map((name) => cw.badDay(cw[name], typed[name].slice(0, 40))).join(' '),
      },
    };
  }
  if (from && to && dayKey(from) > dayKey(to))
    return { problem: { ...typed, field: 'both', message: cw.badDays } };
  return { days: { from, to } };
}

/** The download's file name: what it holds, as `chatlog-<hub>[-<lineId>][-<from>][-<to>].<format>`. */
function fileName(hubId: string, lineId: string | undefined, query: Query, format: Format): string {
  return `${['chatlog', hubId, lineId, query.from || undefined, query.to || undefined].filter(Boolean).join('-')}.${format}`;
}

export function registerConversationRoutes(
  scope: FastifyInstance,
  kit: PageKit,
  conversations: AccountConversations,
): void {
  const wordsOf = (request: FastifyRequest) => {
    const { language, words } = kit.languageOf(request);
    return { language, words, cw: CONVERSATION_WORDS[language] };
  };
  const common = async (request: FastifyRequest, signedIn: SignedIn, hubId: string) => {
    const hub = await conversations.hubOf(signedIn, hubId);
    return {
      ...wordsOf(request),
      email: signedIn.account.email,
      csrfToken: kit.csrfToken(signedIn),
      hubId,
      timeZone: hub.timeZone,
      downloadsMedia: Boolean(hub.lineChannelAccessTokenEncrypted),
      canReply: conversations.canReply(hub),
    };
  };

  /** A hub's contacts, or its search's results (`download`: a download refused, its form again). */
  const hubConversations = async (
    request: FastifyRequest<{ Params: HubParams; Querystring: Query }>,
    reply: FastifyReply,
    signedIn: SignedIn,
    download?: DownloadProblem,
  ) => {
    const { hubId } = request.params;
    const args = await common(request, signedIn, hubId);
    // A refused download shows the hub's first contacts, whatever else its URL carried.
    const { q, before, after, erased } = download ? {} : request.query;
    const erasedCount = erased !== undefined && /^\d{1,9}$/.test(erased) ? Number(erased) : undefined;
    const search =
      download || q === undefined || q.trim() === ''
        ? undefined
        : { q, before, results: await conversations.search(signedIn, hubId, q, before) };
    // A query that is not one shows its hint above the contacts, not instead of them.
    const page = search?.results
      ? { contacts: [], hasMore: false }
      : await conversations.contacts(signedIn, hubId, after);
    const last = page.contacts.at(-1);
    return kit.html(
      reply,
      download || (search && !search.results) ? 400 : 200,
      conversationsPage({
        ...args,
        download,
        contacts: page.contacts,
        nextContacts:
          page.hasMore && last
            ? `${last.lastMessageAt ?? Number.MIN_SAFE_INTEGER}.${last.contactId}`
            : undefined,
        laterPage: after !== undefined,
        // Who waits now: above the first page of contacts only.
        waiting:
          search || after !== undefined || download
            ? undefined
            : { ...(await conversations.waiting(signedIn, hubId)), now: Date.now() },
        search,
        notice: erasedCount === undefined ? undefined : args.cw.erased(erasedCount),
      }),
    );
  };

  scope.get<{ Params: HubParams; Querystring: Query }>(
    '/account/hubs/:hubId/conversations',
    async (request, reply) => {
      const switched = kit.switchLanguage(request, reply, conversationsPath(request.params.hubId));
      if (switched) return switched;
      const signedIn = await kit.signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      return hubConversations(request, reply, signedIn);
    },
  );

  /** One conversation (`download`: a download refused, its form again; `replied`: a reply refused, likewise). */
  const contactConversation = async (
    request: FastifyRequest<{ Params: ContactParams; Querystring: Query }>,
    reply: FastifyReply,
    signedIn: SignedIn,
    download?: DownloadProblem,
    replied?: ReplyBox['problem'],
  ) => {
    const { hubId, lineId } = request.params;
    const args = await common(request, signedIn, hubId);
    // A refused download shows the conversation's newest messages, whatever else its URL carried.
    const query: Query = download ? {} : request.query;
    const { at: target, q = '' } = query;
    const before = parsePosition(query.before);
    const after = parsePosition(query.after);
    const at: ConversationAt = target
      ? { around: target }
      : before
        ? { before }
        : after
          ? { after }
          : undefined;
    const page = await conversations.conversation(signedIn, hubId, lineId, at);
    if (!page) return kit.html(reply, 404, messagePage({ ...args, message: args.cw.contactNotFound }));
    const sent =
      args.canReply && !replied && typeof query.send === 'string'
        ? await conversations.sendStatus(signedIn, hubId, query.send.slice(0, 100))
        : undefined;
    return kit.html(
      reply,
      download || replied ? 400 : 200,
      conversationPage({
        ...args,
        reply: args.canReply ? { send: sent, problem: replied } : undefined,
        download,
        page,
        q,
        terms: q.trim() === '' ? [] : (conversations.termsOf(q) ?? []),
        target: page.found ? target : undefined,
        notice: target && !page.found ? args.cw.notFoundInConversation : undefined,
      }),
    );
  };

  scope.get<{ Params: ContactParams; Querystring: Query }>(
    '/account/hubs/:hubId/conversations/:lineId',
    async (request, reply) => {
      const { hubId, lineId } = request.params;
      const switched = kit.switchLanguage(request, reply, conversationPath(hubId, lineId));
      if (switched) return switched;
      const signedIn = await kit.signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      return contactConversation(request, reply, signedIn);
    },
  );

  const download = async (
    reply: FastifyReply,
    format: Format,
    name: string,
    timeZone: string,
    rows: AsyncIterable<MessageRow[]>,
  ) =>
    reply
      .type(FORMATS[format])
      .header('Content-Disposition', attachment(name))
      .send(Readable.from(format === 'csv' ? serializeCsv(rows, timeZone) : serializeMessages(rows)));

  for (const format of Object.keys(FORMATS) as Format[]) {
    scope.get<{ Params: HubParams; Querystring: Query }>(
      `/account/hubs/:hubId/messages.${format}`,
      async (request, reply) => {
        const signedIn = await kit.signedInOf(request);
        if (!signedIn) return reply.redirect('/account', 303);
        const { hubId } = request.params;
        const { timeZone } = await conversations.hubOf(signedIn, hubId);
        const asked = daysOf(request.query, wordsOf(request).cw);
        if ('problem' in asked) return hubConversations(request, reply, signedIn, asked.problem);
        const rows = await conversations.hubRows(signedIn, hubId, asked.days);
        return download(reply, format, fileName(hubId, undefined, request.query, format), timeZone, rows);
      },
    );
    scope.get<{ Params: ContactParams; Querystring: Query }>(
      `/account/hubs/:hubId/conversations/:lineId/messages.${format}`,
      async (request, reply) => {
        const signedIn = await kit.signedInOf(request);
        if (!signedIn) return reply.redirect('/account', 303);
        const { hubId, lineId } = request.params;
        const { timeZone } = await conversations.hubOf(signedIn, hubId);
        const asked = daysOf(request.query, wordsOf(request).cw);
        if ('problem' in asked) return contactConversation(request, reply, signedIn, asked.problem);
        const rows = await conversations.contactRows(signedIn, hubId, lineId, asked.days);
        if (!rows) {
          const args = wordsOf(request);
          return kit.html(reply, 404, messagePage({ ...args, message: args.cw.contactNotFound }));
        }
        return download(reply, format, fileName(hubId, lineId, request.query, format), timeZone, rows);
      },
    );
  }

  scope.get<{ Params: HubParams; Querystring: Query }>(
    '/account/hubs/:hubId/audit',
    async (request, reply) => {
      const { hubId } = request.params;
      const switched = kit.switchLanguage(request, reply, auditPath(hubId));
      if (switched) return switched;
      const signedIn = await kit.signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      const args = await common(request, signedIn, hubId);
      const before = parsePosition(request.query.before);
      const { records, older } = await conversations.audit(signedIn, hubId, before);
      return kit.html(
        reply,
        200,
        auditPage({
          ...args,
          records,
          keys: await kit.keysOf(signedIn, hubId),
          older,
          laterPage: before !== undefined,
        }),
      );
    },
  );

  scope.get<{ Params: ContactParams }>(
    '/account/hubs/:hubId/conversations/:lineId/personal-data.zip',
    async (request, reply) => {
      const signedIn = await kit.signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      const { hubId, lineId } = request.params;
      const made = await conversations.personalData(signedIn, hubId, lineId);
      if (!made) {
        const args = wordsOf(request);
        return kit.html(reply, 404, messagePage({ ...args, message: args.cw.contactNotFound }));
      }
      return reply
        .type('application/zip')
        .header('Content-Disposition', attachment(`chatlog-${hubId}-${lineId}-personal-data.zip`))
        .send(made.zip);
    },
  );

  scope.get<{ Params: { hubId: string; messageId: string } }>(
    '/account/hubs/:hubId/content/:messageId',
    async (request, reply) => {
      const signedIn = await kit.signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      const { hubId, messageId } = request.params;
      const servable = await conversations.content(signedIn, hubId, messageId);
      return sendContent(request, reply, conversations.blobs, servable);
    },
  );

  scope.post<{ Params: ContactParams; Querystring: Query }>(
    '/account/hubs/:hubId/conversations/:lineId/reply',
    async (request, reply) => {
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const signedIn = await kit.requirePost(request, reply, form.get('csrf') ?? undefined);
      if (!signedIn) return reply;
      const { hubId, lineId } = request.params;
      const { cw } = wordsOf(request);
      const text = form.get('text') ?? '';
      // Line breaks as a browser sends them (CRLF) are sent as LINE shows them (LF).
      const typed = text.replace(/\r\n?/g, '\n');
      const problem =
        typed.trim() === ''
          ? cw.replyEmpty
          : typed.length > MAX_TEXT_CHARS
            ? cw.replyTooLong(typed.length)
            : undefined;
      if (problem)
        return contactConversation(request, reply, signedIn, undefined, { text: typed, message: problem });
      try {
        const send = await conversations.reply(signedIn, hubId, lineId, typed);
        return reply.redirect(`${conversationPath(hubId, lineId)}?send=${encodeURIComponent(send.id)}`, 303);
      } catch (error) {
        if (error instanceof AppError && error.status < 500 && error.code !== 'not_found') {
          return contactConversation(request, reply, signedIn, undefined, {
            text: typed,
            message: error.message,
          });
        }
        throw error;
      }
    },
  );

  scope.post<{ Params: ContactParams }>(
    '/account/hubs/:hubId/conversations/:lineId/erase',
    async (request, reply) => {
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const signedIn = await kit.requirePost(request, reply, form.get('csrf') ?? undefined);
      if (!signedIn) return reply;
      const { hubId, lineId } = request.params;
      const args = await common(request, signedIn, hubId);
      const page = await conversations.conversation(signedIn, hubId, lineId, undefined);
      if (!page) return kit.html(reply, 404, messagePage({ ...args, message: args.cw.contactNotFound }));
      if (form.get('confirm') !== 'yes') {
        return kit.html(reply, 200, confirmErasePage({ ...args, contact: page.contact }));
      }
      const erased = (await conversations.erase(signedIn, hubId, lineId)) ?? 0;
      // The notice names no one: the erased name must not live on in the browser's history.
      return reply.redirect(`${conversationsPath(hubId)}?erased=${erased}`, 303);
    },
  );
}

/** The paths of these pages and the methods each allows (another method is 405). */
export function declareConversationPaths(app: FastifyInstance, methods: PathMethods): void {
  for (const url of [
    '/account/hubs/:hubId/conversations',
    '/account/hubs/:hubId/conversations/:lineId',
    '/account/hubs/:hubId/content/:messageId',
    '/account/hubs/:hubId/conversations/:lineId/personal-data.zip',
    '/account/hubs/:hubId/audit',
    ...Object.keys(FORMATS).flatMap((format) => [
      `/account/hubs/:hubId/messages.${format}`,
      `/account/hubs/:hubId/conversations/:lineId/messages.${format}`,
    ]),
  ]) {
    methods.declare(app, { url, allowed: ['GET', 'HEAD'] });
  }
  methods.declare(app, { url: '/account/hubs/:hubId/conversations/:lineId/erase', allowed: ['POST'] });
  methods.declare(app, { url: '/account/hubs/:hubId/conversations/:lineId/reply', allowed: ['POST'] });
}
