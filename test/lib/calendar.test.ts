import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  canonicalTimeZone,
  dayKey,
  dayRangeInZone,
  formatCalendarDay,
  formatTimestamp,
  localDayAt,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  nextDay,
  parseCalendarDay,
  parseTimestamp,
  startOfDayInZone,
} from '../../src/lib/calendar.js';
import { TZDB_NAMES_BY_AREA } from '../../src/lib/tzdb-names.js';
import { dateTimeLike, isStorableInstant, rfc3339EpochMs } from '../fixtures/rfc3339.js';

const ZONES = [
  'UTC',
  'Asia/Tokyo',
  'America/Los_Angeles',
  'America/New_York',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Pacific/Chatham',
  'America/Santiago',
  'Asia/Beirut',
  'Pacific/Apia',
];

test('real calendar days are accepted, others refused', () => {
  assert.deepEqual(parseCalendarDay('2024-02-29'), { year: 2024, month: 2, day: 29 });
  for (const bad of [
    '2023-02-29',
    '2024-1-05',
    '2024-01-5',
    '9999-99-99',
    '2024-13-01',
    '2024-00-10',
    '2024-04-31',
    '',
    ' 2024-01-01',
    '2024-01-01 ',
    '２０２４-01-01',
    '2024/01/01',
    '+2024-01-01',
  ]) {
    assert.equal(parseCalendarDay(bad), undefined, bad);
  }
});

test('parseCalendarDay agrees with the Gregorian calendar for every day of years 0001-9999', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 9999 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 31 }),
      (y, m, d) => {
        const text = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
        const date = new Date(0);
        date.setUTCFullYear(y, m - 1, d);
        const real = date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
        const parsed = parseCalendarDay(text);
        assert.equal(parsed !== undefined, real);
        if (parsed) assert.equal(formatCalendarDay(parsed), text);
      },
    ),
    { numRuns: 2000 },
  );
});

test('a day starts at local midnight: Tokyo, and Los Angeles across both DST changes', () => {
  const start = (text: string, zone: string) =>
    formatTimestamp(startOfDayInZone(parseCalendarDay(text)!, zone));
  assert.equal(start('2019-11-03', 'Asia/Tokyo'), '2019-11-02T15:00:00.000Z');
  assert.equal(start('2024-03-10', 'America/Los_Angeles'), '2024-03-10T08:00:00.000Z');
  assert.equal(start('2024-03-11', 'America/Los_Angeles'), '2024-03-11T07:00:00.000Z');
  assert.equal(start('2024-11-03', 'America/Los_Angeles'), '2024-11-03T07:00:00.000Z');
  assert.equal(start('2024-11-04', 'America/Los_Angeles'), '2024-11-04T08:00:00.000Z');
  // Midnight does not exist on a day whose DST starts at 00:00: the day starts at 01:00.
  assert.equal(start('2023-09-03', 'America/Santiago'), '2023-09-03T04:00:00.000Z');
});

test('every instant lies in the range of its own local day, and only there', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2037, 11, 31) }),
      fc.constantFrom(...ZONES),
      (t, zone) => {
        const day = localDayAt(t, zone);
        const { fromMs, toMsExclusive } = dayRangeInZone(day, day, zone);
        assert.ok(fromMs !== undefined && toMsExclusive !== undefined);
        assert.ok(fromMs <= t && t < toMsExclusive, `${formatTimestamp(t)} in ${zone}`);
        assert.equal(dayKey(localDayAt(fromMs, zone)), dayKey(day));
        assert.ok(dayKey(localDayAt(fromMs - 1, zone)) < dayKey(day));
        assert.equal(toMsExclusive, startOfDayInZone(nextDay(day), zone));
      },
    ),
    { numRuns: 3000 },
  );
});

test('time zones: every zone and link of the tz database is accepted, in any case; Intl knows them all', () => {
  const names = Object.entries(TZDB_NAMES_BY_AREA).flatMap(([area, rest]) =>
    rest.split(' ').map((place) => (area === '' ? place : `${area}/${place}`)),
  );
  assert.ok(names.length > 550);
  const abbreviations = new Set(['CET', 'EET', 'EST', 'HST', 'MET', 'MST', 'WET']);
  for (const name of names) {
    if (abbreviations.has(name)) continue;
    const canonical = canonicalTimeZone(name);
    assert.ok(canonical, name);
    assert.equal(canonicalTimeZone(name.toLowerCase()), canonical, name);
  }
  // Every zone this Node's ICU offers is one of them (a newer ICU with a new zone fails here, not in use).
  for (const name of Intl.supportedValuesOf('timeZone')) assert.ok(canonicalTimeZone(name), name);
  assert.equal(canonicalTimeZone('Asia/Kolkata'), canonicalTimeZone('Asia/Calcutta'));
  assert.equal(canonicalTimeZone('US/Pacific'), 'America/Los_Angeles');
  assert.equal(canonicalTimeZone('utc'), 'UTC');
});

