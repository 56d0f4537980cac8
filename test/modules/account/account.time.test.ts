/**
 * The account screen's times and example range, against plain oracles: Swedish date formatting
 * (`YYYY-MM-DD HH:MM:SS`, a format of its own) for the wall clock, Date.UTC for day arithmetic,
 * and the API's own reading of `from`/`to` for "the example holds the newest message".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { dayRangeInZone, daysBefore, parseCalendarDay } from '../../../src/lib/calendar.js';
import { exampleDays, formatLocalMinute } from '../../../src/modules/account/account.time.js';

const ZONES = [
  'UTC',
  'Asia/Tokyo',
  'America/Los_Angeles',
  'America/Santiago',
  'Europe/London',
  'Australia/Lord_Howe',
  'Pacific/Kiritimati',
  'Pacific/Pago_Pago',
  'Asia/Kathmandu',
];
const INSTANT = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2037, 11, 31) });

/** The oracle: the sv-SE locale writes `YYYY-MM-DD HH:MM:SS`. */
function wallClock(epochMs: number, timeZone: string): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(epochMs);
}

test('formatLocalMinute: the wall-clock minute in the hub zone, known cases', () => {
  const at = Date.parse('2026-11-20T23:40:30.999Z');
  assert.equal(formatLocalMinute(at, 'UTC'), '2026-11-20 23:40');
  assert.equal(formatLocalMinute(at, 'Asia/Tokyo'), '2026-11-21 08:40');
  assert.equal(formatLocalMinute(at, 'America/Los_Angeles'), '2026-11-20 15:40');
  // Across a DST change: 2024-03-10 in Los Angeles jumps from 01:59 to 03:00.
  assert.equal(
    formatLocalMinute(Date.parse('2024-03-10T09:59:00Z'), 'America/Los_Angeles'),
    '2024-03-10 01:59',
  );
  assert.equal(
    formatLocalMinute(Date.parse('2024-03-10T10:00:00Z'), 'America/Los_Angeles'),
    '2024-03-10 03:00',
  );
});

test('formatLocalMinute agrees with the sv-SE formatter everywhere', () => {
  fc.assert(
    fc.property(INSTANT, fc.constantFrom(...ZONES), (t, zone) => {
      assert.equal(formatLocalMinute(t, zone), wallClock(t, zone));
    }),
    { numRuns: 3000 },
  );
});

test('daysBefore is calendar arithmetic (Date.UTC as the oracle), leap days and years included', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31) }),
      fc.nat(400),
      (t, n) => {
        const date = new Date(t);
        const day = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
        const expected = new Date(Date.UTC(day.year, day.month - 1, day.day - n));
        assert.deepEqual(daysBefore(day, n), {
          year: expected.getUTCFullYear(),
          month: expected.getUTCMonth() + 1,
          day: expected.getUTCDate(),
        });
      },
    ),
  );
  assert.deepEqual(daysBefore({ year: 2024, month: 3, day: 5 }, 6), { year: 2024, month: 2, day: 28 });
});

test('the example range: the week ending on the newest message’s local day, and it holds that message', () => {
  const newest = Date.parse('2024-03-10T16:30:00Z'); // 2024-03-11 01:30 in Tokyo
  assert.deepEqual(exampleDays(newest, Date.now(), 'Asia/Tokyo'), { from: '2024-03-05', to: '2024-03-11' });
  assert.deepEqual(exampleDays(newest, Date.now(), 'UTC'), { from: '2024-03-04', to: '2024-03-10' });
  // No message yet: the week ending today, in the hub's zone.
  const now = Date.parse('2026-01-01T20:00:00Z'); // already 2026-01-02 in Tokyo
  assert.deepEqual(exampleDays(undefined, now, 'Asia/Tokyo'), { from: '2025-12-27', to: '2026-01-02' });
  assert.deepEqual(exampleDays(undefined, now, 'UTC'), { from: '2025-12-26', to: '2026-01-01' });

  fc.assert(
    fc.property(INSTANT, fc.constantFrom(...ZONES), (t, zone) => {
      const { from, to } = exampleDays(t, 0, zone);
      assert.equal(to, wallClock(t, zone).slice(0, 10));
      // Read as the API reads from and to: the newest message is in the answer.
      const range = dayRangeInZone(parseCalendarDay(from), parseCalendarDay(to), zone);
      assert.ok(range.fromMs !== undefined && range.toMsExclusive !== undefined);
      assert.ok(range.fromMs <= t && t < range.toMsExclusive, `${new Date(t).toISOString()} in ${zone}`);
      // Seven whole days (168 hours, give or take a DST change), less a day the zone skipped
      // (Kiritimati went from UTC-10 to UTC+14 over 1994-12-31, which it never had).
      const hours = (range.toMsExclusive - range.fromMs) / 3_600_000;
      const skipsADay = zone === 'Pacific/Kiritimati' && from <= '1994-12-31' && '1994-12-31' <= to;
      assert.ok(skipsADay ? hours === 144 : hours >= 166 && hours <= 170, `${hours} hours`);
    }),
    { numRuns: 2000 },
  );
});
