/**
 * Times and days as the account screen shows them: in the hub's own IANA time zone (the zone the
 * API reads `from` and `to` in), never the server's zone and never silently UTC.
 */
import { daysBefore, formatCalendarDay, localDayAt, localTimeAt } from '../../lib/calendar.js';

/** The example's range: a week, so that it holds more than the newest message's own day. */
const EXAMPLE_DAYS = 7;

const two = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM`, the wall-clock time of an instant in `timeZone`. */
export function formatLocalMinute(epochMs: number, timeZone: string): string {
  const t = localTimeAt(epochMs, timeZone);
  return `${formatCalendarDay(t)} ${two(t.hour)}:${two(t.minute)}`;
}

export interface DayRange {
  from: string;
  to: string;
}

/**
 * The `from`/`to` of the screen's example curl: the week ending on the day of the hub's newest
 * message, in the hub's zone, so that a user who copies it sees messages; the week ending today
 * while the hub has none.
 */
export function exampleDays(latestMessageAt: number | undefined, now: number, timeZone: string): DayRange {
  const last = localDayAt(latestMessageAt ?? now, timeZone);
  return { from: formatCalendarDay(daysBefore(last, EXAMPLE_DAYS - 1)), to: formatCalendarDay(last) };
}
