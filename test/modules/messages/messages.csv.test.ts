/**
 * `Download CSV` (CONTRACT §14): what a spreadsheet reads back is what was stored. Random rows of
 * any text (line breaks, quotes, commas, emoji, half-width kana, formula starts) are parsed back by
 * a plain RFC 4180 reader and must give each row's cells; the hub-time column must equal the wall
 * clock Intl gives for random instants in zones with daylight saving and odd offsets.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  formatTimestamp,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  wallClockIn,
} from '../../../src/lib/calendar.js';
import { CSV_COLUMNS, serializeCsv } from '../../../src/modules/messages/messages.csv.js';
import type { MessageRow } from '../../../src/store/store.js';
import { readCsv } from '../../fixtures/csv.js';

/** The cell a value becomes: a leading quote (Excel's "this is text" mark) before a formula's start. */
const guarded = (value: string) => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);

async function csvOf(rows: MessageRow[], timeZone: string): Promise<string> {
  async function* batches() {
    for (let i = 0; i < rows.length; i += 3) yield rows.slice(i, i + 3);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of serializeCsv(batches(), timeZone)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({
    unit: fc.constantFrom('"', ',', '\r', '\n', '=', '+', '-', '@', '\t', 'ｱ', '予', '約', '😀', 'a', ' '),
    maxLength: 12,
  }),
);
const row = fc.record({
  contactId: fc.constant(1),
  lineId: text,
  vid: text,
  name: text,
  sender: text,
  msg: text,
  contentType: text,
  createdAt: fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2100, 0, 1) }),
});

test('every row reads back cell for cell, under a BOM and the columns of §14', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(row, { maxLength: 12 }), async (rows) => {
      const csv = await csvOf(rows, 'Asia/Tokyo');
      assert.ok(csv.startsWith('\uFEFF'), 'a byte order mark first');
      const [header, ...read] = readCsv(csv.slice(1));
      assert.deepEqual(header, [...CSV_COLUMNS]);
      assert.equal(read.length, rows.length);
      read.forEach((cells, i) => {
        const r = rows[i]!;
        assert.equal(cells[1], formatTimestamp(r.createdAt));
        assert.deepEqual(
          cells.slice(2),
          [r.lineId, r.vid, r.name, r.sender, r.contentType, r.msg].map(guarded),
        );
        for (const cell of cells.slice(2))
          assert.doesNotMatch(cell, /^[=+\-@\t\r]/, 'no cell starts a formula');
      });
    }),
    { numRuns: 3000 },
  );
});

const ZONES = [
  'UTC',
  'Asia/Tokyo',
  'America/New_York',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Pacific/Chatham',
  'America/Santiago',
  'Asia/Kathmandu',
  'Africa/Monrovia',
];

/** The wall clock as Intl gives it, one instant at a time. */
function intlWallClock(epochMs: number, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(epochMs)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year!.padStart(4, '0')}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

test('the hub-time column is the wall clock of the hub, across offset changes', () => {
  const clocks = new Map(ZONES.map((zone) => [zone, wallClockIn(zone)]));
  fc.assert(
    fc.property(
      fc.constantFrom(...ZONES),
      fc.oneof(
        fc.integer({ min: Date.UTC(1800, 0, 1), max: Date.UTC(2100, 0, 1) }),
        // Near the 2026 changes of the northern and southern zones, to the second.
        fc.integer({ min: Date.UTC(2026, 2, 7), max: Date.UTC(2026, 3, 6) }),
        fc.integer({ min: Date.UTC(2026, 9, 24), max: Date.UTC(2026, 10, 2) }),
      ),
      (zone, ms) => assert.equal(clocks.get(zone)!(ms), intlWallClock(ms, zone)),
    ),
    { numRuns: 3000 },
  );
  assert.equal(wallClockIn('Asia/Tokyo')(MAX_TIMESTAMP_MS - 9 * 3_600_000), '9999-12-31 23:59:59');
  assert.equal(wallClockIn('UTC')(MIN_TIMESTAMP_MS), '0000-01-01 00:00:00');
});