test('time zones: abbreviations are refused, though ICU would guess a zone for each', () => {
  // ICU reads each of these as one zone of several it could mean (CST: Chicago, not Shanghai or Havana).
  const guessed = ['JST', 'CST', 'PST', 'IST', 'AST', 'BST', 'ECT', 'NST', 'SST', 'CTT', 'EAT', 'AET', 'PRT'];
  for (const name of guessed) {
    assert.doesNotThrow(() => new Intl.DateTimeFormat('en', { timeZone: name }), name);
    assert.equal(canonicalTimeZone(name), undefined, name);
  }
  // tz database names that are a zone's abbreviation too (EST: fixed UTC-5, not New York).
  for (const name of ['EST', 'MST', 'HST', 'CET', 'EET', 'WET', 'MET', 'est']) {
    assert.equal(canonicalTimeZone(name), undefined, name);
  }
});

test('time zones: IANA names are canonicalised, offsets and nonsense refused', () => {
  assert.equal(canonicalTimeZone('Asia/Tokyo'), 'Asia/Tokyo');
  assert.equal(canonicalTimeZone('UTC'), 'UTC');
  for (const bad of ['Mars/Olympus', '+09:00', '-05:00', 'Etc/GMT+9x', '', 'Asia/Tokyo\n', 'a'.repeat(200)]) {
    assert.equal(canonicalTimeZone(bad), undefined, bad);
  }
});

test('timestamps: the 24-character form round-trips', () => {
  fc.assert(
    fc.property(fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }), (t) => {
      const text = formatTimestamp(t);
      assert.equal(text.length, 24);
      assert.equal(parseTimestamp(text), t);
    }),
  );
});

test('timestamps: every RFC 3339 date-time is read, to the millisecond, and nothing else', () => {
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(dateTimeLike, (text) => {
      const expected = rfc3339EpochMs(text);
      const stored = expected !== undefined && isStorableInstant(expected) ? expected : undefined;
      assert.equal(parseTimestamp(text), stored, text);
      if (stored === undefined) refused += 1;
      else accepted += 1;
    }),
    { numRuns: 20_000 },
  );
  assert.ok(accepted > 5_000 && refused > 3_000, `${accepted} accepted, ${refused} refused`);
});

test('timestamps: what other languages write is read; extra digits truncated; leap seconds kept', () => {
  const read = (text: string) => {
    const ms = parseTimestamp(text);
    return ms === undefined ? undefined : formatTimestamp(ms);
  };
  // Python isoformat(), Java Instant.toString(), Go RFC3339Nano, JavaScript toISOString().
  assert.equal(read('2019-11-03T10:15:00.123456+09:00'), '2019-11-03T01:15:00.123Z');
  assert.equal(read('2019-11-03T01:15:00.999999999Z'), '2019-11-03T01:15:00.999Z');
  assert.equal(read('2019-11-03T01:15:00.1Z'), '2019-11-03T01:15:00.100Z');
  assert.equal(read('2019-11-03t01:15:00z'), '2019-11-03T01:15:00.000Z');
  assert.equal(read('2019-11-03T01:15:00-00:00'), '2019-11-03T01:15:00.000Z');
  assert.equal(read('2016-12-31T23:59:60Z'), '2016-12-31T23:59:59.999Z');
  assert.equal(read('2017-01-01T08:59:60.5+09:00'), '2016-12-31T23:59:59.999Z');
  assert.equal(read('0000-01-01T00:00:00Z'), '0000-01-01T00:00:00.000Z');
  assert.equal(read('9999-12-31T23:59:59.9999Z'), '9999-12-31T23:59:59.999Z');
  for (const bad of [
    '2019-11-03',
    '2019-11-03T10:00Z',
    '2019-11-03 10:00:00Z',
    '2019-11-03T10:00:00+0900',
    '2019-11-03T10:00:00+09',
    '2019-11-03T10:00:00.Z',
    '2019-02-29T00:00:00Z',
    '2019-11-03T24:00:00Z',
    '2019-11-03T12:00:60Z',
    '2019-11-03T10:00:00',
    '0000-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59-00:01',
    'yesterday',
  ]) {
    assert.equal(parseTimestamp(bad), undefined, bad);
  }
});

test('formatTimestamp writes exactly what Date#toISOString writes, for every storable instant', () => {
  const instant = fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS });
  // Runs of nearby instants too: the formatter keeps the last day's prefix.
  const run = fc.tuple(instant, fc.array(fc.integer({ min: -2 * 86_400_000, max: 2 * 86_400_000 })));
  fc.assert(
    fc.property(run, ([start, steps]) => {
      for (const ms of [start, ...steps.map((step) => start + step)]) {
        if (ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) continue;
        assert.equal(formatTimestamp(ms), new Date(ms).toISOString());
      }
    }),
    { numRuns: 2000 },
  );
  for (const ms of [MIN_TIMESTAMP_MS, MAX_TIMESTAMP_MS, 0, -1, 86_399_999, 86_400_000]) {
    assert.equal(formatTimestamp(ms), new Date(ms).toISOString());
  }
});
