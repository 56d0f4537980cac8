/**
 * A report's figures (CONTRACT §17) from one pass over the range's messages in the order section 3
 * gives them (created, then received), with each contact's message just before the range: the
 * store reads those (../../store/sql/reports.ts), this counts. No sort of the messages, one map
 * entry a contact; the response times alone are sorted, a day at a time, for their ranks.
 */
import {
  type CalendarDay,
  dayKey,
  formatCalendarDay,
  nextDay,
  startOfDayInZone,
} from '../../lib/calendar.js';
import type { ReportScan } from '../../store/store.js';

export interface ResponseSeconds {
  median: number | null;
  p90: number | null;
}

export interface ReportFigures {
  fromFriends: number;
  fromAccount: number;
  contacts: number;
  newContacts: number;
  waits: number;
  answered: number;
  unanswered: number;
  responseSeconds: ResponseSeconds;
}

export interface ReportDay extends ReportFigures {
  day: string;
}

export interface Report {
  hubId: string;
  timeZone: string;
  from: string;
  to: string;
  totals: ReportFigures;
  days: ReportDay[];
  /** hours[weekday][hour]: messages from friends, weekday 0 = Monday, in the report's zone. */
  hours: number[][];
}

/** The days `from`..`to` and the instant each starts, with the instant after the last one. */
export function daysOf(
  from: CalendarDay,
  to: CalendarDay,
  timeZone: string,
): { days: CalendarDay[]; starts: number[] } {
  const days: CalendarDay[] = [];
  const starts: number[] = [];
  for (let day = from; dayKey(day) <= dayKey(to); day = nextDay(day)) {
    days.push(day);
    starts.push(startOfDayInZone(day, timeZone));
  }
  starts.push(startOfDayInZone(nextDay(to), timeZone));
  return { days, starts };
}

/** Nearest rank (the smallest value with at least `p` of them at or below it); null when empty. */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? null;
}

function responseSecondsOf(seconds: number[]): ResponseSeconds {
  seconds.sort((a, b) => a - b);
  return { median: nearestRank(seconds, 0.5), p90: nearestRank(seconds, 0.9) };
}

/** Monday 0 … Sunday 6, of a calendar day. */
export function weekdayOf(day: CalendarDay): number {
  const daysSinceEpoch = Math.floor(Date.UTC(day.year, day.month - 1, day.day) / 86_400_000);
  return (((daysSinceEpoch + 3) % 7) + 7) % 7; // 1970-01-01 was a Thursday (3)
}

/**
 * The local hour of instants within one day: on a day whose offset from UTC does not change, the
 * hours since the day's first instant plus the local hour it starts at; on a day the clocks change,
 * the zone's own answer, a quarter of an hour at a time (every offset in use is whole quarters).
 */
class HourOfDay {
  private readonly format: Intl.DateTimeFormat;
  private readonly quarters = new Map<number, number>();
  constructor(timeZone: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      hour: '2-digit',
      minute: '2-digit',
    });
  }
  private minutesAt(at: number): number {
    let hour = 0;
    let minute = 0;
    for (const part of this.format.formatToParts(at)) {
      if (part.type === 'hour') hour = Number(part.value);
      else if (part.type === 'minute') minute = Number(part.value);
    }
    return hour * 60 + minute;
  }
  /** A function from an instant of [start, end) to its local hour. */
  forDay(start: number, end: number): (at: number) => number {
    const startMinutes = this.minutesAt(start);
    const lastMinutes = this.minutesAt(end - 60_000);
    const steady = startMinutes + (end - 60_000 - start) / 60_000 === lastMinutes;
    if (steady) return (at) => Math.floor((startMinutes + (at - start) / 60_000) / 60);
    return (at) => {
      const quarter = Math.floor(at / 900_000);
      let minutes = this.quarters.get(quarter);
      if (minutes === undefined) {
        minutes = this.minutesAt(quarter * 900_000);
        this.quarters.set(quarter, minutes);
      }
      return Math.floor((minutes + (at - quarter * 900_000) / 60_000) / 60) % 24;
    };
  }
}

