/**
 * Calendar days and IANA time zones, computed with Intl only (never the server's local zone).
 */

export interface CalendarDay {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

export const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** `YYYY-MM-DD` naming a real day of the proleptic Gregorian calendar, or undefined. */
export function parseCalendarDay(text: string): CalendarDay | undefined {
  const match = DAY_PATTERN.exec(text);
  if (!match) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return { year, month, day };
}

export function dayKey(day: CalendarDay): number {
  return day.year * 10_000 + day.month * 100 + day.day;
}

export function formatCalendarDay(day: CalendarDay): string {
  return `${String(day.year).padStart(4, '0')}-${String(day.month).padStart(2, '0')}-${String(day.day).padStart(2, '0')}`;
}

export function nextDay(day: CalendarDay): CalendarDay {
  if (day.day < daysInMonth(day.year, day.month)) return { ...day, day: day.day + 1 };
  if (day.month < 12) return { year: day.year, month: day.month + 1, day: 1 };
  return { year: day.year + 1, month: 1, day: 1 };
}

/** Epoch ms of a UTC wall-clock time; safe for years 0-99, unlike Date.UTC. */
export function utcMillis(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

const OFFSET_ZONE = /^[+-]/;
const zoneNames = new Map<string, string | null>();

/**
 * The canonical IANA name of a time zone, or undefined when Intl does not know it.
 * Bare UTC offsets ("+09:00") are refused: the contract asks for IANA names.
 */
export function canonicalTimeZone(name: string): string | undefined {
  const cached = zoneNames.get(name);
  if (cached !== undefined) return cached ?? undefined;
  let canonical: string | null = null;
  if (name.length > 0 && name.length <= 64 && /^[A-Za-z0-9_+\-/]+$/.test(name) && !OFFSET_ZONE.test(name)) {
    try {
      canonical = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      canonical = null;
    }
  }
  if (zoneNames.size < 1000) zoneNames.set(name, canonical);
  return canonical ?? undefined;
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localTimeAt(epochMs: number, timeZone: string): LocalTime {
  const fields: LocalTime = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  let beforeCommonEra = false;
  for (const part of formatterFor(timeZone).formatToParts(epochMs)) {
    switch (part.type) {
      case 'year':
        fields.year = Number(part.value);
        break;
      case 'month':
        fields.month = Number(part.value);
        break;
      case 'day':
        fields.day = Number(part.value);
        break;
      case 'hour':
        fields.hour = Number(part.value);
        break;
      case 'minute':
        fields.minute = Number(part.value);
        break;
      case 'second':
        fields.second = Number(part.value);
        break;
      case 'era':
        beforeCommonEra = part.value === 'BC' || part.value === 'B';
        break;
    }
  }
  if (beforeCommonEra) fields.year = 1 - fields.year;
  return fields;
}

export function localDayAt(epochMs: number, timeZone: string): CalendarDay {
  const local = localTimeAt(epochMs, timeZone);
  return { year: local.year, month: local.month, day: local.day };
}

function offsetAt(epochMs: number, timeZone: string): number {
  const local = localTimeAt(epochMs, timeZone);
  const wholeSecond = epochMs - (((epochMs % 1000) + 1000) % 1000);
  return utcMillis(local.year, local.month, local.day, local.hour, local.minute, local.second) - wholeSecond;
}

const dayStarts = new Map<string, number>();

/**
 * The first instant (epoch ms) whose local date in `timeZone` is `day` or later.
 * That is local midnight, or the end of a daylight-saving gap when midnight does not exist.
 */
export function startOfDayInZone(day: CalendarDay, timeZone: string): number {
  const cacheKey = `${timeZone} ${dayKey(day)}`;
  const cached = dayStarts.get(cacheKey);
  if (cached !== undefined) return cached;

  const target = dayKey(day);
  const isOnOrAfter = (t: number) => dayKey(localDayAt(t, timeZone)) >= target;
  const wallClock = utcMillis(day.year, day.month, day.day);
  let guess = wallClock - offsetAt(wallClock, timeZone);
  guess = wallClock - offsetAt(guess, timeZone);

  let start = guess;
  if (!(isOnOrAfter(guess) && !isOnOrAfter(guess - 1))) {
    // Midnight fell in a gap (or the zone is unusual): search the first instant of the day.
    let low = wallClock - 36 * 3_600_000; // surely the day before
    let high = wallClock + 36 * 3_600_000; // surely the day itself or later
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (isOnOrAfter(middle)) high = middle;
      else low = middle;
    }
    start = high;
  }
  if (dayStarts.size > 10_000) dayStarts.clear();
  dayStarts.set(cacheKey, start);
  return start;
}

/** The instants [fromMs, toMsExclusive) covering the inclusive whole days `from`..`to` in `timeZone`. */
export function dayRangeInZone(
  from: CalendarDay | undefined,
  to: CalendarDay | undefined,
  timeZone: string,
): { fromMs: number | undefined; toMsExclusive: number | undefined } {
  return {
    fromMs: from ? startOfDayInZone(from, timeZone) : undefined,
    toMsExclusive: to ? startOfDayInZone(nextDay(to), timeZone) : undefined,
  };
}

const TIMESTAMP_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?(Z|[+-]\d{2}:\d{2})$/;

/** Smallest and largest instants whose ISO form is `YYYY-MM-DDTHH:MM:SS.sssZ` (24 characters). */
export const MIN_TIMESTAMP_MS = utcMillis(0, 1, 1);
export const MAX_TIMESTAMP_MS = utcMillis(9999, 12, 31, 23, 59, 59) + 999;

/**
 * Parses an ISO 8601 timestamp with a zone designator (`Z` or `±HH:MM`), seconds required,
 * milliseconds optional. Returns epoch ms, or undefined.
 */
export function parseTimestamp(text: string): number | undefined {
  const match = TIMESTAMP_PATTERN.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const day = parseCalendarDay(`${y}-${mo}-${d}`);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (!day || hour > 23 || minute > 59 || second > 59) return undefined;
  let ms =
    utcMillis(day.year, day.month, day.day, hour, minute, second) + Number((fraction ?? '0').padEnd(3, '0'));
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const offsetHours = Number(zone.slice(1, 3));
    const offsetMinutes = Number(zone.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    ms -= sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  if (ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) return undefined;
  return ms;
}

const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** `YYYY-MM-DDT` of recent days (an export walks each contact's days, over and over). */
const dayPrefixes = new Map<number, string>();
const DAY_PREFIXES_KEPT = 4096;

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ`, always 24 characters for the instants chatlog stores: the same string
 * as `Date#toISOString`, built from the day's prefix (computed once per day) and lookup tables,
 * because an export formats millions of them.
 */
export function formatTimestamp(epochMs: number): string {
  if (!Number.isSafeInteger(epochMs) || epochMs < MIN_TIMESTAMP_MS || epochMs > MAX_TIMESTAMP_MS) {
    return new Date(epochMs).toISOString();
  }
  const day = Math.floor(epochMs / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= DAY_PREFIXES_KEPT) dayPrefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  let rest = epochMs - day * DAY_MS;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${prefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[millis]}Z`;
}
