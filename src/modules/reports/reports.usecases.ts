/**
 * Reports (CONTRACT §17): the checks in their order, then the figures of the range's days, for the
 * API, the account screen's Reports page and `chatlog report` alike.
 */
import {
  type CalendarDay,
  dayKey,
  dayRangeInZone,
  parseCalendarDay,
  tzdbSpelling,
} from '../../lib/calendar.js';
import type { AppError } from '../../lib/errors.js';
import type { AuditSlot } from '../audit/audit.slot.js';
import { type AuthorizeDeps, authorizePartTwo, partTwoEndpoint } from '../keys/keys.authorize.js';
import { messageErrors } from '../messages/messages.errors.js';
import type { ReportColumns } from './reports.columns.js';
import { computeReport, type Report } from './reports.compute.js';
import { reportErrors } from './reports.errors.js';

/** Days a report covers at most, counting both ends. */
export const MAX_REPORT_DAYS = 366;

/** The codes of the checks in their order (the OpenAPI document shows it). */
export const REPORT_CHECK_ORDER = [
  'ambiguous_credentials',
  'missing_api_key',
  'invalid_api_key',
  'insufficient_scope',
  'invalid_hub_id',
  'forbidden',
  'duplicate_parameter',
  'invalid_date',
  'invalid_range',
  'range_too_long',
  'invalid_time_zone',
  'rate_limited',
] as const satisfies readonly AppError['code'][];

const REPORTS = partTwoEndpoint('read', 'read reports', true);
const SINGLE_VALUED = ['from', 'to', 'tz'] as const;

export interface ReportDeps {
  /** The hubs' messages as reports count them (one for the process). */
  reports: ReportColumns;
  authorize: AuthorizeDeps;
}

export interface ReportQuery {
  hubId: string;
  from: CalendarDay;
  to: CalendarDay;
  timeZone: string;
}

/** The days a range covers, counting both. */
export function daysCovered(from: CalendarDay, to: CalendarDay): number {
  return (
    (Date.UTC(to.year, to.month - 1, to.day) - Date.UTC(from.year, from.month - 1, from.day)) / 86_400_000 + 1
  );
}

/**
 * `from`, `to` (both required) and `tz`, as §17 checks them: each day real, `from` not after `to`,
 * at most 366 days, then the zone. `refuse` turns an error into the one to throw (it counts it).
 */
export async function readReportDays(
  params: URLSearchParams,
  hubTimeZone: string,
  refuse: (error: AppError) => Promise<AppError> = async (error) => error,
  /** How the asker wrote the parameters (`--from` on the command line). */
  names: { from: string; to: string; tz: string } = { from: 'from', to: 'to', tz: 'tz' },
): Promise<{ from: CalendarDay; to: CalendarDay; timeZone: string }> {
  for (const name of ['from', 'to'] as const) {
    const text = params.get(name);
    if (text === null) throw await refuse(reportErrors.dayRequired(names[name]));
    if (!parseCalendarDay(text)) throw await refuse(messageErrors.invalidDate(names[name], text));
  }
  const from = parseCalendarDay(params.get('from') as string) as CalendarDay;
  const to = parseCalendarDay(params.get('to') as string) as CalendarDay;
  if (dayKey(from) > dayKey(to)) throw await refuse(messageErrors.invalidRange(names.from, names.to));
  if (daysCovered(from, to) > MAX_REPORT_DAYS) throw await refuse(reportErrors.rangeTooLong(MAX_REPORT_DAYS));
  const tz = params.get('tz');
  if (tz === null) return { from, to, timeZone: hubTimeZone };
  // The zone as the tz database spells it (ICU's canonical name can be an older one: Asia/Katmandu).
  const timeZone = tzdbSpelling(tz);
  if (timeZone === undefined) {
    throw await refuse(messageErrors.invalidTimeZone(names.tz, names.tz === 'tz' ? undefined : tz));
  }
  return { from, to, timeZone };
}

export async function checkReportRequest(
  deps: ReportDeps,
  request: { hubId: string; query: string; authorization: string | undefined; audit?: AuditSlot | undefined },
): Promise<{ query: ReportQuery; headers: Record<string, string> }> {
  const params = new URLSearchParams(request.query);
  const access = await authorizePartTwo(deps.authorize, REPORTS, {
    hubId: request.hubId,
    params,
    authorization: request.authorization,
    audit: request.audit,
  });
  const { hub, refuse } = access;
  for (const name of SINGLE_VALUED) {
    if (params.getAll(name).length > 1) throw await refuse(messageErrors.duplicateParameter(name));
  }
  const days = await readReportDays(params, hub.timeZone, refuse);
  const headers = await access.admit();
  return { query: { hubId: request.hubId, ...days }, headers };
}

/** The report of a checked range: the hub's columns brought up to date, the range's counted. */
export async function buildReport(reports: ReportColumns, query: ReportQuery): Promise<Report> {
  const { fromMs, toMsExclusive } = dayRangeInZone(query.from, query.to, query.timeZone);
  const hub = await reports.of(query.hubId);
  const input = hub?.slice(fromMs as number, toMsExclusive as number) ?? NO_MESSAGES;
  return computeReport(query, input);
}

const NO_MESSAGES = {
  contact: [],
  createdAt: [],
  fromAccount: [],
  previous: [],
  start: 0,
  end: 0,
  contacts: 0,
};