interface ContactState {
  /** The side of the contact's last message seen: true from the account. */
  lastFromAccount: boolean | undefined;
  /** The day index of its last message counted (contacts a day). */
  lastDay: number;
  /** The open wait: its start and day index, or -1. */
  waitStart: number;
  waitDay: number;
}

export function computeReport(
  header: { hubId: string; timeZone: string; from: CalendarDay; to: CalendarDay },
  scan: ReportScan,
): Report {
  const { days, starts } = daysOf(header.from, header.to, header.timeZone);
  const figures = days.map(() => ({
    fromFriends: 0,
    fromAccount: 0,
    contacts: 0,
    newContacts: 0,
    waits: 0,
    answered: 0,
  }));
  const seconds: number[][] = days.map(() => []);
  const hours = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
  const hourOfDay = new HourOfDay(header.timeZone);
  const contacts = new Map<number, ContactState>();

  let dayIndex = -1;
  let dayEnd = starts[0] ?? 0;
  let hourOf: (at: number) => number = () => 0;
  let weekday = 0;
  const { contact: contactIds, createdAt, fromAccount } = scan;
  for (let i = 0; i < createdAt.length; i++) {
    const at = createdAt[i] as number;
    while (at >= dayEnd && dayIndex < days.length - 1) {
      dayIndex += 1;
      dayEnd = starts[dayIndex + 1] as number;
      hourOf = hourOfDay.forDay(starts[dayIndex] as number, dayEnd);
      weekday = weekdayOf(days[dayIndex] as CalendarDay);
    }
    const day = figures[dayIndex];
    if (day === undefined) continue; // outside the range (the store reads only inside it)
    const id = contactIds[i] as number;
    const account = fromAccount[i] === 1;
    let state = contacts.get(id);
    if (state === undefined) {
      const before = scan.before.get(id);
      state = { lastFromAccount: before, lastDay: -1, waitStart: -1, waitDay: -1 };
      contacts.set(id, state);
      // Its first message ever, of those kept, is this one.
      if (before === undefined) day.newContacts += 1;
    }
    if (state.lastDay !== dayIndex) {
      state.lastDay = dayIndex;
      day.contacts += 1;
    }
    if (account) {
      day.fromAccount += 1;
      if (state.waitStart >= 0) {
        const waitDay = figures[state.waitDay];
        if (waitDay) waitDay.answered += 1;
        seconds[state.waitDay]?.push((at - state.waitStart) / 1000);
        state.waitStart = -1;
      }
    } else {
      day.fromFriends += 1;
      (hours[weekday] as number[])[hourOf(at)]! += 1;
      if (state.lastFromAccount !== false) {
        day.waits += 1;
        state.waitStart = at;
        state.waitDay = dayIndex;
      }
    }
    state.lastFromAccount = account;
  }

  const reportDays: ReportDay[] = figures.map((f, i) => ({
    day: formatCalendarDay(days[i] as CalendarDay),
    fromFriends: f.fromFriends,
    fromAccount: f.fromAccount,
    contacts: f.contacts,
    newContacts: f.newContacts,
    waits: f.waits,
    answered: f.answered,
    unanswered: f.waits - f.answered,
    responseSeconds: responseSecondsOf([...(seconds[i] as number[])]),
  }));
  const sum = (pick: (d: ReportDay) => number) => reportDays.reduce((total, d) => total + pick(d), 0);
  const totals: ReportFigures = {
    fromFriends: sum((d) => d.fromFriends),
    fromAccount: sum((d) => d.fromAccount),
    contacts: contacts.size,
    newContacts: sum((d) => d.newContacts),
    waits: sum((d) => d.waits),
    answered: sum((d) => d.answered),
    unanswered: sum((d) => d.unanswered),
    responseSeconds: responseSecondsOf(seconds.flat()),
  };
  return {
    hubId: header.hubId,
    timeZone: header.timeZone,
    from: formatCalendarDay(header.from),
    to: formatCalendarDay(header.to),
    totals,
    days: reportDays,
    hours,
  };
}
