/**
 * The Reports page over HTTP (CONTRACT §17), inside the account screen's scope (its CSP, no-store
 * and session rules): `/account/hubs/:hubId/reports?from&to` (the last 28 days of the hub's zone by
 * default) and its days as CSV. Days that cannot be read show the form again with why (400).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type CalendarDay, daysBefore, formatCalendarDay, localDayAt } from '../../lib/calendar.js';
import type { AppError } from '../../lib/errors.js';
import type { PathMethods } from '../../lib/methods.js';
import { attachment } from '../content/content.range.js';
import { reportCsv } from '../reports/reports.csv.js';
import { readReportDays } from '../reports/reports.usecases.js';
import { CONVERSATION_WORDS } from './account.conversations.i18n.js';
import type { AccountConversations } from './account.conversations.js';
import type { PageKit } from './account.kit.js';
import { REPORT_WORDS, type ReportWords } from './account.reports.i18n.js';
import { reportsPage, reportsPath } from './account.reports.pages.js';

type HubParams = { hubId: string };
type Query = Record<string, string | undefined>;

/** Days a report shows when none are asked: the last 28, today included. */
const DEFAULT_DAYS = 28;

/** The days asked (or the default), checked as the API checks them; a problem in the page's words. */
async function daysAsked(
  query: Query,
  timeZone: string,
  rw: ReportWords,
): Promise<
  { from: string; to: string } & ({ days: { from: CalendarDay; to: CalendarDay } } | { problem: string })
> {
  const today = localDayAt(Date.now(), timeZone);
  const from = query.from ?? formatCalendarDay(daysBefore(today, DEFAULT_DAYS - 1));
  const to = query.to ?? formatCalendarDay(today);
  try {
    const days = await readReportDays(new URLSearchParams({ from, to }), timeZone);
    return { from, to, days };
  } catch (error) {
    const code = (error as AppError).code;
    const problem =
      code === 'invalid_range'
        ? rw.badRange
        : code === 'range_too_long'
          ? rw.tooLong
          : [
              ...(['from', 'to'] as const)
                .filter((name) => !/^\d{4}-\d{2}-\d{2}$/.test({ from, to }[name]))
                .map((name) => rw.badDay(rw[name], { from, to }[name].slice(0, 40))),
            ].join(' ') || rw.badDay(`${rw.from} / ${rw.to}`, `${from} – ${to}`.slice(0, 60));
    return { from: from.slice(0, 40), to: to.slice(0, 40), problem };
  }
}

export function registerReportPages(
  scope: FastifyInstance,
  kit: PageKit,
  conversations: AccountConversations,
): void {
  const show = async (
    request: FastifyRequest<{ Params: HubParams; Querystring: Query }>,
    reply: FastifyReply,
    format: 'page' | 'csv',
  ) => {
    const { hubId } = request.params;
    if (format === 'page') {
      const switched = kit.switchLanguage(request, reply, reportsPath(hubId));
      if (switched) return switched;
    }
    const signedIn = await kit.signedInOf(request);
    if (!signedIn) return reply.redirect('/account', 303);
    const hub = await conversations.hubOf(signedIn, hubId);
    const { language, words } = kit.languageOf(request);
    const rw = REPORT_WORDS[language];
    const asked = await daysAsked(request.query, hub.timeZone, rw);
    const report =
      'days' in asked
        ? await conversations.report(signedIn, hubId, asked.days.from, asked.days.to)
        : undefined;
    if (format === 'csv' && report) {
      return reply
        .header('Content-Disposition', attachment(`chatlog-report-${hubId}-${asked.from}-${asked.to}.csv`))
        .type('text/csv; charset=utf-8')
        .send(reportCsv(report));
    }
    return kit.html(
      reply,
      report ? 200 : 400,
      reportsPage({
        language,
        words,
        rw,
        cw: CONVERSATION_WORDS[language],
        email: signedIn.account.email,
        csrfToken: kit.csrfToken(signedIn),
        hubId,
        timeZone: hub.timeZone,
        downloadsMedia: Boolean(hub.lineChannelAccessTokenEncrypted),
        from: asked.from,
        to: asked.to,
        report,
        problem: 'problem' in asked ? asked.problem : undefined,
      }),
    );
  };
  scope.get<{ Params: HubParams; Querystring: Query }>('/account/hubs/:hubId/reports', (request, reply) =>
    show(request, reply, 'page'),
  );
  scope.get<{ Params: HubParams; Querystring: Query }>('/account/hubs/:hubId/reports.csv', (request, reply) =>
    show(request, reply, 'csv'),
  );
}

export function declareReportPaths(app: FastifyInstance, methods: PathMethods): void {
  for (const url of ['/account/hubs/:hubId/reports', '/account/hubs/:hubId/reports.csv']) {
    methods.declare(app, { url, allowed: ['GET', 'HEAD'] });
  }
}
