/**
 * Calendar days and IANA time zones, computed with Intl only (never the server's local zone).
 */
import { TZDB_NAMES_BY_AREA } from './tzdb-names.js';

export interface CalendarDay {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const DAY_MS = 86_400_000;

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

/** The calendar day `count` days before `day` (plain calendar arithmetic, no zone involved). */
export function daysBefore(day: CalendarDay, count: number): CalendarDay {
  const shifted = new Date(utcMillis(day.year, day.month, day.day) - count * DAY_MS);
  return { year: shifted.getUTCFullYear(), month: shifted.getUTCMonth() + 1, day: shifted.getUTCDate() };
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

/**
 * Names of the tz database that are also abbreviations of a zone's time (`EST` is New York's winter
 * and tzdb's fixed UTC-5): refused like the abbreviations that are not tzdb names at all (JST, CST).
 * UTC and GMT name one instant everywhere, and stay.
 */
const ABBREVIATION_NAMES = new Set(['CET', 'EET', 'EST', 'HST', 'MET', 'MST', 'WET']);

/** What a time zone must be, in every error that refuses one. */
export const TIME_ZONE_RULE =
  'must be a time zone name of the IANA tz database, such as Asia/Tokyo or America/Chicago (abbreviations such as JST or CST are not zone names)';

let tzdbNames: Map<string, string> | undefined;

/** The tz database's own spelling of `name` (its names are matched without regard to case). */
function tzdbName(name: string): string | undefined {
  if (!tzdbNames) {
    tzdbNames = new Map();
    for (const [area, rest] of Object.entries(TZDB_NAMES_BY_AREA)) {
      for (const place of rest.split(' ')) {
        const full = area === '' ? place : `${area}/${place}`;
        if (!ABBREVIATION_NAMES.has(full)) tzdbNames.set(full.toLowerCase(), full);
      }
    }
  }
  return tzdbNames.get(name.toLowerCase());
}

/** The tz database's own spelling of a zone Intl knows (`asia/kathmandu` → `Asia/Kathmandu`), else undefined. */
export function tzdbSpelling(name: string): string | undefined {
  return canonicalTimeZone(name) === undefined ? undefined : tzdbName(name);
}

const zoneNames = new Map<string, string | null>();

/**
 * The canonical name of a time zone (as Intl names it), or undefined unless `name` is a zone or link
 * of the IANA tz database that Intl knows. Abbreviations (JST, CST, PST, EST), which ICU would read as
 * a guess at one zone of several, and bare offsets ("+09:00") are refused.
 */
export function canonicalTimeZone(name: string): string | undefined {
  const cached = zoneNames.get(name);
  if (cached !== undefined) return cached ?? undefined;
  let canonical: string | null = null;
  const known = name.length <= 64 ? tzdbName(name) : undefined;
  if (known) {
    try {
      canonical = new Intl.DateTimeFormat('en-US', { timeZone: known }).resolvedOptions().timeZone;
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

/**
 * RFC 3339's `date-time` (section 5.6), exactly: `T` and `Z` in either case, any number of fraction
 * digits, a numeric offset always `±HH:MM`. A space for the `T`, an offset without its colon or a
 * missing seconds field are ISO 8601 forms that RFC 3339 refuses, and so does chatlog.
 */
const RFC3339_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * The same syntax as a JSON Schema `pattern`, for the published document: with `format: date-time`
 * (which validators such as ajv-formats read loosely: a space for the `T`, `+0900`, `24:00:60`), it
 * states exactly what `parseTimestamp` reads.
 */
export const RFC3339_DATE_TIME_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}[Tt]([01]\\d|2[0-3]):[0-5]\\d:([0-5]\\d|60)(\\.\\d+)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$';

/** Smallest and largest instants whose ISO form is `YYYY-MM-DDTHH:MM:SS.sssZ` (24 characters). */
export const MIN_TIMESTAMP_MS = utcMillis(0, 1, 1);
export const MAX_TIMESTAMP_MS = utcMillis(9999, 12, 31, 23, 59, 59) + 999;

/** An instant chatlog can store and write in its 24 characters: whole ms, years 0000 to 9999 UTC. */
export function isStorableInstant(value: unknown): value is number {
  return (
    Number.isSafeInteger(value) &&
    (value as number) >= MIN_TIMESTAMP_MS &&
    (value as number) <= MAX_TIMESTAMP_MS
  );
}

/** What a refused timestamp is told, on the ingest API and in `chatlog import` alike. */
export const TIMESTAMP_RULE =
  'must be an RFC 3339 date-time from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, such as 2019-11-03T10:15:00.000Z';

/**
 * Epoch ms of an RFC 3339 date-time, or undefined when `text` is not one or names an instant outside
 * years 0000 to 9999 UTC. Fraction digits past the millisecond are truncated, never rounded (an
 * instant stays in its own second). A leap second (`23:59:60` UTC, as ajv-formats reads RFC 3339)
 * is kept as the last millisecond of its minute, so it stays on its day and after every earlier time.
 */
export function parseTimestamp(text: string): number | undefined {
  const match = RFC3339_DATE_TIME.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, sign, offsetH, offsetM] = match;
  const day = parseCalendarDay(`${y}-${mo}-${d}`);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  const offsetHours = Number(offsetH ?? 0);
  const offsetMinutes = Number(offsetM ?? 0);
  if (!day || hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) {
    return undefined;
  }
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  let ms: number;
  if (second === 60) {
    const utcMinuteStart = utcMillis(day.year, day.month, day.day, hour, minute) - offsetMs;
    const inUtc = new Date(utcMinuteStart);
    if (inUtc.getUTCHours() !== 23 || inUtc.getUTCMinutes() !== 59) return undefined;
    ms = utcMinuteStart + 59_999;
  } else {
    const millis = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
    ms = utcMillis(day.year, day.month, day.day, hour, minute, second) + millis - offsetMs;
  }
  return isStorableInstant(ms) ? ms : undefined;
}

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
  if (!isStorableInstant(epochMs)) {
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

const QUARTER_HOUR_MS = 15 * 60_000;

/**
 * `YYYY-MM-DD HH:MM:SS`, the wall clock of instants in `timeZone`, for many instants at once (an
 * export): the zone's offset is looked up once per quarter hour and checked at both its ends, so a
 * quarter hour that holds a change of offset is worked out instant by instant.
 */
export function wallClockIn(timeZone: string): (epochMs: number) => string {
  const offsets = new Map<number, number | null>();
  return (epochMs) => {
    const quarter = Math.floor(epochMs / QUARTER_HOUR_MS);
    let offset = offsets.get(quarter);
    if (offset === undefined) {
      if (offsets.size > 10_000) offsets.clear();
      const start = offsetAt(quarter * QUARTER_HOUR_MS, timeZone);
      offset = start === offsetAt((quarter + 1) * QUARTER_HOUR_MS - 1, timeZone) ? start : null;
      offsets.set(quarter, offset);
    }
    const local = new Date(epochMs + (offset ?? offsetAt(epochMs, timeZone))).toISOString();
    // Years 0 to 9999 have four digits; before year 0 (an instant of year 0 in a zone west of UTC)
    // the date has six and a sign, spelled as formatCalendarDay spells those years.
    if (local.length === 24) return `${local.slice(0, 10)} ${local.slice(11, 19)}`;
    const t = localTimeAt(epochMs, timeZone);
    const two = (n: number) => String(n).padStart(2, '0');
    return `${formatCalendarDay(t)} ${two(t.hour)}:${two(t.minute)}:${two(t.second)}`;
  };
}
