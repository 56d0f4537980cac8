/**
 * What the tests of answers written without the serializer share (answers-json.test.ts on both
 * stores, sqlite.answers.test.ts): random hubs of hostile text and times, a range over them, and a
 * hub with one contact of thousands of messages.
 */
import fc from 'fast-check';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../../src/lib/calendar.js';
import type { ImportMessage, MessageQuery } from '../../src/store/store.js';
import { storeMessages, type TestStore } from '../helpers.js';

/** Characters that JSON escapes or that encoders get wrong, lone surrogates as JavaScript holds them. */
const HOSTILE = [
  '"',
  '\\',
  '/',
  ',',
  '\u0001',
  '\u0002',
  '\u001f',
  '\u007f',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\uffff',
  '😀',
  '\ud800',
  '\udc00',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  'é',
  '予',
];

/**
 * Text of hostile characters and any single UTF-16 unit. NUL only where the store can hold it:
 * PostgreSQL's text cannot (chatlog keeps U+FFFD there: test/contract/nul.test.ts).
 */
export function hostileText(options: { nul: boolean }): fc.Arbitrary<string> {
  const char = fc.oneof(
    fc.constantFrom(...HOSTILE, ...(options.nul ? ['\u0000'] : [])),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => options.nul || c !== '\u0000'),
  );
  return fc.oneof(fc.string({ unit: char, maxLength: 10 }), fc.constantFrom('', 'User', '[Image]\nID: 1'));
}

/** Any instant chatlog stores (years 0 to 9999), around 1970 and its edges often. */
export const instant = fc.oneof(
  fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }),
  fc.integer({ min: -5_000, max: 5_000 }),
  fc.constantFrom(
    MIN_TIMESTAMP_MS,
    MAX_TIMESTAMP_MS,
    -62_135_596_800_001,
    -62_135_596_800_000,
    -1,
    0,
    999,
    -999,
    -1000,
    -1001,
  ),
);

/** A message of one of a hub's contacts (numbered), as ImportMessage has it otherwise. */
export type HubRow = Omit<ImportMessage, 'lineId' | 'sourceId'> & { contact: number };

/** A hub's messages among five contacts. */
export function hubRows(options: { nul: boolean; maxLength: number }): fc.Arbitrary<HubRow[]> {
  const text = hostileText(options);
  return fc.array(
    fc.record({
      contact: fc.integer({ min: 0, max: 4 }),
      vid: text,
      name: text,
      sender: fc.option(text),
      msg: text,
      contentType: fc.constantFrom('text', 'image', 'sticker', 'x"y'),
      createdAt: instant,
    }),
    { maxLength: options.maxLength },
  );
}

/** The whole hub (null), a range between two instants, or between two of the rows' times (`a`, `b`: their indexes). */
export type HubRange = [number, number] | { a: number; b: number } | null;

export const hubRange: fc.Arbitrary<HubRange> = fc.option(
  fc.oneof(
    fc.tuple(instant, instant),
    fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => ({ a, b })),
  ),
);

/** Adds `hubId` with `rows` and returns the query of `range` on it. */
export async function storeHub(
  t: Pick<TestStore, 'store' | 'hubs'>,
  hubId: string,
  rows: HubRow[],
  range: HubRange,
): Promise<MessageQuery> {
  await t.hubs.add(hubId, {});
  const messages: ImportMessage[] = rows.map((row, i) => ({
    lineId: `U${row.contact}`,
    vid: row.vid,
    name: row.name,
    sender: row.sender,
    msg: row.msg,
    contentType: row.contentType,
    createdAt: row.createdAt,
    sourceId: `s${i}`,
  }));
  if (messages.length > 0) await storeMessages(t.store, hubId, messages);
  const times =
    range && !Array.isArray(range)
      ? [
          rows[range.a % Math.max(1, rows.length)]?.createdAt ?? 0,
          rows[range.b % Math.max(1, rows.length)]?.createdAt ?? 0,
        ]
      : range;
  return times
    ? { hubId, fromMs: Math.min(...times), toMsExclusive: Math.max(...times) + 1 }
    : { hubId, fromMs: undefined, toMsExclusive: undefined };
}

export const LONG_CONTACT_FROM_MS = 1_700_000_000_000;

/**
 * 4,000 messages, 2,500 of them one contact's (more than two of SQLite's pieces of 1,024), each
 * `long` and its number, within 2,000 ms from LONG_CONTACT_FROM_MS; and the queries that read them
 * whole, by a range of 1,024 ms and of 300 ms.
 */
export async function storeLongContact(
  t: Pick<TestStore, 'store' | 'hubs'>,
  hubId: string,
  long: string,
): Promise<MessageQuery[]> {
  await t.hubs.add(hubId, {});
  const messages: ImportMessage[] = Array.from({ length: 4_000 }, (_, i) => ({
    lineId: i < 2_500 ? 'Ubig' : `U${i % 7}`,
    vid: '',
    name: i % 3 === 0 ? '' : `n${i % 5}`,
    sender: null,
    msg: `${i} ${long}`,
    contentType: 'text',
    createdAt: LONG_CONTACT_FROM_MS + (i % 2_000),
    sourceId: `c${i}`,
  }));
  await storeMessages(t.store, hubId, messages);
  return [
    { hubId, fromMs: undefined, toMsExclusive: undefined },
    { hubId, fromMs: LONG_CONTACT_FROM_MS, toMsExclusive: LONG_CONTACT_FROM_MS + 1_024 },
    { hubId, fromMs: LONG_CONTACT_FROM_MS, toMsExclusive: LONG_CONTACT_FROM_MS + 300 },
  ];
}
