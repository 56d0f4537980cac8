/**
 * A report's figures (CONTRACT §17) from one pass over the range's messages in the order section 3
 * gives them (created, then received), with the side of each contact's message just before the
 * range: the hub's columns (./reports.columns.ts) hold those, this counts. No sort of the messages,
 * a typed array slot a contact; the response times alone are sorted, a day at a time, for their ranks.
 */
import {
  type CalendarDay,
  dayKey,
  formatCalendarDay,
  nextDay,
  startOfDayInZone,
} from '../../lib/calendar.js';

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

/** Messages in section 3's order, [start, end) of them counted. */
export interface ReportInput {
  /** Each message's contact, as an index below `contacts`. */
  contact: ArrayLike<number>;
  createdAt: ArrayLike<number>;
  /** 1: from the account. */
  fromAccount: ArrayLike<number>;
  /**
   * The side of the contact's message before this one (-1: none, 0: the friend's, 1: the
   * account's); read at each contact's first message counted.
   */
  previous: ArrayLike<number>;
  start: number;
  end: number;
  /** How many contacts there are (each `contact` is below it). */
  contacts: number;
}

/** Nearest ranks of a day's (or the range's) response times. */
function ranksOf(seconds: readonly number[] | Float64Array): ResponseSeconds {
  const sorted = Float64Array.from(seconds).sort();
  return { median: nearestRankOf(sorted, 0.5), p90: nearestRankOf(sorted, 0.9) };
}

/** Nearest rank (the smallest value with at least `p` of them at or below it); null when empty. */
function nearestRankOf(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? null;
}

export function computeReport(
  header: { hubId: string; timeZone: string; from: CalendarDay; to: CalendarDay },
  input: ReportInput,
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
  // Each contact's state: the side of its last message seen (-2: not seen yet, -1: none before the
  // range), the day index of its last message counted, and its open wait (start, or -1, and day).
  const lastSide = new Int8Array(input.contacts).fill(-2);
  const lastDay = new Int32Array(input.contacts).fill(-1);
  const waitStart = new Float64Array(input.contacts).fill(-1);
  const waitDay = new Int32Array(input.contacts);
  let seen = 0;

  let dayIndex = -1;
  let dayEnd = starts[0] ?? 0;
  let hourOf: (at: number) => number = () => 0;
  let weekday = 0;
  const { contact: contactOf, createdAt, fromAccount, previous } = input;
  for (let i = input.start; i < input.end; i++) {
    const at = createdAt[i] as number;
    while (at >= dayEnd && dayIndex < days.length - 1) {
      dayIndex += 1;
      dayEnd = starts[dayIndex + 1] as number;
      hourOf = hourOfDay.forDay(starts[dayIndex] as number, dayEnd);
      weekday = weekdayOf(days[dayIndex] as CalendarDay);
    }
    const day = figures[dayIndex];
    if (day === undefined || at >= dayEnd) continue; // outside the range (the caller gives only inside it)
    const id = contactOf[i] as number;
    const account = fromAccount[i] === 1;
    if (lastSide[id] === -2) {
      seen += 1;
      const before = previous[i] as number;
      lastSide[id] = before;
      // Its first message ever, of those kept, is this one.
      if (before === -1) day.newContacts += 1;
    }
    if (lastDay[id] !== dayIndex) {
      lastDay[id] = dayIndex;
      day.contacts += 1;
    }
    if (account) {
      day.fromAccount += 1;
      const started = waitStart[id] as number;
      if (started >= 0) {
        const from = waitDay[id] as number;
        (figures[from] as { answered: number }).answered += 1;
        (seconds[from] as number[]).push((at - started) / 1000);
        waitStart[id] = -1;
      }
    } else {
      day.fromFriends += 1;
      (hours[weekday] as number[])[hourOf(at)]! += 1;
      // A wait starts after the account's message, or at the contact's first.
      if (lastSide[id] !== 0) {
        day.waits += 1;
        waitStart[id] = at;
        waitDay[id] = dayIndex;
      }
    }
    lastSide[id] = account ? 1 : 0;
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
    responseSeconds: ranksOf(seconds[i] as number[]),
  }));
  const sum = (pick: (d: ReportDay) => number) => reportDays.reduce((total, d) => total + pick(d), 0);
  const totals: ReportFigures = {
    fromFriends: sum((d) => d.fromFriends),
    fromAccount: sum((d) => d.fromAccount),
    contacts: seen,
    newContacts: sum((d) => d.newContacts),
    waits: sum((d) => d.waits),
    answered: sum((d) => d.answered),
    unanswered: sum((d) => d.unanswered),
    responseSeconds: ranksOf(seconds.flat()),
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
